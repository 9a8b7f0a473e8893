import { describe, expect, it } from 'vitest';
import { parseH264Sps, parseH265SpropParameterSets, parseSpropParameterSets } from '../../src/media/h26x.js';
import {
  SDP_MAX_BYTES,
  SdpError,
  formatSdp,
  mediaCodecs,
  parseSdp,
  resolveControl,
  rewriteForRelay,
  type SdpSession,
} from '../../src/media/sdp.js';
import { makeRng, mutate } from '../support/fuzz.js';

// Camera SDPs as the vendors lay them out. The parameter sets were made with ffmpeg (libx264 main
// 1920x1080 and 2688x1520, high 1280x720; libx265 2560x1440) so the SPS reader has real input.

const crlf = (lines: string[]): string => lines.map((l) => `${l}\r\n`).join('');

const HIK_PASSWORD = 'Hik!Secret9';
const HIKVISION = crlf([
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
const DAHUA = [
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

const H265 = crlf([
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

const AXIS_PASSWORD = 'AxisPass77';
const AXIS_URL = `rtsp://root:${AXIS_PASSWORD}@cam/axis-media/media.amp`;
const AXIS = crlf([
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

interface Sample {
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

const SAMPLES: Sample[] = [
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
    controls: [`${AXIS_URL}/stream=0?videocodec=h264&resolution=1280x720`, `${AXIS_URL}/stream=1?videocodec=h264&resolution=1280x720`],
    sessionControl: `${AXIS_URL}?videocodec=h264&resolution=1280x720`,
    vendorLines: ['a=transform:1.000000', 'a=ts-refclk:local', 'a=mediaclk:sender', 'i=rtsp-server'],
    size: { width: 1280, height: 720 },
  },
];

const relay = (sdp: SdpSession): SdpSession => rewriteForRelay(sdp, { trackControls: (i) => `trackID=${i}` });

/** Every URL authority in `text` that carries user information. */
const credentialedUrls = (text: string): string[] => text.match(/:\/\/[^/?#\s]*@/g) ?? [];

describe('parseSdp on camera SDPs', () => {
  it.each(SAMPLES)('$name: reads media, controls and codecs', (sample) => {
    const sdp = parseSdp(sample.text);
    expect(sdp.media.map((m) => m.control)).toEqual(sample.controls);
    expect(sdp.control).toBe(sample.sessionControl);
    expect(sdp.origin?.netType).toBe('IN');
    expect(sdp.timing).toBe('0 0');
    expect(mediaCodecs(sdp).map(({ media, payloadType, encoding, clockRate, channels }) => ({ media, payloadType, encoding, clockRate, channels }))).toEqual(sample.codecs);
    expect(mediaCodecs(sdp).map((c) => c.index)).toEqual(sample.codecs.map((_, i) => i));
    for (const m of sdp.media) {
      expect(m.port).toBe(0);
      expect(m.proto).toBe('RTP/AVP');
    }
  });

  it.each(SAMPLES.filter((s) => s.size))('$name: the SPS in sprop-parameter-sets gives the resolution', (sample) => {
    const [video] = mediaCodecs(parseSdp(sample.text));
    const sets = parseSpropParameterSets(video?.fmtp ?? new Map());
    expect(sets.sps).toHaveLength(1);
    expect(sets.pps).toHaveLength(1);
    const sps = sets.sps[0];
    expect(sps && parseH264Sps(sps)).toMatchObject(sample.size ?? {});
  });

  it('reads H.265 parameter sets and fmtp names case-insensitively', () => {
    const [video] = mediaCodecs(parseSdp(H265));
    expect(video?.fmtp.get('level-id')).toBe('150');
    const sets = parseH265SpropParameterSets(video?.fmtp ?? new Map());
    expect([sets.vps.length, sets.sps.length, sets.pps.length]).toEqual([1, 1, 1]);
    expect(sets.vps[0]?.toString('base64')).toBe('QAEMAf//AWAAAAMAkAAAAwAAAwCWlZgJ');
    // H.265 SPS is not read for size; the H.264 reader must refuse it rather than guess.
    expect(parseH264Sps(sets.sps[0] ?? Buffer.alloc(0))).toBeNull();

    const mixedCase = parseSdp(HIKVISION.replace('sprop-parameter-sets', 'Sprop-Parameter-Sets'));
    expect(mediaCodecs(mixedCase)[0]?.fmtp.get('sprop-parameter-sets')).toBe('Z01AKOygPAET8uAiAAADAAIAAAMAZB4wYyw=,aOvjyyA=');
    expect(mediaCodecs(mixedCase)[0]?.fmtp.get('packetization-mode')).toBe('1');
  });

  it('keeps the rtpmap and fmtp views by payload type', () => {
    const sdp = parseSdp(AXIS);
    expect(sdp.media[0]?.rtpmap.get(96)).toEqual({ payloadType: 96, encoding: 'H264', clockRate: 90000, channels: null });
    expect(sdp.media[0]?.fmtp.get(96)?.get('profile-level-id')).toBe('64001f');
    const aac = parseSdp(H265).media[1];
    expect(aac?.rtpmap.get(97)).toEqual({ payloadType: 97, encoding: 'MPEG4-GENERIC', clockRate: 16000, channels: 1 });
    expect(aac?.fmtp.get(97)?.get('config')).toBe('1408');
    expect(parseSdp(HIKVISION).media[0]?.connection).toEqual({ netType: 'IN', addrType: 'IP4', address: '0.0.0.0' });
  });

  it.each(SAMPLES)('$name: formats back stably with CRLF', (sample) => {
    const once = formatSdp(parseSdp(sample.text));
    expect(once.endsWith('\r\n')).toBe(true);
    expect(once.split('\r\n').every((l) => !l.includes('\n') && !l.includes('\r'))).toBe(true);
    expect(formatSdp(parseSdp(once))).toBe(once);
    if (sample.text.includes('\r\n')) expect(once).toBe(sample.text);
    else expect(once).toBe(crlf(sample.text.split('\n').filter((l) => l !== '').map((l) => l.trim())));
  });
});

describe('rewriteForRelay', () => {
  it.each(SAMPLES)('$name: controls point at the relay, nothing points at the camera', (sample) => {
    const parsed = parseSdp(sample.text);
    const out = formatSdp(relay(parsed));
    const again = parseSdp(out);

    expect(again.control).toBe('*');
    expect(again.media.map((m) => m.control)).toEqual(parsed.media.map((_, i) => `trackID=${i}`));
    for (const secret of sample.secrets) expect(out).not.toContain(secret);
    for (const host of sample.hosts) expect(out).not.toMatch(new RegExp(`(^|[^A-Za-z0-9.-])${host}([^A-Za-z0-9-]|$)`, 'm'));
    expect(credentialedUrls(out)).toEqual([]);
    expect(out).not.toContain('://');
    expect(out).not.toMatch(/^[uep]=/m);
    expect(out).not.toMatch(/^a=tool:/m);
    for (const c of [again.connection, ...again.media.map((m) => m.connection)]) if (c) expect(c.address).toBe('0.0.0.0');
    expect(again.origin).toMatchObject({ username: '-', sessionId: parsed.origin?.sessionId, sessionVersion: parsed.origin?.sessionVersion, address: '0.0.0.0' });

    // Codecs, parameter sets and vendor attributes are what the viewers' players need.
    expect(mediaCodecs(again)).toEqual(mediaCodecs(parsed));
    for (const line of sample.vendorLines) expect(out).toContain(`\r\n${line}`);
    expect(again.media.map((m) => [m.media, m.port, m.proto, m.formats])).toEqual(parsed.media.map((m) => [m.media, m.port, m.proto, m.formats]));
  });

  it.each(SAMPLES)('$name: round trip and rewrite are stable', (sample) => {
    const out = formatSdp(relay(parseSdp(sample.text)));
    expect(formatSdp(parseSdp(out))).toBe(out);
    expect(formatSdp(relay(parseSdp(out)))).toBe(out);
  });

  it('leaves the input model alone', () => {
    const parsed = parseSdp(HIKVISION);
    relay(parsed);
    expect(formatSdp(parsed)).toBe(HIKVISION);
  });

  it('writes the given origin and session control', () => {
    const out = rewriteForRelay(parseSdp(AXIS), {
      trackControls: (i) => `stream${i}`,
      sessionControl: 'rtsp://gateway.lan:8554/live/abc',
      origin: { username: 'edge-gateway', sessionId: '42', address: 'fd00::2' },
    });
    expect(out.lines.find((l) => l.type === 'o')?.value).toBe('edge-gateway 42 1 IN IP6 fd00::2');
    expect(out.control).toBe('rtsp://gateway.lan:8554/live/abc');
    expect(out.media.map((m) => m.control)).toEqual(['stream0', 'stream1']);
  });

  it('adds what the camera left out: o=, s=, t=, c= and the controls', () => {
    const out = formatSdp(relay(parseSdp('v=0\nm=video 0 RTP/AVP 96\na=rtpmap:96 H264/90000\n')));
    expect(out).toBe(crlf(['v=0', 'o=- 0 0 IN IP4 0.0.0.0', 's=-', 'c=IN IP4 0.0.0.0', 't=0 0', 'a=control:*', 'm=video 0 RTP/AVP 96', 'a=rtpmap:96 H264/90000', 'a=control:trackID=0']));
  });

  it('keeps one o= and one control per level when the camera repeats them, and IPv6 connections unspecified', () => {
    const sdp = parseSdp(crlf(['v=0', 'o=- 1 1 IN IP6 fe80::1', 'o=- 2 2 IN IP4 10.9.9.9', 's=x', 'c=IN IP6 fe80::1', 't=0 0', 'a=control:*', 'a=control:rtsp://[fe80::1]/x', 'm=video 0 RTP/AVP 96', 'a=control:a', 'a=control:b']));
    const out = formatSdp(relay(sdp));
    expect(out.match(/a=control:/g)).toHaveLength(2);
    expect(out.match(/^o=/gm)).toHaveLength(1);
    expect(out).not.toContain('10.9.9.9');
    expect(out).toContain('c=IN IP6 ::\r\n');
    expect(out).not.toContain('fe80');
  });

  it('strips credentials from URLs it keeps and drops lines naming the camera', () => {
    const sdp = parseSdp(
      crlf([
        'v=0',
        'o=- 1 1 IN IP4 0.0.0.0',
        's=Camera 10.1.2.3',
        'i=front door',
        't=0 0',
        'a=x-sidecar:see http://user:pw%40x@10.1.2.3:80/a and rtsp://bob:pw2@other.example/b',
        'a=x-note:camera 10.1.2.30 is not this one',
        'a=x-plain:no urls here',
        'm=video 0 RTP/AVP 96',
        'a=control:rtsp://10.1.2.3/track',
      ]),
    );
    const out = formatSdp(relay(sdp));
    expect(out).toContain('s=-\r\n');
    expect(out).toContain('i=front door\r\n');
    expect(out).toContain('a=x-note:camera 10.1.2.30 is not this one\r\n');
    expect(out).toContain('a=x-plain:no urls here\r\n');
    expect(out).not.toContain('10.1.2.3/');
    expect(out).not.toContain('pw');
    expect(out).not.toContain('x-sidecar');
  });

  it('never drops v=, t= or b= for looking like a garbled camera address (fuzz seed 4)', () => {
    const out = formatSdp(relay(parseSdp('v=0\nc=IN IP4 0/.0.0.0\nt=0 0\nb=AS:0\nm=video 0 RTP/AVP 96\n')));
    expect(out).toBe(crlf(['v=0', 'o=- 0 0 IN IP4 0.0.0.0', 's=-', 'c=IN IP4 0.0.0.0', 't=0 0', 'b=AS:0', 'a=control:*', 'm=video 0 RTP/AVP 96', 'a=control:trackID=0']));
  });

  it.each([
    ['a blank', 'trackID 0'],
    ['a line break', 'trackID=0\r\na=evil'],
    ['nothing', ''],
  ])('refuses a track control with %s', (_name, control) => {
    expect(() => rewriteForRelay(parseSdp(DAHUA), { trackControls: () => control })).toThrow(SdpError);
  });

  it('refuses an origin that would break the o= line', () => {
    expect(() => rewriteForRelay(parseSdp(DAHUA), { trackControls: (i) => `t${i}`, origin: { username: 'a b', sessionId: '1', address: '10.0.0.1' } })).toThrow(SdpError);
  });
});

describe('resolveControl', () => {
  it.each([
    ['* is the base', 'rtsp://cam/live/', '*', 'rtsp://cam/live/'],
    ['absent is the base', 'rtsp://cam/live', null, 'rtsp://cam/live'],
    ['empty is the base', 'rtsp://cam/live', '  ', 'rtsp://cam/live'],
    ['absolute stands alone', 'rtsp://cam/live/', 'rtsp://cam:554/Streaming/Channels/101/trackID=1', 'rtsp://cam:554/Streaming/Channels/101/trackID=1'],
    ['absolute, other scheme and case', 'rtsp://cam/live/', 'RTSPS://cam/x', 'RTSPS://cam/x'],
    ['relative onto a base with a slash', 'rtsp://cam/live/', 'trackID=1', 'rtsp://cam/live/trackID=1'],
    ['relative onto a request URL without one', 'rtsp://u:p@cam:554/live', 'trackID=1', 'rtsp://u:p@cam:554/live/trackID=1'],
    ['Dahua query-string base', 'rtsp://cam:554/cam/realmonitor?channel=1&subtype=0/', 'trackID=0', 'rtsp://cam:554/cam/realmonitor?channel=1&subtype=0/trackID=0'],
    ['Axis base with query', 'rtsp://cam/axis-media/media.amp/', 'stream=0?videocodec=h264', 'rtsp://cam/axis-media/media.amp/stream=0?videocodec=h264'],
    ['absolute path replaces the path', 'rtsp://u:p@cam:554/x/y?q=1', '/z/track', 'rtsp://u:p@cam:554/z/track'],
    ['network path keeps the scheme', 'rtsp://cam/x', '//other:8554/y', 'rtsp://other:8554/y'],
    ['surrounding blanks', 'rtsp://cam/live/', ' track2 ', 'rtsp://cam/live/track2'],
  ])('%s', (_name, base, control, expected) => {
    expect(resolveControl(base, control)).toBe(expected);
  });

  it('resolves every sample control to a URL on the camera', () => {
    const base = 'rtsp://cam:554/cam/realmonitor?channel=1&subtype=0/';
    expect(parseSdp(DAHUA).media.map((m) => resolveControl(base, m.control))).toEqual([`${base}trackID=0`, `${base}trackID=1`, `${base}trackID=4`]);
  });
});

describe('parseSdp tolerance', () => {
  it('accepts LF, CR, blank lines, trailing blanks and NULs, a BOM and unknown lines, and keeps them', () => {
    const text = '\uFEFFv=0\r\n\r\no=- 1 1 IN IP4 0.0.0.0 \rs=x\t\n\nt=0 0\nx=vendor line\na=unknown-flag\na=x-weird: value \nm=video 9 RTP/AVP 96 97\ny=other\n\0\0\0';
    const sdp = parseSdp(text);
    expect(sdp.lines.map((l) => `${l.type}=${l.value}`)).toEqual(['v=0', 'o=- 1 1 IN IP4 0.0.0.0', 's=x', 't=0 0', 'x=vendor line', 'a=unknown-flag', 'a=x-weird: value']);
    expect(sdp.media[0]?.lines).toEqual([{ type: 'y', value: 'other' }]);
    expect(sdp.media[0]?.formats).toEqual(['96', '97']);
    expect(sdp.media[0]?.port).toBe(9);
  });

  it('accepts bytes as well as text', () => {
    expect(formatSdp(parseSdp(Buffer.from(HIKVISION)))).toBe(HIKVISION);
  });

  it('reads port counts and odd formats', () => {
    const sdp = parseSdp('v=0\nm=video 5004/2 RTP/AVP 96\nm=application 9 TCP/BFCP *\nm=audio 0 RTP/AVP\n');
    expect(sdp.media.map((m) => [m.port, m.portCount, m.formats])).toEqual([
      [5004, 2, ['96']],
      [9, null, ['*']],
      [0, null, []],
    ]);
    expect(formatSdp(sdp)).toBe(crlf(['v=0', 'm=video 5004/2 RTP/AVP 96', 'm=application 9 TCP/BFCP *', 'm=audio 0 RTP/AVP']));
    expect(mediaCodecs(sdp).map((c) => [c.payloadType, c.encoding])).toEqual([
      [96, null],
      [null, null],
      [null, null],
    ]);
  });

  it('keeps broken rtpmap and fmtp lines as text but out of the views', () => {
    const sdp = parseSdp(crlf(['v=0', 'm=video 0 RTP/AVP 96', 'a=rtpmap:96 H264', 'a=rtpmap:200 H264/90000', 'a=rtpmap:96 H264/0', 'a=fmtp:x y=1', 'a=fmtp:96', 'a=fmtp:96 a=2']));
    expect(sdp.media[0]?.rtpmap.size).toBe(0);
    expect(sdp.media[0]?.fmtp.get(96)?.size).toBe(0);
    expect(sdp.media[0]?.lines).toHaveLength(6);
  });

  it('writes an empty session name as a single space', () => {
    expect(formatSdp(parseSdp('v=0\ns= \n'))).toBe('v=0\r\ns= \r\n');
  });
});

describe('parseSdp refuses', () => {
  const sixteen = 'v=0\r\n' + 'm=video 0 RTP/AVP 96\r\n'.repeat(16);
  it('at most 16 media sections', () => {
    expect(parseSdp(sixteen).media).toHaveLength(16);
    expect(() => parseSdp(`${sixteen}m=audio 0 RTP/AVP 0\r\n`)).toThrow(SdpError);
  });

  it('more than 64 KiB, counted in UTF-8 bytes', () => {
    const head = 'v=0\r\na=x:';
    const exact = head + 'y'.repeat(SDP_MAX_BYTES - head.length);
    expect(parseSdp(exact).lines).toHaveLength(2);
    expect(() => parseSdp(`${exact}y`)).toThrow(SdpError);
    expect(() => parseSdp(head + 'é'.repeat(SDP_MAX_BYTES / 2))).toThrow(SdpError);
    expect(() => parseSdp(Buffer.from(`${exact}y`))).toThrow(SdpError);
  });

  it.each([
    ['empty', ''],
    ['only blanks', ' \r\n\n\t'],
    ['an HTML error page', '<html><body>401 Unauthorized</body></html>'],
    ['no v= first', 'o=- 1 1 IN IP4 0.0.0.0\r\nv=0\r\n'],
    ['version 1', 'v=1\r\n'],
    ['a second v=', 'v=0\r\ns=a\r\nv=0\r\n'],
    ['a line without =', 'v=0\r\ngarbage\r\n'],
    ['a two-letter type', 'v=0\r\nab=c\r\n'],
    ['a digit type', 'v=0\r\n1=c\r\n'],
    ['an m= line without proto', 'v=0\r\nm=video 0\r\n'],
    ['an m= line with a word for port', 'v=0\r\nm=video any RTP/AVP 96\r\n'],
    ['an m= line with a port over 65535', 'v=0\r\nm=video 70000 RTP/AVP 96\r\n'],
    ['an m= line with a port count of 0', 'v=0\r\nm=video 5000/0 RTP/AVP 96\r\n'],
  ])('%s', (_name, text) => {
    expect(() => parseSdp(text)).toThrow(SdpError);
  });
});

describe('SDP fuzz', () => {
  // Each test draws from its own generator, so FUZZ_SEED replays one test run alone.
  const { seed } = makeRng();
  const alphabet = 'vosmcatbu=:/@ \t\r\n\0*-.;,0123456789éRTP/AVPrtsp://rtpmap fmtp control\uFEFF\u3000';

  const check = (input: string | Buffer): void => {
    let sdp: SdpSession;
    try {
      sdp = parseSdp(input);
    } catch (err) {
      expect(err).toBeInstanceOf(SdpError);
      return;
    }
    // CRLF and the lines a rewrite adds can take an SDP at the size limit over it.
    const fits = (text: string): boolean => Buffer.byteLength(text) <= SDP_MAX_BYTES;
    const once = formatSdp(sdp);
    if (fits(once)) expect(formatSdp(parseSdp(once))).toBe(once);
    mediaCodecs(sdp);
    const out = formatSdp(relay(sdp));
    expect(credentialedUrls(out)).toEqual([]);
    expect(out).not.toMatch(/^[uep]=/m);
    if (fits(out)) expect(parseSdp(out).media.map((m) => m.control)).toEqual(sdp.media.map((_, i) => `trackID=${i}`));
  };

  it(`mutated camera SDPs only ever throw SdpError, and rewrite cleanly (seed ${seed})`, () => {
    const rng = makeRng(seed);
    for (let i = 0; i < 3000; i++) check(mutate(rng, rng.pick(SAMPLES).text, alphabet));
  });

  it(`random bytes and strings only ever throw SdpError (seed ${seed})`, () => {
    const rng = makeRng(seed);
    for (let i = 0; i < 1000; i++) {
      check(rng.bytes(400));
      check(`v=0\n${rng.string(300, alphabet)}`);
    }
  });

  it('stays fast on inputs built to make regular expressions backtrack', () => {
    // Not a timing threshold: these would take minutes if any pattern were quadratic, and finish here.
    const runs = ['a'.repeat(60_000), ' '.repeat(60_000) + 'x', `a=${'rtsp:'.repeat(12_000)}`, `a=${'://@'.repeat(15_000)}`, `a=x:${'.'.repeat(60_000)}x`];
    for (const run of runs) {
      const text = `v=0\r\no=- 1 1 IN IP4 h${run.slice(0, 10)}\r\nx=${run}\r\n`.slice(0, SDP_MAX_BYTES);
      check(text);
    }
  });
});
