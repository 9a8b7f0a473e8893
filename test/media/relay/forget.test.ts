import { createServer } from 'node:net';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { StreamUnavailableError } from '../../../src/media/relay/errors.js';
import { RelayStreams } from '../../../src/media/relay/streams.js';

// What the relay keeps of a camera once its stream failed (for GET /v1/system) goes when the
// camera is removed, and only that camera's.

/** A loopback port nothing listens on: taken and given back. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('RelayStreams.forget', () => {
  it("drops a removed camera's last stream failure and keeps the others'", async () => {
    const port = await closedPort();
    const streams = new RelayStreams({
      locate: () => ({ url: `rtsp://127.0.0.1:${port}/stream`, username: null, password: null }),
      logger: pino({ level: 'silent' }),
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
