// One queue: its configuration, totals and partitions counted now
// (/api/v1/status/queues/:queue), and its rates over the last hour
// (/api/v1/analytics/queue-ops?queue=).
import { get, seg } from '../api.js';
import { lineChart, seriesOf } from '../chart.js';
import { h, link, replace, stat, table } from '../dom.js';
import { lastMinutes, num, time } from '../format.js';

export default async function queue(root, ctx) {
  const name = ctx.params.queue;
  const span = lastMinutes(60);
  const [d, ops] = await Promise.all([
    get(`/api/v1/status/queues/${seg(name)}`),
    get('/api/v1/analytics/queue-ops', { queue: name, ...span }),
  ]);
  const t = d.totals.messages;
  const c = d.queue.config;
  replace(
    root,
    h('h1', {}, 'Queue ', h('span', { 'data-test': 'queue-name' }, d.queue.name)),
    h('p', { class: 'muted' }, `namespace ${d.queue.namespace || '–'} · task ${d.queue.task || '–'} · created ${time(d.queue.createdAt)} · `,
      link(`/messages?queue=${encodeURIComponent(name)}`, 'browse its messages')),
    h('div', { class: 'stats' },
      stat('Total', num(t.total), 'q-total'),
      stat('Pending', num(t.pending), 'q-pending'),
      stat('Processing', num(t.processing), 'q-processing'),
      stat('Completed', num(t.completed), 'q-completed'),
      stat('Dead letters', num(t.deadLetter), 'q-dead-letters'),
    ),
    h('p', { class: 'muted' }, `leaseTime ${c.leaseTime}s · retryLimit ${c.retryLimit} · retryDelay ${c.retryDelay}ms · ttl ${c.ttl}s · maxQueueSize ${c.maxQueueSize} · priority ${d.queue.priority}`),
    h('h2', {}, 'Partitions'),
    table(
      [
        { label: 'Partition', cell: (p) => link(`/messages?queue=${encodeURIComponent(name)}&partition=${encodeURIComponent(p.name)}`, p.name) },
        { label: 'Id', cell: (p) => p.id },
        { label: 'Total', cell: (p) => num(p.messages.total), num: true },
        { label: 'Pending', cell: (p) => num(p.messages.pending), num: true },
        { label: 'Processing', cell: (p) => num(p.messages.processing), num: true },
        { label: 'Completed', cell: (p) => num(p.messages.completed), num: true },
        { label: 'Dead letters', cell: (p) => num(p.messages.deadLetter), num: true },
        { label: 'Consumed (all groups)', cell: (p) => num(p.cursor.totalConsumed), num: true },
        { label: 'Last activity', cell: (p) => time(p.lastActivity) },
        { label: 'Oldest waiting', cell: (p) => time(p.oldestMessage) },
      ],
      d.partitions,
      { empty: 'No partitions.', testId: 'partitions' },
    ),
    h('div', { class: 'charts' },
      lineChart({
        title: 'Rates per second (last hour)',
        series: seriesOf(ops.series, 'bucket', [['pushPerSecond', 'push/s'], ['popPerSecond', 'pop/s'], ['ackPerSecond', 'ack/s']]),
        test: 'queue-rates',
        window: span,
      }),
    ),
  );
}
