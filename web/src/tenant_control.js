// The tenant's controls while tenancy is on: in the aside, the token's tenant, a switcher of
// every tenant (GET /api/v1/system/tenants) for an admin, or a field to name the tenant; and
// the form that asks for a tenant in place of a view before one is chosen.
import { get } from './api.js';
import { h } from './dom.js';
import { chooseTenant, chosenTenant, claimedTenant, maySwitchTenant, tenancyOn } from './tenant.js';

// A form that names a tenant: the field carries data-test `test`, the button `${test}-submit`;
// onChoose(name) runs with the trimmed, non-empty name.
export function tenantForm(test, onChoose, { value = '', placeholder = 'tenant', button = 'Use tenant' } = {}) {
  const input = h('input', { type: 'text', name: 'tenant', value, placeholder, maxlength: 128, autocomplete: 'off', 'data-test': test });
  const form = h('form', { class: 'tenant-form' }, input, h('button', { type: 'submit', 'data-test': `${test}-submit` }, button));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const name = input.value.trim();
    if (name) onChoose(name);
  });
  return form;
}

// The <select> of an admin: the default tenant, every tenant with a queue, and the chosen one
// (which may have no queue yet), each once.
function switcher(list, onChoose) {
  const queues = new Map(list.tenants.map((t) => [t.tenant, t.queues]));
  const names = [...new Set([list.defaultTenant, ...queues.keys(), chosenTenant()].filter(Boolean))];
  const label = (name) => (queues.has(name) ? `${name} (${queues.get(name)} ${queues.get(name) === 1 ? 'queue' : 'queues'})` : name);
  const select = h('select', { name: 'tenant', 'data-test': 'tenant-switch' },
    names.map((name) => h('option', { value: name, selected: name === chosenTenant() }, label(name))));
  select.addEventListener('change', () => onChoose(select.value));
  return select;
}

// The aside's tenant control as nodes (none with tenancy off); onChoose(name) runs when the
// user picks a tenant. An admin who has chosen none yet is given the default tenant.
export async function tenantControl(onChoose) {
  if (!tenancyOn()) return [];
  const claimed = claimedTenant();
  if (claimed) return ['Tenant ', h('strong', { 'data-test': 'tenant-current' }, claimed)];
  // A caller the list refuses (auth on and no token yet, or a role the dashboard cannot read)
  // gets the field: the view's own request then shows the broker's answer.
  const list = maySwitchTenant() ? await get('/api/v1/system/tenants').catch(() => null) : null;
  if (list) {
    if (!chosenTenant()) chooseTenant(list.defaultTenant);
    return [
      h('label', {}, 'Tenant ', switcher(list, onChoose)),
      tenantForm('tenant-other', onChoose, { placeholder: 'another tenant', button: 'Use' }),
    ];
  }
  return [h('label', {}, 'Tenant'), tenantForm('tenant-input', onChoose, { value: chosenTenant(), button: 'Use' })];
}
