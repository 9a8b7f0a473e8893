import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, renameSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { pino } from 'pino';
import { startFleet, type Fleet } from '../../src/onvif/simulator/fleet.js';
import { photosDir } from './photos.js';

const run = promisify(execFile);

/** Where the person stands once in the scene, in 0–1 of the 1280 × 720 frame (measured: the model boxes her there). */
export const SCENE = { width: 1280, height: 720, seconds: 10, personRightEdge: 780 / 1280 };

/**
 * A 1280 × 720 scene made from darknet's person.jpg: an empty green-grey picture for a second,
 * then the woman of the photo (cropped around her, 300 × 570 px) slides in from the left for two
 * seconds and stands still at x 480–780 px for the rest (`seconds` in all, 10 by default). Cached in
 * os.tmpdir() (made once per machine).
 */
export function personScene(seconds: number = SCENE.seconds): Promise<string> {
  const name = seconds === SCENE.seconds ? 'person-walks-in-v1.mp4' : `person-walks-in-stays-${seconds}s-v1.mp4`;
  return cached(name, [
    ...backgroundAndPhoto(seconds, 'person.jpg'),
    '-filter_complex',
    "[1:v]crop=200:380:140:44,scale=300:570[p];[0:v][p]overlay=x='if(lt(t,1),-320,min(480,-320+(t-1)*400))':y=110:shortest=1,format=yuv420p[v]",
    '-map',
    '[v]',
    '-t',
    String(seconds),
  ]);
}

/**
 * A 10 s 640 × 360 scene with no object: ffmpeg's moving test pattern for 2 s, then its last picture
 * held: motion that starts and stops once a loop (a new episode each time), and nothing to find.
 */
export function patternScene(): Promise<string> {
  return cached('pattern-moves-v1.mp4', [
    '-f',
    'lavfi',
    '-i',
    'testsrc2=size=640x360:rate=15:duration=2',
    '-vf',
    `tpad=stop_mode=clone:stop_duration=${SCENE.seconds - 2},format=yuv420p`,
    '-t',
    String(SCENE.seconds),
  ]);
}

/** Where the parked car of carScene() stands, in pixels: at A, and at B a quarter of the frame to the right. */
export const CAR_PX = { ax: 460, bx: 780, y: 300, w: 360, h: 172 };

/**
 * A 1280 × 720 scene with a parked vehicle: the pickup truck of darknet's dog.jpg (which the model
 * calls a car), cut out with a margin and enlarged to 360 × 172 px, standing at x 460 px (A). Just
 * below it a light grey square (80 × 80; far enough from the background's grey level for the motion
 * detector, whose pixels count as changed from 25 levels) slides 80 px to the right in the second and third second of every
 * ten and then rests (its jump back at each ten seconds is motion too): motion beside the car (about
 * 0.35 % of the picture between the motion detector's frames at 2 fps), the car not moving, and the
 * detector's crop around that motion (512 px, where the model scores the car 0.55) holding all of it. `moves`: 40 s, the car at A for 20 s,
 * then at B (x 780, a quarter of the frame further, the square with it) for 20 s; else 10 s, the car
 * at A throughout.
 */
export function carScene(moves: boolean): Promise<string> {
  const seconds = moves ? 40 : 10;
  const carX = moves ? `if(lt(t,20),${CAR_PX.ax},${CAR_PX.bx})` : String(CAR_PX.ax);
  const squareX = `${carX}+140+80*min(1,max(0,(mod(t,10)-1)/2))`;
  return cached(moves ? 'car-moves-v2.mp4' : 'car-parked-v2.mp4', [
    ...backgroundAndPhoto(seconds, 'dog.jpg'),
    '-f',
    'lavfi',
    '-i',
    `color=c=0xe8e8e8:s=80x80:r=15:d=${seconds}`,
    '-filter_complex',
    `[1:v]crop=240:115:458:65,scale=${CAR_PX.w}:${CAR_PX.h}[car];` +
      `[0:v][car]overlay=x='${carX}':y=${CAR_PX.y}:shortest=1[bg];` +
      `[bg][2:v]overlay=x='${squareX}':y=${CAR_PX.y + CAR_PX.h + 20}:shortest=1,format=yuv420p[v]`,
    '-map',
    '[v]',
    '-t',
    String(seconds),
  ]);
}

/** Inputs 0 and 1 of a scene: the empty green-grey picture for `seconds`, and one of darknet's photos held. */
const backgroundAndPhoto = (seconds: number, photo: string): string[] => [
  '-f',
  'lavfi',
  '-i',
  `color=c=0x607060:s=${SCENE.width}x${SCENE.height}:r=15:d=${seconds}`,
  '-loop',
  '1',
  '-framerate',
  '15',
  '-i',
  path.join(photosDir(), photo),
];

/** An H.264 clip made once per machine in os.tmpdir() (written under a temporary name, then renamed). */
async function cached(name: string, args: string[]): Promise<string> {
  const dir = path.join(os.tmpdir(), 'edge-gateway-detect-scenes');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, name);
  if (existsSync(file)) return file;
  const tmp = `${file}.${process.pid}.tmp.mp4`;
  await run('ffmpeg', [
    '-hide_banner',
    '-loglevel',
    'error',
    '-nostdin',
    '-y',
    ...args,
    '-c:v',
    'libx264',
    '-preset',
    'veryfast',
    '-crf',
    '20',
    tmp,
  ]);
  renameSync(tmp, file);
  return file;
}

/** The scenes the simulated cameras can loop, and their length in seconds. */
const SCENES = {
  person: { make: () => personScene(), seconds: SCENE.seconds },
  /** The woman walks in and stands for a minute. */
  'person-stays': { make: () => personScene(60), seconds: 60 },
  pattern: { make: patternScene, seconds: SCENE.seconds },
  'car-parked': { make: () => carScene(false), seconds: 10 },
  'car-moves': { make: () => carScene(true), seconds: 40 },
} as const;

/**
 * Simulated cameras (admin / `password`) looping a scene: 1280 × 720, or `pattern` at 640 × 360
 * (small, to spare the CPU).
 */
export async function sceneFleet(
  scene: keyof typeof SCENES,
  o: { count: number; firstIndex: number; password: string },
): Promise<Fleet> {
  const file = await SCENES[scene].make();
  const [width, height] = scene === 'pattern' ? [640, 360] : [SCENE.width, SCENE.height];
  return startFleet({
    count: o.count,
    firstIndex: o.firstIndex,
    host: '127.0.0.1',
    basePort: 0,
    username: 'admin',
    password: o.password,
    discovery: null,
    rtspPort: 0,
    looped: { width, height, fps: 15, gopS: 1, seconds: SCENES[scene].seconds, input: ['-i', file] },
    logger: pino({ level: 'silent' }),
  });
}

export { metric } from '../support/metrics.js';
