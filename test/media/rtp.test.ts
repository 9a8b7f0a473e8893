import { describe, expect, it } from 'vitest';
import {
  createRtpHeader,
  packetsLostBefore,
  readRtpHeader,
  readRtpHeaderInto,
  seqDelta,
  seqNewer,
  timestampDelta,
  type RtpHeader,
} from '../../src/media/rtp.js';
import { makeRng } from '../support/fuzz.js';
import { captureRtp } from '../support/rtp-capture.js';

interface PacketSpec {
  version?: number;
  marker?: boolean;
  payloadType?: number;
  sequence?: number;
  timestamp?: number;
  ssrc?: number;
  csrcs?: number[];
  extensionWords?: number;
  payload?: number[];
  /** Padding octets to add, the count octet included. */
  padding?: number;
}

function packet(spec: PacketSpec = {}): Buffer {
  const csrcs = spec.csrcs ?? [];
  const ext = spec.extensionWords;
  const payload = spec.payload ?? [0x65, 0x88, 0x84];
  const pad = spec.padding ?? 0;
  const header = Buffer.alloc(12 + 4 * csrcs.length + (ext === undefined ? 0 : 4 + 4 * ext));
  header[0] = ((spec.version ?? 2) << 6) | (pad > 0 ? 0x20 : 0) | (ext === undefined ? 0 : 0x10) | csrcs.length;
  header[1] = (spec.marker ? 0x80 : 0) | (spec.payloadType ?? 96);
  header.writeUInt16BE(spec.sequence ?? 1000, 2);
  header.writeUInt32BE(spec.timestamp ?? 90000, 4);
  header.writeUInt32BE(spec.ssrc ?? 0x12345678, 8);
  csrcs.forEach((c, i) => header.writeUInt32BE(c, 12 + 4 * i));
  if (ext !== undefined) {
    const at = 12 + 4 * csrcs.length;
    header.writeUInt16BE(0xbede, at);
    header.writeUInt16BE(ext, at + 2);
    header.fill(0xee, at + 4);
  }
  const padding = Buffer.alloc(pad);
  if (pad > 0) padding[pad - 1] = pad;
  return Buffer.concat([header, Buffer.from(payload), padding]);
}

describe('readRtpHeader', () => {
  const valid: Array<[name: string, spec: PacketSpec, expected: Partial<RtpHeader>]> = [
    [
      'a plain packet',
      {},
      {
        version: 2,
        padding: false,
        extension: false,
        csrcCount: 0,
        marker: false,
        payloadType: 96,
        sequence: 1000,
        timestamp: 90000,
        ssrc: 0x12345678,
        payloadOffset: 12,
        payloadLength: 3,
      },
    ],
    ['an empty payload', { payload: [] }, { payloadOffset: 12, payloadLength: 0 }],
    ['marker and payload type 127', { marker: true, payloadType: 127 }, { marker: true, payloadType: 127 }],
    ['payload type 0 without marker', { payloadType: 0 }, { marker: false, payloadType: 0 }],
    [
      'the largest unsigned fields',
      { sequence: 0xffff, timestamp: 0xffffffff, ssrc: 0xdeadbeef },
      { sequence: 0xffff, timestamp: 0xffffffff, ssrc: 0xdeadbeef },
    ],
    ['two CSRCs', { csrcs: [1, 2] }, { csrcCount: 2, payloadOffset: 20, payloadLength: 3 }],
    ['fifteen CSRCs', { csrcs: Array.from({ length: 15 }, (_, i) => i) }, { csrcCount: 15, payloadOffset: 72 }],
    ['a one-word extension', { extensionWords: 1 }, { extension: true, payloadOffset: 20, payloadLength: 3 }],
    ['an empty extension', { extensionWords: 0 }, { extension: true, payloadOffset: 16 }],
    [
      'CSRCs and an extension',
      { csrcs: [7], extensionWords: 2 },
      { csrcCount: 1, extension: true, payloadOffset: 28, payloadLength: 3 },
    ],
    ['padding', { padding: 4 }, { padding: true, payloadOffset: 12, payloadLength: 3 }],
    ['one octet of padding', { padding: 1 }, { padding: true, payloadLength: 3 }],
    ['padding that is all the payload', { payload: [], padding: 8 }, { padding: true, payloadLength: 0 }],
    [
      'everything at once',
      { csrcs: [1, 2, 3], extensionWords: 3, padding: 2, marker: true },
      { csrcCount: 3, extension: true, padding: true, marker: true, payloadOffset: 40, payloadLength: 3 },
    ],
  ];
  it.each(valid)('reads %s', (_name, spec, expected) => {
    const buf = packet(spec);
    expect(readRtpHeader(buf)).toMatchObject(expected);
    const out = createRtpHeader();
    expect(readRtpHeaderInto(buf, out)).toBe(true);
    expect(out).toEqual(readRtpHeader(buf));
  });

  const truncate = (buf: Buffer, n: number): Buffer => buf.subarray(0, buf.length - n);
  const invalid: Array<[name: string, buf: Buffer]> = [
    ['an empty buffer', Buffer.alloc(0)],
    ['11 bytes', packet().subarray(0, 11)],
    ['version 0', packet({ version: 0 })],
    ['version 1', packet({ version: 1 })],
    ['version 3', packet({ version: 3 })],
    ['a CSRC list past the end', truncate(packet({ csrcs: [1, 2], payload: [] }), 1)],
    ['an extension header past the end', truncate(packet({ extensionWords: 0, payload: [] }), 1)],
    ['an extension past the end', truncate(packet({ extensionWords: 2, payload: [] }), 4)],
    ['a zero padding count', Buffer.concat([packet({ padding: 2 }).subarray(0, 16), Buffer.from([0])])],
    [
      'padding longer than the payload',
      (() => {
        const b = packet({ padding: 2 });
        b[b.length - 1] = 6;
        return b;
      })(),
    ],
    [
      'padding flag on a bare header',
      (() => {
        const b = packet({ payload: [] });
        b[0] = (b[0] ?? 0) | 0x20;
        return b;
      })(),
    ],
    [
      'padding that eats into the extension',
      (() => {
        const b = packet({ extensionWords: 1, payload: [], padding: 1 });
        b[b.length - 1] = 2;
        return b;
      })(),
    ],
  ];
  it.each(invalid)('refuses %s', (_name, buf) => {
    expect(readRtpHeader(buf)).toBeNull();
    const out = createRtpHeader();
    out.sequence = 4242;
    expect(readRtpHeaderInto(buf, out)).toBe(false);
    // A refused packet leaves the reused header as it was.
    expect(out).toEqual({ ...createRtpHeader(), sequence: 4242 });
  });

  it('reads an RTSP interleaved frame in place, with offsets into the whole buffer', () => {
    const inner = packet({ padding: 3, marker: true });
    const frame = Buffer.concat([
      Buffer.from([0x24, 0x00, 0x00, inner.length]),
      inner,
      Buffer.from([0x24, 0x01, 0xff, 0xff]),
    ]);
    const out = createRtpHeader();
    expect(readRtpHeaderInto(frame, out, 4, inner.length)).toBe(true);
    expect(out).toMatchObject({ marker: true, padding: true, payloadOffset: 16, payloadLength: 3 });
    expect(frame.subarray(out.payloadOffset, out.payloadOffset + out.payloadLength)).toEqual(
      Buffer.from([0x65, 0x88, 0x84]),
    );
    // The frame's length, not the buffer's, bounds the packet: one byte short cuts the padding count off.
    expect(readRtpHeaderInto(frame, out, 4, inner.length - 1)).toBe(false);
    expect(readRtpHeader(frame, 4)).toBeNull();
  });

  it.each([
    ['a negative offset', -1, 16],
    ['a range past the end', 1, 16],
    ['a fractional offset', 0.5, 12],
    ['a fractional length', 0, 12.5],
    ['NaN', Number.NaN, 12],
  ])('refuses %s', (_name, offset, length) => {
    expect(readRtpHeaderInto(packet({ payload: [1, 2, 3, 4] }), createRtpHeader(), offset, length)).toBe(false);
  });

  it('overwrites every field of a reused header', () => {
    const out = createRtpHeader();
    readRtpHeaderInto(packet({ csrcs: [1], extensionWords: 1, padding: 2, marker: true }), out);
    readRtpHeaderInto(packet(), out);
    expect(out).toEqual(readRtpHeader(packet()));
  });
});

describe('sequence and timestamp arithmetic', () => {
  it.each([
    [1, 0, true, 1],
    [0, 1, false, -1],
    [0, 65535, true, 1],
    [65535, 0, false, -1],
    [2, 65534, true, 4],
    [500, 500, false, 0],
    [32767, 0, true, 32767],
    [32768, 0, false, -32768],
    [0, 32768, false, -32768],
    [40000, 10, false, -25546],
    [10, 40000, true, 25546],
  ])('seqNewer(%i, %i) is %s, seqDelta %i', (a, b, newer, delta) => {
    expect(seqNewer(a, b)).toBe(newer);
    expect(seqDelta(a, b)).toBe(delta);
  });

  it.each([
    [7, -1, 0], // the first packet
    [8, 7, 0],
    [10, 7, 2],
    [1, 65534, 2], // across the wrap
    [7, 7, -1], // a duplicate
    [6, 7, -1], // late
    [40000, 7, -1], // more than half the space ahead: taken for late
  ])('packetsLostBefore(%i, last %i) is %i', (sequence, last, lost) => {
    expect(packetsLostBefore(sequence, last)).toBe(lost);
  });

  const { seed } = makeRng();
  it(`seqNewer is antisymmetric everywhere but half the space away (seed ${seed})`, () => {
    const rng = makeRng(seed);
    for (let i = 0; i < 10_000; i++) {
      const a = rng.int(65536);
      const b = rng.int(65536);
      if (a === b || ((a - b) & 0xffff) === 0x8000) expect(seqNewer(a, b) || seqNewer(b, a)).toBe(false);
      else expect(seqNewer(a, b)).toBe(!seqNewer(b, a));
      expect(seqNewer((b + seqDelta(a, b)) & 0xffff, b)).toBe(seqNewer(a, b));
    }
  });

  it.each([
    [9000, 0, 9000],
    [5, 0xfffffffe, 7],
    [0xfffffffe, 5, -7],
    [0, 0, 0],
  ])('timestampDelta(%i, %i) is %i', (a, b, delta) => {
    expect(timestampDelta(a, b)).toBe(delta);
  });
});

describe('readRtpHeader fuzz', () => {
  const rng = makeRng();
  it(`never throws, and what it accepts lies inside the packet (seed ${rng.seed})`, () => {
    const out = createRtpHeader();
    for (let i = 0; i < 20_000; i++) {
      const buf = rng.bytes(80);
      // Half the cases get a valid version so the deeper checks run.
      if (buf.length > 0 && rng.int(2) === 0) buf[0] = ((buf[0] ?? 0) & 0x3f) | 0x80;
      const offset = rng.int(buf.length + 2);
      const length = rng.int(buf.length + 2);
      const ok = readRtpHeaderInto(buf, out, offset, length);
      if (!ok) continue;
      expect(offset + length).toBeLessThanOrEqual(buf.length);
      expect(out.payloadOffset).toBeGreaterThanOrEqual(offset + 12);
      expect(out.payloadOffset + out.payloadLength).toBeLessThanOrEqual(offset + length);
      expect(out.payloadLength).toBeGreaterThanOrEqual(0);
      // Bytes outside the range do not change the answer.
      const before = rng.bytes(4);
      const copy = Buffer.concat([before, buf.subarray(offset, offset + length), rng.bytes(4)]);
      expect(readRtpHeader(copy, before.length, length)).toEqual({
        ...out,
        payloadOffset: out.payloadOffset - offset + before.length,
      });
    }
  });
});

describe('readRtpHeader on ffmpeg output', () => {
  it('reads every packet of an H.264 stream, across a sequence wrap', async () => {
    const { packets } = await captureRtp(
      ['-c:v', 'libx264', '-g', '5', '-bf', '0'],
      ['-payload_type', '97', '-ssrc', String(0xdeadbeef | 0), '-seq', '65530'],
    );
    expect(packets.length).toBeGreaterThan(6); // enough to wrap from 65530
    const out = createRtpHeader();
    let previous: { sequence: number; timestamp: number; marker: boolean } | null = null;
    let frames = 0;
    for (const p of packets) {
      expect(readRtpHeaderInto(p, out)).toBe(true);
      expect(out).toMatchObject({
        version: 2,
        padding: false,
        extension: false,
        csrcCount: 0,
        payloadType: 97,
        ssrc: 0xdeadbeef,
        payloadOffset: 12,
        payloadLength: p.length - 12,
      });
      // The payload starts with an H.264 NAL unit header: forbidden bit clear.
      expect((p[12] ?? 0x80) & 0x80).toBe(0);
      if (previous) {
        // Loopback loses nothing here; a gap would mean the test socket dropped packets.
        expect(seqDelta(out.sequence, previous.sequence)).toBe(1);
        expect(seqNewer(out.sequence, previous.sequence)).toBe(true);
        // Without B-frames each picture is 1/10 s after the last, and the marker ends each one.
        expect(timestampDelta(out.timestamp, previous.timestamp)).toBe(previous.marker ? 9000 : 0);
      } else {
        expect(out.sequence).toBe(65530);
      }
      if (out.marker) frames++;
      previous = { sequence: out.sequence, timestamp: out.timestamp, marker: out.marker };
    }
    expect(previous?.marker).toBe(true);
    expect(frames).toBe(10);
    expect(seqNewer(previous?.sequence ?? 0, 65530)).toBe(true);
    expect(previous?.sequence).toBeLessThan(65530);
  });
});
