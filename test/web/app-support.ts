import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';

// Helpers of the web app's browser tests: signing in through the real login page (the gateway's
// built-in client gateway-web, no consent page), axe-core in the page, and screenshots for a reviewer.

export const SCREENSHOT_DIR = path.resolve(import.meta.dirname, '../../test-output/screenshots');
export const VIEWPORTS = [
  { width: 390, height: 844 },
  { width: 1440, height: 900 },
] as const;

/** From the app's first screen through the login page back to the app. */
export async function signIn(page: Page, origin: string, user: { username: string; password: string }): Promise<void> {
  await page.goto(`${origin}/`);
  await page.waitForSelector('#username');
  await page.fill('#username', user.username);
  await page.fill('#password', user.password);
  await Promise.all([
    page.waitForURL((url) => url.pathname === '/' && !url.search.includes('code=')),
    page.click('button[value=login]'),
  ]);
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
  // Evaluated through the DevTools protocol, which the page's CSP does not govern (an injected <script> would be
  // refused).
  await page.evaluate(AXE_SOURCE);
  const found: unknown = await page.evaluate(
    `axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.length })))`,
  );
  return (found as AxeViolation[]).filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

/**
 * Screenshots of the page at a phone's and a desktop's size, as test-output/screenshots/NAME-WxH.png;
 * with `scrollTo`, that element scrolled into view at each size first.
 */
export async function screenshots(page: Page, name: string, scrollTo?: string): Promise<void> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const original = page.viewportSize();
  for (const size of VIEWPORTS) {
    await page.setViewportSize(size);
    await page.waitForTimeout(300);
    // Below the sticky header, which is taller on a phone (its links wrap to a second row).
    if (scrollTo)
      await page.evaluate(
        `document.querySelector(${JSON.stringify(scrollTo)}).scrollIntoView({ block: 'start' }); scrollBy(0, -(document.querySelector('header.top')?.offsetHeight ?? 64) - 8)`,
      );
    await page.screenshot({
      path: path.join(SCREENSHOT_DIR, `${name}-${size.width}x${size.height}.png`),
      fullPage: false,
    });
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
