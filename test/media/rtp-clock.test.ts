import { describe, expect, it } from 'vitest';
import { playRtpTimes } from '../../src/media/relay/upstream.js';
import { senderReport } from '../support/rtcp.js';
import {
  roll,
  rtpTimeAt,
  secondsAt,
  senderReportAnchor,
  senderReportSeconds,
  type ClockAnchor,
} from '../../src/media/rtp-clock.js';

describe('rtp-clock', () => {
  it.each([
    { name: 'same timestamp', anchor: { rtpTime: 1000, seconds: 5, rate: 90000 }, rtp: 1000, seconds: 5 },
    { name: 'one second later', anchor: { rtpTime: 1000, seconds: 5, rate: 90000 }, rtp: 91000, seconds: 6 },
    { name: 'half a second earlier', anchor: { rtpTime: 8000, seconds: 5, rate: 8000 }, rtp: 4000, seconds: 4.5 },
    { name: 'across the 32-bit wrap', anchor: { rtpTime: 0xffffff00, seconds: 0, rate: 256 }, rtp: 0x100, seconds: 2 },
    {
      name: 'backwards across the wrap',
      anchor: { rtpTime: 0x100, seconds: 10, rate: 256 },
      rtp: 0xffffff00,
      seconds: 8,
    },
  ])('secondsAt and rtpTimeAt are inverses: $name', ({ anchor, rtp, seconds }) => {
    expect(secondsAt(anchor, rtp)).toBeCloseTo(seconds, 9);
    expect(rtpTimeAt(anchor, seconds)).toBe(rtp);
  });

  it('rounds to the nearest tick and stays within 32 bits', () => {
    const anchor = { rtpTime: 0xfffffff0, seconds: 100, rate: 16000 };
    expect(rtpTimeAt(anchor, 100 + 1 / 16000 / 3)).toBe(0xfffffff0);
    expect(rtpTimeAt(anchor, 100 + 1)).toBe((0xfffffff0 + 16000) % 2 ** 32);
    expect(rtpTimeAt(anchor, 99)).toBe(0xfffffff0 - 16000);
  });

  it('rolls a far anchor forward without moving its timeline, and leaves a near one alone', () => {
    const anchor: ClockAnchor = { rtpTime: 0, seconds: 0, rate: 90000 };
    roll(anchor, 90000 * 3600); // one hour: well within range
    expect(anchor).toEqual({ rtpTime: 0, seconds: 0, rate: 90000 });
    // Five hours of 90 kHz ticks, one step at a time as packets would come: the anchor follows,
    // and the instant of the latest timestamp is still exactly five hours.
    let rtp = 0;
    for (let h = 0; h < 5; h++) {
      rtp = (rtp + 90000 * 3600) >>> 0;
      roll(anchor, rtp);
    }
    expect(anchor.rtpTime).not.toBe(0);
    expect(secondsAt(anchor, rtp)).toBeCloseTo(5 * 3600, 9);
    // Ten hours: without the roll, a signed 32-bit difference would have wrapped (6.6 h at 90 kHz).
    for (let h = 0; h < 5; h++) {
      rtp = (rtp + 90000 * 3600) >>> 0;
      roll(anchor, rtp);
    }
    expect(secondsAt(anchor, rtp)).toBeCloseTo(10 * 3600, 9);
  });

  it("reads a sender report's NTP time and RTP time", () => {
    const sr = senderReport({ ntpSeconds: 3_900_000_000.5, rtpTime: 123456 });
    expect(senderReportSeconds(sr)).toBe(3_900_000_000.5);
    expect(senderReportAnchor(sr, 8000)).toEqual({ rtpTime: 123456, seconds: 3_900_000_000.5, rate: 8000 });
  });
});

describe("playRtpTimes (RTP-Info of the camera's PLAY answer, by track)", () => {
  const tracks = [{ control: 'rtsp://10.0.0.5:554/cam0/stream=0' }, { control: 'rtsp://10.0.0.5:554/cam0/stream=1' }];
  it.each([
    { name: 'no header', header: undefined, want: [undefined, undefined] },
    {
      name: 'both, by absolute URL',
      header:
        'url=rtsp://10.0.0.5:554/cam0/stream=0;seq=1;rtptime=100,url=rtsp://10.0.0.5:554/cam0/stream=1;seq=9;rtptime=200',
      want: [100, 200],
    },
    {
      name: 'another host and port than dialled',
      header: 'url=rtsp://192.168.1.9/cam0/stream=1;rtptime=7,url=rtsp://192.168.1.9/cam0/stream=0;rtptime=5',
      want: [5, 7],
    },
    {
      name: 'a track without rtptime',
      header: 'url=rtsp://10.0.0.5:554/cam0/stream=0;seq=1;rtptime=100,url=rtsp://10.0.0.5:554/cam0/stream=1;seq=9',
      want: [100, undefined],
    },
    {
      name: 'an unknown track',
      header: 'url=rtsp://10.0.0.5:554/cam0/stream=7;rtptime=1',
      want: [undefined, undefined],
    },
    { name: 'malformed (no url)', header: 'seq=1;rtptime=100', want: [undefined, undefined] },
    {
      name: 'malformed (rtptime out of range)',
      header: 'url=rtsp://10.0.0.5:554/cam0/stream=0;rtptime=4294967296',
      want: [undefined, undefined],
    },
  ])('$name', ({ header, want }) => {
    expect(playRtpTimes(header, tracks)).toEqual(want);
  });
});
