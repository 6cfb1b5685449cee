// The message browser: stored messages with their status (/api/v1/messages), filtered by
// queue, partition, status, group and window, newest first, paged on the server.
import { get } from '../api.js';
import { h, link, replace, table } from '../dom.js';
import { minutesAgo, time } from '../format.js';
import { pager } from '../pager.js';

const LIMIT = 50;
const WINDOWS = [['60', 'last hour'], ['1440', 'last 24 hours'], ['10080', 'last 7 days']];
const STATUSES = ['', 'pending', 'processing', 'completed', 'dead_letter', 'deleted'];

export default async function messages(root, ctx) {
  const q = ctx.query;
  const filter = {
    queue: q.get('queue') || '',
    partition: q.get('partition') || '',
    status: q.get('status') || '',
    consumerGroup: q.get('consumerGroup') || '',
    window: q.get('window') || '60',
  };
  const offset = Number(q.get('offset') || 0);
  const page = await get('/api/v1/messages', {
    queue: filter.queue,
    partition: filter.partition,
    status: filter.status,
    consumerGroup: filter.consumerGroup,
    from: minutesAgo(Number(filter.window)),
    limit: LIMIT,
    offset,
  });

  const input = (name, placeholder) => h('input', { name, placeholder, value: filter[name] });
  const form = h(
    'form',
    { class: 'filters', 'data-test': 'message-filters' },
    input('queue', 'queue'),
    input('partition', 'partition'),
    h('select', { name: 'status' }, STATUSES.map((s) => h('option', { value: s, selected: s === filter.status }, s || 'any status'))),
    input('consumerGroup', 'consumer group'),
    h('select', { name: 'window' }, WINDOWS.map(([v, label]) => h('option', { value: v, selected: v === filter.window }, label))),
    h('button', { type: 'submit' }, 'Filter'),
  );
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    ctx.setQuery(Object.fromEntries(new FormData(form)));
  });

  replace(
    root,
    h('h1', {}, 'Messages'),
    form,
    h('p', { class: 'muted' }, `Mode of these partitions: ${page.mode.type} (${page.mode.busGroupsCount} named groups${page.mode.hasQueueMode ? ', queue mode' : ''}).`),
    table(
      [
        { label: 'Created', cell: (m) => time(m.createdAt) },
        { label: 'Queue / partition', cell: (m) => `${m.queue} / ${m.partition}` },
        { label: 'Offset', cell: (m) => m.offset, num: true },
        { label: 'Transaction', cell: (m) => link(`/messages/${encodeURIComponent(m.partitionId)}/${encodeURIComponent(m.transactionId)}`, m.transactionId) },
        { label: 'Status', cell: (m) => h('span', { class: `badge ${m.status}` }, m.status) },
        { label: 'Groups done', cell: (m) => `${m.busStatus.consumedBy} / ${m.busStatus.totalGroups}`, num: true },
        { label: 'Trace', cell: (m) => m.traceId || '–' },
      ],
      page.messages,
      { empty: 'No messages match in this window.', testId: 'messages' },
    ),
    pager({ offset, limit: LIMIT, shown: page.messages.length }, (o) => ctx.setQuery({ ...filter, offset: o || '' })),
  );
}
