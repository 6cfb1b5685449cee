// Traces: the trace names with their counts, most recently seen first (/api/v1/traces/names,
// paged on the server).
import { get } from '../api.js';
import { h, link, replace, table } from '../dom.js';
import { num, time } from '../format.js';
import { pager } from '../pager.js';

const LIMIT = 50;

export default async function traces(root, ctx) {
  const offset = Number(ctx.query.get('offset') || 0);
  const page = await get('/api/v1/traces/names', { limit: LIMIT, offset });
  replace(
    root,
    h('h1', {}, 'Traces'),
    table(
      [
        { label: 'Name', cell: (t) => link(`/traces/${encodeURIComponent(t.trace_name)}`, t.trace_name) },
        { label: 'Events', cell: (t) => num(t.trace_count), num: true },
        { label: 'Messages', cell: (t) => num(t.message_count), num: true },
        { label: 'Last seen', cell: (t) => time(t.last_seen) },
      ],
      page.trace_names,
      { empty: 'No named traces yet (POST /api/v1/traces with traceNames).', testId: 'trace-names' },
    ),
    pager({ offset, limit: LIMIT, shown: page.trace_names.length, total: page.total }, (o) => ctx.setQuery({ offset: o || '' })),
  );
}
