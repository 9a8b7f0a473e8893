import { readFileSync } from 'node:fs';
import { connect, type TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.js';

// What one client can hold open on the API port: a request trickling in (slowloris), a TLS
// connection that never asks anything, and how many connections one address may have at once.

let gw: TestGateway;
let ca: Buffer;
let port: number;

beforeAll(async () => {
  gw = await startTestGateway({ api: { request_timeout_s: 2, idle_timeout_s: 3, max_connections_per_address: 3 } });
  ca = readFileSync(gw.gw.certFile);
  port = Number(new URL(gw.gw.apiUrl).port);
});
afterAll(async () => gw?.stop());

/** A TLS connection to the API, resolved once the handshake is done. */
function open(): Promise<{ socket: TLSSocket; received: () => string; closed: Promise<void> }> {
  return new Promise((resolve, reject) => {
    let text = '';
    const socket = connect({ host: '127.0.0.1', port, ca, servername: 'localhost' }, () => resolve({ socket, received: () => text, closed }));
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
