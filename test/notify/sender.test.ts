import type { LookupAddress } from 'node:dns';
import { createServer, type AddressInfo } from 'node:net';
import { createSecureContext } from 'node:tls';
import { describe, expect, it } from 'vitest';
import { PushSender } from '../../src/notify/sender.js';

// The sender's check of the address a name resolves to, at connect time: a public push service's
// name that now leads to this box or the LAN (DNS rebinding) is refused before anything is sent.
// (Answers, timeouts, redirects and long answers: test/notify/push-e2e.test.ts, over TLS.)

const resolvingTo =
  (...addresses: string[]) =>
  (_host: string, _opts: unknown, cb: (err: NodeJS.ErrnoException | null, a: LookupAddress[]) => void) =>
    cb(
      null,
      addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
    );

const push = { endpoint: 'https://fcm.googleapis.com/fcm/send/x', headers: {}, body: Buffer.from('x') };
const endpoint = (anyAddress: boolean) => ({
  url: new URL(push.endpoint),
  host: 'fcm.googleapis.com',
  port: 443,
  anyAddress,
});

describe('PushSender', () => {
  it.each([['127.0.0.1'], ['10.0.0.7'], ['169.254.169.254'], ['::1'], ['fd00::5']])(
    'refuses a public service whose name resolves to %s',
    async (address) => {
      const sender = new PushSender({
        secureContext: createSecureContext(),
        timeoutMs: 5000,
        lookup: resolvingTo(address) as never,
      });
      const result = await sender.send(endpoint(false), push);
      sender.close();
      expect(result).toMatchObject({ kind: 'failed', reason: 'forbidden_address' });
      expect(result.kind === 'failed' && result.text).toContain(`resolves to ${address}: not a public address`);
    },
  );

  it('connects to a host the owner named wherever it resolves (here: a closed port on this box)', async () => {
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', () => r()));
    const closed = (probe.address() as AddressInfo).port;
    await new Promise<void>((r) => probe.close(() => r()));
    const sender = new PushSender({
      secureContext: createSecureContext(),
      timeoutMs: 5000,
      lookup: resolvingTo('127.0.0.1') as never,
    });
    const result = await sender.send({ ...endpoint(true), port: closed }, push);
    sender.close();
    expect(result).toMatchObject({ kind: 'failed', reason: 'unreachable' });
  });
});
