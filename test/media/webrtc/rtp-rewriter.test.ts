import { describe, expect, it } from 'vitest';
import { readRtpHeader } from '../../../src/media/rtp.js';
import { H264ParameterSetInjector } from '../../../src/media/webrtc/inband-parameter-sets.js';
import { readPeerFeedback, RtpRewriter } from '../../../src/media/webrtc/rtp-rewriter.js';

// The per-peer header rewrite (sequence, timestamp, SSRC, payload type) and the burst packing of
// the cached group of pictures; the RTCP feedback reader; the SPS/PPS injection before keyframes.

function rtp(seq: number, ts: number, opts: { marker?: boolean; pt?: number; payload?: number[] } = {}): Buffer {
  const b = Buffer.alloc(12 + (opts.payload?.length ?? 4));
  b[0] = 0x80;
  b[1] = (opts.marker ? 0x80 : 0) | (opts.pt ?? 96);
  b.writeUInt16BE(seq & 0xffff, 2);
  b.writeUInt32BE(ts >>> 0, 4);
  b.writeUInt32BE(0xcafebabe, 8);
  Buffer.from(opts.payload ?? [0x41, 0x9a, 0, 0]).copy(b, 12);
  return b;
}

const rewriter = () =>
  new RtpRewriter({ ssrc: 0x1234, payloadType: 102, clockRate: 90000, initialSequence: 65534, initialTimestamp: 1000 });

describe('RtpRewriter', () => {
  it('gives the peer its own SSRC, payload type, sequence (wrapping) and timestamps with the camera spacing; the shared packet is untouched', () => {
    const r = rewriter();
    const input = [
      rtp(500, 90_000, { marker: true }),
      rtp(501, 93_600),
      rtp(502, 93_600, { marker: true }),
      rtp(503, 97_200),
    ];
    const copies = input.map((p) => Buffer.from(p));
    const out = input.map((p) => readRtpHeader(r.rewrite(p) as Buffer));
    expect(out.map((h) => h?.sequence)).toEqual([65534, 65535, 0, 1]);
    expect(out.map((h) => h?.timestamp)).toEqual([1000, 4600, 4600, 8200]);
    expect(out.every((h) => h?.ssrc === 0x1234 && h.payloadType === 102)).toBe(true);
    expect(out.map((h) => h?.marker)).toEqual([true, false, true, false]);
    expect(input).toEqual(copies);
  });

  it('packs the pictures of a burst 1 ms apart, then keeps the camera spacing from there', () => {
    const r = rewriter();
    r.beginBurst();
    // A cached GOP: three pictures 40 ms apart, the first in two packets.
    const burst = [
      rtp(10, 0),
      rtp(11, 0, { marker: true }),
      rtp(12, 3600, { marker: true }),
      rtp(13, 7200, { marker: true }),
    ];
    const out = burst.map((p) => readRtpHeader(r.rewrite(p) as Buffer)?.timestamp);
    r.endBurst();
    expect(out).toEqual([1000, 1000, 1090, 1180]);
    expect(readRtpHeader(r.rewrite(rtp(14, 10_800)) as Buffer)?.timestamp).toBe(1180 + 3600);
  });

  it('keeps a gap of the camera (real loss) visible, but not a jump (a restart); a clock jump continues one frame on', () => {
    const r = rewriter();
    r.rewrite(rtp(100, 0));
    expect(readRtpHeader(r.rewrite(rtp(103, 3600)) as Buffer)?.sequence).toBe((65534 + 3) & 0xffff);
    const afterRestart = readRtpHeader(r.rewrite(rtp(40_000, 90_000 * 3600)) as Buffer);
    expect(afterRestart?.sequence).toBe((65534 + 4) & 0xffff);
    expect(afterRestart?.timestamp).toBe(1000 + 3600 + 3600);
  });

  it('refuses what is not RTP', () => {
    expect(rewriter().rewrite(Buffer.from([1, 2, 3]))).toBeNull();
  });
});

describe('readPeerFeedback', () => {
  it('counts PLI, FIR and NACK in a compound packet (receiver report first) and stops at garbage', () => {
    const rr = Buffer.from([0x80, 201, 0, 1, 0, 0, 0, 1]);
    const pli = Buffer.from([0x81, 206, 0, 2, 0, 0, 0, 1, 0, 0, 0, 2]);
    const fir = Buffer.from([0x84, 206, 0, 4, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2, 1, 0, 0, 0]);
    const nack = Buffer.from([0x81, 205, 0, 3, 0, 0, 0, 1, 0, 0, 0, 2, 0, 5, 0, 0]);
    expect(readPeerFeedback(Buffer.concat([rr, pli, nack, fir, pli]))).toEqual({ pli: 2, fir: 1, nack: 1 });
    expect(readPeerFeedback(Buffer.concat([rr, Buffer.from([0x00, 0xff, 0xff, 0xff]), pli]))).toEqual({
      pli: 0,
      fir: 0,
      nack: 0,
    });
    expect(readPeerFeedback(Buffer.alloc(0))).toEqual({ pli: 0, fir: 0, nack: 0 });
  });
});

describe('H264ParameterSetInjector', () => {
  const sps = Buffer.from([0x67, 0x4d, 0x00, 0x1f, 0xaa]);
  const pps = Buffer.from([0x68, 0xee, 0x3c, 0x80]);

  it("puts one STAP-A of SPS and PPS, with the keyframe's timestamp and no marker, before an IDR that brought none", () => {
    const inject = new H264ParameterSetInjector({ sps: [sps], pps: [pps] });
    // FU-A start of an IDR (type 5) with the marker of nothing yet.
    const idrStart = rtp(7, 4500, { payload: [0x7c, 0x85, 0x88, 0x80] });
    const stap = inject.before(idrStart) as Buffer;
    const header = readRtpHeader(stap);
    expect(header).toMatchObject({ timestamp: 4500, marker: false, sequence: 7 });
    expect([...stap.subarray(12)]).toEqual([0x78, 0, sps.length, ...sps, 0, pps.length, ...pps]);
    // The rest of that picture, and later pictures that are not keyframes, get nothing.
    expect(inject.before(rtp(8, 4500, { payload: [0x7c, 0x05, 0, 0] }))).toBeNull();
    expect(inject.before(rtp(9, 8100, { payload: [0x41, 0x9a, 0, 0] }))).toBeNull();
    // The next keyframe gets them again.
    expect(inject.before(rtp(10, 90_000, { payload: [0x65, 0x88, 0x80, 0] }))).not.toBeNull();
  });

  it('after reset() the same keyframe gets its sets again (a burst of the cached group sent anew)', () => {
    const inject = new H264ParameterSetInjector({ sps: [sps], pps: [pps] });
    const idr = rtp(7, 4500, { payload: [0x65, 0x88, 0x80, 0] });
    expect(inject.before(idr)).not.toBeNull();
    expect(inject.before(idr)).toBeNull();
    inject.reset();
    expect(inject.before(idr)).not.toBeNull();
  });

  it('adds nothing when the camera sends its own SPS before the IDR, or when the SDP has no parameter sets', () => {
    const inject = new H264ParameterSetInjector({ sps: [sps], pps: [pps] });
    expect(inject.before(rtp(1, 100, { payload: [...sps] }))).toBeNull();
    expect(inject.before(rtp(2, 100, { payload: [...pps] }))).toBeNull();
    expect(inject.before(rtp(3, 100, { payload: [0x65, 0x88, 0x80, 0] }))).toBeNull();
    const none = new H264ParameterSetInjector({ sps: [], pps: [] });
    expect(none.before(rtp(3, 200, { payload: [0x65, 0x88, 0x80, 0] }))).toBeNull();
  });
});
