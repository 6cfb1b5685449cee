// The dashboard's shell: navigation, the client-side router (history API; the broker answers
// every such path with this page), the error and notice banners, the health badge, the token
// form shown when the broker answers 401, and the tenant while the broker has tenancy on.
import './style.css';
import { get } from './api.js';
import { clearToken, claims, getToken, level, may, setToken } from './auth.js';
import { h, replace } from './dom.js';
import { chooseTenant, setTenancy, tenancyOn, tenantHeaderName } from './tenant.js';
import { tenantControl, tenantForm } from './tenant_control.js';
import overview from './views/overview.js';
import queues from './views/queues.js';
import queue from './views/queue.js';
import messages from './views/messages.js';
import message from './views/message.js';
import groups from './views/groups.js';
import group from './views/group.js';
import dlq from './views/dlq.js';
import traces from './views/traces.js';
import trace from './views/trace.js';
import analytics from './views/analytics.js';
import maintenance from './views/maintenance.js';
import streams from './views/streams.js';

// [pattern, view name, view, title]; ":name" is one path segment.
const ROUTES = [
  ['/', 'overview', overview, 'Overview'],
  ['/queues', 'queues', queues, 'Queues'],
  ['/queues/:queue', 'queue', queue, 'Queue'],
  ['/messages', 'messages', messages, 'Messages'],
  ['/messages/:partitionId/:transactionId', 'message', message, 'Message'],
  ['/groups', 'groups', groups, 'Consumer groups'],
  ['/groups/:group', 'group', group, 'Consumer group'],
  ['/dlq', 'dlq', dlq, 'Dead letters'],
  ['/traces', 'traces', traces, 'Traces'],
  ['/traces/:name', 'trace', trace, 'Trace'],
  ['/stream-queries', 'streams', streams, 'Streams'],
  ['/analytics', 'analytics', analytics, 'Analytics'],
  ['/maintenance', 'maintenance', maintenance, 'Maintenance'],
];

const NAV = [
  ['/', 'Overview'],
  ['/queues', 'Queues'],
  ['/messages', 'Messages'],
  ['/groups', 'Consumer groups'],
  ['/dlq', 'Dead letters'],
  ['/traces', 'Traces'],
  ['/stream-queries', 'Streams'],
  ['/analytics', 'Analytics'],
  ['/maintenance', 'Maintenance'],
];

const errorBox = h('div', { class: 'banner error', 'data-test': 'error', hidden: true });
const noticeBox = h('div', { class: 'banner notice', 'data-test': 'notice', hidden: true });
const health = h('span', { class: 'health', 'data-test': 'health' }, '…');
const main = h('main', { id: 'view' });
const nav = h('nav', {}, NAV.map(([href, label]) => h('a', { href, 'data-link': true, 'data-nav': href }, label)));

const tokenBox = h('div', { class: 'token', 'data-test': 'token-status' });
const tenantBox = h('div', { class: 'tenant', 'data-test': 'tenant' });
let tenantDraws = 0;

// Redraws the aside's tenant control; a draw still waiting for the tenant list when a newer
// one starts is dropped.
async function drawTenant() {
  const mine = ++tenantDraws;
  const nodes = await tenantControl(switchTenant);
  if (mine === tenantDraws) replace(tenantBox, nodes);
}

// Works for another tenant. A detail view goes to its list, since the new tenant may have no
// queue, message, group or trace of that name; a list view is drawn again.
async function switchTenant(name) {
  chooseTenant(name);
  await drawTenant();
  const parts = location.pathname.split('/').filter(Boolean);
  if (parts.length > 1) navigate(`/${parts[0]}`);
  else {
    noticeBox.hidden = true;
    render();
  }
}

// After the token changed: its tenant and level may differ, so the tenant control first.
async function tokenChanged() {
  drawTokenStatus();
  await drawTenant();
  render();
}

// The aside's line about the token: whom it names and its level, and a way to forget it.
function drawTokenStatus() {
  if (!getToken()) {
    replace(tokenBox);
    return;
  }
  const c = claims() || {};
  replace(
    tokenBox,
    h('span', { 'data-test': 'token-subject' }, c.sub ? String(c.sub) : 'token'),
    ' · ',
    h('span', { 'data-test': 'token-level' }, level() || 'no known role'),
    ' ',
    h('button', {
      type: 'button',
      'data-test': 'token-forget',
      onclick: () => {
        clearToken();
        tokenChanged();
      },
    }, 'Forget token'),
  );
}

// Asks for a token in place of the view; the broker's refusal says why.
function askForToken(err) {
  timers.forEach(clearInterval);
  timers = [];
  errorBox.hidden = true;
  main.dataset.view = 'token';
  main.dataset.loaded = 'true';
  const input = h('textarea', { name: 'token', rows: 4, 'data-test': 'token-input', placeholder: 'eyJhbGciOi…' });
  const form = h('form', { class: 'token-form', 'data-test': 'token-form' },
    h('label', {}, 'Bearer token', input),
    h('button', { type: 'submit', 'data-test': 'token-submit' }, 'Use token'));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    setToken(input.value);
    tokenChanged();
  });
  replace(main,
    h('h1', {}, 'Token required'),
    h('p', { class: 'banner error', 'data-test': 'token-reason' }, err.brokerMessage || err.message),
    h('p', { class: 'muted' }, 'This broker checks JWTs. The token is kept in this tab only (sessionStorage) and sent as Authorization: Bearer.'),
    form);
}

// Asks for a tenant in place of the view: with tenancy on, the broker refuses a request that
// names none, and its 400 says less than this.
function askForTenant() {
  timers.forEach(clearInterval);
  timers = [];
  errorBox.hidden = true;
  main.dataset.view = 'tenant';
  main.dataset.loaded = 'true';
  replace(main,
    h('h1', {}, 'Choose a tenant'),
    h('p', { 'data-test': 'tenant-reason' }, `This broker serves several tenants and keeps their queues apart. Name the tenant whose queues to show; it is sent in the ${tenantHeaderName()} header and kept in this tab only.`),
    tenantForm('tenant-prompt', switchTenant));
}

// Whether an error is the broker's refusal of a request that names no tenant.
const namesNoTenant = (err) => Boolean(err) && err.status === 400 && tenancyOn() && /^missing tenant header/.test(err.brokerMessage || '');

let timers = [];
let generation = 0;

// The view and its parameters for a path, or null.
function resolve(pathname) {
  const parts = pathname.split('/').filter(Boolean).map(decodeURIComponent);
  for (const [pattern, name, view, title] of ROUTES) {
    const want = pattern.split('/').filter(Boolean);
    if (want.length !== parts.length) continue;
    const params = {};
    if (want.every((w, i) => (w.startsWith(':') ? ((params[w.slice(1)] = parts[i]), true) : w === parts[i]))) return { name, view, params, title };
  }
  return null;
}

// Shows an error (an ApiError names the request and the broker's message); a 401 asks for a
// token instead, and a request without a tenant asks for the tenant.
function fail(err) {
  console.warn(err);
  if (err && err.status === 401) {
    askForToken(err);
    return;
  }
  if (namesNoTenant(err)) {
    askForTenant();
    return;
  }
  errorBox.textContent = err && err.message ? err.message : String(err);
  errorBox.hidden = false;
}

// Shows a short confirmation of an action.
function notice(text) {
  noticeBox.textContent = text;
  noticeBox.hidden = false;
}

// Renders the view of the current location; timers of the previous view stop.
async function render() {
  timers.forEach(clearInterval);
  timers = [];
  const mine = ++generation;
  errorBox.hidden = true;
  const found = resolve(location.pathname);
  const first = '/' + (location.pathname.split('/')[1] || '');
  for (const a of nav.querySelectorAll('a')) {
    a.classList.toggle('active', a.dataset.nav === first);
    // The maintenance switches need admin; the view is left out of the menu below it.
    a.hidden = a.dataset.nav === '/maintenance' && !may('admin');
  }
  main.dataset.view = found ? found.name : 'not-found';
  document.title = found ? `${found.title} · Queen` : 'Queen';
  delete main.dataset.loaded;
  if (!found) {
    replace(main, h('h1', {}, 'Not found'), h('p', {}, `No view at ${location.pathname}.`));
    return;
  }
  const ctx = {
    params: found.params,
    query: new URLSearchParams(location.search),
    go: navigate,
    // Navigates to the same view with these query parameters (empty values dropped).
    setQuery(values) {
      const q = new URLSearchParams();
      for (const [k, v] of Object.entries(values)) if (v !== undefined && v !== null && v !== '') q.set(k, v);
      navigate(location.pathname + (q.toString() ? `?${q}` : ''));
    },
    // Runs fn every ms while this view is shown; its errors are shown.
    every(ms, fn) {
      timers.push(setInterval(() => mine === generation && fn().catch(fail), ms));
    },
    // An event handler that runs fn and shows its error.
    action: (fn) => (ev) => {
      ev?.preventDefault?.();
      errorBox.hidden = true;
      noticeBox.hidden = true;
      return Promise.resolve().then(fn).catch(fail);
    },
    fail,
    notice,
    current: () => mine === generation,
  };
  replace(main, h('p', { class: 'loading' }, 'Loading…'));
  try {
    await found.view(main, ctx);
    if (mine === generation) main.dataset.loaded = 'true';
  } catch (err) {
    if (mine === generation) {
      replace(main, h('h1', {}, found.title));
      fail(err);
      if ((err && err.status === 401) || namesNoTenant(err)) return;
      main.dataset.loaded = 'error';
    }
  }
}

// Goes to an in-app path.
function navigate(path) {
  history.pushState(null, '', path);
  noticeBox.hidden = true;
  render();
}

// Polls /health for the badge; its answer also says whether tenancy is on (tenant.js).
async function checkHealth() {
  try {
    const r = await get('/health');
    setTenancy(r.tenancy);
    health.textContent = `${r.status} · v${r.version}`;
    health.className = 'health ok';
  } catch (err) {
    health.textContent = 'unreachable';
    health.className = 'health bad';
  }
}

document.addEventListener('click', (ev) => {
  const a = ev.target.closest('a[data-link]');
  if (!a || ev.metaKey || ev.ctrlKey || ev.shiftKey || ev.button !== 0) return;
  ev.preventDefault();
  navigate(a.getAttribute('href'));
});
window.addEventListener('popstate', render);

replace(
  document.getElementById('app'),
  h('aside', {}, h('div', { class: 'brand' }, 'Queen'), tenantBox, nav, health, tokenBox),
  h('div', { class: 'content' }, errorBox, noticeBox, main),
);
drawTokenStatus();
setInterval(checkHealth, 10000);
// The first view waits for /health and the tenant: with tenancy on every request names one.
checkHealth().then(drawTenant).then(render);
