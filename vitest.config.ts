import { existsSync } from 'node:fs';
import path from 'node:path';
import { defineConfig } from 'vitest/config';

// Three projects (https://vitest.dev/guide/projects), chosen per test file:
//   `./run test unit`  (npx vitest run --project unit)        pure code, node only: seconds
//   `./run test integration`                                  real servers and programs
//   `./run test browser`                                      Debian's chromium via playwright-core
//   `./run test`                                              all three
//
// The rule, for a new test file:
// - browser: the file drives chromium with playwright-core (test/support/browser.ts). Name it
//   `*-browser.test.ts` (or `test/media/webrtc/chromium-*.test.ts`, the WebRTC ones).
// - integration: the file, or a helper it calls, starts another program or needs what `./run test`
//   installs: ffmpeg/ffprobe (test/support/rtp-capture.ts, the still decoders, the recorder), the
//   simulated camera's live video (startFleet / startSimulatedRtsp: ffmpeg + python3 gst-rtsp-server),
//   GStreamer, mosquitto, python3, systemd tools, `ip`, the built daemon or CLI (dist/cli.js), the
//   detector's test photos (EDGE_GATEWAY_TEST_PHOTOS) -- and every started gateway
//   (startTestGateway), which runs the openssl CLI for its self-signed certificate. List it in
//   INTEGRATION below.
// - unit: everything else. A unit test may use SQLite, loopback sockets and in-process servers
//   (a SimulatedCamera's ONVIF, a HostileCamera), and spawn node itself, nothing else: the unit
//   project runs with PATH holding only node's directory, so a test that starts ffmpeg, openssl, ...
//   fails there with ENOENT and belongs in INTEGRATION. It needs no dist/ build, so only the
//   other two projects run the global setup (test/global-setup.ts builds dist/).
const BROWSER = ['test/**/*-browser.test.ts', 'test/media/webrtc/chromium-*.test.ts'];

const INTEGRATION = [
  // The started gateway (startTestGateway: openssl for its certificate) and the openssl CLI itself.
  'test/api/authenticate.test.ts',
  'test/api/client-error.test.ts',
  'test/api/connection-guard.test.ts',
  'test/api/openapi-document.test.ts',
  'test/api/strict-query.test.ts',
  'test/api/tls.test.ts',
  'test/api/web-app.test.ts', // also dist/web
  'test/api/routes/alerts.test.ts',
  'test/api/routes/device-setup.test.ts',
  'test/api/routes/devices.test.ts',
  'test/api/routes/devices-ptz.test.ts',
  'test/api/routes/events.test.ts',
  'test/api/routes/oauth-fuzz.test.ts',
  'test/api/routes/oauth-interop.test.ts',
  'test/api/routes/oauth-login-limit.test.ts',
  'test/api/routes/oauth-web-client.test.ts',
  'test/api/routes/playback.test.ts',
  'test/api/routes/push.test.ts',
  'test/api/routes/recordings.test.ts',
  'test/api/routes/system.test.ts',
  'test/onvif/adoption-and-control-e2e.test.ts',
  // The built CLI or daemon (dist/cli.js) as a process.
  'test/cli.test.ts',
  'test/api/routes/events-revocation.test.ts',
  'test/api/routes/oauth-flows.test.ts',
  'test/media/webrtc/daemon-exit.test.ts',
  'test/onvif/daemon-hostile.test.ts',
  'test/store/page-cache.test.ts', // dist/store in a node of its own
  // ffmpeg / ffprobe run by the test or by the code under test.
  'test/detect/motion-check.test.ts',
  'test/detect/relay-frames.test.ts',
  'test/media/h26x.test.ts',
  'test/media/rtp.test.ts',
  'test/media/fmp4/ffprobe.test.ts',
  'test/media/hls/ffmpeg-hls.test.ts',
  'test/media/mux/g711-ffprobe.test.ts',
  'test/media/recorder/ffmpeg-args.test.ts',
  'test/media/recorder/motion.test.ts',
  'test/media/recorder/recorders.test.ts',
  'test/media/recorder/recovery.test.ts',
  'test/media/relay/fanout-h265-audio.test.ts',
  'test/media/relay/fanout.test.ts',
  'test/media/relay/upstream-auth.test.ts',
  'test/media/still/decode.test.ts',
  'test/media/still/jpeg-stream.test.ts',
  'test/media/still/live-decoder.test.ts',
  'test/media/still/live-first.test.ts',
  'test/media/still/relay-keyframe.test.ts',
  'test/media/still/relay-picture.test.ts',
  'test/onvif/snapshot.test.ts',
  // The simulated camera's live video (ffmpeg + python3 gst-rtsp-server; GStreamer clients too).
  'test/api/routes/device-setup-rtsp.test.ts',
  'test/api/routes/events-camera.test.ts',
  'test/api/routes/live-hls.test.ts',
  'test/api/routes/snapshot.test.ts',
  'test/api/routes/system-status.test.ts',
  'test/notify/push-e2e.test.ts', // also a push service of its own (openssl for its certificate)
  'test/media/mixed-viewers.test.ts',
  'test/media/footage/continuous.test.ts', // also a tmpfs mounted as the footage disk
  'test/media/footage/crash.test.ts', // the built daemon, a tmpfs footage disk
  'test/media/footage/frame-clock.test.ts', // the clock-strip camera, a tmpfs footage disk, ffmpeg
  'test/media/footage/read-only.test.ts', // an ext4 image as the footage disk (mkfs.ext4, e2fsck, loop devices)
  'test/media/recorder/crash.test.ts',
  'test/media/recorder/end-to-end.test.ts',
  'test/media/recorder/audio.test.ts',
  'test/media/recorder/motion-end-to-end.test.ts',
  'test/media/relay/end-to-end.test.ts',
  'test/media/relay/server-codecs.test.ts',
  'test/media/relay/server.test.ts',
  'test/media/relay/upstream.test.ts',
  'test/media/webrtc/audio-transcode.test.ts',
  'test/media/webrtc/gateway-codecs.test.ts',
  'test/media/webrtc/session-start.test.ts',
  'test/media/webrtc/whep.test.ts',
  'test/onvif/simulator/rtsp.test.ts',
  // The detector's test photos, its built worker (dist/detect/worker.js) and ffmpeg.
  'test/detect/detection-e2e.test.ts',
  'test/detect/detection-overload.test.ts',
  'test/detect/detection-stream-stop.test.ts',
  'test/detect/detector-pool.test.ts',
  'test/detect/detector.test.ts',
  'test/detect/stationary-e2e.test.ts',
  // mosquitto brokers (and openssl for their TLS certificates).
  'test/sync/cloud-sync.test.ts',
  'test/sync/in-flight.test.ts',
  'test/sync/mosquitto.test.ts',
  'test/sync/sync-daemon.test.ts',
  // python3 (the sd_notify receiver) and systemd-notify; systemd-analyze.
  'test/daemon/sd-notify.test.ts',
  'test/systemd/unit.test.ts',
  // `ip`: multicast routed over loopback (test/support/multicast.ts).
  'test/onvif/discovery-adoption.test.ts',
  'test/onvif/discovery/service.test.ts',
  // Stress loops of seconds of CPU each in child processes: kept out of the quick unit run.
  'test/auth/local-issuer-jwk-stress.test.ts',
];

// A renamed or removed file must leave this list too; otherwise it would silently count as unit.
const stale = INTEGRATION.filter((file) => !existsSync(path.resolve(import.meta.dirname, file)));
if (stale.length > 0)
  throw new Error(`vitest.config.ts: INTEGRATION lists files that do not exist: ${stale.join(', ')}`);

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two cores: real servers, ffmpeg and brokers per file; more workers only contend.
    maxWorkers: 2,
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts'],
          exclude: [...BROWSER, ...INTEGRATION],
          // Only node on PATH: a unit test that starts another program fails (see the rule above).
          env: { PATH: path.dirname(process.execPath) },
          // The test files share their worker's module cache instead of importing src/ (and fastify,
          // SQLite, ...) again each: half the CPU time. Unit tests must leave no global state behind
          // (vi.useRealTimers() after fake ones, servers closed).
          isolate: false,
        },
      },
      {
        extends: true,
        test: { name: 'integration', include: INTEGRATION, globalSetup: ['test/global-setup.ts'] },
      },
      {
        extends: true,
        test: { name: 'browser', include: BROWSER, globalSetup: ['test/global-setup.ts'] },
      },
    ],
  },
});
