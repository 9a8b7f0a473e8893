import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TicketSigner } from '../../../src/media/ticket.js';
import { startFleet, type Fleet } from '../../../src/onvif/simulator/fleet.js';
import { SecretBox } from '../../../src/platform/secret-box.js';
import { firstOnlineDevice, startTestGateway, type TestGateway } from '../../support/gateway.js';

// The live-stream path end to end: a simulated camera (ffmpeg H.264 served by gst-rtsp-server with
// Digest auth) adopted by the started gateway; GET /v1/devices/{id}/stream gives a ticketed URL on
// the gateway's relay; real clients (ffprobe, ffmpeg) play it; the camera sees one session.

const run = promisify(execFile);
let fleet: Fleet;
/** The camera's RTSP server after the restart test brought it back (the fleet's own one is gone). */
let restarted: Awaited<ReturnType<typeof import('../../../src/onvif/simulator/rtsp.js').startSimulatedRtsp>> | null =
  null;
let t: TestGateway;
let deviceId = '';
const logLines: string[] = [];

beforeAll(async () => {
  fleet = await startFleet({
    count: 1,
    host: '127.0.0.1',
    basePort: 0,
    username: 'admin',
    password: 'cam-secret-7',
    discovery: null,
    rtspPort: 0,
    logger: pino({ level: process.env.SIM_LOG ?? 'silent' }),
  });
  t = await startTestGateway(
    {
      cameras: [
        { name: 'Porch', onvif_url: fleet.cameras[0]!.deviceServiceUrl, username: 'admin', password: 'cam-secret-7' },
      ],
      rtsp: { idle_close_s: 1 },
    },
    { logLines },
  );
  deviceId = await firstOnlineDevice(t);
});
afterAll(async () => {
  await t?.stop();
  await fleet?.stop();
  await restarted?.stop();
});

async function streamUrl(profile = 'main'): Promise<{ stream_url: string; expires_at: string }> {
  const res = await t.request(`/v1/devices/${deviceId}/stream?profile=${profile}`, {
    headers: await t.auth('devices:read'),
  });
  expect(res.status).toBe(200);
  return res.json() as { stream_url: string; expires_at: string };
}

async function probe(url: string, transport: 'tcp' | 'udp' | null = 'tcp') {
  const args = [
    '-v',
    'error',
    ...(transport ? ['-rtsp_transport', transport] : []),
    '-show_entries',
    'stream=codec_name,width,height',
    '-of',
    'json',
    url,
  ];
  const { stdout } = await run('ffprobe', args, { timeout: 20_000 });
  return (JSON.parse(stdout) as { streams: Array<{ codec_name: string; width: number; height: number }> }).streams[0];
}

/** Established TCP connections to the camera's RTSP port (the camera's own view of its sessions). */
async function cameraConnections(): Promise<number> {
  const port = fleet.rtsp!.port;
  const { stdout } = await run('ss', ['-Htn', 'state', 'established', `( dport = :${port} )`]);
  return stdout.split('\n').filter((l) => l.trim()).length;
}

/** A value from the metrics listener: `name` with its labels as the series shows them. */
async function metric(name: string): Promise<number> {
  const text = await t.metrics();
  return Number(new RegExp(`^${name.replace(/[{}]/g, '\\$&')} (\\d+)`, 'm').exec(text)?.[1] ?? NaN);
}

describe('live streams through the relay', () => {
  it('recovers within seconds when the camera restarts, while a viewer stays connected', async () => {
    const { stream_url } = await streamUrl();
    const viewer = spawn('ffmpeg', ['-v', 'error', '-rtsp_transport', 'tcp', '-i', stream_url, '-f', 'null', '-'], {
      stdio: 'ignore',
    });
    try {
      await expect.poll(cameraConnections, { timeout: 10_000 }).toBe(1);
      const port = fleet.rtsp!.port;
      await fleet.rtsp!.stop(); // the camera's RTSP server and encoder go away
      await expect.poll(cameraConnections, { timeout: 10_000 }).toBe(0);
      const { startSimulatedRtsp } = await import('../../../src/onvif/simulator/rtsp.js');
      restarted = await startSimulatedRtsp({
        cameras: 1,
        host: '127.0.0.1',
        port,
        username: 'admin',
        password: 'cam-secret-7',
        logger: pino({ level: 'silent' }),
      });
      // The relay reconnects on its own (the viewer is still attached) …
      await expect.poll(cameraConnections, { timeout: 10_000 }).toBe(1);
      // … and serves new viewers again.
      expect(await probe((await streamUrl()).stream_url)).toMatchObject({ codec_name: 'h264', width: 1280 });
    } finally {
      viewer.kill();
    }
  });

  it('hands out a short ticketed rtsp URL that expires at the configured TTL', async () => {
    const { stream_url, expires_at } = await streamUrl();
    expect(stream_url).toMatch(/^rtsp:\/\/127\.0\.0\.1:\d+\/live\/[\w-]+\.[\w-]{22}$/);
    expect(stream_url.length).toBeLessThan(200);
    expect(stream_url).not.toContain('cam-secret-7');
    const ttl = (Date.parse(expires_at) - Date.now()) / 1000;
    expect(ttl).toBeGreaterThan(290);
    expect(ttl).toBeLessThanOrEqual(300);
  });

  it('plays main and sub through the relay with ffprobe, over TCP and with UDP first (falling back to TCP)', async () => {
    expect(await probe((await streamUrl('main')).stream_url)).toEqual({ codec_name: 'h264', width: 1280, height: 720 });
    expect(await probe((await streamUrl('sub')).stream_url)).toEqual({ codec_name: 'h264', width: 320, height: 180 });
    expect(await probe((await streamUrl('main')).stream_url, null)).toMatchObject({ codec_name: 'h264' });
  });

  it('plays through GStreamer rtspsrc over TCP and over UDP, decoding frames', async () => {
    for (const protocols of ['tcp', 'udp']) {
      const { stream_url } = await streamUrl();
      // identity eos-after ends the pipeline after 15 decoded frames; gst-launch then exits 0.
      const pipeline = [
        'rtspsrc',
        `location=${stream_url}`,
        `protocols=${protocols}`,
        '!',
        'rtph264depay',
        '!',
        'h264parse',
        '!',
        'avdec_h264',
        '!',
        'identity',
        'eos-after=15',
        '!',
        'fakesink',
      ];
      const { stdout } = await run('gst-launch-1.0', ['-v', ...pipeline], { timeout: 30_000 });
      expect(stdout, protocols).toMatch(/video\/x-raw, format=\(string\)I420, width=\(int\)1280, height=\(int\)720/);
      expect(stdout).toMatch(/Got EOS from element/);
    }
  });

  it('plays over UDP with ffmpeg, one UDP session seen in /metrics while it plays', async () => {
    const { stream_url } = await streamUrl();
    const viewer = spawn(
      'ffmpeg',
      ['-v', 'error', '-rtsp_transport', 'udp', '-i', stream_url, '-t', '3', '-f', 'null', '-'],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    viewer.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    try {
      await expect.poll(() => metric('edge_gateway_relay_sessions{transport="udp"}'), { timeout: 10_000 }).toBe(1);
      expect(await metric('edge_gateway_relay_camera_sessions')).toBe(1);
      const code = await new Promise<number | null>((r) => viewer.on('exit', r));
      // 3 s decoded without complaint. (The simulated camera's stream itself makes ffmpeg warn about
      // a repeated DTS at each keyframe, directly too; that warning says nothing about the relay.)
      const complaints = stderr
        .split('\n')
        .filter((l) => l && !/non monotonically increasing dts|Last message repeated/.test(l));
      expect({ code, complaints }).toEqual({ code: 0, complaints: [] });
      expect(await metric('edge_gateway_relay_packets_delivered_total')).toBeGreaterThan(0);
    } finally {
      viewer.kill();
    }
  });

  it('refuses tampered, expired, other-key and playback tickets with 401', async () => {
    const { stream_url } = await streamUrl();
    const tampered = stream_url.replace(/.(\.[\w-]{22})$/, (m, mac: string) => (m[0] === 'A' ? 'B' : 'A') + mac);
    const signer = TicketSigner.openInDir(t.dataDir, SecretBox.openInDir(t.dataDir));
    const old = signer.issue({ deviceId, profile: 'main', expiresAt: Date.now() - 1000 });
    const foreign = new TicketSigner(Buffer.alloc(32, 7)).issue({
      deviceId,
      profile: 'main',
      expiresAt: Date.now() + 60_000,
    });
    // A recording's playback ticket, even one naming this device's id, opens no stream.
    const playback = signer.issuePlayback({ recordingId: deviceId, expiresAt: Date.now() + 60_000 });
    const base = stream_url.slice(0, stream_url.lastIndexOf('/') + 1);
    for (const url of [tampered, base + old, base + foreign, base + playback]) {
      await expect(probe(url), url).rejects.toThrow(/401 Unauthorized/);
    }
    await expect(probe(base.replace('/live/', '/nope/') + 'x')).rejects.toThrow(/404/);
  });

  it('refuses connections beyond the per-address limit and answers garbage with an error, keeping others served', async () => {
    const { connect } = await import('node:net');
    const port = Number(new URL((await streamUrl()).stream_url.replace('rtsp:', 'http:')).port);
    const open = () =>
      new Promise<{ closed: Promise<void>; sock: import('node:net').Socket }>((resolve) => {
        // From 127.0.0.2: 127.0.0.1 is where the gateway's own recorder connects from, and has no limit.
        const sock = connect({ port, host: '127.0.0.1', localAddress: '127.0.0.2' }, () =>
          resolve({ sock, closed: new Promise((r) => sock.once('close', () => r())) }),
        );
      });
    const conns = await Promise.all(Array.from({ length: 17 }, open)); // the limit is 16
    const closedNow = await Promise.all(
      conns.map((c) =>
        Promise.race([c.closed.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 1000))]),
      ),
    );
    expect(closedNow.filter(Boolean)).toHaveLength(1);
    for (const c of conns) c.sock.destroy();
    // Garbage instead of RTSP: an error status, then the connection is closed. (The relay may take a
    // moment to see the 17 connections above go, so a refused attempt is tried again.)
    const garbage = () =>
      new Promise<string>((resolve) => {
        const sock = connect({ port, host: '127.0.0.1', localAddress: '127.0.0.2' }, () =>
          sock.write('\x16\x03\x01 not rtsp at all\r\n\r\n'),
        );
        let data = '';
        sock.on('data', (d) => (data += d.toString('latin1')));
        sock.on('close', () => resolve(data));
      });
    await expect.poll(garbage, { timeout: 5000, interval: 100 }).toMatch(/^RTSP\/1\.0 400 /);
    expect(await probe((await streamUrl()).stream_url)).toMatchObject({ codec_name: 'h264' });
  });

  it('serves ten viewers and the recorder from one camera session', async () => {
    const { stream_url } = await streamUrl();
    // Ten viewers: two decode, eight copy the stream (as a recorder does; ten decoders would
    // measure this machine's two cores rather than the relay).
    const viewers = Array.from({ length: 10 }, (_, i) =>
      spawn(
        'ffmpeg',
        [
          '-v',
          'error',
          '-rtsp_transport',
          'tcp',
          '-i',
          stream_url,
          '-t',
          '4',
          ...(i < 2 ? [] : ['-c', 'copy']),
          '-f',
          'null',
          '-',
        ],
        { stdio: 'ignore' },
      ),
    );
    try {
      await expect.poll(cameraConnections, { timeout: 10_000 }).toBe(1);
      await new Promise((r) => setTimeout(r, 1500));
      expect(await cameraConnections()).toBe(1);
      const codes = await Promise.all(viewers.map((v) => new Promise<number | null>((r) => v.on('exit', r))));
      expect(codes).toEqual(Array(10).fill(0)); // each read 4 s of video without error
    } finally {
      for (const v of viewers) v.kill();
    }
    // The viewers are gone; the recorder still reads through the relay, on that same one session.
    await expect.poll(() => metric('edge_gateway_relay_readers'), { timeout: 10_000 }).toBe(1);
    expect(await cameraConnections()).toBe(1);
  });

  // Runs last: every test above added log lines.
  it('never puts camera credentials in a log line (debug level included)', () => {
    expect(logLines.some((l) => l.includes('camera RTSP request'))).toBe(true);
    expect(logLines.some((l) => l.includes('"part":"recorder"'))).toBe(true);
    expect(logLines.filter((l) => l.includes('cam-secret-7'))).toEqual([]);
  });
});
