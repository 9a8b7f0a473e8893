import { describe, expect, it } from 'vitest';
import type { VideoAccessUnit } from '../../../src/media/access-unit.js';
import { parseAacConfig } from '../../../src/media/aac-config.js';
import { findBoxes, readBoxes, readTfdt, readTfhd, readTrun } from '../../../src/media/fmp4/reader.js';
import { aacTrack, h264Track } from '../../../src/media/fmp4/track.js';
import { LiveWindow } from '../../../src/media/hls/live-window.js';
import { keepPart, PartAssembler } from '../../../src/media/mux/part-assembler.js';

// Synthetic dated samples (25 fps video, 48 kHz AAC) through the assembler: where parts and
// segments are cut, and which audio frames each part carries.

const SPS = Buffer.from('6764000cacd94141fb011000000300100000030140f1429960', 'hex');
const PPS = Buffer.from('68ebe3cb22c0', 'hex');
const video = h264Track(1, { sps: [SPS], pps: [PPS] });
const audio = aacTrack(2, parseAacConfig(Buffer.from('1188', 'hex'))); // AAC-LC 48 kHz mono
const FRAME = 3600; // 90 kHz / 25 fps

function unit(keyframe: boolean): VideoAccessUnit {
  return { rtpTime: 0, nalus: [Buffer.of(keyframe ? 0x65 : 0x41, 0x88, 1)], keyframe, afterLoss: false };
}

function setup() {
  const window = new LiveWindow({ partTarget: 0.2, targetDuration: 2, maxSegments: 5, maxBytes: 1 << 20 });
  const assembler = new PartAssembler(
    { addPart: (p) => window.addPart(keepPart(p)) },
    { video, audio },
    { partTarget: 0.2, targetDuration: 2 },
    () => 0,
  );
  return { window, assembler };
}

/** Per part: [video sample count, first video DTS, audio sample count, first audio DTS]. */
function partContents(window: LiveWindow): Array<[number, number, number, number | null]> {
  const out: Array<[number, number, number, number | null]> = [];
  for (let id = 0; ; id++) {
    const part = window.part(id);
    if (part === 'wait' || part === undefined) return out;
    const trafs = findBoxes(readBoxes(part.bytes), 'traf');
    const row = (trackId: number): [number, number | null] => {
      const traf = trafs.find((t) => readTfhd(t.children.find((c) => c.type === 'tfhd')!).trackId === trackId);
      if (!traf) return [0, null];
      return [
        readTrun(traf.children.find((c) => c.type === 'trun')!).samples.length,
        readTfdt(traf.children.find((c) => c.type === 'tfdt')!).baseDecodeTime,
      ];
    };
    const [vn, vd] = row(1);
    const [an, ad] = row(2);
    out.push([vn, vd ?? -1, an, ad]);
  }
}

describe('PartAssembler', () => {
  it('drops what comes before the first keyframe, cuts 200 ms parts and a segment at the next keyframe, audio with its video', () => {
    const { window, assembler } = setup();
    assembler.pushVideo({ unit: unit(false), dts: 0, compositionOffset: 0, duration: FRAME });
    assembler.pushAudio({
      unit: { rtpTime: 0, data: Buffer.of(1), afterLoss: false },
      dts: 0,
      compositionOffset: 0,
      duration: 1024,
    });
    // 12 pictures from 40 ms: a keyframe, 10 others, a keyframe; audio every 1024 samples from 40 ms.
    for (let i = 1; i <= 12; i++) {
      assembler.pushVideo({ unit: unit(i === 1 || i === 12), dts: i * FRAME, compositionOffset: 0, duration: FRAME });
    }
    for (let a = 0; a < 11; a++)
      assembler.pushAudio({
        unit: { rtpTime: 0, data: Buffer.of(2), afterLoss: false },
        dts: 1920 + a * 1024,
        compositionOffset: 0,
        duration: 1024,
      });
    assembler.flush();
    expect(assembler.stats.droppedBeforeKeyframe).toBe(2);
    // Audio is pushed after the video here, so each part takes the frames waiting when it closes:
    // none for the first parts, then all that start before the part's video ends.
    const rows = partContents(window);
    expect(rows.map((r) => [r[0], r[1]])).toEqual([
      [5, 1 * FRAME],
      [5, 6 * FRAME],
      [1, 11 * FRAME],
      [1, 12 * FRAME],
    ]);
    const audioFrames = rows.reduce((n, r) => n + r[2], 0);
    expect(audioFrames).toBe(11);
    // The segment boundary falls before picture 12, the second keyframe.
    expect(window.segment(0)!.map((p) => p.id)).toEqual([0, 1, 2]);
    expect(window.playlist().openParts).toEqual([{ duration: 0.04, uri: 'part3.mp4', independent: true }]);
  });

  it('puts an audio frame in the part whose video time it starts in', () => {
    const { window, assembler } = setup();
    const pushAudioUpTo = (seconds: number, state: { next: number }) => {
      while (state.next * 1024 < seconds * 48_000) {
        assembler.pushAudio({
          unit: { rtpTime: 0, data: Buffer.of(3), afterLoss: false },
          dts: state.next * 1024,
          compositionOffset: 0,
          duration: 1024,
        });
        state.next++;
      }
    };
    const state = { next: 0 };
    for (let i = 0; i < 11; i++) {
      pushAudioUpTo((i + 1) * 0.04, state); // audio arrives a little ahead of the video
      assembler.pushVideo({ unit: unit(i === 0), dts: i * FRAME, compositionOffset: 0, duration: FRAME });
    }
    const rows = partContents(window);
    // Part 0 covers 0–200 ms: frames starting at 0, 21.3, …, 192 ms (10 of them).
    expect(rows[0]).toEqual([5, 0, 10, 0]);
    expect(rows[1]).toEqual([5, 5 * FRAME, 9, 10 * 1024]);
  });

  it('cut() closes the part with what it has, the group of pictures going on; nothing to cut is no part', () => {
    const parts: Array<{ n: number; independent: boolean; closedBy: string; startsSegment: boolean }> = [];
    const assembler = new PartAssembler(
      {
        addPart: (p) =>
          parts.push({
            n: readTrun(findBoxes(readBoxes(Buffer.concat(p.chunks)), 'trun')[0]!).samples.length,
            independent: p.independent,
            closedBy: p.closedBy,
            startsSegment: p.startsSegment,
          }),
      },
      { video, audio: null },
      { partTarget: 2, targetDuration: 2 },
      () => 0,
    );
    const push = (i: number) =>
      assembler.pushVideo({ unit: unit(i % 10 === 0), dts: i * FRAME, compositionOffset: 0, duration: FRAME });
    for (let i = 0; i < 3; i++) push(i);
    assembler.cut();
    assembler.cut();
    for (let i = 3; i < 10; i++) push(i);
    assembler.cut();
    push(10);
    expect(parts).toEqual([
      { n: 3, independent: true, closedBy: 'cut', startsSegment: true },
      { n: 7, independent: false, closedBy: 'cut', startsSegment: false },
    ]);
    assembler.flush();
    expect(parts.at(-1)).toEqual({ n: 1, independent: true, closedBy: 'flush', startsSegment: true });
  });
});
