import { describe, expect, it } from 'vitest';
import type { CodecMismatchCode } from '../../../src/domain/errors.js';
import { parseSdp, type SdpSession } from '../../../src/media/sdp.js';
import { matchCodecs } from '../../../src/media/webrtc/codec-match.js';
import { CodecMismatchError, OfferError } from '../../../src/media/webrtc/errors.js';
import { decodes, parseProfileLevelId, type H264Profile } from '../../../src/media/webrtc/h264-profile.js';
import { readWebRtcOffer, type WebRtcOffer } from '../../../src/media/webrtc/offer.js';
import { makeRng, mutate } from '../../support/fuzz.js';
import { CHROMIUM_OFFER, FIREFOX_OFFER, SAFARI_OFFER } from './offers.js';

// Camera SDPs as the relay hands them to viewers (sdp.ts's rewrite: trackID controls, no address).
// The sprop SPS are libx264's (main 1920x1080, high 1280x720), as in test/media/sdp.test.ts.
function camera(video: string[], audio: string[] | null = null): SdpSession {
  const lines = ['v=0', 'o=- 1 1 IN IP4 0.0.0.0', 's=-', 't=0 0', 'a=control:*', ...video, 'a=control:trackID=0'];
  if (audio) lines.push(...audio, 'a=control:trackID=1');
  return parseSdp(lines.map((l) => `${l}\r\n`).join(''));
}

const H264_MAIN_HIK = [
  'm=video 0 RTP/AVP 96',
  'a=rtpmap:96 H264/90000',
  'a=fmtp:96 profile-level-id=4D4028; packetization-mode=1; sprop-parameter-sets=Z01AKOygPAET8uAiAAADAAIAAAMAZB4wYyw=,aOvjyyA=',
];
const H264_HIGH = [
  'm=video 0 RTP/AVP 96',
  'a=rtpmap:96 H264/90000',
  'a=fmtp:96 packetization-mode=1;profile-level-id=640028',
];
const H264_CB = [
  'm=video 0 RTP/AVP 96',
  'a=rtpmap:96 H264/90000',
  'a=fmtp:96 packetization-mode=1;profile-level-id=42e01f',
];
const H264_BASELINE = [
  'm=video 0 RTP/AVP 96',
  'a=rtpmap:96 H264/90000',
  'a=fmtp:96 packetization-mode=1;profile-level-id=42001e',
];
// No profile-level-id: the profile comes from the SPS in sprop-parameter-sets (Main, 4.0).
const H264_SPROP_ONLY = [
  'm=video 0 RTP/AVP 96',
  'a=rtpmap:96 H264/90000',
  'a=fmtp:96 packetization-mode=1;sprop-parameter-sets=Z01AKOygPAET8uAiAAADAAIAAAMAZB4wYyw=,aOvjyyA=',
];
const H264_NO_PROFILE = ['m=video 0 RTP/AVP 96', 'a=rtpmap:96 H264/90000', 'a=fmtp:96 packetization-mode=1'];
const H264_MODE0_DEFAULT = ['m=video 0 RTP/AVP 96', 'a=rtpmap:96 H264/90000', 'a=fmtp:96 profile-level-id=4d0029'];
const H264_INTERLEAVED = [
  'm=video 0 RTP/AVP 96',
  'a=rtpmap:96 H264/90000',
  'a=fmtp:96 packetization-mode=2;profile-level-id=4d0029',
];
const H265 = ['m=video 0 RTP/AVP 98', 'a=rtpmap:98 H265/90000', 'a=fmtp:98 profile-id=1;tier-flag=0;level-id=150'];
const H265_DONL = ['m=video 0 RTP/AVP 98', 'a=rtpmap:98 H265/90000', 'a=fmtp:98 profile-id=1;sprop-max-don-diff=2'];
const MJPEG = ['m=video 0 RTP/AVP 26'];
const PCMU = ['m=audio 0 RTP/AVP 0'];
const PCMA = ['m=audio 0 RTP/AVP 8', 'a=rtpmap:8 PCMA/8000'];
const AAC = [
  'm=audio 0 RTP/AVP 97',
  'a=rtpmap:97 MPEG4-GENERIC/16000/1',
  'a=fmtp:97 streamtype=5;profile-level-id=15;mode=AAC-hbr;config=1408;sizelength=13;indexlength=3;indexdeltalength=3',
];

const chromium = (): WebRtcOffer => readWebRtcOffer(CHROMIUM_OFFER);

describe('matchCodecs: the answer passes the camera through', () => {
  it.each([
    // [name, camera video, offer, payload type, profile-level-id in the answer, profile match]
    [
      "Hikvision Main 4.0 → Chromium's Main payload type, the camera's own profile-level-id",
      H264_MAIN_HIK,
      CHROMIUM_OFFER,
      116,
      '4d4028',
      'same',
    ],
    [
      "High 4.0 → Chromium's High 4:4:4 Predictive (no plain High offered; it decodes High)",
      H264_HIGH,
      CHROMIUM_OFFER,
      41,
      '640028',
      'compatible',
    ],
    ['Constrained Baseline → the same profile', H264_CB, CHROMIUM_OFFER, 108, '42e01f', 'same'],
    ['Baseline proper (FMO allowed) → only a Baseline decoder', H264_BASELINE, CHROMIUM_OFFER, 102, '42001e', 'same'],
    ['profile from the sprop SPS when the fmtp has none', H264_SPROP_ONLY, CHROMIUM_OFFER, 116, '4d4028', 'same'],
    [
      'no profile at all → the most capable offered decoder, its profile named',
      H264_NO_PROFILE,
      CHROMIUM_OFFER,
      41,
      'f4001f',
      'assumed',
    ],
    ['a mode 0 camera (single NAL units) goes as mode 1', H264_MODE0_DEFAULT, CHROMIUM_OFFER, 116, '4d0029', 'same'],
    [
      "High → Safari's Constrained High payload type: no decoder offered covers it, the browser is trusted",
      H264_HIGH,
      SAFARI_OFFER,
      98,
      '640028',
      'assumed',
    ],
    [
      "Main → Firefox's Constrained Baseline mode 1 type (never its mode 0 one), trusted",
      H264_MAIN_HIK,
      FIREFOX_OFFER,
      126,
      '4d4028',
      'assumed',
    ],
    [
      "Constrained Baseline → Firefox's mode 1 payload type, not its mode 0 one",
      H264_CB,
      FIREFOX_OFFER,
      126,
      '42e01f',
      'same',
    ],
  ])('%s', (_name, video, offerText, payloadType, profileLevelId, profileMatch) => {
    const choice = matchCodecs(camera(video), readWebRtcOffer(offerText));
    expect(choice.video).toMatchObject({
      encoding: 'H264',
      payloadType,
      cameraTrack: 0,
      offerIndex: 0,
      clockRate: 90000,
      profileMatch,
    });
    expect(choice.video.fmtp).toBe(`level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=${profileLevelId}`);
  });

  it('answers only the feedback it implements (NACK, PLI, FIR), never congestion control', () => {
    const choice = matchCodecs(camera(H264_MAIN_HIK), chromium());
    expect(choice.video.rtcpFeedback).toEqual([
      { type: 'nack', parameter: null },
      { type: 'nack', parameter: 'pli' },
      { type: 'ccm', parameter: 'fir' },
    ]);
    const safariHigh = matchCodecs(camera(H264_HIGH), readWebRtcOffer(SAFARI_OFFER));
    expect(safariHigh.video.rtcpFeedback).toEqual([
      { type: 'nack', parameter: null },
      { type: 'nack', parameter: 'pli' },
    ]);
  });

  it("H.265 where the browser offers it, with the camera's profile, tier and level", () => {
    const choice = matchCodecs(camera(H265), readWebRtcOffer(SAFARI_OFFER));
    expect(choice.video).toMatchObject({ encoding: 'H265', payloadType: 96, mid: '0' });
    expect(choice.video.fmtp).toBe('level-id=150;profile-id=1;tier-flag=0;tx-mode=SRST');
  });

  it.each([
    ['PCMU', PCMU, CHROMIUM_OFFER, 0],
    ['PCMA', PCMA, CHROMIUM_OFFER, 8],
    ['PCMU by static type in Firefox', PCMU, FIREFOX_OFFER, 0],
    ["PCMA in Safari's bundle-only section", PCMA, SAFARI_OFFER, 8],
  ])('G.711 passes through: %s', (_name, audio, offerText, payloadType) => {
    const choice = matchCodecs(camera(H264_MAIN_HIK, audio), readWebRtcOffer(offerText));
    expect(choice.audio).toMatchObject({
      payloadType,
      clockRate: 8000,
      channels: 1,
      cameraTrack: 1,
      offerIndex: 1,
      transcoded: false,
    });
    expect(choice.audioDropped).toBeNull();
  });

  it('drops AAC with the reason, unless the transcoder is on (then Opus from it)', () => {
    const off = matchCodecs(camera(H264_MAIN_HIK, AAC), chromium());
    expect(off.audio).toBeNull();
    expect(off.audioDropped).toMatch(/AAC \(MPEG4-GENERIC\) is not a WebRTC codec and webrtc.audio_transcode is off/);
    const on = matchCodecs(camera(H264_MAIN_HIK, AAC), chromium(), { audioTranscode: true });
    expect(on.audio).toMatchObject({
      encoding: 'OPUS',
      payloadType: 111,
      clockRate: 48000,
      channels: 2,
      transcoded: true,
    });
  });

  it('drops audio the offer does not take, and says why', () => {
    const noPcma = readWebRtcOffer(FIREFOX_OFFER.replace('109 9 0 8 101', '109 9 0 101'));
    expect(matchCodecs(camera(H264_MAIN_HIK, PCMA), noPcma)).toMatchObject({
      audio: null,
      audioDropped: 'the offer has no PCMA/8000',
    });
    const bundleVideo = CHROMIUM_OFFER.replace('a=group:BUNDLE 0 1', 'a=group:BUNDLE 0');
    const videoOnly = readWebRtcOffer(bundleVideo.slice(0, bundleVideo.indexOf('m=audio')));
    expect(matchCodecs(camera(H264_MAIN_HIK, PCMU), videoOnly)).toMatchObject({
      audio: null,
      audioDropped: 'the offer receives no audio',
    });
    expect(matchCodecs(camera(H264_MAIN_HIK), chromium())).toMatchObject({ audio: null, audioDropped: null });
  });
});

describe('matchCodecs: no answer possible', () => {
  const rows: Array<[string, SdpSession, string, CodecMismatchCode, RegExp]> = [
    [
      'H.265 camera, Chromium offers no H.265',
      camera(H265, PCMA),
      CHROMIUM_OFFER,
      'no_common_video_codec',
      /this camera profile sends H\.265 and the browser's offer has no H\.265 \(profile-id 1\), so it cannot be played here: ask for the sub profile \(profile=sub\), usually H\.264; the camera sends H265\/90000 \(video\), PCMA\/8000 \(audio\)/,
    ],
    [
      'H.265 with decoding-order numbers',
      camera(H265_DONL),
      SAFARI_OFFER,
      'no_common_video_codec',
      /sprop-max-don-diff/,
    ],
    [
      'H.264 interleaved mode',
      camera(H264_INTERLEAVED),
      CHROMIUM_OFFER,
      'no_common_video_codec',
      /packetization-mode 2/,
    ],
    [
      'MJPEG',
      camera(MJPEG),
      CHROMIUM_OFFER,
      'no_common_video_codec',
      /JPEG cannot be passed to a browser; the camera sends JPEG\/90000 \(video\)/,
    ],
    [
      'an offer with H.264 in mode 0 only',
      camera(H264_MAIN_HIK),
      CHROMIUM_OFFER.replace(/packetization-mode=1/g, 'packetization-mode=0'),
      'no_common_video_codec',
      /no H\.264 in packetization-mode 1/,
    ],
    [
      'an offer with VP8 and VP9 only',
      camera(H264_MAIN_HIK, PCMU),
      FIREFOX_OFFER.replace('120 124 121 125 126 127 97 98', '120 124 121 125'),
      'no_common_video_codec',
      /the offer has no H\.264 in packetization-mode 1; the camera sends H264\/90000 \(video\), PCMU\/8000 \(audio\)/,
    ],
    [
      'a camera without video',
      camera(PCMU),
      CHROMIUM_OFFER,
      'no_video_from_camera',
      /the camera sends no video \(it sends PCMU\/8000 \(audio\)\)/,
    ],
    [
      'an offer whose video is sendonly',
      camera(H264_MAIN_HIK),
      CHROMIUM_OFFER.replace('a=recvonly', 'a=sendonly'),
      'no_video_in_offer',
      /receives no video/,
    ],
    [
      'an offer whose video section is rejected (port 0, outside BUNDLE)',
      camera(H264_MAIN_HIK),
      CHROMIUM_OFFER.replace('a=group:BUNDLE 0 1', 'a=group:BUNDLE 1').replace('m=video 9 ', 'm=video 0 '),
      'no_video_in_offer',
      /receives no video/,
    ],
  ];

  it.each(rows)('%s → %s', (_name, cam, offerText, code, message) => {
    let caught: unknown;
    try {
      matchCodecs(cam, readWebRtcOffer(offerText));
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(CodecMismatchError);
    expect((caught as CodecMismatchError).code).toBe(code);
    expect((caught as CodecMismatchError).message).toMatch(message);
    expect((caught as CodecMismatchError).cameraCodecs.length).toBe(cam.media.length);
  });
});

describe('H.264 profiles', () => {
  it.each([
    ['42e01f', 'constrained-baseline', 0x1f],
    ['42C02A', 'constrained-baseline', 0x2a],
    ['4de01f', 'constrained-baseline', 0x1f],
    ['58f01f', 'constrained-baseline', 0x1f],
    ['42001f', 'baseline', 0x1f],
    ['58A01F', 'baseline', 0x1f],
    ['58001f', 'extended', 0x1f],
    ['4D4028', 'main', 0x28],
    ['640028', 'high', 0x28],
    ['640c1f', 'constrained-high', 0x1f],
    ['6e0028', 'high-10', 0x28],
    ['7a0028', 'high-422', 0x28],
    ['f4001f', 'high-444', 0x1f],
    ['530028', 'other', 0x28],
  ])('%s is %s', (hex, profile, level) => {
    expect(parseProfileLevelId(hex)).toMatchObject({ profile, levelIdc: level, hex: hex.toLowerCase() });
  });

  it.each(['', '42e01', '42e01fz', 'zze01f', ' 42e01f'])('refuses %j', (value) => {
    expect(parseProfileLevelId(value)).toBeNull();
  });

  it.each([
    ['high', 'main', true],
    ['high', 'constrained-high', true],
    ['main', 'high', false],
    ['main', 'baseline', false],
    ['constrained-baseline', 'main', false],
    ['baseline', 'constrained-baseline', true],
    ['high-444', 'high', true],
    ['other', 'constrained-baseline', false],
  ] as Array<[H264Profile, H264Profile, boolean]>)('a %s decoder takes %s: %s', (decoder, stream, ok) => {
    expect(decodes(decoder, stream)).toBe(ok);
  });
});

describe('matchCodecs fuzz', () => {
  const rng = makeRng();
  const cameras = [
    camera(H264_MAIN_HIK, PCMU),
    camera(H264_HIGH, AAC),
    camera(H264_CB, PCMA),
    camera(H264_NO_PROFILE),
    camera(H265, PCMU),
    camera(MJPEG),
  ];

  it(`fuzz (seed ${rng.seed}): a choice always names offered payload types of the camera's codecs, or the error names the camera's codecs`, () => {
    let chosen = 0;
    let refused = 0;
    for (let i = 0; i < 800; i++) {
      const sample = rng.pick([CHROMIUM_OFFER, FIREFOX_OFFER, SAFARI_OFFER]);
      // Mutations aimed at the codec lines: rtpmap/fmtp/m= values.
      let text = sample;
      for (let k = 0; k < 3; k++) {
        const at = rng.int(text.length);
        text =
          text.slice(0, at) + mutate(rng, text.slice(at, at + 30), 'H2645=;-0123456789abcdef/ ') + text.slice(at + 30);
      }
      let offer: WebRtcOffer;
      try {
        offer = readWebRtcOffer(text);
      } catch (err) {
        if (err instanceof OfferError) continue;
        throw err;
      }
      const cam = rng.pick(cameras);
      const audioTranscode = rng.int(2) === 1;
      try {
        const choice = matchCodecs(cam, offer, { audioTranscode });
        chosen++;
        const video = offer.media[choice.video.offerIndex];
        const offered = video?.codecs.find((c) => c.payloadType === choice.video.payloadType);
        expect(offered?.encoding).toBe(choice.video.encoding);
        expect(cam.media[choice.video.cameraTrack]?.media).toBe('video');
        if (choice.video.encoding === 'H264') expect(offered?.fmtp.get('packetization-mode')).toBe('1');
        if (choice.audio) {
          const audio = offer.media[choice.audio.offerIndex]?.codecs.find(
            (c) => c.payloadType === choice.audio?.payloadType,
          );
          expect(audio?.encoding).toBe(choice.audio.encoding);
        }
      } catch (err) {
        if (!(err instanceof CodecMismatchError))
          throw new Error(`seed ${rng.seed} case ${i}: ${String(err)}`, { cause: err });
        refused++;
        expect(err.cameraCodecs).toHaveLength(cam.media.length);
      }
    }
    expect(chosen).toBeGreaterThan(0);
    expect(refused).toBeGreaterThan(0);
  });
});
