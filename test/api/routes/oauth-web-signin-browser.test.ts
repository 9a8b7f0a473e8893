import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../../support/browser.js';
import { startTestGateway, type TestGateway } from '../../support/gateway.js';
import { addUser, pkcePair } from '../../support/oauth.js';

// The web app's sign-in page in Debian's chromium, as a phone (390×844) and a desktop (1440×900)
// show it, light and dark: its style is allowed by the page's CSP (no CSP violation, the style
// applied), it fits the phone without sideways scrolling, its inputs are labelled, and it works
// by keyboard alone, landing on the app's callback with code and state. Screenshots go to
// test-output/oauth/ (git-ignored) for a reviewer to look at.

const USER = { username: 'erin', password: 'keyboard only password' };
const SHOTS = path.resolve(import.meta.dirname, '../../../test-output/oauth');

// Page expressions as strings: the test code is compiled without the DOM's types.
const ACTIVE_ID = 'document.activeElement && document.activeElement.id';

let t: TestGateway;
let browser: Browser;

beforeAll(async () => {
  t = await startTestGateway();
  await addUser(t.gw.store, USER.username, USER.password, 'viewer');
  browser = await launchChromium();
  mkdirSync(SHOTS, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
  await t?.stop();
});

function signInUrl(state: string): { url: string; callback: string } {
  const callback = `${t.gw.apiUrl}/signin/callback`;
  const query = new URLSearchParams({
    client_id: 'gateway-web',
    redirect_uri: callback,
    response_type: 'code',
    state,
    code_challenge: pkcePair().challenge,
    code_challenge_method: 'S256',
  });
  return { url: `${t.gw.apiUrl}/oauth/authorize?${query.toString()}`, callback };
}

/** Opens the page, collecting what the browser says about CSP violations. */
async function open(page: Page, url: string): Promise<string[]> {
  const violations: string[] = [];
  page.on('console', (m) => {
    if (/Content Security Policy|Refused to/i.test(m.text())) violations.push(m.text());
  });
  await page.goto(url);
  return violations;
}

describe('the sign-in page of the web app', () => {
  for (const [name, viewport] of [
    ['phone', { width: 390, height: 844 }],
    ['desktop', { width: 1440, height: 900 }],
  ] as const) {
    for (const colorScheme of ['light', 'dark'] as const) {
      it(`is styled under its CSP and fits a ${name} (${viewport.width}×${viewport.height}, ${colorScheme})`, async () => {
        const context = await browser.newContext({
          ignoreHTTPSErrors: true,
          viewport,
          colorScheme,
          deviceScaleFactor: 1,
        });
        try {
          const page = await context.newPage();
          const violations = await open(page, signInUrl('s').url);
          expect(violations).toEqual([]);
          // The style block ran: the card has its rounded border and the inputs their touch height.
          expect(await page.evaluate("getComputedStyle(document.querySelector('main')).borderTopLeftRadius")).toBe(
            '12px',
          );
          expect(
            await page.evaluate("document.querySelector('#password').getBoundingClientRect().height"),
          ).toBeGreaterThanOrEqual(44);
          expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(viewport.width);
          await page.screenshot({
            path: path.join(SHOTS, `signin-${viewport.width}x${viewport.height}-${colorScheme}.png`),
            fullPage: true,
          });

          // The error state, too.
          await page.getByLabel('Username').fill(USER.username);
          await page.getByLabel('Password').fill('wrong');
          await page.getByRole('button', { name: 'Sign in' }).click();
          await page.waitForSelector('[role=alert]');
          expect(await page.textContent('[role=alert]')).toContain('Wrong username or password');
          await page.screenshot({
            path: path.join(SHOTS, `signin-error-${viewport.width}x${viewport.height}-${colorScheme}.png`),
            fullPage: true,
          });
        } finally {
          await context.close();
        }
      });
    }
  }

  it('works by keyboard alone: typed, tabbed, entered, and back at the callback with code and state', async () => {
    const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 390, height: 844 } });
    try {
      const page = await context.newPage();
      const { url, callback } = signInUrl('kbd-state');
      await open(page, url);
      // The username field has the focus from the start (autofocus).
      expect(await page.evaluate(ACTIVE_ID)).toBe('username');
      await page.keyboard.type(USER.username);
      await page.keyboard.press('Tab');
      expect(await page.evaluate(ACTIVE_ID)).toBe('password');
      await page.keyboard.type(USER.password);
      // The request for the callback, not the page's address after it: the app there, finding no
      // sign-in of its own pending, replaces its address at once.
      const [request] = await Promise.all([
        page.waitForRequest((req) => req.url().startsWith(callback)),
        page.keyboard.press('Enter'),
      ]);
      const landed = new URL(request.url());
      expect(landed.searchParams.get('state')).toBe('kbd-state');
      expect(landed.searchParams.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(landed.searchParams.get('iss')).toBe(t.gw.apiUrl);
    } finally {
      await context.close();
    }
  });
});
