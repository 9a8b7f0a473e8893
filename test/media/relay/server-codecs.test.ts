import { execFile, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { promisify } from 'node:util';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRelayServer, type RelayServer } from '../../../src/media/relay/server.js';
import { RelayStreams } from '../../../src/media/relay/streams.js';
import { TicketSigner } from '../../../src/media/ticket.js';
import { startSimulatedRtsp, type ExtraMount, type SimulatedRtsp } from '../../../src/onvif/simulator/rtsp.js';

// H.265 video and audio tracks (AAC, G.711 µ-law) through the relay, end to end with real clients:
// the simulated camera's extra mounts (gst-rtsp-server with Digest auth) behind RelayStreams and
// the relay server; ffprobe and ffmpeg play the ticketed URLs, a hand-written RTSP client looks at
// the SDP and the first packets, and `ss` counts the sessions the camera sees.

const run = promisify(execFile);
const USER = 'admin';
const PASSWORD = 'cam-secret-h265';
// Another loopback address than the relay's, so that the camera's address is recognisable in what
// the relay hands out.
const CAMERA_HOST = '127.0.0.33';
const logger = pino({ level: process.env.SIM_LOG ?? 'silent' });

interface Case {
  mount: ExtraMount;
  video: { codec_type: 'video'; codec_name: string; width: number; height: number };
  audio: { codec_type: 'audio'; codec_name: string; sample_rate: string; channels: number };
  rtpmaps: [RegExp, RegExp];
  keyframe: (payload: Buffer) => boolean;
}

const CASES: Case[] = [
  {
    mount: 'h265aac',
    video: { codec_type: 'video', codec_name: 'hevc', width: 640, height: 360 },
    audio: { codec_type: 'audio', codec_name: 'aac', sample_rate: '16000', channels: 1 },
    rtpmaps: [/^a=rtpmap:\d+ H265\/90000$/m, /^a=rtpmap:\d+ MPEG4-GENERIC\/16000\/1$/m],
    keyframe: h265Keyframe,
  },
  {
    mount: 'h264pcmu',
    video: { codec_type: 'video', codec_name: 'h264', width: 640, height: 360 },
    audio: { codec_type: 'audio', codec_name: 'pcm_mulaw', sample_rate: '8000', channels: 1 },
    rtpmaps: [/^a=rtpmap:\d+ H264\/90000$/m, /^a=rtpmap:0 PCMU\/8000(\/1)?$/m],
    keyframe: h264Keyframe,
  },
];

let camera: SimulatedRtsp;
let streams: RelayStreams;
let relay: RelayServer;
const signer = new TicketSigner(randomBytes(32));

beforeAll(async () => {
  camera = await startSimulatedRtsp({
    cameras: 1,
    host: CAMERA_HOST,
    port: 0,
    username: USER,
    password: PASSWORD,
    extraMounts: CASES.map((c) => c.mount),
    logger,
  });
  // The device id names the mount: the relay only ever sees "device X, profile main".
  streams = new RelayStreams({
    locate: (deviceId, profile) => {
      const c = CASES.find((k) => k.mount === deviceId);
      return c && profile === 'main' ? { url: camera.url(0, c.mount), username: USER, password: PASSWORD } : null;
    },
    logger,
    idleCloseS: 1,
  });
  relay = await startRelayServer({ host: '127.0.0.1', port: 0, tickets: signer, streams, logger });
});
afterAll(async () => {
  await relay?.close();
  streams?.close();
  await camera?.stop();
});

function streamUrl(mount: ExtraMount): string {
  return `rtsp://127.0.0.1:${relay.port}/live/${signer.issue({ deviceId: mount, profile: 'main', expiresAt: Date.now() + 300_000 })}`;
}

/** Established TCP connections to the camera's RTSP port (the camera's own view of its sessions). */
async function cameraConnections(): Promise<number> {
  const { stdout } = await run('ss', ['-Htn', 'state', 'established', `( dport = :${camera.port} )`]);
  return stdout.split('\n').filter((l) => l.trim()).length;
}

interface Exit {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a client to its end, whatever its exit code (execFile would throw on a non-zero one). */
function runClient(cmd: string, args: string[]): Promise<Exit> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 25_000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

// --- A minimal RTSP client, independent of the relay's own protocol code ---

interface Response {
  status: number;
  headers: Map<string, string>;
  body: string;
}

class RawRtsp {
  private buf = Buffer.alloc(0);
  private wake: (() => void) | null = null;
  private closed = false;
  private cseq = 0;
  private auth: ((method: string, uri: string) => string) | null = null;

  private constructor(private readonly sock: Socket) {
    sock.on('data', (d: Buffer) => {
      this.buf = Buffer.concat([this.buf, d]);
      this.wake?.();
    });
    sock.on('close', () => {
      this.closed = true;
      this.wake?.();
    });
    sock.on('error', () => sock.destroy());
  }

  static open(url: string): Promise<RawRtsp> {
    const u = new URL(url);
    return new Promise((resolve, reject) => {
      const sock = connect(Number(u.port), u.hostname, () => resolve(new RawRtsp(sock)));
      sock.once('error', reject);
    });
  }

  private async more(): Promise<void> {
    if (this.closed) throw new Error('connection closed');
    await new Promise<void>((r) => (this.wake = r));
    this.wake = null;
  }

  /** Sends a request and returns its answer, skipping interleaved packets; answers one Digest challenge. */
  async request(
    method: string,
    uri: string,
    headers: Record<string, string> = {},
    credentials?: { user: string; password: string },
  ): Promise<Response> {
    let res = await this.send(method, uri, headers);
    if (res.status === 401 && credentials) {
      const challenge = res.headers.get('www-authenticate') ?? '';
      const realm = /realm="([^"]*)"/.exec(challenge)?.[1];
      const nonce = /nonce="([^"]*)"/.exec(challenge)?.[1];
      if (!challenge.startsWith('Digest') || realm === undefined || nonce === undefined || /qop=/.test(challenge))
        throw new Error(`unexpected challenge: ${challenge}`);
      const md5 = (s: string) => createHash('md5').update(s).digest('hex');
      const ha1 = md5(`${credentials.user}:${realm}:${credentials.password}`);
      this.auth = (m, u) =>
        `Digest username="${credentials.user}", realm="${realm}", nonce="${nonce}", uri="${u}", response="${md5(`${ha1}:${nonce}:${md5(`${m}:${u}`)}`)}"`;
      res = await this.send(method, uri, headers);
    }
    return res;
  }

  private async send(method: string, uri: string, headers: Record<string, string>): Promise<Response> {
    const all: Record<string, string> = { CSeq: String(++this.cseq), ...headers };
    if (this.auth) all.Authorization = this.auth(method, uri);
    this.sock.write(
      `${method} ${uri} RTSP/1.0\r\n${Object.entries(all)
        .map(([k, v]) => `${k}: ${v}\r\n`)
        .join('')}\r\n`,
    );
    for (;;) {
      if (this.buf.length >= 4 && this.buf[0] === 0x24) {
        const end = 4 + this.buf.readUInt16BE(2);
        if (this.buf.length >= end) {
          this.buf = this.buf.subarray(end);
          continue;
        }
      } else {
        const head = this.buf.indexOf('\r\n\r\n');
        if (head >= 0) {
          const lines = this.buf.subarray(0, head).toString('latin1').split('\r\n');
          const status = Number(/^RTSP\/1\.0 (\d{3}) /.exec(lines[0] ?? '')?.[1]);
          const map = new Map<string, string>();
          for (const line of lines.slice(1)) {
            const colon = line.indexOf(':');
            map.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
          }
          const length = Number(map.get('content-length') ?? 0);
          if (this.buf.length >= head + 4 + length) {
            const body = this.buf.subarray(head + 4, head + 4 + length).toString('utf8');
            this.buf = this.buf.subarray(head + 4 + length);
            return { status, headers: map, body };
          }
        }
      }
      await this.more();
    }
  }

  /** The next interleaved packet (any answers in between are skipped). */
  async packet(): Promise<{ channel: number; data: Buffer }> {
    for (;;) {
      if (this.buf.length >= 4 && this.buf[0] === 0x24) {
        const end = 4 + this.buf.readUInt16BE(2);
        if (this.buf.length >= end) {
          const packet = { channel: this.buf[1] as number, data: Buffer.from(this.buf.subarray(4, end)) };
          this.buf = this.buf.subarray(end);
          return packet;
        }
      } else if (this.buf.length > 0 && this.buf[0] !== 0x24) {
        const head = this.buf.indexOf('\r\n\r\n');
        if (head >= 0) {
          const length = Number(
            /content-length:\s*(\d+)/i.exec(this.buf.subarray(0, head).toString('latin1'))?.[1] ?? 0,
          );
          if (this.buf.length >= head + 4 + length) {
            this.buf = this.buf.subarray(head + 4 + length);
            continue;
          }
        }
      }
      await this.more();
    }
  }

  close(): void {
    this.sock.destroy();
  }
}

/**
 * The camera's own DESCRIBE answer. gst-rtsp-server sometimes drops the connection of a DESCRIBE
 * that finds the shared stream being prepared, and answers 503 while the stream of a client that
 * just left is being torn down (the relay retries for the same reasons).
 */
async function describeCamera(mount: ExtraMount): Promise<Response> {
  for (let attempt = 1; ; attempt++) {
    const cam = await RawRtsp.open(camera.url(0, mount));
    try {
      const res = await cam.request(
        'DESCRIBE',
        camera.url(0, mount),
        { Accept: 'application/sdp' },
        { user: USER, password: PASSWORD },
      );
      if (res.status !== 503 || attempt >= 4) return res;
    } catch (err) {
      if (attempt >= 4 || !/connection closed/.test((err as Error).message)) throw err;
    } finally {
      cam.close();
    }
    await new Promise((r) => setTimeout(r, 300 * 2 ** (attempt - 1)));
  }
}

/** DESCRIBE, SETUP of every track (interleaved 2i-2i+1) and PLAY on the relay; returns the client and the SDP. */
async function play(url: string): Promise<{ client: RawRtsp; sdp: string }> {
  const client = await RawRtsp.open(url);
  const described = await client.request('DESCRIBE', url, { Accept: 'application/sdp' });
  expect(described.status).toBe(200);
  const tracks = [...described.body.matchAll(/^a=control:(trackID=\d+)\s*$/gm)].map((m) => m[1] as string);
  expect(tracks).toEqual(['trackID=0', 'trackID=1']);
  let session = '';
  for (const [i, track] of tracks.entries()) {
    const res = await client.request('SETUP', `${url}/${track}`, {
      Transport: `RTP/AVP/TCP;unicast;interleaved=${2 * i}-${2 * i + 1}`,
      ...(session ? { Session: session } : {}),
    });
    expect(res.status).toBe(200);
    session = (res.headers.get('session') ?? '').split(';')[0] ?? '';
  }
  expect((await client.request('PLAY', url, { Session: session, Range: 'npt=now-' })).status).toBe(200);
  return { client, sdp: described.body };
}

/** An RTP packet's payload and payload type (header, CSRCs and extension skipped). */
function rtp(packet: Buffer): { payloadType: number; payload: Buffer } {
  let at = 12 + 4 * ((packet[0] as number) & 0x0f);
  if (((packet[0] as number) & 0x10) !== 0) at += 4 + 4 * packet.readUInt16BE(at + 2);
  return { payloadType: (packet[1] as number) & 0x7f, payload: packet.subarray(at) };
}

/** RFC 7798: a VPS, or the first slice of an IRAP picture, alone, first in an AP, or in a starting FU. */
function h265Keyframe(p: Buffer): boolean {
  const type = ((p[0] as number) >> 1) & 0x3f;
  const starts = (t: number, firstByte: number | undefined) =>
    t === 32 || (t >= 16 && t <= 21 && ((firstByte ?? 0) & 0x80) !== 0);
  if (type === 48) return starts(((p[4] as number) >> 1) & 0x3f, p[6]);
  if (type === 49) return ((p[2] as number) & 0x80) !== 0 && starts((p[2] as number) & 0x3f, p[3]);
  return starts(type, p[2]);
}

/** RFC 6184: an SPS, or the first slice of an IDR picture, alone, first in a STAP-A, or in a starting FU-A. */
function h264Keyframe(p: Buffer): boolean {
  const type = (p[0] as number) & 0x1f;
  const starts = (t: number, firstByte: number | undefined) => t === 7 || (t === 5 && ((firstByte ?? 0) & 0x80) !== 0);
  if (type === 24) return starts((p[3] as number) & 0x1f, p[4]);
  if (type === 28) return ((p[1] as number) & 0x80) !== 0 && starts((p[1] as number) & 0x1f, p[2]);
  return starts(type, p[1]);
}

describe('H.265 and audio tracks through the relay', () => {
  it.each(CASES)('ffprobe over TCP sees the video and audio of $mount with their parameters', async (c) => {
    const { stdout } = await run(
      'ffprobe',
      [
        '-v',
        'error',
        '-rtsp_transport',
        'tcp',
        '-show_entries',
        'stream=codec_type,codec_name,width,height,sample_rate,channels',
        '-of',
        'json',
        streamUrl(c.mount),
      ],
      { timeout: 20_000 },
    );
    const { streams: found } = JSON.parse(stdout) as { streams: Array<Record<string, unknown>> };
    expect(found).toEqual([c.video, c.audio]);
  });

  it.each(CASES)('ffmpeg decodes 2 s of both the video and the audio of $mount without an error', async (c) => {
    // Two outputs of one decode: the null muxer refuses timestamps that go backwards (an error on
    // stderr), and framecrc lists every decoded frame by stream, so both tracks must have been decoded.
    // From a closed camera session and for 5 s: the camera's first sender reports come 1–4 s into
    // it, and ffmpeg then moves from RTP-Info's time base to theirs; an RTP-Info whose tracks name
    // different instants made the audio jump back there (seen in CI).
    await expect.poll(cameraConnections, { timeout: 10_000 }).toBe(0);
    const both = ['-map', '0:v', '-map', '0:a', '-t', '5'];
    const res = await runClient('ffmpeg', [
      '-v',
      'error',
      '-rtsp_transport',
      'tcp',
      '-i',
      streamUrl(c.mount),
      ...both,
      '-f',
      'null',
      '-',
      ...both,
      '-f',
      'framecrc',
      'pipe:1',
    ]);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const frames = res.stdout.split('\n').filter((l) => /^\d+,/.test(l));
    expect(frames.filter((l) => l.startsWith('0,')).length).toBeGreaterThan(0);
    expect(frames.filter((l) => l.startsWith('1,')).length).toBeGreaterThan(0);
  });

  it.each(CASES)('the SDP for $mount keeps both codecs and names neither the camera nor its account', async (c) => {
    // What the camera itself says, so that the checks below test the rewrite and not the camera.
    const own = await describeCamera(c.mount);
    expect(own.status).toBe(200);
    expect(own.body).toContain(CAMERA_HOST);
    expect(own.body).toMatch(/a=control:stream=\d/);

    const url = streamUrl(c.mount);
    const client = await RawRtsp.open(url);
    try {
      const res = await client.request('DESCRIBE', url, { Accept: 'application/sdp' });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/sdp');
      expect(res.headers.get('content-base')).toBe(`${url}/`);
      const sdp = res.body;
      expect(sdp).toMatch(/^m=video 0 RTP\/AVP \d+\r$/m);
      expect(sdp).toMatch(/^m=audio 0 RTP\/AVP \d+\r$/m);
      for (const rtpmap of c.rtpmaps) expect(sdp).toMatch(rtpmap);
      if (c.mount === 'h265aac') {
        // What a decoder needs: parameter sets and the AAC config, passed through untouched.
        expect(sdp).toMatch(/^a=fmtp:\d+ .*sprop-vps=[\w+/=]+;.*sprop-sps=[\w+/=]+;.*sprop-pps=[\w+/=]+/m);
        expect(sdp).toMatch(/^a=fmtp:\d+ .*config=1408/m);
      }
      expect([...sdp.matchAll(/^a=control:(.*)\r$/gm)].map((m) => m[1])).toEqual(['*', 'trackID=0', 'trackID=1']);
      for (const secret of [CAMERA_HOST, USER, PASSWORD, '/cam0', 'stream=']) expect(sdp).not.toContain(secret);
      expect(sdp).not.toMatch(new RegExp(`:${camera.port}(?!\\d)`)); // a=ssrc:<digits> may begin with the same digits
    } finally {
      client.close();
    }
  });

  it.each(CASES)(
    'a viewer joining $mount while another plays starts on a keyframe and gets the audio too',
    async (c) => {
      const first = await play(streamUrl(c.mount));
      try {
        // Once the first viewer has a video packet, the relay has seen a keyframe and cached its group.
        for (let p = await first.client.packet(); p.channel !== 0; p = await first.client.packet());
        const second = await play(streamUrl(c.mount));
        try {
          const pts = [...second.sdp.matchAll(/^m=(video|audio) 0 RTP\/AVP (\d+)/gm)].map((m) => Number(m[2]));
          let video: Buffer | null = null;
          let nextPicture: Buffer | null = null;
          let audio: Buffer | null = null;
          while (!nextPicture || !audio) {
            const p = await second.client.packet();
            if (p.channel === 2) audio ??= p.data;
            else if (p.channel !== 0) continue;
            else if (!video) video = p.data;
            else if (p.data.readUInt32BE(4) !== video.readUInt32BE(4)) nextPicture ??= p.data;
          }
          expect(c.keyframe(rtp(video as Buffer).payload)).toBe(true);
          // The picture after it is not a keyframe (one a second): the check above can tell them apart.
          expect(c.keyframe(rtp(nextPicture).payload)).toBe(false);
          expect(rtp(video as Buffer).payloadType).toBe(pts[0]);
          expect(rtp(audio).payloadType).toBe(pts[1]);
          expect(rtp(audio).payload.length).toBeGreaterThan(0);
        } finally {
          second.client.close();
        }
      } finally {
        first.client.close();
      }
    },
  );

  it('three viewers of the H.265 stream share one camera session', async () => {
    // Earlier tests' camera sessions end idleCloseS after their last viewer; start from none.
    await expect.poll(cameraConnections, { timeout: 10_000 }).toBe(0);
    const url = streamUrl('h265aac');
    const viewers = Array.from({ length: 3 }, () => {
      // No -t: each plays until it is told to quit (q on stdin), so that all three play at once.
      const child = spawn(
        'ffmpeg',
        [
          '-v',
          'error',
          '-nostats',
          '-progress',
          'pipe:1',
          '-rtsp_transport',
          'tcp',
          '-i',
          url,
          '-map',
          '0:v',
          '-map',
          '0:a',
          '-f',
          'null',
          '-',
        ],
        {
          stdio: ['pipe', 'pipe', 'pipe'],
        },
      );
      const state = { frames: 0, stderr: '', exit: new Promise<number | null>((r) => child.once('exit', r)) };
      child.stdout.on('data', (d: Buffer) => {
        for (const m of d.toString().matchAll(/^frame=(\d+)$/gm)) state.frames = Number(m[1]);
      });
      child.stderr.on('data', (d: Buffer) => (state.stderr += d.toString()));
      return { child, state };
    });
    try {
      await expect.poll(() => viewers.map((v) => v.state.frames > 0), { timeout: 20_000 }).toEqual([true, true, true]);
      expect(relay.connections).toBe(3);
      expect(streams.openCount).toBe(1);
      expect(await cameraConnections()).toBe(1);
      for (const v of viewers) v.child.stdin.end('q');
      expect(await Promise.all(viewers.map((v) => v.state.exit))).toEqual([0, 0, 0]);
      expect(viewers.map((v) => v.state.stderr)).toEqual(['', '', '']);
    } finally {
      for (const v of viewers) v.child.kill();
    }
    await expect.poll(cameraConnections, { timeout: 10_000 }).toBe(0);
  });
});
