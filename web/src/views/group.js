// One consumer group: its cursors per queue (/api/v1/consumer-groups/:group) and the seeks:
// a queue to its end or to a time (POST …/queues/:queue/seek), one partition to its end
// (POST …/queues/:queue/partitions/:partition/seek).
import { api, get, seg } from '../api.js';
import { may } from '../auth.js';
import { h, link, replace, table } from '../dom.js';
import { duration, num, time } from '../format.js';

export default async function group(root, ctx) {
  const name = ctx.params.group;
  const base = `/api/v1/consumer-groups/${seg(name)}/queues`;

  // Reads the group and draws it.
  async function load() {
    const byQueue = await get(`/api/v1/consumer-groups/${seg(name)}`);
    const queues = Object.entries(byQueue);
    replace(
      root,
      h('h1', {}, 'Consumer group ', h('span', { 'data-test': 'group-name' }, name)),
      queues.length ? null : h('p', { class: 'empty' }, 'This group has no cursor.'),
      queues.map(([queue, { partitions }]) => section(queue, partitions)),
    );
  }

  // One queue's cursors with its seek controls.
  function section(queue, partitions) {
    const when = h('input', { type: 'datetime-local', step: 1, name: 'timestamp', 'data-test': 'seek-time' });
    const seekQueue = (body) => ctx.action(async () => {
      const r = await api('POST', `${base}/${seg(queue)}/seek`, { body });
      await load();
      ctx.notice(`Seek of ${queue}: ${r.partitionsUpdated} cursor(s) set${r.seekToEnd ? ' to the end' : ` to ${time(r.targetTimestamp)}`}.`);
    });
    const seekPartition = (p) => ctx.action(async () => {
      const r = await api('POST', `${base}/${seg(queue)}/partitions/${seg(p.partition)}/seek`);
      await load();
      ctx.notice(`Seek of ${queue} / ${p.partition}: ${r.updated ? `moved to ${time(r.cursorMovedTo)}` : 'nothing to move'}.`);
    });
    const toTime = ctx.action(async () => {
      if (!when.value) throw new Error('choose a time to seek to');
      await seekQueue({ timestamp: new Date(when.value).toISOString() })();
    });
    return h(
      'section',
      { 'data-queue': queue },
      h('h2', {}, link(`/queues/${encodeURIComponent(queue)}`, queue)),
      // Seeking needs read-write.
      may('read-write') && h('div', { class: 'filters' },
        h('button', { onclick: seekQueue({ toEnd: true }), 'data-test': 'seek-end' }, 'Seek queue to end'),
        when,
        h('button', { onclick: toTime, 'data-test': 'seek-to-time' }, 'Seek queue to time')),
      table(
        [
          { label: 'Partition', cell: (p) => p.partition },
          { label: 'Committed', cell: (p) => num(p.committedOffset), num: true },
          { label: 'Last offset', cell: (p) => num(p.lastOffset), num: true },
          { label: 'Lag', cell: (p) => num(p.offsetLag), num: true },
          { label: 'Time lag', cell: (p) => duration(p.timeLagSeconds), num: true },
          { label: 'Lease', cell: (p) => (p.leaseActive ? `until ${time(p.leaseExpiresAt)}` : '–') },
          { label: 'Last commit', cell: (p) => time(p.lastConsumedAt) },
          { label: '', cell: (p) => may('read-write') && h('button', { onclick: seekPartition(p), 'data-test': 'seek-partition' }, 'Seek to end') },
        ],
        partitions,
        { testId: `cursors-${queue}` },
      ),
    );
  }

  await load();
}
