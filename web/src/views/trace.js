// The events of one trace name, oldest first (/api/v1/traces/by-name/:name, paged on the
// server), each linked to its message.
import { get, seg } from '../api.js';
import { h, link, replace, table } from '../dom.js';
import { time } from '../format.js';
import { pager } from '../pager.js';

const LIMIT = 50;

export default async function trace(root, ctx) {
  const name = ctx.params.name;
  const offset = Number(ctx.query.get('offset') || 0);
  const page = await get(`/api/v1/traces/by-name/${seg(name)}`, { limit: LIMIT, offset });
  replace(
    root,
    h('h1', {}, 'Trace ', h('span', { 'data-test': 'trace-name' }, name)),
    table(
      [
        { label: 'At', cell: (t) => time(t.created_at) },
        { label: 'Event', cell: (t) => t.event_type },
        { label: 'Queue / partition', cell: (t) => `${t.queue_name ?? '(gone)'} / ${t.partition_name ?? '(gone)'}` },
        { label: 'Message', cell: (t) => link(`/messages/${encodeURIComponent(t.partition_id)}/${encodeURIComponent(t.transaction_id)}`, t.transaction_id) },
        { label: 'Group', cell: (t) => t.consumer_group || '–' },
        { label: 'Data', cell: (t) => h('code', {}, JSON.stringify(t.data)) },
      ],
      page.traces,
      { empty: 'No events with this name.', testId: 'trace-events' },
    ),
    pager({ offset, limit: LIMIT, shown: page.traces.length, total: page.total }, (o) => ctx.setQuery({ offset: o || '' })),
  );
}
