import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { connect, createServer, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerRelayMetrics } from '../../../src/media/relay/metrics.js';
import { isLoopbackAddress, startRelayServer, type RelayServer } from '../../../src/media/relay/server.js';
import { RelayStreams } from '../../../src/media/relay/streams.js';
import { parseRtpInfo, parseTransport } from '../../../src/media/rtsp/index.js';
import { readRtpHeader } from '../../../src/media/rtp.js';
import { TicketSigner } from '../../../src/media/ticket.js';
import { startSimulatedRtsp, type SimulatedRtsp } from '../../../src/onvif/simulator/rtsp.js';
import { TestRtspClient } from '../../support/rtsp-client.js';

// The relay's RTSP server with a real camera behind it (gst-rtsp-server fed by ffmpeg) and a bare
// client in front, to see what players hide: RTP-Info, sender reports, UDP sessions outliving their
// connection and timing out, per-address limits, slow readers, max session length, garbage input.

const STALLED_VIEWER = fileURLToPath(new URL('../../support/stalled_rtsp_viewer.py', import.meta.url));
const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
const tickets = new TicketSigner(randomBytes(32));
let camera: SimulatedRtsp;
let streams: RelayStreams;
/** Short session timeout and sweep, small per-address limit: the lifetime tests. */
let relay: RelayServer;
/** Tiny per-reader budget: the slow-reader test. */
let slowStreams: RelayStreams;
let strict: RelayServer;
/** Sessions end after 2 s. */
let short: RelayServer;

const url = (server: RelayServer, profile: 'main' | 'sub' = 'sub') =>
  `rtsp://127.0.0.1:${server.port}/live/${tickets.issue({ deviceId: 'dev1', profile, expiresAt: Date.now() + 60_000 })}`;

beforeAll(async () => {
  camera = await startSimulatedRtsp({
    cameras: 1,
    host: '127.0.0.1',
    port: 0,
    username: 'admin',
    password: 'relay-test',
    logger,
  });
  const locate = (_id: string, profile: 'main' | 'sub') => ({
    url: camera.url(0, profile),
    username: 'admin',
    password: 'relay-test',
  });
  streams = new RelayStreams({ locate, logger, idleCloseS: 30 });
  relay = await startRelayServer({
    host: '127.0.0.1',
    port: 0,
    udpPort: 0,
    tickets,
    streams,
    logger,
    sessionTimeoutS: 1,
    sweepMs: 100,
    maxConnectionsPerAddress: 3,
    trustedAddress: () => false,
  });
  slowStreams = new RelayStreams({
    locate,
    logger,
    idleCloseS: 30,
    readerLimits: { maxPendingBytes: 64 * 1024, maxBehindMs: 300 },
  });
  strict = await startRelayServer({ host: '127.0.0.1', port: 0, udpPort: 0, tickets, streams: slowStreams, logger });
  short = await startRelayServer({
    host: '127.0.0.1',
    port: 0,
    udpPort: 0,
    tickets,
    streams,
    logger,
    maxSessionS: 2,
    sweepMs: 100,
  });
});
afterAll(async () => {
  await relay?.close();
  await strict?.close();
  await short?.close();
  streams?.close();
  slowStreams?.close();
  await camera?.stop();
});

function udpPair(): Promise<{
  rtp: UdpSocket;
  rtcp: UdpSocket;
  port: number;
  received: Array<{ port: number; size: number }>;
  reports: Buffer[];
}> {
  return new Promise((resolve, reject) => {
    const attempt = (n: number) => {
      const port = 40_000 + 2 * Math.floor(Math.random() * 5000);
      const rtp = createSocket('udp4');
      const rtcp = createSocket('udp4');
      const received: Array<{ port: number; size: number }> = [];
      const reports: Buffer[] = [];
      rtp.on('message', (m, r) => received.push({ port: r.port, size: m.length }));
      rtcp.on('message', (m) => reports.push(m));
      rtp.once('error', () => (n > 20 ? reject(new Error('no UDP ports')) : attempt(n + 1)));
      rtp.bind(port, '127.0.0.1', () => {
        rtcp.once('error', () => {
          rtp.close();
          attempt(n + 1);
        });
        rtcp.bind(port + 1, '127.0.0.1', () => resolve({ rtp, rtcp, port, received, reports }));
      });
    };
    attempt(0);
  });
}

describe('relay server', () => {
  it('answers PLAY with RTP-Info that matches the first packet it sends (from the cached GOP)', async () => {
    const warm = await TestRtspClient.open(relay.port);
    let late: TestRtspClient | null = null;
    try {
      await warm.play(url(relay));
      await warm.waitForFrames(0, 40); // the camera session is up and a group of pictures cached
      late = await TestRtspClient.open(relay.port);
      const { play } = await late.play(url(relay));
      expect(play.status).toBe(200);
      const info = parseRtpInfo(play.headers.get('rtp-info') ?? '');
      expect(info).toHaveLength(1);
      expect(info[0]!.url).toMatch(/\/live\/[\w-]+\.[\w-]{22}\/trackID=0$/);
      const [first] = await late.waitForFrames(0, 1);
      const header = readRtpHeader(first!.payload)!;
      expect(info[0]).toMatchObject({ seq: header.sequence, rtptime: header.timestamp });
    } finally {
      warm.close();
      late?.close();
    }
  });

  it("passes on the camera's sender reports (RTCP SR only, no SDES) on the RTCP channel", async () => {
    const client = await TestRtspClient.open(relay.port);
    try {
      await client.play(url(relay));
      const [report] = await client.waitForFrames(1, 1); // gst-rtsp-server sends one every few seconds
      expect(report!.payload[1]).toBe(200);
      expect(report!.payload.length).toBe((report!.payload.readUInt16BE(2) + 1) * 4);
    } finally {
      client.close();
    }
  });

  it('plays over UDP to the viewer, keeps the session after its connection closes while RTCP comes, then times it out', async () => {
    const udp = await udpPair();
    const client = await TestRtspClient.open(relay.port);
    let keepAlive: NodeJS.Timeout | undefined;
    try {
      const { setup, play } = await client.play(url(relay), `RTP/AVP;unicast;client_port=${udp.port}-${udp.port + 1}`);
      expect(play.status).toBe(200);
      const [transport] = parseTransport(setup.headers.get('transport') ?? '');
      expect(transport).toMatchObject({
        lowerTransport: 'UDP',
        clientPort: [udp.port, udp.port + 1],
        serverPort: relay.udpPorts,
        destination: '127.0.0.1',
      });
      await expect.poll(() => udp.received.length, { timeout: 10_000 }).toBeGreaterThan(20);
      expect(new Set(udp.received.map((r) => r.port))).toEqual(new Set([relay.udpPorts[0]]));
      expect(relay.stats().sessions.udp).toBe(1);

      // Receiver reports keep it alive past the 1 s timeout, with no RTSP connection at all.
      const rr = Buffer.from([0x80, 201, 0, 1, 0, 0, 0, 1]);
      keepAlive = setInterval(() => udp.rtcp.send(rr, relay.udpPorts[1], '127.0.0.1'), 200);
      client.close();
      await client.closed;
      const before = udp.received.length;
      await new Promise((r) => setTimeout(r, 2500));
      expect(relay.stats().sessions.udp).toBe(1);
      expect(udp.received.length).toBeGreaterThan(before);

      // Silence: the session times out and the packets stop.
      clearInterval(keepAlive);
      await expect.poll(() => relay.stats().sessions.udp, { timeout: 5000 }).toBe(0);
      const stopped = udp.received.length;
      await new Promise((r) => setTimeout(r, 500));
      expect(udp.received.length).toBe(stopped);
    } finally {
      clearInterval(keepAlive);
      client.close();
      udp.rtp.close();
      udp.rtcp.close();
    }
  });

  it('ends a UDP session on TEARDOWN from a new connection, and refuses its id from another address', async () => {
    const udp = await udpPair();
    const client = await TestRtspClient.open(relay.port);
    try {
      const { session } = await client.play(url(relay), `RTP/AVP;unicast;client_port=${udp.port}-${udp.port + 1}`);
      client.close();
      const stranger = await TestRtspClient.open(relay.port, '127.0.0.2');
      expect((await stranger.request('TEARDOWN', url(relay), { Session: session })).status).toBe(454);
      expect((await stranger.request('PLAY', url(relay), { Session: session })).status).toBe(454);
      stranger.close();
      expect(relay.stats().sessions.udp).toBe(1);
      const again = await TestRtspClient.open(relay.port);
      expect((await again.request('TEARDOWN', url(relay), { Session: session })).status).toBe(200);
      expect(relay.stats().sessions.udp).toBe(0);
      again.close();
    } finally {
      client.close();
      udp.rtp.close();
      udp.rtcp.close();
    }
  });

  it('refuses what it cannot serve with the right status, and keeps serving', async () => {
    const client = await TestRtspClient.open(relay.port);
    try {
      const u = url(relay);
      expect((await client.request('RECORD', u)).status).toBe(501);
      expect((await client.request('DESCRIBE', u.replace('/live/', '/other/'))).status).toBe(404);
      expect(
        (await client.request('SETUP', `${u}/trackID=9`, { Transport: 'RTP/AVP/TCP;interleaved=0-1' })).status,
      ).toBe(404);
      expect(
        (await client.request('SETUP', `${u}/trackID=0`, { Transport: 'RTP/AVP;multicast;port=5000-5001' })).status,
      ).toBe(461);
      expect((await client.request('SETUP', `${u}/trackID=0`, { Transport: 'RTP/AVP;unicast' })).status).toBe(461); // no client_port
      expect((await client.request('PLAY', u)).status).toBe(454);
      expect((await client.request('PLAY', u, { Session: 'deadbeefdeadbeef' })).status).toBe(454);
      // Garbage interleaved frames from the viewer are read past.
      client.socket.write(Buffer.concat([Buffer.from([0x24, 7, 0, 16]), randomBytes(16)]));
      expect((await client.request('OPTIONS', '*')).status).toBe(200);
      // Each SETUP without a Session header starts a session; the 4th from one address is one too many.
      const sessions: number[] = [];
      for (let i = 0; i < 4; i++)
        sessions.push(
          (await client.request('SETUP', `${u}/trackID=0`, { Transport: 'RTP/AVP/TCP;interleaved=0-1' })).status,
        );
      expect(sessions).toEqual([200, 200, 200, 453]);
    } finally {
      client.close();
    }
    await expect.poll(() => relay.stats().sessions.tcp, { timeout: 5000 }).toBe(0);
  });

  it('a flood of refused connections writes a bounded number of log lines, and /metrics counts every one', async () => {
    const lines: Array<{ msg: string; address?: string; suppressed?: number; total?: number }> = [];
    const logged = pino(
      { level: 'info' },
      { write: (l: string) => void lines.push(JSON.parse(l) as (typeof lines)[number]) },
    );
    const server = await startRelayServer({
      host: '127.0.0.1',
      port: 0,
      udpPort: 0,
      tickets,
      streams,
      logger: logged,
      maxConnectionsPerAddress: 2,
      trustedAddress: () => false,
    });
    const registry = new Registry();
    registerRelayMetrics(registry, { server: () => server.stats(), streams: () => streams.stats() });
    const FLOOD = 300;
    const held: Socket[] = [];
    let open = true;
    try {
      // Two are accepted and kept open; every one after them is refused.
      let closed = 0;
      for (let i = 0; i < FLOOD + 2; i++) {
        const sock = connect(server.port, '127.0.0.1');
        sock.on('error', () => undefined);
        sock.once('close', () => closed++);
        held.push(sock);
      }
      await expect.poll(() => closed, { timeout: 20_000 }).toBe(FLOOD);
      expect(server.stats().refused.per_address_limit).toBe(FLOOD);
      expect(server.stats().connections).toBe(2);
      const refusedLines = () => lines.filter((l) => l.msg.startsWith('relay: too many connections from one address'));
      // The first refusal is written with its address; the rest wait for the summary.
      expect(refusedLines()).toEqual([
        expect.objectContaining({ msg: 'relay: too many connections from one address', address: '127.0.0.1' }),
      ]);
      const text = await registry.metrics();
      expect(text).toMatch(
        new RegExp(`^edge_gateway_relay_connections_refused_total\\{reason="per_address_limit"\\} ${FLOOD}$`, 'm'),
      );
      await server.close();
      open = false;
      // At close the summary accounts for the rest: two lines for the whole flood.
      expect(refusedLines()).toHaveLength(2);
      expect(refusedLines()[1]).toMatchObject({ suppressed: FLOOD - 1, total: FLOOD });
    } finally {
      for (const s of held) s.destroy();
      if (open) await server.close();
    }
  });

  it('a request failing unexpectedly, repeated at will, is logged once (the rest in a summary)', async () => {
    const lines: Array<{ msg: string; method?: string; suppressed?: number }> = [];
    const logged = pino(
      { level: 'info' },
      { write: (l: string) => void lines.push(JSON.parse(l) as (typeof lines)[number]) },
    );
    const broken = new RelayStreams({
      locate: () => {
        throw new Error('the camera table is unreadable');
      },
      logger,
      idleCloseS: 30,
    });
    const server = await startRelayServer({
      host: '127.0.0.1',
      port: 0,
      udpPort: 0,
      tickets,
      streams: broken,
      logger: logged,
    });
    const client = await TestRtspClient.open(server.port);
    try {
      for (let i = 0; i < 30; i++) expect((await client.request('DESCRIBE', url(server))).status).toBe(500);
      expect(lines.filter((l) => l.msg.startsWith('relay: request failed'))).toEqual([
        expect.objectContaining({ msg: 'relay: request failed', method: 'DESCRIBE' }),
      ]);
    } finally {
      client.close();
      await server.close();
      broken.close();
    }
    expect(lines.filter((l) => l.msg.startsWith('relay: request failed'))[1]).toMatchObject({ suppressed: 29 });
  });

  it('closes a connection that sends half a request and then nothing', async () => {
    const sock = connect(relay.port, '127.0.0.1');
    sock.on('error', () => undefined);
    const closed = new Promise<void>((r) => sock.once('close', () => r()));
    sock.write('DESCRIBE rtsp://127.0.0.1/live/x RTSP/1.0\r\nCSeq: 1\r\n'); // no blank line, ever
    await closed; // the 1 s session timeout doubles as the idle limit of a connection playing nothing
    expect(sock.destroyed).toBe(true);
  });

  it('disconnects a viewer that stops reading, while another keeps playing', async () => {
    const fine = await TestRtspClient.open(strict.port);
    const stalled = spawn('/usr/bin/python3', [STALLED_VIEWER, String(strict.port), url(strict, 'main')], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      await fine.play(url(strict, 'main'));
      await new Promise<void>((resolve, reject) => {
        stalled.stdout.once('data', () => resolve());
        stalled.once('exit', (code) => reject(new Error(`the stalled viewer exited with ${code}`)));
      });
      await expect.poll(() => slowStreams.stats().evicted, { timeout: 20_000 }).toBe(1);
      expect(strict.stats().sessions.tcp).toBe(1); // the stalled one's session ended with its connection
      const before = fine.frames.length;
      await fine.waitForFrames(0, before + 30);
    } finally {
      stalled.kill();
      fine.close();
    }
  });

  it("ends a viewer's session at max_session_s by closing its connection, but not the recorder's", async () => {
    const client = await TestRtspClient.open(short.port);
    const recorder = await TestRtspClient.open(short.port);
    const recorderUrl = `rtsp://127.0.0.1:${short.port}/live/${tickets.issue({ deviceId: 'dev1', profile: 'sub', expiresAt: Date.now() + 60_000, recorder: true })}`;
    try {
      await client.play(url(short));
      await recorder.play(recorderUrl);
      await client.waitForFrames(0, 1);
      await client.closed; // maxSessionS: 2
      expect(client.frames.length).toBeGreaterThan(0);
      // The recorder's session goes on past it.
      const before = recorder.frames.length;
      await recorder.waitForFrames(0, before + 20);
      expect(recorder.socket.destroyed).toBe(false);
    } finally {
      client.close();
      recorder.close();
    }
  });

  it.each([
    ['127.0.0.1', true],
    ['127.1.2.3', true],
    ['::1', true],
    ['::ffff:127.0.0.1', true],
    ['192.168.1.20', false],
    ['::ffff:10.0.0.7', false],
    ['fe80::1', false],
    ['1127.0.0.1', false],
  ])('takes %s for loopback: %s (recorder tickets work from loopback only)', (address, loopback) => {
    expect(isLoopbackAddress(address)).toBe(loopback);
  });

  it('closes the camera session idle_close_s after its last reader leaves, and opens it again for the next', async () => {
    const locate = (_id: string, profile: 'main' | 'sub') => ({
      url: camera.url(0, profile),
      username: 'admin',
      password: 'relay-test',
    });
    const idle = new RelayStreams({ locate, logger, idleCloseS: 1 });
    const server = await startRelayServer({ host: '127.0.0.1', port: 0, udpPort: 0, tickets, streams: idle, logger });
    try {
      for (let round = 0; round < 2; round++) {
        const client = await TestRtspClient.open(server.port);
        await client.play(url(server));
        await client.waitForFrames(0, 5);
        expect(idle.openCount).toBe(1);
        client.close();
        await expect.poll(() => idle.openCount, { timeout: 5000 }).toBe(0);
      }
    } finally {
      await server.close();
      idle.close();
    }
  });

  it('survives a fuzzed byte stream on many connections, then serves a real client', async () => {
    let seed = 42;
    const rand = (n: number) => ((seed = (seed * 1_103_515_245 + 12_345) >>> 0) >>> 8) % n;
    const valid = [
      'OPTIONS * RTSP/1.0\r\nCSeq: 1\r\n\r\n',
      `DESCRIBE ${url(relay)} RTSP/1.0\r\nCSeq: 2\r\n\r\n`,
      `SETUP ${url(relay)}/trackID=0 RTSP/1.0\r\nCSeq: 3\r\nTransport: RTP/AVP/TCP;unicast;interleaved=0-1\r\n\r\n`,
      `PLAY ${url(relay)} RTSP/1.0\r\nCSeq: 4\r\nSession: 0123456789abcdef\r\n\r\n`,
      `GET_PARAMETER ${url(relay)} RTSP/1.0\r\nCSeq: 5\r\nContent-Length: 4\r\n\r\nping`,
    ];
    const mutate = (text: string): Buffer => {
      const bytes = Buffer.from(text, 'latin1');
      for (let i = 0, n = 1 + rand(6); i < n; i++) {
        const at = rand(bytes.length);
        const op = rand(4);
        if (op === 0) bytes[at] = rand(256);
        else if (op === 1) bytes[at] = [0x0d, 0x0a, 0x3a, 0x20, 0x24, 0x00][rand(6)]!;
        else if (op === 2) return Buffer.concat([bytes.subarray(0, at), randomBytes(rand(64)), bytes.subarray(at)]);
        else return bytes.subarray(0, at);
      }
      return bytes;
    };
    for (let round = 0; round < 150; round++) {
      const input =
        rand(5) === 0
          ? randomBytes(1 + rand(3000))
          : Buffer.concat(Array.from({ length: 1 + rand(3) }, () => mutate(valid[rand(valid.length)]!)));
      const answer = await new Promise<string>((resolve) => {
        const sock = connect(relay.port, '127.0.0.1', () => {
          sock.write(input);
          // Let the relay answer what it can, then hang up (a half-open peer is the idle test's job).
          setTimeout(() => sock.end(), 50);
        });
        let data = '';
        sock.on('data', (d) => (data += d.toString('latin1')));
        sock.on('error', () => undefined);
        sock.on('close', () => resolve(data));
      });
      // Whatever it answered is a well-formed sequence of RTSP answers (or interleaved data).
      for (const line of answer.split('\r\n').filter((l) => l.startsWith('RTSP/')))
        expect(line).toMatch(/^RTSP\/1\.0 [1-5]\d\d [A-Za-z -]+$/);
    }
    const client = await TestRtspClient.open(relay.port);
    try {
      expect((await client.play(url(relay))).play.status).toBe(200);
      await client.waitForFrames(0, 10);
    } finally {
      client.close();
    }
  });
  it('keeps a connection whose DESCRIBE waits on a slow camera open past the idle timeout, and answers it', async () => {
    // The camera takes 2.5 s to answer (404), more than the 1 s idle timeout of this relay: the
    // viewer must get an answer, not a connection closed while the relay itself was still busy.
    const held: Socket[] = [];
    const slowCamera = createServer((s) => {
      held.push(s);
      s.once('data', (d: Buffer) => {
        const cseq = /CSeq:\s*(\d+)/i.exec(d.toString('latin1'))?.[1] ?? '1';
        setTimeout(() => s.end(`RTSP/1.0 404 Not Found\r\nCSeq: ${cseq}\r\n\r\n`), 2500);
      });
    });
    await new Promise<void>((r) => slowCamera.listen(0, '127.0.0.1', r));
    const address = slowCamera.address();
    const cameraPort = typeof address === 'object' && address ? address.port : 0;
    const slowStreams = new RelayStreams({
      locate: () => ({ url: `rtsp://127.0.0.1:${cameraPort}/slow`, username: null, password: null }),
      logger,
      idleCloseS: 30,
    });
    const server = await startRelayServer({
      host: '127.0.0.1',
      port: 0,
      udpPort: 0,
      tickets,
      streams: slowStreams,
      logger,
      sessionTimeoutS: 1,
      sweepMs: 100,
      trustedAddress: () => false,
    });
    const client = await TestRtspClient.open(server.port);
    try {
      const answer = await client.request('DESCRIBE', url(server), { Accept: 'application/sdp' });
      expect(answer.status).toBe(503);
    } finally {
      client.close();
      await server.close();
      slowStreams.close();
      for (const s of held) s.destroy();
      slowCamera.close();
    }
  });
});
