// RTSP traffic as real peers send it. The ffmpeg and GStreamer texts were captured byte for byte
// (through a logging TCP proxy) from ffprobe/ffmpeg 5.1 (Lavf59.27.100) and gst-launch-1.0
// rtspsrc 1.22 talking to gst-rtsp-server 1.22 with Digest authentication, user admin, password
// open-sesame, over TCP-interleaved and UDP transports. The VLC texts follow live555's
// RTSPClient output format (VLC was not at hand to capture; its digest responses are
// placeholders, not real digests), and the camera 401s follow what Hikvision-style and RFC 7616
// cameras send.

import { RtspParseError } from '../../../src/media/rtsp/errors.js';

export const msg = (...lines: string[]): string => `${lines.join('\r\n')}\r\n\r\n`;

const FF_AUTH = (nonce: string, uri: string, response: string): string =>
  `Authorization: Digest username="admin", realm="GStreamer RTSP Server", nonce="${nonce}", uri="${uri}", response="${response}"`;

/** ffprobe -rtsp_transport tcp, then the UDP run's SETUP, then ffmpeg's keep-alive (session timeout 4 s). */
export const FFMPEG_REQUESTS = [
  msg('OPTIONS rtsp://127.0.0.1:8655/cam0/main RTSP/1.0', 'CSeq: 1', 'User-Agent: Lavf59.27.100'),
  msg(
    'DESCRIBE rtsp://127.0.0.1:8655/cam0/main RTSP/1.0',
    'Accept: application/sdp',
    'CSeq: 2',
    'User-Agent: Lavf59.27.100',
  ),
  msg(
    'DESCRIBE rtsp://127.0.0.1:8655/cam0/main RTSP/1.0',
    'Accept: application/sdp',
    'CSeq: 3',
    'User-Agent: Lavf59.27.100',
    FF_AUTH('10b28241154eb10f', 'rtsp://127.0.0.1:8655/cam0/main', '46dd17e747f2df50d65b244ac6c45fae'),
  ),
  msg(
    'SETUP rtsp://127.0.0.1:8655/cam0/main/stream=0 RTSP/1.0',
    'Transport: RTP/AVP/TCP;unicast;interleaved=0-1',
    'CSeq: 4',
    'User-Agent: Lavf59.27.100',
    FF_AUTH('10b28241154eb10f', 'rtsp://127.0.0.1:8655/cam0/main/stream=0', '1819ce3045ddcbcc5f54e98156d778fe'),
  ),
  msg(
    'SETUP rtsp://127.0.0.1:8655/cam0/main/stream=0 RTSP/1.0',
    'Transport: RTP/AVP/UDP;unicast;client_port=19282-19283',
    'CSeq: 4',
    'User-Agent: Lavf59.27.100',
    FF_AUTH('8adae25c6af01fd0', 'rtsp://127.0.0.1:8655/cam0/main/stream=0', '3f8ed7322eab17bac3c1bd295aee9110'),
  ),
  msg(
    'PLAY rtsp://127.0.0.1:8655/cam0/main/ RTSP/1.0',
    'Range: npt=0.000-',
    'CSeq: 5',
    'User-Agent: Lavf59.27.100',
    'Session: xKSdjQVQC-+PL71g',
    FF_AUTH('10b28241154eb10f', 'rtsp://127.0.0.1:8655/cam0/main/', 'f296f510ad5e26e1f906815b70c10b01'),
  ),
  msg(
    'GET_PARAMETER rtsp://127.0.0.1:8656/cam0/main/ RTSP/1.0',
    'CSeq: 6',
    'User-Agent: Lavf59.27.100',
    'Session: CW94n65.XzNMvqUG',
    FF_AUTH('d794937a2f820a4b', 'rtsp://127.0.0.1:8656/cam0/main/', 'ade9f30a9e3da59933c6a6bef9ab5bac'),
  ),
  msg(
    'TEARDOWN rtsp://127.0.0.1:8655/cam0/main/ RTSP/1.0',
    'CSeq: 6',
    'User-Agent: Lavf59.27.100',
    'Session: xKSdjQVQC-+PL71g',
    FF_AUTH('10b28241154eb10f', 'rtsp://127.0.0.1:8655/cam0/main/', '2fc9cc6ec3bf539543fa76326c5cb05d'),
  ),
];

const GST_AUTH = (nonce: string, uri: string, response: string): string =>
  `Authorization: Digest username="admin", realm="GStreamer RTSP Server", nonce="${nonce}", uri="${uri}", response="${response}"`;

/** gst-launch-1.0 rtspsrc protocols=udp (and its TCP run's SETUP): note the two User-Agent fields. */
export const GSTREAMER_REQUESTS = [
  msg(
    'OPTIONS rtsp://127.0.0.1:8658/cam0/main RTSP/1.0',
    'CSeq: 1',
    'User-Agent: GStreamer/1.22.0',
    'User-Agent: RealMedia Player Version 6.0.9.1235 (linux-2.0-libc6-i386-gcc2.95)',
    'ClientChallenge: 9e26d33f2984236010ef6253fb1887f7',
    'CompanyID: KnKV4M4I/B2FjJ1TToLycw==',
    'GUID: 00000000-0000-0000-0000-000000000000',
    'RegionData: 0',
    'PlayerStarttime: [28/03/2003:22:50:23 00:00]',
    'ClientID: Linux_2.4_6.0.9.1235_play32_RN01_EN_586',
    'Date: Sun, 22 Nov 2026 01:48:43 GMT',
  ),
  msg(
    'DESCRIBE rtsp://127.0.0.1:8658/cam0/main RTSP/1.0',
    'CSeq: 2',
    'User-Agent: GStreamer/1.22.0',
    'Accept: application/sdp',
    'Date: Sun, 22 Nov 2026 01:48:43 GMT',
  ),
  msg(
    'DESCRIBE rtsp://127.0.0.1:8658/cam0/main RTSP/1.0',
    'CSeq: 3',
    'User-Agent: GStreamer/1.22.0',
    'Accept: application/sdp',
    GST_AUTH('2b337a10d82da826', 'rtsp://127.0.0.1:8658/cam0/main', 'bb0f928dc561b82ea9d885aa321b4621'),
    'Date: Sun, 22 Nov 2026 01:48:43 GMT',
  ),
  msg(
    'SETUP rtsp://127.0.0.1:8658/cam0/main/stream=0 RTSP/1.0',
    'CSeq: 4',
    'User-Agent: GStreamer/1.22.0',
    'Transport: RTP/AVP;unicast;client_port=52720-52721',
    GST_AUTH('2b337a10d82da826', 'rtsp://127.0.0.1:8658/cam0/main/stream=0', '2037ead74e83b5681be5eee776ed1f02'),
    'Date: Sun, 22 Nov 2026 01:48:44 GMT',
  ),
  msg(
    'SETUP rtsp://127.0.0.1:8657/cam0/main/stream=0 RTSP/1.0',
    'CSeq: 4',
    'User-Agent: GStreamer/1.22.0',
    'Transport: RTP/AVP/TCP;unicast;interleaved=0-1',
    GST_AUTH('248ebfee287a17b3', 'rtsp://127.0.0.1:8657/cam0/main/stream=0', '33ca740f3af2b5b88a57c9fad6c38d2e'),
    'Date: Sun, 22 Nov 2026 01:48:35 GMT',
  ),
  msg(
    'PLAY rtsp://127.0.0.1:8658/cam0/main/ RTSP/1.0',
    'CSeq: 5',
    'User-Agent: GStreamer/1.22.0',
    'Range: npt=now-',
    'Session: PzxqByep2_xJqgtB',
    GST_AUTH('2b337a10d82da826', 'rtsp://127.0.0.1:8658/cam0/main/', '42ad26c62b1ef47a44b81d97eb1067c8'),
    'Date: Sun, 22 Nov 2026 01:48:44 GMT',
  ),
  msg(
    'GET_PARAMETER rtsp://127.0.0.1:8658/cam0/main/ RTSP/1.0',
    'CSeq: 6',
    'User-Agent: GStreamer/1.22.0',
    'Session: PzxqByep2_xJqgtB',
    GST_AUTH('2b337a10d82da826', 'rtsp://127.0.0.1:8658/cam0/main/', 'b61fa0642e38529d6898c303922aeb60'),
    'Date: Sun, 22 Nov 2026 01:48:47 GMT',
  ),
];

const VLC_UA = 'User-Agent: LibVLC/3.0.20 (LIVE555 Streaming Media v2022.12.01)';
const VLC_URL = 'rtsp://192.168.1.64:554/Streaming/Channels/101';
const VLC_AUTH = (uri: string, response: string): string =>
  `Authorization: Digest username="admin", realm="IP Camera(C6934)", nonce="8ef6b7c5a1e03b2d4f1c7a9e0d3b5f61", uri="${uri}", response="${response}"`;

/** live555 field order: CSeq, Authorization, User-Agent, then the method's own fields. */
export const VLC_REQUESTS = [
  msg(`OPTIONS ${VLC_URL} RTSP/1.0`, 'CSeq: 2', VLC_UA),
  msg(`DESCRIBE ${VLC_URL} RTSP/1.0`, 'CSeq: 3', VLC_UA, 'Accept: application/sdp'),
  msg(
    `DESCRIBE ${VLC_URL} RTSP/1.0`,
    'CSeq: 4',
    VLC_AUTH(VLC_URL, '1c8ab1f8a8b0e4d3c2f6a9e7b5d40213'),
    VLC_UA,
    'Accept: application/sdp',
  ),
  msg(
    `SETUP ${VLC_URL}/trackID=1 RTSP/1.0`,
    'CSeq: 5',
    VLC_AUTH(`${VLC_URL}/trackID=1`, '0b7a5e3c9d1f24680ace13579bdf2468'),
    VLC_UA,
    'Transport: RTP/AVP;unicast;client_port=50952-50953',
  ),
  msg(
    `SETUP ${VLC_URL}/trackID=2 RTSP/1.0`,
    'CSeq: 6',
    VLC_AUTH(`${VLC_URL}/trackID=2`, 'f0e1d2c3b4a5968778695a4b3c2d1e0f'),
    VLC_UA,
    'Transport: RTP/AVP/TCP;unicast;interleaved=2-3',
    'Session: 1617409785',
  ),
  msg(
    `PLAY ${VLC_URL}/ RTSP/1.0`,
    'CSeq: 7',
    VLC_AUTH(`${VLC_URL}/`, '99aa88bb77cc66dd55ee44ff33001122'),
    VLC_UA,
    'Session: 1617409785',
    'Range: npt=0.000-',
  ),
  msg(
    `GET_PARAMETER ${VLC_URL}/ RTSP/1.0`,
    'CSeq: 8',
    VLC_AUTH(`${VLC_URL}/`, '0123456789abcdef0123456789abcdef'),
    VLC_UA,
    'Session: 1617409785',
  ),
  msg(
    `TEARDOWN ${VLC_URL}/ RTSP/1.0`,
    'CSeq: 9',
    VLC_AUTH(`${VLC_URL}/`, 'fedcba9876543210fedcba9876543210'),
    VLC_UA,
    'Session: 1617409785',
  ),
];

export const SDP_BODY = [
  'v=0',
  'o=- 9223406687001954612 1 IN IP4 127.0.0.1',
  's=Session streamed with GStreamer',
  'i=rtsp-server',
  't=0 0',
  'a=tool:GStreamer',
  'a=type:broadcast',
  'a=control:*',
  'a=range:npt=now-',
  'm=video 0 RTP/AVP 96',
  'c=IN IP4 0.0.0.0',
  'a=rtpmap:96 H264/90000',
  'a=framerate:10',
  'a=fmtp:96 packetization-mode=1;sprop-parameter-sets=Z/QAC5GWgUH7ARAAAAMAEAAAAwFI8UKq,aM4PGSA=;profile-level-id=f4000b;level-asymmetry-allowed=1',
  'a=control:stream=0',
  'a=ts-refclk:local',
  'a=mediaclk:sender',
  'a=ssrc:1406656402 cname:user3450634749@host-4637af12',
  '',
].join('\r\n');

/** gst-rtsp-server 1.22's answers to rtspsrc over TCP (the Session timeout was rewritten to 4 s by the proxy). */
export const GST_SERVER_RESPONSES = [
  msg(
    'RTSP/1.0 200 OK',
    'CSeq: 1',
    'Public: OPTIONS, DESCRIBE, ANNOUNCE, GET_PARAMETER, PAUSE, PLAY, RECORD, SETUP, SET_PARAMETER, TEARDOWN',
    'Server: GStreamer RTSP server',
    'Date: Sun, 22 Nov 2026 01:48:34 GMT',
  ),
  msg(
    'RTSP/1.0 401 Unauthorized',
    'CSeq: 2',
    'WWW-Authenticate: Digest realm="GStreamer RTSP Server", nonce="248ebfee287a17b3"',
    'Server: GStreamer RTSP server',
    'Date: Sun, 22 Nov 2026 01:48:34 GMT',
  ),
  msg(
    'RTSP/1.0 200 OK',
    'CSeq: 3',
    'Content-Type: application/sdp',
    'Content-Base: rtsp://127.0.0.1:8657/cam0/main/',
    'Server: GStreamer RTSP server',
    'Date: Sun, 22 Nov 2026 01:48:35 GMT',
    'Content-Length: 510',
  ) + SDP_BODY,
  msg(
    'RTSP/1.0 200 OK',
    'CSeq: 4',
    'Transport: RTP/AVP/TCP;unicast;interleaved=0-1;ssrc=53D7DF92;mode="PLAY"',
    'Server: GStreamer RTSP server',
    'Session: HHkP8X7HaOtH9-d_;timeout=4',
    'Date: Sun, 22 Nov 2026 01:48:35 GMT',
  ),
  msg(
    'RTSP/1.0 200 OK',
    'CSeq: 5',
    'RTP-Info: url=rtsp://127.0.0.1:8657/cam0/main/stream=0;seq=29691;rtptime=957027478',
    'Range: npt=now-',
    'Server: GStreamer RTSP server',
    'Session: HHkP8X7HaOtH9-d_',
    'Date: Sun, 22 Nov 2026 01:48:35 GMT',
  ),
];

/** A UDP SETUP answer from the same server. */
export const GST_SETUP_UDP_RESPONSE = msg(
  'RTSP/1.0 200 OK',
  'CSeq: 4',
  'Transport: RTP/AVP;unicast;client_port=52720-52721;server_port=54198-54199;ssrc=4E3C7E48;mode="PLAY"',
  'Server: GStreamer RTSP server',
  'Session: PzxqByep2_xJqgtB;timeout=4',
  'Date: Sun, 22 Nov 2026 01:48:44 GMT',
);

/** Hikvision-style: Digest (RFC 2069, no qop) and Basic, each in its own header. */
export const CAMERA_401_DIGEST_BASIC = msg(
  'RTSP/1.0 401 Unauthorized',
  'CSeq: 3',
  'WWW-Authenticate: Digest realm="IP Camera(C6934)", nonce="8ef6b7c5a1e03b2d4f1c7a9e0d3b5f61", stale="FALSE"',
  'WWW-Authenticate: Basic realm="IP Camera(C6934)"',
  'Date:  Mon, Nov 23 2026 10:00:00 GMT',
);

/** An RFC 7616 camera: SHA-256 first, MD5 last (the order ffmpeg needs, see auth.ts). */
export const CAMERA_401_SHA256_MD5 = msg(
  'RTSP/1.0 401 Unauthorized',
  'CSeq: 2',
  'WWW-Authenticate: Digest realm="cam", nonce="abc123", algorithm=SHA-256, qop="auth", opaque="op"',
  'WWW-Authenticate: Digest realm="cam", nonce="abc123", algorithm=MD5, qop="auth", opaque="op"',
);

/** Interleaved payloads from the TCP capture: an H.264 RTP packet (SPS) and rtspsrc's RTCP receiver report + SDES. */
export const RTP_SPS = Buffer.from('806073fb390b149653d7df9267f4000b91968141fb011000000300100000030148f142aa', 'hex');
export const RTP_PPS = Buffer.from('806073fc390b149653d7df9268ce0f1920', 'hex');
export const RTCP_RR = Buffer.from(
  '81c90007120eee6153d7df9200ffffff0000744d0000000bc874a0750000b2fb81ca000c120eee61011b7573657238373135303633313740686f73742d643732356238333306094753747265616d657200000000',
  'hex',
);

export function frame(channel: number, payload: Buffer): Buffer {
  const head = Buffer.from([0x24, channel, payload.length >> 8, payload.length & 0xff]);
  return Buffer.concat([head, payload]);
}

/** The RtspParseError status a parser call fails with, or null when it succeeds. */
export function statusOf(fn: () => unknown): number | null {
  try {
    fn();
  } catch (err) {
    if (err instanceof RtspParseError) return err.status;
    throw err;
  }
  return null;
}
