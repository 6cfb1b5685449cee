// The dashboard against a broker with JWT_ENABLED=true: it asks for a token on a 401, sends
// the token it was given, shows the token's subject and level, and shows only the actions the
// level allows (the broker refuses the rest anyway). Tokens are HS256, signed here with the
// broker's JWT_SECRET. Output: "ok N - name" / "not ok N - name" lines and
// "browser-auth: N passed, N failed".
//   QUEEN_URL=http://127.0.0.1:PORT JWT_SECRET=... CHROMIUM=/usr/bin/chromium SCREENSHOTS=DIR node auth_suite.mjs
import { expectEq, hs256, launchBrowser } from './support.mjs';
import path from 'node:path';

const BASE = process.env.QUEEN_URL;
const SECRET = process.env.JWT_SECRET;
const SHOTS = process.env.SCREENSHOTS;
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
if (!BASE || !SECRET || !SHOTS) throw new Error('QUEEN_URL, JWT_SECRET and SCREENSHOTS must be set');
const QUEUE = 'auth-dash';

// An HS256 token for sub with role, valid for an hour (or expired an hour ago).
function token(sub, role, { expired = false } = {}) {
  const now = Math.floor(Date.now() / 1000);
  return hs256(SECRET, { sub, role, iat: now - (expired ? 7200 : 0), exp: now + (expired ? -3600 : 3600) });
}
const ADMIN = token('dash-admin', 'admin');
const READER = token('dash-reader', 'read-only');

async function call(method, p, body) {
  const res = await fetch(BASE + p, {
    method,
    headers: { Authorization: `Bearer ${ADMIN}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${p} → ${res.status} ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : null;
}

// One dead letter in QUEUE, so that the dead-letter view has a row with actions.
async function seed() {
  await call('POST', '/api/v1/push', { items: [{ queue: QUEUE, payload: { n: 1 } }] });
  const popped = await call('GET', `/api/v1/pop/queue/${QUEUE}?batch=1&wait=false`);
  const m = popped.messages[0];
  await call('POST', '/api/v1/ack', { transactionId: m.transactionId, partitionId: m.partitionId, leaseId: m.leaseId, status: 'dlq', error: 'seeded' });
}

let page;
let shot = 0;
const text = (sel) => page.$eval(sel, (el) => el.textContent.trim());
const present = async (sel) => (await page.$(sel)) !== null;
async function screenshot(name) {
  shot += 1;
  await page.screenshot({ path: path.join(SHOTS, `auth-${String(shot).padStart(2, '0')}-${name}.png`), fullPage: true });
}
async function view(name) {
  await page.waitForSelector(`#view[data-view="${name}"][data-loaded="true"]`, { timeout: 15000 });
}
// Pastes a token into the form and waits for the view it leads to.
async function useToken(t, next) {
  await view('token');
  await page.$eval('[data-test="token-input"]', (el, v) => { el.value = v; }, t);
  await page.click('[data-test="token-submit"]');
  await view(next);
}
// Whether the menu entry is drawn (its computed display, not only its hidden attribute).
const maintenanceLinkShown = () => page.$eval('nav a[data-nav="/maintenance"]', (a) => getComputedStyle(a).display !== 'none');

const tests = [];
const test = (name, fn) => tests.push({ name, fn });

test('without a token the dashboard asks for one', async () => {
  await page.goto(BASE + '/', { waitUntil: 'load' });
  await view('token');
  expectEq(await text('[data-test="token-reason"]'), 'Authentication required', 'the reason shown');
  await screenshot('token-form');
});

test('a read-only token is sent and shows no mutating action', async () => {
  await useToken(READER, 'overview');
  expectEq(await text('[data-test="token-subject"]'), 'dash-reader', 'subject');
  expectEq(await text('[data-test="token-level"]'), 'read-only', 'level');
  expectEq(await maintenanceLinkShown(), false, 'maintenance in the menu');
  await page.goto(`${BASE}/dlq?queue=${QUEUE}`, { waitUntil: 'load' });  // the token stays in this tab
  await view('dlq');
  await page.waitForSelector('table[data-test="dlq"] tbody tr');
  expectEq(await present('[data-test="requeue"]'), false, 'requeue button');
  expectEq(await present('[data-test="delete"]'), false, 'delete button');
  expectEq(await present('[data-test="purge"]'), false, 'purge button');
  await screenshot('read-only-dlq');
});

test('an admin token shows every action', async () => {
  await page.click('[data-test="token-forget"]');
  await useToken(ADMIN, 'dlq');
  await page.waitForSelector('table[data-test="dlq"] tbody tr');
  expectEq(await present('[data-test="requeue"]'), true, 'requeue button');
  expectEq(await present('[data-test="delete"]'), true, 'delete button');
  expectEq(await present('[data-test="purge"]'), true, 'purge button');
  expectEq(await maintenanceLinkShown(), true, 'maintenance in the menu');
  await page.goto(`${BASE}/maintenance`, { waitUntil: 'load' });
  await view('maintenance');
  await screenshot('admin-maintenance');
});

test('an expired token is refused and the form says why', async () => {
  await page.click('[data-test="token-forget"]');
  await useToken(token('dash-late', 'admin', { expired: true }), 'token');
  expectEq(await text('[data-test="token-reason"]'), 'Token has expired', 'the reason shown');
});

const browser = await launchBrowser(CHROMIUM);
let passed = 0;
let failed = 0;
try {
  page = await browser.newPage();
  page.on('pageerror', (e) => console.log(`# page error: ${e.message}`));
  await seed();
  for (const [i, t] of tests.entries()) {
    try {
      await t.fn();
      passed += 1;
      console.log(`ok ${i + 1} - auth: ${t.name}`);
    } catch (err) {
      failed += 1;
      console.log(`not ok ${i + 1} - auth: ${t.name}`);
      console.log(`# ${String(err.message).split('\n').join('\n# ')}`);
      await screenshot(`failed-${i + 1}`).catch(() => {});
    }
  }
} finally {
  await browser.close();
}
console.log(`browser-auth: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
