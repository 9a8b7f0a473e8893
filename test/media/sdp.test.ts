import { describe, expect, it } from 'vitest';
import { parseH264Sps, parseH265SpropParameterSets, parseSpropParameterSets } from '../../src/media/h26x.js';
import { SDP_MAX_BYTES, formatSdp, mediaCodecs, parseSdp, resolveControl } from '../../src/media/sdp.js';
import { SdpError } from '../../src/media/errors.js';
import { makeRng } from '../support/fuzz.js';
import { describeRoundTrip } from '../support/round-trip.js';
import {
  AXIS,
  BACKTRACKING_SDPS,
  crlf,
  DAHUA,
  H265,
  HIKVISION,
  mutatedSdps,
  parsedOrRefused,
  randomSdps,
  SAMPLES,
} from './sdp-samples.js';

describe('parseSdp on camera SDPs', () => {
  it.each(SAMPLES)('$name: reads media, controls and codecs', (sample) => {
    const sdp = parseSdp(sample.text);
    expect(sdp.media.map((m) => m.control)).toEqual(sample.controls);
    expect(sdp.control).toBe(sample.sessionControl);
    expect(sdp.origin?.netType).toBe('IN');
    expect(sdp.timing).toBe('0 0');
    expect(
      mediaCodecs(sdp).map(({ media, payloadType, encoding, clockRate, channels }) => ({
        media,
        payloadType,
        encoding,
        clockRate,
        channels,
      })),
    ).toEqual(sample.codecs);
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
    expect(mediaCodecs(mixedCase)[0]?.fmtp.get('sprop-parameter-sets')).toBe(
      'Z01AKOygPAET8uAiAAADAAIAAAMAZB4wYyw=,aOvjyyA=',
    );
    expect(mediaCodecs(mixedCase)[0]?.fmtp.get('packetization-mode')).toBe('1');
  });

  it('keeps the rtpmap and fmtp views by payload type', () => {
    const sdp = parseSdp(AXIS);
    expect(sdp.media[0]?.rtpmap.get(96)).toEqual({
      payloadType: 96,
      encoding: 'H264',
      clockRate: 90000,
      channels: null,
    });
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
    else
      expect(once).toBe(
        crlf(
          sample.text
            .split('\n')
            .filter((l) => l !== '')
            .map((l) => l.trim()),
        ),
      );
  });
});

describe('resolveControl', () => {
  it.each([
    ['* is the base', 'rtsp://cam/live/', '*', 'rtsp://cam/live/'],
    ['absent is the base', 'rtsp://cam/live', null, 'rtsp://cam/live'],
    ['empty is the base', 'rtsp://cam/live', '  ', 'rtsp://cam/live'],
    [
      'absolute stands alone',
      'rtsp://cam/live/',
      'rtsp://cam:554/Streaming/Channels/101/trackID=1',
      'rtsp://cam:554/Streaming/Channels/101/trackID=1',
    ],
    ['absolute, other scheme and case', 'rtsp://cam/live/', 'RTSPS://cam/x', 'RTSPS://cam/x'],
    ['relative onto a base with a slash', 'rtsp://cam/live/', 'trackID=1', 'rtsp://cam/live/trackID=1'],
    [
      'relative onto a request URL without one',
      'rtsp://u:p@cam:554/live',
      'trackID=1',
      'rtsp://u:p@cam:554/live/trackID=1',
    ],
    [
      'Dahua query-string base',
      'rtsp://cam:554/cam/realmonitor?channel=1&subtype=0/',
      'trackID=0',
      'rtsp://cam:554/cam/realmonitor?channel=1&subtype=0/trackID=0',
    ],
    [
      'Axis base with query',
      'rtsp://cam/axis-media/media.amp/',
      'stream=0?videocodec=h264',
      'rtsp://cam/axis-media/media.amp/stream=0?videocodec=h264',
    ],
    ['absolute path replaces the path', 'rtsp://u:p@cam:554/x/y?q=1', '/z/track', 'rtsp://u:p@cam:554/z/track'],
    ['network path keeps the scheme', 'rtsp://cam/x', '//other:8554/y', 'rtsp://other:8554/y'],
    ['surrounding blanks', 'rtsp://cam/live/', ' track2 ', 'rtsp://cam/live/track2'],
  ])('%s', (_name, base, control, expected) => {
    expect(resolveControl(base, control)).toBe(expected);
  });

  it('resolves every sample control to a URL on the camera', () => {
    const base = 'rtsp://cam:554/cam/realmonitor?channel=1&subtype=0/';
    expect(parseSdp(DAHUA).media.map((m) => resolveControl(base, m.control))).toEqual([
      `${base}trackID=0`,
      `${base}trackID=1`,
      `${base}trackID=4`,
    ]);
  });
});

describe('parseSdp tolerance', () => {
  it('accepts LF, CR, blank lines, trailing blanks and NULs, a BOM and unknown lines, and keeps them', () => {
    const text =
      '\uFEFFv=0\r\n\r\no=- 1 1 IN IP4 0.0.0.0 \rs=x\t\n\nt=0 0\nx=vendor line\na=unknown-flag\na=x-weird: value \nm=video 9 RTP/AVP 96 97\ny=other\n\0\0\0';
    const sdp = parseSdp(text);
    expect(sdp.lines.map((l) => `${l.type}=${l.value}`)).toEqual([
      'v=0',
      'o=- 1 1 IN IP4 0.0.0.0',
      's=x',
      't=0 0',
      'x=vendor line',
      'a=unknown-flag',
      'a=x-weird: value',
    ]);
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
    expect(formatSdp(sdp)).toBe(
      crlf(['v=0', 'm=video 5004/2 RTP/AVP 96', 'm=application 9 TCP/BFCP *', 'm=audio 0 RTP/AVP']),
    );
    expect(mediaCodecs(sdp).map((c) => [c.payloadType, c.encoding])).toEqual([
      [96, null],
      [null, null],
      [null, null],
    ]);
  });

  it('keeps broken rtpmap and fmtp lines as text but out of the views', () => {
    const sdp = parseSdp(
      crlf([
        'v=0',
        'm=video 0 RTP/AVP 96',
        'a=rtpmap:96 H264',
        'a=rtpmap:200 H264/90000',
        'a=rtpmap:96 H264/0',
        'a=fmtp:x y=1',
        'a=fmtp:96',
        'a=fmtp:96 a=2',
      ]),
    );
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

const MINIMAL = crlf([
  'v=0',
  'o=- 1 1 IN IP4 0.0.0.0',
  's=x',
  'c=IN IP4 0.0.0.0',
  't=0 0',
  'a=control:*',
  'm=video 0 RTP/AVP 96',
  'a=rtpmap:96 H264/90000',
  'a=fmtp:96 packetization-mode=1; Profile-Level-Id=4D4032',
  'a=control:trackID=0',
]);

describeRoundTrip('SDP', parseSdp, formatSdp, {
  canonical: [
    [
      'v=0\r\ns= \r\n',
      {
        lines: [
          { type: 'v', value: '0' },
          { type: 's', value: '' },
        ],
        origin: null,
        sessionName: '',
        connection: null,
        timing: null,
        control: null,
        media: [],
      },
    ],
    [
      MINIMAL,
      {
        lines: [
          { type: 'v', value: '0' },
          { type: 'o', value: '- 1 1 IN IP4 0.0.0.0' },
          { type: 's', value: 'x' },
          { type: 'c', value: 'IN IP4 0.0.0.0' },
          { type: 't', value: '0 0' },
          { type: 'a', value: 'control:*' },
        ],
        origin: {
          username: '-',
          sessionId: '1',
          sessionVersion: '1',
          netType: 'IN',
          addrType: 'IP4',
          address: '0.0.0.0',
        },
        sessionName: 'x',
        connection: { netType: 'IN', addrType: 'IP4', address: '0.0.0.0' },
        timing: '0 0',
        control: '*',
        media: [
          {
            media: 'video',
            port: 0,
            portCount: null,
            proto: 'RTP/AVP',
            formats: ['96'],
            lines: [
              { type: 'a', value: 'rtpmap:96 H264/90000' },
              { type: 'a', value: 'fmtp:96 packetization-mode=1; Profile-Level-Id=4D4032' },
              { type: 'a', value: 'control:trackID=0' },
            ],
            connection: null,
            control: 'trackID=0',
            rtpmap: new Map([[96, { payloadType: 96, encoding: 'H264', clockRate: 90000, channels: null }]]),
            fmtp: new Map([
              [
                96,
                new Map([
                  ['packetization-mode', '1'],
                  ['profile-level-id', '4D4032'],
                ]),
              ],
            ]),
          },
        ],
      },
    ],
    [
      'v=0\r\nm=video 5004/2 RTP/AVP 96\r\nm=application 9 TCP/BFCP *\r\n',
      {
        lines: [{ type: 'v', value: '0' }],
        origin: null,
        sessionName: null,
        connection: null,
        timing: null,
        control: null,
        media: [
          {
            media: 'video',
            port: 5004,
            portCount: 2,
            proto: 'RTP/AVP',
            formats: ['96'],
            lines: [],
            connection: null,
            control: null,
            rtpmap: new Map(),
            fmtp: new Map(),
          },
          {
            media: 'application',
            port: 9,
            portCount: null,
            proto: 'TCP/BFCP',
            formats: ['*'],
            lines: [],
            connection: null,
            control: null,
            rtpmap: new Map(),
            fmtp: new Map(),
          },
        ],
      },
    ],
  ],
  aliases: [
    ['v=0\ns=\n', 'v=0\r\ns= \r\n'],
    // A BOM, LF and CR line ends, blank lines, trailing blanks and the NULs some cameras pad with.
    [`\uFEFF${MINIMAL.replaceAll('\r\n', '\n').replace('s=x', 's=x \t').replace('t=0 0', '\rt=0 0')}\0\0`, MINIMAL],
    ['v=0\nm=audio 0  RTP/AVP   0 8\n', 'v=0\r\nm=audio 0 RTP/AVP 0 8\r\n'],
    [
      DAHUA,
      crlf(
        DAHUA.split('\n')
          .filter((l) => l !== '')
          .map((l) => l.trim()),
      ),
    ],
    ...[HIKVISION, H265, AXIS].map((text): [string, string] => [text, text]),
  ],
});

describe('SDP fuzz', () => {
  // Each test draws from its own generator, so FUZZ_SEED replays one test run alone.
  const { seed } = makeRng();

  const check = (input: string | Buffer): void => {
    const sdp = parsedOrRefused(input);
    if (sdp === null) return;
    // CRLF can take an SDP at the size limit over it.
    const once = formatSdp(sdp);
    if (Buffer.byteLength(once) <= SDP_MAX_BYTES) expect(formatSdp(parseSdp(once))).toBe(once);
    mediaCodecs(sdp);
  };

  it(`mutated camera SDPs only ever throw SdpError (seed ${seed})`, () => {
    for (const input of mutatedSdps(makeRng(seed))) check(input);
  });

  it(`random bytes and strings only ever throw SdpError (seed ${seed})`, () => {
    for (const input of randomSdps(makeRng(seed))) check(input);
  });

  it('stays fast on inputs built to make regular expressions backtrack', () => {
    // Not a timing threshold: these would take minutes if any pattern were quadratic, and finish here.
    for (const input of BACKTRACKING_SDPS) check(input);
  });
});
