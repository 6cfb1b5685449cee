// The dashboard in a real browser: seeds known data through the broker's HTTP API, then
// drives Debian's headless chromium (puppeteer-core, pointed at the system browser) through
// every view and checks that it shows that data, that no API answer failed (status >= 400)
// and that nothing was logged as an error. Includes a seek from the group view and a requeue
// from the dead-letter view, each checked through the API afterwards. One screenshot per
// view goes to $SCREENSHOTS. Output: "ok N - name" / "not ok N - name" lines and
// "browser: N passed, N failed".
//   QUEEN_URL=http://127.0.0.1:PORT CHROMIUM=/usr/bin/chromium SCREENSHOTS=DIR node suite.mjs
import { expectEq, launchBrowser, until } from './support.mjs';
import path from 'node:path';

const BASE = process.env.QUEEN_URL;
const SHOTS = process.env.SCREENSHOTS;
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
if (!BASE || !SHOTS) throw new Error('QUEEN_URL and SCREENSHOTS must be set');

const ORDERS = 'dash-orders';
const AUDIT = 'dash-audit';
const LEASES = 'dash-leases';
const GROUP = 'billing';
const TRACE = 'checkout-42';
const ERROR_TEXT = 'card declined: known error';
const FRAUD = 'fraud';
const FRAUD_ERROR = 'suspicious';
const STREAM = 'dash-counts';
const STREAM_SOURCE = 'dash-stream-in';
const STREAM_SINK = 'dash-stream-out';

// ---- the API, from Node ----------------------------------------------------------------

// One request to the broker; throws unless the status is one of `ok`.
async function call(method, p, body, ok = [200, 201, 204]) {
  const res = await fetch(BASE + p, {
    method,
    headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!ok.includes(res.status)) throw new Error(`${method} ${p} → ${res.status} ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : null;
}

// Polls fn until it returns a truthy value (its value), or throws after `ms`.

// Throws naming `what` unless actual === expected.

// The known data: two queues, four partitions (dash-orders' Default stays empty), ten
// messages; group billing commits order-1 and order-2 and dead-letters order-3; queue mode
// consumes dash-audit whole, and group fraud dead-letters audit-1 and audit-2; one named
// trace on order-1.
async function seed() {
  await call('POST', '/api/v1/configure', { queue: ORDERS, namespace: 'shop', task: 'payments', options: { retryLimit: 1 } });
  const items = [1, 2, 3, 4, 5].map((n) => ({ queue: ORDERS, partition: 'p1', transactionId: `order-${n}`, payload: { order: n, item: `book-${n}` } }));
  items.push(...[6, 7].map((n) => ({ queue: ORDERS, partition: 'p2', transactionId: `order-${n}`, payload: { order: n } })));
  items.push(...[1, 2, 3].map((n) => ({ queue: AUDIT, transactionId: `audit-${n}`, payload: { audit: n } })));
  await call('POST', '/api/v1/push', { items });

  const popped = await call('GET', `/api/v1/pop/queue/${ORDERS}/partition/p1?batch=3&consumerGroup=${GROUP}`);
  expectEq(popped.messages.length, 3, 'billing pop');
  const [m1, m2, m3] = popped.messages;
  const ack = (m, status, error) =>
    call('POST', '/api/v1/ack', { transactionId: m.transactionId, partitionId: m.partitionId, leaseId: m.leaseId, consumerGroup: GROUP, status, error });
  await ack(m1, 'completed');
  await ack(m2, 'completed');
  const dead = await ack(m3, 'dlq', ERROR_TEXT);
  if (!dead.success) throw new Error(`dlq ack failed: ${JSON.stringify(dead)}`);

  const audit = await call('GET', `/api/v1/pop/queue/${AUDIT}?batch=3`);
  expectEq(audit.messages.length, 3, 'audit pop');
  await call('POST', '/api/v1/ack/batch', {
    acknowledgments: audit.messages.map((m) => ({ transactionId: m.transactionId, partitionId: m.partitionId, leaseId: m.leaseId, status: 'completed' })),
  });

  const fraud = await call('GET', `/api/v1/pop/queue/${AUDIT}?batch=2&consumerGroup=${FRAUD}`);
  expectEq(fraud.messages.length, 2, 'fraud pop');
  await call('POST', '/api/v1/ack/batch', {
    consumerGroup: FRAUD,
    acknowledgments: fraud.messages.map((m) => ({ transactionId: m.transactionId, partitionId: m.partitionId, leaseId: m.leaseId, status: 'dlq', error: FRAUD_ERROR })),
  });

  await call('POST', '/api/v1/traces', { transactionId: 'order-1', partitionId: m1.partitionId, consumerGroup: GROUP, eventType: 'processed', data: { step: 'charged' }, traceNames: [TRACE] });

  // Counts come from the snapshot and the per-minute flush: wait until both have them. A
  // refresh is skipped while the broker's own one runs, which may have started before the last
  // ack: refresh until one runs, and wait for a snapshot with nothing left processing.
  await until('a stats refresh that ran', async () => !(await call('POST', '/api/v1/stats/refresh')).skipped);
  await until('the snapshot and the activity flush', async () => {
    const o = await call('GET', '/api/v1/resources/overview');
    return o.statsAge >= 0 && o.messages.total === 10 && o.messages.pending === 5 && o.messages.processing === 0 &&
      o.messages.completed === 5 && o.messages.deadLetter === 3;
  });
  await until('the group in the snapshot', async () => (await call('GET', '/api/v1/consumer-groups')).some((g) => g.name === GROUP && g.queueName === ORDERS));
  return { partitionId: m1.partitionId };
}

// ---- the browser -----------------------------------------------------------------------

let page;
let problems = [];
let shot = 0;

// Loads a path as a new page (the broker answers it with the dashboard) and waits for its view.
async function visit(p, view, expectError = false) {
  await page.goto(BASE + p, { waitUntil: 'load' });
  await loaded(view, expectError);
}

// Waits until the view `name` has rendered (or, with expectError, failed); fails with the
// banner's text when the outcome is the other one.
async function loaded(name, expectError = false) {
  await page.waitForSelector(`#view[data-view="${name}"][data-loaded]`, { timeout: 15000 });
  const state = await page.$eval('#view', (el) => el.dataset.loaded);
  if (state !== (expectError ? 'error' : 'true')) throw new Error(`view ${name} ended "${state}": ${await bannerText()}`);
}

// Clicks an in-app link by its text and waits for the view it leads to.
async function follow(text, view, scope = '#app') {
  const links = await page.$$(`${scope} a[data-link]`);
  for (const a of links) {
    if ((await a.evaluate((el) => el.textContent.trim())) === text) {
      await a.click();
      return loaded(view);
    }
  }
  throw new Error(`no link "${text}" in ${scope}`);
}

// The error banner's text, "" while it is hidden.
async function bannerText() {
  return page.$eval('[data-test="error"]', (el) => (el.hidden ? '' : el.textContent));
}

// The trimmed text of the first element matching sel.
const text = (sel) => page.$eval(sel, (el) => el.textContent.trim());

// The cells of the row of table[data-test=name] whose text contains `key`.
async function row(name, key) {
  const rows = await page.$$eval(`table[data-test="${name}"] tbody tr`, (trs) => trs.map((tr) => [...tr.cells].map((td) => td.textContent.trim())));
  const found = rows.find((cells) => cells.some((c) => c.includes(key)));
  if (!found) throw new Error(`no row with "${key}" in ${name}: ${JSON.stringify(rows)}`);
  return found;
}

// The number of body rows of table[data-test=name].
const rowCount = (name) => page.$$eval(`table[data-test="${name}"] tbody tr`, (trs) => trs.length);

// Clicks a button (a selector or an element handle), waits for the notice it leads to, and
// returns its text; throws with the error banner's text instead when that shows.
async function clickAndNotice(target) {
  await page.evaluate(() => { document.querySelector('[data-test="notice"]').hidden = true; });
  if (typeof target === 'string') await page.click(target);
  else await target.click();
  await page.waitForFunction(() => {
    const n = document.querySelector('[data-test="notice"]');
    const e = document.querySelector('[data-test="error"]');
    return !n.hidden || !e.hidden;
  }, { timeout: 15000 });
  const err = await bannerText();
  if (err) throw new Error(err);
  return text('[data-test="notice"]');
}

// Saves the whole page as SHOTS/NN-name.png, numbered in the order taken.
async function screenshot(name) {
  shot += 1;
  await page.screenshot({ path: path.join(SHOTS, `${String(shot).padStart(2, '0')}-${name}.png`), fullPage: true });
}

// ---- the tests -------------------------------------------------------------------------

const tests = [];
// expectsError: the test provokes a failed call and checks that it is shown (expectShownError).
const test = (name, fn, { expectsError = false } = {}) => tests.push({ name, fn, expectsError });
let known;

test('overview shows the cluster counts and charts', async () => {
  await visit('/', 'overview');
  const stat = (k) => text(`[data-stat="${k}"]`);
  expectEq(await stat('queues'), '2', 'queues');
  expectEq(await stat('partitions'), '4', 'partitions');
  expectEq(await stat('total'), '10', 'messages pushed');
  expectEq(await stat('pending'), '5', 'pending');
  expectEq(await stat('processing'), '0', 'processing');
  expectEq(await stat('completed'), '5', 'completed');
  expectEq(await stat('dead-letters'), '3', 'dead letters');
  await page.waitForSelector('[data-chart="throughput"] svg polyline, [data-chart="throughput"] svg circle', { timeout: 10000 });
  const status = await call('GET', '/api/v1/status');
  expectEq(status.throughput.reduce((n, r) => n + r.ingested, 0), 10, 'pushed in the last hour, through the API');
  const legend = await text('[data-chart="throughput"] .legend');
  if (!legend.includes(`pushed: ${status.throughput[0].ingested}`)) throw new Error(`throughput legend: ${legend}`);
  await screenshot('overview');
});

test('queues list depth, partitions and rates', async () => {
  await follow('Queues', 'queues', 'nav');
  // Consumer lag: billing lags 4 messages on dash-orders, fraud 1 on dash-audit.
  const orders = await row('queues', ORDERS);
  expectEq(orders.slice(0, 7).join('|'), `${ORDERS}|shop|payments|3|7|4|0`, 'dash-orders row');
  if (!orders[7].startsWith('4 · ')) throw new Error(`dash-orders consumer lag: ${orders[7]}`);
  const audit = await row('queues', AUDIT);
  expectEq(audit.slice(0, 7).join('|'), `${AUDIT}|||1|3|1|0`, 'dash-audit row (fraud has audit-3 to go)');
  if (!audit[7].startsWith('1 · ')) throw new Error(`dash-audit consumer lag: ${audit[7]}`);
  expectEq(await text('[data-test="page-range"]'), '1–2 of 2', 'page range');
  await screenshot('queues');
});

test("a queue's partitions", async () => {
  await follow(ORDERS, 'queue', 'table[data-test="queues"]');
  expectEq(await text('[data-test="queue-name"]'), ORDERS, 'heading');
  expectEq(await text('[data-stat="q-total"]'), '7', 'total');
  expectEq(await text('[data-stat="q-dead-letters"]'), '1', 'dead letters');
  const p1 = await row('partitions', 'p1');
  expectEq([p1[0], p1[2], p1[3], p1[6]].join('|'), 'p1|5|2|1', 'p1: total, pending, dead letters');
  const p2 = await row('partitions', 'p2');
  expectEq([p2[0], p2[2], p2[3]].join('|'), 'p2|2|2', 'p2: total, pending');
  expectEq(await rowCount('partitions'), 3, 'partitions (Default, p1, p2)');
  await screenshot('queue-partitions');
});

test('message browser lists statuses, detail shows payload and groups', async () => {
  await visit(`/messages?queue=${ORDERS}`, 'messages');
  expectEq(await rowCount('messages'), 7, 'messages of dash-orders');
  expectEq((await row('messages', 'order-3'))[4], 'dead_letter', 'order-3 status');
  expectEq((await row('messages', 'order-1'))[4], 'completed', 'order-1 status');
  expectEq((await row('messages', 'order-5'))[4], 'pending', 'order-5 status');
  expectEq((await row('messages', 'order-1'))[5], '1 / 1', 'order-1 groups done');
  await screenshot('messages');
  await follow('order-1', 'message', 'table[data-test="messages"]');
  const payload = JSON.parse(await text('[data-test="payload"]'));
  expectEq(`${payload.order}|${payload.item}|${Object.keys(payload).length}`, '1|book-1|2', 'decoded payload');
  expectEq(await text('[data-field="status"]'), 'completed', 'status');
  expectEq((await row('message-groups', GROUP)).join('|').startsWith(`${GROUP}|yes`), true, 'billing consumed it');
  expectEq((await row('message-traces', 'processed'))[3], TRACE, 'trace name');
  await screenshot('message-detail');
  await visit(`/messages/${known.partitionId}/order-3`, 'message');
  expectEq(await text('[data-field="error-message"]'), ERROR_TEXT, 'dead letter error');
});

test('consumer groups with lag', async () => {
  await visit('/groups', 'groups');
  // billing has a cursor on each of the three partitions but consumed from p1 only (the
  // partitions column, Queen's `members`); p1 lags 2 (4, 5), p2 lags 2.
  const g = await row('groups', GROUP);
  expectEq([g[0], g[1], g[2], g[3], g[4], g[6]].join('|'), `${GROUP}|${ORDERS}|1|2|4|Stable`, 'billing row');
  await screenshot('groups');
});

test('seek from the group view moves the cursor', async () => {
  await visit(`/groups/${GROUP}`, 'group');
  const before = await row(`cursors-${ORDERS}`, 'p1');
  expectEq([before[1], before[2], before[3]].join('|'), '3|5|2', 'p1 committed, last, lag');
  const notice = await clickAndNotice(`section[data-queue="${ORDERS}"] [data-test="seek-end"]`);
  if (!notice.includes('to the end')) throw new Error(`notice: ${notice}`);
  const after = await row(`cursors-${ORDERS}`, 'p1');
  expectEq([after[1], after[3]].join('|'), '5|0', 'p1 after the seek, on the page');
  const api = await call('GET', `/api/v1/consumer-groups/${GROUP}`);
  const p1 = api[ORDERS].partitions.find((p) => p.partition === 'p1');
  expectEq(p1.committedOffset, 5, 'committed offset through the API');
  await screenshot('group-after-seek');
});

// The button `action` of the dead letter row whose text contains `key`.
async function rowButton(key, action) {
  const rows = await page.$$('table[data-test="dlq"] tbody tr');
  for (const r of rows) {
    if ((await r.evaluate((tr) => tr.textContent)).includes(key)) return r.$(`[data-test="${action}"]`);
  }
  throw new Error(`no dead letter row with ${key}`);
}

// Clicks a dead letter row's button and returns the notice.
const rowAction = async (key, action) => clickAndNotice(await rowButton(key, action));

test('dead letters: listed, requeued, deleted and purged from the view', async () => {
  await visit('/dlq', 'dlq');
  expectEq(await text('[data-test="dlq-total"]'), '3', 'total');
  const d = await row('dlq', 'order-3');
  expectEq([d[1], d[2], d[4], d[5]].join('|'), `${ORDERS} / p1|${GROUP}|${ERROR_TEXT}|dlq`, 'dead letter row');
  if (!d[7].includes('"order":3')) throw new Error(`payload cell: ${d[7]}`);
  expectEq((await row('dlq', 'audit-2')).slice(1, 5).join('|'), `${AUDIT} / Default|${FRAUD}|audit-2|${FRAUD_ERROR}`, 'fraud row');
  await screenshot('dlq');

  const notice = await rowAction('order-3', 'requeue');
  if (!notice.startsWith('Requeued 1 message')) throw new Error(`notice: ${notice}`);
  expectEq(await text('[data-test="dlq-total"]'), '2', 'total after the requeue');
  expectEq((await call('GET', `/api/v1/dlq?queue=${ORDERS}`)).total, 0, 'dead letters of dash-orders through the API');
  const back = await call('GET', `/api/v1/pop/queue/${ORDERS}/partition/p1?consumerGroup=${GROUP}`);
  expectEq(back.messages[0].transactionId, 'order-3', 'the requeued message pops again');
  expectEq(back.messages[0].data.order, 3, 'with its payload');
  await screenshot('dlq-after-requeue');

  const deleted = await rowAction('audit-1', 'delete');
  if (!deleted.startsWith('Deleted 1 dead letter')) throw new Error(`notice: ${deleted}`);
  const left = await call('GET', '/api/v1/dlq');
  expectEq(left.messages.map((m) => m.transactionId).join(','), 'audit-2', 'what the delete left, through the API');

  await page.evaluate(() => { document.querySelector('[data-test="notice"]').hidden = true; });
  await page.click('[data-test="purge"]');
  // The purge reloads the view: wait for the reloaded one, then read it.
  await page.waitForFunction(() => {
    const total = document.querySelector('[data-test="dlq-total"]');
    return (total && total.textContent === '0' && document.querySelector('#view').dataset.loaded === 'true') || !document.querySelector('[data-test="error"]').hidden;
  }, { timeout: 15000 });
  if (await bannerText()) throw new Error(await bannerText());
  expectEq(await text('[data-test="notice"]'), 'Purged 1 dead letter(s).', 'purge notice');
  expectEq((await call('GET', '/api/v1/dlq')).total, 0, 'dead letters through the API after the purge');
});

test('traces by name', async () => {
  await visit('/traces', 'traces');
  const t = await row('trace-names', TRACE);
  expectEq([t[0], t[1], t[2]].join('|'), `${TRACE}|1|1`, 'trace name row');
  await screenshot('traces');
  await follow(TRACE, 'trace', 'table[data-test="trace-names"]');
  const e = await row('trace-events', 'processed');
  expectEq([e[1], e[2], e[3], e[4]].join('|'), `processed|${ORDERS} / p1|order-1|${GROUP}`, 'trace event');
  if (!e[5].includes('"step":"charged"')) throw new Error(`data cell: ${e[5]}`);
  await screenshot('trace-events');
});

test('analytics over the last hour', async () => {
  // A live lease of 4 messages with 1 acknowledged, on a queue of its own: the live-leases
  // card counts its size and its acks beside the leases earlier tests left alive.
  const base = (await call('GET', '/api/v1/status')).leases;
  await call('POST', '/api/v1/push', { items: [1, 2, 3, 4].map((n) => ({ queue: LEASES, partition: 'p1', payload: { n } })) });
  const held = await call('GET', `/api/v1/pop/queue/${LEASES}?batch=4&consumerGroup=${GROUP}`);
  expectEq(held.messages.length, 4, 'leases pop');
  const m1 = held.messages[0];
  const acked = await call('POST', '/api/v1/ack', { transactionId: m1.transactionId, partitionId: m1.partitionId, leaseId: m1.leaseId, consumerGroup: GROUP, status: 'completed' });
  if (!acked.success) throw new Error(`lease ack failed: ${JSON.stringify(acked)}`);
  const leases = (await call('GET', '/api/v1/status')).leases;
  expectEq([leases.active - base.active, leases.totalBatchSize - base.totalBatchSize, leases.totalAcked - base.totalAcked].join('|'), '1|4|1', 'the new lease in /api/v1/status');
  // A flush may land while the page loads: the page shows the count read before or after it.
  const pushed = async () => (await call('GET', '/api/v1/analytics/worker-metrics')).summary.totalPushMessages;
  const before = await pushed();
  await visit('/analytics', 'analytics');
  const after = await pushed();
  const shown = await text('[data-stat="a-pushed"]');
  if (shown !== String(before) && shown !== String(after)) throw new Error(`pushed: page ${shown}, API ${before} then ${after}`);
  if (after < 10) throw new Error(`pushed ${after} < 10`);
  const orders = await row('queue-totals', ORDERS);
  expectEq(orders[0], ORDERS, 'queue row');
  if (Number(orders[1]) < 7) throw new Error(`dash-orders pushed ${orders[1]}`);
  // dash-audit: 3 pushed; popped 3 in queue mode and 2 by fraud.
  expectEq((await row('queue-totals', AUDIT)).slice(0, 3).join('|'), `${AUDIT}|3|5`, 'dash-audit pushed, popped');
  expectEq(await text('[data-stat="a-leases"]'), String(leases.active), 'live leases');
  expectEq(await text('[data-stat="a-lease-batch"]'), String(leases.totalBatchSize), 'live leases: total batch size');
  expectEq(await text('[data-stat="a-lease-acked"]'), String(leases.totalAcked), 'live leases: total acked');
  await page.waitForSelector('[data-chart="ops"] svg', { timeout: 10000 });
  await screenshot('analytics');
});

test('maintenance switches', async () => {
  await visit('/maintenance', 'maintenance');
  expectEq(await text('[data-test="push-state"]'), 'off', 'push maintenance');
  expectEq(await text('[data-test="pop-state"]'), 'off', 'pop maintenance');
  await clickAndNotice('[data-test="pop-toggle"]');
  expectEq(await text('[data-test="pop-state"]'), 'ON', 'pop maintenance on the page');
  expectEq((await call('GET', '/api/v1/system/maintenance')).popMaintenanceMode, true, 'pop maintenance through the API');
  await screenshot('maintenance-pop-on');
  await clickAndNotice('[data-test="pop-toggle"]');
  expectEq((await call('GET', '/api/v1/system/maintenance')).popMaintenanceMode, false, 'pop maintenance off again');
});

test('streams: none, then a query with its lanes, state and source lag', async () => {
  // No stream query exists before this test: the view says so.
  await follow('Streams', 'streams', 'nav');
  expectEq(await text('[data-test="streams-empty"]'), 'No stream queries yet: a streaming SDK registers one with POST /streams/v1/queries.', 'empty state');
  await screenshot('streams-empty');
  // A query over a source of its own: p1 holds 5 messages, p2 2. Its group pops p1 whole and one
  // cycle writes 3 keys (one of them twice) and acks the 2nd message: one lane, 3 state rows,
  // source lag 3 on p1 and 2 on p2.
  const reg = await call('POST', '/streams/v1/queries', { name: STREAM, source_queue: STREAM_SOURCE, sink_queue: STREAM_SINK, config_hash: 'h1' });
  expectEq(reg.fresh, true, 'registered');
  const items = [1, 2, 3, 4, 5].map((n) => ({ queue: STREAM_SOURCE, partition: 'p1', payload: { n } }));
  items.push(...[6, 7].map((n) => ({ queue: STREAM_SOURCE, partition: 'p2', payload: { n } })));
  await call('POST', '/api/v1/push', { items });
  const popped = await call('GET', `/api/v1/pop/queue/${STREAM_SOURCE}/partition/p1?batch=5&wait=false&consumerGroup=streams.${STREAM}`);
  expectEq(popped.messages.length, 5, 'stream pop');
  const acked = popped.messages[1];
  const cycle = await call('POST', '/streams/v1/cycle', {
    query_id: reg.query_id,
    partition_id: acked.partitionId,
    consumer_group: `streams.${STREAM}`,
    state_ops: [
      { type: 'upsert', key: 'even', value: { count: 1 } },
      { type: 'upsert', key: 'odd', value: { count: 1 } },
      { type: 'upsert', key: 'total', value: { count: 2 } },
      { type: 'upsert', key: 'even', value: { count: 2 } },
    ],
    ack: { transactionId: acked.transactionId, leaseId: acked.leaseId },
  });
  expectEq(cycle.success, true, `cycle ${JSON.stringify(cycle)}`);
  const api = (await call('GET', '/api/v1/resources/streams')).streams.find((q) => q.name === STREAM);
  expectEq([api.lanes, api.stateRows, api.sourceLag].join('|'), '1|3|5', 'lanes, state rows, source lag through the API');
  await visit('/stream-queries', 'streams');
  const r = await row('streams', STREAM);
  expectEq([r[0], r[1], r[2], r[3], r[5]].join('|'), `${STREAM}|${STREAM_SOURCE} → ${STREAM_SINK}|1|3|5`, 'stream row');
  expectEq(r[4], `${api.stateBytes} B`, 'state size');
  if (r[6] === '–') throw new Error(`oldest pending: ${r[6]}`);
  expectEq(await rowCount('streams'), 1, 'stream queries listed');
  await screenshot('streams');
});

test('an API error is shown, not swallowed', async () => {
  await visit('/queues/no-such-queue', 'queue', true);
}, { expectsError: true });

// ---- running them ----------------------------------------------------------------------

const browser = await launchBrowser(CHROMIUM);
let passed = 0;
let failed = 0;
try {
  page = await browser.newPage();
  page.on('response', (r) => { if (r.status() >= 400) problems.push(`${r.request().method()} ${r.url()} → ${r.status()}`); });
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console error: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('requestfailed', (r) => { if (r.failure()?.errorText !== 'net::ERR_ABORTED') problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`); });
  page.on('dialog', (d) => d.accept());
  const started = Date.now();
  known = await seed();
  console.log(`# seeded in ${Date.now() - started} ms`);
  for (const [i, t] of tests.entries()) {
    problems = [];
    const t0 = Date.now();
    try {
      await t.fn();
      if (t.expectsError) await expectShownError();
      else if (problems.length) throw new Error(`failed calls or errors: ${problems.join('; ')}`);
      else if (await bannerText()) throw new Error(`error banner: ${await bannerText()}`);
      passed += 1;
      console.log(`ok ${i + 1} - ${t.name} (${Date.now() - t0} ms)`);
    } catch (err) {
      failed += 1;
      console.log(`not ok ${i + 1} - ${t.name}`);
      console.log(`# ${String(err.message).split('\n').join('\n# ')}`);
      await screenshot(`failed-${i + 1}`).catch(() => {});
    }
  }
} finally {
  await browser.close();
}
console.log(`browser: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);

// The last test visits an unknown queue: the 404 must reach the banner with the broker's text.
async function expectShownError() {
  const banner = await bannerText();
  if (!banner.includes('404') || !banner.includes('Queue not found')) throw new Error(`banner: "${banner}"`);
  if (!problems.some((p) => p.includes('/api/v1/status/queues/no-such-queue') && p.includes('404'))) throw new Error(`the 404 was not seen: ${problems.join('; ')}`);
  await screenshot('error-shown');
}
