import { describe, expect, it } from 'vitest';
import type { VideoAccessUnit } from '../../src/media/access-unit.js';
import { readRtpHeader } from '../../src/media/rtp.js';
import { VideoDepacketizer, type VideoDepacketizerOptions } from '../../src/media/video-depacketizer.js';
import { aggregate, rtp } from './fmp4/rtp-packets.js';

const SPS = Buffer.from('6742c01e8c8d40', 'hex');
const PPS = Buffer.from('68ce3c80', 'hex');
const IDR = Buffer.concat([Buffer.of(0x65, 0x88), Buffer.alloc(30, 7)]);
const P = Buffer.concat([Buffer.of(0x41, 0x9a), Buffer.alloc(20, 3)]);
const AUD = Buffer.of(0x09, 0xf0);

function fuA(nal: Buffer, pieces: number): Buffer[] {
  const body = nal.subarray(1);
  const step = Math.ceil(body.length / pieces);
  const out: Buffer[] = [];
  for (let i = 0; i < pieces; i++) {
    const fu = (i === 0 ? 0x80 : 0) | (i === pieces - 1 ? 0x40 : 0) | (nal[0]! & 0x1f);
    out.push(Buffer.concat([Buffer.of((nal[0]! & 0xe0) | 28, fu), body.subarray(i * step, (i + 1) * step)]));
  }
  return out;
}

function run(packets: Buffer[], options: VideoDepacketizerOptions = { codec: 'H264' }) {
  const units: VideoAccessUnit[] = [];
  const d = new VideoDepacketizer(options, (u) => units.push(u));
  for (const p of packets) d.push(p, readRtpHeader(p)!);
  return { units, stats: d.stats };
}

describe('VideoDepacketizer, H.264 (RFC 6184)', () => {
  it('joins STAP-A parameter sets and an FU-A keyframe into one access unit, without the delimiter', () => {
    const [a, b, c] = fuA(IDR, 3);
    const { units, stats } = run([
      rtp(1, 900, false, aggregate([0x18], [AUD, SPS, PPS])),
      rtp(2, 900, false, a!),
      rtp(3, 900, false, b!),
      rtp(4, 900, true, c!),
      rtp(5, 4500, true, P),
    ]);
    expect(units).toEqual([
      { rtpTime: 900, nalus: [SPS, PPS, IDR], keyframe: true, afterLoss: false },
      { rtpTime: 4500, nalus: [P], keyframe: false, afterLoss: false },
    ]);
    expect(stats).toEqual({ units: 2, dropped: 0, lostPackets: 0 });
  });

  it('ends an access unit whose marker packet was lost at the next timestamp, and drops it', () => {
    const [a, , c] = fuA(IDR, 3);
    const { units, stats } = run([
      rtp(1, 900, false, a!),
      rtp(3, 900, true, c!),
      rtp(4, 4500, true, P),
      rtp(5, 8100, true, P),
    ]);
    expect(units.map((u) => [u.rtpTime, u.afterLoss])).toEqual([
      [4500, true],
      [8100, false],
    ]);
    expect(stats).toEqual({ units: 2, dropped: 1, lostPackets: 1 });
  });

  it.each<[string, Buffer[]]>([
    ['an FU-A middle without its start', [rtp(1, 900, true, fuA(IDR, 3)[1]!)]],
    ['an FU-A start inside another', [rtp(1, 900, false, fuA(IDR, 2)[0]!), rtp(2, 900, true, fuA(IDR, 2)[0]!)]],
    ['a STAP-A whose size runs past the end', [rtp(1, 900, true, [0x18, 0x00, 0x40, 0x67])]],
    ['a STAP-A with a zero size', [rtp(1, 900, true, [0x18, 0x00, 0x00])]],
    ['an FU-B (interleaved mode)', [rtp(1, 900, true, [0x1d, 0x85, 0, 0, 1])]],
    ['an empty payload', [rtp(1, 900, true, [])]],
    [
      'a timestamp change in the middle of an FU-A',
      [rtp(1, 900, false, fuA(IDR, 2)[0]!), rtp(2, 1800, true, fuA(IDR, 2)[1]!)],
    ],
  ])('drops %s and counts it, never throws', (_name, packets) => {
    const { units, stats } = run(packets);
    expect(units).toEqual([]);
    expect(stats.dropped).toBeGreaterThanOrEqual(1);
  });

  it('ignores a duplicated packet and hands on the unit once', () => {
    const { units } = run([rtp(7, 900, true, IDR), rtp(7, 900, true, IDR), rtp(8, 4500, true, P)]);
    expect(units.map((u) => u.rtpTime)).toEqual([900, 4500]);
  });

  it('counts sequence numbers across the 16-bit wrap as consecutive', () => {
    const { units, stats } = run([rtp(65535, 900, true, IDR), rtp(0, 4500, true, P)]);
    expect(units).toHaveLength(2);
    expect(stats.lostPackets).toBe(0);
  });

  it('drops an access unit over the byte bound', () => {
    const { units, stats } = run([rtp(1, 900, true, IDR), rtp(2, 4500, true, P)], {
      codec: 'H264',
      maxAccessUnitBytes: 25,
    });
    expect(units.map((u) => u.rtpTime)).toEqual([4500]);
    expect(stats.dropped).toBe(1);
  });
});

const VPS = Buffer.from('40010c01ffff', 'hex');
const H265_SPS = Buffer.from('42010101', 'hex');
const H265_IDR = Buffer.concat([Buffer.of(0x26, 0x01, 0xaf), Buffer.alloc(40, 5)]); // IDR_W_RADL (19)
const H265_TRAIL = Buffer.concat([Buffer.of(0x02, 0x01, 0xd0), Buffer.alloc(10, 1)]);

function fu265(nal: Buffer, pieces: number, donl?: number): Buffer[] {
  const type = (nal[0]! >> 1) & 0x3f;
  const body = nal.subarray(2);
  const step = Math.ceil(body.length / pieces);
  return Array.from({ length: pieces }, (_, i) => {
    const fu = (i === 0 ? 0x80 : 0) | (i === pieces - 1 ? 0x40 : 0) | type;
    const don = i === 0 && donl !== undefined ? [donl >> 8, donl & 0xff] : [];
    return Buffer.concat([
      Buffer.of((nal[0]! & 0x81) | (49 << 1), nal[1]!, fu, ...don),
      body.subarray(i * step, (i + 1) * step),
    ]);
  });
}

describe('VideoDepacketizer, H.265 (RFC 7798)', () => {
  it('joins an AP of parameter sets and an FU keyframe; a trailing picture is no keyframe', () => {
    const [a, b] = fu265(H265_IDR, 2);
    const { units } = run(
      [
        rtp(1, 0, false, aggregate([0x60, 0x01], [VPS, H265_SPS])),
        rtp(2, 0, false, a!),
        rtp(3, 0, true, b!),
        rtp(4, 3000, true, H265_TRAIL),
      ],
      { codec: 'H265' },
    );
    expect(units).toEqual([
      { rtpTime: 0, nalus: [VPS, H265_SPS, H265_IDR], keyframe: true, afterLoss: false },
      { rtpTime: 3000, nalus: [H265_TRAIL], keyframe: false, afterLoss: false },
    ]);
  });

  it('removes decoding-order numbers when sprop-max-don-diff puts them in (single, AP, FU)', () => {
    const single = Buffer.concat([H265_TRAIL.subarray(0, 2), Buffer.of(0, 9), H265_TRAIL.subarray(2)]);
    const ap = Buffer.concat([
      Buffer.of(0x60, 0x01, 0x00, 0x05),
      Buffer.of(0, VPS.length),
      VPS,
      Buffer.of(1),
      Buffer.of(0, H265_SPS.length),
      H265_SPS,
    ]);
    const [a, b] = fu265(H265_IDR, 2, 6);
    const { units } = run(
      [rtp(1, 0, false, ap), rtp(2, 0, false, a!), rtp(3, 0, true, b!), rtp(4, 3000, true, single)],
      { codec: 'H265', donl: true },
    );
    expect(units.map((u) => u.nalus)).toEqual([[VPS, H265_SPS, H265_IDR], [H265_TRAIL]]);
  });

  it.each<[string, Buffer]>([
    ['a PACI packet', Buffer.of(0x64, 0x01, 0, 0, 0)],
    ['an AP unit shorter than a NAL header', Buffer.of(0x60, 0x01, 0x00, 0x01, 0x40)],
    ['a two-byte payload', Buffer.of(0x02, 0x01)],
  ])('drops %s', (_name, payload) => {
    const { units, stats } = run([rtp(1, 0, true, payload)], { codec: 'H265' });
    expect(units).toEqual([]);
    expect(stats.dropped).toBe(1);
  });
});
