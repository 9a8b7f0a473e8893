import { rmSync } from 'node:fs';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchTrustingChromium } from '../support/browser.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { addUser } from '../support/oauth.js';
import { tempDir } from '../support/temp-dir.js';
import { screenshots, seriousViolations, signIn } from './app-support.js';

// The Notifications screen in Debian's chromium against the started gateway: where the browser
// can receive pushes (a trusted certificate, so a service worker), it offers to turn them on;
// where they are blocked, it says so.
// Subscribing itself needs the browser's push service, which headless chromium here does not
// reach; the gateway's side of it is tested in test/notify/push-e2e.test.ts.

const OWNER = { username: 'owner', password: 'owner password 1' };

let t: TestGateway;
let profile = '';
let trusting: BrowserContext;
let page: Page;

beforeAll(async () => {
  t = await startTestGateway();
  await addUser(t.gw.store, OWNER.username, OWNER.password);
  profile = tempDir('eg-chromium-');
  trusting = await launchTrustingChromium(profile, t.gw.certFile);
  await trusting.grantPermissions(['notifications'], { origin: t.gw.apiUrl });
  page = trusting.pages()[0] ?? (await trusting.newPage());
}, 60_000);
afterAll(async () => {
  await trusting?.close();
  await t?.stop();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

describe('the Notifications screen', { timeout: 120_000 }, () => {
  it('offers to turn notifications on where the browser can receive them', async () => {
    await signIn(page, t.gw.apiUrl, OWNER);
    await page.click('nav >> text=Notify');
    await page.waitForURL(`${t.gw.apiUrl}/notifications`);
    const turnOn = page.locator('text=Turn on notifications in this browser');
    await turnOn.waitFor();
    await expect.poll(() => turnOn.isEnabled()).toBe(true);
    expect(await page.locator('.notice').count()).toBe(0);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'notifications');
  });

  it('says so when notifications are blocked for the gateway, and offers nothing to press', async () => {
    const cdp = await trusting.newCDPSession(page);
    await cdp.send('Browser.setPermission', {
      permission: { name: 'notifications' },
      setting: 'denied',
      origin: t.gw.apiUrl,
    });
    await page.reload();
    const notice = page.locator('.notice');
    await notice.waitFor();
    expect(await notice.textContent()).toMatch(/blocked for this gateway in the browser's settings/);
    expect(await page.locator('text=Turn on notifications in this browser').isDisabled()).toBe(true);
    await screenshots(page, 'notifications-blocked');
  });
});
