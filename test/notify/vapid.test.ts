import { createECDH, randomBytes } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { decrypt } from 'http_ece';
import { decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { openVapidKeys, PushEncoder } from '../../src/notify/vapid.js';
import { SecretBox } from '../../src/platform/secret-box.js';
import { vapidKeyOf } from '../support/push-receiver.js';
import { tempDir } from '../support/temp-dir.js';

// The gateway's VAPID keys (made once, sealed at rest) and a push's request: its VAPID header
// verifies against the public key, and its body decrypts with the subscription's keys (RFC 8291).

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('VAPID keys', () => {
  it('are made on first use, kept sealed, and the same at the next start', () => {
    const dir = tempDir('eg-vapid-');
    dirs.push(dir);
    const box = SecretBox.openInDir(dir);
    const keys = openVapidKeys(dir, box);
    expect(Buffer.from(keys.publicKey, 'base64url')).toHaveLength(65);
    expect(Buffer.from(keys.publicKey, 'base64url')[0]).toBe(4);
    const file = readFileSync(path.join(dir, 'push-vapid.key'), 'utf8');
    expect(file).toMatch(/^v1\./);
    expect(file).not.toContain(keys.privateKey);
    expect(openVapidKeys(dir, SecretBox.openInDir(dir))).toEqual(keys);
    // Another data_dir's key does not open it.
    expect(() => openVapidKeys(dir, SecretBox.fromKey(randomBytes(32)))).toThrow(/does not open/);
  });
});

describe('a push request', () => {
  it('is encrypted for the subscription, with a VAPID JWT for the push service and the headers asked for', async () => {
    const dir = tempDir('eg-vapid-');
    dirs.push(dir);
    const keys = openVapidKeys(dir, SecretBox.openInDir(dir));
    let now = Date.UTC(2026, 5, 1);
    const encoder = new PushEncoder(keys, 'mailto:owner@example.org', () => now);
    const browser = createECDH('prime256v1');
    browser.generateKeys();
    const auth = randomBytes(16).toString('base64url');
    const target = {
      endpoint: 'https://push.example:8443/sub/1',
      p256dh: browser.getPublicKey('base64url'),
      auth,
    };
    const req = encoder.request(target, '{"title":"Person at Front door"}', {
      ttlS: 3599.7,
      topic: 'abc',
      urgency: 'high',
    });
    expect(req.headers).toMatchObject({
      TTL: '3599',
      Topic: 'abc',
      Urgency: 'high',
      'Content-Encoding': 'aes128gcm',
      'Content-Type': 'application/octet-stream',
      'Content-Length': String(req.body.length),
    });
    expect(decrypt(req.body, { version: 'aes128gcm', privateKey: browser, authSecret: auth }).toString()).toBe(
      '{"title":"Person at Front door"}',
    );

    const m = /^vapid t=([^,]+), k=(.+)$/.exec(req.headers.Authorization ?? '');
    expect(m?.[2]).toBe(keys.publicKey);
    const key = await vapidKeyOf(keys.publicKey);
    const jwt = m![1]!;
    expect(decodeProtectedHeader(jwt).alg).toBe('ES256');
    const { payload } = await jwtVerify(jwt, key, {
      audience: 'https://push.example:8443',
      currentDate: new Date(now),
    });
    expect(payload.sub).toBe('mailto:owner@example.org');
    expect(payload.exp! * 1000 - now).toBeLessThanOrEqual(24 * 3600_000);

    // One JWT per push service is reused for a while, then signed anew.
    const again = encoder.request(target, 'x', { ttlS: 60, topic: 'abc', urgency: 'normal' });
    expect(again.headers.Authorization).toBe(req.headers.Authorization);
    now += 2 * 3600_000;
    const later = encoder.request(target, 'x', { ttlS: 60, topic: 'abc', urgency: 'normal' });
    expect(decodeJwt(later.headers.Authorization!.slice(8).split(',')[0]!).exp).toBeGreaterThan(payload.exp!);
  });
});
