import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { Recorders, type RecordersOptions } from '../../../src/media/recorder/recorders.js';

// The recorder part's bookkeeping: which cameras get a recorder and which a software motion
// detector. The camera streams are unavailable here (streamReady rejects), so no segmenter ffmpeg
// runs; the motion detector's ffmpeg does run, against an address nothing listens on.

const dirs: string[] = [];
const stops: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function make(
  mode: 'auto' | 'on' | 'off',
  hasOwnEvents: (id: string) => boolean,
  mask?: RecordersOptions['motion']['mask'],
) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'eg-recorders-'));
  dirs.push(dir);
  const lines: string[] = [];
  const opts: RecordersOptions = {
    store: {
      openEpisode: () => undefined,
      setAlertType: () => undefined,
      beginClip: () => undefined,
      saveRecording: () => undefined,
      settleEpisodePart: () => undefined,
    },
    deviceName: (id) => id,
    hasStream: (id) => id !== 'dev_nostream',
    acquire: () => Promise.reject(new Error('no camera here')),
    ffmpegPath: 'ffmpeg',
    segmentRoot: path.join(dir, 'segments'),
    storageDir: path.join(dir, 'storage'),
    preRollMs: 1000,
    postRollMs: 1000,
    maxClipMs: 10_000,
    logger: pino({ level: 'info' }, { write: (l: string) => void lines.push(l) }),
    motion: {
      mode,
      threshold: 0.02,
      fps: 2,
      hasOwnEvents,
      inputUrl: () => 'rtsp://127.0.0.1:9/nothing',
      checkMs: 50,
      ...(mask ? { mask } : {}),
    },
  };
  const recorders = new Recorders(opts);
  stops.push(() => recorders.stop());
  const said = (msg: string) =>
    lines.filter((l) => l.includes(`"msg":"${msg}"`)).map((l) => (JSON.parse(l) as { device: string }).device);
  return { recorders, said, segmentRoot: opts.segmentRoot };
}

describe('Recorders', () => {
  it('records online cameras that have a main stream, and stops when they go offline', async () => {
    const { recorders, segmentRoot } = make('off', () => true);
    recorders.deviceStatus('dev_a', true, Date.now());
    recorders.deviceStatus('dev_b', true, Date.now());
    recorders.deviceStatus('dev_nostream', true, Date.now());
    expect(recorders.get('dev_a')).toBeDefined();
    expect(recorders.get('dev_nostream')).toBeUndefined();
    recorders.deviceStatus('dev_a', false, Date.now());
    expect(recorders.get('dev_a')).toBeUndefined();
    expect(existsSync(path.join(segmentRoot, 'dev_b'))).toBe(true);
    await recorders.stop();
    expect(existsSync(segmentRoot)).toBe(false); // no RAM left behind (/dev/shm outlives the daemon)
  });

  it('auto: runs software motion detection only while a camera has no event subscription of its own', async () => {
    let own = false;
    const { recorders, said } = make('auto', () => own);
    recorders.deviceStatus('dev_a', true, Date.now());
    await expect.poll(() => said('software motion detection on'), { timeout: 3000 }).toEqual(['dev_a']);
    own = true; // the camera's PullPoint subscription came up
    await expect.poll(() => said('software motion detection off'), { timeout: 3000 }).toEqual(['dev_a']);
  });

  it('a new motion mask restarts the camera’s software motion detection with it, at once', () => {
    const masks: string[] = [];
    let current: Array<Array<[number, number]>> = [];
    const { recorders, said } = make(
      'on',
      () => true,
      (id) => {
        masks.push(`${id}:${JSON.stringify(current)}`);
        return current;
      },
    );
    recorders.deviceStatus('dev_a', true, Date.now());
    expect(said('software motion detection on')).toEqual(['dev_a']);
    current = [
      [
        [0, 0],
        [1, 0],
        [0, 1],
      ],
    ];
    recorders.motionMaskChanged('dev_a');
    recorders.motionMaskChanged('dev_none'); // no watcher: nothing to do
    expect(said('software motion detection on')).toEqual(['dev_a', 'dev_a']);
    expect(masks).toEqual(['dev_a:[]', `dev_a:${JSON.stringify(current)}`]);
  });

  it('on: every camera at once; off: none', async () => {
    const on = make('on', () => true);
    on.recorders.deviceStatus('dev_a', true, Date.now());
    expect(on.said('software motion detection on')).toEqual(['dev_a']);
    const off = make('off', () => false);
    off.recorders.deviceStatus('dev_b', true, Date.now());
    await new Promise((r) => setTimeout(r, 200)); // several check intervals of auto/on
    expect(off.said('software motion detection on')).toEqual([]);
  });
});
