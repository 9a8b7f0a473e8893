import { describe, expect, it } from 'vitest';
import { annexB, withParameterSets } from '../../../src/media/still/annex-b.js';

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
  it.each<{ what: string; codec: 'H264' | 'H265'; nalus: Buffer[]; sdp: Record<string, string>; want: Buffer[] | null }>([
    { what: 'H.264 with SPS/PPS in band: as it is, the SDP ignored', codec: 'H264', nalus: [SPS, PPS, IDR], sdp: {}, want: [SPS, PPS, IDR] },
    { what: 'H.264 without: the SDP sets first', codec: 'H264', nalus: [IDR], sdp: { 'sprop-parameter-sets': `${b64(SPS)},${b64(PPS)}` }, want: [SPS, PPS, IDR] },
    { what: 'H.264 with an SPS only in band: the SDP sets replace it', codec: 'H264', nalus: [SPS, IDR], sdp: { 'sprop-parameter-sets': `${b64(SPS)},${b64(PPS)}` }, want: [SPS, PPS, IDR] },
    { what: 'H.264 with none anywhere', codec: 'H264', nalus: [IDR], sdp: {}, want: null },
    { what: 'H.264 with a broken sprop', codec: 'H264', nalus: [IDR], sdp: { 'sprop-parameter-sets': 'not base64!,' }, want: null },
    { what: 'H.265 in band', codec: 'H265', nalus: [VPS, HSPS, HPPS, IRAP], sdp: {}, want: [VPS, HSPS, HPPS, IRAP] },
    { what: 'H.265 from sprop-vps/sps/pps', codec: 'H265', nalus: [IRAP], sdp: { 'sprop-vps': b64(VPS), 'sprop-sps': b64(HSPS), 'sprop-pps': b64(HPPS) }, want: [VPS, HSPS, HPPS, IRAP] },
    { what: 'H.265 without a VPS', codec: 'H265', nalus: [HSPS, HPPS, IRAP], sdp: { 'sprop-sps': b64(HSPS), 'sprop-pps': b64(HPPS) }, want: null },
  ])('$what', ({ codec, nalus, sdp, want }) => {
    expect(withParameterSets(codec, nalus, fmtp(sdp))).toEqual(want);
  });
});
