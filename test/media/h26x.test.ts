import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import {
  h264NalType,
  h264StartsKeyframe,
  h265NalType,
  h265StartsKeyframe,
  parseH264Sps,
  parseH265SpropParameterSets,
  parseSpropParameterSets,
  type H264Sps,
} from '../../src/media/h26x.js';
import { readRtpHeader } from '../../src/media/rtp.js';
import { mediaCodecs, parseSdp } from '../../src/media/sdp.js';
import { makeRng, type Rng } from '../support/fuzz.js';
import { captureRtp as captureFfmpegRtp } from '../support/rtp-capture.js';

const S = 0x80; // FU start bit
const E = 0x40; // FU end bit

/** H.264 NAL unit: header with nal_ref_idc 3, then body. */
const n4 = (type: number, ...body: number[]): number[] => [0x60 | type, ...body];
/** H.265 NAL unit: two-byte header with layer 0, TID 1, then body. */
const n5 = (type: number, ...body: number[]): number[] => [type << 1, 0x01, ...body];
/** Aggregation: each unit prefixed with its 16-bit size. */
const sized = (...units: number[][]): number[] => units.flatMap((u) => [u.length >> 8, u.length & 0xff, ...u]);

// Slice bodies: first_mb_in_slice / first_slice_segment_in_pic_flag is the first bit.
const FIRST = [0x88, 0x84, 0x00];
const LATER = [0x1a, 0x84, 0x00]; // ue(v) 0001010… = first_mb_in_slice 9

describe('h264StartsKeyframe', () => {
  const cases: Array<[name: string, payload: number[], expected: boolean]> = [
    // Single NAL unit packets (1–23)
    ['IDR, first slice', n4(5, ...FIRST), true],
    ['IDR, later slice', n4(5, ...LATER), false],
    ['IDR header only', n4(5), false],
    ['SPS', n4(7, 0x64, 0x00, 0x1f), true],
    ['SPS header only', n4(7), true],
    ['PPS', n4(8, 0xeb, 0xe3), false],
    ['SEI', n4(6, 0x05, 0x10), false],
    ['AUD', n4(9, 0xf0), false],
    ['non-IDR first slice', n4(1, ...FIRST), false],
    ['type 0 (unspecified)', [0x00, 0x88], false],
    ['nal_ref_idc 0 does not matter', [0x07, 0x42], true],
    // STAP-A (24)
    ['STAP-A SPS, PPS', [24, ...sized(n4(7, 0x42, 0xc0, 0x1e), n4(8, 0xce))], true],
    ['STAP-A SPS, PPS, SEI', [24, ...sized(n4(7, 0x64), n4(8, 0xeb), n4(6, 0x05))], true],
    ['STAP-A PPS then IDR first slice', [24, ...sized(n4(8, 0xeb), n4(5, ...FIRST))], true],
    ['STAP-A PPS then IDR later slice', [24, ...sized(n4(8, 0xeb), n4(5, ...LATER))], false],
    ['STAP-A non-IDR slices', [24, ...sized(n4(1, ...FIRST), n4(1, ...LATER))], false],
    ['STAP-A one-byte IDR', [24, ...sized(n4(5))], false],
    ['STAP-A empty', [24], false],
    ['STAP-A with a dangling size byte', [24, ...sized(n4(8, 0xeb)), 0x00], false],
    ['STAP-A zero-size unit before an SPS', [24, 0, 0, ...sized(n4(7, 0x42))], false],
    ['STAP-A unit running past the end', [24, 0, 9, ...n4(7, 0x42)], false],
    ['STAP-A SPS one byte short', [24, 0, 3, ...n4(7, 0x42)], false],
    ['STAP-A SPS before a unit running past the end', [24, ...sized(n4(7, 0x42)), 0, 50, 0x65], true],
    // FU-A (28)
    ['FU-A start of an IDR, first slice', [0x7c, S | 5, ...FIRST], true],
    ['FU-A start of an IDR, later slice', [0x7c, S | 5, ...LATER], false],
    ['FU-A start of an IDR without data', [0x7c, S | 5], false],
    ['FU-A middle of an IDR', [0x7c, 5, ...FIRST], false],
    ['FU-A end of an IDR', [0x7c, E | 5, ...FIRST], false],
    ['FU-A start of an SPS', [0x7c, S | 7, 0x42], true],
    ['FU-A start of a non-IDR slice', [0x7c, S | 1, ...FIRST], false],
    ['FU-A indicator alone', [0x7c], false],
    // Interleaved-mode and reserved types: not negotiated, never a start.
    ['STAP-B holding an SPS', [25, 0x00, 0x01, ...sized(n4(7, 0x42))], false],
    ['MTAP16 holding an IDR', [26, 0x00, 0x01, 0x00, 0x04, 0x00, 0x00, 0x00, ...n4(5, ...FIRST)], false],
    ['MTAP24', [27, 0x00, 0x01, ...n4(7)], false],
    ['FU-B start of an IDR', [0x7d, S | 5, 0x00, 0x01, ...FIRST], false],
    ['type 30', [30, 0x88], false],
    ['type 31', [31, 0x88], false],
    ['empty', [], false],
  ];
  it.each(cases)('%s', (_name, bytes, expected) => {
    const payload = Buffer.from(bytes);
    expect(h264StartsKeyframe(payload, 0, payload.length)).toBe(expected);
    // Inside a larger buffer (an RTP packet, an RTSP frame), followed by bytes that would change a misread answer.
    const framed = Buffer.concat([
      Buffer.from([0x80, 0x60, 0x00, 0x01]),
      payload,
      Buffer.from([0x88, 0x05, 0x65, 0x88, 0x80]),
    ]);
    expect(h264StartsKeyframe(framed, 4, payload.length)).toBe(expected);
  });

  it.each([
    ['a negative offset', -1, 2],
    ['a range past the end', 1, 2],
    ['a fractional offset', 0.5, 1],
    ['a negative length', 0, -1],
  ])('is false for %s', (_name, offset, length) => {
    expect(h264StartsKeyframe(Buffer.from(n4(7)), offset, length)).toBe(false);
    expect(h264NalType(Buffer.from(n4(7)), offset, length)).toBe(-1);
  });

  it('h264NalType reads the packet header type', () => {
    expect(h264NalType(Buffer.from([0x67, 0x42]), 0, 2)).toBe(7);
    expect(h264NalType(Buffer.from([0x7c, S | 5]), 0, 2)).toBe(28);
    expect(h264NalType(Buffer.from([0x00, 0x78]), 1, 1)).toBe(24);
    expect(h264NalType(Buffer.from([0x67]), 0, 0)).toBe(-1);
  });
});

describe('h265StartsKeyframe', () => {
  const fu = (header: number, ...rest: number[]): number[] => [49 << 1, 0x01, header, ...rest];
  const cases: Array<[name: string, payload: number[], expected: boolean, donl?: boolean]> = [
    // Single NAL unit packets (0–47)
    ['IDR_W_RADL, first segment', n5(19, ...FIRST), true],
    ['IDR_N_LP, first segment', n5(20, ...FIRST), true],
    ['CRA, first segment', n5(21, ...FIRST), true],
    ['BLA_W_LP', n5(16, ...FIRST), true],
    ['BLA_W_RADL', n5(17, ...FIRST), true],
    ['BLA_N_LP', n5(18, ...FIRST), true],
    ['IDR, later segment', n5(19, 0x00, 0x84), false],
    ['IDR header only', n5(19), false],
    ['reserved IRAP 22', n5(22, ...FIRST), false],
    ['reserved IRAP 23', n5(23, ...FIRST), false],
    ['VPS', n5(32, 0x0c, 0x01), true],
    ['SPS', n5(33, 0x01, 0x01), true],
    ['PPS', n5(34, 0xc1), false],
    ['prefix SEI', n5(39, 0x01), false],
    ['AUD', n5(35, 0x50), false],
    ['TRAIL_R first segment', n5(1, ...FIRST), false],
    ['RASL', n5(8, ...FIRST), false],
    ['one byte', [19 << 1], false],
    // With DONL (sprop-max-don-diff > 0) a single NAL unit packet has 2 bytes before its data.
    ['IDR with DONL, first segment', [...n5(19), 0x00, 0x05, ...FIRST], true, true],
    ['IDR with DONL, later segment', [...n5(19), 0x80, 0x05, 0x00], false, true],
    ['IDR with DONL cut short', [...n5(19), 0x80, 0x05], false, true],
    // AP (48)
    ['AP VPS, SPS, PPS', [96, 0x01, ...sized(n5(32, 0x0c), n5(33, 0x01), n5(34, 0xc1))], true],
    ['AP PPS then CRA first segment', [96, 0x01, ...sized(n5(34, 0xc1), n5(21, ...FIRST))], true],
    ['AP PPS, SEI', [96, 0x01, ...sized(n5(34, 0xc1), n5(39, 0x01))], false],
    ['AP one-byte unit', [96, 0x01, 0x00, 0x01, 32 << 1], false],
    ['AP unit running past the end', [96, 0x01, 0x00, 0x09, ...n5(32, 0x0c)], false],
    ['AP VPS one byte short', [96, 0x01, 0x00, 0x04, ...n5(32, 0x0c)], false],
    ['AP empty', [96, 0x01], false],
    ['AP with DONL: VPS', [96, 0x01, 0x00, 0x07, ...sized(n5(32, 0x0c))], true, true],
    [
      'AP with DONL/DOND: PPS, then IDR',
      [96, 0x01, 0x00, 0x07, ...sized(n5(34, 0xc1)), 0x01, ...sized(n5(19, ...FIRST))],
      true,
      true,
    ],
    [
      'AP with DOND misread as no DONL',
      [96, 0x01, 0x00, 0x07, ...sized(n5(34, 0xc1)), 0x01, ...sized(n5(19, ...FIRST))],
      false,
    ],
    // FU (49)
    ['FU start of an IDR, first segment', fu(S | 19, ...FIRST), true],
    ['FU start of a CRA, first segment', fu(S | 21, ...FIRST), true],
    ['FU start of an IDR, later segment', fu(S | 19, 0x00), false],
    ['FU start of an IDR without data', fu(S | 19), false],
    ['FU middle of an IDR', fu(19, ...FIRST), false],
    ['FU end of an IDR', fu(E | 19, ...FIRST), false],
    ['FU start of a VPS', fu(S | 32, 0x0c), true],
    ['FU start of an SPS', fu(S | 33, 0x01), true],
    ['FU start of a TRAIL_R', fu(S | 1, ...FIRST), false],
    ['FU without its FU header', [98, 0x01], false],
    ['FU with DONL, start of an IDR', fu(S | 19, 0x12, 0x34, ...FIRST), true, true],
    ['FU with DONL, later segment', fu(S | 19, 0x12, 0x34, 0x00), false, true],
    ['FU with DONL cut short', fu(S | 32, 0x12), false, true],
    // PACI and unspecified
    ['PACI', [100, 0x01, ...n5(19, ...FIRST)], false],
    ['type 63', [126, 0x01, 0x80], false],
    ['empty', [], false],
  ];
  it.each(cases)('%s', (_name, bytes, expected, donl = false) => {
    const payload = Buffer.from(bytes);
    expect(h265StartsKeyframe(payload, 0, payload.length, donl)).toBe(expected);
    const framed = Buffer.concat([
      Buffer.from([0x80, 0x60, 0x00]),
      payload,
      Buffer.from([0x80, 0x05, 0x26, 0x01, 0x80]),
    ]);
    expect(h265StartsKeyframe(framed, 3, payload.length, donl)).toBe(expected);
  });

  it('h265NalType reads the two-byte header', () => {
    expect(h265NalType(Buffer.from(n5(32, 0x0c)), 0, 3)).toBe(32);
    expect(h265NalType(Buffer.from([0x62, 0x01]), 0, 2)).toBe(49);
    expect(h265NalType(Buffer.from([0x40]), 0, 1)).toBe(-1);
    expect(h265NalType(Buffer.from([0x40, 0x01]), 1, 2)).toBe(-1);
  });
});

describe('sprop parameter sets', () => {
  const sps = 'Z2QAH6zZQFAFuwEQAAADABAAAAMDwPGDGWA=';
  const pps = 'aOvjyyLA';
  it('sorts SPS and PPS by NAL type and skips what is not base64 or not a parameter set', () => {
    const sets = parseSpropParameterSets(new Map([['sprop-parameter-sets', ` ${pps}, ${sps} ,!!,,Bg==,Z`]]));
    expect(sets.sps.map((b) => b.toString('base64'))).toEqual([sps]);
    expect(sets.pps.map((b) => b.toString('base64'))).toEqual([pps]);
    expect(parseH264Sps(sets.sps[0] ?? Buffer.alloc(0))).toMatchObject({ width: 1280, height: 720, profileIdc: 100 });
  });

  it('is empty without the parameter', () => {
    expect(parseSpropParameterSets(new Map([['packetization-mode', '1']]))).toEqual({ sps: [], pps: [] });
    expect(parseH265SpropParameterSets(new Map())).toEqual({ vps: [], sps: [], pps: [] });
  });

  it('keeps only H.265 units of the type each parameter names', () => {
    const vps = 'QAEMAf//AWAAAAMAkAAAAwAAAwA8lZgJ';
    const hevcSps = 'QgEBAWAAAAMAkAAAAwAAAwA8oAoIDxZZWaSTK8BaAgAAAwACAAADABQQ';
    const hevcPps = 'RAHBcrRiQA==';
    const sets = parseH265SpropParameterSets(
      new Map([
        ['sprop-vps', `${vps},${hevcPps}`],
        ['sprop-sps', hevcSps],
        ['sprop-pps', `${hevcPps},not base64!`],
      ]),
    );
    expect(sets.vps.map((b) => b.toString('base64'))).toEqual([vps]);
    expect(sets.sps.map((b) => b.toString('base64'))).toEqual([hevcSps]);
    expect(sets.pps.map((b) => b.toString('base64'))).toEqual([hevcPps]);
  });
});

/** Writes H.264 syntax elements (the test's own encoder, to build SPSes x264 never makes). */
class BitWriter {
  private readonly bits: number[] = [];
  u(n: number, value: number): this {
    for (let i = n - 1; i >= 0; i--) this.bits.push(Math.floor(value / 2 ** i) % 2);
    return this;
  }
  ue(value: number): this {
    const code = (value + 1).toString(2);
    return this.u(code.length - 1, 0).u(code.length, value + 1);
  }
  se(value: number): this {
    return this.ue(value > 0 ? 2 * value - 1 : -2 * value);
  }
  /** The NAL unit: header byte, RBSP with stop bit, emulation prevention. */
  nal(header: number): Buffer {
    const bits = [...this.bits, 1];
    while (bits.length % 8 !== 0) bits.push(0);
    const out: number[] = [header];
    let zeros = 0;
    for (let i = 0; i < bits.length; i += 8) {
      const byte = bits.slice(i, i + 8).reduce((a, b) => a * 2 + b, 0);
      if (zeros >= 2 && byte <= 3) {
        out.push(3);
        zeros = 0;
      }
      out.push(byte);
      zeros = byte === 0 ? zeros + 1 : 0;
    }
    return Buffer.from(out);
  }
}

interface SpsSpec {
  profileIdc: number;
  chromaFormatIdc?: number;
  separateColourPlane?: boolean;
  bitDepthLumaMinus8?: number;
  /** One entry per scaling list: null absent, [] "use default", else the scale values. */
  scalingLists?: Array<number[] | null>;
  spsId?: number;
  pocType: number;
  pocCycle?: number[];
  widthMbs: number;
  heightMapUnits: number;
  frameMbsOnly: boolean;
  crop?: [left: number, right: number, top: number, bottom: number];
}

function buildSps(spec: SpsSpec): Buffer {
  const w = new BitWriter()
    .u(8, spec.profileIdc)
    .u(8, 0)
    .u(8, 40)
    .ue(spec.spsId ?? 0);
  if ([100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135].includes(spec.profileIdc)) {
    const chroma = spec.chromaFormatIdc ?? 1;
    w.ue(chroma);
    if (chroma === 3) w.u(1, spec.separateColourPlane ? 1 : 0);
    w.ue(spec.bitDepthLumaMinus8 ?? 0)
      .ue(0)
      .u(1, 0);
    w.u(1, spec.scalingLists ? 1 : 0);
    for (const list of spec.scalingLists ?? []) {
      w.u(1, list ? 1 : 0);
      if (!list) continue;
      let last = 8;
      // "Use default" is a first delta that makes the next scale 0.
      for (const value of list.length === 0 ? [0] : list) {
        w.se(((value - last + 384) % 256) - 128);
        last = value;
      }
    }
  }
  w.ue(0).ue(spec.pocType);
  if (spec.pocType === 0) w.ue(2);
  if (spec.pocType === 1) {
    w.u(1, 0)
      .se(-1)
      .se(2)
      .ue(spec.pocCycle?.length ?? 0);
    for (const offset of spec.pocCycle ?? []) w.se(offset);
  }
  w.ue(4)
    .u(1, 0)
    .ue(spec.widthMbs - 1)
    .ue(spec.heightMapUnits - 1)
    .u(1, spec.frameMbsOnly ? 1 : 0);
  if (!spec.frameMbsOnly) w.u(1, 1);
  w.u(1, 1).u(1, spec.crop ? 1 : 0);
  for (const c of spec.crop ?? []) w.ue(c);
  w.u(1, 0); // vui_parameters_present_flag
  return w.nal(0x67);
}

describe('parseH264Sps on hand-made SPSes', () => {
  const ramp = (n: number): number[] => Array.from({ length: n }, (_, i) => 4 + ((i * 7) % 250));
  const cases: Array<[name: string, spec: SpsSpec, expected: Partial<H264Sps>]> = [
    [
      'baseline, POC type 1 with a cycle',
      { profileIdc: 66, pocType: 1, pocCycle: [1, -2, 300], widthMbs: 40, heightMapUnits: 30, frameMbsOnly: true },
      { width: 640, height: 480, chromaFormatIdc: 1, frameMbsOnly: true },
    ],
    [
      'high with scaling lists, 1080p crop',
      {
        profileIdc: 100,
        scalingLists: [ramp(16), null, [], ramp(16), null, null, ramp(64), []],
        pocType: 0,
        widthMbs: 120,
        heightMapUnits: 68,
        frameMbsOnly: true,
        crop: [0, 0, 0, 4],
      },
      { width: 1920, height: 1080, profileIdc: 100 },
    ],
    [
      'monochrome fields, crop in luma samples and field pairs',
      {
        profileIdc: 100,
        chromaFormatIdc: 0,
        pocType: 2,
        widthMbs: 45,
        heightMapUnits: 18,
        frameMbsOnly: false,
        crop: [1, 1, 1, 1],
      },
      { width: 718, height: 572, chromaFormatIdc: 0, frameMbsOnly: false },
    ],
    [
      '4:4:4 with separate colour planes',
      {
        profileIdc: 244,
        chromaFormatIdc: 3,
        separateColourPlane: true,
        pocType: 0,
        widthMbs: 20,
        heightMapUnits: 15,
        frameMbsOnly: true,
        crop: [0, 3, 0, 5],
      },
      { width: 317, height: 235, chromaFormatIdc: 3 },
    ],
    [
      '4:4:4 with twelve scaling lists',
      {
        profileIdc: 244,
        chromaFormatIdc: 3,
        scalingLists: [ramp(16), [], null, null, ramp(16), null, ramp(64), null, [], ramp(64), null, ramp(64)],
        pocType: 0,
        widthMbs: 20,
        heightMapUnits: 15,
        frameMbsOnly: true,
        crop: [2, 1, 0, 5],
      },
      { width: 317, height: 235 },
    ],
    [
      '4:2:2 fields',
      {
        profileIdc: 122,
        chromaFormatIdc: 2,
        pocType: 0,
        widthMbs: 45,
        heightMapUnits: 18,
        frameMbsOnly: false,
        crop: [0, 1, 0, 2],
      },
      { width: 718, height: 572, chromaFormatIdc: 2 },
    ],
    [
      '10-bit',
      { profileIdc: 110, bitDepthLumaMinus8: 2, pocType: 0, widthMbs: 1, heightMapUnits: 1, frameMbsOnly: true },
      { width: 16, height: 16, bitDepthLuma: 10 },
    ],
    [
      'the widest level 6.2 allows',
      { profileIdc: 100, pocType: 0, widthMbs: 1055, heightMapUnits: 1, frameMbsOnly: true },
      { width: 16880, height: 16 },
    ],
  ];
  it.each(cases)('%s', (_name, spec, expected) => {
    expect(parseH264Sps(buildSps(spec))).toMatchObject(expected);
  });

  const refused: Array<[name: string, sps: Buffer]> = [
    ['POC type 3', buildSps({ profileIdc: 66, pocType: 3, widthMbs: 1, heightMapUnits: 1, frameMbsOnly: true })],
    [
      'chroma_format_idc 4',
      buildSps({ profileIdc: 100, chromaFormatIdc: 4, pocType: 0, widthMbs: 1, heightMapUnits: 1, frameMbsOnly: true }),
    ],
    [
      'seq_parameter_set_id 32',
      buildSps({ profileIdc: 66, spsId: 32, pocType: 0, widthMbs: 1, heightMapUnits: 1, frameMbsOnly: true }),
    ],
    [
      'a POC cycle of 256',
      buildSps({
        profileIdc: 66,
        pocType: 1,
        pocCycle: Array.from({ length: 256 }, () => 1),
        widthMbs: 1,
        heightMapUnits: 1,
        frameMbsOnly: true,
      }),
    ],
    [
      'wider than any level',
      buildSps({ profileIdc: 66, pocType: 0, widthMbs: 1056, heightMapUnits: 1, frameMbsOnly: true }),
    ],
    [
      'cropped to nothing',
      buildSps({ profileIdc: 66, pocType: 0, widthMbs: 2, heightMapUnits: 2, frameMbsOnly: true, crop: [8, 8, 0, 0] }),
    ],
    ['a PPS', Buffer.from([0x68, 0xeb, 0xe3, 0xcb])],
    ['an empty buffer', Buffer.alloc(0)],
    ['a header alone', Buffer.from([0x67])],
    ['an exp-Golomb code of 32 zeros', Buffer.from([0x67, 0x42, 0x00, 0x1e, 0x00, 0x00, 0x00, 0x00, 0x80])],
  ];
  it.each(refused)('refuses %s', (_name, sps) => {
    expect(parseH264Sps(sps)).toBeNull();
  });

  const { seed } = makeRng();
  it(`never throws on truncations and corruptions of a real SPS (seed ${seed})`, () => {
    const real =
      parseSpropParameterSets(new Map([['sprop-parameter-sets', 'Z2QAH6zZQFAFuwEQAAADABAAAAMDwPGDGWA=']])).sps[0] ??
      Buffer.alloc(0);
    const rng = makeRng(seed);
    for (let n = 0; n <= real.length; n++) parseH264Sps(real.subarray(0, n));
    for (let i = 0; i < 2000; i++) {
      const copy = Buffer.from(real);
      copy[1 + rng.int(copy.length - 1)] = rng.int(256);
      const sps = parseH264Sps(copy);
      if (sps) expect(sps.width > 0 && sps.height > 0 && sps.width <= 16880 && sps.height <= 16880).toBe(true);
    }
  });
});

const execFileAsync = promisify(execFile);

/** NAL units of an Annex B byte stream. */
function annexB(stream: Buffer): Buffer[] {
  const units: Buffer[] = [];
  let start = -1;
  for (let i = 0; i + 2 < stream.length; i++) {
    if (stream[i] === 0 && stream[i + 1] === 0 && stream[i + 2] === 1) {
      if (start >= 0) units.push(stream.subarray(start, i));
      start = i + 3;
      i += 2;
    }
  }
  if (start >= 0) units.push(stream.subarray(start));
  // A four-byte start code leaves a zero at the end of the unit before it.
  return units.map((u) => (u[u.length - 1] === 0 ? u.subarray(0, u.length - 1) : u));
}

describe('parseH264Sps on x264 output', () => {
  const cases: Array<[name: string, size: string, args: string[], expected: Partial<H264Sps>]> = [
    ['baseline', '320x240', ['-profile:v', 'baseline'], { profileIdc: 66, chromaFormatIdc: 1, frameMbsOnly: true }],
    ['main, cropped', '318x178', ['-profile:v', 'main'], { profileIdc: 77 }],
    ['high 1080p, cropped', '1920x1080', ['-profile:v', 'high'], { profileIdc: 100, chromaFormatIdc: 1 }],
    ['high 4:2:2, cropped', '642x362', ['-pix_fmt', 'yuv422p'], { profileIdc: 122, chromaFormatIdc: 2 }],
    ['high 4:4:4, cropped', '350x198', ['-pix_fmt', 'yuv444p'], { profileIdc: 244, chromaFormatIdc: 3 }],
    ['high 10-bit', '400x300', ['-pix_fmt', 'yuv420p10le'], { profileIdc: 110, bitDepthLuma: 10 }],
    ['monochrome', '330x190', ['-pix_fmt', 'gray'], { chromaFormatIdc: 0 }],
    ['interlaced, cropped', '720x572', ['-x264-params', 'interlaced=1'], { frameMbsOnly: false }],
  ];
  it.each(cases)('%s %s', async (_name, size, args, expected) => {
    const { stdout } = await execFileAsync(
      'ffmpeg',
      [
        '-hide_banner',
        '-loglevel',
        'error',
        '-f',
        'lavfi',
        '-i',
        `testsrc2=size=${size}:rate=10`,
        '-frames:v',
        '1',
        '-c:v',
        'libx264',
        ...args,
        '-f',
        'h264',
        'pipe:1',
      ],
      { encoding: 'buffer', maxBuffer: 64 << 20 },
    );
    const sps = annexB(stdout).find((u) => h264NalType(u, 0, u.length) === 7);
    expect(sps).toBeDefined();
    const [width, height] = size.split('x').map(Number);
    expect(parseH264Sps(sps ?? Buffer.alloc(0))).toMatchObject({ ...expected, width, height });
  });
});

// --- Keyframe detection on real encoder output ---

interface Capture {
  packets: Array<{ buf: Buffer; offset: number; length: number; timestamp: number; marker: boolean; sequence: number }>;
  sdp: string;
}

/** Ten pictures with a keyframe every five, each packet with its RTP fields; fails on a lost packet. */
async function captureRtp(encoder: string[], muxer: string[] = []): Promise<Capture> {
  const { packets: received, sdp } = await captureFfmpegRtp(['-g', '5', ...encoder], muxer);
  const packets = received.map((buf) => {
    const h = readRtpHeader(buf);
    if (!h) throw new Error('ffmpeg sent a packet that is not RTP');
    return {
      buf,
      offset: h.payloadOffset,
      length: h.payloadLength,
      timestamp: h.timestamp,
      marker: h.marker,
      sequence: h.sequence,
    };
  });
  packets.forEach((p, i) => {
    // Loopback loses nothing here; a gap would mean the test socket dropped packets.
    if (i > 0 && p.sequence !== ((packets[i - 1]?.sequence ?? 0) + 1) % 65536)
      throw new Error(`packet lost before ${p.sequence}`);
  });
  return { packets, sdp };
}

/** A NAL unit that starts in a packet, decoded by the test on its own terms. */
interface NalStart {
  type: number;
  /** H.264 slices: first_mb_in_slice; H.265 VCL: first_slice_segment_in_pic_flag as 0/1; else null. */
  slice: number | null;
}

function readUe(bytes: Buffer): number | null {
  let bit = 0;
  const next = (): number | null => {
    const byte = bytes[bit >> 3];
    if (byte === undefined) return null;
    return (byte >> (7 - (bit++ & 7))) & 1;
  };
  let zeros = 0;
  for (let b = next(); b === 0; b = next()) zeros++;
  let value = 0;
  for (let i = 0; i < zeros; i++) value = value * 2 + (next() ?? 0);
  return 2 ** zeros - 1 + value;
}

function h264Starts(p: Buffer): NalStart[] {
  const unit = (nal: Buffer): NalStart => {
    const type = (nal[0] ?? 0) & 0x1f;
    return { type, slice: type === 1 || type === 5 ? readUe(nal.subarray(1)) : null };
  };
  const type = (p[0] ?? 0) & 0x1f;
  if (type >= 1 && type <= 23) return [unit(p)];
  if (type === 24) {
    const units: NalStart[] = [];
    for (let i = 1; i + 2 <= p.length;) {
      const size = p.readUInt16BE(i);
      units.push(unit(p.subarray(i + 2, i + 2 + size)));
      i += 2 + size;
    }
    return units;
  }
  if (type === 28) {
    const fu = p[1] ?? 0;
    // Rebuild the fragmented unit's start: its header from the FU indicator's NRI and the FU type.
    return fu & 0x80 ? [unit(Buffer.concat([Buffer.from([((p[0] ?? 0) & 0xe0) | (fu & 0x1f)]), p.subarray(2)]))] : [];
  }
  throw new Error(`unexpected H.264 packet type ${type}`);
}

function h265Starts(p: Buffer): NalStart[] {
  const unit = (nal: Buffer): NalStart => {
    const type = ((nal[0] ?? 0) >> 1) & 0x3f;
    return { type, slice: type < 32 ? ((nal[2] ?? 0) >> 7) & 1 : null };
  };
  const type = ((p[0] ?? 0) >> 1) & 0x3f;
  if (type < 48) return [unit(p)];
  if (type === 48) {
    const units: NalStart[] = [];
    for (let i = 2; i + 2 <= p.length;) {
      const size = p.readUInt16BE(i);
      units.push(unit(p.subarray(i + 2, i + 2 + size)));
      i += 2 + size;
    }
    return units;
  }
  if (type === 49) {
    const fu = p[2] ?? 0;
    return fu & 0x80 ? [unit(Buffer.concat([Buffer.from([(fu & 0x3f) << 1, p[1] ?? 0]), p.subarray(3)]))] : [];
  }
  throw new Error(`unexpected H.265 packet type ${type}`);
}

interface Codec {
  starts: (p: Buffer) => NalStart[];
  detect: (buf: Buffer, offset: number, length: number) => boolean;
  isRandomAccess: (type: number) => boolean;
  isParameterSet: (type: number) => boolean;
  isVcl: (type: number) => boolean;
  /** The slice value of a picture's first slice. */
  first: number;
}

const H264: Codec = {
  starts: h264Starts,
  detect: h264StartsKeyframe,
  isRandomAccess: (t) => t === 5,
  isParameterSet: (t) => t === 7,
  isVcl: (t) => t >= 1 && t <= 5,
  first: 0,
};

const H265: Codec = {
  starts: h265Starts,
  detect: (buf, offset, length) => h265StartsKeyframe(buf, offset, length),
  isRandomAccess: (t) => t >= 16 && t <= 21,
  isParameterSet: (t) => t === 32 || t === 33,
  isVcl: (t) => t < 32,
  first: 1,
};

interface KeyframeReport {
  keyframeTimestamps: number[];
  /** Per keyframe access unit, the slice values of its random-access slices in order. */
  slices: number[][];
  firing: number;
}

/**
 * Cross-checks the detector against the test's own decoding of every packet, access unit by access
 * unit (one RTP timestamp, ended by the marker bit).
 */
function checkKeyframes(capture: Capture, codec: Codec): KeyframeReport {
  const report: KeyframeReport = { keyframeTimestamps: [], slices: [], firing: 0 };
  const units: Array<typeof capture.packets> = [];
  for (const p of capture.packets) {
    const last = units[units.length - 1];
    const previous = last?.[last.length - 1];
    if (last && previous && previous.timestamp === p.timestamp && !previous.marker) last.push(p);
    else units.push([p]);
  }
  for (const au of units) {
    const decoded = au.map((p) => codec.starts(p.buf.subarray(p.offset, p.offset + p.length)));
    const fired = au.map((p) => codec.detect(p.buf, p.offset, p.length));
    const expected = decoded.map((starts) =>
      starts.some((n) => codec.isParameterSet(n.type) || (codec.isRandomAccess(n.type) && n.slice === codec.first)),
    );
    expect(fired).toEqual(expected);
    report.firing += fired.filter(Boolean).length;
    const randomAccess = decoded.flat().filter((n) => codec.isRandomAccess(n.type));
    if (randomAccess.length === 0) {
      // Never in between keyframes.
      expect(fired.some(Boolean)).toBe(false);
      continue;
    }
    // Every random-access access unit holds only random-access slices, and the detector fires at
    // or before the packet carrying its first slice: a viewer starting there gets the whole picture.
    expect(
      decoded
        .flat()
        .filter((n) => codec.isVcl(n.type))
        .every((n) => codec.isRandomAccess(n.type)),
    ).toBe(true);
    const firstVcl = decoded.findIndex((starts) => starts.some((n) => codec.isVcl(n.type)));
    expect(fired.slice(0, firstVcl + 1).some(Boolean)).toBe(true);
    report.keyframeTimestamps.push(au[0]?.timestamp ?? -1);
    report.slices.push(randomAccess.map((n) => n.slice ?? -1));
  }
  // Every packet belongs to a closed access unit.
  expect(units.every((au) => au[au.length - 1]?.marker)).toBe(true);
  return report;
}

/** Keyframes at pictures 0 and 5 of 10, 1/10 s apart at 90 kHz. */
function expectGopOfFive(report: KeyframeReport): void {
  expect(report.keyframeTimestamps).toHaveLength(2);
  const [a = 0, b = 0] = report.keyframeTimestamps;
  expect((b - a) >>> 0).toBe(5 * 9000);
}

describe('keyframe detection on ffmpeg RTP output', () => {
  it('H.264, three slices a picture, SPS/PPS in-band in STAP-A, FU-A fragments, B-frames', async () => {
    const capture = await captureRtp(['-c:v', 'libx264', '-sc_threshold', '0', '-slices', '3']);
    const report = checkKeyframes(capture, H264);
    expectGopOfFive(report);
    // 320x240 is 300 macroblocks: three slices start at 0, 100 and 200, and only the first fires.
    expect(report.slices).toEqual([
      [0, 100, 200],
      [0, 100, 200],
    ]);
    expect(capture.packets.some((p) => h264NalType(p.buf, p.offset, p.length) === 24)).toBe(true);
    // The in-band SPS tells the picture size.
    const stap = capture.packets.find((p) => h264NalType(p.buf, p.offset, p.length) === 24);
    const spsSize = stap ? stap.buf.readUInt16BE(stap.offset + 1) : 0;
    const sps = stap?.buf.subarray(stap.offset + 3, stap.offset + 3 + spsSize);
    expect(parseH264Sps(sps ?? Buffer.alloc(0))).toMatchObject({ width: 320, height: 240 });
  });

  it('H.264, parameter sets only in the SDP: fires at the IDR alone; the SDP gives the size', async () => {
    const capture = await captureRtp(['-c:v', 'libx264', '-sc_threshold', '0', '-bf', '0', '-flags', '+global_header']);
    const report = checkKeyframes(capture, H264);
    expectGopOfFive(report);
    expect(report.firing).toBe(2);
    const [video] = mediaCodecs(parseSdp(capture.sdp));
    expect(video).toMatchObject({ encoding: 'H264', clockRate: 90000 });
    const sets = parseSpropParameterSets(video?.fmtp ?? new Map());
    expect(parseH264Sps(sets.sps[0] ?? Buffer.alloc(0))).toMatchObject({ width: 320, height: 240, profileIdc: 100 });
  });

  it('H.264 packetization mode 0: single NAL units, seven slices a picture', async () => {
    const capture = await captureRtp(
      ['-c:v', 'libx264', '-sc_threshold', '0', '-x264-params', 'slice-max-size=900'],
      ['-rtpflags', 'h264_mode0+skip_rtcp'],
    );
    expect(capture.packets.every((p) => h264NalType(p.buf, p.offset, p.length) < 24)).toBe(true);
    const report = checkKeyframes(capture, H264);
    expectGopOfFive(report);
    for (const slices of report.slices) {
      expect(slices[0]).toBe(0);
      expect(slices.length).toBeGreaterThan(1);
      expect(slices).toEqual([...slices].sort((x, y) => x - y));
    }
  });

  it('H.265, VPS/SPS/PPS in an AP, FU fragments, an IDR then a CRA (open GOP)', async () => {
    const capture = await captureRtp(['-c:v', 'libx265', '-x265-params', 'log-level=error:scenecut=0']);
    const report = checkKeyframes(capture, H265);
    expectGopOfFive(report);
    expect(capture.packets.some((p) => h265NalType(p.buf, p.offset, p.length) === 48)).toBe(true);
    const irapTypes = capture.packets
      .filter((p) => h265NalType(p.buf, p.offset, p.length) === 49 && ((p.buf[p.offset + 2] ?? 0) & 0x80) !== 0)
      .map((p) => (p.buf[p.offset + 2] ?? 0) & 0x3f)
      .filter((t) => t >= 16 && t <= 21);
    expect(irapTypes).toEqual([20, 21]);
  });

  it('H.265, two slices a picture: only the first slice segment fires', async () => {
    const capture = await captureRtp(['-c:v', 'libx265', '-x265-params', 'log-level=error:scenecut=0:slices=2']);
    const report = checkKeyframes(capture, H265);
    expectGopOfFive(report);
    expect(report.slices).toEqual([
      [1, 0],
      [1, 0],
    ]);
  });

  it('H.265, parameter sets only in the SDP', async () => {
    const capture = await captureRtp([
      '-c:v',
      'libx265',
      '-x265-params',
      'log-level=error:scenecut=0',
      '-flags',
      '+global_header',
    ]);
    const report = checkKeyframes(capture, H265);
    expectGopOfFive(report);
    expect(report.firing).toBe(2);
    const [video] = mediaCodecs(parseSdp(capture.sdp));
    expect(video?.encoding).toBe('H265');
    const sets = parseH265SpropParameterSets(video?.fmtp ?? new Map());
    expect([sets.vps.length, sets.sps.length, sets.pps.length]).toEqual([1, 1, 1]);
  });
});

// --- Fuzz: no throw, and nothing outside [offset, offset + length) is read ---

type Detector = (buf: Buffer, offset: number, length: number) => boolean | number;

const DETECTORS: Array<[name: string, fn: Detector]> = [
  ['h264StartsKeyframe', h264StartsKeyframe],
  ['h265StartsKeyframe', (b, o, l) => h265StartsKeyframe(b, o, l)],
  ['h265StartsKeyframe with DONL', (b, o, l) => h265StartsKeyframe(b, o, l, true)],
  ['h264NalType', h264NalType],
  ['h265NalType', h265NalType],
];

/** Random payloads, half of them shaped like aggregation or fragmentation packets so the deep paths run. */
function randomPayload(rng: Rng): Buffer {
  const buf = rng.bytes(48);
  if (buf.length >= 2 && rng.int(2) === 0) {
    const kind = rng.int(4);
    if (kind === 0) buf[0] = rng.pick([24, 28, 0x65, 0x67, 0x7c, 0x78]);
    else if (kind === 1) buf[0] = rng.pick([48, 49, 19, 20, 21, 32, 33]) << 1;
    // Small sizes inside aggregation packets, so units fit often.
    if (kind === 2 && buf.length > 3) buf.writeUInt16BE(rng.int(buf.length), 1);
    if (kind === 3 && buf.length > 4) buf.writeUInt16BE(rng.int(buf.length), 2);
  }
  return buf;
}

describe('h26x fuzz', () => {
  // Each test draws from its own generator, so FUZZ_SEED replays one test run alone.
  const { seed } = makeRng();
  it.each(DETECTORS)(`%s never throws and reads only its range (seed ${seed})`, (_name, fn) => {
    const rng = makeRng(seed);
    for (let i = 0; i < 10_000; i++) {
      const buf = randomPayload(rng);
      const offset = rng.int(buf.length + 1);
      const length = rng.int(buf.length - offset + 1);
      const answer = fn(buf, offset, length);
      // An exact copy: any read outside the range is out of the buffer and throws.
      const exact = Buffer.from(buf.subarray(offset, offset + length));
      expect(fn(exact, 0, length)).toBe(answer);
      // Other bytes around the range do not change the answer.
      const before = rng.bytes(6);
      const shifted = Buffer.concat([before, exact, rng.bytes(6)]);
      expect(fn(shifted, before.length, length)).toBe(answer);
    }
  });

  it.each(DETECTORS)(`%s refuses ranges outside the buffer (seed ${seed})`, (_name, fn) => {
    const rng = makeRng(seed);
    for (let i = 0; i < 2000; i++) {
      const buf = randomPayload(rng);
      const offset = rng.int(buf.length + 4) - 2;
      const length = rng.int(buf.length + 4) - 2 + (rng.int(4) === 0 ? 0.5 : 0);
      const inside = Number.isInteger(length) && offset >= 0 && length >= 0 && offset + length <= buf.length;
      const answer = fn(buf, offset, length);
      if (!inside) expect(answer === false || answer === -1).toBe(true);
    }
  });
});
