// The bearer token the dashboard sends, kept in sessionStorage (gone when the tab closes), and
// what the token's payload says about its level. The payload is decoded for display only (the
// signature is not checked here): the broker decides every request, and refuses what the
// token may not do even when a button shows.

const KEY = 'queen.token';
const LEVELS = ['read-only', 'read-write', 'admin'];

export const getToken = () => sessionStorage.getItem(KEY) || '';

// Keeps a pasted token ("Bearer " prefix and blanks removed).
export function setToken(text) {
  const token = String(text || '').trim().replace(/^bearer\s+/i, '');
  if (token) sessionStorage.setItem(KEY, token);
  else sessionStorage.removeItem(KEY);
}

export const clearToken = () => sessionStorage.removeItem(KEY);

// The token's claims, or null when there is none or it does not decode.
export function claims() {
  const part = getToken().split('.')[1];
  if (!part) return null;
  try {
    const b64 = part.replace(/-/g, '+').replace(/_/g, '/');
    const bytes = Uint8Array.from(atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4)), (c) => c.charCodeAt(0));
    const value = JSON.parse(new TextDecoder().decode(bytes));
    return value && typeof value === 'object' ? value : null;
  } catch {
    return null;
  }
}

// The highest level the token's "role"/"roles" claims name with the broker's default role
// names, or null (no token, or roles the dashboard cannot read: then nothing is hidden).
export function level() {
  const c = claims();
  if (!c) return null;
  const roles = [c.role, ...(Array.isArray(c.roles) ? c.roles : [])].filter((r) => typeof r === 'string');
  let best = -1;
  for (const r of roles) best = Math.max(best, LEVELS.indexOf(r));
  return best >= 0 ? LEVELS[best] : null;
}

// Whether to offer an action that needs `needed` ("read-write" or "admin"): yes without a
// token (authentication may be off) or with roles the dashboard cannot read.
export function may(needed) {
  const have = level();
  return have === null || LEVELS.indexOf(have) >= LEVELS.indexOf(needed);
}
