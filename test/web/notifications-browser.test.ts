import { rmSync } from 'node:fs';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchTrustingChromium } from '../support/browser.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { onlineCamera } from '../support/devices.js';
import { addUser } from '../support/oauth.js';
import { startPushReceiver, type FakeSubscription, type PushReceiver } from '../support/push-receiver.js';
import { tempDir } from '../support/temp-dir.js';
import { screenshots, seriousViolations, signIn } from './app-support.js';

// The Notifications screen in Debian's chromium against the started gateway: where the browser
// can receive pushes (a trusted certificate, so a service worker), it offers to turn them on,
// keeps the choices made and sends a test notification; where they are blocked, it says so.
// The browser's push service is the one part that cannot be here (headless chromium reaches no
// push service): the page's PushManager gives a subscription at the test's own push service
// (push-receiver.ts, RFC 8030), which checks and decrypts what the gateway sends to it as the
// real one and the browser would. The rest is the app's code, the gateway and chromium's.

const OWNER = { username: 'owner', password: 'owner password 1' };

let t: TestGateway;
let rx: PushReceiver;
let profile = '';
let trusting: BrowserContext;
let page: Page;

beforeAll(async () => {
  rx = await startPushReceiver();
  t = await startTestGateway({
    notifications: { push_hosts: [new URL(rx.origin).host], ca_file: rx.caFile, request_timeout_s: 5 },
  });
  const info = await t.request('/v1/push', { headers: await t.auth('alerts:read') });
  rx.vapidKey = (info.json() as { vapid_public_key: string }).vapid_public_key;
  t.gw.store.upsertDevice(onlineCamera('cam-front', 'Front door'));
  t.gw.store.upsertDevice(onlineCamera('cam-yard', 'Yard'));
  await addUser(t.gw.store, OWNER.username, OWNER.password);
  profile = tempDir('eg-chromium-');
  trusting = await launchTrustingChromium(profile, t.gw.certFile);
  await trusting.grantPermissions(['notifications'], { origin: t.gw.apiUrl });
  page = trusting.pages()[0] ?? (await trusting.newPage());
}, 60_000);
afterAll(async () => {
  await trusting?.close();
  await t?.stop();
  await rx?.close();
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

  it('turns on, keeps the cameras, types and quiet hours chosen, sends a test notification, and turns off', async () => {
    const sub = rx.subscribe();
    await trusting.addInitScript(standInPushManager, { endpoint: sub.endpoint, keys: sub.keys });
    await page.reload();
    const outcome = page.getByTestId('notifications-outcome');
    await page.getByText('Turn on notifications in this browser').click();
    await expect.poll(() => outcome.textContent()).toBe('Notifications are on for this browser.');
    const [mine] = t.gw.store.pushSubscriptionsOf(OWNER.username);
    expect(mine).toMatchObject({ endpoint: sub.endpoint, ...sub.keys, devices: null, types: ['human', 'vehicle'] });

    // Only the front door; people, vehicles and motion; quiet from 23:00 to 06:30.
    await page.getByLabel('All cameras, also ones added later').uncheck();
    await page.getByLabel('Front door').check();
    await page.getByLabel('Motion').check();
    await page.getByLabel('No notifications between').check();
    await page.getByLabel('From').fill('23:00');
    await page.getByLabel('to', { exact: true }).fill('06:30');
    await page.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => outcome.textContent()).toBe('Saved.');
    expect(t.gw.store.getPushSubscription(mine!.id)).toMatchObject({
      devices: ['cam-front'],
      types: ['human', 'vehicle', 'motion'],
      quietHours: { start: 23 * 60, end: 6 * 60 + 30 },
    });
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'notifications-on');

    // What the page shows after a reload is what the gateway kept.
    await page.reload();
    await page.getByLabel('Front door').waitFor();
    expect(await page.getByLabel('All cameras, also ones added later').isChecked()).toBe(false);
    expect(await page.getByLabel('Front door').isChecked()).toBe(true);
    expect(await page.getByLabel('Yard').isChecked()).toBe(false);
    expect(await page.getByLabel('Motion').isChecked()).toBe(true);
    expect(await page.getByLabel('Camera offline').isChecked()).toBe(false);
    expect(await page.getByLabel('From').inputValue()).toBe('23:00');

    // A test notification: signed with the gateway's key, encrypted for this browser's keys.
    await page.getByRole('button', { name: 'Send a test notification' }).click();
    await expect.poll(() => outcome.textContent()).toBe('A test notification is on its way.');
    const [pushed] = await rx.waitFor(sub, 1);
    expect(pushed!.problem).toBeNull();
    expect(pushed!.payload).toMatchObject({ title: expect.any(String), url: expect.stringMatching(/^\//) });

    // No type at all cannot be saved: the form says why.
    for (const type of ['Person', 'Vehicle', 'Motion']) await page.getByLabel(type).uncheck();
    expect(await page.getByText('Choose at least one, or turn notifications off below.').isVisible()).toBe(true);
    expect(await page.getByRole('button', { name: 'Save' }).isDisabled()).toBe(true);
    await page.getByLabel('Person').check();

    await page.getByRole('button', { name: 'Turn off in this browser' }).click();
    await expect.poll(() => outcome.textContent()).toBe('Notifications are off for this browser.');
    expect(t.gw.store.pushSubscriptionsOf(OWNER.username)).toEqual([]);
    await page.getByText('Turn on notifications in this browser').waitFor();
  });

  it("opens a notification's event: marked and scrolled to in the list, or shown above it when older than its page", async () => {
    const start = Date.now() - 3_600_000;
    for (let n = 1; n <= 35; n++)
      t.gw.store.insertAlert({
        id: `alr_open_${n}`,
        deviceId: 'cam-front',
        type: n % 2 === 0 ? 'human' : 'vehicle',
        message: `${n % 2 === 0 ? 'Person' : 'Vehicle'} at Front door (${n})`,
        createdAt: start + n * 60_000,
      });
    const opened = page.locator('.alert.opened');
    // As a notification's address names it (src/notify/payload.ts eventUrl).
    await page.goto(`${t.gw.apiUrl}/events?camera=cam-front&alert=alr_open_20`);
    await opened.waitFor();
    expect(await opened.getAttribute('data-alert-id')).toBe('alr_open_20');
    expect(await opened.getAttribute('aria-current')).toBe('true');
    expect(await page.locator('[aria-current=true]').count()).toBe(1);
    await expect.poll(() => opened.evaluate(inView)).toBe(true);
    expect(await page.getByText('The event you opened').count()).toBe(0);
    await screenshots(page, 'events-opened', '.alert.opened');

    // Older than the first page (30): fetched and shown above the list.
    await page.goto(`${t.gw.apiUrl}/events?camera=cam-front&alert=alr_open_2`);
    await page.getByText('The event you opened').waitFor();
    expect(await opened.getAttribute('data-alert-id')).toBe('alr_open_2');
    expect(await opened.locator('.message').textContent()).toBe('Person at Front door (2)');
    expect(await page.locator('[data-testid=alert]').count()).toBe(31);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'events-opened-older', '.opened-event');

    // One that is gone (its retention passed): said, and the list shown as always.
    await page.goto(`${t.gw.apiUrl}/events?camera=cam-front&alert=alr_gone`);
    await page.getByText('That event is no longer on the gateway (its retention has passed).').waitFor();
    expect(await page.locator('[data-testid=alert]').count()).toBe(30);
    expect(await opened.count()).toBe(0);
  });

  it('says so when notifications are blocked for the gateway, and offers nothing to press', async () => {
    const cdp = await trusting.newCDPSession(page);
    await cdp.send('Browser.setPermission', {
      permission: { name: 'notifications' },
      setting: 'denied',
      origin: t.gw.apiUrl,
    });
    await page.goto(`${t.gw.apiUrl}/notifications`);
    const notice = page.locator('.notice');
    await notice.waitFor();
    expect(await notice.textContent()).toMatch(/blocked for this gateway in the browser's settings/);
    expect(await page.locator('text=Turn on notifications in this browser').isDisabled()).toBe(true);
    await screenshots(page, 'notifications-blocked');
  });
});

/** Whether the element is within the window (run in the page). */
function inView(el: { getBoundingClientRect(): { top: number; bottom: number } }): boolean {
  const r = el.getBoundingClientRect();
  const { innerHeight } = globalThis as unknown as { innerHeight: number };
  return r.top >= 0 && r.bottom <= innerHeight;
}

/**
 * The browser's push service, stood in for in the page (run before the app's code): subscribing
 * gives a subscription at the test's push service, kept in localStorage across reloads as the
 * browser keeps its own; unsubscribing ends it.
 */
function standInPushManager(sub: Pick<FakeSubscription, 'endpoint' | 'keys'>): void {
  const KEY = 'stand-in-push-subscription';
  const bytes = (text: string) =>
    Uint8Array.from(atob(text.replace(/-/g, '+').replace(/_/g, '/')), (c) => c.charCodeAt(0)).buffer;
  const subscription = (serverKey: string) => ({
    endpoint: sub.endpoint,
    expirationTime: null,
    options: { userVisibleOnly: true, applicationServerKey: bytes(serverKey) },
    getKey: (name: 'p256dh' | 'auth') => bytes(sub.keys[name]),
    toJSON: () => ({ endpoint: sub.endpoint, expirationTime: null, keys: sub.keys }),
    unsubscribe: () => {
      localStorage.removeItem(KEY);
      return Promise.resolve(true);
    },
  });
  const toBase64Url = (key: ArrayBuffer | ArrayBufferView) => {
    const view =
      key instanceof ArrayBuffer ? new Uint8Array(key) : new Uint8Array(key.buffer, key.byteOffset, key.byteLength);
    return btoa(String.fromCharCode(...view))
      .replace(/\+/g, '-')
      .replace(/\//g, '_')
      .replace(/=+$/, '');
  };
  // The page's globals, typed here (the tests are built without the DOM's types).
  const { PushManager } = globalThis as unknown as {
    PushManager: {
      prototype: {
        subscribe(options?: { applicationServerKey?: ArrayBuffer | ArrayBufferView | string | null }): Promise<unknown>;
        getSubscription(): Promise<unknown>;
      };
    };
  };
  PushManager.prototype.subscribe = function (options) {
    const key = options?.applicationServerKey;
    if (!key || typeof key === 'string') return Promise.reject(new Error('the stand-in wants the key as bytes'));
    localStorage.setItem(KEY, toBase64Url(key));
    return Promise.resolve(subscription(toBase64Url(key)));
  };
  PushManager.prototype.getSubscription = function () {
    const key = localStorage.getItem(KEY);
    return Promise.resolve(key === null ? null : subscription(key));
  };
}
