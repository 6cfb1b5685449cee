// The one place the dashboard talks to the broker: every request goes through api(), so the
// headers it sends (Authorization: Bearer with the token of auth.js, the tenant header of
// tenant.js while tenancy is on) are set here.
import { getToken } from './auth.js';
import { tenantHeader } from './tenant.js';

// A request that failed: its method, path, HTTP status (0 when the network failed) and the
// broker's message ({"error": ...}) or the status text.
export class ApiError extends Error {
  constructor(method, path, status, message) {
    super(`${method} ${path} → ${status || 'network error'}: ${message}`);
    this.status = status;
    this.brokerMessage = message;
  }
}

// "?a=1&b=2" from an object, leaving out undefined, null and "" values.
export function queryString(query = {}) {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (v !== undefined && v !== null && v !== '') params.set(k, String(v));
  }
  const s = params.toString();
  return s ? `?${s}` : '';
}

// Sends one request and returns its parsed JSON body (null when empty); throws ApiError for
// any status that is not 2xx.
export async function api(method, path, { query, body } = {}) {
  const headers = { Accept: 'application/json' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const token = getToken();
  if (token) headers.Authorization = `Bearer ${token}`;
  const tenant = tenantHeader();
  if (tenant) headers[tenant[0]] = tenant[1];
  let res;
  try {
    res = await fetch(path + queryString(query), {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (e) {
    throw new ApiError(method, path, 0, e.message);
  }
  const text = await res.text();
  let data = null;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = text;
    }
  }
  if (!res.ok) throw new ApiError(method, path, res.status, (data && data.error) || res.statusText);
  return data;
}

// GET path with a query object.
export const get = (path, query) => api('GET', path, { query });

// A path segment, percent-encoded.
export const seg = (s) => encodeURIComponent(s);
