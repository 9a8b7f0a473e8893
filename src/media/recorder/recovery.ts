import { existsSync, promises as fsp, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { BaseLogger } from 'pino';
import { newId } from '../../domain/ids.js';
import type { Alert, EventType } from '../../domain/types.js';
import { commitFile } from '../../platform/durable-files.js';
import type { NewRecording, OpenEpisode, PartOutcome } from '../../store/store.js';
import { checkClip } from './clip-check.js';
import { audioModeOf, writeClip, writeThumbnail } from './clip-writer.js';
import { isSegmentFile, parseIndex, SEGMENT_INDEX, selectSegments, type Segment } from './segments.js';

// At start, before the storage clean-up: the episodes a crashed run was recording (open_episodes)
// get the clip they can still have. The part whose assembly had begun keeps its file when it is
// whole (renamed, or the `.tmp` that the orphaned ffmpeg finished); footage still in RAM (a process
// crash leaves the tmpfs as it was) is assembled; and what cannot be had is said on the alert
// (recording_status partial or lost, with the reason), which reaches the cloud through the outbox.

export interface RecoveryStore {
  listOpenEpisodes(): OpenEpisode[];
  getAlert(id: string): Alert | null;
  saveRecording(r: NewRecording, now?: number, part?: PartOutcome): unknown;
  settleEpisodePart(alertId: string, part: PartOutcome): void;
}

export interface RecoveryOptions {
  store: RecoveryStore;
  storageDir: string;
  /** The RAM directory of this run's recorders; whatever a crashed run left in it goes at the end. */
  segmentRoot: string;
  ffmpegPath: string;
  maxClipMs: number;
  logger: BaseLogger;
  /** When this boot began (ms); an episode journalled on another boot lost its RAM. */
  bootAt?: number;
}

export interface Recovered {
  episodes: number;
  /** Clips whose file the crash left whole (checked, then kept). */
  kept: number;
  /** Clips assembled from the segments still in RAM. */
  assembled: number;
  /** Episodes (or parts) with no clip: the alert says why. */
  lost: number;
}

/**
 * When the machine booted, in ms: now − os.uptime() (libuv reads /proc/uptime, or CLOCK_BOOTTIME
 * where the unit's ProcSubset=pid hides it; the kernel's boot_id in /proc/sys is hidden too).
 */
export function bootTime(): number {
  return Math.round(Date.now() - os.uptime() * 1000);
}

/**
 * Boot times are computed from the wall clock, which may be stepped (NTP after a boot without a
 * real-time clock): within this, the same boot.
 */
const SAME_BOOT_MS = 120_000;

export const STOPPED_DURING_EVENT = 'the gateway stopped during the event: the clip ends where its footage in RAM ends';
const RAM_GONE_POWER = 'power cut or reboot while recording: the footage held in RAM is gone';
const RAM_GONE_STOP = 'the gateway stopped before the clip was written, and the footage held in RAM is gone';

/**
 * The segments the index in `dir` lists whose files exist, oldest first, and the one being written
 * when the daemon died (its line would have come with the next keyframe): the newest run's file
 * after its last listed one, ending when it was last written.
 */
export function readFootage(dir: string): Segment[] {
  let text: string;
  try {
    text = readFileSync(path.join(dir, SEGMENT_INDEX), 'utf8');
  } catch {
    return [];
  }
  const footage = parseIndex(text).filter((s) => existsSync(path.join(dir, s.file)));
  const last = footage.at(-1);
  if (!last) return footage;
  const run = `${last.file.split('-')[0]}-`;
  const tail = readdirSync(dir)
    .filter((f) => f.startsWith(run) && isSegmentFile(f) && f > last.file)
    .sort()[0];
  if (tail) {
    const st = statSync(path.join(dir, tail));
    if (st.size > 0 && st.mtimeMs > last.endAt)
      footage.push({
        file: tail,
        startAt: last.endAt,
        endAt: Math.round(st.mtimeMs),
        durationS: (st.mtimeMs - last.endAt) / 1000,
      });
  }
  return footage;
}

interface Window {
  from: number;
  to: number;
  final: boolean;
  eventType: EventType;
  /** Said on the alert when this window's clip is written (footage known to be missing). */
  note: string | null;
}

/**
 * The parts still to write: the part whose assembly had begun (if its file was not whole), then,
 * unless that was the last, the rest of the episode, which was still going on when the daemon died:
 * in parts of at most maxClipMs up to the end of the footage in RAM.
 */
export function windowsToWrite(
  ep: { fromAt: number; clip: OpenEpisode['clip'] },
  clipKept: boolean,
  footageEnd: number | null,
  alertType: EventType,
  maxClipMs: number,
): Window[] {
  const windows: Window[] = [];
  let from = ep.fromAt;
  if (ep.clip) {
    if (!clipKept)
      windows.push({ from, to: ep.clip.to, final: ep.clip.final, eventType: ep.clip.eventType, note: null });
    if (ep.clip.final) return windows;
    from = ep.clip.to;
  }
  if (footageEnd === null || footageEnd <= from) {
    windows.push({ from, to: from, final: true, eventType: alertType, note: null });
    return windows;
  }
  while (from < footageEnd) {
    const to = Math.min(from + maxClipMs, footageEnd);
    windows.push({
      from,
      to,
      final: to >= footageEnd,
      eventType: alertType,
      note: to >= footageEnd ? STOPPED_DURING_EVENT : null,
    });
    from = to;
  }
  return windows;
}

/** Never throws: a recording that cannot be recovered must not keep the gateway from starting. */
export async function recoverEpisodes(o: RecoveryOptions): Promise<Recovered> {
  const result: Recovered = { episodes: 0, kept: 0, assembled: 0, lost: 0 };
  const dirs = new Set<string>();
  for (const ep of attempt(o, 'reading the journal', () => o.store.listOpenEpisodes()) ?? []) {
    result.episodes++;
    dirs.add(ep.segmentDir);
    try {
      await recoverEpisode(ep, o, result);
    } catch (err) {
      o.logger.error(
        { alert: ep.alertId, err: (err as Error).message },
        'recovery: an interrupted recording could not be recovered',
      );
      attempt(o, 'settling an alert', () =>
        o.store.settleEpisodePart(ep.alertId, {
          final: true,
          nextFrom: ep.fromAt,
          note: `recovery after a crash failed: ${(err as Error).message}`.slice(0, 300),
        }),
      );
      result.lost++;
    }
  }
  // What a crashed run left in RAM is of no further use (no recorder runs yet).
  attempt(o, 'removing the RAM of the crashed run', () => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    if (existsSync(o.segmentRoot))
      for (const name of readdirSync(o.segmentRoot))
        rmSync(path.join(o.segmentRoot, name), { recursive: true, force: true });
  });
  if (result.episodes > 0) o.logger.warn(result, 'recovery: recordings a crash interrupted');
  return result;
}

function attempt<T>(o: RecoveryOptions, what: string, fn: () => T): T | null {
  try {
    return fn();
  } catch (err) {
    o.logger.error({ err: (err as Error).message }, `recovery: failed ${what}`);
    return null;
  }
}

async function recoverEpisode(ep: OpenEpisode, o: RecoveryOptions, result: Recovered): Promise<void> {
  const alert = o.store.getAlert(ep.alertId);
  const alertType: EventType = alert && alert.type !== 'device_offline' ? alert.type : 'motion';
  const triggeredAt = alert?.createdAt ?? ep.fromAt;
  const where = { device: ep.deviceId, alert: ep.alertId };
  const log = o.logger;
  const clipKept = ep.clip ? await keepWrittenClip(ep, ep.clip, o, triggeredAt) : false;
  if (clipKept) result.kept++;
  const footage = readFootage(ep.segmentDir);
  const gone = Math.abs(ep.bootAt - (o.bootAt ?? bootTime())) > SAME_BOOT_MS ? RAM_GONE_POWER : RAM_GONE_STOP;
  for (const w of windowsToWrite(ep, clipKept, footage.at(-1)?.endAt ?? null, alertType, o.maxClipMs)) {
    const part = { final: w.final, nextFrom: w.to };
    const selection = w.to > w.from ? selectSegments(footage, w.from, w.to) : null;
    if (!selection) {
      log.warn(
        { ...where, from: w.from, to: w.to, final: w.final },
        'recovery: no footage left for an interrupted recording',
      );
      o.store.settleEpisodePart(ep.alertId, { ...part, note: footage.length === 0 ? gone : STOPPED_DURING_EVENT });
      result.lost++;
      continue;
    }
    const endAt = Math.min(w.to, selection.endAt);
    const durationS = (endAt - selection.startAt) / 1000;
    const files = selection.segments.map((s) => ({ path: path.join(ep.segmentDir, s.file), durationS: s.durationS }));
    const id = newId('rec');
    const fileName = `${ep.deviceId}/${id}.mp4`;
    const audio = await audioModeOf(o.ffmpegPath, (files[0] as { path: string }).path);
    const written = await writeClip({
      ffmpegPath: o.ffmpegPath,
      scratchDir: ep.segmentDir,
      segments: files,
      durationS,
      audio,
      storageDir: o.storageDir,
      fileName,
    });
    const note = w.note ?? (endAt < w.to - 1000 ? STOPPED_DURING_EVENT : null);
    o.store.saveRecording(
      {
        id,
        deviceId: ep.deviceId,
        eventType: w.eventType,
        startedAt: Math.round(selection.startAt),
        endedAt: Math.round(endAt),
        sizeBytes: written.sizeBytes,
        fileName,
        alertId: ep.alertId,
      },
      undefined,
      { ...part, note },
    );
    result.assembled++;
    log.info(
      { ...where, recording: id, seconds: Math.round(durationS * 10) / 10 },
      'recovery: clip assembled from the footage left in RAM',
    );
    await writeThumbnail({
      ffmpegPath: o.ffmpegPath,
      storageDir: o.storageDir,
      fileName,
      atS: (triggeredAt - selection.startAt) / 1000,
      durationS,
    });
  }
}

/**
 * The part whose assembly had begun: its clip renamed into place (the row was not written yet), or
 * its `.tmp` (an orphaned ffmpeg may have finished it), kept when whole; a broken one is removed.
 */
async function keepWrittenClip(
  ep: OpenEpisode,
  clip: NonNullable<OpenEpisode['clip']>,
  o: RecoveryOptions,
  triggeredAt: number,
): Promise<boolean> {
  const where = { device: ep.deviceId, alert: ep.alertId };
  const fileName = `${ep.deviceId}/${clip.id}.mp4`;
  const final = path.join(o.storageDir, fileName);
  const tmp = path.join(path.dirname(final), `.${clip.id}.mp4.tmp`);
  const durationS = (clip.endedAt - clip.startedAt) / 1000;
  for (const candidate of [final, tmp]) {
    if (!existsSync(candidate)) continue;
    const check = await checkClip(o.ffmpegPath, candidate, durationS);
    if (!check.ok) {
      o.logger.warn(
        { ...where, file: path.basename(candidate), reason: check.reason },
        'recovery: an interrupted clip is not whole; removed',
      );
      await fsp.rm(candidate, { force: true });
      continue;
    }
    if (candidate === tmp) await commitFile(tmp, final);
    const { size } = await fsp.stat(final);
    o.store.saveRecording(
      {
        id: clip.id,
        deviceId: ep.deviceId,
        eventType: clip.eventType,
        startedAt: clip.startedAt,
        endedAt: clip.endedAt,
        sizeBytes: size,
        fileName,
        alertId: ep.alertId,
      },
      undefined,
      { final: clip.final, nextFrom: clip.to },
    );
    o.logger.info(
      { ...where, recording: clip.id, from: candidate === tmp ? 'tmp' : 'renamed' },
      'recovery: interrupted clip kept',
    );
    await writeThumbnail({
      ffmpegPath: o.ffmpegPath,
      storageDir: o.storageDir,
      fileName,
      atS: (triggeredAt - clip.startedAt) / 1000,
      durationS,
    });
    return true;
  }
  return false;
}
