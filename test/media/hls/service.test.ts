import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { HlsNotFoundError, HlsUnavailableError } from '../../../src/media/hls/errors.js';
import { HlsService, type HlsServiceOptions } from '../../../src/media/hls/service.js';
import type { FanOutReader } from '../../../src/media/relay/fanout.js';
import { StreamUnavailableError } from '../../../src/media/relay/errors.js';
import type { HlsStreamHandle } from '../../../src/media/hls/service.js';
import { h264Sdp } from '../fmp4/h264-stream.js';

// The HLS service's bounds without a camera: a stream handle that never sends a packet, so every
// request that needs media waits; what is tested is what happens around the wait (limits, the
// timeout, a client going away, the idle close). Media through the muxer is tested with the real
// gateway in test/api/routes/live-hls.test.ts.

const SDP = h264Sdp();

interface FakeStream {
  handle: HlsStreamHandle;
  readers: Set<FanOutReader>;
}

function fakeStream(): FakeStream {
  const readers = new Set<FanOutReader>();
  return {
    readers,
    handle: {
      sdp: SDP,
      trackCount: 1,
      startOfNextReader: () => [],
      attach: (reader) => {
        readers.add(reader);
        return () => readers.delete(reader);
      },
    },
  };
}

const services: HlsService[] = [];
afterEach(() => {
  for (const s of services.splice(0)) s.close();
  vi.useRealTimers();
});

/** Whether a promise has settled yet (checked after the microtasks queued so far). */
function settledFlag(p: Promise<unknown>): () => boolean {
  let settled = false;
  p.then(
    () => (settled = true),
    () => (settled = true),
  );
  return () => settled;
}

function service(overrides: Partial<HlsServiceOptions> = {}, streams = new Map<string, FakeStream>()): HlsService {
  const s = new HlsService({
    acquire: async (deviceId) => {
      if (deviceId === 'offline') throw new StreamUnavailableError('device offline has no main stream');
      let stream = streams.get(deviceId);
      if (!stream) streams.set(deviceId, (stream = fakeStream()));
      return stream.handle;
    },
    logger: pino({ level: 'silent' }),
    maxMuxers: 4,
    maxSessions: 8,
    maxBlockedRequests: 8,
    partTarget: 0.3,
    targetDuration: 1,
    maxBytesPerMuxer: 1 << 20,
    idleS: 2,
    maxSessionS: 60,
    ...overrides,
  });
  services.push(s);
  return s;
}

async function refusal(p: Promise<unknown>): Promise<string> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  if (err instanceof HlsUnavailableError) return err.reason;
  if (err instanceof HlsNotFoundError) return 'not_found';
  throw new Error(`expected a refusal, got ${String(err)}`);
}

describe('HlsService', () => {
  // The waits below are the service's own timers, run on a fake clock: what is tested is which
  // timer ends what, not how long the machine takes.
  it('gives up a start after three target durations without media (503 timeout), and ends that session', async () => {
    vi.useFakeTimers();
    const s = service();
    const start = refusal(s.start('t', 'cam', 'main'));
    const settled = settledFlag(start);
    await vi.advanceTimersByTimeAsync(2999);
    expect(settled()).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await start).toBe('timeout');
    expect(s.stats()).toMatchObject({ sessions: 0, blockedRequests: 0, refused: { timeout: 1 } });
  });

  it.each([
    ['maxMuxers', { maxMuxers: 1 }, ['cam1', 'cam2'], 'too_many_muxers'],
    ['maxSessions', { maxSessions: 1 }, ['cam1', 'cam1'], 'too_many_sessions'],
    ['maxBlockedRequests', { maxBlockedRequests: 1 }, ['cam1', 'cam1'], 'too_many_blocked'],
  ] as const)('refuses a start beyond %s, and counts it', async (_name, limits, [first, second], reason) => {
    const s = service(limits);
    const waiting = s.start('t1', first, 'main');
    await expect.poll(() => s.stats().blockedRequests).toBe(1);
    expect(await refusal(s.start('t2', second, 'main'))).toBe(reason);
    expect(s.stats().refused[reason]).toBe(1);
    expect(s.stats().sessions).toBe(1); // the refused start left no session behind
    s.close();
    await waiting.catch(() => undefined);
  });

  it('leads every start under one ticket to its one session while it lasts: reloads hold no more places', async () => {
    vi.useFakeTimers();
    const s = service({ maxSessions: 1, maxBlockedRequests: 8, idleS: 1, sweepMs: 100 });
    const starts = [1, 2, 3].map(() => refusal(s.start('t', 'cam', 'main')));
    await vi.advanceTimersByTimeAsync(0);
    expect(s.stats()).toMatchObject({ blockedRequests: 3, sessions: 1 });
    // Another ticket finds the one place taken.
    expect(await refusal(s.start('u', 'cam', 'main'))).toBe('too_many_sessions');
    await vi.advanceTimersByTimeAsync(3000);
    for (const start of starts) expect(await start).toBe('timeout');
    // Once idle the session ends, and the place is free again.
    expect(s.stats().sessions).toBe(1);
    await vi.advanceTimersByTimeAsync(1100);
    expect(s.stats().sessions).toBe(0);
    const again = s.start('u', 'cam', 'main');
    await vi.advanceTimersByTimeAsync(0);
    expect(s.stats()).toMatchObject({ blockedRequests: 1, sessions: 1 });
    s.close();
    await again.catch(() => undefined);
  });

  it('answers 503 stream_unavailable when the relay cannot open the camera', async () => {
    const s = service();
    expect(await refusal(s.start('t', 'offline', 'main'))).toBe('stream_unavailable');
    expect(s.stats()).toMatchObject({ sessions: 0, muxers: 0, refused: { stream_unavailable: 1 } });
  });

  it('stops waiting when the client goes away, freeing its place', async () => {
    const s = service();
    const gone = new AbortController();
    const start = s.start('t', 'cam', 'main', gone.signal);
    await expect.poll(() => s.stats().blockedRequests).toBe(1);
    gone.abort();
    expect(await refusal(start)).toBe('not_found');
    expect(s.stats().blockedRequests).toBe(0);
  });

  it('detaches a muxer from the camera stream once no session asked for anything for idleS', async () => {
    vi.useFakeTimers();
    const streams = new Map<string, FakeStream>();
    const s = service({ idleS: 2, sweepMs: 100 }, streams);
    const start = refusal(s.start('t', 'cam', 'main'));
    await vi.advanceTimersByTimeAsync(0);
    expect(streams.get('cam')?.readers.size).toBe(1);
    expect(s.stats().muxers).toBe(1);
    // A session that waits is not idle: after idleS it still holds the muxer.
    await vi.advanceTimersByTimeAsync(2300);
    expect(streams.get('cam')!.readers.size).toBe(1);
    await vi.advanceTimersByTimeAsync(699);
    expect(streams.get('cam')!.readers.size).toBe(1);
    // The wait's timeout ends the session; the next sweep finds the muxer unwatched.
    await vi.advanceTimersByTimeAsync(1);
    expect(await start).toBe('timeout');
    await vi.advanceTimersByTimeAsync(100);
    expect(streams.get('cam')!.readers.size).toBe(0);
    expect(s.stats()).toMatchObject({ muxers: 0, sessions: 0 });
  });
});
