import { createECDH } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  base64UrlToBytes,
  bytesToBase64Url,
  notificationOf,
  notificationTarget,
  readSubscription,
  supportOf,
  vapidKeyBytes,
  type PushFacts,
} from '../../web/src/push.js';
import { ALERT_PUSH as ALERT } from './push-fixtures.js';

// The pure parts of the app's push notifications (web/src/push.ts): what the service worker shows
// for a message and where a click on it goes, and what the page needs to subscribe.

describe('notificationOf', () => {
  it('shows an alert with its camera as the tag, its picture, its time and where to go', () => {
    expect(notificationOf(ALERT)).toEqual({
      title: 'Person at Front door',
      options: {
        body: 'Seen at 14:02',
        icon: '/icons/icon-192.png',
        badge: '/icons/badge-96.png',
        image: 'data:image/jpeg;base64,/9j/4AAQ',
        tag: 'dev_front',
        renotify: true,
        timestamp: Date.parse('2025-06-01T14:02:00.000Z'),
        data: { url: '/events?camera=dev_front', alert_id: 'alr_1' },
      },
    });
  });

  it('leaves out what is missing or not what it should be', () => {
    const { options } = notificationOf({
      title: 'Motion',
      image: 'https://elsewhere.example/picture.jpg',
      created_at: 'yesterday',
      device_id: '',
      url: 'https://elsewhere.example/',
    });
    expect(options).toEqual({
      body: '',
      icon: '/icons/icon-192.png',
      badge: '/icons/badge-96.png',
      data: { url: '/' },
    });
  });

  it("shows the app's own notification for a message without a title, or not JSON at all (null)", () => {
    const generic = {
      title: 'Edge gateway',
      options: {
        body: 'Something happened at the gateway. Open the app to see it.',
        icon: '/icons/icon-192.png',
        badge: '/icons/badge-96.png',
        data: { url: '/events' },
      },
    };
    for (const payload of [null, 'text', 42, [], {}, { ...ALERT, title: '  ' }, { ...ALERT, title: 7 }])
      expect(notificationOf(payload), JSON.stringify(payload)).toEqual(generic);
  });
});

describe('notificationTarget', () => {
  it("goes to the app's screens only", () => {
    expect(notificationTarget({ url: '/events?camera=dev_1' })).toBe('/events?camera=dev_1');
    expect(notificationTarget({ url: '/cameras/dev_1#top' })).toBe('/cameras/dev_1#top');
    expect(notificationTarget({ url: '/' })).toBe('/');
  });

  it("sends anything else to the start: another origin however written, the gateway's own paths, no url", () => {
    for (const url of [
      'https://evil.example/',
      '//evil.example/',
      '/\\evil.example/',
      '/\t/evil.example/',
      '/\n/evil.example/',
      'javascript:alert(1)',
      'events',
      '',
      '/v1/devices',
      '/%2e%2e/v1/devices',
      '/oauth/authorize?client_id=x',
      '/signin/callback?code=x',
      '/\t/[',
    ])
      expect(notificationTarget({ url }), JSON.stringify(url)).toBe('/');
    for (const data of [null, undefined, 'x', {}, { url: 5 }]) expect(notificationTarget(data)).toBe('/');
  });
});

describe('base64url', () => {
  it('reads what it writes, with or without padding', () => {
    const bytes = new Uint8Array([0, 1, 2, 250, 251, 252, 253, 254, 255]);
    for (let n = 0; n <= bytes.length; n++) {
      const part = bytes.slice(0, n);
      const text = bytesToBase64Url(part);
      expect(text).toMatch(/^[A-Za-z0-9_-]*$/);
      expect([...base64UrlToBytes(text)]).toEqual([...part]);
      expect([...base64UrlToBytes(text.padEnd(Math.ceil(text.length / 4) * 4, '='))]).toEqual([...part]);
    }
    expect(bytesToBase64Url(new Uint8Array([251, 255]))).toBe('-_8');
  });

  it('refuses base64 (+ /), other characters and impossible lengths', () => {
    for (const text of ['+/8', 'ab c', 'abcde', 'ab=c', 'é']) expect(() => base64UrlToBytes(text), text).toThrow();
  });
});

describe('vapidKeyBytes', () => {
  it('takes an uncompressed P-256 public key, as the gateway gives it', () => {
    const ecdh = createECDH('prime256v1');
    ecdh.generateKeys();
    const key = ecdh.getPublicKey();
    expect([...vapidKeyBytes(key.toString('base64url'))]).toEqual([...key]);
  });

  it('refuses anything else, with a sentence', () => {
    const ecdh = createECDH('prime256v1');
    ecdh.generateKeys();
    expect(() => vapidKeyBytes(ecdh.getPublicKey(undefined, 'compressed').toString('base64url'))).toThrow(
      'The push key is not a P-256 public key.',
    );
    expect(() => vapidKeyBytes('not a key!')).toThrow('The push key is not base64url.');
  });
});

describe('readSubscription', () => {
  const json = {
    endpoint: 'https://push.example/send/abc',
    expirationTime: null,
    keys: { p256dh: 'BPub', auth: 'c2VjcmV0' },
  };

  it('gives the endpoint, the expiry and both keys', () => {
    expect(readSubscription(json)).toEqual(json);
    expect(readSubscription({ ...json, expirationTime: 1_700_000_000_000 })?.expirationTime).toBe(1_700_000_000_000);
  });

  it('refuses a subscription a push could not be sent to', () => {
    for (const bad of [
      null,
      {},
      { ...json, endpoint: 'http://push.example/send/abc' },
      { ...json, endpoint: 'not a url' },
      { ...json, keys: { p256dh: 'BPub' } },
      { ...json, keys: { p256dh: '', auth: 'x' } },
      { endpoint: json.endpoint },
    ])
      expect(readSubscription(bad), JSON.stringify(bad)).toBeNull();
  });
});

describe('supportOf', () => {
  const CHROME = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/139.0 Safari/537.36';
  const IPHONE =
    'Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 Version/18.0 Mobile Safari/604.1';
  const IPAD = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 Version/18.0 Safari/605.1.15';
  const ok: PushFacts = {
    secureContext: true,
    serviceWorker: true,
    pushManager: true,
    notification: true,
    permission: 'default',
    userAgent: CHROME,
    maxTouchPoints: 0,
    standalone: undefined,
  };

  it('says ok where a browser has it all and the user has not refused', () => {
    expect(supportOf(ok)).toBe('ok');
    expect(supportOf({ ...ok, permission: 'granted' })).toBe('ok');
  });

  it('says why not otherwise', () => {
    expect(supportOf({ ...ok, permission: 'denied' })).toBe('denied');
    expect(supportOf({ ...ok, serviceWorker: false, pushManager: false })).toBe('no-service-worker');
    expect(supportOf({ ...ok, secureContext: false })).toBe('no-service-worker');
    expect(supportOf({ ...ok, pushManager: false })).toBe('no-push');
    expect(supportOf({ ...ok, notification: false })).toBe('no-push');
  });

  it('tells an iPhone or iPad outside an installed app to install it', () => {
    const safari = { ...ok, pushManager: false, notification: false, standalone: false };
    expect(supportOf({ ...safari, userAgent: IPHONE, maxTouchPoints: 5 })).toBe('ios-not-installed');
    // iPadOS says it is a Mac; its touch screen tells it apart.
    expect(supportOf({ ...safari, userAgent: IPAD, maxTouchPoints: 5 })).toBe('ios-not-installed');
    expect(supportOf({ ...safari, userAgent: IPAD, maxTouchPoints: 0 })).toBe('no-push');
    // Installed, on an iOS without web push (before 16.4): nothing to do about it.
    expect(supportOf({ ...safari, userAgent: IPHONE, maxTouchPoints: 5, standalone: true })).toBe('no-push');
    // Installed on a recent one: push is there.
    expect(supportOf({ ...ok, userAgent: IPHONE, maxTouchPoints: 5, standalone: true })).toBe('ok');
  });
});
