// Number, time and JSON formatting shared by the views.

// 12345 → "12,345"; null → "–".
export const num = (v) => (v === null || v === undefined ? '–' : Number(v).toLocaleString('en-US'));

// A rate with 2 decimals; null → "–".
export const rate = (v) => (v === null || v === undefined ? '–' : Number(v).toFixed(2));

// Seconds as "3s", "4m 2s", "2h 5m".
export function duration(seconds) {
  if (seconds === null || seconds === undefined) return '–';
  const s = Math.round(Number(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
}

// An ISO time stamp as local "YYYY-MM-DD HH:MM:SS"; null → "–".
export function time(iso) {
  if (!iso) return '–';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const p = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

// A payload as indented JSON.
export const pretty = (v) => JSON.stringify(v, null, 2);

// A payload on one line, cut to n characters.
export function brief(v, n = 80) {
  const s = JSON.stringify(v);
  return s === undefined ? '' : s.length > n ? `${s.slice(0, n - 1)}…` : s;
}

// The ISO time `minutes` before now.
export const minutesAgo = (minutes) => new Date(Date.now() - minutes * 60000).toISOString();

// The last `minutes` as {from, to} (ISO), both from one clock reading, so the span the broker
// buckets by is exactly `minutes`.
export function lastMinutes(minutes) {
  const now = Date.now();
  return { from: new Date(now - minutes * 60000).toISOString(), to: new Date(now).toISOString() };
}
