// What the browser suites share: Chromium started the same way, assertions, polling and the
// HS256 tokens the authenticated brokers accept.
import puppeteer from 'puppeteer-core';
import { createHmac } from 'node:crypto';

// Debian's Chromium at executablePath, headless, at the size the screenshots are taken.
export const launchBrowser = (executablePath) =>
  puppeteer.launch({
    executablePath,
    headless: true,
    args: ['--no-sandbox', '--headless=new', '--disable-gpu', '--disable-dev-shm-usage', '--window-size=1400,1000'],
    defaultViewport: { width: 1400, height: 1000 },
  });

// Throws naming `what` unless actual and expected are equal (as JSON: values, arrays, objects).
export function expectEq(actual, expected, what) {
  if (JSON.stringify(actual) !== JSON.stringify(expected)) throw new Error(`${what}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
}

// Polls fn every 200 ms until it returns a truthy value (that value); throws after `ms`.
export async function until(what, fn, ms = 20000) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const v = await fn();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const b64url = (s) => Buffer.from(s).toString('base64url');

// An HS256 JWT of `claims` signed with `secret`.
export function hs256(secret, claims) {
  const input = `${b64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }))}.${b64url(JSON.stringify(claims))}`;
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
}
