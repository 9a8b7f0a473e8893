import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import nodeDataChannel from 'node-datachannel';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFleet, type Fleet } from '../../../src/onvif/simulator/fleet.js';
import { cliToken, startDaemon, type Daemon } from '../../support/daemon.js';
import { tempDir } from '../../support/temp-dir.js';
import { gatheredOffer, isPeerRace, madeAgain, stateHistory, takeAnswer } from '../../support/test-peer.js';

// The built daemon (dist/cli.js) ends by itself on SIGTERM after serving WebRTC viewers: one that
// ended by DELETE and one still playing at shutdown. node-datachannel held the event loop open for
// every track it had made (until each track was closed and reported its close), so the daemon
// logged "edge gateway stopped" and never exited (found by the live bench, which hung).

const PASSWORD = 'exit-secret';
let fleet: Fleet;
let dir = '';
let daemon: Daemon | null = null;

beforeAll(async () => {
  fleet = await startFleet({
    count: 1,
    host: '127.0.0.1',
    basePort: 0,
    username: 'admin',
    password: PASSWORD,
    discovery: null,
    rtspPort: 0,
    logger: pino({ level: 'silent' }),
  });
  dir = tempDir('eg-webrtc-exit-');
}, 60_000);
afterAll(async () => {
  if (daemon && daemon.child.exitCode === null && daemon.child.signalCode === null) daemon.child.kill('SIGKILL');
  await fleet?.stop();
  rmSync(dir, { recursive: true, force: true });
});

interface Viewer {
  pc: nodeDataChannel.PeerConnection;
  /** Held: a track nothing refers to is garbage-collected, and its onMessage callback with it. */
  track: nodeDataChannel.Track;
  packets: number;
  location: string;
}

/**
 * A playing viewer. The test peer runs in this process on node-datachannel, and under a loaded CI
 * machine it has been seen to get nothing at all (once in a clean-clone run; never alone): such a
 * peer's session is ended and the peer made again, at most 3 times, saying so with the daemon's
 * WebRTC lines. What the test asserts is the daemon's exit, not this peer's luck.
 */
function viewer(d: Daemon, streamUrl: () => Promise<string>): Promise<Viewer> {
  return madeAgain(
    'daemon-exit',
    async () => {
      const v = await offerViewer(d, await streamUrl());
      try {
        await expect.poll(() => v.packets, { timeout: 15_000, interval: 200 }).toBeGreaterThan(20);
        return v;
      } catch {
        await d.request(v.location, { method: 'DELETE' });
        v.pc.close();
        const lines = d
          .logs()
          .split('\n')
          .filter((l) => l.includes('webrtc'));
        throw new NoPacketsError(
          `the test viewer got ${v.packets} packets in 15 s. The daemon's WebRTC lines:\n${lines.slice(-8).join('\n')}`,
        );
      }
    },
    (err) => err instanceof NoPacketsError || isPeerRace(err),
  );
}

class NoPacketsError extends Error {}

async function offerViewer(d: Daemon, streamUrl: string): Promise<Viewer> {
  const pc = new nodeDataChannel.PeerConnection('viewer', { iceServers: [], bindAddress: '127.0.0.1' });
  const history = stateHistory(pc);
  const video = new nodeDataChannel.Video('0', 'RecvOnly');
  video.addH264Codec(102, 'level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42e01f');
  const track = pc.addTrack(video);
  const v: Viewer = { pc, track, packets: 0, location: '' };
  track.onMessage(() => v.packets++);
  const offer = await gatheredOffer(pc);
  const res = await d.request(new URL(streamUrl).pathname, {
    method: 'POST',
    headers: { 'content-type': 'application/sdp' },
    body: offer,
  });
  expect(res.status, res.text).toBe(201);
  v.location = String(res.headers.location);
  await takeAnswer(pc, res.text, () => d.request(v.location, { method: 'DELETE' }), history);
  return v;
}

describe('daemon shutdown after WebRTC viewers', () => {
  it('exits with code 0 on SIGTERM, a viewer ended by DELETE and one still playing', { timeout: 120_000 }, async () => {
    const dataDir = path.join(dir, 'data');
    const configFile = path.join(dir, 'config.yaml');
    const config = {
      gateway: { data_dir: dataDir },
      api: { host: '127.0.0.1', port: 0 },
      auth: { local: { issuer: 'https://127.0.0.1:8443' } },
      rtsp: { host: '127.0.0.1', port: 0, udp_port: 0, public_host: '127.0.0.1' },
      webrtc: { bind_address: '127.0.0.1' },
      onvif: { discovery: { enabled: false } },
      cameras: [
        { name: 'Porch', onvif_url: fleet.cameras[0]!.deviceServiceUrl, username: 'admin', password: PASSWORD },
      ],
      log: { level: 'info' },
    };
    writeFileSync(configFile, JSON.stringify(config, null, 2));
    const headers = { authorization: `Bearer ${cliToken(configFile, dir, 'devices:read')}` };
    const d = await startDaemon(configFile, { cwd: dir, certFile: () => path.join(dataDir, 'tls', 'cert.pem') });
    daemon = d;
    let deviceId = '';
    await expect
      .poll(
        async () => {
          const { data } = (await d.request('/v1/devices', { headers })).json() as {
            data: Array<{ id: string; status: string }>;
          };
          deviceId = data.find((x) => x.status === 'online')?.id ?? '';
          return deviceId;
        },
        { timeout: 30_000, interval: 200 },
      )
      .not.toBe('');
    const streamUrl = async () =>
      (
        (await d.request(`/v1/devices/${deviceId}/stream?protocol=webrtc`, { headers })).json() as {
          stream_url: string;
        }
      ).stream_url;

    const ended = await viewer(d, streamUrl);
    expect((await d.request(ended.location, { method: 'DELETE' })).status).toBe(200);
    ended.pc.close();
    const playing = await viewer(d, streamUrl);

    d.child.kill('SIGTERM');
    // Bounded wait for an outcome (did it exit at all), not a timing: a stuck daemon never exits.
    const outcome = await Promise.race([
      d.exited,
      new Promise((r) => setTimeout(() => r('still running 20 s after SIGTERM'), 20_000)),
    ]);
    playing.pc.close();
    expect(d.logged('edge gateway stopped')).toHaveLength(1);
    expect(outcome).toEqual({ code: 0, signal: null });
  });
});
