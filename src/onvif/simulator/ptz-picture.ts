import type { ChildProcess } from 'node:child_process';
import type { SimMotion } from './ptz.js';

// The simulated camera's picture follows its pan and tilt, continuously and in the encoder that is
// already running: the test pattern is made larger than the picture and a window of it is cut out
// where the camera points (so the scene moves as it would), and two white squares in black bands
// (pan along the bottom, tilt up the right side) say exactly where, for a test to read back from a
// decoded frame (readPtzMarkers). Zoom is not drawn.
//
// How the position reaches ffmpeg: its interactive commands on stdin ("c" then "target -1 command
// argument"), which it reads at most every 100 ms, one command each time. So a command is sent per
// change of motion, not per frame: each carries an expression of the frame time `t` that the
// filters evaluate on every frame (position + rate × (t − start), held at the move's end), and the
// picture moves smoothly between commands. The frame time is tied to the wall clock by ffmpeg's
// progress lines (-progress pipe:1).

export const PTZ_PICTURE = {
  /** The test pattern's size: the picture (1280×720) is a window of it. */
  sourceWidth: 1600,
  sourceHeight: 900,
  /** The bands the markers run in, and the markers' size, px. */
  band: 48,
  marker: 24,
  /** The markers keep this far from the ends of their band. */
  inset: 8,
} as const;

const { band, marker, inset } = PTZ_PICTURE;

/**
 * The filters that make the main picture (1280×720) from the larger test pattern: the window, the
 * bands and the two markers, each named for its commands. `input` and `output` are link labels.
 */
export function ptzPictureFilter(input: string, output: string): string {
  const square = `color=c=white:s=${marker}x${marker}:r=15`;
  return (
    `${input}crop@ptz=w=1280:h=720:x=${cropX('0')}:y=${cropY('0')},` +
    `drawbox=x=0:y=ih-${band}:w=iw:h=${band}:color=black:t=fill,drawbox=x=iw-${band}:y=0:w=${band}:h=ih:color=black:t=fill[ptzv0];` +
    `${square}[ptzpan];${square}[ptztilt];` +
    `[ptzv0][ptzpan]overlay@pan=x=${panX('0')}:y=main_h-${(band + marker) / 2}:eval=frame[ptzv1];` +
    `[ptzv1][ptztilt]overlay@tilt=x=main_w-${(band + marker) / 2}:y=${tiltY('0')}:eval=frame${output}`
  );
}

// Pan and tilt are -1…1 (right and up positive); the expressions place the window and the markers.
const cropX = (pan: string) => `(${pan}+1)/2*(iw-ow)`;
const cropY = (tilt: string) => `(1-(${tilt}+1)/2)*(ih-oh)`;
const panX = (pan: string) => `${inset}+(${pan}+1)/2*(main_w-overlay_w-${2 * inset + band})`;
const tiltY = (tilt: string) => `${inset}+(1-(${tilt}+1)/2)*(main_h-overlay_h-${2 * inset + band})`;

/** Where a decoded main picture (8-bit grey, width × height) says the camera points: the markers' centres. */
export function readPtzMarkers(gray: Buffer, width: number, height: number): { pan: number; tilt: number } | null {
  const centre = (values: (i: number) => number, length: number): number | null => {
    let sum = 0;
    let n = 0;
    for (let i = 0; i < length; i++)
      if (values(i) > 160) {
        sum += i;
        n++;
      }
    return n >= marker / 2 ? sum / n : null;
  };
  const row = height - band / 2;
  const column = width - band / 2;
  const x = centre((i) => gray[row * width + i]!, width - band);
  const y = centre((i) => gray[i * width + column]!, height - band);
  if (x === null || y === null) return null;
  const travelX = width - marker - 2 * inset - band;
  const travelY = height - marker - 2 * inset - band;
  return { pan: ((x - inset - marker / 2) / travelX) * 2 - 1, tilt: 1 - ((y - inset - marker / 2) / travelY) * 2 };
}

/** Commands ffmpeg has not taken yet wait here; a newer value for the same filter option replaces an older one. */
const COMMAND_INTERVAL_MS = 110;

/** One camera's encoder, told of each change of motion. */
export class PtzPicture {
  /** Wall clock (ms) of frame time 0, from the latest progress line (a guess until the first). */
  private zeroAt: number;
  private readonly pending = new Map<string, string>();
  private timer: NodeJS.Timeout | null = null;
  private progress = '';

  constructor(private readonly ffmpeg: ChildProcess) {
    // ffmpeg needs a moment to start; the first progress line corrects this.
    this.zeroAt = Date.now() + 300;
    ffmpeg.stdout?.on('data', (d: Buffer) => this.readProgress(d.toString()));
    ffmpeg.stdin?.on('error', () => undefined); // ffmpeg gone: nothing more to tell it
  }

  private readProgress(text: string): void {
    this.progress = (this.progress + text).slice(-4096);
    const lines = this.progress.split('\n');
    this.progress = lines.pop() ?? '';
    for (const line of lines) {
      const m = /^out_time_us=(\d+)$/.exec(line.trim());
      if (m) this.zeroAt = Date.now() - Number(m[1]) / 1000;
    }
  }

  /** The picture follows this motion from now on. */
  follow(m: SimMotion): void {
    const t = (wall: number) => ((wall - this.zeroAt) / 1000).toFixed(3);
    const axis = (p: number, rate: number) =>
      rate === 0 || m.until <= m.at
        ? p.toFixed(4)
        : `clip(${p.toFixed(4)}+${rate.toFixed(4)}*(min(t,${t(m.until)})-${t(m.at)}),-1,1)`;
    const pan = axis(m.position.pan, m.rate.pan);
    const tilt = axis(m.position.tilt, m.rate.tilt);
    this.pending.set('crop@ptz x', cropX(pan));
    this.pending.set('crop@ptz y', cropY(tilt));
    this.pending.set('overlay@pan x', panX(pan));
    this.pending.set('overlay@tilt y', tiltY(tilt));
    this.timer ??= setInterval(() => this.sendOne(), COMMAND_INTERVAL_MS).unref();
  }

  private sendOne(): void {
    const next = this.pending.entries().next();
    if (next.done) {
      if (this.timer) clearInterval(this.timer);
      this.timer = null;
      return;
    }
    const [key, expr] = next.value;
    this.pending.delete(key);
    // ffmpeg reads "c", then the rest of the line: target, time (-1: now), command, argument.
    if (this.ffmpeg.stdin?.writable) this.ffmpeg.stdin.write(`c${key.replace(' ', ' -1 ')} ${expr}\n`);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.pending.clear();
  }
}

/** What ffmpeg writes to stderr about the commands themselves: not worth a warning. */
export const isCommandChatter = (line: string): boolean =>
  /^(Enter command:|Command reply for stream|\s*$)/.test(line) || /^res:/.test(line.trim());
