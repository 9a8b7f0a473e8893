import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, newContext } from '../support/browser.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { addUser } from '../support/oauth.js';
import { screenshots } from './app-support.js';

// RFC 9207 in the web app, in Debian's chromium against the started gateway: the answer of the
// sign-in page comes back to /signin/callback with code, state and iss. A callback whose iss names
// another server, or has none (this gateway's metadata says it always sends one), is refused with
// a sentence saying so, and its code is never sent to the token endpoint; the untouched one signs in.

const USER = { username: 'iris', password: 'issuer check password' };

let t: TestGateway;
let browser: Browser;
let context: BrowserContext;
let page: Page;
/** Every grant_type the page sent to /oauth/token. */
const tokenRequests: string[] = [];

beforeAll(async () => {
  t = await startTestGateway();
  await addUser(t.gw.store, USER.username, USER.password);
  browser = await launchChromium();
  context = await newContext(browser);
  page = await context.newPage();
  page.on('request', (req) => {
    if (req.url().endsWith('/oauth/token'))
      tokenRequests.push(new URLSearchParams(req.postData() ?? '').get('grant_type') ?? '');
  });
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await t?.stop();
});

/**
 * Signs in (or starts from the app's "Sign in" button) and returns the callback URL the browser was sent to, which it
 * does not open.
 */
async function answerOfSignIn(start: () => Promise<unknown>): Promise<URL> {
  let callback: URL | null = null;
  // The answer is a redirect of the gateway's sign-in pages (a browser's route does not see redirect
  // hops): their responses are fetched here, and one sending the browser to the callback is kept.
  await page.route('**/oauth/**', async (route) => {
    const res = await route.fetch({ maxRedirects: 0 });
    const location = res.headers()['location'];
    if (location?.includes('/signin/callback?')) {
      callback = new URL(location, route.request().url());
      // No content: the browser stays where it is, and the test opens the callback as it chooses.
      return route.fulfill({ status: 204, body: '' });
    }
    return route.fulfill({ response: res });
  });
  try {
    await start();
    const username = page.locator('#username');
    await expect
      .poll(async () => callback !== null || (await username.isVisible().catch(() => false)), { timeout: 20_000 })
      .toBe(true);
    if (callback === null) {
      await username.fill(USER.username);
      await page.fill('#password', USER.password);
      await page.click('button[value=login]');
    }
    await expect.poll(() => callback !== null, { timeout: 20_000 }).toBe(true);
    return callback as unknown as URL;
  } finally {
    await page.unroute('**/oauth/**');
  }
}

async function refusedWith(url: URL): Promise<string> {
  await page.goto(url.href);
  await page.locator('h1', { hasText: 'Sign-in did not work' }).waitFor();
  return (await page.locator('.detail').textContent()) ?? '';
}

describe('the sign-in answer names its issuer (RFC 9207)', { timeout: 60_000 }, () => {
  it('is sent by this gateway with its issuer, which its metadata names and promises', async () => {
    const metadata = (await t.request('/.well-known/oauth-authorization-server')).json() as {
      issuer: string;
      authorization_response_iss_parameter_supported: boolean;
    };
    expect(metadata.authorization_response_iss_parameter_supported).toBe(true);
    const answer = await answerOfSignIn(() => page.goto(`${t.gw.apiUrl}/`));
    expect(answer.searchParams.get('iss')).toBe(metadata.issuer);
    expect(answer.searchParams.get('code')).toBeTruthy();

    // Another server's name in iss: refused, and the code never goes to the token endpoint.
    answer.searchParams.set('iss', 'https://evil.example');
    expect(await refusedWith(answer)).toContain(
      `came from another server (https://evil.example), not this gateway (${metadata.issuer})`,
    );
    expect(tokenRequests).toEqual([]);
    expect(new URL(page.url()).pathname).toBe('/');
    await screenshots(page, 'signin-wrong-issuer');
  });

  it('refuses an answer without iss', async () => {
    const answer = await answerOfSignIn(() => page.click('button:has-text("Sign in")'));
    answer.searchParams.delete('iss');
    expect(await refusedWith(answer)).toContain('did not say which server made it');
    expect(tokenRequests).toEqual([]);
  });

  it('signs in with the answer as the gateway sent it', async () => {
    const answer = await answerOfSignIn(() => page.click('button:has-text("Sign in")'));
    await page.goto(answer.href);
    await page.locator('header.top').waitFor();
    expect(tokenRequests).toEqual(['authorization_code']);
  });
});

// Not the issuer, but the same page's start: the entry (web/src/main.tsx) imports the app's own
// file; when that file does not arrive, the page says so instead of staying blank.
describe("the app's own file", { timeout: 60_000 }, () => {
  it('that does not arrive leaves a sentence, not a blank page', async () => {
    const other = await newContext(browser);
    try {
      const blank = await other.newPage();
      await blank.route(/\/assets\/mount-[A-Z0-9]+\.js$/, (route) => route.abort('connectionreset'));
      await blank.goto(`${t.gw.apiUrl}/`);
      await expect
        .poll(() => blank.locator('#app').textContent(), { timeout: 20_000 })
        .toBe('The app could not be loaded. Reload the page to try again.');
      expect(await blank.getByRole('alert').textContent()).toBe(
        'The app could not be loaded. Reload the page to try again.',
      );
      await screenshots(blank, 'app-not-loaded');
    } finally {
      await other.close();
    }
  });
});
