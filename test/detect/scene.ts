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
 * A 10 s 1280 × 720 scene made from darknet's person.jpg: an empty green-grey picture for a second,
 * then the woman of the photo (cropped around her, 300 × 570 px) slides in from the left for two
 * seconds and stands still at x 480–780 px for the rest. Cached in os.tmpdir() (made once per machine).
 */
export function personScene(): Promise<string> {
  return cached('person-walks-in-v1.mp4', [
    '-f',
    'lavfi',
    '-i',
    `color=c=0x607060:s=${SCENE.width}x${SCENE.height}:r=15:d=${SCENE.seconds}`,
    '-loop',
    '1',
    '-framerate',
    '15',
    '-i',
    path.join(photosDir(), 'person.jpg'),
    '-filter_complex',
    "[1:v]crop=200:380:140:44,scale=300:570[p];[0:v][p]overlay=x='if(lt(t,1),-320,min(480,-320+(t-1)*400))':y=110:shortest=1,format=yuv420p[v]",
    '-map',
    '[v]',
    '-t',
    String(SCENE.seconds),
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

/**
 * Simulated cameras (admin / `password`) looping a scene: `person` at 1280 × 720, or `pattern` at
 * 640 × 360 (small, to spare the CPU).
 */
export async function sceneFleet(
  scene: 'person' | 'pattern',
  o: { count: number; firstIndex: number; password: string },
): Promise<Fleet> {
  const file = scene === 'person' ? await personScene() : await patternScene();
  const [width, height] = scene === 'person' ? [SCENE.width, SCENE.height] : [640, 360];
  return startFleet({
    count: o.count,
    firstIndex: o.firstIndex,
    host: '127.0.0.1',
    basePort: 0,
    username: 'admin',
    password: o.password,
    discovery: null,
    rtspPort: 0,
    looped: { width, height, fps: 15, gopS: 1, seconds: SCENE.seconds, input: ['-i', file] },
    logger: pino({ level: 'silent' }),
  });
}

/** The value of a metric line (labels spelled as in the exposition), or 0 when absent. */
export function metric(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}
