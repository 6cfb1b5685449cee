// Building DOM nodes without innerHTML: text is always text, so no payload can inject markup.

// h('a', {href: '/x', class: 'y', onclick: fn}, 'text', child, [more]) → an element.
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'value') el.value = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

// Appends children (nodes, strings, numbers, nested arrays; null/undefined/false skipped).
export function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

// Replaces every child of el.
export function replace(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

// A table: columns [{label, cell: row => node|string, num?}], rows; `empty` when none.
export function table(columns, rows, { empty = 'Nothing to show.', testId } = {}) {
  if (!rows.length) return h('p', { class: 'empty', 'data-test': testId && `${testId}-empty` }, empty);
  return h(
    'table',
    { 'data-test': testId },
    h('thead', {}, h('tr', {}, columns.map((c) => h('th', { class: c.num ? 'num' : null }, c.label)))),
    h(
      'tbody',
      {},
      rows.map((r) => h('tr', {}, columns.map((c) => h('td', { class: c.num ? 'num' : null }, c.cell(r))))),
    ),
  );
}

// A labelled figure: {label, value, test} → a card.
export function stat(label, value, test) {
  return h('div', { class: 'stat' }, h('div', { class: 'stat-value', 'data-stat': test }, value), h('div', { class: 'stat-label' }, label));
}

// An in-app link (the router intercepts it).
export const link = (href, text) => h('a', { href, 'data-link': true }, text);
