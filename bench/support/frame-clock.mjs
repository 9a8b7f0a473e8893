// Glass-to-glass latency in a page: the simulated camera burns its wall clock into each picture
// (`clockStrip`, CLOCK_STRIP in src/onvif/simulator/rtsp.ts); the page reads it back from every
// frame it presents (requestVideoFrameCallback, the frame drawn on a canvas) and compares it with
// the frame's expected display time on the same machine's clock.
import { CLOCK_STRIP } from '../../dist/onvif/simulator/rtsp.js';

/**
 * A script for the page: `window.watchFrames(video, t0, settleMs, latencyMs)` resolves with
 * `{ firstFrameMs, displayAges, receiveAges, unreadable }`: the first presented frame in ms after
 * t0 (performance.now()), and for each frame presented from settleMs to settleMs + latencyMs after
 * it, the age of its burnt-in clock at its display time and, where the browser gives one (WebRTC),
 * at its arrival (metadata.receiveTime). A clock that reads as older than 30 s is counted unreadable.
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
