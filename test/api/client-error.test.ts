import { readFileSync } from 'node:fs';
import { connect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientErrorResponse } from '../../src/api/client-error.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';

// Requests refused by Node's HTTP parser, before any route sees them, answered in the API's error
// shape over real HTTPS.

let t: TestGateway;
beforeAll(async () => {
  t = await startTestGateway();
});
afterAll(async () => {
  await t?.stop();
});

/** Sends raw bytes over TLS and reads until the server closes the connection. */
function rawExchange(bytes: string): Promise<string> {
  const url = new URL(t.gw.apiUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(
      { host: url.hostname, port: Number(url.port), ca: readFileSync(t.gw.certFile), servername: 'localhost' },
      () => socket.write(bytes),
    );
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
    socket.on('error', (err: NodeJS.ErrnoException) => (err.code === 'ECONNRESET' ? undefined : reject(err)));
  });
}

function parse(raw: string): { statusLine: string; headers: Record<string, string>; body: unknown } {
  const [head = '', body = ''] = raw.split('\r\n\r\n');
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers = Object.fromEntries(
    lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
  );
  return { statusLine, headers, body: JSON.parse(body) as unknown };
}

describe('requests the HTTP parser refuses', () => {
  it('answers an oversized header section with 431 and {error, error_description}', async () => {
    const res = await t.request('/v1/devices', {
      headers: { ...(await t.auth('devices:read')), 'x-padding': 'a'.repeat(20_000) },
    });
    expect(res.status).toBe(431);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.json()).toEqual({
      error: 'invalid_request',
      error_description: "the request's header section is larger than 16384 bytes",
    });
  });

  it('answers many small headers adding up past the limit the same way, on the raw connection', async () => {
    const headers = Array.from({ length: 400 }, (_, i) => `x-h${i}: ${'b'.repeat(50)}\r\n`).join('');
    const res = parse(await rawExchange(`GET /healthz HTTP/1.1\r\nhost: localhost\r\n${headers}\r\n`));
    expect(res.statusLine).toBe('HTTP/1.1 431 Request Header Fields Too Large');
    expect(res.headers.connection).toBe('close');
    expect(Number(res.headers['content-length'])).toBe(JSON.stringify(res.body).length);
    expect(res.body).toMatchObject({ error: 'invalid_request' });
  });

  it('answers bytes that are not HTTP with 400 invalid_request', async () => {
    const res = parse(await rawExchange('HELLO THERE\r\n\r\n'));
    expect(res.statusLine).toBe('HTTP/1.1 400 Bad Request');
    expect(res.body).toEqual({ error: 'invalid_request', error_description: 'the request is not valid HTTP' });
  });

  it('keeps serving afterwards', async () => {
    expect((await t.request('/healthz')).status).toBe(200);
  });
});

describe('clientErrorResponse', () => {
  it.each([
    ['HPE_HEADER_OVERFLOW', 431],
    ['ERR_HTTP_REQUEST_TIMEOUT', 408],
    ['HPE_INVALID_METHOD', 400],
    [undefined, 400],
  ])('%s → %i with a JSON body of the stated length', (code, status) => {
    const raw = clientErrorResponse(code);
    expect(raw.startsWith(`HTTP/1.1 ${status} `)).toBe(true);
    const body = raw.slice(raw.indexOf('\r\n\r\n') + 4);
    expect(raw).toContain(`\r\nContent-Length: ${Buffer.byteLength(body)}\r\n`);
    expect(Object.keys(JSON.parse(body) as object)).toEqual(['error', 'error_description']);
  });
});
