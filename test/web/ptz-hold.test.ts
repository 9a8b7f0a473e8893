import { describe, expect, it } from 'vitest';
import { HOLD_REPEAT_MS, HOLD_TIMEOUT_MS, pointInPicture, PtzHold, type HoldTimers } from '../../web/src/ptz-hold.js';
import type { PtzRequest } from '../../web/src/types.js';

// Press and hold (web/src/ptz-hold.ts): what the live view sends while an arrow is held, driven
// with a hand-turned interval and requests answered when the test says.

function rig() {
  const sent: PtzRequest[] = [];
  const pending: Array<{ resolve: () => void; reject: (err: Error) => void }> = [];
  const errors: unknown[] = [];
  let tick: (() => void) | null = null;
  let cleared = 0;
  const timers: HoldTimers = {
    setInterval: (fn, ms) => {
      expect(ms).toBe(HOLD_REPEAT_MS);
      tick = fn;
      return 1;
    },
    clearInterval: () => {
      tick = null;
      cleared++;
    },
  };
  const hold = new PtzHold(
    (request) =>
      new Promise<void>((resolve, reject) => {
        sent.push(request);
        pending.push({ resolve, reject });
      }),
    (err) => errors.push(err),
    timers,
  );
  const settle = () => new Promise((r) => setTimeout(r, 0));
  /** Answers the oldest request still waiting. */
  const answer = async (err?: Error) => {
    const p = pending.shift();
    if (!p) throw new Error('no request is waiting');
    if (err) p.reject(err);
    else p.resolve();
    await settle();
  };
  return {
    hold,
    sent,
    errors,
    answer,
    settle,
    tick: () => tick?.(),
    ticking: () => tick !== null,
    cleared: () => cleared,
  };
}

describe('a held PTZ button', () => {
  it('moves with the gateway timeout, repeats while held, and stops once on release', async () => {
    const r = rig();
    r.hold.press({ pan: 0.5, tilt: 0, zoom: 0 });
    await r.settle();
    expect(r.sent).toEqual([{ action: 'ptz_move', pan: 0.5, tilt: 0, zoom: 0, timeout_ms: HOLD_TIMEOUT_MS }]);
    expect(HOLD_REPEAT_MS).toBeLessThan(HOLD_TIMEOUT_MS / 2);
    // The first move is still on its way: a repeat would only queue behind it.
    r.tick();
    await r.settle();
    expect(r.sent).toHaveLength(1);
    await r.answer();
    r.tick();
    await r.settle();
    expect(r.sent).toHaveLength(2);
    expect(r.sent[1]).toEqual(r.sent[0]);
    await r.answer();
    r.hold.release();
    r.hold.release();
    await r.settle();
    expect(r.sent.map((s) => s.action)).toEqual(['ptz_move', 'ptz_move', 'ptz_stop']);
    expect(r.ticking()).toBe(false);
    expect(r.cleared()).toBe(1);
    expect(r.hold.pressed).toBe(false);
  });

  it('sends the stop only after the move it ends has been answered', async () => {
    const r = rig();
    r.hold.press({ pan: 0, tilt: 1, zoom: 0 });
    r.hold.release();
    await r.settle();
    expect(r.sent.map((s) => s.action)).toEqual(['ptz_move']);
    await r.answer();
    expect(r.sent.map((s) => s.action)).toEqual(['ptz_move', 'ptz_stop']);
  });

  it('reports a refused move and still stops on release', async () => {
    const r = rig();
    r.hold.press({ pan: 0, tilt: 0, zoom: -1 });
    await r.settle();
    await r.answer(new Error('the camera is offline'));
    expect(r.errors).toEqual([new Error('the camera is offline')]);
    r.hold.release();
    await r.settle();
    expect(r.sent.at(-1)).toEqual({ action: 'ptz_stop' });
  });

  it('changes direction without a stop between', async () => {
    const r = rig();
    r.hold.press({ pan: 1, tilt: 0, zoom: 0 });
    r.hold.press({ pan: -1, tilt: 0, zoom: 0 });
    await r.settle();
    await r.answer();
    expect(r.sent.map((s) => (s.action === 'ptz_move' ? s.pan : s.action))).toEqual([1, -1]);
  });
});

describe('a tap on the picture', () => {
  const box = { left: 100, top: 50, width: 400, height: 400 };
  it('is placed on a 16:9 picture shown with bars above and below', () => {
    // 400 × 225 shown, from y 87.5 to 312.5 of the box.
    expect(pointInPicture({ x: 300, y: 250 }, box, { width: 1920, height: 1080 })).toEqual({ x: 0.5, y: 0.5 });
    expect(pointInPicture({ x: 100, y: 137.5 }, box, { width: 1920, height: 1080 })).toEqual({ x: 0, y: 0 });
    expect(pointInPicture({ x: 400, y: 250 }, box, { width: 1920, height: 1080 })).toEqual({ x: 0.75, y: 0.5 });
  });
  it('in the bars, or before the picture is known, is no point', () => {
    expect(pointInPicture({ x: 300, y: 60 }, box, { width: 1920, height: 1080 })).toBeNull();
    expect(pointInPicture({ x: 300, y: 250 }, box, { width: 0, height: 0 })).toBeNull();
  });
});
