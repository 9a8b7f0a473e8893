import { createECDH, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { DEFAULT_PUSH_HOSTS, readPushHost, type PushHostEntry } from '../../src/domain/push-hosts.js';
import { checkEndpoint, checkKeys, isPublicAddress } from '../../src/notify/endpoint.js';

const entries = (list: readonly string[]): PushHostEntry[] =>
  list.map((e) => {
    const read = readPushHost(e);
    if ('problem' in read) throw new Error(read.problem);
    return read.entry;
  });
const HOSTS = entries([...DEFAULT_PUSH_HOSTS, 'localhost:9443', 'push.lan', '10.1.2.3:8443']);
const problem = (endpoint: string) => {
  const r = checkEndpoint(endpoint, HOSTS);
  return r.ok ? null : r.problem;
};

describe('checkEndpoint', () => {
  it.each([
    ['https://fcm.googleapis.com/fcm/send/abc:def', false],
    ['https://updates.push.services.mozilla.com/wpush/v2/gAAAA', false],
    ['https://web.push.apple.com/QGx', false],
    ['https://wns2-by3p.notify.windows.com/w/?token=BQYAAA', false],
    ['https://a.b.notify.windows.com/w/', false],
    ['https://FCM.googleapis.com./fcm/send/x', false],
    ['https://fcm.googleapis.com:443/fcm/send/x', false],
    ['https://localhost:9443/push/1', true],
    ['https://push.lan/x', true],
    ['https://10.1.2.3:8443/x', true],
  ])('allows %s (any address: %s)', (endpoint, anyAddress) => {
    const r = checkEndpoint(endpoint, HOSTS);
    expect(r).toMatchObject({ ok: true, endpoint: { anyAddress } });
  });

  it.each([
    ['http://fcm.googleapis.com/fcm/send/x', 'endpoint must be https'],
    ['ftp://fcm.googleapis.com/x', 'endpoint must be https'],
    ['fcm.googleapis.com/fcm/send/x', 'endpoint is not a URL'],
    ['', 'endpoint is not a URL'],
    ['https://user:pw@fcm.googleapis.com/fcm/send/x', 'endpoint must not carry a user name or password'],
    ['https://user@fcm.googleapis.com/fcm/send/x', 'endpoint must not carry a user name or password'],
    ['https://fcm.googleapis.com/x#frag', 'endpoint must not have a fragment'],
    ['https://10.0.0.1/x', 'endpoint host 10.0.0.1 is a loopback, link-local or private address'],
    ['https://192.168.1.20/x', 'endpoint host 192.168.1.20 is a loopback, link-local or private address'],
    ['https://127.0.0.1:9443/x', 'endpoint host 127.0.0.1 is a loopback, link-local or private address'],
    ['https://2130706433/x', 'endpoint host 127.0.0.1 is a loopback, link-local or private address'],
    ['https://[::1]/x', 'endpoint host ::1 is a loopback, link-local or private address'],
    [
      'https://169.254.169.254/latest/meta-data',
      'endpoint host 169.254.169.254 is a loopback, link-local or private address',
    ],
    ['https://[fc00::1]/x', 'endpoint host fc00::1 is a loopback, link-local or private address'],
    ['https://[fe80::1]/x', 'endpoint host fe80::1 is a loopback, link-local or private address'],
    ['https://[::ffff:192.168.0.1]/x', 'endpoint host ::ffff:c0a8:1 is a loopback, link-local or private address'],
    ['https://8.8.8.8/x', 'endpoint host 8.8.8.8 is not a known push service (notifications.push_hosts)'],
    ['https://evil.example/x', 'endpoint host evil.example is not a known push service (notifications.push_hosts)'],
    [
      'https://notify.windows.com/x',
      'endpoint host notify.windows.com is not a known push service (notifications.push_hosts)',
    ],
    [
      'https://fcm.googleapis.com.evil.example/x',
      'endpoint host fcm.googleapis.com.evil.example is not a known push service (notifications.push_hosts)',
    ],
    [
      'https://evilnotify.windows.com/x',
      'endpoint host evilnotify.windows.com is not a known push service (notifications.push_hosts)',
    ],
    [
      'https://fcm.googleapis.com:8443/x',
      'endpoint port 8443 of fcm.googleapis.com is not allowed (notifications.push_hosts lists 443)',
    ],
    ['https://localhost/x', 'endpoint port 443 of localhost is not allowed (notifications.push_hosts lists 9443)'],
    [
      'https://localhost:9444/x',
      'endpoint port 9444 of localhost is not allowed (notifications.push_hosts lists 9443)',
    ],
    [`https://fcm.googleapis.com/${'a'.repeat(2100)}`, 'endpoint is longer than 2048 characters'],
  ])('refuses %s: %s', (endpoint, why) => {
    expect(problem(endpoint)).toBe(why);
  });
});

describe('isPublicAddress', () => {
  it.each([
    ['8.8.8.8', true],
    ['142.250.74.10', true],
    ['2a00:1450:4001:82b::200a', true],
    ['10.0.0.1', false],
    ['172.16.5.4', false],
    ['172.31.255.255', false],
    ['172.32.0.1', true],
    ['192.168.0.1', false],
    ['127.0.0.1', false],
    ['127.8.9.10', false],
    ['0.0.0.0', false],
    ['169.254.169.254', false],
    ['100.64.0.1', false],
    ['224.0.0.251', false],
    ['255.255.255.255', false],
    ['::', false],
    ['::1', false],
    ['fc00::1', false],
    ['fd12:3456::1', false],
    ['fe80::1', false],
    ['ff02::1', false],
    ['::ffff:10.0.0.1', false],
    ['::ffff:8.8.8.8', true],
    ['::ffff:7f00:1', false],
    ['64:ff9b::a00:1', false],
    ['2001:db8::1', false],
    ['not-an-ip', false],
  ])('%s: %s', (address, expected) => {
    expect(isPublicAddress(address)).toBe(expected);
  });
});

describe('checkKeys', () => {
  const ecdh = createECDH('prime256v1');
  ecdh.generateKeys();
  const p256dh = ecdh.getPublicKey('base64url', 'uncompressed');
  const auth = randomBytes(16).toString('base64url');

  it('takes a browser subscription keys, padded or not, and keeps them unpadded', () => {
    expect(checkKeys(p256dh, auth)).toEqual({ ok: true, p256dh, auth });
    expect(checkKeys(`${p256dh}=`, `${auth}==`)).toEqual({ ok: true, p256dh, auth });
  });

  const compressed = ecdh.getPublicKey('base64url', 'compressed');
  const offCurve = Buffer.concat([Buffer.from([4]), Buffer.alloc(64, 1)]).toString('base64url');
  it.each([
    ['standard base64 characters', p256dh.replace(/.$/, '+'), auth, 'keys.p256dh must be base64url'],
    ['blanks', `${p256dh.slice(0, 10)} ${p256dh.slice(10)}`, auth, 'keys.p256dh must be base64url'],
    ['a huge p256dh', 'A'.repeat(10_000), auth, 'keys.p256dh must be base64url'],
    ['a huge auth', p256dh, 'A'.repeat(10_000), 'keys.auth must be base64url'],
    ['malformed auth', p256dh, 'not/base64', 'keys.auth must be base64url'],
    ['a compressed point', compressed, auth, 'keys.p256dh must be a 65-byte uncompressed P-256 point (got 33 bytes)'],
    ['too short', p256dh.slice(0, 40), auth, 'keys.p256dh must be a 65-byte uncompressed P-256 point (got 30 bytes)'],
    ['not on the curve', offCurve, auth, 'keys.p256dh is not a point of the P-256 curve'],
    ['a short auth', p256dh, randomBytes(8).toString('base64url'), 'keys.auth must be 16 bytes (got 8)'],
    ['a long auth', p256dh, randomBytes(32).toString('base64url'), 'keys.auth must be 16 bytes (got 32)'],
    ['an empty auth', p256dh, '', 'keys.auth must be 16 bytes (got 0)'],
  ])('refuses %s', (_what, key, secret, why) => {
    expect(checkKeys(key, secret)).toEqual({ ok: false, problem: why });
  });
});

describe('readPushHost (notifications.push_hosts)', () => {
  it.each([
    ['fcm.googleapis.com', { host: 'fcm.googleapis.com', suffix: false, port: 443, ownerNamed: false }],
    ['*.notify.windows.com', { host: 'notify.windows.com', suffix: true, port: 443, ownerNamed: false }],
    ['Push.LAN:8443', { host: 'push.lan', suffix: false, port: 8443, ownerNamed: true }],
    ['localhost:9443', { host: 'localhost', suffix: false, port: 9443, ownerNamed: true }],
    ['[::1]:9443', { host: '::1', suffix: false, port: 9443, ownerNamed: true }],
    ['*.push.example.com:8443', { host: 'push.example.com', suffix: true, port: 8443, ownerNamed: false }],
  ])('reads %s', (text, entry) => {
    expect(readPushHost(text)).toEqual({ entry });
  });

  it.each([
    ['https://fcm.googleapis.com', 'must be host, host:port or *.domain[:port] (an IPv6 address in brackets)'],
    ['fcm.googleapis.com/path', 'names no valid host (fcm.googleapis.com/path)'],
    ['host:0', 'has port 0, not one of 1–65535'],
    ['host:70000', 'has port 70000, not one of 1–65535'],
    ['*.com', 'a *. entry must name a domain of two labels or more (*.notify.windows.com)'],
    ['*.10.0.0.1', 'a *. entry must name a domain of two labels or more (*.notify.windows.com)'],
    ['ex_ample.com', 'names no valid host (ex_ample.com)'],
    ['::1', 'must be host, host:port or *.domain[:port] (an IPv6 address in brackets)'],
  ])('refuses %s', (text, problem) => {
    expect(readPushHost(text)).toEqual({ problem });
  });
});
