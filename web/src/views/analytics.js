// Analytics over a chosen window: operations per second and pop lag
// (/api/v1/analytics/worker-metrics), CPU and memory per broker
// (/api/v1/analytics/system-metrics), per-queue totals (/api/v1/analytics/queue-ops), the
// cluster's message totals and the live leases (/api/v1/status).
import { get } from '../api.js';
import { lineChart, seriesOf } from '../chart.js';
import { h, replace, stat, table } from '../dom.js';
import { lastMinutes, num, rate } from '../format.js';

const WINDOWS = [['60', 'last hour'], ['360', 'last 6 hours'], ['1440', 'last 24 hours'], ['10080', 'last 7 days']];

// Per-queue sums of a queue-ops series.
function totalsByQueue(series) {
  const out = new Map();
  for (const r of series) {
    const t = out.get(r.queueName) || { queue: r.queueName, push: 0, pop: 0, empty: 0, ackOk: 0, ackFailed: 0, maxLagMs: 0 };
    t.push += r.pushMessages;
    t.pop += r.popMessages;
    t.empty += r.popEmpty;
    t.ackOk += r.ackSuccess;
    t.ackFailed += r.ackFailed;
    t.maxLagMs = Math.max(t.maxLagMs, r.maxLagMs ?? 0);
    out.set(r.queueName, t);
  }
  return [...out.values()];
}

export default async function analytics(root, ctx) {
  const minutes = ctx.query.get('window') || '60';
  const span = lastMinutes(Number(minutes));
  const [workers, system, ops, status] = await Promise.all([
    get('/api/v1/analytics/worker-metrics', span),
    get('/api/v1/analytics/system-metrics', span),
    get('/api/v1/analytics/queue-ops', span),
    get('/api/v1/status', span),
  ]);
  const select = h('select', { name: 'window', 'data-test': 'window' }, WINDOWS.map(([v, l]) => h('option', { value: v, selected: v === minutes }, l)));
  select.addEventListener('change', () => ctx.setQuery({ window: select.value }));
  const cpu = system.replicas.map((r) => ({
    name: `${r.hostname}:${r.port} CPU %`,
    points: r.timeSeries.map((p) => ({ t: Date.parse(p.timestamp), v: (p.metrics.cpu.user_us.avg + p.metrics.cpu.system_us.avg) / 100 })),
  }));
  const rss = system.replicas.map((r) => ({
    name: `${r.hostname}:${r.port} RSS MB`,
    points: r.timeSeries.map((p) => ({ t: Date.parse(p.timestamp), v: p.metrics.memory.rss_bytes.avg / 1048576 })),
  }));
  const s = workers.summary;
  replace(
    root,
    h('h1', {}, 'Analytics'),
    h('div', { class: 'filters' }, 'Window ', select, h('span', { class: 'muted' }, ` buckets of ${workers.bucketMinutes} min`)),
    h('div', { class: 'stats' },
      stat('Pushed', num(s.totalPushMessages), 'a-pushed'),
      stat('Popped', num(s.totalPopMessages), 'a-popped'),
      stat('Acked', num(s.totalAckMessages), 'a-acked'),
      stat('Ack failed', num(s.totalAckFailed), 'a-ack-failed'),
      stat('Dead-lettered', num(s.totalDlq), 'a-dlq'),
      stat('DB errors', num(s.totalDbErrors), 'a-db-errors'),
      stat('Lifetime completed', num(status.messages.completed), 'a-completed'),
      stat('Batch push / pop / ack', `${rate(status.messages.batchEfficiency.push)} / ${rate(status.messages.batchEfficiency.pop)} / ${rate(status.messages.batchEfficiency.ack)}`, 'a-batch'),
    ),
    // The leases alive now: what each handed out when it was taken, and how much of it has
    // been acknowledged since (Queen's live-leases card).
    h('h2', {}, 'Live leases'),
    h('div', { class: 'stats' },
      stat('Leases', num(status.leases.active), 'a-leases'),
      stat('Partitions leased', num(status.leases.partitionsWithLeases), 'a-lease-partitions'),
      stat('Total batch size', num(status.leases.totalBatchSize), 'a-lease-batch'),
      stat('Total acked', num(status.leases.totalAcked), 'a-lease-acked'),
    ),
    h('div', { class: 'charts' },
      lineChart({ title: 'Operations per second', series: seriesOf(workers.timeSeries, 'timestamp', [['pushPerSecond', 'push/s'], ['popPerSecond', 'pop/s'], ['ackPerSecond', 'ack/s']]), test: 'ops', window: span }),
      lineChart({ title: 'Pop lag (ms)', series: seriesOf(workers.timeSeries, 'timestamp', [['avgLagMs', 'avg'], ['maxLagMs', 'max']]), test: 'lag', window: span }),
      lineChart({ title: 'Event-loop lag (ms)', series: seriesOf(workers.timeSeries, 'timestamp', [['avgEventLoopLagMs', 'avg'], ['maxEventLoopLagMs', 'max']]), test: 'loop', window: span }),
      lineChart({ title: 'CPU (% of one core)', series: cpu, test: 'cpu', window: span }),
      lineChart({ title: 'Memory', series: rss, test: 'rss', window: span }),
    ),
    h('h2', {}, 'Queues in this window'),
    table(
      [
        { label: 'Queue', cell: (t) => t.queue },
        { label: 'Pushed', cell: (t) => num(t.push), num: true },
        { label: 'Popped', cell: (t) => num(t.pop), num: true },
        { label: 'Empty pops', cell: (t) => num(t.empty), num: true },
        { label: 'Acked', cell: (t) => num(t.ackOk), num: true },
        { label: 'Ack failed', cell: (t) => num(t.ackFailed), num: true },
        { label: 'Max pop lag (ms)', cell: (t) => num(t.maxLagMs), num: true },
      ],
      totalsByQueue(ops.series),
      { empty: 'No queue activity in this window.', testId: 'queue-totals' },
    ),
  );
}
