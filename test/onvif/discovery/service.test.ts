import { randomUUID } from 'node:crypto';
import dgram from 'node:dgram';
import { pino } from 'pino';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { buildHello, buildProbeMatch, parseProbe } from '../../../src/onvif/discovery/messages.js';
import { createDiscoveryResponder, type DiscoveryResponder } from '../../../src/onvif/discovery/responder.js';
import {
  createDiscovery,
  parseUnicastTarget,
  selectInterfaces,
  type Discovery,
  type Found,
} from '../../../src/onvif/discovery/service.js';
import { acquireLoopbackMulticast } from '../../support/multicast.js';

// Real UDP, on loopback only: every multicast socket here is pinned to 127.0.0.1 (and the helper
// routes the group to lo), unicast goes to 127.0.0.0/8, and each test uses a fresh non-default
// port so it never meets a real camera, a real gateway or another test.

const mc = acquireLoopbackMulticast();
if (!mc.ok) console.warn(`skipping the multicast discovery tests: ${mc.reason}`);
afterAll(() => {
  if (mc.ok) mc.release();
});

const LO = '127.0.0.1';
const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function capture(): { lines: Record<string, unknown>[]; logger: pino.Logger } {
  const lines: Record<string, unknown>[] = [];
  return {
    lines,
    logger: pino(
      { level: 'debug' },
      { write: (s: string) => void lines.push(JSON.parse(s) as Record<string, unknown>) },
    ),
  };
}

async function freeUdpPort(): Promise<number> {
  const s = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => s.bind(0, '0.0.0.0', resolve));
  const { port } = s.address();
  await new Promise<void>((resolve) => s.close(resolve));
  return port;
}

/** Binds without SO_REUSEADDR: succeeds only when nothing else holds the address and port. */
async function bindExclusive(port: number, address: string): Promise<dgram.Socket> {
  const s = dgram.createSocket({ type: 'udp4', reuseAddr: false });
  await new Promise<void>((resolve, reject) => {
    s.once('error', reject);
    s.bind(port, address, () => resolve());
  });
  return s;
}

function closeSocket(s: dgram.Socket): Promise<void> {
  return new Promise((resolve) => {
    try {
      s.close(() => resolve());
    } catch {
      // Closed already by the test itself.
      resolve();
    }
  });
}

function sendTo(s: dgram.Socket, msg: string | Buffer, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => s.send(msg, port, host, (err) => (err ? reject(err) : resolve())));
}

function endpointOf(n: number): string {
  return `urn:uuid:00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
}

async function responder(n: number, port: number, extra: { address?: string } = {}): Promise<DiscoveryResponder> {
  const r = await createDiscoveryResponder({
    endpoint: endpointOf(n),
    xaddrs: [`http://127.0.0.${n}:8080/onvif/device_service`],
    scopes: [`onvif://www.onvif.org/name/cam${n}`],
    port,
    interfaceAddress: LO,
    address: extra.address ?? `127.0.0.${n}`,
    logger,
  });
  cleanups.push(() => r.close());
  return r;
}

function discovery(opts: Partial<Parameters<typeof createDiscovery>[0]> & { port: number }): {
  d: Discovery;
  found: Found[];
  byes: string[];
} {
  const d = createDiscovery({ interfaces: ['lo'], unicastTargets: [], intervalS: 3600, logger, ...opts });
  const found: Found[] = [];
  const byes: string[] = [];
  d.on('found', (f) => found.push(f));
  d.on('bye', (e) => byes.push(e));
  cleanups.push(() => d.stop());
  return { d, found, byes };
}

/** Resolves with the next matching 'found'; the test's own timeout bounds the wait. */
function nextFound(d: Discovery, pred: (f: Found) => boolean = () => true): Promise<Found> {
  return new Promise((resolve) => {
    const listener = (f: Found): void => {
      if (!pred(f)) return;
      d.off('found', listener);
      resolve(f);
    };
    d.on('found', listener);
  });
}

function nextBye(d: Discovery): Promise<string> {
  return new Promise((resolve) => {
    const listener = (endpoint: string): void => {
      d.off('bye', listener);
      resolve(endpoint);
    };
    d.on('bye', listener);
  });
}

async function until(d: Discovery, found: Found[], endpoints: string[]): Promise<void> {
  const missing = (): string[] => endpoints.filter((e) => !found.some((f) => f.endpoint === e));
  while (missing().length > 0) await nextFound(d);
}

describe('pure helpers', () => {
  it('selects named interfaces (loopback allowed) or every non-loopback IPv4 interface', () => {
    const nic = (address: string, family: 'IPv4' | 'IPv6', internal = false) =>
      ({
        address,
        family,
        internal,
        netmask: '',
        mac: '',
        cidr: null,
        ...(family === 'IPv6' ? { scopeid: 0 } : {}),
      }) as never;
    const nics = {
      lo: [nic('127.0.0.1', 'IPv4', true)],
      eth0: [nic('fe80::1', 'IPv6'), nic('192.0.2.2', 'IPv4')],
      wlan0: [nic('fe80::2', 'IPv6')],
    };
    expect(selectInterfaces([], nics)).toEqual({ selected: [{ name: 'eth0', address: '192.0.2.2' }], missing: [] });
    expect(selectInterfaces(['lo', 'wlan0', 'eth9', 'lo'], nics)).toEqual({
      selected: [{ name: 'lo', address: '127.0.0.1' }],
      missing: ['wlan0', 'eth9'],
    });
  });

  it('parses unicast targets and refuses malformed ones', () => {
    expect(parseUnicastTarget('10.0.0.7', 3702)).toEqual({ host: '10.0.0.7', port: 3702 });
    expect(parseUnicastTarget(' cam.local:4000 ', 3702)).toEqual({ host: 'cam.local', port: 4000 });
    for (const bad of ['', '10.0.0.7:', '10.0.0.7:70000', '10.0.0.7:0', 'a b', '[::1]:3702'])
      expect(() => parseUnicastTarget(bad, 3702)).toThrow(RangeError);
    expect(() => createDiscovery({ interfaces: [], unicastTargets: ['x:99999'], intervalS: 60, logger })).toThrow(
      RangeError,
    );
    expect(() => createDiscovery({ interfaces: [], unicastTargets: [], intervalS: 0, logger })).toThrow(RangeError);
  });
});

describe('unicast (no multicast)', () => {
  it('a unicast Probe to 127.0.0.x finds a responder', async () => {
    const port = await freeUdpPort();
    await responder(31, port);
    const { d, found } = discovery({ port, multicast: false, unicastTargets: [`127.0.0.31:${port}`] });
    await d.start();
    await until(d, found, [endpointOf(31)]);
    expect(found).toEqual([
      {
        endpoint: endpointOf(31),
        xaddrs: ['http://127.0.0.31:8080/onvif/device_service'],
        scopes: ['onvif://www.onvif.org/name/cam31'],
        types: ['dn:NetworkVideoTransmitter', 'tds:Device'],
        via: 'unicast',
        from: '127.0.0.31',
      },
    ]);
  });

  it('when another process holds the discovery port it warns and unicast probing still works', async () => {
    const port = await freeUdpPort();
    const holder = await bindExclusive(port, '0.0.0.0');
    cleanups.push(() => closeSocket(holder));
    const otherPort = await freeUdpPort();
    await responder(32, otherPort);
    const log = capture();
    // Multicast stays on (so the listener is attempted) but the interface list names nothing real.
    const { d, found } = discovery({
      port,
      interfaces: ['no-such-interface0'],
      unicastTargets: [`127.0.0.32:${otherPort}`],
      logger: log.logger,
    });
    await d.start();
    await until(d, found, [endpointOf(32)]);
    expect(found[0]?.via).toBe('unicast');
    expect(log.lines.some((l) => l.level === 40 && String(l.msg).includes('cannot bind the discovery port'))).toBe(
      true,
    );
    expect(log.lines.some((l) => l.level === 40 && String(l.msg).includes('interfaces absent'))).toBe(true);
  });

  it('stop() closes every socket and ends the service', async () => {
    const port = await freeUdpPort();
    const target = await bindExclusive(0, '127.0.0.33');
    cleanups.push(() => closeSocket(target));
    const probed = new Promise<number>((resolve) => target.once('message', (_m, rinfo) => resolve(rinfo.port)));
    const { d } = discovery({ port, multicast: false, unicastTargets: [`127.0.0.33:${target.address().port}`] });
    await d.start();
    const probePort = await probed;
    await d.stop();
    await d.stop();
    // Both ports are free again only if the sockets on them were closed.
    await closeSocket(await bindExclusive(probePort, '0.0.0.0'));
    await expect(d.probeNow()).rejects.toThrow(/stopped/);
    await expect(d.start()).rejects.toThrow(/stopped/);
  });
});

describe.skipIf(!mc.ok)('multicast over loopback', () => {
  it('one multicast Probe finds three responders', async () => {
    const port = await freeUdpPort();
    for (const n of [21, 22, 23]) await responder(n, port);
    const { d, found } = discovery({ port });
    await d.start();
    await until(d, found, [21, 22, 23].map(endpointOf));
    expect(found.map((f) => [f.endpoint, f.via, f.from, f.xaddrs[0]]).sort()).toEqual(
      [21, 22, 23].map((n) => [
        endpointOf(n),
        'probe',
        `127.0.0.${n}`,
        `http://127.0.0.${n}:8080/onvif/device_service`,
      ]),
    );
  });

  it('Hello announces a new camera without a probe, Bye says it left', async () => {
    const port = await freeUdpPort();
    const { d, found, byes } = discovery({ port });
    await d.start();
    const r = await responder(24, port);
    const hello = nextFound(d, (f) => f.endpoint === endpointOf(24));
    await r.hello();
    expect(await hello).toMatchObject({
      endpoint: endpointOf(24),
      via: 'hello',
      from: '127.0.0.24',
      xaddrs: ['http://127.0.0.24:8080/onvif/device_service'],
    });
    const bye = nextBye(d);
    await r.bye();
    expect(await bye).toBe(endpointOf(24));
    expect(found.filter((f) => f.via === 'probe')).toEqual([]);
    expect(byes).toEqual([endpointOf(24)]);
  });

  it('ignores garbage, oversized, foreign and stale answers, de-duplicates repeats, and keeps working', async () => {
    const port = await freeUdpPort();
    await responder(25, port);
    // A misbehaving device: on each Probe it sends everything below, in order, then a sentinel.
    const rogue = dgram.createSocket({ type: 'udp4', reuseAddr: true });
    cleanups.push(() => closeSocket(rogue));
    await new Promise<void>((resolve) => rogue.bind(port, '0.0.0.0', resolve));
    rogue.addMembership('239.255.255.250', LO);
    const answer = (
      endpoint: string,
      relatesTo: string,
      extra: { types?: string[]; scopes?: string[]; messageId?: string } = {},
    ) =>
      buildProbeMatch({
        messageId: extra.messageId ?? `urn:uuid:${randomUUID()}`,
        relatesTo,
        endpoint,
        xaddrs: ['http://127.0.0.26/onvif/device_service'],
        ...extra,
      });
    let rounds = 0;
    rogue.on('message', (buf, rinfo) => {
      void (async () => {
        const probe = await parseProbe(buf.toString('utf8'));
        if (!probe) return;
        rounds++;
        const repeatedId = `urn:uuid:${randomUUID()}`;
        const datagrams: (string | Buffer)[] = [
          Buffer.from([0xff, 0x00, 0x3c, 0x3f]),
          'garbage <not xml',
          answer(endpointOf(901), `urn:uuid:${randomUUID()}`),
          answer(endpointOf(902), probe.messageId, { types: ['prn:PrintDeviceType'] }),
          answer(endpointOf(903), probe.messageId, {
            scopes: Array.from({ length: 2000 }, (_, i) => `onvif://www.onvif.org/x/${i}`),
          }),
          answer(endpointOf(904), probe.messageId, { messageId: repeatedId }),
          answer(endpointOf(904), probe.messageId, { messageId: repeatedId }),
          answer(endpointOf(904).toUpperCase().replace('URN:UUID:', 'urn:uuid:'), probe.messageId),
          answer(endpointOf(999), probe.messageId),
        ];
        // One at a time: each is in the gateway's receive queue before the next is sent.
        for (const dg of datagrams) await sendTo(rogue, dg, rinfo.port, rinfo.address);
      })();
    });

    const log = capture();
    const { d, found } = discovery({ port, logger: log.logger });
    // A listener that throws must not starve the listeners after it (until() adds some) or the service.
    d.on('found', () => {
      throw new Error('listener bug');
    });
    await d.start();
    await until(d, found, [endpointOf(25), endpointOf(999)]);
    expect(found.filter((f) => [901, 902, 903].map(endpointOf).includes(f.endpoint))).toEqual([]);
    expect(found.filter((f) => f.endpoint.toLowerCase() === endpointOf(904))).toHaveLength(1);
    expect(log.lines.some((l) => l.level === 50 && l.msg === 'discovery: listener threw')).toBe(true);

    // The next round finds everyone again.
    found.length = 0;
    await d.probeNow();
    await until(d, found, [endpointOf(25), endpointOf(999)]);
    expect(rounds).toBe(2);
    expect(found.filter((f) => f.endpoint.toLowerCase() === endpointOf(904))).toHaveLength(1);
  });

  it('a retransmitted Hello is reported once', async () => {
    const port = await freeUdpPort();
    const { d, found } = discovery({ port });
    await d.start();
    const camera = dgram.createSocket({ type: 'udp4', reuseAddr: true });
    cleanups.push(() => closeSocket(camera));
    await new Promise<void>((resolve) => camera.bind(0, '127.0.0.27', resolve));
    camera.setMulticastInterface(LO);
    const hello = (n: number, messageId: string) =>
      buildHello({ messageId, endpoint: endpointOf(n), xaddrs: [`http://127.0.0.27/onvif/device_service`] });
    const id = `urn:uuid:${randomUUID()}`;
    // SOAP-over-UDP repeats a multicast message with the same MessageID; the sentinel comes last.
    for (const xml of [hello(27, id), hello(27, id), hello(28, `urn:uuid:${randomUUID()}`)])
      await sendTo(camera, xml, port, '239.255.255.250');
    await until(d, found, [endpointOf(28)]);
    expect(found.map((f) => [f.endpoint, f.via, f.from])).toEqual([
      [endpointOf(27), 'hello', '127.0.0.27'],
      [endpointOf(28), 'hello', '127.0.0.27'],
    ]);
  });

  it('probes again every intervalS, and stop() closes the listener and interface sockets', async () => {
    const port = await freeUdpPort();
    const watcher = dgram.createSocket({ type: 'udp4', reuseAddr: true });
    cleanups.push(() => closeSocket(watcher));
    await new Promise<void>((resolve) => watcher.bind(port, '0.0.0.0', resolve));
    watcher.addMembership('239.255.255.250', LO);
    const probes: { id: string; from: dgram.RemoteInfo }[] = [];
    const threeProbes = new Promise<void>((resolve) => {
      watcher.on('message', (m, from) => {
        void parseProbe(m.toString('utf8')).then((p) => {
          if (p) probes.push({ id: p.messageId, from });
          if (probes.length === 3) resolve();
        });
      });
    });
    const { d } = discovery({ port, intervalS: 0.05 });
    await d.start();
    await threeProbes;
    await d.stop();
    await closeSocket(watcher);
    expect(new Set(probes.map((p) => p.id)).size).toBe(probes.length);
    const from = probes[0]?.from;
    expect(from?.address).toBe(LO);
    // Both ports are free again only if the sockets on them were closed.
    await closeSocket(await bindExclusive(from?.port ?? -1, LO));
    await closeSocket(await bindExclusive(port, '0.0.0.0'));
  });
});
