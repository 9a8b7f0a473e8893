import { execFile } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkClip } from '../../../src/media/recorder/clip-check.js';
import { writeClip } from '../../../src/media/recorder/clip-writer.js';
import { decodedSeconds } from '../../../src/media/recorder/ffmpeg-args.js';
import {
  readFootage,
  recoverEpisodes,
  STOPPED_DURING_EVENT,
  windowsToWrite,
} from '../../../src/media/recorder/recovery.js';
import { indexLine, parseIndex, SEGMENT_INDEX, type Segment } from '../../../src/media/recorder/segments.js';
import { Store } from '../../../src/store/store.js';
import { onlineCamera } from '../../support/devices.js';
import { listedSegments, segmentMuxerArgs } from '../../support/fmp4-segments.js';

const run = promisify(execFile);
const silent = pino({ level: 'silent' });

describe('recovery, pure parts', () => {
  it('the RAM index: lines round-trip; a later line for a file wins; malformed lines are skipped', () => {
    const a = { file: 'r1-000000001.mp4', startAt: 1000, endAt: 2000, durationS: 1 };
    const b = { file: 'r1-000000002.mp4', startAt: 2000, endAt: 2500, durationS: 0.5 };
    const text =
      indexLine(a) +
      'garbage\nr1-x.mp4,1,2\n' +
      indexLine(b) +
      indexLine({ ...a, endAt: 1900 }) +
      'r1-000000003.mp4,10,5,1\nr1-000000004.mp4,20\n../r1-000000005.mp4,1,2,1';
    expect(parseIndex(text)).toEqual([b, { ...a, endAt: 1900 }]);
  });

  it('decoded length from -progress output: the last out_time_us', () => {
    expect(decodedSeconds('frame=1\nout_time_us=500000\nprogress=continue\nout_time_us=4000000\nprogress=end\n')).toBe(
      4,
    );
    expect(decodedSeconds('progress=end\n')).toBeNull();
  });

  const clip = { id: 'rec_1', startedAt: 900, endedAt: 3000, to: 3000, eventType: 'human' as const };
  it('windows: a part whose file was kept needs nothing more when it was the last', () => {
    expect(windowsToWrite({ fromAt: 1000, clip: { ...clip, final: true } }, true, 9000, 'human', 10_000)).toEqual([]);
  });
  it('windows: a broken part is written again, then the rest of the episode up to the footage, ending partial', () => {
    expect(windowsToWrite({ fromAt: 1000, clip: { ...clip, final: false } }, false, 9000, 'vehicle', 4000)).toEqual([
      { from: 1000, to: 3000, final: false, eventType: 'human', note: null },
      { from: 3000, to: 7000, final: false, eventType: 'vehicle', note: null },
      { from: 7000, to: 9000, final: true, eventType: 'vehicle', note: STOPPED_DURING_EVENT },
    ]);
  });
  it('windows: no footage after the start: one empty last window (the alert is settled)', () => {
    expect(windowsToWrite({ fromAt: 1000, clip: null }, false, null, 'motion', 4000)).toEqual([
      { from: 1000, to: 1000, final: true, eventType: 'motion', note: null },
    ]);
    expect(windowsToWrite({ fromAt: 1000, clip: null }, false, 800, 'motion', 4000)).toHaveLength(1);
  });
});

// Real ffmpeg segments like the recorder's, a real SQLite store, and what a crash left.
describe('recoverEpisodes with real ffmpeg and a real store', () => {
  let dir: string;
  let segments: Segment[];
  const BASE = Date.UTC(2026, 10, 25, 10, 0, 0);

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'eg-recovery-'));
    const src = path.join(dir, 'src');
    mkdirSync(src);
    // 6 s of 10 fps H.264, a keyframe each second, in segments like the recorder's.
    await run('ffmpeg', [
      '-v',
      'error',
      '-f',
      'lavfi',
      '-i',
      'testsrc2=size=320x180:rate=10',
      '-t',
      '6',
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-bf',
      '0',
      '-g',
      '10',
      '-pix_fmt',
      'yuv420p',
      ...segmentMuxerArgs(src),
    ]);
    segments = listedSegments(src).map((s) => ({
      file: s.file,
      startAt: BASE + s.startS * 1000,
      endAt: BASE + s.endS * 1000,
      durationS: s.endS - s.startS,
    }));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /**
   * A gateway data directory whose camera's RAM holds the segments, listed up to `listed` (the rest written but not
   * listed).
   */
  function crashed(name: string, listed: number) {
    const base = path.join(dir, name);
    const segmentRoot = path.join(base, 'ram');
    const ram = path.join(segmentRoot, 'dev_1');
    mkdirSync(ram, { recursive: true });
    for (const s of segments) writeFileSync(path.join(ram, s.file), readFileSync(path.join(dir, 'src', s.file)));
    writeFileSync(path.join(ram, SEGMENT_INDEX), segments.slice(0, listed).map(indexLine).join(''));
    // The unlisted segment was last written when it ended.
    const last = segments[listed];
    if (last) utimesSync(path.join(ram, last.file), new Date(last.endAt), new Date(last.endAt));
    const store = Store.open(path.join(base, 'data'));
    store.enableOutbox(1000);
    store.upsertDevice({ ...onlineCamera('dev_1', 'Yard'), createdAt: 1 });
    const storageDir = path.join(base, 'storage');
    mkdirSync(storageDir);
    return { store, segmentRoot, ram, storageDir };
  }
  const recover = (c: ReturnType<typeof crashed>, bootAt = 0) =>
    recoverEpisodes({
      store: c.store,
      storageDir: c.storageDir,
      segmentRoot: c.segmentRoot,
      ffmpegPath: 'ffmpeg',
      maxClipMs: 60_000,
      logger: silent,
      bootAt,
    });
  const openEpisode = (c: ReturnType<typeof crashed>, fromAt: number, bootAt = 0) =>
    c.store.openEpisode(
      { id: 'alr_1', deviceId: 'dev_1', type: 'human', message: 'Person', createdAt: fromAt + 1000 },
      { segmentDir: c.ram, bootAt, fromAt },
    );

  it('footage only in RAM (killed during the event): listed segments plus the one being written become the clip; partial; RAM removed', async () => {
    const c = crashed('mid-event', segments.length - 1);
    openEpisode(c, BASE + 1000);
    const footage = readFootage(c.ram);
    expect(footage.map((s) => s.file)).toEqual(segments.map((s) => s.file)); // the unlisted last one too
    expect(await recover(c)).toEqual({ episodes: 1, kept: 0, assembled: 1, lost: 0 });
    const alert = c.store.getAlert('alr_1')!;
    expect(alert).toMatchObject({ recordingStatus: 'partial', recordingStatusReason: STOPPED_DURING_EVENT });
    const rec = c.store.getRecording(alert.recordingId!)!;
    expect(rec).toMatchObject({
      startedAt: BASE + 1000,
      endedAt: Math.round(segments.at(-1)!.endAt),
      alertId: 'alr_1',
    });
    const check = await checkClip('ffmpeg', path.join(c.storageDir, rec.fileName), 5);
    expect(check).toMatchObject({ ok: true });
    expect(existsSync(path.join(c.storageDir, rec.fileName.replace(/\.mp4$/, '.jpg')))).toBe(true);
    expect(c.store.listOpenEpisodes()).toEqual([]);
    expect(existsSync(c.ram)).toBe(false);
    c.store.close();
  });

  it('a whole .tmp is kept under its id; a cut-short one fails the check and the clip is assembled again', async () => {
    const c = crashed('tmp', segments.length);
    openEpisode(c, BASE + 1000);
    const files = segments.slice(1, 5).map((s) => ({ path: path.join(c.ram, s.file), durationS: s.durationS }));
    await writeClip({
      ffmpegPath: 'ffmpeg',
      scratchDir: c.ram,
      segments: files,
      durationS: 4,
      audio: 'none',
      storageDir: c.storageDir,
      fileName: 'dev_1/rec_whole.mp4',
    });
    const whole = path.join(c.storageDir, 'dev_1/rec_whole.mp4');
    expect(await checkClip('ffmpeg', whole, 4)).toMatchObject({ ok: true });
    // Asked for more than it holds: not whole.
    expect(await checkClip('ffmpeg', whole, 6)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/decodes 4\.\d s of 6\.0 s/),
    });
    const tmp = path.join(c.storageDir, 'dev_1/.rec_whole.mp4.tmp');
    writeFileSync(tmp, readFileSync(whole));
    rmSync(whole);
    c.store.beginClip('alr_1', {
      id: 'rec_whole',
      startedAt: BASE + 1000,
      endedAt: BASE + 5000,
      to: BASE + 5000,
      eventType: 'human',
      final: true,
    });
    expect(await recover(c)).toEqual({ episodes: 1, kept: 1, assembled: 0, lost: 0 });
    expect(c.store.getAlert('alr_1')).toMatchObject({
      recordingId: 'rec_whole',
      recordingStatus: 'recorded',
      recordingStatusReason: null,
    });
    expect(statSync(whole).size).toBe(c.store.getRecording('rec_whole')!.sizeBytes);
    expect(existsSync(tmp)).toBe(false);
    c.store.close();

    const d = crashed('tmp-cut', segments.length);
    openEpisode(d, BASE + 1000);
    const cut = path.join(d.storageDir, 'dev_1/.rec_cut.mp4.tmp');
    mkdirSync(path.dirname(cut));
    writeFileSync(cut, readFileSync(whole));
    truncateSync(cut, Math.floor(statSync(cut).size / 2));
    d.store.beginClip('alr_1', {
      id: 'rec_cut',
      startedAt: BASE + 1000,
      endedAt: BASE + 5000,
      to: BASE + 5000,
      eventType: 'human',
      final: true,
    });
    expect(await recover(d)).toEqual({ episodes: 1, kept: 0, assembled: 1, lost: 0 });
    const alert = d.store.getAlert('alr_1')!;
    expect(alert).toMatchObject({ recordingStatus: 'recorded' });
    expect(alert.recordingId).not.toBe('rec_cut');
    expect(existsSync(cut)).toBe(false);
    d.store.close();
  });

  it('RAM gone: lost, saying power cut when the machine booted since, else that the gateway stopped', async () => {
    const c = crashed('power', 0);
    rmSync(c.segmentRoot, { recursive: true });
    openEpisode(c, BASE + 1000, 0);
    expect(await recover(c, 10 * 60_000)).toEqual({ episodes: 1, kept: 0, assembled: 0, lost: 1 });
    expect(c.store.getAlert('alr_1')).toMatchObject({
      recordingId: null,
      recordingStatus: 'lost',
      recordingStatusReason: expect.stringMatching(/^power cut or reboot/),
    });
    const messages = c.store.outboxBatch(0, 100).filter((m) => m.kind === 'alert');
    expect((JSON.parse(messages.at(-1)!.body) as { recordingStatus: string }).recordingStatus).toBe('lost');
    c.store.close();

    const d = crashed('stopped', 0);
    rmSync(d.segmentRoot, { recursive: true });
    openEpisode(d, BASE + 1000, 0);
    await recover(d, 30_000);
    expect(d.store.getAlert('alr_1')?.recordingStatusReason).toMatch(
      /^the gateway stopped before the clip was written/,
    );
    d.store.close();
  });
});
