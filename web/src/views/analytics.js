// Analytics over a chosen window: operations per second and pop lag
// (/api/v1/analytics/worker-metrics), CPU and memory per broker
// (/api/v1/analytics/system-metrics), per-queue totals (/api/v1/analytics/queue-ops), the
// cluster's message totals and the live leases (/api/v1/status). With tenancy on, the first
// two are operator routes: a tenant's token gets its totals from queue-ops and a note instead.
import { get } from '../api.js';
import { lineChart, seriesOf } from '../chart.js';
import { h, replace, stat, table } from '../dom.js';
import { lastMinutes, num, rate } from '../format.js';
import { mayReadOperatorRoutes } from '../tenant.js';

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

// The cards and charts of the brokers' own metrics (worker- and system-metrics).
function brokerFigures(workers, system, status, span) {
  const cpu = system.replicas.map((r) => ({
    name: `${r.hostname}:${r.port} CPU %`,
    points: r.timeSeries.map((p) => ({ t: Date.parse(p.timestamp), v: (p.metrics.cpu.user_us.avg + p.metrics.cpu.system_us.avg) / 100 })),
  }));
  const rss = system.replicas.map((r) => ({
    name: `${r.hostname}:${r.port} RSS MB`,
    points: r.timeSeries.map((p) => ({ t: Date.parse(p.timestamp), v: p.metrics.memory.rss_bytes.avg / 1048576 })),
  }));
  const s = workers.summary;
  return {
    cards: [
      stat('Pushed', num(s.totalPushMessages), 'a-pushed'),
      stat('Popped', num(s.totalPopMessages), 'a-popped'),
      stat('Acked', num(s.totalAckMessages), 'a-acked'),
      stat('Ack failed', num(s.totalAckFailed), 'a-ack-failed'),
      stat('Dead-lettered', num(s.totalDlq), 'a-dlq'),
      stat('DB errors', num(s.totalDbErrors), 'a-db-errors'),
      stat('Lifetime completed', num(status.messages.completed), 'a-completed'),
      batch(status),
    ],
    charts: [
      lineChart({ title: 'Operations per second', series: seriesOf(workers.timeSeries, 'timestamp', [['pushPerSecond', 'push/s'], ['popPerSecond', 'pop/s'], ['ackPerSecond', 'ack/s']]), test: 'ops', window: span }),
      lineChart({ title: 'Pop lag (ms)', series: seriesOf(workers.timeSeries, 'timestamp', [['avgLagMs', 'avg'], ['maxLagMs', 'max']]), test: 'lag', window: span }),
      lineChart({ title: 'Event-loop lag (ms)', series: seriesOf(workers.timeSeries, 'timestamp', [['avgEventLoopLagMs', 'avg'], ['maxEventLoopLagMs', 'max']]), test: 'loop', window: span }),
      lineChart({ title: 'CPU (% of one core)', series: cpu, test: 'cpu', window: span }),
      lineChart({ title: 'Memory', series: rss, test: 'rss', window: span }),
    ],
    buckets: h('span', { class: 'muted' }, ` buckets of ${workers.bucketMinutes} min`),
  };
}

// A tenant's cards from its own queues' totals, and a note on what it cannot see.
function tenantFigures(totals, status) {
  const sum = (key) => totals.reduce((n, t) => n + t[key], 0);
  return {
    cards: [
      stat('Pushed', num(sum('push')), 'a-pushed'),
      stat('Popped', num(sum('pop')), 'a-popped'),
      stat('Acked', num(sum('ackOk')), 'a-acked'),
      stat('Ack failed', num(sum('ackFailed')), 'a-ack-failed'),
      stat('Lifetime completed', num(status.messages.completed), 'a-completed'),
      batch(status),
    ],
    charts: [
      h('p', { class: 'banner notice', 'data-test': 'operator-only' }, 'The brokers\' own metrics (operations per second, event loop, CPU, memory, DB errors) cover every tenant: they need an admin token.'),
    ],
    buckets: null,
  };
}

// The batch-efficiency card of /api/v1/status.
function batch(status) {
  const b = status.messages.batchEfficiency || {};
  return stat('Batch push / pop / ack', `${rate(b.push)} / ${rate(b.pop)} / ${rate(b.ack)}`, 'a-batch');
}

export default async function analytics(root, ctx) {
  const minutes = ctx.query.get('window') || '60';
  const span = lastMinutes(Number(minutes));
  const operator = mayReadOperatorRoutes();
  const [workers, system, ops, status] = await Promise.all([
    operator ? get('/api/v1/analytics/worker-metrics', span) : null,
    operator ? get('/api/v1/analytics/system-metrics', span) : null,
    get('/api/v1/analytics/queue-ops', span),
    get('/api/v1/status', span),
  ]);
  const select = h('select', { name: 'window', 'data-test': 'window' }, WINDOWS.map(([v, l]) => h('option', { value: v, selected: v === minutes }, l)));
  select.addEventListener('change', () => ctx.setQuery({ window: select.value }));
  const totals = totalsByQueue(ops.series);
  const figures = operator ? brokerFigures(workers, system, status, span) : tenantFigures(totals, status);
  replace(
    root,
    h('h1', {}, 'Analytics'),
    h('div', { class: 'filters' }, 'Window ', select, figures.buckets),
    h('div', { class: 'stats' }, figures.cards),
    // The leases alive now: what each handed out when it was taken, and how much of it has
    // been acknowledged since (Queen's live-leases card).
    h('h2', {}, 'Live leases'),
    h('div', { class: 'stats' },
      stat('Leases', num(status.leases.active), 'a-leases'),
      stat('Partitions leased', num(status.leases.partitionsWithLeases), 'a-lease-partitions'),
      stat('Total batch size', num(status.leases.totalBatchSize), 'a-lease-batch'),
      stat('Total acked', num(status.leases.totalAcked), 'a-lease-acked'),
    ),
    h('div', { class: 'charts' }, figures.charts),
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
      totals,
      { empty: 'No queue activity in this window.', testId: 'queue-totals' },
    ),
  );
}
