import { pino } from 'pino';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFleet, type Fleet } from '../../src/onvif/simulator/fleet.js';
import { launchChromium, newContext } from '../support/browser.js';
import { firstOnlineDevice, startTestGateway, type TestGateway } from '../support/gateway.js';
import { addUser } from '../support/oauth.js';
import { screenshots } from './app-support.js';

// The web app by keyboard only (Tab, Shift+Tab, Enter, Space, Escape), in Debian's chromium against
// the started gateway and a simulated camera: sign in, Cameras, a camera's Live view, the reboot
// confirmation cancelled with Escape, Events (mark an alert read), Clips (start a clip). After every
// key the focused element is not <body> and shows a focus ring (its computed outline or box shadow).

const OWNER = { username: 'keys', password: 'keyboard password 1' };

let fleet: Fleet;
let t: TestGateway;
let origin = '';
let browser: Browser;
let page: Page;

interface Focused {
  /** Nothing focused: document.activeElement is <body> (or nothing). */
  lost: boolean;
  tag: string;
  text: string;
  /** Its computed style draws a ring: an outline of some width, not transparent, or a box shadow. */
  ring: boolean;
  style: string;
}

async function focused(p: Page): Promise<Focused> {
  const found: unknown = await p.evaluate(`(() => {
    const el = document.activeElement;
    if (!el || el === document.body || el === document.documentElement) return { lost: true, tag: el ? el.tagName : '', text: '', ring: false, style: '' };
    const s = getComputedStyle(el);
    const outline = s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) > 0 && !/rgba\\(.*, 0\\)$/.test(s.outlineColor) && s.outlineColor !== 'transparent';
    const shadow = s.boxShadow !== 'none' && s.boxShadow !== '';
    const text = (el.getAttribute('aria-label') || el.textContent || el.getAttribute('name') || el.id || '').trim().replace(/\\s+/g, ' ').slice(0, 60);
    return { lost: false, tag: el.tagName.toLowerCase(), text, ring: outline || shadow, style: s.outlineStyle + ' ' + s.outlineWidth + ' ' + s.outlineColor + ' | ' + s.boxShadow };
  })()`);
  return found as Focused;
}

/** Presses a key and checks the focus afterwards: on an element, with a visible ring. */
async function press(p: Page, key: string): Promise<Focused> {
  await p.keyboard.press(key);
  // Focus moves made in the next frame (a screen's heading after a route change) land first.
  await p.evaluate('new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))');
  const f = await focused(p);
  expect(f.lost, `focus lost to <body> after ${key}`).toBe(false);
  expect(f.ring, `no visible focus ring on <${f.tag}> "${f.text}" after ${key} (${f.style})`).toBe(true);
  return f;
}

/** Tabs (or Shift+Tabs) until the focused element is the one wanted, checking every stop on the way. */
async function tabTo(
  p: Page,
  wanted: (f: Focused) => boolean,
  key: 'Tab' | 'Shift+Tab' = 'Tab',
  most = 40,
): Promise<Focused> {
  const seen: string[] = [];
  for (let i = 0; i < most; i++) {
    const f = await press(p, key);
    if (wanted(f)) return f;
    seen.push(`<${f.tag}> ${f.text}`);
  }
  throw new Error(`not reached by ${key}; focus went through: ${seen.join(' → ')}`);
}

const named = (text: string | RegExp, tag?: string) => (f: Focused) =>
  (tag === undefined || f.tag === tag) && (typeof text === 'string' ? f.text === text : text.test(f.text));

beforeAll(async () => {
  fleet = await startFleet({
    count: 1,
    host: '127.0.0.1',
    basePort: 0,
    username: 'admin',
    password: 'cam-secret-8',
    discovery: null,
    rtspPort: 0,
    logger: pino({ level: 'silent' }),
  });
  t = await startTestGateway({
    cameras: [
      { name: 'Porch', onvif_url: fleet.cameras[0]!.deviceServiceUrl, username: 'admin', password: 'cam-secret-8' },
    ],
    webrtc: { bind_address: '127.0.0.1' },
    recording: { pre_roll_s: 1, post_roll_s: 2 },
  });
  origin = t.gw.apiUrl;
  await addUser(t.gw.store, OWNER.username, OWNER.password);
  await firstOnlineDevice(t);
  // An event with its clip, for the Events and Clips screens.
  await new Promise((r) => setTimeout(r, 2_000));
  fleet.cameras[0]!.trigger('human', true);
  await new Promise((r) => setTimeout(r, 1_500));
  fleet.cameras[0]!.trigger('human', false);
  browser = await launchChromium();
  page = await (await newContext(browser)).newPage();
  await page.setViewportSize({ width: 1440, height: 900 });
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await t?.stop();
  await fleet?.stop();
});

describe('the web app by keyboard only', { timeout: 120_000 }, () => {
  it('signs in on the login page with the keyboard', async () => {
    await page.goto(`${origin}/`);
    await page.waitForSelector('#username');
    // The login page puts the focus in the username field itself.
    expect(await focused(page)).toMatchObject({ lost: false, tag: 'input', ring: true });
    await page.keyboard.type(OWNER.username);
    await press(page, 'Tab');
    await page.keyboard.type(OWNER.password);
    await tabTo(page, named('Sign in', 'button'));
    await press(page, 'Shift+Tab');
    expect((await focused(page)).tag).toBe('input');
    await press(page, 'Tab');
    await Promise.all([page.waitForSelector('header.top'), page.keyboard.press('Enter')]);
    await page.locator('[data-testid=camera]').first().waitFor();
  });

  it('lands on the Cameras heading, goes back to the skip link, and opens a live view with Enter', async () => {
    // Signed in: the first screen has the focus on its heading.
    await expect.poll(async () => (await focused(page)).text).toBe('Cameras');
    expect(await focused(page)).toMatchObject({ tag: 'h1', ring: true });
    // Back through the header to the skip link (shown once focused), which leads past it again.
    const skip = await tabTo(page, named('Skip to content'), 'Shift+Tab', 8);
    expect(skip.tag).toBe('a');
    expect(await page.evaluate(`document.activeElement.getBoundingClientRect().left >= 0`)).toBe(true);
    expect(await press(page, 'Enter')).toMatchObject({ tag: 'h1', text: 'Cameras' });
    await tabTo(page, named('Porch', 'a'), 'Tab', 3);
    await press(page, 'Enter');
    await page.waitForURL((url) => url.pathname.startsWith('/cameras/'));
    // The card went with the Cameras screen: the focus is on the new screen's heading, not lost.
    expect(await focused(page)).toMatchObject({ tag: 'h1', text: 'Porch', ring: true });
    await page.locator('[data-testid=live-mode]', { hasText: /^Live/ }).waitFor({ timeout: 30_000 });
    await screenshots(page, 'keyboard-live');
  });

  it('opens the reboot confirmation with Space, cancels it with Escape, and the focus returns to the button', async () => {
    await tabTo(page, named('Reboot camera', 'button'));
    // Back and forth: Shift+Tab reaches the button before it, Tab comes back.
    expect(await press(page, 'Shift+Tab')).toMatchObject({ text: 'Set clock' });
    expect(await press(page, 'Tab')).toMatchObject({ text: 'Reboot camera' });
    await press(page, 'Space');
    await page.locator('dialog[open]').waitFor();
    expect(await page.locator('dialog[open] h2').textContent()).toBe('Reboot this camera?');
    // The safe answer has the focus, and Tab stays inside the dialog.
    expect(await focused(page)).toMatchObject({ tag: 'button', text: 'Cancel', ring: true });
    expect(await press(page, 'Tab')).toMatchObject({ text: 'Reboot' });
    await screenshots(page, 'keyboard-reboot-dialog');
    await press(page, 'Escape');
    expect(await page.locator('dialog[open]').count()).toBe(0);
    expect(await focused(page)).toMatchObject({ tag: 'button', text: 'Reboot camera', ring: true });
    expect(await page.locator('[data-testid=device-controls] .outcome').textContent()).toBe('');
  });

  it('goes to Events and marks an alert read with Enter; the focus stays on the list', async () => {
    await tabTo(page, named(/^Events\d*$/, 'a'), 'Shift+Tab');
    await press(page, 'Enter');
    await page.waitForURL(`${origin}/events`);
    expect(await focused(page)).toMatchObject({ tag: 'h1', text: 'Events' });
    const row = page.locator('[data-testid=alert].unread').first();
    await row.waitFor({ timeout: 30_000 });
    const badge = page.locator('[data-testid=unread-count]');
    await badge.waitFor();
    const before = Number(await badge.textContent());
    await tabTo(page, named('Mark as read', 'button'));
    // The button goes once the gateway has answered: the focus is looked at after that.
    await page.keyboard.press('Enter');
    await page.locator('[data-testid=alert].unread').waitFor({ state: 'detached' });
    await expect
      .poll(async () => ((await badge.count()) === 0 ? 0 : Number(await badge.textContent())))
      .toBe(before - 1);
    // Its button went with the alert's unread state: the focus moved on to the alert's clip, not to <body>.
    expect(await focused(page)).toMatchObject({ lost: false, tag: 'a', text: 'Play clip', ring: true });
    await screenshots(page, 'keyboard-events');
  });

  it('goes to Clips, starts a clip with Enter, and closes it with Space', async () => {
    await tabTo(page, named('Clips', 'a'), 'Shift+Tab');
    await press(page, 'Enter');
    await page.waitForURL((url) => url.pathname === '/clips');
    expect(await focused(page)).toMatchObject({ tag: 'h1', text: 'Clips' });
    await page.locator('[data-testid=clip]').first().waitFor({ timeout: 60_000 });
    await tabTo(page, named('Play', 'button'));
    await press(page, 'Enter');
    await page.locator('[data-testid=clip-video]').waitFor();
    await expect
      .poll(() => page.evaluate(`document.querySelector('[data-testid=clip-video]').currentTime`), { timeout: 20_000 })
      .toBeGreaterThan(0);
    expect(await focused(page)).toMatchObject({ tag: 'button', text: 'Play', ring: true });
    await screenshots(page, 'keyboard-clips');
    // Closing the player (its button goes with it) gives the focus back to the clip's Play button.
    await tabTo(page, named('Close', 'button'), 'Shift+Tab');
    await press(page, 'Space');
    expect(await page.locator('[data-testid=clip-video]').count()).toBe(0);
    expect(await focused(page)).toMatchObject({ tag: 'button', text: 'Play', ring: true });
  });
});
