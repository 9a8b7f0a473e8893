import { createServer } from 'node:net';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { StreamUnavailableError } from '../../../src/media/relay/errors.js';
import { RelayStreams } from '../../../src/media/relay/streams.js';
import { AuthCamera } from '../../support/auth-camera.js';
import { rtp } from '../fmp4/rtp-packets.js';

// How RelayStreams opens a camera's first session (which answers it asks again), and what it keeps
// of a camera once its stream failed (for GET /v1/system) until the camera is removed.

const logger = pino({ level: 'silent' });

/** A loopback port nothing listens on: taken and given back. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * Opens the stream of a camera whose first DESCRIBEs fail as `failed` says; returns how the
 * camera answered each DESCRIBE (0: it closed the connection).
 */
async function acquireFromFailingCamera(
  failed: ReadonlyArray<'busy' | 'drop'>,
  path = '',
): Promise<{ result: PromiseSettledResult<unknown>; describes: number[]; lastError: string | null }> {
  const camera = await AuthCamera.start({
    // One H.264 NAL unit a packet (SPS, PPS, IDR slice): what the SDP and the relay need.
    packets: [7, 8, 5].map((nalType, i) => rtp(i + 1, 0, nalType === 5, [0x60 | nalType, 0, 0, 0])),
    username: '',
    password: '',
    schemes: [],
    failedDescribes: failed,
  });
  const streams = new RelayStreams({
    locate: () => ({ url: `${camera.url}${path}`, username: null, password: null }),
    logger,
  });
  try {
    const [result] = await Promise.allSettled([streams.acquire('cam', 'main')]);
    return {
      result: result as PromiseSettledResult<unknown>,
      describes: camera.requests.filter((r) => r.method === 'DESCRIBE').map((r) => r.status),
      lastError: streams.lastError('cam')?.message ?? null,
    };
  } finally {
    streams.close();
    await camera.close();
  }
}

describe('RelayStreams.acquire', () => {
  it('asks a camera again that answered busy (503) or dropped the connection, and opens the stream once it answers', async () => {
    const { result, describes } = await acquireFromFailingCamera(['busy', 'drop', 'busy']);
    expect(result.status).toBe('fulfilled');
    expect(describes).toEqual([503, 0, 503, 200]);
  });

  it('tells the viewer the stream is unavailable after four 503s, with the camera’s answer as the reason', async () => {
    const { result, describes, lastError } = await acquireFromFailingCamera(Array(6).fill('busy'));
    expect(result.status).toBe('rejected');
    expect((result as PromiseRejectedResult).reason).toBeInstanceOf(StreamUnavailableError);
    expect(describes).toEqual([503, 503, 503, 503]);
    expect(lastError).toMatch(/^main stream: DESCRIBE: the camera answered 503/);
  });

  it('does not ask again for a path the camera lacks (404)', async () => {
    const { result, describes } = await acquireFromFailingCamera([], '/nothing-here');
    expect(result.status).toBe('rejected');
    expect((result as PromiseRejectedResult).reason).toBeInstanceOf(StreamUnavailableError);
    expect(describes).toEqual([404]);
  });
});

describe('RelayStreams.forget', () => {
  it("drops a removed camera's last stream failure and keeps the others'", async () => {
    const port = await closedPort();
    const streams = new RelayStreams({
      locate: () => ({ url: `rtsp://127.0.0.1:${port}/stream`, username: null, password: null }),
      logger,
    });
    try {
      for (const id of ['gone', 'kept'])
        await expect(streams.acquire(id, 'main')).rejects.toBeInstanceOf(StreamUnavailableError);
      expect(streams.lastError('gone')?.message).toMatch(/^main stream: /);
      streams.forget('gone');
      expect(streams.lastError('gone')).toBeNull();
      expect(streams.lastError('kept')?.message).toMatch(/^main stream: /);
    } finally {
      streams.close();
    }
  });
});
