import { X509Certificate, createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type BrowserContext } from 'playwright-core';

// A real headless browser for the OAuth login page: Debian's chromium package (`./run test`
// installs it), driven by playwright-core, which never downloads a browser of its own.

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const ARGS = [
  '--no-sandbox', // CI and containers run the tests as root, where Chromium's sandbox refuses to start
  '--disable-dev-shm-usage', // containers often have a small /dev/shm: keep shared memory in /tmp
  '--disable-gpu', // headless on a machine without a GPU: no GPU process to fail
  // No calls home: CI machines have no internet, and refused background connections only add noise.
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: ARGS });
}

/**
 * A browser whose profile is `userDataDir` and which trusts the certificate in `certFile` (the
 * started gateway's, self-signed), as a user's browser does once they have trusted their gateway.
 * What the web app's service worker needs: chromium refuses to register a worker whose script came
 * with a certificate error ("An SSL certificate error occurred when fetching the script"), and
 * `ignoreHTTPSErrors` (newContext below) only lets the page load, the error stays on the answer.
 * `--ignore-certificate-errors-spki-list` makes the verification pass for this one public key, and
 * nothing else (`--ignore-certificate-errors` would accept any certificate). A persistent context
 * rather than newContext's: chromium counts an incognito profile as a reason the app cannot be
 * installed ('in-incognito'), and a user installs it from a profile of their own.
 */
export function launchTrustingChromium(userDataDir: string, certFile: string): Promise<BrowserContext> {
  const key = new X509Certificate(readFileSync(certFile)).publicKey.export({ type: 'spki', format: 'der' });
  const spki = createHash('sha256').update(key).digest('base64');
  return chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [...ARGS, `--ignore-certificate-errors-spki-list=${spki}`],
  });
}

/** A fresh profile (cookies, storage). The gateway's certificate is self-signed: tests pass
 *  `ignoreHTTPSErrors: true` (the default here) unless they test certificate handling. */
export function newContext(browser: Browser, opts: { ignoreHTTPSErrors?: boolean } = {}): Promise<BrowserContext> {
  return browser.newContext({ ignoreHTTPSErrors: opts.ignoreHTTPSErrors ?? true });
}

/** A page of another origin than the gateway's (plain HTTP on loopback): its origin and a close. */
export async function servePage(html: string): Promise<{ origin: string; close: () => Promise<void> }> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(html);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
