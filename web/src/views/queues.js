// Queues: each queue with its depth (/api/v1/resources/queues, paged on the server), its
// consumers' largest lag (/api/v1/consumer-groups, the snapshot) and its newest per-minute
// rates and pop lag (/api/v1/analytics/queue-ops over the last 15 minutes).
import { get } from '../api.js';
import { h, link, replace, table } from '../dom.js';
import { duration, minutesAgo, num, rate } from '../format.js';
import { pager } from '../pager.js';

const LIMIT = 50;

// The newest bucket per queue of a queue-ops series.
function newestByQueue(series) {
  const out = new Map();
  for (const row of series) out.set(row.queueName, row);  // oldest first, so the last wins
  return out;
}

// The largest lag in messages and in seconds over the groups of each queue.
function lagByQueue(groups) {
  const out = new Map();
  for (const g of groups) {
    const l = out.get(g.queueName) || { messages: 0, seconds: 0 };
    out.set(g.queueName, { messages: Math.max(l.messages, g.totalLag), seconds: Math.max(l.seconds, g.maxTimeLag) });
  }
  return out;
}

export default async function queues(root, ctx) {
  const offset = Number(ctx.query.get('offset') || 0);
  const [list, ops, groups] = await Promise.all([
    get('/api/v1/resources/queues', { limit: LIMIT, offset }),
    get('/api/v1/analytics/queue-ops', { from: minutesAgo(15) }),
    get('/api/v1/consumer-groups'),
  ]);
  const recent = newestByQueue(ops.series);
  const lag = lagByQueue(groups);
  const col = (q, key) => recent.get(q.name)?.[key] ?? null;
  replace(
    root,
    h('h1', {}, 'Queues'),
    h('p', { class: 'muted' }, `Counts and consumer lag (the largest of the queue's groups, in messages and seconds) from the stats snapshot (${list.statsAge < 0 ? 'not taken yet' : `${list.statsAge}s old`}); rates and pop lag from the newest minute with activity in the last 15 minutes.`),
    table(
      [
        { label: 'Queue', cell: (q) => link(`/queues/${encodeURIComponent(q.name)}`, q.name) },
        { label: 'Namespace', cell: (q) => q.namespace },
        { label: 'Task', cell: (q) => q.task },
        { label: 'Partitions', cell: (q) => num(q.partitions), num: true },
        { label: 'Total', cell: (q) => num(q.messages.total), num: true },
        { label: 'Pending', cell: (q) => num(q.messages.pending), num: true },
        { label: 'Processing', cell: (q) => num(q.messages.processing), num: true },
        { label: 'Consumer lag', cell: (q) => (lag.has(q.name) ? `${num(lag.get(q.name).messages)} · ${duration(lag.get(q.name).seconds)}` : '–'), num: true },
        { label: 'Push / s', cell: (q) => rate(col(q, 'pushPerSecond')), num: true },
        { label: 'Pop / s', cell: (q) => rate(col(q, 'popPerSecond')), num: true },
        { label: 'Pop lag (ms)', cell: (q) => num(col(q, 'avgLagMs')), num: true },
      ],
      list.queues,
      { empty: 'No queues yet: push a message to create one.', testId: 'queues' },
    ),
    pager({ offset, limit: LIMIT, shown: list.queues.length, total: list.total }, (o) => ctx.setQuery({ offset: o || '' })),
  );
}
