import { mkdirSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { connect, type TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.js';

// What one client can hold open on the API port: a request trickling in (slowloris), a TLS
// connection that never asks anything or stops reading its answer, and how many connections one
// address may have at once.

let gw: TestGateway;
let ca: Buffer;
let port: number;

beforeAll(async () => {
  gw = await startTestGateway({ api: { request_timeout_s: 2, idle_timeout_s: 3, max_connections_per_address: 3 } });
  ca = readFileSync(gw.gw.certFile);
  port = Number(new URL(gw.gw.apiUrl).port);
  // A download far larger than what the loopback's socket buffers hold, so a client that stops
  // reading stops it. Sparse: no disk is written.
  const clip = path.join(gw.dataDir, 'recordings', 'cam-a', 'big.mp4');
  mkdirSync(path.dirname(clip), { recursive: true });
  writeFileSync(clip, '');
  truncateSync(clip, BIG_CLIP_BYTES);
  const store = gw.gw.store;
  store.upsertDevice({
    id: 'cam-a',
    name: 'Front door',
    type: 'camera',
    status: 'online',
    model: 'X',
    manufacturer: 'Y',
    firmwareVersion: '1',
    lastSeenAt: Date.now(),
  });
  store.insertRecording({
    id: 'rec-big',
    deviceId: 'cam-a',
    eventType: 'motion',
    startedAt: Date.now() - 60_000,
    endedAt: Date.now(),
    sizeBytes: BIG_CLIP_BYTES,
    fileName: 'cam-a/big.mp4',
    alertId: null,
  });
});
const BIG_CLIP_BYTES = 256 * 1024 * 1024;
afterAll(async () => gw?.stop());

/** A TLS connection to the API, resolved once the handshake is done. */
function open(): Promise<{ socket: TLSSocket; received: () => string; closed: Promise<void> }> {
  return new Promise((resolve, reject) => {
    let text = '';
    const socket = connect({ host: '127.0.0.1', port, ca, servername: 'localhost' }, () =>
      resolve({ socket, received: () => text, closed }),
    );
    const closed = new Promise<void>((r) => socket.once('close', () => r()));
    socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
    socket.once('error', reject);
  });
}

describe('API connection bounds', () => {
  it('cuts off a request whose headers trickle in slower than request_timeout_s (slowloris), with a 408', async () => {
    const c = await open();
    c.socket.write('GET /healthz HTTP/1.1\r\nHost: localhost\r\n');
    // One header byte every 200 ms keeps the connection busy, so only the request timeout can end it.
    const drip = setInterval(() => c.socket.writable && c.socket.write('X'), 200);
    try {
      await c.closed;
    } finally {
      clearInterval(drip);
    }
    expect(c.received()).toMatch(/^HTTP\/1\.1 408 /);
    expect(c.received()).toContain('"error":"invalid_request"');
  });

  it('closes a TLS connection that stays silent for idle_timeout_s', async () => {
    const c = await open();
    await c.closed;
    // Node counts a connection that sent nothing as a request not received in time: a 408 or nothing.
    expect(c.received()).toMatch(/^(|HTTP\/1\.1 408 [\s\S]*)$/);
  });

  it('closes a keep-alive connection left unused for idle_timeout_s, and says so in Keep-Alive', async () => {
    const c = await open();
    c.socket.write('GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n');
    await expect.poll(() => c.received(), { timeout: 10_000 }).toMatch(/"status":"ok"/);
    expect(c.received()).toMatch(/\r\nKeep-Alive: timeout=3\r\n/i);
    await c.closed;
    expect(c.received().match(/^HTTP\/1\.1 /gm)).toHaveLength(1);
  });

  it('closes a connection whose client stops reading a download for idle_timeout_s, and counts it', async () => {
    // The earlier tests' connections may not be gone yet on the gateway's side.
    await expect.poll(async () => gauge(await gw.metrics()), { timeout: 10_000 }).toBe(0);
    const closedBefore = quietClosed(await gw.metrics());
    const c = await open();
    // The client reads nothing, so the download stalls once the socket buffers are full.
    c.socket.removeAllListeners('data');
    c.socket.pause();
    const token = await gw.token('recordings:write');
    c.socket.write(
      `GET /v1/recordings/rec-big/download HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${token}\r\n\r\n`,
    );
    try {
      await expect.poll(async () => quietClosed(await gw.metrics()), { timeout: 20_000 }).toBe(closedBefore + 1);
      // Closed on the gateway's side (the client, reading nothing, may not notice yet).
      await expect.poll(async () => gauge(await gw.metrics()), { timeout: 10_000 }).toBe(0);
      expect(c.socket.readableLength).toBeLessThan(BIG_CLIP_BYTES);
    } finally {
      c.socket.destroy();
    }
  });

  it('keeps a download open for a client that reads it slowly, past idle_timeout_s', async () => {
    const closedBefore = quietClosed(await gw.metrics());
    const c = await open();
    c.socket.removeAllListeners('data');
    let received = 0;
    c.socket.on('data', (d: Buffer) => (received += d.length));
    c.socket.pause();
    const token = await gw.token('recordings:write');
    c.socket.write(
      `GET /v1/recordings/rec-big/download HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${token}\r\n\r\n`,
    );
    // Reading for 100 ms of every second: the socket buffers fill while it pauses, and only what
    // it then reads lets the gateway send more.
    const sip = setInterval(() => {
      c.socket.resume();
      setTimeout(() => c.socket.pause(), 100);
    }, 1000);
    try {
      const marks: number[] = [];
      for (let s = 0; s < 3; s++) {
        await new Promise((r) => setTimeout(r, 2500));
        marks.push(received);
      }
      // Twice idle_timeout_s (3 s) and more: still open, still receiving, nothing closed as quiet.
      expect(c.socket.destroyed).toBe(false);
      expect(marks[2]).toBeGreaterThan(marks[1] ?? 0);
      expect(received).toBeLessThan(BIG_CLIP_BYTES);
      expect(quietClosed(await gw.metrics())).toBe(closedBefore);
    } finally {
      clearInterval(sip);
      c.socket.destroy();
    }
  });

  it('keeps a connection in use and answers it', async () => {
    const c = await open();
    try {
      c.socket.write('GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n');
      await expect.poll(() => c.received(), { timeout: 10_000 }).toMatch(/^HTTP\/1\.1 200 [\s\S]*"status":"ok"/);
    } finally {
      c.socket.destroy();
    }
  });

  it('refuses connections past max_connections_per_address, counts them, and takes new ones once others close', async () => {
    // The server may not have seen the earlier tests' connections close yet.
    await expect.poll(async () => gauge(await gw.metrics()), { timeout: 10_000 }).toBe(0);
    const held = await Promise.all([open(), open(), open()]);
    try {
      const refusedBefore = counter(await gw.metrics());
      // The fourth is closed before or during its handshake.
      const fourth = await open().then(
        async (c) => {
          await c.closed;
          return 'closed';
        },
        (err: Error) => err.message,
      );
      expect(fourth).toMatch(/closed|ECONNRESET|socket disconnected/);
      expect(counter(await gw.metrics())).toBe(refusedBefore + 1);
    } finally {
      for (const c of held) c.socket.destroy();
      await Promise.all(held.map((c) => c.closed));
    }
    await expect.poll(async () => gauge(await gw.metrics()), { timeout: 10_000 }).toBe(0);
    const res = await gw.request('/healthz');
    expect(res.status).toBe(200);
  });
});

function sample(metrics: string, name: string): number {
  const line = metrics.split('\n').find((l) => l.startsWith(`${name} `));
  if (!line) throw new Error(`${name} missing from /metrics`);
  return Number(line.split(' ')[1]);
}
const counter = (metrics: string) => sample(metrics, 'edge_gateway_api_connections_refused_total');
const gauge = (metrics: string) => sample(metrics, 'edge_gateway_api_connections');
const quietClosed = (metrics: string) => sample(metrics, 'edge_gateway_api_connections_idle_closed_total');
