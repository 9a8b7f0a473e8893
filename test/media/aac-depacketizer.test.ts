import { describe, expect, it } from 'vitest';
import type { AudioFrame } from '../../src/media/access-unit.js';
import { AacDepacketizer, aacRtpParameters } from '../../src/media/aac-depacketizer.js';
import { MediaFormatError } from '../../src/media/errors.js';
import { readRtpHeader } from '../../src/media/rtp.js';
import { rtp } from './fmp4/rtp-packets.js';

describe('AacDepacketizer (RFC 3640 AAC-hbr)', () => {
  const hbr = new Map([
    ['mode', 'AAC-hbr'],
    ['sizelength', '13'],
    ['indexlength', '3'],
    ['indexdeltalength', '3'],
  ]);
  const headers = (sizes: number[]) => {
    const out = Buffer.alloc(2 + sizes.length * 2);
    out.writeUInt16BE(sizes.length * 16, 0);
    sizes.forEach((s, i) => out.writeUInt16BE(s << 3, 2 + i * 2));
    return out;
  };
  const frame = (n: number, size: number) => Buffer.alloc(size, n);
  function runAac(packets: Buffer[]) {
    const frames: AudioFrame[] = [];
    const d = new AacDepacketizer(aacRtpParameters(hbr), (f) => frames.push(f));
    for (const p of packets) d.push(p, readRtpHeader(p)!);
    return { frames, stats: d.stats };
  }

  it('splits several access units of one packet, 1024 samples apart', () => {
    const { frames } = runAac([rtp(1, 2048, true, Buffer.concat([headers([3, 5]), frame(1, 3), frame(2, 5)]))]);
    expect(frames).toEqual([
      { rtpTime: 2048, data: frame(1, 3), afterLoss: false },
      { rtpTime: 3072, data: frame(2, 5), afterLoss: false },
    ]);
  });

  it('joins one access unit fragmented over packets', () => {
    const { frames } = runAac([
      rtp(1, 0, false, Buffer.concat([headers([10]), frame(4, 6)])),
      rtp(2, 0, true, Buffer.concat([headers([10]), frame(4, 4)])),
    ]);
    expect(frames).toEqual([{ rtpTime: 0, data: frame(4, 10), afterLoss: false }]);
  });

  it.each<[string, Buffer[]]>([
    ['AU sizes past the packet', [rtp(1, 0, true, Buffer.concat([headers([3, 9]), frame(1, 5)]))]],
    [
      'a fragment whose end was lost',
      [
        rtp(1, 0, false, Buffer.concat([headers([10]), frame(4, 6)])),
        rtp(3, 1024, true, Buffer.concat([headers([2]), frame(1, 2)])),
      ],
    ],
    ['a header section longer than the packet', [rtp(1, 0, true, Buffer.of(0xff, 0xff, 1))]],
    ['an interleaved index', [rtp(1, 0, true, Buffer.concat([Buffer.of(0, 16, 0, (2 << 3) | 1), frame(1, 2)]))]],
  ])('drops %s and counts it', (_name, packets) => {
    const { frames, stats } = runAac(packets);
    expect(frames.filter((f) => !f.afterLoss && f.rtpTime === 0)).toEqual([]);
    expect(stats.dropped + stats.lostPackets).toBeGreaterThanOrEqual(1);
  });

  it.each<[Record<string, string>, string]>([
    [{ mode: 'AAC-hbr', sizelength: 'x' }, 'sizelength'],
    [{ mode: 'generic' }, 'sizelength missing'],
    [{ mode: 'AAC-hbr', sizelength: '0' }, 'sizelength=0'],
    [{ mode: 'AAC-hbr', indexlength: '99' }, 'indexlength'],
  ])('refuses the fmtp %j with a MediaFormatError', (fmtp, message) => {
    expect(() => aacRtpParameters(new Map(Object.entries(fmtp)))).toThrow(MediaFormatError);
    expect(() => aacRtpParameters(new Map(Object.entries(fmtp)))).toThrow(message);
  });
});
