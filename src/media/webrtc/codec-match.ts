// Which of a browser's offered payload types carries each of the camera's tracks, passed through
// as RTP (no decode, no encode): H.264 in packetization mode 1 on a payload type whose profile
// decodes the camera's, H.265 when the offer has it, G.711 as it comes, Opus only from the optional
// AAC transcoder. Video is required; audio that cannot go is dropped with the reason.

import { parseH264Sps, parseSpropParameterSets } from '../h26x.js';
import { mediaCodecs, type MediaCodec, type SdpFmtp, type SdpSession } from '../sdp.js';
import { decodes, parseProfileLevelId, profileLevel, type H264ProfileLevel } from './h264-profile.js';
import { CodecMismatchError } from './errors.js';
import type { OfferCodec, OfferMedia, RtcpFeedback, WebRtcOffer } from './offer.js';

/**
 * How the chosen payload type's profile relates to the camera's: the same, one whose decoder takes
 * it (H.264 Annex A), or neither (or the camera's is unknown) and the browser is trusted to decode
 * it anyway, which the session logs.
 */
export type ProfileMatch = 'same' | 'compatible' | 'assumed';

export interface VideoChoice {
  readonly mid: string;
  /** Index of the offer's media section. */
  readonly offerIndex: number;
  /** Index of the camera's track (its media section in the relay's SDP). */
  readonly cameraTrack: number;
  readonly encoding: 'H264' | 'H265';
  /** The offer's payload type the packets are sent with. */
  readonly payloadType: number;
  readonly clockRate: 90000;
  /** The answer's fmtp value: the camera's own parameters. */
  readonly fmtp: string;
  readonly profileMatch: ProfileMatch;
  /** The offered feedback this gateway answers (NACK, PLI, FIR); no congestion control on a copy. */
  readonly rtcpFeedback: readonly RtcpFeedback[];
}

export interface AudioChoice {
  readonly mid: string;
  readonly offerIndex: number;
  readonly cameraTrack: number;
  readonly encoding: 'PCMU' | 'PCMA' | 'OPUS';
  readonly payloadType: number;
  readonly clockRate: number;
  readonly channels: number;
  /** True when the packets come from the AAC→Opus transcoder, not the camera. */
  readonly transcoded: boolean;
}

export interface CodecChoice {
  readonly video: VideoChoice;
  readonly audio: AudioChoice | null;
  /** Why the camera's audio is not sent; null when it is, or the camera has none. */
  readonly audioDropped: string | null;
}

export interface CodecMatchOptions {
  /** `webrtc.audio_transcode`: AAC becomes Opus in an ffmpeg of its own. */
  readonly audioTranscode?: boolean;
}

/** Feedback the session implements: retransmission from its buffer, keyframe requests. */
const ANSWERED_FEEDBACK: ReadonlyArray<RtcpFeedback> = [
  { type: 'nack', parameter: null },
  { type: 'nack', parameter: 'pli' },
  { type: 'ccm', parameter: 'fir' },
];

const G711: readonly string[] = ['PCMU', 'PCMA'];

export function matchCodecs(camera: SdpSession, offer: WebRtcOffer, opts: CodecMatchOptions = {}): CodecChoice {
  const tracks = mediaCodecs(camera);
  const names = tracks.map(describeTrack);
  const video = tracks.find((t) => t.media === 'video');
  if (!video)
    throw new CodecMismatchError('no_video_from_camera', names, `the camera sends no video (it sends ${list(names)})`);
  const offered = usableSections(offer);
  const videoSection = offered.find((m) => m.kind === 'video');
  if (!videoSection)
    throw new CodecMismatchError(
      'no_video_in_offer',
      names,
      'the offer receives no video: add a recvonly video transceiver',
    );

  const videoChoice = chooseVideo(video, videoSection);
  if (typeof videoChoice === 'string') {
    throw new CodecMismatchError('no_common_video_codec', names, `${videoChoice}; the camera sends ${list(names)}`);
  }

  const audio = tracks.find((t) => t.media === 'audio');
  if (!audio) return { video: videoChoice, audio: null, audioDropped: null };
  const audioSection = offered.find((m) => m.kind === 'audio');
  if (!audioSection) return { video: videoChoice, audio: null, audioDropped: 'the offer receives no audio' };
  const audioChoice = chooseAudio(audio, audioSection, opts);
  return typeof audioChoice === 'string'
    ? { video: videoChoice, audio: null, audioDropped: audioChoice }
    : { video: videoChoice, audio: audioChoice, audioDropped: null };
}

/** The offer's sections that want media from us; a rejected one (port 0 outside BUNDLE) is not. */
function usableSections(offer: WebRtcOffer): OfferMedia[] {
  return offer.media.filter(
    (m) => (m.port !== 0 || offer.bundle.includes(m.mid)) && (m.direction === 'recvonly' || m.direction === 'sendrecv'),
  );
}

function chooseVideo(track: MediaCodec, section: OfferMedia): VideoChoice | string {
  if (track.encoding === 'H264') return chooseH264(track, section);
  if (track.encoding === 'H265') return chooseH265(track, section);
  return `${track.encoding ?? 'an unknown codec'} cannot be passed to a browser`;
}

function chooseH264(track: MediaCodec, section: OfferMedia): VideoChoice | string {
  const mode = track.fmtp.get('packetization-mode') ?? '0';
  // Mode 2 (interleaved) packets have a DON in front that no browser reads; 0 and 1 pass as mode 1.
  if (mode !== '0' && mode !== '1')
    return `the camera's H.264 uses packetization-mode ${mode}, which browsers do not take`;
  const offered = section.codecs
    .filter((c) => c.encoding === 'H264' && c.clockRate === 90000 && c.fmtp.get('packetization-mode') === '1')
    .map((codec) => ({ codec, profile: offeredProfile(codec) }));
  const camera = cameraProfile(track.fmtp);
  const best = [...offered].sort((a, b) => rank(b.profile) - rank(a.profile))[0];
  if (!best) return 'the offer has no H.264 in packetization-mode 1';
  if (!camera) {
    // Profile unknown (no profile-level-id, no usable SPS): the most capable offered decoder.
    return videoChoice(section, track, 'H264', best.codec, h264Fmtp(best.profile), 'assumed');
  }
  const same = offered.find((o) => o.profile.profile === camera.profile);
  if (same) return videoChoice(section, track, 'H264', same.codec, h264Fmtp(camera), 'same');
  const covering = offered.find((o) => decodes(o.profile.profile, camera.profile));
  if (covering) return videoChoice(section, track, 'H264', covering.codec, h264Fmtp(camera), 'compatible');
  // Browsers decode every profile whatever they offer (Chromium 156 offers no plain High, Firefox
  // and Safari may offer only Constrained Baseline/High); the camera's profile is named faithfully.
  return videoChoice(section, track, 'H264', best.codec, h264Fmtp(camera), 'assumed');
}

/** Levels are not compared: browsers offer fixed levels (3.1 for most profiles) and decode any. */
function h264Fmtp(profile: H264ProfileLevel): string {
  return `level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=${profile.hex}`;
}

function chooseH265(track: MediaCodec, section: OfferMedia): VideoChoice | string {
  const don = track.fmtp.get('sprop-max-don-diff');
  if (don !== undefined && don !== '0')
    return "the camera's H.265 carries decoding-order numbers (sprop-max-don-diff), which browsers do not take";
  const profileId = track.fmtp.get('profile-id') ?? '1';
  const chosen = section.codecs.find(
    (c) =>
      c.encoding === 'H265' &&
      c.clockRate === 90000 &&
      (c.fmtp.get('profile-id') ?? '1') === profileId &&
      (c.fmtp.get('tx-mode') ?? 'SRST').toUpperCase() === 'SRST',
  );
  if (!chosen)
    return `this camera profile sends H.265 and the browser's offer has no H.265 (profile-id ${profileId}), so it cannot be played here: ask for the sub profile (profile=sub), usually H.264`;
  const fmtp = [
    `level-id=${track.fmtp.get('level-id') ?? '93'}`,
    `profile-id=${profileId}`,
    `tier-flag=${track.fmtp.get('tier-flag') ?? '0'}`,
    'tx-mode=SRST',
  ].join(';');
  return videoChoice(section, track, 'H265', chosen, fmtp, 'same');
}

function videoChoice(
  section: OfferMedia,
  track: MediaCodec,
  encoding: 'H264' | 'H265',
  codec: OfferCodec,
  fmtp: string,
  profileMatch: ProfileMatch,
): VideoChoice {
  return {
    ...placement(section, track, codec),
    encoding,
    clockRate: 90000,
    fmtp,
    profileMatch,
    rtcpFeedback: ANSWERED_FEEDBACK.filter((f) =>
      codec.rtcpFeedback.some((o) => o.type === f.type && o.parameter === f.parameter),
    ),
  };
}

function chooseAudio(track: MediaCodec, section: OfferMedia, opts: CodecMatchOptions): AudioChoice | string {
  const encoding = track.encoding ?? 'unknown';
  if (G711.includes(encoding)) {
    const codec = section.codecs.find(
      (c) => c.encoding === encoding && c.clockRate === 8000 && (c.channels ?? 1) === 1,
    );
    if (!codec) return `the offer has no ${encoding}/8000`;
    return audioChoice(section, track, encoding as 'PCMU' | 'PCMA', codec, false);
  }
  const aac = encoding === 'MPEG4-GENERIC' || encoding === 'MP4A-LATM';
  if (encoding === 'OPUS' || (aac && opts.audioTranscode === true)) {
    const codec = section.codecs.find((c) => c.encoding === 'OPUS' && c.clockRate === 48000 && c.channels === 2);
    if (!codec) return 'the offer has no opus/48000/2';
    return audioChoice(section, track, 'OPUS', codec, aac);
  }
  if (aac) return `AAC (${encoding}) is not a WebRTC codec and webrtc.audio_transcode is off`;
  return `${encoding} audio cannot be passed to a browser`;
}

function audioChoice(
  section: OfferMedia,
  track: MediaCodec,
  encoding: AudioChoice['encoding'],
  codec: OfferCodec,
  transcoded: boolean,
): AudioChoice {
  return {
    ...placement(section, track, codec),
    encoding,
    clockRate: codec.clockRate,
    channels: codec.channels ?? 1,
    transcoded,
  };
}

/** Where a camera track goes: which offered section, with which of its payload types. */
function placement(
  section: OfferMedia,
  track: MediaCodec,
  codec: OfferCodec,
): Pick<VideoChoice, 'mid' | 'offerIndex' | 'cameraTrack' | 'payloadType'> {
  return { mid: section.mid, offerIndex: section.index, cameraTrack: track.index, payloadType: codec.payloadType };
}

/** The camera's H.264 profile: its fmtp says, else the SPS in sprop-parameter-sets. */
function cameraProfile(fmtp: SdpFmtp): H264ProfileLevel | null {
  const declared = parseProfileLevelId(fmtp.get('profile-level-id') ?? '');
  if (declared) return declared;
  for (const unit of parseSpropParameterSets(fmtp).sps) {
    const sps = parseH264Sps(unit);
    if (sps) return profileLevel(sps.profileIdc, sps.constraintFlags, sps.levelIdc);
  }
  return null;
}

/** RFC 6184: an H.264 payload type without profile-level-id is 42000a (baseline, level 1). */
function offeredProfile(codec: OfferCodec): H264ProfileLevel {
  return parseProfileLevelId(codec.fmtp.get('profile-level-id') ?? '') ?? profileLevel(0x42, 0x00, 0x0a);
}

function rank(p: H264ProfileLevel): number {
  const order = [
    'other',
    'constrained-baseline',
    'baseline',
    'extended',
    'main',
    'constrained-high',
    'high',
    'high-10',
    'high-422',
    'high-444',
  ];
  return order.indexOf(p.profile);
}

function describeTrack(t: MediaCodec): string {
  return `${t.encoding ?? 'unknown'}${t.clockRate === null ? '' : `/${t.clockRate}`} (${t.media})`;
}

function list(names: readonly string[]): string {
  return names.length === 0 ? 'nothing' : names.join(', ');
}
