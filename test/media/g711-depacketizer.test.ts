import { describe, expect, it } from 'vitest';
import type { AudioFrame, DepacketizerStats } from '../../src/media/access-unit.js';
import { G711Depacketizer, type G711RtpParameters } from '../../src/media/g711-depacketizer.js';
import { readRtpHeader } from '../../src/media/rtp.js';
import { rtp } from './fmp4/rtp-packets.js';

// RFC 3551 4.5.14: a packet's payload is its samples, dated by the RTP timestamp.

/** An RTP packet of payload type 0 (PCMU) unless told. */
const packet = (sequence: number, timestamp: number, payload: Buffer | number[], payloadType = 0) =>
  rtp(sequence, timestamp, false, payload, payloadType);
const PCMU: G711RtpParameters = { payloadType: 0, channels: 1 };
const samples = (n: number, size = 160) => Buffer.alloc(size, n);
const frame = (rtpTime: number, data: Buffer, afterLoss = false): AudioFrame => ({ rtpTime, data, afterLoss });

describe('G711Depacketizer', () => {
  it.each<[string, G711RtpParameters, Buffer[], AudioFrame[], Partial<DepacketizerStats>]>([
    [
      'a frame a packet, its samples dated by the timestamp',
      PCMU,
      [packet(1, 8000, samples(1)), packet(2, 8160, samples(2)), packet(3, 8320, samples(3, 80))],
      [frame(8000, samples(1)), frame(8160, samples(2)), frame(8320, samples(3, 80))],
      { units: 3, dropped: 0, lostPackets: 0 },
    ],
    [
      'PCMA on a dynamic payload type, two channels interleaved',
      { payloadType: 97, channels: 2 },
      [packet(7, 0, samples(1, 320), 97), packet(8, 160, samples(2, 320), 97)],
      [frame(0, samples(1, 320)), frame(160, samples(2, 320))],
      { units: 2 },
    ],
    [
      'a timestamp wrapping past 32 bits',
      PCMU,
      [packet(65535, 0xffffff60, samples(1)), packet(0, 0, samples(2))],
      [frame(0xffffff60, samples(1)), frame(0, samples(2))],
      { units: 2, lostPackets: 0 },
    ],
    [
      'two packets lost: the next frame says afterLoss',
      PCMU,
      [packet(1, 0, samples(1)), packet(4, 480, samples(4)), packet(5, 640, samples(5))],
      [frame(0, samples(1)), frame(480, samples(4), true), frame(640, samples(5))],
      { units: 3, lostPackets: 2 },
    ],
    [
      'a repeated and a late packet passed over',
      PCMU,
      [packet(5, 800, samples(5)), packet(5, 800, samples(5)), packet(4, 640, samples(4))],
      [frame(800, samples(5))],
      { units: 1, dropped: 0, lostPackets: 0 },
    ],
    [
      'comfort noise (RFC 3389, payload type 13) passed over, not a loss',
      PCMU,
      [packet(1, 0, samples(1)), packet(2, 160, Buffer.of(40), 13), packet(3, 800, samples(3))],
      [frame(0, samples(1)), frame(800, samples(3))],
      { units: 2, dropped: 0, lostPackets: 0 },
    ],
    [
      'an empty payload dropped and counted',
      PCMU,
      [packet(1, 0, samples(1)), packet(2, 160, []), packet(3, 320, samples(3))],
      [frame(0, samples(1)), frame(320, samples(3), true)],
      { units: 2, dropped: 1 },
    ],
    [
      'a stereo payload of an odd byte count dropped and counted',
      { payloadType: 0, channels: 2 },
      [packet(1, 0, samples(1, 321)), packet(2, 160, samples(2, 320))],
      [frame(160, samples(2, 320), true)],
      { units: 1, dropped: 1 },
    ],
  ])('%s', (_name, params, packets, expected, stats) => {
    const frames: AudioFrame[] = [];
    const d = new G711Depacketizer(params, (f) => frames.push(f));
    for (const p of packets) d.push(p, readRtpHeader(p)!);
    expect(frames).toEqual(expected);
    expect(d.stats).toMatchObject(stats);
  });

  it('hands on the payload without the RTP padding', () => {
    const padded = Buffer.concat([packet(1, 0, samples(1, 8)), Buffer.of(0, 0, 3)]);
    padded[0] = padded[0]! | 0x20;
    const frames: AudioFrame[] = [];
    new G711Depacketizer(PCMU, (f) => frames.push(f)).push(padded, readRtpHeader(padded)!);
    expect(frames).toEqual([frame(0, samples(1, 8))]);
  });
});
