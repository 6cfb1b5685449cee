// The tenant the dashboard works for while the broker has tenancy on (docs/tenancy.md): /health
// names the header and the token claim; the token's claim wins, else the tenant chosen here,
// kept in sessionStorage like the token. api.js sends it; this module never talks to the broker.
import { claims, may } from './auth.js';

const KEY = 'queen.tenant';
let config = null;  // {header, claim} from /health; null while tenancy is off

// Takes /health's `tenancy` object (absent, so tenancy off, when undefined).
export function setTenancy(tenancy) {
  config = tenancy && tenancy.header ? { header: tenancy.header, claim: tenancy.claim || null } : null;
}

// Whether the broker has tenancy on (as its /health said).
export const tenancyOn = () => config !== null;

// The request header that names the tenant, or null with tenancy off.
export const tenantHeaderName = () => (config ? config.header : null);

// The tenant the token's claim names, or null (no claim configured, or the token has none).
export function claimedTenant() {
  if (!config || !config.claim) return null;
  const value = claims()?.[config.claim];
  return typeof value === 'string' && value ? value : null;
}

// The tenant chosen in this tab, '' when none.
export const chosenTenant = () => sessionStorage.getItem(KEY) || '';

// Keeps the tenant the user named (trimmed); an empty name forgets it.
export function chooseTenant(name) {
  const tenant = String(name || '').trim();
  if (tenant) sessionStorage.setItem(KEY, tenant);
  else sessionStorage.removeItem(KEY);
}

// The tenant requests are for: the claim, else the chosen one; '' with none or tenancy off.
export const currentTenant = () => (config ? claimedTenant() || chosenTenant() : '');

// [header, tenant] for api() to send, or null: tenancy off, the token's claim names the tenant
// (the broker refuses a header that differs from it), or nothing chosen yet.
export function tenantHeader() {
  if (!config || claimedTenant()) return null;
  const tenant = chosenTenant();
  return tenant ? [config.header, tenant] : null;
}

// Whether to offer the switcher of every tenant: an admin (or no token: auth may be off)
// whose token names no tenant.
export const maySwitchTenant = () => tenancyOn() && !claimedTenant() && may('admin');

// Whether the operator routes (maintenance, the brokers' own metrics) may answer: with tenancy
// on they need admin; with it off they follow their own access rules, as every route does.
export const mayReadOperatorRoutes = () => !tenancyOn() || may('admin');
