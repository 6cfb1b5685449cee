// Paging controls for lists the server pages with limit/offset.
import { h } from './dom.js';

// pager({offset, limit, shown, total?}, go(offset)) → "1–50 of 120" with Previous/Next. Without
// a total, Next is offered while a page comes back full.
export function pager({ offset, limit, shown, total }, go) {
  const end = offset + shown;
  const hasNext = total === undefined ? shown === limit : end < total;
  return h(
    'div',
    { class: 'pager' },
    h('button', { disabled: offset === 0, onclick: () => go(Math.max(0, offset - limit)), 'data-test': 'prev' }, '← Previous'),
    h('span', { 'data-test': 'page-range' }, shown ? `${offset + 1}–${end}${total === undefined ? '' : ` of ${total}`}` : total ? `none past ${total}` : 'none'),
    h('button', { disabled: !hasNext, onclick: () => go(offset + limit), 'data-test': 'next' }, 'Next →'),
  );
}
