import { once } from 'node:events';
import { rmSync } from 'node:fs';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { createServer as createTlsServer } from 'node:tls';
import { pino } from 'pino';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadTlsCredentials } from '../../../src/api/tls.js';
import { probeCameraStream } from '../../../src/media/relay/probe.js';
import { UpstreamSession } from '../../../src/media/relay/upstream.js';
import { SecretBox } from '../../../src/platform/secret-box.js';
import { UpstreamError } from '../../../src/media/relay/errors.js';
import { readRtpHeader } from '../../../src/media/rtp.js';
import { parseTransport } from '../../../src/media/rtsp/index.js';
import { AuthCamera, type AcceptedAuth, type AuthCameraOptions, type AuthScheme } from '../../support/auth-camera.js';
import { captureRtp } from '../../support/rtp-capture.js';
import { tempDir } from '../../support/temp-dir.js';

// The relay's camera-side client logging in with each scheme cameras use. gst-rtsp-server (see
// upstream.test.ts) only offers Digest MD5, so these run against test/support/auth-camera.ts,
// which checks the credentials with the project's own verifier and records what it accepted. Also
// the health check of a plain RTSP camera (DESCRIBE only) and rtsps:// (TLS) to such a camera.

const logger = pino({ level: 'silent' });
const USERNAME = 'admin';
// Distinctive enough that finding it in the captured bytes cannot be a coincidence.
const PASSWORD = 'Zq7-open-sesame-9xK';
const BASIC_TOKEN = Buffer.from(`${USERNAME}:${PASSWORD}`).toString('base64');

let packets: Buffer[];
let ssrc: number;
let payloadType: number;

beforeAll(async () => {
  ({ packets } = await captureRtp(['-c:v', 'libx264', '-g', '5', '-bf', '0']));
  const h = readRtpHeader(packets[0] as Buffer);
  if (h === null) throw new Error('ffmpeg sent no RTP');
  ssrc = h.ssrc;
  payloadType = h.payloadType;
});

const cameras: AuthCamera[] = [];
const sessions: UpstreamSession[] = [];

afterEach(async () => {
  for (const up of sessions.splice(0)) up.close();
  await Promise.all(cameras.splice(0).map((c) => c.close()));
});

async function startCamera(opts: Omit<AuthCameraOptions, 'packets' | 'username' | 'password'>): Promise<AuthCamera> {
  const camera = await AuthCamera.start({ packets, username: USERNAME, password: PASSWORD, ...opts });
  cameras.push(camera);
  return camera;
}

interface Opened {
  up: UpstreamSession;
  rtp: Array<{ track: number; packet: Buffer }>;
  rtcp: Array<{ track: number; packet: Buffer }>;
  closes: UpstreamError[];
}

async function open(
  camera: AuthCamera,
  username: string | null = USERNAME,
  password: string | null = PASSWORD,
): Promise<Opened> {
  const rtp: Opened['rtp'] = [];
  const rtcp: Opened['rtcp'] = [];
  const closes: UpstreamError[] = [];
  const up = await UpstreamSession.open({
    url: camera.url,
    username,
    password,
    logger,
    // Views into the received chunk: copied, as the relay's receivers do.
    onPacket: (track, packet) => rtp.push({ track, packet: Buffer.from(packet) }),
    onRtcp: (track, packet) => rtcp.push({ track, packet: Buffer.from(packet) }),
    onClose: (err) => closes.push(err),
  });
  sessions.push(up);
  return { up, rtp, rtcp, closes };
}

function openFails(camera: AuthCamera, username: string | null, password: string | null): Promise<UpstreamSession> {
  return UpstreamSession.open({
    url: camera.url,
    username,
    password,
    logger,
    onPacket: () => undefined,
    onClose: () => undefined,
  });
}

/** Packets that are RTP of the camera's stream, as sent (payload type and SSRC of the capture). */
function streamPackets(got: Opened['rtp']): number {
  return got.filter(({ packet }) => {
    const h = readRtpHeader(packet);
    return h !== null && h.ssrc === ssrc && h.payloadType === payloadType;
  }).length;
}

type Expected = Pick<AcceptedAuth, 'scheme' | 'algorithm' | 'qop'>;

interface Case {
  name: string;
  schemes: AuthScheme[];
  oneHeader?: boolean;
  qop?: boolean;
  expected: Expected;
}

const md5: Expected = { scheme: 'Digest', algorithm: 'MD5', qop: 'auth' };
const sha256: Expected = { scheme: 'Digest', algorithm: 'SHA-256', qop: 'auth' };

const CASES: Case[] = [
  { name: 'Basic', schemes: ['basic'], expected: { scheme: 'Basic', algorithm: null, qop: null } },
  { name: 'Digest MD5', schemes: ['digest-md5'], expected: md5 },
  {
    name: 'Digest MD5 without qop (RFC 2069, as live555 cameras send)',
    schemes: ['digest-md5'],
    qop: false,
    expected: { ...md5, qop: null },
  },
  { name: 'Digest SHA-256', schemes: ['digest-sha256'], expected: sha256 },
  { name: 'Digest SHA-256 without qop', schemes: ['digest-sha256'], qop: false, expected: { ...sha256, qop: null } },
  { name: 'Digest MD5 and SHA-256 offered, MD5 first', schemes: ['digest-md5', 'digest-sha256'], expected: sha256 },
  { name: 'Digest SHA-256 and MD5 offered, SHA-256 first', schemes: ['digest-sha256', 'digest-md5'], expected: sha256 },
  {
    name: 'Digest MD5 and SHA-256 in one WWW-Authenticate header',
    schemes: ['digest-md5', 'digest-sha256'],
    oneHeader: true,
    expected: sha256,
  },
  { name: 'Basic and Digest MD5 offered', schemes: ['basic', 'digest-md5'], expected: md5 },
];

describe.each(CASES)('UpstreamSession against a camera offering $name', ({ schemes, oneHeader, qop, expected }) => {
  const cameraOptions = (): Parameters<typeof startCamera>[0] => ({
    schemes,
    ...(oneHeader !== undefined ? { oneHeader } : {}),
    ...(qop !== undefined ? { qop } : {}),
  });

  it(`logs in on one connection with ${[expected.scheme, expected.algorithm].filter(Boolean).join(' ')} and receives the camera's RTP on track 0`, async () => {
    const camera = await startCamera(cameraOptions());
    const { up, rtp, closes } = await open(camera);

    expect(up.tracks).toHaveLength(1);
    expect(up.tracks[0]?.codec).toMatchObject({ media: 'video', encoding: 'H264', clockRate: 90000 });
    expect(up.tracks[0]?.codec.fmtp.get('sprop-parameter-sets')).toMatch(/^Z[A-Za-z0-9+/=]+,[A-Za-z0-9+/=]+$/); // SPS, PPS
    await expect.poll(() => streamPackets(rtp), { timeout: 10_000 }).toBeGreaterThanOrEqual(20);
    expect(rtp.every(({ track }) => track === 0)).toBe(true);

    // The first request was refused (so the camera really asked), then every one was accepted.
    expect(camera.requests.map((r) => `${r.method} ${r.status}`)).toEqual([
      'OPTIONS 401',
      'OPTIONS 200',
      'DESCRIBE 200',
      'SETUP 200',
      'PLAY 200',
    ]);
    expect(camera.accepted.map((a) => a.method)).toEqual(['OPTIONS', 'DESCRIBE', 'SETUP', 'PLAY']);
    for (const a of camera.accepted) expect(a).toMatchObject(expected);
    expect(camera.connections).toBe(1);

    up.close();
    expect(closes.map((e) => e.kind)).toEqual(['closed']);
    // TEARDOWN goes out with credentials too; a camera would otherwise keep the session open.
    await expect.poll(() => camera.accepted.at(-1)).toMatchObject({ method: 'TEARDOWN', ...expected });
  });

  it('rejects a wrong password as unauthorized, without any request getting through', async () => {
    const camera = await startCamera(cameraOptions());
    const err = await openFails(camera, USERNAME, 'not-the-password').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UpstreamError);
    expect(err).toMatchObject({ kind: 'unauthorized' });
    expect(camera.accepted).toEqual([]);
    expect(camera.requests.map((r) => r.status)).toEqual([401, 401]);
    // Proves the wrong password was sent (answered), not that the client gave up beforehand.
    expect(camera.requests[1]?.headers.get('authorization')).toMatch(new RegExp(`^${expected.scheme} `));
  });

  if (expected.scheme === 'Digest') {
    it('never sends the password, in clear or as Basic', async () => {
      const camera = await startCamera(cameraOptions());
      const { up } = await open(camera);
      up.close();
      await expect.poll(() => camera.accepted.at(-1)?.method).toBe('TEARDOWN');
      const sent = camera.received().toString('latin1');
      expect(sent).toContain('Authorization: Digest '); // what is searched below is really the login
      expect(sent).not.toContain(PASSWORD);
      expect(sent).not.toContain(BASIC_TOKEN);
      expect(sent).not.toMatch(/Authorization: Basic/i);
    });
  }
});

describe('UpstreamSession logging in', () => {
  it('rejects an unknown user as unauthorized', async () => {
    const camera = await startCamera({ schemes: ['digest-sha256'] });
    await expect(openFails(camera, 'root', PASSWORD)).rejects.toMatchObject({ kind: 'unauthorized' });
    expect(camera.accepted).toEqual([]);
  });

  it('reports a camera that wants credentials it was not given as unauthorized, without sending any', async () => {
    const camera = await startCamera({ schemes: ['digest-md5', 'basic'] });
    await expect(openFails(camera, null, null)).rejects.toMatchObject({ kind: 'unauthorized' });
    expect(camera.requests.map((r) => `${r.method} ${r.status}`)).toEqual(['OPTIONS 401']);
    expect(camera.received().toString('latin1')).not.toMatch(/Authorization/i);
  });

  it('keeps the session alive with authenticated OPTIONS reusing the nonce with a growing count', async () => {
    // timeout=2 s puts the client's keep-alive at its 1 s floor.
    const camera = await startCamera({ schemes: ['digest-md5', 'digest-sha256'], sessionTimeout: 2 });
    await open(camera);
    const setUp = camera.accepted.length;
    // The camera refuses a nonce count that does not grow, so an accepted keep-alive proves it grew.
    await expect
      .poll(() => camera.accepted.slice(setUp), { timeout: 10_000 })
      .toContainEqual(expect.objectContaining({ method: 'OPTIONS', ...sha256 }));
    const keepAlive = camera.requests.slice(5);
    expect(keepAlive.map((r) => r.status)).not.toContain(401);
    expect(keepAlive.every((r) => r.headers.has('session'))).toBe(true);
  });

  // FAILS with src/media/relay/upstream.ts as it is: startKeepAlive() drops the answer of its
  // OPTIONS, so a 401 with stale=TRUE (the camera ended its nonce's lifetime) is never answered
  // and every later request reuses the dead nonce. See the report for the fix.
  it('logs in again when the camera expires its nonce mid-session', async () => {
    const camera = await startCamera({ schemes: ['digest-sha256'], sessionTimeout: 2 });
    await open(camera);
    camera.expireNonces();
    const expiredAt = camera.accepted.length;
    await expect.poll(() => camera.requests.some((r) => r.status === 401), { timeout: 10_000 }).toBe(true);
    await expect
      .poll(() => camera.accepted.slice(expiredAt), { timeout: 10_000 })
      .toContainEqual(expect.objectContaining({ method: 'OPTIONS', ...sha256 }));
  });
});

describe('UpstreamSession transport', () => {
  it('follows a camera that answers SETUP with other interleaved channels than asked', async () => {
    const camera = await startCamera({ schemes: ['digest-sha256'], interleaved: [6, 7] });
    const { up, rtp, rtcp } = await open(camera);
    const setup = camera.requests.find((r) => r.method === 'SETUP');
    expect(parseTransport(setup?.headers.get('transport') ?? '')[0]?.interleaved).toEqual([0, 1]);
    expect(up.tracks[0]?.channel).toBe(6);
    await expect.poll(() => streamPackets(rtp), { timeout: 10_000 }).toBeGreaterThanOrEqual(20);
    expect(rtp.every(({ track }) => track === 0)).toBe(true);
    // The camera sends a sender report on 7 at the start of every loop of its packets.
    await expect.poll(() => rtcp.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(1);
    expect(rtcp.map(({ track, packet }) => [track, packet[1]])).toContainEqual([0, 200]);
  });

  for (const how of ['end', 'reset'] as const) {
    it(`reports a camera that drops the connection mid-stream (${how === 'end' ? 'FIN' : 'RST'}) once, as closed`, async () => {
      const camera = await startCamera({ schemes: ['digest-sha256'] });
      const { up, rtp, closes } = await open(camera);
      await expect.poll(() => streamPackets(rtp), { timeout: 10_000 }).toBeGreaterThanOrEqual(5);
      expect(closes).toEqual([]);
      camera.drop(how);
      await expect.poll(() => closes.length, { timeout: 10_000 }).toBe(1);
      expect(closes[0]).toBeInstanceOf(UpstreamError);
      expect(closes[0]?.kind).toBe('closed');
      up.close(); // already closed: must not report again
      expect(closes).toHaveLength(1);
    });
  }
});

describe("probeCameraStream (a plain RTSP camera's health check)", () => {
  const probe = probeCameraStream({ logger, timeoutMs: 5000 });

  it('is online when the camera describes its stream, and sets up no session there', async () => {
    const camera = await startCamera({ schemes: ['digest-md5'] });
    expect(await probe({ url: camera.url, username: USERNAME, password: PASSWORD })).toEqual({
      status: 'online',
      reason: null,
    });
    expect(camera.requests.map((r) => `${r.method} ${r.status}`)).toEqual([
      'OPTIONS 401',
      'OPTIONS 200',
      'DESCRIBE 200',
    ]);
    expect(camera.received().toString('latin1')).not.toContain(PASSWORD);
  });

  it('is unauthorized with a wrong password or none, offline at a path the camera lacks or where nothing listens', async () => {
    const camera = await startCamera({ schemes: ['digest-sha256'] });
    expect(await probe({ url: camera.url, username: USERNAME, password: 'nope' })).toMatchObject({
      status: 'unauthorized',
      reason: expect.stringMatching(/refused the credentials/),
    });
    expect(await probe({ url: camera.url, username: null, password: null })).toMatchObject({ status: 'unauthorized' });
    expect(await probe({ url: `${camera.url}/other`, username: USERNAME, password: PASSWORD })).toMatchObject({
      status: 'offline',
      reason: expect.stringMatching(/404/),
    });
    const closed = createServer();
    closed.listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const { port } = closed.address() as AddressInfo;
    await new Promise((r) => closed.close(r));
    expect(await probe({ url: `rtsp://127.0.0.1:${port}/live`, username: null, password: null })).toMatchObject({
      status: 'offline',
      reason: expect.stringMatching(/cannot connect/),
    });
  });

  it('opens an rtsps:// stream over TLS, the camera taken with its self-signed certificate', async () => {
    const camera = await startCamera({ schemes: ['digest-sha256'] });
    const dir = tempDir('eg-rtsps-');
    const front = await tlsFront(dir, camera);
    try {
      const url = `rtsps://127.0.0.1:${front.port}/cam/main`;
      expect(await probe({ url, username: USERNAME, password: PASSWORD })).toEqual({ status: 'online', reason: null });
      const rtp: Buffer[] = [];
      const up = await UpstreamSession.open({
        url,
        username: USERNAME,
        password: PASSWORD,
        logger,
        onPacket: (_track, packet) => rtp.push(Buffer.from(packet)),
        onClose: () => undefined,
      });
      sessions.push(up);
      await expect.poll(() => rtp.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(20);
      // The probe and the session both came through the TLS front (a plain connection would fail its handshake).
      expect(front.connections()).toBeGreaterThanOrEqual(2);
    } finally {
      await front.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** A TLS front for the camera, as a camera serving rtsps:// is: a self-signed certificate (openssl), the bytes passed through. */
async function tlsFront(
  dir: string,
  camera: AuthCamera,
): Promise<{ port: number; connections: () => number; close: () => Promise<void> }> {
  const { cert, key } = await loadTlsCredentials({
    certFile: null,
    keyFile: null,
    dataDir: dir,
    secretBox: SecretBox.openInDir(dir),
  });
  const target = new URL(camera.url);
  let connections = 0;
  const sockets = new Set<Socket>();
  const server = createTlsServer({ cert, key }, (client) => {
    connections++;
    const inner = connect(Number(target.port), target.hostname);
    for (const s of [client, inner]) {
      sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => sockets.delete(s));
    }
    client.pipe(inner).pipe(client);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as AddressInfo).port,
    connections: () => connections,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}
