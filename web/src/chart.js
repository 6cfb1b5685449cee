// A small SVG line chart: time on x, values from 0 on y, one polyline per series, a legend
// with each series' newest value.
import { h } from './dom.js';

const NS = 'http://www.w3.org/2000/svg';
const COLORS = ['#6d4aff', '#00a37a', '#e5533d', '#e0a100', '#1f8fd6', '#a3479b'];

// An SVG element with attributes.
function s(tag, attrs = {}, text) {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  if (text !== undefined) el.textContent = text;
  return el;
}

// The smallest "nice" number (1, 2, 5 × 10^n) at or above v.
function niceCeil(v) {
  if (v <= 0) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  return [1, 2, 5, 10].map((m) => m * p).find((c) => c >= v);
}

// "HH:MM" of a time in ms, after "MM-DD " when the axis spans more than a day.
const label = (t, long) => {
  const d = new Date(t);
  const p = (n) => String(n).padStart(2, '0');
  return `${long ? `${p(d.getMonth() + 1)}-${p(d.getDate())} ` : ''}${p(d.getHours())}:${p(d.getMinutes())}`;
};

// lineChart({title, series:[{name, points:[{t, v}]}], unit, test, window}) → a figure
// element; window ({from, to}, ISO) fixes the time axis, else it spans the points.
export function lineChart({ title, series: given, unit = '', test, window }) {
  const series = given.map((x) => ({ ...x, points: x.points.filter((p) => Number.isFinite(p.t) && Number.isFinite(p.v)) }));
  const W = 640, H = 200, L = 48, R = 12, T = 10, B = 24;
  const all = series.flatMap((x) => x.points);
  const fig = h('figure', { class: 'chart', 'data-chart': test });
  fig.append(h('figcaption', {}, title));
  if (!all.length) {
    fig.append(h('p', { class: 'empty' }, 'No data in this window yet.'));
    return fig;
  }
  const t0 = window ? Date.parse(window.from) : Math.min(...all.map((p) => p.t));
  const t1 = window ? Date.parse(window.to) : Math.max(...all.map((p) => p.t), t0 + 1);
  const vmax = niceCeil(Math.max(...all.map((p) => p.v)));
  const x = (t) => L + ((t - t0) / (t1 - t0)) * (W - L - R);
  const y = (v) => T + (1 - v / vmax) * (H - T - B);
  const svg = s('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': title });
  for (const frac of [0, 0.5, 1]) {
    const v = vmax * frac;
    svg.append(s('line', { x1: L, x2: W - R, y1: y(v), y2: y(v), class: 'grid' }));
    svg.append(s('text', { x: L - 6, y: y(v) + 4, 'text-anchor': 'end', class: 'axis' }, `${+v.toFixed(2)}${unit}`));
  }
  const long = t1 - t0 > 86400000;
  svg.append(s('text', { x: L, y: H - 6, class: 'axis' }, label(t0, long)));
  svg.append(s('text', { x: W - R, y: H - 6, 'text-anchor': 'end', class: 'axis' }, label(t1, long)));
  series.forEach((ser, i) => {
    const pts = [...ser.points].sort((a, b) => a.t - b.t);
    const color = COLORS[i % COLORS.length];
    if (pts.length === 1) svg.append(s('circle', { cx: x(pts[0].t), cy: y(pts[0].v), r: 3, fill: color }));
    else svg.append(s('polyline', { points: pts.map((p) => `${x(p.t)},${y(p.v)}`).join(' '), stroke: color, class: 'line' }));
  });
  fig.append(svg);
  fig.append(
    h(
      'div',
      { class: 'legend' },
      series.map((ser, i) => {
        const last = [...ser.points].sort((a, b) => a.t - b.t).at(-1);
        return h('span', {}, h('i', { style: `background:${COLORS[i % COLORS.length]}` }), `${ser.name}: ${last ? +last.v.toFixed(2) : '–'}${unit}`);
      }),
    ),
  );
  return fig;
}

// Rows with an ISO time field and numeric fields → one series per field.
export function seriesOf(rows, timeKey, fields) {
  return fields.map(([key, name]) => ({
    name,
    points: rows.filter((r) => r[key] !== null && r[key] !== undefined).map((r) => ({ t: Date.parse(r[timeKey]), v: Number(r[key]) })),
  }));
}
