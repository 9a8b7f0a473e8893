import { describe, expect, it } from 'vitest';
import { annexB, decodesAlone, withParameterSets } from '../../../src/media/still/annex-b.js';

const SPS = Buffer.from('6742c01e8c8d40', 'hex');
const PPS = Buffer.from('68ce3c80', 'hex');
const IDR = Buffer.from('65888000', 'hex');
const VPS = Buffer.from('40010c01', 'hex');
const HSPS = Buffer.from('42010101', 'hex');
const HPPS = Buffer.from('4401c172', 'hex');
const IRAP = Buffer.from('2601af00', 'hex'); // IDR_W_RADL (19)

const fmtp = (entries: Record<string, string>) => new Map(Object.entries(entries));
const b64 = (b: Buffer) => b.toString('base64');

describe('annexB', () => {
  it('puts a four-byte start code before each NAL unit', () => {
    expect(annexB([SPS, IDR]).toString('hex')).toBe(`00000001${SPS.toString('hex')}00000001${IDR.toString('hex')}`);
    expect(annexB([])).toEqual(Buffer.alloc(0));
  });
});

describe('withParameterSets', () => {
  it.each<{
    what: string;
    codec: 'H264' | 'H265';
    nalus: Buffer[];
    sdp: Record<string, string>;
    want: Buffer[] | null;
  }>([
    {
      what: 'H.264 with SPS/PPS in band: as it is, the SDP ignored',
      codec: 'H264',
      nalus: [SPS, PPS, IDR],
      sdp: {},
      want: [SPS, PPS, IDR],
    },
    {
      what: 'H.264 without: the SDP sets first',
      codec: 'H264',
      nalus: [IDR],
      sdp: { 'sprop-parameter-sets': `${b64(SPS)},${b64(PPS)}` },
      want: [SPS, PPS, IDR],
    },
    {
      what: 'H.264 with an SPS only in band: the SDP sets replace it',
      codec: 'H264',
      nalus: [SPS, IDR],
      sdp: { 'sprop-parameter-sets': `${b64(SPS)},${b64(PPS)}` },
      want: [SPS, PPS, IDR],
    },
    { what: 'H.264 with none anywhere', codec: 'H264', nalus: [IDR], sdp: {}, want: null },
    {
      what: 'H.264 with a broken sprop',
      codec: 'H264',
      nalus: [IDR],
      sdp: { 'sprop-parameter-sets': 'not base64!,' },
      want: null,
    },
    { what: 'H.265 in band', codec: 'H265', nalus: [VPS, HSPS, HPPS, IRAP], sdp: {}, want: [VPS, HSPS, HPPS, IRAP] },
    {
      what: 'H.265 from sprop-vps/sps/pps',
      codec: 'H265',
      nalus: [IRAP],
      sdp: { 'sprop-vps': b64(VPS), 'sprop-sps': b64(HSPS), 'sprop-pps': b64(HPPS) },
      want: [VPS, HSPS, HPPS, IRAP],
    },
    {
      what: 'H.265 without a VPS',
      codec: 'H265',
      nalus: [HSPS, HPPS, IRAP],
      sdp: { 'sprop-sps': b64(HSPS), 'sprop-pps': b64(HPPS) },
      want: null,
    },
  ])('$what', ({ codec, nalus, sdp, want }) => {
    expect(withParameterSets(codec, nalus, fmtp(sdp))).toEqual(want);
  });
});

describe('decodesAlone', () => {
  const SEI = Buffer.from('0605', 'hex');
  const IDR2 = Buffer.from('65408000', 'hex'); // a second slice of the picture (first_mb_in_slice 1)
  const AUD = Buffer.from('09f0', 'hex');
  const HSEI_SUFFIX = Buffer.from('5001', 'hex');
  const IRAP2 = Buffer.from('26010000', 'hex'); // not the first slice segment
  const frames = { frameMbsOnly: true, reorder: 0 };
  it.each<{
    what: string;
    codec: 'H264' | 'H265';
    nalus: Buffer[];
    shape?: { frameMbsOnly: boolean; reorder: number };
    want: boolean;
  }>([
    { what: 'H.264 sets, SEI, one slice', codec: 'H264', nalus: [SPS, PPS, SEI, IDR], want: true },
    { what: 'H.264 two slices of one picture', codec: 'H264', nalus: [SPS, PPS, IDR, IDR2], want: true },
    {
      what: 'H.264 two pictures (a second slice that begins one)',
      codec: 'H264',
      nalus: [SPS, PPS, IDR, IDR],
      want: false,
    },
    { what: 'H.264 a first slice that does not begin a picture', codec: 'H264', nalus: [SPS, PPS, IDR2], want: false },
    { what: 'H.264 something after the slices', codec: 'H264', nalus: [SPS, PPS, IDR, AUD], want: false },
    { what: 'H.264 no slice', codec: 'H264', nalus: [SPS, PPS], want: false },
    {
      what: 'H.264 fields',
      codec: 'H264',
      nalus: [SPS, PPS, IDR],
      shape: { frameMbsOnly: false, reorder: 0 },
      want: false,
    },
    {
      what: 'H.265 sets, one slice, a suffix SEI',
      codec: 'H265',
      nalus: [VPS, HSPS, HPPS, IRAP, HSEI_SUFFIX],
      want: true,
    },
    {
      what: 'H.265 two slice segments of one picture',
      codec: 'H265',
      nalus: [VPS, HSPS, HPPS, IRAP, IRAP2],
      want: true,
    },
    { what: 'H.265 two pictures', codec: 'H265', nalus: [VPS, HSPS, HPPS, IRAP, IRAP], want: false },
    {
      what: 'H.265 reordering declared',
      codec: 'H265',
      nalus: [VPS, HSPS, HPPS, IRAP],
      shape: { frameMbsOnly: true, reorder: 2 },
      want: false,
    },
  ])('$what: $want', ({ codec, nalus, shape, want }) => expect(decodesAlone(codec, nalus, shape ?? frames)).toBe(want));
});
