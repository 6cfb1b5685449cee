// Streams: the registered stream queries (/api/v1/resources/streams, counted now): source and
// sink, lanes, state rows and size, and how far the query's group is behind on its source.
import { get } from '../api.js';
import { h, replace, table } from '../dom.js';
import { duration, num, time } from '../format.js';

// A byte count as "54 B", "1.5 KiB", "3.2 MiB"; null → "–".
function bytes(v) {
  if (v === null || v === undefined) return '–';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let n = Number(v);
  let u = 0;
  while (n >= 1024 && u < units.length - 1) {
    n /= 1024;
    u += 1;
  }
  return u === 0 ? `${n} B` : `${n.toFixed(1)} ${units[u]}`;
}

export default async function streams(root) {
  const list = await get('/api/v1/resources/streams');
  replace(
    root,
    h('h1', {}, 'Streams'),
    h('p', { class: 'muted' }, 'Stream queries (docs/streams.md), counted now. Source lag: messages of the source queue that the query\'s consumer group streams.<name> has not committed.'),
    table(
      [
        { label: 'Query', cell: (s) => s.name },
        { label: 'Source → sink', cell: (s) => `${s.sourceQueue} → ${s.sinkQueue ?? '–'}` },
        { label: 'Lanes', cell: (s) => num(s.lanes), num: true },
        { label: 'State rows', cell: (s) => num(s.stateRows), num: true },
        { label: 'State size', cell: (s) => bytes(s.stateBytes), num: true },
        { label: 'Source lag', cell: (s) => num(s.sourceLag), num: true },
        { label: 'Oldest pending', cell: (s) => (s.sourceOldestPendingAt ? duration(s.sourceTimeLag) : '–'), num: true },
        { label: 'Updated', cell: (s) => time(s.updatedAt) },
      ],
      list.streams,
      { empty: 'No stream queries yet: a streaming SDK registers one with POST /streams/v1/queries.', testId: 'streams' },
    ),
  );
}
