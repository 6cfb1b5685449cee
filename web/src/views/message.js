// One message: its decoded payload, status, queue settings and status per consumer group
// (/api/v1/messages/:partitionId/:transactionId), and its traces
// (/api/v1/traces/:partitionId/:transactionId).
import { get, seg } from '../api.js';
import { h, link, replace, table } from '../dom.js';
import { pretty, time } from '../format.js';

export default async function message(root, ctx) {
  const { partitionId, transactionId } = ctx.params;
  const path = `${seg(partitionId)}/${seg(transactionId)}`;
  const [m, tr] = await Promise.all([get(`/api/v1/messages/${path}`), get(`/api/v1/traces/${path}`)]);
  const row = (label, value, test) => h('tr', {}, h('th', {}, label), h('td', { 'data-field': test }, value ?? '–'));
  replace(
    root,
    h('h1', {}, 'Message ', h('code', {}, m.transactionId)),
    h('table', { class: 'fields' },
      row('Queue / partition', link(`/queues/${encodeURIComponent(m.queue)}`, `${m.queue} / ${m.partition}`)),
      row('Partition id / offset', `${m.partitionId} / ${m.offset}`),
      row('Status', h('span', { class: `badge ${m.status}` }, m.status), 'status'),
      row('Created', time(m.createdAt)),
      row('Trace id', m.traceId),
      row('Producer', m.producerSub),
      row('Encrypted', m.isEncrypted ? 'yes' : 'no'),
      row('Error (newest dead letter)', m.errorMessage, 'error-message'),
      row('Retry count', m.retryCount),
      row('Lease expires', time(m.leaseExpiresAt)),
      row('Queue settings', `leaseTime ${m.queueConfig.leaseTime}s · retryLimit ${m.queueConfig.retryLimit} · retryDelay ${m.queueConfig.retryDelay}ms · ttl ${m.queueConfig.ttl}s`),
    ),
    h('h2', {}, 'Payload'),
    h('pre', { class: 'payload', 'data-test': 'payload' }, m.status === 'deleted' ? `deleted at ${time(m.deletedAt)}` : pretty(m.payload)),
    h('h2', {}, 'Consumer groups'),
    table(
      [
        { label: 'Group', cell: (g) => (g.name === '__QUEUE_MODE__' ? 'queue mode' : link(`/groups/${encodeURIComponent(g.name)}`, g.name)) },
        { label: 'Consumed', cell: (g) => (g.consumed ? 'yes' : 'no') },
        { label: 'Lease expires', cell: (g) => time(g.leaseExpiresAt) },
      ],
      m.consumerGroups,
      { empty: 'No group has a cursor on this partition.', testId: 'message-groups' },
    ),
    h('h2', {}, 'Traces'),
    table(
      [
        { label: 'At', cell: (t) => time(t.created_at) },
        { label: 'Event', cell: (t) => t.event_type },
        { label: 'Group', cell: (t) => t.consumer_group || '–' },
        { label: 'Names', cell: (t) => t.trace_names.map((n) => link(`/traces/${encodeURIComponent(n)}`, n)) },
        { label: 'Data', cell: (t) => h('code', {}, JSON.stringify(t.data)) },
      ],
      tr.traces,
      { empty: 'No traces recorded for this message.', testId: 'message-traces' },
    ),
  );
}
