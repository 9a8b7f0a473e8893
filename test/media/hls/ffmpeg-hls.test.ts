import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AudioFrame, VideoAccessUnit } from '../../../src/media/access-unit.js';
import { DecodeTimeline } from '../../../src/media/fmp4/decode-timeline.js';
import { buildInitSegment } from '../../../src/media/fmp4/init-segment.js';
import { h264Track, reorderDepthHint } from '../../../src/media/fmp4/track.js';
import { LiveWindow } from '../../../src/media/hls/live-window.js';
import { keepPart, PartAssembler } from '../../../src/media/mux/part-assembler.js';
import { parseMediaPlaylist } from '../../../src/media/hls/playlist-parse.js';
import { writeMediaPlaylist } from '../../../src/media/hls/playlist.js';
import { h264ParameterSetsIn } from '../../../src/media/parameter-sets.js';
import { captureRtp } from '../../support/rtp-capture.js';
import { decode, depacketizeVideo, ffprobe, muxAac } from '../fmp4/mux-capture.js';

// One second of ffmpeg's H.264 RTP (10 fps, a keyframe every 3 pictures, B-frames) through the
// whole pure path: depacketiser, decode timeline, part assembler, live window, playlist. The
// window's files are written to a directory; ffmpeg plays the playlist (closed with an ENDLIST for
// the test, as a live one would be reloaded) and the parts joined behind the init segment.

let dir = '';
let window: LiveWindow;
let units: VideoAccessUnit[];
let init: Buffer;

/** Every part still in the window, in order. */
function partBytes(w: LiveWindow): Buffer[] {
  const out: Buffer[] = [];
  for (let id = 0; ; id++) {
    const part = w.part(id);
    if (part === 'wait') return out;
    if (part !== undefined) out.push(part.bytes);
  }
}

beforeAll(async () => {
  const { packets } = await captureRtp(['-c:v', 'libx264', '-g', '3', '-bf', '1', '-sc_threshold', '0']);
  units = depacketizeVideo(packets, 'H264');
  const track = h264Track(1, h264ParameterSetsIn(units[0]!.nalus));
  init = buildInitSegment([track]);
  window = new LiveWindow({ partTarget: 0.2, targetDuration: 1, maxSegments: 10, maxBytes: 1 << 24 });
  let clock = Date.UTC(2026, 10, 25, 10);
  const assembler = new PartAssembler(
    { addPart: (p) => window.addPart(keepPart(p)) },
    { video: track, audio: null },
    { partTarget: 0.2, targetDuration: 1 },
    () => (clock += 100),
  );
  const timeline = new DecodeTimeline<VideoAccessUnit>((t) => assembler.pushVideo(t), {
    initialReorderDepth: reorderDepthHint(track),
  });
  for (const u of units) timeline.push(u, u.rtpTime);
  timeline.flush();
  assembler.flush();
  dir = await mkdtemp(path.join(tmpdir(), 'llhls-'));
});

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('LL-HLS from RTP', () => {
  it('cuts a segment at every keyframe, parts of at most PART-TARGET, the first part of each segment independent', () => {
    expect(units.filter((u) => u.keyframe)).toHaveLength(4); // pictures 0, 3, 6, 9
    const playlist = parseMediaPlaylist(writeMediaPlaylist(window.playlist()));
    expect(playlist.segments).toHaveLength(3); // the fourth GOP is still open
    expect(playlist.segments.map((s) => s.duration)).toEqual([0.3, 0.3, 0.3]);
    for (const s of playlist.segments) {
      expect(s.parts.map((p) => p.independent)).toEqual([true, false]);
      expect(s.parts.reduce((sum, p) => sum + p.duration, 0)).toBeCloseTo(s.duration, 6);
      for (const p of s.parts) expect(p.duration).toBeLessThanOrEqual(0.2);
    }
    expect(playlist.openParts.map((p) => p.independent)).toEqual([true]);
  });

  it('ffmpeg plays the playlist of complete segments without a decode error, and the parts decode to every picture', async () => {
    const names: string[] = [];
    await writeFile(path.join(dir, 'init.mp4'), init);
    for (let msn = 0; msn < 3; msn++) {
      const parts = window.segment(msn)!;
      await writeFile(path.join(dir, `seg${msn}.mp4`), Buffer.concat(parts.map((p) => p.bytes)));
      names.push(`seg${msn}.mp4`);
    }
    const text = writeMediaPlaylist(window.playlist()) + '#EXT-X-ENDLIST\n';
    await writeFile(path.join(dir, 'index.m3u8'), text);
    const played = await decode(path.join(dir, 'index.m3u8'), ['-allowed_extensions', 'ALL']);
    expect(played.errors).toBe('');
    expect(played.hashes).toHaveLength(9);

    const whole = path.join(dir, 'parts.mp4');
    await writeFile(whole, Buffer.concat([init, ...partBytes(window)]));
    const decoded = await decode(whole);
    expect(decoded.errors).toBe('');
    expect(decoded.hashes).toHaveLength(10);
    expect(decoded.hashes.slice(0, 9)).toEqual(played.hashes);
  });
});

describe('LL-HLS parts with H.264 and AAC', () => {
  it('carries both tracks in each part; ffprobe reads both and ffmpeg decodes them without an error', async () => {
    const { packets: videoPackets } = await captureRtp(['-c:v', 'libx264', '-g', '5', '-bf', '0']);
    // captureRtp's `-t 1` lands before these options, so it bounds the sine input that is sent.
    const { packets: audioPackets, sdp } = await captureRtp([
      '-f',
      'lavfi',
      '-i',
      'sine=frequency=440:sample_rate=48000',
      '-map',
      '1:a',
      '-c:a',
      'aac',
      '-ac',
      '1',
    ]);
    const videoUnits = depacketizeVideo(videoPackets, 'H264');
    const audioMux = muxAac(audioPackets, sdp);
    const track = h264Track(1, h264ParameterSetsIn(videoUnits[0]!.nalus));
    const audioTrack = { ...audioMux.track, id: 2 };
    const av = new LiveWindow({ partTarget: 0.3, targetDuration: 1, maxSegments: 10, maxBytes: 1 << 24 });
    const assembler = new PartAssembler(
      { addPart: (p) => av.addPart(keepPart(p)) },
      { video: track, audio: audioTrack },
      { partTarget: 0.3, targetDuration: 1 },
      () => 0,
    );
    // Two separate ffmpeg runs have unrelated RTP clocks: each track starts at its first unit here.
    const audioTimeline = new DecodeTimeline<AudioFrame>((t) => assembler.pushAudio(t));
    const videoTimeline = new DecodeTimeline<VideoAccessUnit>((t) => assembler.pushVideo(t));
    let a = 0;
    for (const u of videoUnits) {
      // Interleave as a camera does: the audio up to this picture's time first.
      while (
        a < audioMux.frames.length &&
        ((audioMux.frames[a]!.rtpTime - audioMux.frames[0]!.rtpTime) >>> 0) / 48_000 <=
          ((u.rtpTime - videoUnits[0]!.rtpTime) >>> 0) / 90_000
      ) {
        audioTimeline.push(audioMux.frames[a]!, audioMux.frames[a]!.rtpTime);
        a++;
      }
      videoTimeline.push(u, u.rtpTime);
    }
    while (a < audioMux.frames.length) audioTimeline.push(audioMux.frames[a]!, audioMux.frames[a++]!.rtpTime);
    videoTimeline.flush();
    audioTimeline.flush(1024);
    assembler.flush();

    const file = path.join(dir, 'av.mp4');
    await writeFile(file, Buffer.concat([buildInitSegment([track, audioTrack]), ...partBytes(av)]));
    const probe = await ffprobe(file);
    expect(probe.streams.map((s) => s.codec_name).sort()).toEqual(['aac', 'h264']);
    const audioInParts = audioMux.frames.filter(
      (f) => ((f.rtpTime - audioMux.frames[0]!.rtpTime) >>> 0) / 48_000 < 1,
    ).length;
    expect(probe.frames.filter((f) => f.media_type === 'video')).toHaveLength(10);
    expect(probe.frames.filter((f) => f.media_type === 'audio')).toHaveLength(audioInParts);
    const decoded = await decode(file);
    expect(decoded.errors).toBe('');
  });
});
