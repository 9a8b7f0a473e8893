import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import type { Store } from '../../src/store/store.js';

// Helpers of the web app's browser tests: the first-party client, signing in through the real
// login page, axe-core in the page, and screenshots for a reviewer.

export const WEB_CLIENT_ID = 'gateway-web';
export const SCREENSHOT_DIR = path.resolve(import.meta.dirname, '../../test-output/screenshots');
export const VIEWPORTS = [
  { width: 390, height: 844 },
  { width: 1440, height: 900 },
] as const;

/**
 * The app's client, as the gateway registers it for its own origin (issue 15). Until the gateway
 * does so itself, the test registers it the way `edge-gateway clients add` writes clients.
 */
export function ensureWebClient(store: Store, origin: string): void {
  if (store.getOAuthClient(WEB_CLIENT_ID)) return;
  store.insertOAuthClient({
    id: WEB_CLIENT_ID,
    name: 'Edge gateway web app',
    secretHash: null,
    redirectUris: [`${origin}/signin/callback`],
    grantTypes: ['authorization_code', 'refresh_token'],
    createdAt: Date.now(),
  });
}

/** From the app's first screen through the login page (and the consent page, where the gateway still shows one) back to the app. */
export async function signIn(page: Page, origin: string, user: { username: string; password: string }): Promise<void> {
  await page.goto(`${origin}/`);
  await page.waitForSelector('#username');
  await page.fill('#username', user.username);
  await page.fill('#password', user.password);
  await page.click('button[value=login]');
  const next = await Promise.race([
    page.waitForSelector('button[value=allow]').then(() => 'consent' as const),
    page.waitForURL((url) => url.pathname === '/' && !url.search.includes('code=')).then(() => 'app' as const),
  ]);
  if (next === 'consent') await Promise.all([page.waitForURL((url) => url.origin === origin && !url.pathname.startsWith('/oauth')), page.click('button[value=allow]')]);
  await page.waitForSelector('header.top');
}

const AXE_SOURCE = readFileSync(path.resolve(import.meta.dirname, '../../node_modules/axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: number;
}

/** axe-core's serious and critical violations on the page as it is now. */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  // Evaluated through the DevTools protocol, which the page's CSP does not govern (an injected <script> would be refused).
  await page.evaluate(AXE_SOURCE);
  const found: unknown = await page.evaluate(`axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.length })))`);
  return (found as AxeViolation[]).filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

/** Screenshots of the page at a phone's and a desktop's size, as test-output/screenshots/NAME-WxH.png. */
export async function screenshots(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const original = page.viewportSize();
  for (const size of VIEWPORTS) {
    await page.setViewportSize(size);
    await page.waitForTimeout(300);
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}-${size.width}x${size.height}.png`), fullPage: false });
  }
  if (original) await page.setViewportSize(original);
}

/** Decoded frames of the page's first <video> (WebRTC and MSE alike). */
export async function videoFrames(page: Page, selector: string): Promise<number> {
  const n: unknown = await page.evaluate(`(() => {
    const v = document.querySelector(${JSON.stringify(selector)});
    if (!v) return -1;
    const q = v.getVideoPlaybackQuality ? v.getVideoPlaybackQuality().totalVideoFrames : 0;
    return Math.max(q, v.webkitDecodedFrameCount || 0);
  })()`);
  if (typeof n !== 'number') throw new Error('no frame count');
  return n;
}
