import { rmSync } from 'node:fs';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { AlertType } from '../../src/domain/types.js';
import { checkEndpoint } from '../../src/notify/endpoint.js';
import { Notifier } from '../../src/notify/notifier.js';
import type { SendResult } from '../../src/notify/schedule.js';
import { localMinuteOf, wantsAlert } from '../../src/notify/schedule.js';
import { Store } from '../../src/store/store.js';
import { tempDir } from '../support/temp-dir.js';
import { onlineCamera } from '../support/devices.js';

// The notifier over the real store and its queue, with a push service played by a function: what
// is sent when (cooldown, collapse), and what each answer leads to. Timers are faked, so the waits
// (cooldown, backoff, Retry-After, TTL) pass at once and in order.

const HOSTS = [{ host: 'push.example', suffix: false, port: 443, ownerNamed: false }];
const COOLDOWN_MS = 30_000;
const TTL_MS = 600_000;

interface Sent {
  at: number;
  endpoint: string;
  payload: { alert_id: string | null; image: string | null; title: string; type: string };
  headers: { ttlS: number; topic: string; urgency: string };
}

let dir: string;
let store: Store;
let sent: Sent[];
let answer: (n: number) => SendResult;
let notifier: Notifier;

function start(opts: { picture?: Buffer | null; cooldownMs?: number } = {}) {
  notifier = new Notifier({
    store,
    encode: (target, payload, headers) => ({
      endpoint: target.endpoint,
      headers: { ttl: String(headers.ttlS), topic: headers.topic, urgency: headers.urgency },
      body: Buffer.from(JSON.stringify({ payload, headers })),
    }),
    send: async (endpoint, request) => {
      const { payload, headers } = JSON.parse(request.body.toString()) as { payload: string; headers: Sent['headers'] };
      sent.push({
        at: Date.now(),
        endpoint: endpoint.url.href,
        payload: JSON.parse(payload) as Sent['payload'],
        headers,
      });
      return answer(sent.length);
    },
    checkEndpoint: (endpoint) => checkEndpoint(endpoint, HOSTS),
    picture: async () => opts.picture ?? null,
    cooldownMs: opts.cooldownMs ?? COOLDOWN_MS,
    ttlMs: TTL_MS,
    maxInFlight: 4,
    logger: pino({ level: 'silent' }),
    random: () => 0.5,
  });
  store.enablePushQueue({
    wants: (s, a) => wantsAlert(s, a, localMinuteOf(a.createdAt)),
    maxRows: 1000,
    onChange: (c) => notifier.queueChanged(c),
  });
  notifier.start();
}

function subscribe(owner: string, endpoint: string, types: AlertType[] = ['human', 'vehicle']) {
  const saved = store.savePushSubscription(
    { owner, grantId: null, endpoint, p256dh: 'p', auth: 'a', devices: null, types, quietHours: null },
    { perOwner: 10, total: 10 },
  );
  if (saved.kind === 'full') throw new Error('full');
  return saved.subscription;
}

let n = 0;
const raise = (deviceId: string, type: AlertType = 'human') =>
  store.insertAlert({ id: `alr_${++n}`, deviceId, type, message: `${type} at ${deviceId}`, createdAt: Date.now() }).id;

const ok: SendResult = { kind: 'answered', status: 201, retryAfter: null, text: '' };

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'Date'], now: Date.UTC(2026, 5, 1, 12) });
  dir = tempDir('eg-notifier-');
  store = Store.open(dir);
  store.upsertDevice(onlineCamera('cam-a', 'Front door'));
  store.upsertDevice(onlineCamera('cam-b', 'Garden'));
  sent = [];
  answer = () => ok;
});
afterEach(() => {
  notifier.stop();
  store.close();
  vi.useRealTimers();
  rmSync(dir, { recursive: true, force: true });
});

describe('the notifier', () => {
  it('sends a burst on one camera once at once, and its newest alert after the cooldown', async () => {
    start();
    const s = subscribe('ann', 'https://push.example/1');
    const first = raise('cam-a');
    await vi.advanceTimersByTimeAsync(100);
    expect(sent.map((p) => p.payload.alert_id)).toEqual([first]);
    const burst = [];
    for (let i = 0; i < 4; i++) {
      burst.push(raise('cam-a'));
      await vi.advanceTimersByTimeAsync(1000);
    }
    const other = raise('cam-b');
    await vi.advanceTimersByTimeAsync(100);
    // Another camera has a cooldown of its own.
    expect(sent.map((p) => p.payload.alert_id)).toEqual([first, other]);
    await vi.advanceTimersByTimeAsync(COOLDOWN_MS);
    expect(sent.map((p) => p.payload.alert_id)).toEqual([first, other, burst[3]]);
    expect(sent[2]!.at - sent[0]!.at).toBeGreaterThanOrEqual(COOLDOWN_MS);
    expect(notifier.stats).toMatchObject({ sent: 3, collapsed: 3 });
    expect(sent[0]).toMatchObject({
      endpoint: 'https://push.example/1',
      payload: { title: 'Person at Front door', type: 'human' },
      headers: { urgency: 'high' },
    });
    expect(sent[0]!.headers.topic).not.toBe(sent[1]!.headers.topic);
    expect(sent[2]!.headers.topic).toBe(sent[0]!.headers.topic);
    await vi.advanceTimersByTimeAsync(100);
    expect(store.pushQueue()).toEqual([]);
    expect(store.getPushSubscription(s.id)).not.toBeNull();
  });

  it('pushes each subscription the types it asked for', async () => {
    start();
    subscribe('ann', 'https://push.example/people');
    subscribe('bob', 'https://push.example/all', ['human', 'vehicle', 'motion', 'device_offline']);
    raise('cam-a', 'motion');
    raise('cam-b', 'device_offline');
    await vi.advanceTimersByTimeAsync(100);
    expect(sent.map((p) => [p.endpoint, p.payload.title])).toEqual([
      ['https://push.example/all', 'Motion at Front door'],
      ['https://push.example/all', 'Garden is offline'],
    ]);
  });

  it('removes a subscription its push service says is gone (404, 410)', async () => {
    start();
    const gone = subscribe('ann', 'https://push.example/gone');
    answer = () => ({ kind: 'answered', status: 410, retryAfter: null, text: 'expired' });
    raise('cam-a');
    await vi.advanceTimersByTimeAsync(100);
    expect(store.getPushSubscription(gone.id)).toBeNull();
    expect(notifier.stats).toMatchObject({ removed: 1, failed: { gone: 1 } });
    expect(store.pushQueue()).toEqual([]);
  });

  it('sends again at once without the picture when the push service finds it too large (413)', async () => {
    start({ picture: Buffer.from([0xff, 0xd8, 1, 2, 3, 0xff, 0xd9]) });
    subscribe('ann', 'https://push.example/1');
    answer = (k) => (k === 1 ? { kind: 'answered', status: 413, retryAfter: null, text: '' } : ok);
    raise('cam-a');
    await vi.advanceTimersByTimeAsync(100);
    expect(sent.map((p) => p.payload.image?.slice(0, 23) ?? null)).toEqual(['data:image/jpeg;base64,', null]);
    expect(notifier.stats).toMatchObject({ sent: 1, failed: { too_large: 1 } });
  });

  it('waits as long as Retry-After says (429)', async () => {
    start();
    subscribe('ann', 'https://push.example/1');
    answer = (k) => (k === 1 ? { kind: 'answered', status: 429, retryAfter: '120', text: '' } : ok);
    raise('cam-a');
    await vi.advanceTimersByTimeAsync(119_000);
    expect(sent).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(2000);
    expect(sent).toHaveLength(2);
    expect(sent[1]!.at - sent[0]!.at).toBeGreaterThanOrEqual(120_000);
    expect(notifier.stats).toMatchObject({ sent: 1, failed: { rate_limited: 1 } });
  });

  it('tries an unreachable push service again with backoff until the TTL, then drops the push', async () => {
    start();
    subscribe('ann', 'https://push.example/1');
    answer = () => ({ kind: 'failed', reason: 'unreachable', text: 'ECONNREFUSED' });
    raise('cam-a');
    await vi.advanceTimersByTimeAsync(TTL_MS + 60_000);
    expect(sent.length).toBeGreaterThan(5);
    const gaps = sent.slice(1).map((p, i) => p.at - sent[i]!.at);
    // Each wait at least a second, and growing (the jitter is fixed here).
    expect(gaps.every((g) => g >= 1000)).toBe(true);
    expect(gaps[3]!).toBeGreaterThan(gaps[0]!);
    // Each attempt's TTL header says what is left of the push's time to live.
    expect(sent.at(-1)!.headers.ttlS).toBeLessThan(sent[0]!.headers.ttlS);
    expect(sent.at(-1)!.at).toBeLessThan(sent[0]!.at + TTL_MS);
    expect(notifier.stats.dropped.expired).toBe(1);
    expect(store.pushQueue()).toEqual([]);
  });

  it('drops at once what a push service refuses for good: a redirect, a 400', async () => {
    start();
    subscribe('ann', 'https://push.example/1');
    answer = (k) => ({ kind: 'answered', status: k === 1 ? 302 : 400, retryAfter: null, text: '' });
    raise('cam-a');
    raise('cam-b');
    await vi.advanceTimersByTimeAsync(60_000);
    expect(sent).toHaveLength(2);
    expect(notifier.stats).toMatchObject({ dropped: { refused: 2 }, failed: { redirect: 1, rejected: 1 } });
  });

  it('sends what was queued before a restart', async () => {
    start();
    subscribe('ann', 'https://push.example/1');
    answer = () => ({ kind: 'failed', reason: 'timeout', text: 'slow' });
    const id = raise('cam-a');
    await vi.advanceTimersByTimeAsync(100);
    notifier.stop();
    answer = () => ok;
    start();
    await vi.advanceTimersByTimeAsync(100);
    expect(sent.map((p) => p.payload.alert_id)).toEqual([id, id]);
    expect(notifier.stats.sent).toBe(1);
  });

  it('answers a test notification with the outcome in words', async () => {
    start();
    const s = subscribe('ann', 'https://push.example/1');
    expect(await notifier.sendTest(s)).toEqual({
      delivered: true,
      status: 201,
      outcome: 'delivered to the push service (201)',
    });
    answer = () => ({ kind: 'answered', status: 403, retryAfter: null, text: '{"reason":"BadJwtToken"}' });
    expect(await notifier.sendTest(s)).toEqual({
      delivered: false,
      status: 403,
      outcome: 'the push service answered 403: {"reason":"BadJwtToken"}',
    });
    expect(sent.map((p) => p.payload.title)).toEqual(['Test notification', 'Test notification']);
  });
});
