import type { PtzRequest } from './types.js';

// Press and hold: a held button moves the camera until it is let go. The gateway stops a camera
// on its own timeout_ms after the last move (so a phone that loses the network mid-press never
// leaves it turning); the move is therefore sent again while the button is held, well within that
// time, and a stop is sent on release. Requests go one after the other, in the order made, so a
// stop never overtakes the move it ends. Pure apart from the timer and `send`, so tests drive it.

/** How long the gateway keeps a move going without a new one: a second, as its default. */
export const HOLD_TIMEOUT_MS = 1000;
/** A held move is sent again this often: well within HOLD_TIMEOUT_MS, with a round trip to spare. */
export const HOLD_REPEAT_MS = 400;

export interface Velocity {
  pan: number;
  tilt: number;
  zoom: number;
}

export interface HoldTimers {
  setInterval(fn: () => void, ms: number): unknown;
  clearInterval(handle: unknown): void;
}

export class PtzHold {
  private held: Velocity | null = null;
  private timer: unknown = null;
  /** The chain the requests go out on; a failure is reported and does not stop the chain. */
  private chain: Promise<void> = Promise.resolve();
  /** A repeat is skipped while the previous move is still on its way (a slow camera). */
  private inFlight = 0;

  constructor(
    private readonly send: (request: PtzRequest) => Promise<unknown>,
    private readonly onError: (err: unknown) => void,
    private readonly timers: HoldTimers = globalThis,
  ) {}

  /** Starts moving (or changes direction) until release(). */
  press(velocity: Velocity): void {
    this.held = velocity;
    this.move(velocity);
    if (this.timer === null)
      this.timer = this.timers.setInterval(() => {
        if (this.held && this.inFlight === 0) this.move(this.held);
      }, HOLD_REPEAT_MS);
  }

  /** Stops the camera, if a press is held; nothing otherwise (a pointer's up and leave both call it). */
  release(): void {
    if (!this.held) return;
    this.held = null;
    if (this.timer !== null) this.timers.clearInterval(this.timer);
    this.timer = null;
    this.enqueue({ action: 'ptz_stop' });
  }

  get pressed(): boolean {
    return this.held !== null;
  }

  private move(v: Velocity): void {
    this.enqueue({ action: 'ptz_move', pan: v.pan, tilt: v.tilt, zoom: v.zoom, timeout_ms: HOLD_TIMEOUT_MS });
  }

  private enqueue(request: PtzRequest): void {
    this.inFlight++;
    this.chain = this.chain.then(async () => {
      try {
        await this.send(request);
      } catch (err) {
        this.onError(err);
      } finally {
        this.inFlight--;
      }
    });
  }
}

/**
 * The point of the picture under a click, 0–1 from its top-left corner, for a picture of
 * `content` size shown whole inside `box` (object-fit: contain: bars above and below, or at the
 * sides). null in the bars or when the picture's size is not known yet.
 */
export function pointInPicture(
  click: { x: number; y: number },
  box: { left: number; top: number; width: number; height: number },
  content: { width: number; height: number },
): { x: number; y: number } | null {
  if (content.width <= 0 || content.height <= 0 || box.width <= 0 || box.height <= 0) return null;
  const scale = Math.min(box.width / content.width, box.height / content.height);
  const w = content.width * scale;
  const h = content.height * scale;
  const x = (click.x - box.left - (box.width - w) / 2) / w;
  const y = (click.y - box.top - (box.height - h) / 2) / h;
  if (x < 0 || x > 1 || y < 0 || y > 1) return null;
  return { x: Math.round(x * 1000) / 1000, y: Math.round(y * 1000) / 1000 };
}
