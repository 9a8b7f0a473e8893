import type { StreamProfile } from '../../domain/types.js';
import type { FootageFile } from '../../store/footage.js';
import { FragmentMuxer } from '../mux/fragment-muxer.js';
import { keepPart, type KeptPart, type NewPart } from '../mux/part-assembler.js';
import type { FanOutReader, TrackStart } from '../relay/fanout.js';
import { footageFileName } from './file-name.js';
import type { FootageFileWriter, OpenFootageFile } from './file-writer.js';
import { encodeFragmentTable, type FragmentEntry } from './fragment-table.js';

// One camera profile's continuous footage: the relay's fan-out read as fMP4 fragments, one per group
// of pictures (mux/fragment-muxer.ts), copied into files of about fileS seconds, each an init
// segment followed by its fragments, so any file plays on its own. A file starts at a keyframe.
//
// Time: the fragments' decode times count from the muxer's zero; `zeroMs` is the wall clock of that
// zero, from the gateway's clock. A run of footage (from the first keyframe, or from a resync) is
// held in memory until it has SETTLE_MS of media and no group of pictures has lowered its zero for
// SETTLE_MS of the gateway's clock; its zero is the earliest any of those groups of pictures implies
// (each dated by the muxer from its pictures' arrivals): a picture reaches the gateway after it was
// taken, never before, so the earliest is the truest. One picture's arrival would not do: the first
// group of pictures a new reader gets is the relay's cached one, up to a group of pictures old, and a
// stream may start with a backlog that arrives in a burst (a camera flushing what it buffered, a
// gateway busy starting sixteen cameras), every picture of it late: only the paced pictures after it
// date the run, which is why the hold lasts until the zero stops falling. While the media time and
// the gateway's clock agree (within resyncMs), files follow each other exactly in media time. When
// the gateway's clock gets ahead (the camera stream paused or came back after an outage, or the
// camera's clock runs slow) a new run starts with a new zero: a gap is a gap. When the media gets
// ahead (a camera clock running fast), a new run could not help: no footage is dated before the end
// of the last file, and this run's files follow each other with no gap to take it from. The run goes
// on, and how far ahead its dating is shows in the stats (aheadMs).
//
// A disk slower than the camera: past maxPendingBytes not yet written, the file is closed and the
// footage until the next keyframe with the queue below half is dropped (a gap), never held in memory.

export interface CameraFootageOptions {
  deviceId: string;
  profile: StreamProfile;
  /** A file is closed at the first keyframe this long after its start. */
  fileS: number;
  maxPendingBytes: number;
  /** Largest difference between media time and the gateway's clock before a new zero (ms). */
  resyncMs: number;
  open: OpenFootageFile;
  /** A file was written and fsynced: its index row. */
  onFile: (file: FootageFile) => void;
  /** A write failed (the disk went away, filled up, turned read-only): this writer has stopped. */
  onDiskError: (err: Error) => void;
  /** The camera stream ended for this reader (evicted, or it could not be muxed). */
  onEnded: (reason: string) => void;
  wallClock?: () => number;
}

export interface CameraFootageStats {
  files: number;
  bytes: number;
  /** RTP payload bytes read from the camera stream (packets less their fixed 12-byte header). */
  received: number;
  /** Fragments dropped: the disk was behind, or the writer waited for a keyframe. */
  droppedFragments: number;
  /** New zeros after the first: gaps and clock corrections. */
  resyncs: number;
  /** How far the media time runs ahead of the gateway's clock at the last keyframe (ms; 0 when not): the footage's dating is that late. */
  aheadMs: number;
}

/** A run of footage not dated yet. */
interface HeldRun {
  parts: KeptPart[];
  /** The earliest zero its parts imply so far (wall-clock ms). */
  zero: number;
  /** The wall clock of the part that last lowered `zero` by more than ARRIVAL_JITTER_MS. */
  loweredAt: number;
  /** Media time and bytes of its parts. */
  ms: number;
  bytes: number;
}

interface OpenFile {
  name: string;
  writer: FootageFileWriter;
  startMs: number;
  zeroMs: number;
  initBytes: number;
  entries: FragmentEntry[];
  /** Decode time (90 kHz) at the end of the last fragment. */
  endTicks: number;
}

/**
 * A run's first groups of pictures are held this long (ms of media, two at least, and ms of the
 * gateway's clock since a group of pictures last lowered the run's zero) before its zero is chosen.
 */
const SETTLE_MS = 2000;
/** How much earlier a group of pictures must date the run than those before it to count as lowering its zero (arrival jitter, ms). */
const ARRIVAL_JITTER_MS = 250;
/** Fragments are groups of pictures, cut inside one longer than this (s). */
const MAX_FRAGMENT_S = 10;
/** A video sample longer than this is pictures missing (s). */
const MAX_SAMPLE_S = 2;
const TICKS_PER_MS = 90;
const RTP_HEADER_BYTES = 12;

export class CameraFootage implements FanOutReader {
  readonly stats: CameraFootageStats = {
    files: 0,
    bytes: 0,
    received: 0,
    droppedFragments: 0,
    resyncs: 0,
    aheadMs: 0,
  };
  private readonly muxer: FragmentMuxer;
  private file: OpenFile | null = null;
  private zeroMs: number | null = null;
  /** The parts of a run whose zero is not chosen yet (null: the run is dated). */
  private held: HeldRun | null = null;
  /** Wall clock where the last file ended: no file starts before it. */
  private lastEndMs = -Infinity;
  private stopped = false;
  private readonly finishing = new Set<Promise<void>>();
  /** Writers of files closed and not yet fsynced: what the disk still has to write. */
  private readonly pendingWriters = new Set<FootageFileWriter>();

  constructor(
    sdp: string,
    private readonly opts: CameraFootageOptions,
  ) {
    this.muxer = new FragmentMuxer(
      sdp,
      {
        partTarget: MAX_FRAGMENT_S,
        targetDuration: MAX_FRAGMENT_S,
        maxSampleDuration: MAX_SAMPLE_S,
        ...(opts.wallClock ? { wallClock: opts.wallClock } : {}),
      },
      {
        addPart: (part: NewPart) => this.addPart(part),
        ended: (reason) => opts.onEnded(reason),
      },
    );
  }

  setStarts(starts: TrackStart[]): void {
    this.muxer.setStarts(starts);
  }

  /** The file being written, if any (its name), for status and tests. */
  get openFileName(): string | null {
    return this.file?.name ?? null;
  }

  /**
   * Writes what the muxer holds (the open group of pictures) and closes the file; resolves once
   * every file this writer closed is fsynced and handed to onFile (or failed).
   */
  async stop(): Promise<void> {
    if (!this.stopped) {
      this.muxer.flush();
      this.settle();
      this.stopped = true;
      this.muxer.end('stopped');
      this.closeFile();
    }
    await Promise.all([...this.finishing]);
  }

  /** Stops at once, keeping nothing more (the disk failed): open files are closed unsynced. */
  async abandon(): Promise<void> {
    this.stopped = true;
    this.held = null;
    this.muxer.end('stopped');
    const file = this.file;
    this.file = null;
    await Promise.all([...this.finishing, file?.writer.abandon()]);
  }

  // --- FanOutReader ---

  pendingBytes(): number {
    return 0;
  }

  deliver(track: number, packet: Buffer): void {
    if (this.stopped) return;
    this.stats.received += Math.max(0, packet.length - RTP_HEADER_BYTES);
    this.muxer.deliver(track, packet);
  }

  deliverRtcp(): void {
    // Wall-clock dating comes from the gateway's clock, not the camera's sender reports.
  }

  evict(reason: string): void {
    this.muxer.end(reason);
  }

  private addPart(fragment: NewPart): void {
    if (this.stopped) return;
    // Written a moment later, or held until the run is dated: a copy of its own.
    const part = keepPart(fragment);
    if (part.independent && this.held === null) {
      const late = this.lateBy(part);
      this.stats.aheadMs = late === null ? 0 : Math.max(0, Math.round(-late));
      if (late === null || late > this.opts.resyncMs) {
        this.closeFile();
        if (this.zeroMs !== null) this.stats.resyncs++;
        this.zeroMs = null;
        this.held = { parts: [], zero: Infinity, loweredAt: -Infinity, ms: 0, bytes: 0 };
      }
    }
    if (this.held !== null) this.hold(this.held, part);
    else this.write(part);
  }

  /**
   * How far the gateway's clock is past the dated media time of a part, ms (negative: the dating
   * runs ahead of the clock); null while the run has no zero. Past resyncMs, a new run starts (see the top).
   */
  private lateBy(part: KeptPart): number | null {
    return this.zeroMs === null ? null : part.wallClock - (this.zeroMs + part.decodeTime / TICKS_PER_MS);
  }

  /** A part of a run not dated yet: kept until the run's zero has settled (see the top), or half the pending bound. */
  private hold(held: HeldRun, part: KeptPart): void {
    if (held.parts.length === 0 && !part.independent) {
      this.stats.droppedFragments++;
      return;
    }
    const implied = part.wallClock - part.decodeTime / TICKS_PER_MS;
    if (implied < held.zero - ARRIVAL_JITTER_MS) held.loweredAt = part.wallClock;
    held.zero = Math.min(held.zero, implied);
    held.parts.push(part);
    held.ms += part.duration * 1000;
    held.bytes += part.bytes.length;
    const settled = held.parts.length >= 2 && held.ms >= SETTLE_MS && part.wallClock - held.loweredAt >= SETTLE_MS;
    if (settled || held.bytes >= this.opts.maxPendingBytes / 2) this.settle();
  }

  /** Chooses the held run's zero (the earliest its parts imply, never before the last file's end) and writes it. */
  private settle(): void {
    const held = this.held;
    this.held = null;
    const first = held?.parts[0];
    if (!held || !first) return;
    const zero = held.zero;
    this.zeroMs = Math.max(zero, this.lastEndMs + 1 - first.decodeTime / TICKS_PER_MS);
    for (const part of held.parts) this.write(part);
  }

  private write(part: KeptPart): void {
    if (part.independent) this.atKeyframe(part);
    const file = this.file;
    if (!file) {
      this.stats.droppedFragments++;
      return;
    }
    if (file.entries.length > 0 && file.writer.pendingBytes + part.bytes.length > this.opts.maxPendingBytes) {
      // The disk is behind: what it has gets closed, and nothing more is held until it catches up.
      this.closeFile();
      this.stats.droppedFragments++;
      return;
    }
    file.writer.append(part.bytes);
    const duration = Math.round(part.duration * 90_000);
    file.entries.push({ bytes: part.bytes.length, duration, keyframe: part.independent });
    file.endTicks = part.decodeTime + duration;
    this.stats.bytes += part.bytes.length;
  }

  /** At a keyframe of a dated run: a new file when due, or when none is open. */
  private atKeyframe(part: KeptPart): void {
    if (this.file && part.wallClock - this.file.startMs >= this.opts.fileS * 1000) this.closeFile();
    if (!this.file && this.muxer.init && this.zeroMs !== null && !this.diskBehind())
      this.openFile(part, this.muxer.init, this.zeroMs);
  }

  private diskBehind(): boolean {
    let pending = this.file?.writer.pendingBytes ?? 0;
    for (const p of this.pendingWriters) pending += p.pendingBytes;
    return pending > this.opts.maxPendingBytes / 2;
  }

  private openFile(part: KeptPart, init: Buffer, zeroMs: number): void {
    const startMs = Math.round(zeroMs + part.decodeTime / TICKS_PER_MS);
    const name = footageFileName({ deviceId: this.opts.deviceId, profile: this.opts.profile, startMs });
    const writer = this.opts.open(name, (err) => this.diskError(err));
    writer.append(init);
    this.file = { name, writer, startMs, zeroMs, initBytes: init.length, entries: [], endTicks: part.decodeTime };
  }

  private closeFile(): void {
    const file = this.file;
    if (!file) return;
    this.file = null;
    const endMs = Math.max(file.startMs, Math.round(file.zeroMs + file.endTicks / TICKS_PER_MS));
    this.lastEndMs = Math.max(this.lastEndMs, endMs);
    this.pendingWriters.add(file.writer);
    const done = file.writer
      .finish()
      .then((bytes) => {
        this.stats.files++;
        this.opts.onFile({
          deviceId: this.opts.deviceId,
          profile: this.opts.profile,
          name: file.name,
          startMs: file.startMs,
          endMs,
          zeroMs: file.zeroMs,
          bytes,
          initBytes: file.initBytes,
          fragments: encodeFragmentTable(file.entries),
        });
      })
      .catch((err: unknown) => this.diskError(err instanceof Error ? err : new Error(String(err))))
      .finally(() => {
        this.pendingWriters.delete(file.writer);
        this.finishing.delete(done);
      });
    this.finishing.add(done);
  }

  private diskError(err: Error): void {
    if (this.stopped) return;
    this.stopped = true;
    // The open file is closed now, unsynced: nothing more goes to a failing disk, and the disk can
    // be unmounted. What it holds is found at the next reconcile, as after a crash. The muxer ends
    // as on a stop: the recorder tears every camera down for the disk (onDiskError), not for the stream.
    const file = this.file;
    this.file = null;
    if (file) {
      const closed = file.writer.abandon().finally(() => this.finishing.delete(closed));
      this.finishing.add(closed);
    }
    this.muxer.end('stopped');
    this.opts.onDiskError(err);
  }
}
