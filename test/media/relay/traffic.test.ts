import { describe, expect, it } from 'vitest';
import { FanOut } from '../../../src/media/relay/fanout.js';
import { TRAFFIC_WINDOW_S, TrafficMeter } from '../../../src/media/relay/traffic.js';

// A camera stream's bitrate and frame rate as the relay receives it: per-second counts in a ring,
// the rate the mean of the last whole seconds, and the fan-out counting each packet it is fed.

/** ms at the start of second `s` (an arbitrary epoch far from 0). */
const at = (s: number, ms = 0) => (1_800_000_000 + s) * 1000 + ms;

/** 25 pictures a second of `perFrame` packets of `bytes` each, for `seconds` whole seconds from `from`. */
function feed(meter: TrafficMeter, from: number, seconds: number, bytes = 1000, perFrame = 4): void {
  for (let s = from; s < from + seconds; s++)
    for (let f = 0; f < 25; f++) for (let p = 0; p < perFrame; p++) meter.count(bytes, p === 0, at(s, f * 40 + p));
}

describe('TrafficMeter', () => {
  it('is null before anything is counted, and until a whole second after the first packet', () => {
    const meter = new TrafficMeter();
    expect(meter.rate(at(10))).toBeNull();
    meter.count(500, true, at(10, 700));
    // The first packet's second is partly counted: it never counts.
    expect(meter.rate(at(10, 900))).toBeNull();
    expect(meter.rate(at(11, 500))).toBeNull();
    meter.count(500, true, at(11, 100));
    expect(meter.rate(at(12))).toEqual({ kbps: 4, fps: 1 });
  });

  it('is the mean of the last whole seconds: 25 pictures of 4 kB a second are 800 kbit/s at 25 fps', () => {
    const meter = new TrafficMeter();
    feed(meter, 0, 20);
    expect(meter.rate(at(20))).toEqual({ kbps: 800, fps: 25 });
    // The second under way is not counted, however far into it.
    meter.count(1_000_000, true, at(20, 10));
    expect(meter.rate(at(20, 999))).toEqual({ kbps: 800, fps: 25 });
  });

  it('averages a stream younger than the window over its whole seconds only', () => {
    const meter = new TrafficMeter();
    meter.count(100, true, at(0, 999));
    feed(meter, 1, 2);
    expect(meter.rate(at(3))).toEqual({ kbps: 800, fps: 25 });
  });

  it('reads what the camera sent lately: a change shows within the window, a silence reads 0', () => {
    const meter = new TrafficMeter();
    feed(meter, 0, 10, 1000);
    feed(meter, 10, 2, 2000);
    // 3 s at 800 kbit/s and 2 s at 1600 kbit/s.
    expect(meter.rate(at(12))).toEqual({ kbps: (3 * 800 + 2 * 1600) / 5, fps: 25 });
    expect(meter.rate(at(12 + TRAFFIC_WINDOW_S))).toEqual({ kbps: 0, fps: 0 });
    // Counts of seconds long gone are never taken for recent ones (the ring's slots are reused).
    expect(meter.rate(at(12 + 7 * TRAFFIC_WINDOW_S))).toEqual({ kbps: 0, fps: 0 });
    feed(meter, 100, 5, 500);
    expect(meter.rate(at(105))).toEqual({ kbps: 400, fps: 25 });
  });
});

/** An RTP packet of `length` bytes: payload type 96, an H.264 slice that starts no keyframe. */
function rtp(sequence: number, timestamp: number, length: number): Buffer {
  const packet = Buffer.alloc(length);
  packet[0] = 0x80;
  packet[1] = 96;
  packet.writeUInt16BE(sequence & 0xffff, 2);
  packet.writeUInt32BE(timestamp >>> 0, 4);
  packet.writeUInt32BE(0x1234, 8);
  packet[12] = 0x41; // NAL type 1: a non-IDR slice
  return packet;
}

describe('FanOut traffic', () => {
  it('counts every packet of every track fed in, and a picture per new video timestamp', () => {
    let now = at(0, 500);
    const fanout = new FanOut({ videoTrack: 0, codec: 'H264', now: () => now });
    let seq = 0;
    for (let s = 1; s <= 3; s++) {
      for (let f = 0; f < 10; f++) {
        now = at(s, f * 100);
        const ts = (s * 10 + f) * 9000;
        // Three packets of one picture share its timestamp; one audio packet on track 1.
        for (let p = 0; p < 3; p++) fanout.push(0, rtp(seq++, ts, 1000));
        fanout.push(1, rtp(seq++, ts, 200));
      }
    }
    // 10 pictures a second of 3.2 kB: 256 kbit/s.
    expect(fanout.traffic.rate(at(4))).toEqual({ kbps: 256, fps: 10 });
  });
});
