import { createECDH, randomBytes, type ECDH } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { decrypt } from 'http_ece';
import { importJWK, jwtVerify } from 'jose';
import { makeTestPki, type TestPki } from './mosquitto.js';

// A push service for tests, speaking RFC 8030 over HTTPS on 127.0.0.1 with a certificate of a CA
// made for the test (the gateway trusts it through notifications.ca_file). Each subscription is a
// path of its own with its own keys, like a browser's; what the service answers is the test's to
// say per attempt. Every push is checked as a real push service would (VAPID, RFC 8292: a JWT
// signed by the gateway's public key, for this origin, expiring within 24 hours) and decrypted as
// the browser would (RFC 8291 aes128gcm).

/** What the service answers an attempt with: a status (and headers, a body), or nothing at all. */
export type Answer =
  { status: number; headers?: Record<string, string>; body?: string; bodyBytes?: number } | { hang: true };

export interface ReceivedPush {
  at: number;
  headers: IncomingMessage['headers'];
  /** The decrypted JSON; null when it did not decrypt or the VAPID check failed (see problem). */
  payload: Record<string, unknown> | null;
  problem: string | null;
  answered: number | 'hang';
}

export interface FakeSubscription {
  endpoint: string;
  keys: { p256dh: string; auth: string };
  /** Requests that arrived. */
  attempts: number;
  /** The pushes among them, in order, once checked and decrypted. */
  received: ReceivedPush[];
  /** What attempt n (1, 2, …) is answered with; 201 by default. */
  answer: (n: number) => Answer;
  /** Bytes of a long answer the service managed to write before the gateway hung up. */
  longAnswers: Array<{ written: number; finished: boolean }>;
}

export interface PushReceiver {
  origin: string;
  caFile: string;
  /** The gateway's VAPID public key, to check each push's `k=` and JWT against. */
  vapidKey: string | null;
  subscribe(answer?: (n: number) => Answer): FakeSubscription;
  /** Waits (polling) until `sub` has received `count` pushes. */
  waitFor(sub: FakeSubscription, count: number, timeoutMs?: number): Promise<ReceivedPush[]>;
  close(): Promise<void>;
}

/** A VAPID public key (base64url of the uncompressed P-256 point) as a key jose verifies ES256 with. */
export function vapidKeyOf(publicKey: string) {
  const point = Buffer.from(publicKey, 'base64url');
  return importJWK(
    {
      kty: 'EC',
      crv: 'P-256',
      x: point.subarray(1, 33).toString('base64url'),
      y: point.subarray(33).toString('base64url'),
    },
    'ES256',
  );
}

export async function startPushReceiver(): Promise<PushReceiver> {
  const pki: TestPki = await makeTestPki();
  const subs = new Map<string, { sub: FakeSubscription; ecdh: ECDH }>();
  const sockets = new Set<Socket>();
  let origin = '';
  const receiver: PushReceiver = {
    origin: '',
    caFile: pki.caCert,
    vapidKey: null,
    subscribe(answer = () => ({ status: 201 })) {
      const ecdh = createECDH('prime256v1');
      ecdh.generateKeys();
      const path = `/push/${randomBytes(8).toString('hex')}`;
      const sub: FakeSubscription = {
        endpoint: `${origin}${path}`,
        keys: { p256dh: ecdh.getPublicKey('base64url'), auth: randomBytes(16).toString('base64url') },
        attempts: 0,
        received: [],
        answer,
        longAnswers: [],
      };
      subs.set(path, { sub, ecdh });
      return sub;
    },
    async waitFor(sub, count, timeoutMs = 20_000) {
      const until = Date.now() + timeoutMs;
      while (sub.received.length < count) {
        if (Date.now() > until) throw new Error(`${sub.received.length} of ${count} pushes arrived`);
        await new Promise((r) => setTimeout(r, 25));
      }
      return sub.received;
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
      pki.remove();
    },
  };

  const check = async (req: IncomingMessage, body: Buffer, ecdh: ECDH, auth: string) => {
    const m = /^vapid t=([^,\s]+),\s*k=([A-Za-z0-9_-]+)$/.exec(req.headers.authorization ?? '');
    if (!m?.[1] || !m[2]) throw new Error(`no VAPID Authorization: ${req.headers.authorization}`);
    if (receiver.vapidKey !== null && m[2] !== receiver.vapidKey) throw new Error('k is not the gateway key');
    const { payload } = await jwtVerify(m[1], await vapidKeyOf(m[2]), { algorithms: ['ES256'], audience: origin });
    const exp = payload.exp ?? 0;
    if (exp * 1000 > Date.now() + 24 * 3600_000) throw new Error('the JWT lives longer than 24 hours');
    if (typeof payload.sub !== 'string' || !/^(mailto:|https:)/.test(payload.sub)) throw new Error('no sub');
    if (req.headers['content-encoding'] !== 'aes128gcm') throw new Error('not aes128gcm');
    if (req.headers.ttl === undefined) throw new Error('no TTL');
    const plain = decrypt(body, { version: 'aes128gcm', privateKey: ecdh, authSecret: auth });
    return JSON.parse(plain.toString('utf8')) as Record<string, unknown>;
  };

  const respond = (res: ServerResponse, sub: FakeSubscription, answer: Exclude<Answer, { hang: true }>) => {
    res.writeHead(answer.status, answer.headers ?? {});
    if (answer.bodyBytes === undefined) return res.end(answer.body ?? '');
    // A long answer, written as fast as the other side reads it.
    const long = { written: 0, finished: false };
    sub.longAnswers.push(long);
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    const more = () => {
      while (long.written < (answer.bodyBytes ?? 0)) {
        long.written += chunk.length;
        if (!res.write(chunk)) return res.once('drain', more);
      }
      long.finished = true;
      res.end();
    };
    res.on('error', () => undefined);
    more();
  };

  const server: Server = createServer(
    { cert: readFileSync(pki.serverCert), key: readFileSync(pki.serverKey) },
    (req, res) => {
      const entry = subs.get(req.url ?? '');
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (!entry || req.method !== 'POST') {
          res.writeHead(404).end();
          return;
        }
        const { sub, ecdh } = entry;
        const answer = sub.answer(++sub.attempts);
        const push: ReceivedPush = {
          at: Date.now(),
          headers: req.headers,
          payload: null,
          problem: null,
          answered: 'hang' in answer ? 'hang' : answer.status,
        };
        // Listed once checked, so that what a test waits for is whole.
        check(req, Buffer.concat(chunks), ecdh, sub.keys.auth).then(
          (payload) => {
            push.payload = payload;
            sub.received.push(push);
            if (!('hang' in answer)) respond(res, sub, answer);
          },
          (err: unknown) => {
            push.problem = (err as Error).message;
            sub.received.push(push);
            res.writeHead(401).end(push.problem);
          },
        );
      });
    },
  );
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as { port: number }).port;
  origin = `https://localhost:${port}`;
  receiver.origin = origin;
  return receiver;
}
