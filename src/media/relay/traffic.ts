// What a camera stream carries, as the relay receives it: bytes and pictures counted per second of
// the wall clock in a small ring, so that "over the last few seconds" needs no timer and no
// sample kept per caller. Counting is an addition per packet (the fan-out already reads each
// packet's header and the time); the rate is worked out only when someone asks.

/** Whole seconds the rate is taken over: the last complete ones, not the second under way. */
export const TRAFFIC_WINDOW_S = 5;
/** The ring holds the window and the second under way, with one to spare. */
const SLOTS = TRAFFIC_WINDOW_S + 2;

export interface TrafficRate {
  /** RTP bytes a second (headers included, every track), times 8 / 1000. */
  kbps: number;
  /** Pictures a second: video packets that start a new RTP timestamp. */
  fps: number;
}

export class TrafficMeter {
  /** The second (Math.floor(ms / 1000)) each slot counts, -1 for none. */
  private readonly second = new Array<number>(SLOTS).fill(-1);
  private readonly bytes = new Array<number>(SLOTS).fill(0);
  private readonly frames = new Array<number>(SLOTS).fill(0);
  /**
   * The second of the first packet counted. That second is partly counted (the stream began within
   * it), so it never counts: a stream younger than the window is averaged over its whole seconds.
   */
  private firstSecond = -1;

  /** One packet of `length` bytes at `nowMs`; `newFrame`: it starts a picture. */
  count(length: number, newFrame: boolean, nowMs: number): void {
    const s = Math.floor(nowMs / 1000);
    const slot = s % SLOTS;
    if (this.second[slot] !== s) {
      this.second[slot] = s;
      this.bytes[slot] = 0;
      this.frames[slot] = 0;
    }
    this.bytes[slot] = (this.bytes[slot] as number) + length;
    if (newFrame) this.frames[slot] = (this.frames[slot] as number) + 1;
    if (this.firstSecond < 0) this.firstSecond = s;
  }

  /**
   * The mean over the last TRAFFIC_WINDOW_S complete seconds before `nowMs` (over fewer when the
   * stream began within them); null before one whole second has been counted. A second without
   * a packet counts as nothing received: a stalled camera reads 0.
   */
  rate(nowMs: number): TrafficRate | null {
    if (this.firstSecond < 0) return null;
    const now = Math.floor(nowMs / 1000);
    const from = Math.max(now - TRAFFIC_WINDOW_S, this.firstSecond + 1);
    const seconds = now - from;
    if (seconds <= 0) return null;
    let bytes = 0;
    let frames = 0;
    for (let slot = 0; slot < SLOTS; slot++) {
      const s = this.second[slot] as number;
      if (s < from || s >= now) continue;
      bytes += this.bytes[slot] as number;
      frames += this.frames[slot] as number;
    }
    return { kbps: (bytes * 8) / 1000 / seconds, fps: frames / seconds };
  }
}
