import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, newContext } from '../../support/browser.js';
import { startTestGateway, type TestGateway } from '../../support/gateway.js';
import { addUser, pkcePair, registerClient } from '../../support/oauth.js';

// A real browser (Debian's chromium, headless) on the real login and consent pages: what a user
// of a phone or desktop app sees. The app's side is a loopback HTTP server at its redirect URI.

const USER = { username: 'dana', password: 'browser password' };

let t: TestGateway;
let browser: Browser;
let app: Server;
let callback: string;

beforeAll(async () => {
  t = await startTestGateway();
  await addUser(t.gw.store, USER.username, USER.password);
  browser = await launchChromium();
  app = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('back in the app'));
  await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
  callback = `http://127.0.0.1:${(app.address() as AddressInfo).port}/callback`;
});
afterAll(async () => {
  await browser?.close();
  app?.close();
  await t?.stop();
});

describe('the login and consent pages in a browser', () => {
  it('signs in, consents, lands on the redirect URI with code and state; the code buys a token the API takes', async () => {
    // Registered without a port: a loopback redirect URI may use any (RFC 8252 §7.3).
    const client = registerClient(t.gw.store, {
      public: true,
      redirectUris: ['http://127.0.0.1/callback'],
      name: 'Browser test app',
    });
    const { verifier, challenge } = pkcePair();
    const state = 'browser-state-42';
    const context = await newContext(browser);
    try {
      const page = await context.newPage();
      const authorize = `${t.gw.apiUrl}/oauth/authorize?${new URLSearchParams({
        client_id: client.clientId,
        redirect_uri: callback,
        response_type: 'code',
        scope: 'devices:read',
        state,
        code_challenge: challenge,
        code_challenge_method: 'S256',
      }).toString()}`;
      await page.goto(authorize);
      expect(await page.textContent('h1')).toContain('Sign in');
      expect(await page.textContent('body')).toContain('Browser test app');
      await page.fill('#username', USER.username);
      await page.fill('#password', USER.password);
      await page.click('button[value=login]');
      await page.waitForSelector('button[value=allow]');
      expect(await page.textContent('body')).toContain('List and view device information');
      await Promise.all([page.waitForURL((url) => url.href.startsWith(callback)), page.click('button[value=allow]')]);

      const landed = new URL(page.url());
      expect(landed.searchParams.get('state')).toBe(state);
      expect(landed.searchParams.get('iss')).toBe(t.gw.apiUrl);
      const code = landed.searchParams.get('code');
      expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(await page.textContent('body')).toContain('back in the app');

      const res = await t.request('/oauth/token', {
        method: 'POST',
        body: {
          grant_type: 'authorization_code',
          client_id: client.clientId,
          code,
          redirect_uri: callback,
          code_verifier: verifier,
        },
      });
      expect(res.status, res.text).toBe(200);
      const { access_token: accessToken } = res.json() as { access_token: string };
      const devices = await t.request('/v1/devices', { headers: { authorization: `Bearer ${accessToken}` } });
      expect(devices.status).toBe(200);
      expect(devices.json()).toHaveProperty('data');
    } finally {
      await context.close();
    }
  });

  it('will not show the consent page inside a frame of another site', async () => {
    const client = registerClient(t.gw.store, { public: true, redirectUris: ['http://127.0.0.1/callback'] });
    const { challenge } = pkcePair();
    const authorize = `${t.gw.apiUrl}/oauth/authorize?${new URLSearchParams({ client_id: client.clientId, redirect_uri: callback, response_type: 'code', code_challenge: challenge, code_challenge_method: 'S256' }).toString()}`;
    const context = await newContext(browser);
    try {
      const page = await context.newPage();
      // The attacker's page, served by the "app" origin, frames a page and waits for the frame's
      // load event (which a refused frame fires too, with Chromium's error page inside).
      await page.goto(callback);
      const frameText = async (src: string): Promise<string> => {
        await page.setContent(
          `<iframe id="f" src="${src.replace(/&/g, '&amp;')}" onload="document.body.dataset.loaded = '1'"></iframe>`,
        );
        await page.waitForSelector('body[data-loaded="1"]');
        const frame = await (await page.$('#f'))?.contentFrame();
        // A string: the test code is compiled without the DOM's types.
        const text: unknown = await frame?.evaluate('document.body ? document.body.innerText : ""').catch(() => '');
        return typeof text === 'string' ? text : '';
      };
      // Control: a page that allows framing shows its text in the frame, so the check can see content.
      expect(await frameText(callback)).toContain('back in the app');
      const framed = await frameText(authorize);
      expect(framed).not.toContain('Sign in');
      expect(framed).not.toContain('Password');
    } finally {
      await context.close();
    }
  });
});
