// Consumer groups: one row per (group, queue) with lag and state (/api/v1/consumer-groups,
// from the stats snapshot; the route is not paged), and the cursors lagging more than a
// threshold (/api/v1/consumer-groups/lagging).
import { get } from '../api.js';
import { h, link, replace, table } from '../dom.js';
import { duration, num, time } from '../format.js';

export default async function groups(root, ctx) {
  const minLag = ctx.query.get('minLagSeconds') || '60';
  const [list, lagging] = await Promise.all([
    get('/api/v1/consumer-groups'),
    get('/api/v1/consumer-groups/lagging', { minLagSeconds: minLag }),
  ]);
  const form = h('form', { class: 'filters' },
    h('label', {}, 'Lagging more than ', h('input', { name: 'minLagSeconds', value: minLag, size: 6 }), ' seconds'),
    h('button', { type: 'submit' }, 'Show'));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    ctx.setQuery({ minLagSeconds: new FormData(form).get('minLagSeconds') });
  });
  replace(
    root,
    h('h1', {}, 'Consumer groups'),
    table(
      [
        { label: 'Group', cell: (g) => link(`/groups/${encodeURIComponent(g.name)}`, g.name) },
        { label: 'Queue', cell: (g) => link(`/queues/${encodeURIComponent(g.queueName)}`, g.queueName) },
        { label: 'Partitions consumed', cell: (g) => num(g.members), num: true },
        { label: 'With lag', cell: (g) => num(g.partitionsWithLag), num: true },
        { label: 'Lag (messages)', cell: (g) => num(g.totalLag), num: true },
        { label: 'Time lag', cell: (g) => duration(g.maxTimeLag), num: true },
        { label: 'State', cell: (g) => h('span', { class: `badge ${g.state}` }, g.state) },
        { label: 'Subscription', cell: (g) => g.subscriptionMode ?? 'queue mode' },
      ],
      list,
      { empty: 'No consumer groups yet (the list is the stats snapshot: a new group shows after the next one).', testId: 'groups' },
    ),
    h('h2', {}, 'Lagging cursors'),
    form,
    table(
      [
        { label: 'Group', cell: (c) => link(`/groups/${encodeURIComponent(c.consumer_group)}`, c.consumer_group) },
        { label: 'Queue / partition', cell: (c) => `${c.queue_name} / ${c.partition_name}` },
        { label: 'Lag (messages)', cell: (c) => num(c.offset_lag), num: true },
        { label: 'Time lag', cell: (c) => duration(c.time_lag_seconds), num: true },
        { label: 'Oldest waiting', cell: (c) => time(c.oldest_unconsumed_at) },
        { label: 'Lease', cell: (c) => c.worker_id || '–' },
      ],
      lagging,
      { empty: `No cursor lags more than ${minLag} seconds.`, testId: 'lagging' },
    ),
  );
}
