// The dashboard against three brokers with tenancy on, on one database: HEADER_URL names the
// tenant by the X-Tenant header alone (authentication off, so every caller is admin),
// HEADER_AUTH_URL by the header with JWT_ENABLED=true, CLAIM_URL also by the token claim
// `tenant` (JWT_ENABLED=true). Seeds two tenants through the HTTP API
// (acme: 3 messages in `orders`; globex: 5 in `orders`, 1 in `invoices`), then checks what each
// tenant's page shows: its own queues, counts and payloads only, the switcher of an admin, the
// token's tenant, the prompt before a tenant is chosen, and a note in place of the operator
// views. Each test fails on an unexpected API answer >= 400, a console or page error, or the
// error banner. Output: "ok N - tenancy: name" / "not ok N - tenancy: name" lines and
// "browser-tenancy: N passed, N failed".
//   HEADER_URL=… HEADER_AUTH_URL=… CLAIM_URL=… JWT_SECRET=… CHROMIUM=/usr/bin/chromium SCREENSHOTS=DIR node tenancy_suite.mjs
import { expectEq, hs256, launchBrowser, until } from './support.mjs';
import path from 'node:path';

const HEADER_URL = process.env.HEADER_URL;
const HEADER_AUTH_URL = process.env.HEADER_AUTH_URL;
const CLAIM_URL = process.env.CLAIM_URL;
const SECRET = process.env.JWT_SECRET;
const SHOTS = process.env.SCREENSHOTS;
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
if (!HEADER_URL || !HEADER_AUTH_URL || !CLAIM_URL || !SECRET || !SHOTS) throw new Error('HEADER_URL, HEADER_AUTH_URL, CLAIM_URL, JWT_SECRET and SCREENSHOTS must be set');

// What each tenant pushes: queue → transaction ids (the payload names tenant and id).
const SEED = {
  acme: { orders: ['acme-order-1', 'acme-order-2', 'acme-order-3'] },
  globex: { orders: ['globex-order-1', 'globex-order-2', 'globex-order-3', 'globex-order-4', 'globex-order-5'], invoices: ['globex-invoice-1'] },
};

// ---- the API, from Node ----------------------------------------------------------------

// An HS256 token for sub with role and the extra claims, valid for an hour.
function token(sub, role, extra = {}) {
  const now = Math.floor(Date.now() / 1000);
  return hs256(SECRET, { sub, role, iat: now, exp: now + 3600, ...extra });
}
const ACME_WRITER = token('acme-app', 'read-write', { tenant: 'acme' });
const ADMIN = token('ops', 'admin');
const READER = token('viewer', 'read-only');

// One request to the header broker for `tenant` (none for an operator route); throws unless 2xx.
async function call(method, p, tenant, body) {
  const headers = { ...(tenant ? { 'X-Tenant': tenant } : {}), ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) };
  const res = await fetch(HEADER_URL + p, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${p} (${tenant}) → ${res.status} ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : null;
}


// Pushes SEED through the broker, then waits until the stats snapshot counts every queue.
async function seed() {
  for (const [tenant, queues] of Object.entries(SEED)) {
    const items = Object.entries(queues).flatMap(([queue, ids]) => ids.map((id) => ({ queue, transactionId: id, payload: { tenant, id } })));
    await call('POST', '/api/v1/push', tenant, { items });
  }
  for (const [tenant, queues] of Object.entries(SEED)) {
    await until(`${tenant}'s queues in the snapshot`, async () => {
      const list = await call('GET', '/api/v1/resources/queues', tenant);
      return Object.entries(queues).every(([queue, ids]) => list.queues.some((q) => q.name === queue && q.messages.total === ids.length));
    });
  }
  await until("acme's pushes in the per-minute flush", async () => {
    const ops = await call('GET', `/api/v1/analytics/queue-ops?from=${new Date(Date.now() - 3600000).toISOString()}`, 'acme');
    return ops.series.filter((r) => r.queueName === 'orders').reduce((n, r) => n + r.pushMessages, 0) === 3;
  });
}

// ---- the browser -----------------------------------------------------------------------

let browser;
let page;
let problems = [];
let allowed = [];  // substrings of the failed answers a test provokes on purpose
let shot = 0;


// A fresh tab in its own browser context (so its own sessionStorage), watched for problems.
async function freshPage() {
  if (page) await page.browserContext().close();
  const context = await browser.createBrowserContext();
  page = await context.newPage();
  page.on('response', (r) => {
    const line = `${r.request().method()} ${r.url()} → ${r.status()}`;
    if (r.status() >= 400 && !allowed.some((a) => line.includes(a))) problems.push(line);
  });
  // Chromium logs every failed answer as a console error too; an allowed one is no problem.
  page.on('console', (m) => {
    const allowedAnswer = m.text().startsWith('Failed to load resource') && allowed.some((a) => (m.location()?.url || '').includes(a));
    if (m.type() === 'error' && !allowedAnswer) problems.push(`console error: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
}

// Waits until the view `name` has finished drawing; fails with the banner's text otherwise.
async function loaded(name) {
  await page.waitForSelector(`#view[data-view="${name}"][data-loaded]`, { timeout: 15000 });
  const state = await page.$eval('#view', (el) => el.dataset.loaded);
  if (state !== 'true') throw new Error(`view ${name} ended "${state}": ${await bannerText()}`);
}

// Runs action (which redraws the view) and waits for the view `name` it leads to; the marker
// keeps the wait from taking the view drawn before the action for the new one.
async function redrawn(name, action) {
  await page.$eval('#view', (el) => { el.dataset.loaded = 'stale'; });
  await action();
  await page.waitForSelector(`#view[data-view="${name}"][data-loaded]:not([data-loaded="stale"])`, { timeout: 15000 });
  await loaded(name);
}

// Goes to an in-app path through the menu's router (the tab keeps its sessionStorage).
async function go(p, name) {
  await redrawn(name, () => page.evaluate((to) => { history.pushState(null, '', to); dispatchEvent(new PopStateEvent('popstate')); }, p));
}

const bannerText = () => page.$eval('[data-test="error"]', (el) => (el.hidden ? '' : el.textContent));
const text = (sel) => page.$eval(sel, (el) => el.textContent.trim());
const present = async (sel) => (await page.$(sel)) !== null;
// The rows of table[data-test=name] as arrays of cell texts.
const rows = (name) => page.$$eval(`table[data-test="${name}"] tbody tr`, (trs) => trs.map((tr) => [...tr.cells].map((td) => td.textContent.trim())));
// The switcher's option values.
const switchOptions = () => page.$$eval('[data-test="tenant-switch"] option', (os) => os.map((o) => o.value));

// Queue name → Total as the queues view shows them (Queue, Namespace, Task, Partitions, Total,
// …), in name order.
async function queueTotals() {
  return Object.fromEntries((await rows('queues')).map((cells) => [cells[0], cells[4]]).sort(([a], [b]) => a.localeCompare(b)));
}

// Picks a tenant in the switcher and waits for the view drawn again (or the list it goes to).
const switchTo = (tenant, view) => redrawn(view, () => page.select('[data-test="tenant-switch"]', tenant));

// Pastes a token into the form and waits for the view it leads to.
async function useToken(t, next) {
  await loaded('token');
  await page.$eval('[data-test="token-input"]', (el, v) => { el.value = v; }, t);
  await redrawn(next, () => page.click('[data-test="token-submit"]'));
}

async function screenshot(name) {
  shot += 1;
  await page.screenshot({ path: path.join(SHOTS, `tenancy-${String(shot).padStart(2, '0')}-${name}.png`), fullPage: true });
}

// ---- the tests -------------------------------------------------------------------------

const tests = [];
const test = (name, fn) => tests.push({ name, fn });

test('header, auth off: the switcher lists the default tenant, acme and globex; acme sees its orders only', async () => {
  await freshPage();
  await page.goto(`${HEADER_URL}/queues`, { waitUntil: 'load' });
  await loaded('queues');
  const options = await switchOptions();
  for (const t of ['default', 'acme', 'globex']) if (!options.includes(t)) throw new Error(`switcher lacks ${t}: ${JSON.stringify(options)}`);
  expectEq(await page.$eval('[data-test="tenant-switch"]', (s) => s.value), 'default', 'the tenant chosen for an admin');
  await switchTo('acme', 'queues');
  expectEq(await queueTotals(), { orders: '3' }, "acme's queues and totals");
  await screenshot('acme-queues');
});

test("header, auth off: the messages view shows acme's messages and payloads only", async () => {
  await go('/messages', 'messages');
  const ids = (await rows('messages')).map((cells) => cells[3]).sort();
  expectEq(ids, SEED.acme.orders, "acme's transaction ids");
  await redrawn('message', () => page.click('table[data-test="messages"] a[data-link]'));
  const payload = JSON.parse(await text('[data-test="payload"]'));
  expectEq(payload.tenant, 'acme', 'the payload shown');
  await screenshot('acme-message');
});

test("header, auth off: switching to globex from a message goes to globex's messages, then its queues", async () => {
  await switchTo('globex', 'messages');
  expectEq(await page.evaluate(() => location.pathname), '/messages', 'the path after switching');
  const ids = (await rows('messages')).map((cells) => cells[3]).sort();
  expectEq(ids, [...SEED.globex.invoices, ...SEED.globex.orders].sort(), "globex's transaction ids");
  await go('/queues', 'queues');
  expectEq(await queueTotals(), { invoices: '1', orders: '5' }, "globex's queues and totals");
  await screenshot('globex-queues');
});

test('header, auth off: a tenant without queues can be typed in and is then offered', async () => {
  await redrawn('queues', async () => {
    await page.type('[data-test="tenant-other"]', 'initech');
    await page.click('[data-test="tenant-other-submit"]');
  });
  expectEq(await present('[data-test="queues-empty"]'), true, 'the empty list');
  expectEq(await page.$eval('[data-test="tenant-switch"]', (s) => s.value), 'initech', 'the switcher shows the typed tenant');
});

test('header, auth on: a read-only token is asked for its tenant instead of shown the 400', async () => {
  await freshPage();
  // The 401s before the token, then the 400s of the view's calls that name no tenant.
  allowed = ['/api/v1/system/tenants', '/api/v1/resources/queues', '/api/v1/analytics/queue-ops', '/api/v1/consumer-groups'];
  await page.goto(`${HEADER_AUTH_URL}/queues`, { waitUntil: 'load' });
  await useToken(READER, 'tenant');
  expectEq(await bannerText(), '', 'the error banner');
  if (!(await text('[data-test="tenant-reason"]')).includes('X-Tenant')) throw new Error('the prompt does not name the header');
  expectEq(await present('[data-test="tenant-input"]'), true, 'the tenant field in the menu');
  expectEq(await present('[data-test="tenant-switch"]'), false, 'a switcher');
  await screenshot('tenant-prompt');
  await page.type('[data-test="tenant-prompt"]', 'acme');
  await redrawn('queues', () => page.click('[data-test="tenant-prompt-submit"]'));
  allowed = [];
  expectEq(await queueTotals(), { orders: '3' }, "acme's queues and totals");
  expectEq(await page.$eval('[data-test="tenant-input"]', (el) => el.value), 'acme', 'the field names the chosen tenant');
  await redrawn('queues', async () => {
    await page.$eval('[data-test="tenant-input"]', (el) => { el.value = 'globex'; });
    await page.click('[data-test="tenant-input-submit"]');
  });
  expectEq(await queueTotals(), { invoices: '1', orders: '5' }, "globex's queues and totals");
  await go('/maintenance', 'maintenance');
  if (!(await text('[data-test="operator-only"]')).includes('admin')) throw new Error('no note on the maintenance view');
});

test("claim: a token with tenant=acme sees acme's orders only, its tenant shown, no switcher", async () => {
  await freshPage();
  allowed = ['/api/v1/system/tenants', '/api/v1/resources/overview', '/api/v1/status'];  // the 401s before the token
  await page.goto(`${CLAIM_URL}/`, { waitUntil: 'load' });
  await useToken(ACME_WRITER, 'overview');
  allowed = [];
  expectEq(await text('[data-test="tenant-current"]'), 'acme', 'the tenant shown');
  expectEq(await present('[data-test="tenant-switch"]'), false, 'a switcher');
  expectEq(await present('[data-test="tenant-input"]'), false, 'a tenant field');
  await go('/queues', 'queues');
  expectEq(await queueTotals(), { orders: '3' }, "acme's queues and totals");
  await screenshot('claim-queues');
});

test('claim: the maintenance and analytics views show a note instead of the 403', async () => {
  await go('/maintenance', 'maintenance');
  if (!(await text('[data-test="operator-only"]')).includes('admin')) throw new Error('no note on the maintenance view');
  expectEq(await present('[data-test="push-toggle"]'), false, 'the push switch');
  await go('/analytics', 'analytics');
  if (!(await text('[data-test="operator-only"]')).includes('admin')) throw new Error('no note on the analytics view');
  expectEq((await rows('queue-totals')).map((cells) => [cells[0], cells[1]]), [['orders', '3']], "acme's pushes in the window");
  await screenshot('claim-analytics');
});

test("claim: an admin token without the claim switches between acme's and globex's queues", async () => {
  await freshPage();
  allowed = ['/api/v1/system/tenants', '/api/v1/resources/queues', '/api/v1/analytics/queue-ops', '/api/v1/consumer-groups'];  // the 401s before the token
  await page.goto(`${CLAIM_URL}/queues`, { waitUntil: 'load' });
  await useToken(ADMIN, 'queues');
  allowed = [];
  const options = await switchOptions();
  for (const t of ['acme', 'globex']) if (!options.includes(t)) throw new Error(`switcher lacks ${t}: ${JSON.stringify(options)}`);
  expectEq(await present('[data-test="tenant-current"]'), false, "a token's tenant");
  await switchTo('acme', 'queues');
  expectEq(await queueTotals(), { orders: '3' }, "acme's queues and totals");
  await switchTo('globex', 'queues');
  expectEq(await queueTotals(), { invoices: '1', orders: '5' }, "globex's queues and totals");
  await go('/maintenance', 'maintenance');
  expectEq(await present('[data-test="push-toggle"]'), true, 'the push switch for an admin');
  await screenshot('claim-admin-globex');
});

browser = await launchBrowser(CHROMIUM);
let passed = 0;
let failed = 0;
try {
  const started = Date.now();
  await seed();
  console.log(`# seeded in ${Date.now() - started} ms`);
  for (const [i, t] of tests.entries()) {
    problems = [];
    allowed = [];
    const t0 = Date.now();
    try {
      await t.fn();
      if (problems.length) throw new Error(`failed calls or errors: ${problems.join('; ')}`);
      if (await bannerText()) throw new Error(`error banner: ${await bannerText()}`);
      passed += 1;
      console.log(`ok ${i + 1} - tenancy: ${t.name} (${Date.now() - t0} ms)`);
    } catch (err) {
      failed += 1;
      console.log(`not ok ${i + 1} - tenancy: ${t.name}`);
      console.log(`# ${String(err.message).split('\n').join('\n# ')}`);
      if (page) await screenshot(`failed-${i + 1}`).catch(() => {});
    }
  }
} finally {
  await browser.close();
}
console.log(`browser-tenancy: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
