// Dead letters (/api/v1/dlq, filtered by queue and group, paged on the server), with a
// requeue (POST /api/v1/dlq/requeue) and a delete (DELETE /api/v1/dlq?id=) per row, and a
// purge of everything the filter matches (DELETE /api/v1/dlq).
import { api, get } from '../api.js';
import { may } from '../auth.js';
import { h, replace, table } from '../dom.js';
import { brief, num, time } from '../format.js';
import { pager } from '../pager.js';

const LIMIT = 50;

export default async function dlq(root, ctx) {
  const filter = { queue: ctx.query.get('queue') || '', consumerGroup: ctx.query.get('consumerGroup') || '' };
  const offset = Number(ctx.query.get('offset') || 0);
  const page = await get('/api/v1/dlq', { ...filter, limit: LIMIT, offset });

  const one = (m) => ({ id: m.id, consumerGroup: m.consumerGroup });
  const requeue = (m) => ctx.action(async () => {
    const r = await api('POST', '/api/v1/dlq/requeue', { body: one(m) });
    await dlq(root, ctx);
    ctx.notice(`Requeued ${r.requeued} message(s) of ${m.queue} (${r.skipped} skipped).`);
  });
  const remove = (m) => ctx.action(async () => {
    if (!window.confirm(`Delete the dead letter of ${m.transactionId} for ${m.consumerGroup}?`)) return;
    const r = await api('DELETE', '/api/v1/dlq', { query: one(m) });
    await dlq(root, ctx);
    ctx.notice(`Deleted ${r.purged} dead letter(s).`);
  });
  const purge = ctx.action(async () => {
    const scope = filter.queue || filter.consumerGroup ? 'every dead letter this filter matches' : 'EVERY dead letter';
    if (!window.confirm(`Purge ${scope} (${page.total})?`)) return;
    const query = filter.queue || filter.consumerGroup ? filter : { all: 'true' };
    const r = await api('DELETE', '/api/v1/dlq', { query });
    ctx.setQuery(filter);
    ctx.notice(`Purged ${r.purged} dead letter(s).`);
  });

  const form = h('form', { class: 'filters' },
    h('input', { name: 'queue', placeholder: 'queue', value: filter.queue }),
    h('input', { name: 'consumerGroup', placeholder: 'consumer group', value: filter.consumerGroup }),
    h('button', { type: 'submit' }, 'Filter'),
    // Purging and deleting need admin (DELETE /api/v1/dlq), requeueing read-write.
    may('admin') && h('button', { type: 'button', class: 'danger', onclick: purge, disabled: page.total === 0, 'data-test': 'purge' }, 'Purge'));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    ctx.setQuery(Object.fromEntries(new FormData(form)));
  });

  replace(
    root,
    h('h1', {}, 'Dead letters ', h('span', { class: 'count', 'data-test': 'dlq-total' }, num(page.total))),
    form,
    table(
      [
        { label: 'Failed', cell: (m) => time(m.failedAt) },
        { label: 'Queue / partition', cell: (m) => `${m.queue} / ${m.partition}` },
        { label: 'Group', cell: (m) => (m.consumerGroup === '__QUEUE_MODE__' ? 'queue mode' : m.consumerGroup) },
        { label: 'Transaction', cell: (m) => m.transactionId },
        { label: 'Error', cell: (m) => m.errorMessage ?? '–' },
        { label: 'Reason', cell: (m) => m.reason },
        { label: 'Attempts', cell: (m) => m.retryCount, num: true },
        { label: 'Payload', cell: (m) => h('code', {}, brief(m.data)) },
        {
          label: '',
          cell: (m) => h('span', { class: 'actions' },
            may('read-write') && h('button', { onclick: requeue(m), 'data-test': 'requeue' }, 'Requeue'),
            may('admin') && h('button', { class: 'danger', onclick: remove(m), 'data-test': 'delete' }, 'Delete')),
        },
      ],
      page.messages,
      { empty: 'No dead letters.', testId: 'dlq' },
    ),
    pager({ offset, limit: LIMIT, shown: page.messages.length, total: page.total }, (o) => ctx.setQuery({ ...filter, offset: o || '' })),
  );
}
