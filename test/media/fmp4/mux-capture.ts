import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { AudioFrame, VideoAccessUnit } from '../../../src/media/access-unit.js';
import { AacDepacketizer, aacRtpParameters } from '../../../src/media/aac-depacketizer.js';
import { aacConfigFromFmtp } from '../../../src/media/aac-config.js';
import { DecodeTimeline, type TimedUnit } from '../../../src/media/fmp4/decode-timeline.js';
import type { FragmentSample } from '../../../src/media/fmp4/fragment.js';
import { buildInitSegment } from '../../../src/media/fmp4/init-segment.js';
import { audioSample } from '../../../src/media/fmp4/samples.js';
import { buildFragment, videoSample } from './fragment-bytes.js';
import { aacTrack, h264Track, h265Track, reorderDepthHint, type Fmp4Track } from '../../../src/media/fmp4/track.js';
import { h264ParameterSetsIn, h265ParameterSetsIn } from '../../../src/media/parameter-sets.js';
import { readRtpHeader } from '../../../src/media/rtp.js';
import { mediaCodecs, parseSdp } from '../../../src/media/sdp.js';
import { VideoDepacketizer, type VideoCodec } from '../../../src/media/video-depacketizer.js';

// RTP captured from ffmpeg → depacketiser → decode timeline → init segment and fragments: the path
// an HLS or MSE output takes, written to files for ffprobe and ffmpeg to read.

const run = promisify(execFile);

export interface Muxed {
  track: Fmp4Track;
  init: Buffer;
  fragments: Buffer[];
  /** The samples in decoding order, as given to the fragment builder. */
  samples: FragmentSample[];
  /** Their decode times. */
  dts: number[];
}

/** Fragments of `perFragment` samples, numbered from 1. */
function fragmentsOf(
  track: Fmp4Track,
  timed: Array<{ dts: number; sample: FragmentSample }>,
  perFragment: number,
): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < timed.length; i += perFragment) {
    const slice = timed.slice(i, i + perFragment);
    out.push(
      buildFragment(out.length + 1, [{ track, baseDecodeTime: slice[0]!.dts, samples: slice.map((t) => t.sample) }]),
    );
  }
  return out;
}

export function depacketizeVideo(packets: Buffer[], codec: VideoCodec): VideoAccessUnit[] {
  const units: VideoAccessUnit[] = [];
  const depacketizer = new VideoDepacketizer({ codec }, (u) => units.push(u));
  for (const p of packets) depacketizer.push(p, readRtpHeader(p)!);
  return units;
}

export function muxVideo(packets: Buffer[], codec: VideoCodec, perFragment = 3): Muxed & { units: VideoAccessUnit[] } {
  const units = depacketizeVideo(packets, codec);
  const first = units[0]!;
  const track =
    codec === 'H264' ? h264Track(1, h264ParameterSetsIn(first.nalus)) : h265Track(1, h265ParameterSetsIn(first.nalus));
  const timed: Array<{ dts: number; sample: FragmentSample }> = [];
  const timeline = new DecodeTimeline<VideoAccessUnit>(
    (t: TimedUnit<VideoAccessUnit>) => timed.push({ dts: t.dts, sample: videoSample(t) }),
    { initialReorderDepth: reorderDepthHint(track) },
  );
  for (const u of units) timeline.push(u, u.rtpTime);
  timeline.flush();
  return {
    track,
    units,
    init: buildInitSegment([track]),
    fragments: fragmentsOf(track, timed, perFragment),
    samples: timed.map((t) => t.sample),
    dts: timed.map((t) => t.dts),
  };
}

export function muxAac(packets: Buffer[], sdp: string, perFragment = 10): Muxed & { frames: AudioFrame[] } {
  const codec = mediaCodecs(parseSdp(sdp))[0]!;
  const track = aacTrack(1, aacConfigFromFmtp(codec.fmtp));
  const frames: AudioFrame[] = [];
  const depacketizer = new AacDepacketizer(aacRtpParameters(codec.fmtp), (f) => frames.push(f));
  for (const p of packets) depacketizer.push(p, readRtpHeader(p)!);
  const timed: Array<{ dts: number; sample: FragmentSample }> = [];
  const timeline = new DecodeTimeline<AudioFrame>((t) => timed.push({ dts: t.dts, sample: audioSample(t) }));
  for (const f of frames) timeline.push(f, f.rtpTime);
  timeline.flush(1024);
  return {
    track,
    frames,
    init: buildInitSegment([track]),
    fragments: fragmentsOf(track, timed, perFragment),
    samples: timed.map((t) => t.sample),
    dts: timed.map((t) => t.dts),
  };
}

/** Writes the file in a fresh directory, gives its path to `use`, removes it after. */
export async function withFile<T>(bytes: Buffer, name: string, use: (file: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(path.join(tmpdir(), 'fmp4-'));
  try {
    const file = path.join(dir, name);
    await writeFile(file, bytes);
    return await use(file);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export interface ProbeFrame {
  media_type: string;
  key_frame: number;
  pts?: number;
  pkt_dts?: number;
  best_effort_timestamp?: number;
}

export interface ProbePacket {
  stream_index: number;
  pts?: number;
  dts?: number;
  flags: string;
  size: string;
}

export interface Probe {
  streams: Array<{
    codec_name: string;
    width?: number;
    height?: number;
    sample_rate?: string;
    channels?: number;
    time_base: string;
    profile?: string;
  }>;
  frames: ProbeFrame[];
  packets: ProbePacket[];
}

export async function ffprobe(file: string): Promise<Probe> {
  const { stdout } = await run(
    'ffprobe',
    ['-v', 'error', '-of', 'json', '-show_streams', '-show_frames', '-show_packets', file],
    { maxBuffer: 64 << 20 },
  );
  // With both -show_frames and -show_packets, ffprobe interleaves them in one list, each with its type.
  const raw = JSON.parse(stdout) as {
    streams: Probe['streams'];
    packets_and_frames?: Array<{ type: string } & ProbeFrame & ProbePacket>;
  };
  const all = raw.packets_and_frames ?? [];
  return {
    streams: raw.streams,
    packets: all.filter((e) => e.type === 'packet'),
    frames: all.filter((e) => e.type === 'frame'),
  };
}

/** ffmpeg's decode of the file: its error lines (empty when every frame decodes) and per-frame hashes. */
export async function decode(file: string, format: string[] = []): Promise<{ errors: string; hashes: string[] }> {
  const { stdout, stderr } = await run(
    'ffmpeg',
    ['-v', 'error', ...format, '-i', file, '-map', '0:v:0?', '-map', '0:a:0?', '-f', 'framemd5', '-'],
    { maxBuffer: 64 << 20 },
  );
  const hashes = stdout
    .split('\n')
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => l.split(',').pop()!.trim());
  return { errors: stderr, hashes };
}

/** The access units as an Annex B elementary stream (start codes), what ffmpeg decodes as the reference. */
export function annexB(units: VideoAccessUnit[]): Buffer {
  const parts: Buffer[] = [];
  for (const u of units) for (const nal of u.nalus) parts.push(Buffer.of(0, 0, 0, 1), nal);
  return Buffer.concat(parts);
}
