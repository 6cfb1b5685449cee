// The maintenance switches: push maintenance (pushes go to the broker's spool) and pop
// maintenance (pops answer 204), with this broker's spool (/api/v1/system/maintenance).
import { api, get } from '../api.js';
import { h, replace, stat } from '../dom.js';
import { num } from '../format.js';
import { mayReadOperatorRoutes } from '../tenant.js';

export default async function maintenance(root, ctx) {
  // The switches act on the whole broker: with tenancy on only an admin reaches them, and a
  // tenant's token gets this note rather than the broker's 403.
  if (!mayReadOperatorRoutes()) {
    replace(root, h('h1', {}, 'Maintenance'),
      h('p', { class: 'banner notice', 'data-test': 'operator-only' }, 'Maintenance switches act on the whole broker, for every tenant: they need an admin token.'));
    return;
  }
  // Draws the flags; each switch posts the opposite value and redraws from the answer.
  function draw(m) {
    const toggle = (label, on, path, test) =>
      h('div', { class: 'switch' },
        h('strong', {}, label, ': '),
        h('span', { class: `badge ${on ? 'on' : 'off'}`, 'data-test': `${test}-state` }, on ? 'ON' : 'off'),
        h('button', {
          'data-test': `${test}-toggle`,
          onclick: ctx.action(async () => {
            const r = await api('POST', path, { body: { enabled: !on } });
            draw(r);
            ctx.notice(`${label} ${!on ? 'switched on' : 'switched off'}.`);
          }),
        }, on ? 'Switch off' : 'Switch on'));
    replace(
      root,
      h('h1', {}, 'Maintenance'),
      toggle('Push maintenance', m.maintenanceMode, '/api/v1/system/maintenance', 'push'),
      h('p', { class: 'muted' }, 'While on, pushes are accepted into this broker\'s spool and written to PostgreSQL when it is switched off.'),
      toggle('Pop maintenance', m.popMaintenanceMode, '/api/v1/system/maintenance/pop', 'pop'),
      h('p', { class: 'muted' }, 'While on, pops answer 204 and hand out nothing.'),
      h('div', { class: 'stats' },
        stat('Buffered messages', num(m.bufferedMessages), 'buffered'),
        stat('Spool bytes', num(m.spoolBytes), 'spool-bytes'),
        stat('Spool healthy', m.bufferHealthy ? 'yes' : 'no', 'spool-healthy'),
        stat('Draining', m.draining ? 'yes' : 'no', 'draining'),
        stat('Drained in total', num(m.drainedTotal), 'drained'),
      ),
      m.problem ? h('p', { class: 'banner error' }, m.problem) : null,
      m.lastDrainError ? h('p', { class: 'banner error' }, m.lastDrainError) : null,
    );
  }
  draw(await get('/api/v1/system/maintenance'));
}
