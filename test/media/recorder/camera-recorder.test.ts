import { rmSync } from 'node:fs';
import path from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { DetectionOutcome } from '../../../src/detect/motion-check.js';
import type { DetectedObject, EventType } from '../../../src/domain/types.js';
import {
  CameraRecorder,
  type RecorderDetection,
  type RecorderStore,
} from '../../../src/media/recorder/camera-recorder.js';
import { tempDir } from '../../support/temp-dir.js';

// The recorder's decisions about each episode's alert (the detector's answer, a late one, a drop)
// as the store sees them. No ffmpeg: the camera stream never opens, so every part ends without
// footage, which still settles the alert's part.

const dirs: string[] = [];
const recorders: CameraRecorder[] = [];
afterEach(async () => {
  for (const r of recorders.splice(0)) await r.stop();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

interface Calls {
  opened: Array<{ id: string; type: EventType; message: string; detections?: DetectedObject[] }>;
  retyped: Array<{ id: string; type: EventType; message: string }>;
  settled: Array<{ id: string; final: boolean }>;
}

function recorder(detection: RecorderDetection | null) {
  const dir = tempDir('eg-camrec-');
  dirs.push(dir);
  const calls: Calls = { opened: [], retyped: [], settled: [] };
  const store: RecorderStore = {
    openEpisode: (a) =>
      calls.opened.push({
        id: a.id,
        type: a.type,
        message: a.message,
        ...(a.detections?.length ? { detections: a.detections } : {}),
      }),
    setAlertType: (id, type, message) => calls.retyped.push({ id, type, message }),
    beginClip: () => {
      throw new Error('no footage, no clip');
    },
    saveRecording: () => {
      throw new Error('no footage, no clip');
    },
    settleEpisodePart: (id, part) => calls.settled.push({ id, final: part.final }),
  };
  const clock = { now: 1000 };
  const r = new CameraRecorder({
    deviceId: 'dev_a',
    deviceName: () => 'Front door',
    ffmpegPath: 'ffmpeg-not-run',
    segmentDir: path.join(dir, 'segments'),
    storageDir: path.join(dir, 'storage'),
    acquire: () => Promise.reject(new Error('no stream in this test')),
    store,
    logger: pino({ level: 'silent' }),
    preRollMs: 0,
    postRollMs: 0,
    maxClipMs: 60_000,
    serialize: (job) => job(),
    footageWaitMs: 5,
    now: () => clock.now,
    bootAt: 0,
    detection,
  });
  recorders.push(r);
  return { r, calls, clock };
}

const PERSON: DetectedObject = { label: 'person', score: 0.9, box: { x: 0.1, y: 0.1, w: 0.2, h: 0.5 } };
const PARKED: DetectedObject = { label: 'car', score: 0.6, box: { x: 0.5, y: 0.5, w: 0.3, h: 0.2 }, stationary: true };

function outcome(
  result: DetectionOutcome['result'],
  type: EventType = 'motion',
  more: Partial<DetectionOutcome> = {},
): DetectionOutcome {
  const detections = result === 'quiet' ? [PARKED] : type === 'motion' ? [] : [PERSON];
  return {
    result,
    type,
    detections,
    thumbnail: Promise.resolve(null),
    reason: null,
    timeline: [],
    loitering: false,
    recheckAt: null,
    ...more,
  };
}

/** A detector whose answers the test gives, in the order of the checks (and of the looks again, apart). */
function detector(unconfirmed: 'keep' | 'drop', maxWaitMs: number) {
  const answers: Array<(o: DetectionOutcome) => void> = [];
  const rechecks: Array<(o: DetectionOutcome) => void> = [];
  const detection: RecorderDetection = {
    wanted: () => true,
    check: () => new Promise((resolve) => answers.push(resolve)),
    recheck: () => new Promise((resolve) => rechecks.push(resolve)),
    unconfirmed,
    maxWaitMs,
  };
  return { detection, answers, rechecks };
}

/** A start at `at`; end() stops it at `at + 500` and moves the clock well past, so its parts are handed out. */
function motion(rec: ReturnType<typeof recorder>, at: number, kind: EventType = 'motion'): void {
  rec.clock.now = at;
  rec.r.event(kind, 'start', at);
}
function end(rec: ReturnType<typeof recorder>, at: number, kind: EventType = 'motion'): void {
  rec.clock.now = at + 10_000;
  rec.r.event(kind, 'stop', at + 500);
}

describe('CameraRecorder episodes', () => {
  it('without a detector: the alert at once, its final part settled', async () => {
    const rec = recorder(null);
    motion(rec, 1000);
    expect(rec.calls.opened).toEqual([
      { id: expect.any(String), type: 'motion', message: 'Motion detected by Front door' },
    ]);
    rec.r.event('human', 'start', 1200);
    expect(rec.calls.retyped).toEqual([
      { id: rec.calls.opened[0]!.id, type: 'human', message: 'Person detected by Front door' },
    ]);
    end(rec, 1000, 'human');
    rec.r.event('motion', 'stop', 1500);
    await expect.poll(() => rec.calls.settled).toEqual([{ id: rec.calls.opened[0]!.id, final: true }]);
  });

  it('drop: motion the detector found nothing in has no alert and no part; the next episode is its own', async () => {
    const { detection, answers } = detector('drop', 60_000);
    const rec = recorder(detection);
    motion(rec, 1000);
    end(rec, 1000);
    answers[0]!(outcome('unconfirmed'));
    motion(rec, 20_000);
    answers[1]!(outcome('confirmed', 'human'));
    await expect.poll(() => rec.calls.opened.length).toBe(1);
    expect(rec.calls.opened[0]).toMatchObject({ type: 'human', message: 'Person detected at Front door' });
    end(rec, 20_000);
    await expect.poll(() => rec.calls.settled).toEqual([{ id: rec.calls.opened[0]!.id, final: true }]);
  });

  it('drop keeps an episode the camera itself called a person while the check ran', async () => {
    const { detection, answers } = detector('drop', 60_000);
    const rec = recorder(detection);
    motion(rec, 1000);
    rec.r.event('human', 'start', 1100);
    answers[0]!(outcome('unconfirmed'));
    await expect
      .poll(() => rec.calls.opened)
      .toEqual([{ id: expect.any(String), type: 'human', message: 'Person detected by Front door' }]);
    end(rec, 1000, 'human');
    rec.r.event('motion', 'stop', 1500);
    await expect.poll(() => rec.calls.settled).toEqual([{ id: rec.calls.opened[0]!.id, final: true }]);
  });

  it('an answer after maxWaitMs upgrades the open alert; after the last part, none does', async () => {
    const { detection, answers } = detector('keep', 0);
    const rec = recorder(detection);
    motion(rec, 1000);
    await expect
      .poll(() => rec.calls.opened)
      .toEqual([{ id: expect.any(String), type: 'motion', message: 'Motion detected by Front door' }]);
    answers[0]!(outcome('confirmed', 'human'));
    await expect
      .poll(() => rec.calls.retyped)
      .toEqual([{ id: rec.calls.opened[0]!.id, type: 'human', message: 'Person detected at Front door' }]);
    end(rec, 1000);
    await expect.poll(() => rec.calls.settled).toEqual([{ id: rec.calls.opened[0]!.id, final: true }]);

    motion(rec, 20_000);
    await expect.poll(() => rec.calls.opened.length).toBe(2);
    end(rec, 20_000);
    await expect.poll(() => rec.calls.settled.map((s) => s.id)).toContain(rec.calls.opened[1]!.id);
    answers[1]!(outcome('confirmed', 'vehicle'));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(rec.calls.retyped).toHaveLength(1);
  });

  it('only stationary objects: a motion alert listing them (keep); nothing at all (drop)', async () => {
    const kept = detector('keep', 60_000);
    const rec = recorder(kept.detection);
    motion(rec, 1000);
    kept.answers[0]!(outcome('quiet'));
    await expect
      .poll(() => rec.calls.opened)
      .toEqual([
        { id: expect.any(String), type: 'motion', message: 'Motion detected by Front door', detections: [PARKED] },
      ]);

    const dropped = detector('drop', 60_000);
    const quiet = recorder(dropped.detection);
    motion(quiet, 1000);
    dropped.answers[0]!(outcome('quiet'));
    end(quiet, 1000);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(quiet.calls.opened).toEqual([]);
    expect(quiet.calls.settled).toEqual([]);
  });

  it('looks again when asked; someone loitering then is an alert of its own, once', async () => {
    const { detection, answers, rechecks } = detector('keep', 60_000);
    const rec = recorder(detection);
    motion(rec, 1000);
    answers[0]!(outcome('quiet', 'motion', { recheckAt: 1010 }));
    end(rec, 1000);
    await expect.poll(() => rec.calls.settled.length).toBe(1);
    // The look again comes 10 ms (of the recorder's clock) after the check's answer asked for it.
    rec.clock.now = 20_000;
    await expect.poll(() => rechecks.length).toBe(1);
    rechecks[0]!(outcome('confirmed', 'human', { loitering: true, recheckAt: null }));
    await expect.poll(() => rec.calls.opened.length).toBe(2);
    expect(rec.calls.opened[1]).toEqual({
      id: expect.any(String),
      type: 'human',
      message: 'Person loitering at Front door',
      detections: [PERSON],
    });
    rec.clock.now = 40_000;
    await expect.poll(() => rec.calls.settled.map((s) => s.id)).toContain(rec.calls.opened[1]!.id);
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(rechecks).toHaveLength(1);
  });

  it('someone found loitering during an episode upgrades its motion alert', async () => {
    const { detection, answers, rechecks } = detector('keep', 60_000);
    const rec = recorder(detection);
    motion(rec, 1000);
    answers[0]!(outcome('quiet', 'motion', { recheckAt: 1000 }));
    await expect.poll(() => rechecks.length).toBe(1);
    rechecks[0]!(outcome('confirmed', 'human', { loitering: true }));
    await expect
      .poll(() => rec.calls.retyped)
      .toEqual([{ id: rec.calls.opened[0]!.id, type: 'human', message: 'Person loitering at Front door' }]);
    expect(rec.calls.opened).toHaveLength(1);
  });

  it('a check that did not look leaves the look again planned; one that looked and saw nobody cancels it', async () => {
    const { detection, answers, rechecks } = detector('keep', 60_000);
    const rec = recorder(detection);
    motion(rec, 1000);
    answers[0]!(outcome('quiet', 'motion', { recheckAt: 1030 }));
    end(rec, 1000);
    motion(rec, 20_000);
    answers[1]!(outcome('unchecked'));
    await expect.poll(() => rechecks.length).toBe(1);
    rechecks[0]!(outcome('quiet', 'motion', { recheckAt: rec.clock.now + 40 }));
    end(rec, 20_000);
    motion(rec, 40_000);
    answers[2]!(outcome('unconfirmed'));
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(rechecks).toHaveLength(1);
  });
});
