// Glass-to-glass latency in a page: the simulated camera burns its wall clock into each picture
// (`clockStrip`, CLOCK_STRIP in src/onvif/simulator/rtsp.ts); the page reads it back from every
// frame it presents (requestVideoFrameCallback, the frame drawn on a canvas) and compares it with
// the frame's expected display time on the same machine's clock.
import { spawn } from 'node:child_process';
import Type, { type Static } from 'typebox';
import { CLOCK_STRIP } from '../../dist/onvif/simulator/rtsp.js';

/**
 * A script for the page: `window.watchFrames(video, t0, settleMs, latencyMs)` resolves with
 * `{ firstFrameMs, displayAges, receiveAges, unreadable }` (WatchedFrames): the first presented
 * frame in ms after t0 (performance.now()), and for each frame presented from settleMs to
 * settleMs + latencyMs after it, the age of its burnt-in clock at its display time and, where the
 * browser gives one (WebRTC), at its arrival (metadata.receiveTime). A clock that reads as older
 * than 30 s is counted unreadable.
 */
export const FRAME_CLOCK_PAGE = `(() => {
  const S = ${JSON.stringify(CLOCK_STRIP)};
  const W = S.bits * S.pitch, H = 2 * S.y + S.size;
  const ctx = new OffscreenCanvas(W, H).getContext('2d', { willReadFrequently: true });
  const age = (wallMs, clock) => { const a = ((Math.round(wallMs) - clock) % 2 ** S.bits + 2 ** S.bits) % 2 ** S.bits; return a < 30000 ? a : null; };
  window.watchFrames = (video, t0, settleMs, latencyMs) => new Promise((resolve) => {
    const out = { firstFrameMs: null, displayAges: [], receiveAges: [], unreadable: 0 };
    const onFrame = (now, meta) => {
      out.firstFrameMs ??= performance.now() - t0;
      const since = performance.now() - t0 - out.firstFrameMs;
      if (since >= settleMs) {
        ctx.drawImage(video, 0, 0, W, H, 0, 0, W, H);
        const px = ctx.getImageData(0, 0, W, H).data;
        let clock = 0;
        for (let k = 0; k < S.bits; k++) if (px[((S.y + (S.size >> 1)) * W + k * S.pitch + (S.size >> 1)) * 4] > 128) clock += 2 ** k;
        const shown = age(performance.timeOrigin + meta.expectedDisplayTime, clock);
        if (shown === null) out.unreadable++;
        else {
          out.displayAges.push(shown);
          if (meta.receiveTime !== undefined) out.receiveAges.push(age(performance.timeOrigin + meta.receiveTime, clock));
        }
      }
      if (since < settleMs + latencyMs) video.requestVideoFrameCallback(onFrame);
      else resolve(out);
    };
    video.requestVideoFrameCallback(onFrame);
  });
})()`;

/** What window.watchFrames resolves with (a receive age may be null: that clock was unreadable). */
export const WatchedFrames = Type.Object({
  firstFrameMs: Type.Union([Type.Number(), Type.Null()]),
  displayAges: Type.Array(Type.Number()),
  receiveAges: Type.Array(Type.Union([Type.Number(), Type.Null()])),
  unreadable: Type.Number(),
});
export type WatchedFrames = Static<typeof WatchedFrames>;

/** The age of a clock burnt in at `clock` (ms, modulo 2^bits) at the wall time `wallMs`. */
const clockAge = (wallMs: number, clock: number): number =>
  (((wallMs - clock) % 2 ** CLOCK_STRIP.bits) + 2 ** CLOCK_STRIP.bits) % 2 ** CLOCK_STRIP.bits;

/**
 * The same clock read by ffmpeg from an RTSP address (a camera's or the relay's) while it plays:
 * `ages()` gives, for each frame decoded so far, its clock's age when its pixels reached this
 * process (ffmpeg with no input buffering and low-delay decoding, one thread). `stop()` ends it.
 */
export function tapFrameClock(url: string): { ages: () => number[]; stop: () => void } {
  const W = CLOCK_STRIP.bits * CLOCK_STRIP.pitch;
  const frameBytes = W * CLOCK_STRIP.size;
  const ages: number[] = [];
  let pending = Buffer.alloc(0);
  const child = spawn(
    'ffmpeg',
    [
      '-hide_banner',
      '-nostdin',
      '-v',
      'error',
      '-fflags',
      'nobuffer',
      '-flags',
      'low_delay',
      '-threads',
      '1',
      '-rtsp_transport',
      'tcp',
      '-i',
      url,
      '-an',
      '-vf',
      `crop=${W}:${CLOCK_STRIP.size}:0:${CLOCK_STRIP.y}`,
      '-pix_fmt',
      'gray',
      '-fps_mode',
      'passthrough',
      '-flush_packets',
      '1',
      '-f',
      'rawvideo',
      'pipe:1',
    ],
    { stdio: ['ignore', 'pipe', 'ignore'] },
  );
  process.once('exit', () => child.kill('SIGKILL'));
  child.stdout.on('data', (chunk: Buffer) => {
    const now = Date.now();
    pending = Buffer.concat([pending, chunk]);
    while (pending.length >= frameBytes) {
      const row = (CLOCK_STRIP.size >> 1) * W;
      let clock = 0;
      for (let k = 0; k < CLOCK_STRIP.bits; k++)
        if (pending[row + k * CLOCK_STRIP.pitch + (CLOCK_STRIP.size >> 1)]! > 128) clock += 2 ** k;
      const age = clockAge(now, clock);
      if (age < 30000) ages.push(age);
      pending = pending.subarray(frameBytes);
    }
  });
  return {
    ages: () => ages,
    stop: () => void child.kill('SIGTERM'),
  };
}
