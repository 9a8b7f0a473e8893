import { describe, expect, it } from 'vitest';
import { senderReportLength, senderReportRtpTime } from '../../src/media/rtcp.js';

/** An SR with `blocks` report blocks, optionally followed by an SDES chunk (a compound packet). */
function sr(
  blocks = 0,
  {
    sdes = false,
    version = 2,
    type = 200,
    lengthWords,
  }: { sdes?: boolean; version?: number; type?: number; lengthWords?: number } = {},
): Buffer {
  const body = Buffer.alloc(28 + 24 * blocks);
  body[0] = (version << 6) | blocks;
  body[1] = type;
  body.writeUInt16BE(lengthWords ?? body.length / 4 - 1, 2);
  body.writeUInt32BE(0x11223344, 4); // SSRC
  body.writeUInt32BE(0xe0000000, 8); // NTP seconds
  body.writeUInt32BE(90_000 * 7, 16); // RTP time
  if (!sdes) return body;
  const cname = Buffer.from('\x81\xca\x00\x04\x11\x22\x33\x44\x01\x08cam@10.0\x00\x00', 'latin1');
  return Buffer.concat([body, cname]);
}

describe('senderReportLength', () => {
  it.each([
    ['a bare SR', sr(), 28],
    ['an SR with two report blocks', sr(2), 76],
    ['an SR followed by SDES (only the SR counts)', sr(0, { sdes: true }), 28],
    ['a receiver report (201)', sr(0, { type: 201 }), 0],
    ['RTCP version 1', sr(0, { version: 1 }), 0],
    ['a length past the end', sr(0, { lengthWords: 20 }), 0],
    ['a length too short for its report blocks', sr(1, { lengthWords: 6 }), 0],
    ['truncated', sr().subarray(0, 20), 0],
    ['empty', Buffer.alloc(0), 0],
  ])('%s', (_name, packet, expected) => {
    expect(senderReportLength(packet)).toBe(expected);
  });

  it('reads the RTP time of a report', () => {
    expect(senderReportRtpTime(sr())).toBe(630_000);
  });

  it('never throws on random bytes, and any length it gives lies inside the packet', () => {
    let seed = 7;
    const rand = () => ((seed = (seed * 1_103_515_245 + 12_345) >>> 0) >>> 16) & 0xff;
    for (let i = 0; i < 20_000; i++) {
      const packet = Buffer.from(Array.from({ length: rand() % 90 }, rand));
      if (i % 3 === 0 && packet.length > 2) {
        packet[0] = 0x80 | (packet[0]! & 0x1f);
        packet[1] = 200;
      }
      const n = senderReportLength(packet);
      expect(n === 0 || (n >= 28 && n <= packet.length && n % 4 === 0)).toBe(true);
    }
  });
});
