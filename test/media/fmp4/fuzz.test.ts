import { describe, expect, it } from 'vitest';
import type { VideoAccessUnit } from '../../../src/media/access-unit.js';
import { AacDepacketizer } from '../../../src/media/aac-depacketizer.js';
import { parseAacConfig } from '../../../src/media/aac-config.js';
import { DecodeTimeline } from '../../../src/media/fmp4/decode-timeline.js';
import type { FragmentSample } from '../../../src/media/fmp4/fragment.js';
import { buildFragment } from './fragment-bytes.js';
import { buildInitSegment } from '../../../src/media/fmp4/init-segment.js';
import { readBoxes, type Box } from '../../../src/media/fmp4/reader.js';
import { aacTrack, h264Track, h265Track, type Fmp4Track } from '../../../src/media/fmp4/track.js';
import { MediaFormatError } from '../../../src/media/errors.js';
import { readRtpHeader } from '../../../src/media/rtp.js';
import { VideoDepacketizer } from '../../../src/media/video-depacketizer.js';
import { makeRng, type Rng } from '../../support/fuzz.js';
import { rtp } from './rtp-packets.js';

// The muxer's inputs at random: parameter sets and audio configs of garbage (a MediaFormatError or
// a track whose init segment reads back whole), access units and sample fields of any value (a
// MediaFormatError or a fragment whose every box size adds up), RTP payloads of any bytes (never a
// throw from a depacketiser). Failures print the seed; FUZZ_SEED=<n> replays them.

const rng = makeRng();
const ROUNDS = 400;
const SPS = Buffer.from('6764000cacd94141fb011000000300100000030140f1429960', 'hex');
const PPS = Buffer.from('68ebe3cb22c0', 'hex');

/**
 * Every box's size covers its children exactly (readBoxes refuses any that does not) and the top level covers the
 * buffer.
 */
function wellFormed(bytes: Buffer): void {
  const boxes = readBoxes(bytes);
  const total = boxes.reduce((sum, b) => sum + b.size, 0);
  expect(total).toBe(bytes.length);
  const walk = (b: Box): void => b.children.forEach(walk);
  boxes.forEach(walk);
}

function expectOnlyMediaErrors(make: () => Buffer): 'ok' | 'refused' {
  try {
    wellFormed(make());
    return 'ok';
  } catch (err) {
    if (err instanceof MediaFormatError) return 'refused';
    throw err;
  }
}

/** A mutation of a real parameter set: flipped bits, cut or grown, or pure noise with the right header. */
function garbleSet(r: Rng, base: Buffer): Buffer {
  const b = Buffer.from(base);
  switch (r.int(3)) {
    case 0:
      for (let i = 0; i < 1 + r.int(4); i++) {
        const at = 1 + r.int(b.length - 1);
        b.writeUInt8(b.readUInt8(at) ^ (1 << r.int(8)), at);
      }
      return b;
    case 1:
      return b.subarray(0, r.int(b.length + 1));
    default:
      return Buffer.concat([b.subarray(0, 1), r.bytes(40)]);
  }
}

function randomNumber(r: Rng): number {
  return r.pick([
    0,
    1,
    -1,
    3000,
    2 ** 31,
    -(2 ** 31),
    2 ** 32,
    2 ** 53,
    Number.NaN,
    Infinity,
    0.5,
    r.int(2 ** 32) - 2 ** 31,
  ]);
}

describe(`fMP4 muxer fuzz (seed ${rng.seed})`, () => {
  it('turns garbled H.264/H.265 parameter sets and AAC configs into MediaFormatErrors or whole init segments', () => {
    const outcomes = new Set<string>();
    for (let i = 0; i < ROUNDS; i++) {
      const kind = rng.int(3);
      outcomes.add(
        expectOnlyMediaErrors(() => {
          let track: Fmp4Track;
          if (kind === 0) track = h264Track(1, { sps: [garbleSet(rng, SPS)], pps: [garbleSet(rng, PPS)] });
          else if (kind === 1)
            track = h265Track(1, {
              vps: [garbleSet(rng, Buffer.of(0x40, 1, 0x0c))],
              sps: [Buffer.concat([Buffer.of(0x42, 1), rng.bytes(60)])],
              pps: [Buffer.of(0x44, 1, rng.int(256))],
            });
          else track = aacTrack(1, parseAacConfig(rng.bytes(6)));
          return buildInitSegment([track]);
        }),
      );
    }
    expect(outcomes).toEqual(new Set(['ok', 'refused']));
  });

  it('writes random samples as well-formed fragments or refuses them with a MediaFormatError', () => {
    const video = h264Track(1, { sps: [SPS], pps: [PPS] });
    const audio = aacTrack(2, parseAacConfig(Buffer.from('1190', 'hex')));
    const outcomes = new Set<string>();
    for (let i = 0; i < ROUNDS; i++) {
      const sample = (isVideo: boolean): FragmentSample => ({
        duration: rng.int(3) === 0 ? randomNumber(rng) : rng.int(9000),
        compositionOffset: rng.int(3) === 0 ? randomNumber(rng) : isVideo ? rng.int(6000) - 3000 : 0,
        keyframe: rng.int(2) === 0,
        payload: isVideo ? Array.from({ length: rng.int(4) }, () => rng.bytes(50)) : rng.bytes(50),
      });
      const runs = [video, audio]
        .filter(() => rng.int(4) !== 0)
        .map((track) => ({
          track,
          baseDecodeTime: rng.int(4) === 0 ? randomNumber(rng) : rng.int(2 ** 40),
          samples: Array.from({ length: rng.int(5) }, () => sample(track.kind === 'video')),
        }));
      outcomes.add(
        expectOnlyMediaErrors(() => buildFragment(rng.int(5) === 0 ? randomNumber(rng) : 1 + rng.int(1000), runs)),
      );
    }
    expect(outcomes).toEqual(new Set(['ok', 'refused']));
  });

  it('never throws on random RTP payloads; the access units it hands on mux into well-formed fragments', () => {
    const track = h264Track(1, { sps: [SPS], pps: [PPS] });
    const h265 = new VideoDepacketizer({ codec: 'H265', donl: true }, () => undefined);
    const aac = new AacDepacketizer({ sizeLength: 13, indexLength: 3, indexDeltaLength: 3 }, () => undefined);
    const samples: FragmentSample[] = [];
    const timeline = new DecodeTimeline<VideoAccessUnit>((t) =>
      samples.push({
        duration: t.duration,
        compositionOffset: t.compositionOffset,
        keyframe: t.unit.keyframe,
        payload: t.unit.nalus,
      }),
    );
    const h264 = new VideoDepacketizer({ codec: 'H264', maxAccessUnitBytes: 4096 }, (u) => timeline.push(u, u.rtpTime));
    let seq = rng.int(65536);
    let ts = rng.int(2 ** 32);
    for (let i = 0; i < ROUNDS * 5; i++) {
      seq += rng.int(10) === 0 ? rng.int(5) - 1 : 1;
      if (rng.int(3) === 0) ts += rng.int(3) === 0 ? rng.int(2 ** 32) : 3000;
      const first = rng.pick([0x18, 0x1c, 0x05, 0x01, 0x60, 0x62, rng.int(256)]);
      const payload = Buffer.concat([
        Buffer.of(first, rng.pick([0x80, 0x40, 0x00, 0x85, rng.int(256)])),
        rng.bytes(60),
      ]);
      const packet = rtp(seq, ts >>> 0, rng.int(3) === 0, payload);
      const header = readRtpHeader(packet)!;
      h264.push(packet, header);
      h265.push(packet, header);
      aac.push(packet, header);
    }
    timeline.flush();
    expect(h264.stats.units + h264.stats.dropped).toBeGreaterThan(0);
    for (let i = 0; i < samples.length; i += 4) {
      wellFormed(buildFragment(1 + i, [{ track, baseDecodeTime: 0, samples: samples.slice(i, i + 4) }]));
    }
  });
});
