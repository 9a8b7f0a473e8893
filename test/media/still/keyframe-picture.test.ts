import { describe, expect, it } from 'vitest';
import { StillError } from '../../../src/media/still/errors.js';
import { keyframePicture, videoPlanOf, type VideoTrackPlan } from '../../../src/media/still/keyframe-picture.js';
import { makeRng } from '../../support/fuzz.js';
import { aggregate, rtp } from '../fmp4/rtp-packets.js';

const SPS = Buffer.from('6742c01e8c8d40', 'hex');
const PPS = Buffer.from('68ce3c80', 'hex');
const IDR = Buffer.concat([Buffer.of(0x65, 0x88), Buffer.alloc(40, 7)]);
const P = Buffer.concat([Buffer.of(0x41, 0x9a), Buffer.alloc(20, 3)]);
const VPS = Buffer.from('40010c01ffff', 'hex');
const HSPS = Buffer.from('420101016000', 'hex');
const HPPS = Buffer.from('4401c172b462', 'hex');
const IRAP = Buffer.concat([Buffer.of(0x26, 0x01, 0xaf), Buffer.alloc(40, 9)]); // IDR_W_RADL, first slice

const START = '00000001';
const hex = (...nalus: Buffer[]) => nalus.map((n) => START + n.toString('hex')).join('');
const b64 = (b: Buffer) => b.toString('base64');

const h264: VideoTrackPlan = { track: 0, codec: 'H264', donl: false, fmtp: new Map() };
const h265: VideoTrackPlan = { track: 0, codec: 'H265', donl: false, fmtp: new Map() };

function fuA(nal: Buffer, pieces: number): Buffer[] {
  const body = nal.subarray(1);
  const step = Math.ceil(body.length / pieces);
  return Array.from({ length: pieces }, (_, i) =>
    Buffer.concat([
      Buffer.of((nal[0]! & 0xe0) | 28, (i === 0 ? 0x80 : 0) | (i === pieces - 1 ? 0x40 : 0) | (nal[0]! & 0x1f)),
      body.subarray(i * step, (i + 1) * step),
    ]),
  );
}

function fuH265(nal: Buffer, pieces: number): Buffer[] {
  const type = (nal[0]! >> 1) & 0x3f;
  const body = nal.subarray(2);
  const step = Math.ceil(body.length / pieces);
  return Array.from({ length: pieces }, (_, i) =>
    Buffer.concat([
      Buffer.of((nal[0]! & 0x81) | (49 << 1), nal[1]!, (i === 0 ? 0x80 : 0) | (i === pieces - 1 ? 0x40 : 0) | type),
      body.subarray(i * step, (i + 1) * step),
    ]),
  );
}

const packets = (list: Buffer[], track = 0) => list.map((packet) => ({ track, packet }));

describe('keyframePicture', () => {
  it('H.264: STAP-A parameter sets and an FU-A keyframe become one Annex B picture', () => {
    const [a, b, c] = fuA(IDR, 3);
    const picture = keyframePicture(
      h264,
      packets([
        rtp(1, 900, false, aggregate([0x18], [SPS, PPS])),
        rtp(2, 900, false, a!),
        rtp(3, 900, false, b!),
        rtp(4, 900, true, c!),
      ]),
    );
    expect(picture).toMatchObject({ codec: 'H264', annexB: Buffer.from(hex(SPS, PPS, IDR), 'hex') });
  });

  it('H.264: parameter sets from the SDP when the keyframe has none; P-frames before it are passed over', () => {
    const plan = { ...h264, fmtp: new Map([['sprop-parameter-sets', `${b64(SPS)},${b64(PPS)}`]]) };
    const picture = keyframePicture(plan, packets([rtp(1, 0, true, P), rtp(2, 900, true, IDR), rtp(3, 1800, true, P)]));
    expect(picture.annexB.toString('hex')).toBe(hex(SPS, PPS, IDR));
  });

  it('ignores the other tracks (audio) among the cached packets', () => {
    const picture = keyframePicture({ ...h264, track: 1 }, [
      ...packets([rtp(9, 900, true, IDR)], 0),
      ...packets([rtp(1, 900, true, aggregate([0x18], [SPS, PPS, IDR]))], 1),
    ]);
    expect(picture.annexB.toString('hex')).toBe(hex(SPS, PPS, IDR));
  });

  it('H.265: an AP of VPS/SPS/PPS and an FU keyframe', () => {
    const [a, b] = fuH265(IRAP, 2);
    const picture = keyframePicture(
      h265,
      packets([
        rtp(1, 900, false, aggregate([0x60, 0x01], [VPS, HSPS, HPPS])),
        rtp(2, 900, false, a!),
        rtp(3, 900, true, b!),
      ]),
    );
    expect(picture).toMatchObject({ codec: 'H265', annexB: Buffer.from(hex(VPS, HSPS, HPPS, IRAP), 'hex') });
  });

  it('H.265: VPS/SPS/PPS from sprop-vps/sps/pps', () => {
    const plan = {
      ...h265,
      fmtp: new Map([
        ['sprop-vps', b64(VPS)],
        ['sprop-sps', b64(HSPS)],
        ['sprop-pps', b64(HPPS)],
      ]),
    };
    expect(keyframePicture(plan, packets([rtp(1, 900, true, IRAP)])).annexB.toString('hex')).toBe(
      hex(VPS, HSPS, HPPS, IRAP),
    );
  });

  const failures: Array<{ what: string; plan: VideoTrackPlan; list: Buffer[]; failure: string }> = [
    { what: 'no packets', plan: h264, list: [], failure: 'no_keyframe' },
    { what: 'P-frames only', plan: h264, list: [rtp(1, 0, true, P), rtp(2, 900, true, P)], failure: 'no_keyframe' },
    {
      what: 'a keyframe whose last fragment has not come',
      plan: h264,
      list: fuA(IDR, 3)
        .slice(0, 2)
        .map((f, i) => rtp(i + 1, 900, false, f)),
      failure: 'no_keyframe',
    },
    {
      what: 'a keyframe with a lost middle fragment',
      plan: h264,
      list: [rtp(1, 900, false, fuA(IDR, 3)[0]!), rtp(3, 900, true, fuA(IDR, 3)[2]!)],
      failure: 'no_keyframe',
    },
    {
      what: 'a keyframe without SPS/PPS anywhere',
      plan: h264,
      list: [rtp(1, 900, true, IDR)],
      failure: 'no_parameter_sets',
    },
    {
      what: 'an H.265 keyframe without VPS',
      plan: h265,
      list: [rtp(1, 900, false, aggregate([0x60, 0x01], [HSPS, HPPS])), rtp(2, 900, true, IRAP)],
      failure: 'no_parameter_sets',
    },
    {
      what: 'packets shorter than an RTP header',
      plan: h264,
      list: [Buffer.of(0x80, 0x60, 0)],
      failure: 'no_keyframe',
    },
  ];
  it.each(failures)('$what: StillError $failure', ({ plan, list, failure }) => {
    expect(() => keyframePicture(plan, packets(list))).toThrow(StillError);
    try {
      keyframePicture(plan, packets(list));
    } catch (err) {
      expect((err as StillError).failure).toBe(failure);
    }
  });

  it('random, truncated and corrupted packets never throw anything but a StillError (seeded)', () => {
    const rng = makeRng();
    const good = [
      rtp(1, 900, false, aggregate([0x18], [SPS, PPS])),
      ...fuA(IDR, 4).map((f, i) => rtp(i + 2, 900, i === 3, f)),
    ];
    const goodH265 = [
      rtp(1, 900, false, aggregate([0x60, 0x01], [VPS, HSPS, HPPS])),
      ...fuH265(IRAP, 3).map((f, i) => rtp(i + 2, 900, i === 2, f)),
    ];
    let pictures = 0;
    for (let round = 0; round < 3000; round++) {
      const plan = rng.pick([h264, h265, { ...h265, donl: true }]);
      const base = plan.codec === 'H264' ? good : goodH265;
      const list = base.map((p) => {
        const choice = rng.int(5);
        if (choice === 0) return p.subarray(0, rng.int(p.length + 1));
        if (choice === 1) {
          const copy = Buffer.from(p);
          for (let i = 0; i < 1 + rng.int(4); i++) copy[rng.int(copy.length)] = rng.int(256);
          return copy;
        }
        if (choice === 2) return Buffer.concat([p.subarray(0, 12), rng.bytes(64)]);
        return p;
      });
      if (rng.int(4) === 0) list.push(rng.bytes(80));
      try {
        const picture = keyframePicture(plan, packets(list));
        expect(picture.annexB.subarray(0, 4).toString('hex')).toBe(START);
        pictures++;
      } catch (err) {
        if (!(err instanceof StillError)) throw new Error(`seed ${rng.seed}: ${String(err)}`, { cause: err });
      }
    }
    expect(pictures, `seed ${rng.seed}`).toBeGreaterThan(0); // the untouched rounds still make pictures
  });
});

describe('videoPlanOf', () => {
  it("reads the H.264/H.265 track of the relay's SDP", () => {
    const sdp = [
      'v=0',
      'o=- 0 0 IN IP4 127.0.0.1',
      's=-',
      't=0 0',
      'm=audio 0 RTP/AVP 0',
      'a=control:trackID=0',
      'm=video 0 RTP/AVP 96',
      'a=rtpmap:96 H265/90000',
      'a=fmtp:96 sprop-max-don-diff=2',
      'a=control:trackID=1',
      '',
    ].join('\r\n');
    expect(videoPlanOf(sdp)).toMatchObject({ track: 1, codec: 'H265', donl: true });
  });

  it.each([
    ['no video', ['v=0', 'o=- 0 0 IN IP4 127.0.0.1', 's=-', 't=0 0', 'm=audio 0 RTP/AVP 0', ''].join('\r\n')],
    ['not an SDP', 'hello'],
  ])('%s: StillError no_video', (_what, sdp) => {
    expect(() => videoPlanOf(sdp)).toThrow(expect.objectContaining({ failure: 'no_video' }));
  });
});
