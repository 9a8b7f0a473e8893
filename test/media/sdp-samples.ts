import { SDP_MAX_BYTES, parseSdp, type SdpSession } from '../../src/media/sdp.js';
import { SdpError } from '../../src/media/errors.js';
import { mutate, type Rng } from '../support/fuzz.js';

// Camera SDPs as the vendors lay them out. The parameter sets were made with ffmpeg (libx264 main
// 1920x1080 and 2688x1520, high 1280x720; libx265 2560x1440) so the SPS reader has real input.

export const crlf = (lines: string[]): string => lines.map((l) => `${l}\r\n`).join('');

export const HIK_PASSWORD = 'Hik!Secret9';
export const HIKVISION = crlf([
  'v=0',
  'o=- 1700000000000000 1700000000000000 IN IP4 192.168.1.64',
  's=Media Presentation',
  'e=NONE',
  'b=AS:5100',
  't=0 0',
  `a=control:rtsp://admin:${HIK_PASSWORD}@192.168.1.64:554/Streaming/Channels/101/`,
  `a=x-onvif-backchannel:rtsp://admin:${HIK_PASSWORD}@192.168.1.64:554/Streaming/Channels/101/backchannel`,
  'm=video 0 RTP/AVP 96',
  'c=IN IP4 0.0.0.0',
  'b=AS:5000',
  'a=recvonly',
  'a=x-dimensions:1920,1080',
  `a=control:rtsp://admin:${HIK_PASSWORD}@192.168.1.64:554/Streaming/Channels/101/trackID=1`,
  'a=rtpmap:96 H264/90000',
  'a=fmtp:96 profile-level-id=4D4028; packetization-mode=1; sprop-parameter-sets=Z01AKOygPAET8uAiAAADAAIAAAMAZB4wYyw=,aOvjyyA=',
  'a=Media_header:MEDIAINFO=494D4B48010200000400000100000000000000000000000000000000000000000000000000000000;',
  'a=appversion:1.0',
  'm=audio 0 RTP/AVP 0',
  'c=IN IP4 0.0.0.0',
  'b=AS:50',
  'a=recvonly',
  `a=control:rtsp://admin:${HIK_PASSWORD}@192.168.1.64:554/Streaming/Channels/101/trackID=2`,
  'a=rtpmap:0 PCMU/8000',
  'a=Media_header:MEDIAINFO=494D4B48010200000400000100000000000000000000000000000000000000000000000000000000;',
  'a=appversion:1.0',
]);

// LF line ends and trailing blanks, as some Dahua firmware sends them.
export const DAHUA = [
  'v=0',
  'o=- 2251938202 2251938202 IN IP4 192.168.1.108',
  's=Media Server  ',
  'c=IN IP4 0.0.0.0',
  't=0 0\t',
  'a=control:*',
  'a=packetization-supported:DH',
  'a=rtppayload-supported:DH',
  'a=range:npt=now-',
  'm=video 0 RTP/AVP 96',
  'a=control:trackID=0',
  'a=framerate:25.000000 ',
  'a=rtpmap:96 H264/90000',
  'a=fmtp:96 packetization-mode=1;profile-level-id=4D4032;sprop-parameter-sets=Z01AMuygFQBf2AiAAAADAIAAABkHjBjL,aOvjyyA=',
  'a=recvonly',
  'm=audio 0 RTP/AVP 8',
  'a=control:trackID=1',
  'a=rtpmap:8 PCMA/8000',
  'a=recvonly',
  'm=application 0 RTP/AVP 107',
  'a=control:trackID=4',
  'a=rtpmap:107 vnd.onvif.metadata/90000',
  'a=recvonly',
  '',
].join('\n');

export const H265 = crlf([
  'v=0',
  'o=- 1699999999 1 IN IP4 10.20.30.40',
  's=H.265 Video, streamed by the LIVE555 Media Server',
  'i=h265Preview_01_main',
  'e=support@vendor.example',
  'p=+1 555 0100',
  't=0 0',
  'a=tool:LIVE555 Streaming Media v2020.08.19',
  'a=type:broadcast',
  'a=control:*',
  'a=range:npt=0-',
  'a=x-qt-text-nam:H.265 Video, streamed by the LIVE555 Media Server',
  'm=video 0 RTP/AVP 96',
  'c=IN IP4 10.20.30.40',
  'b=AS:500',
  'a=rtpmap:96 H265/90000',
  'a=fmtp:96 profile-space=0;profile-id=1;tier-flag=0;level-id=150;sprop-vps=QAEMAf//AWAAAAMAkAAAAwAAAwCWlZgJ;sprop-sps=QgEBAWAAAAMAkAAAAwAAAwCWoAFAIAWhZZWaSTK8BaAgAAADACAAAAMDIQ==;sprop-pps=RAHBcrRiQA==',
  'a=control:track1',
  'm=audio 0 RTP/AVP 97',
  'c=IN IP4 10.20.30.40',
  'b=AS:256',
  'a=rtpmap:97 MPEG4-GENERIC/16000/1',
  'a=fmtp:97 streamtype=5;profile-level-id=1;mode=AAC-hbr;sizelength=13;indexlength=3;indexdeltalength=3;config=1408',
  'a=control:track2',
]);

export const AXIS_PASSWORD = 'AxisPass77';
export const AXIS_URL = `rtsp://root:${AXIS_PASSWORD}@cam/axis-media/media.amp`;
export const AXIS = crlf([
  'v=0',
  'o=- 18133686376402155478 1 IN IP4 192.168.0.90',
  's=Session streamed with GStreamer',
  'i=rtsp-server',
  `u=${AXIS_URL}`,
  't=0 0',
  'a=tool:GStreamer',
  'a=type:broadcast',
  'a=range:npt=now-',
  `a=control:${AXIS_URL}?videocodec=h264&resolution=1280x720`,
  'm=video 0 RTP/AVP 96',
  'c=IN IP4 0.0.0.0',
  'b=AS:50000',
  'a=rtpmap:96 H264/90000',
  'a=fmtp:96 packetization-mode=1;profile-level-id=64001f;sprop-parameter-sets=Z2QAH6zZQFAFuwEQAAADABAAAAMDwPGDGWA=,aOvjyyLA',
  'a=ts-refclk:local',
  'a=mediaclk:sender',
  'a=recvonly',
  `a=control:${AXIS_URL}/stream=0?videocodec=h264&resolution=1280x720`,
  'a=framerate:30.000000',
  'a=transform:1.000000,0.000000,0.000000;0.000000,1.000000,0.000000;0.000000,0.000000,1.000000',
  'm=application 0 RTP/AVP 98',
  'c=IN IP4 0.0.0.0',
  'a=rtpmap:98 vnd.onvif.metadata/90000',
  'a=recvonly',
  `a=control:${AXIS_URL}/stream=1?videocodec=h264&resolution=1280x720`,
]);

export interface Sample {
  name: string;
  text: string;
  secrets: string[];
  /** Host names that must not appear as a whole word. */
  hosts: string[];
  codecs: Array<{ media: string; payloadType: number; encoding: string; clockRate: number; channels: number | null }>;
  controls: Array<string | null>;
  sessionControl: string | null;
  vendorLines: string[];
  size?: { width: number; height: number };
}

export const SAMPLES: Sample[] = [
  {
    name: 'Hikvision-like: absolute controls with credentials, PCMU audio',
    text: HIKVISION,
    secrets: [HIK_PASSWORD, 'admin:', '192.168.1.64'],
    hosts: [],
    codecs: [
      { media: 'video', payloadType: 96, encoding: 'H264', clockRate: 90000, channels: null },
      { media: 'audio', payloadType: 0, encoding: 'PCMU', clockRate: 8000, channels: 1 },
    ],
    controls: [
      `rtsp://admin:${HIK_PASSWORD}@192.168.1.64:554/Streaming/Channels/101/trackID=1`,
      `rtsp://admin:${HIK_PASSWORD}@192.168.1.64:554/Streaming/Channels/101/trackID=2`,
    ],
    sessionControl: `rtsp://admin:${HIK_PASSWORD}@192.168.1.64:554/Streaming/Channels/101/`,
    vendorLines: ['a=x-dimensions:1920,1080', 'a=Media_header:MEDIAINFO=494D4B48', 'a=appversion:1.0', 'b=AS:5100'],
    size: { width: 1920, height: 1080 },
  },
  {
    name: 'Dahua-like: relative controls, LF line ends, PCMA and ONVIF metadata',
    text: DAHUA,
    secrets: ['192.168.1.108'],
    hosts: [],
    codecs: [
      { media: 'video', payloadType: 96, encoding: 'H264', clockRate: 90000, channels: null },
      { media: 'audio', payloadType: 8, encoding: 'PCMA', clockRate: 8000, channels: 1 },
      { media: 'application', payloadType: 107, encoding: 'VND.ONVIF.METADATA', clockRate: 90000, channels: null },
    ],
    controls: ['trackID=0', 'trackID=1', 'trackID=4'],
    sessionControl: '*',
    vendorLines: ['a=packetization-supported:DH', 'a=rtppayload-supported:DH', 'a=framerate:25.000000'],
    size: { width: 2688, height: 1520 },
  },
  {
    name: 'H.265 with sprop-vps/sps/pps and AAC',
    text: H265,
    secrets: ['10.20.30.40', 'support@vendor.example', '555 0100', 'LIVE555 Streaming Media'],
    hosts: [],
    codecs: [
      { media: 'video', payloadType: 96, encoding: 'H265', clockRate: 90000, channels: null },
      { media: 'audio', payloadType: 97, encoding: 'MPEG4-GENERIC', clockRate: 16000, channels: 1 },
    ],
    controls: ['track1', 'track2'],
    sessionControl: '*',
    vendorLines: ['i=h265Preview_01_main', 'a=x-qt-text-nam:H.265 Video', 'b=AS:256'],
  },
  {
    name: 'Axis-like: session control, u= line, query-string URLs',
    text: AXIS,
    secrets: [AXIS_PASSWORD, 'root:', '192.168.0.90', 'axis-media'],
    hosts: ['cam'],
    codecs: [
      { media: 'video', payloadType: 96, encoding: 'H264', clockRate: 90000, channels: null },
      { media: 'application', payloadType: 98, encoding: 'VND.ONVIF.METADATA', clockRate: 90000, channels: null },
    ],
    controls: [
      `${AXIS_URL}/stream=0?videocodec=h264&resolution=1280x720`,
      `${AXIS_URL}/stream=1?videocodec=h264&resolution=1280x720`,
    ],
    sessionControl: `${AXIS_URL}?videocodec=h264&resolution=1280x720`,
    vendorLines: ['a=transform:1.000000', 'a=ts-refclk:local', 'a=mediaclk:sender', 'i=rtsp-server'],
    size: { width: 1280, height: 720 },
  },
];

// What the fuzz tests of the model and of the relay's rewrite feed them.

export const SDP_FUZZ_ALPHABET = 'vosmcatbu=:/@ \t\r\n\0*-.;,0123456789éRTP/AVPrtsp://rtpmap fmtp control\uFEFF\u3000';

/** 3000 camera SDPs with a few characters flipped, inserted, dropped or doubled. */
export function mutatedSdps(rng: Rng): string[] {
  return Array.from({ length: 3000 }, () => mutate(rng, rng.pick(SAMPLES).text, SDP_FUZZ_ALPHABET));
}

/** 1000 pairs of random bytes and of random lines after v=0. */
export function randomSdps(rng: Rng): Array<string | Buffer> {
  const out: Array<string | Buffer> = [];
  for (let i = 0; i < 1000; i++) out.push(rng.bytes(400), `v=0\n${rng.string(300, SDP_FUZZ_ALPHABET)}`);
  return out;
}

/** Inputs that would take minutes if any pattern were quadratic. */
export const BACKTRACKING_SDPS = [
  'a'.repeat(60_000),
  ' '.repeat(60_000) + 'x',
  `a=${'rtsp:'.repeat(12_000)}`,
  `a=${'://@'.repeat(15_000)}`,
  `a=x:${'.'.repeat(60_000)}x`,
].map((run) => `v=0\r\no=- 1 1 IN IP4 h${run.slice(0, 10)}\r\nx=${run}\r\n`.slice(0, SDP_MAX_BYTES));

/** The model of a fuzz input, or null when parseSdp refused it with an SdpError; any other error is thrown. */
export function parsedOrRefused(input: string | Buffer): SdpSession | null {
  try {
    return parseSdp(input);
  } catch (err) {
    if (err instanceof SdpError) return null;
    throw err;
  }
}
