import { describe, expect, it } from 'vitest';
import { rewriteForRelay } from '../../../src/media/relay/sdp-rewrite.js';
import { SDP_MAX_BYTES, formatSdp, mediaCodecs, parseSdp, type SdpSession } from '../../../src/media/sdp.js';
import { SdpError } from '../../../src/media/errors.js';
import { makeRng } from '../../support/fuzz.js';
import {
  AXIS,
  BACKTRACKING_SDPS,
  crlf,
  DAHUA,
  HIKVISION,
  mutatedSdps,
  parsedOrRefused,
  randomSdps,
  SAMPLES,
} from '../sdp-samples.js';

const relay = (sdp: SdpSession): SdpSession => rewriteForRelay(sdp, { trackControls: (i) => `trackID=${i}` });

/** Every URL authority in `text` that carries user information. */
const credentialedUrls = (text: string): string[] => text.match(/:\/\/[^/?#\s]*@/g) ?? [];

describe('rewriteForRelay', () => {
  it.each(SAMPLES)('$name: controls point at the relay, nothing points at the camera', (sample) => {
    const parsed = parseSdp(sample.text);
    const out = formatSdp(relay(parsed));
    const again = parseSdp(out);

    expect(again.control).toBe('*');
    expect(again.media.map((m) => m.control)).toEqual(parsed.media.map((_, i) => `trackID=${i}`));
    for (const secret of sample.secrets) expect(out).not.toContain(secret);
    for (const host of sample.hosts)
      expect(out).not.toMatch(new RegExp(`(^|[^A-Za-z0-9.-])${host}([^A-Za-z0-9-]|$)`, 'm'));
    expect(credentialedUrls(out)).toEqual([]);
    expect(out).not.toContain('://');
    expect(out).not.toMatch(/^[uep]=/m);
    expect(out).not.toMatch(/^a=tool:/m);
    for (const c of [again.connection, ...again.media.map((m) => m.connection)])
      if (c) expect(c.address).toBe('0.0.0.0');
    expect(again.origin).toMatchObject({
      username: '-',
      sessionId: parsed.origin?.sessionId,
      sessionVersion: parsed.origin?.sessionVersion,
      address: '0.0.0.0',
    });

    // Codecs, parameter sets and vendor attributes are what the viewers' players need.
    expect(mediaCodecs(again)).toEqual(mediaCodecs(parsed));
    for (const line of sample.vendorLines) expect(out).toContain(`\r\n${line}`);
    expect(again.media.map((m) => [m.media, m.port, m.proto, m.formats])).toEqual(
      parsed.media.map((m) => [m.media, m.port, m.proto, m.formats]),
    );
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
    expect(out).toBe(
      crlf([
        'v=0',
        'o=- 0 0 IN IP4 0.0.0.0',
        's=-',
        'c=IN IP4 0.0.0.0',
        't=0 0',
        'a=control:*',
        'm=video 0 RTP/AVP 96',
        'a=rtpmap:96 H264/90000',
        'a=control:trackID=0',
      ]),
    );
  });

  it('keeps one o= and one control per level when the camera repeats them, and IPv6 connections unspecified', () => {
    const sdp = parseSdp(
      crlf([
        'v=0',
        'o=- 1 1 IN IP6 fe80::1',
        'o=- 2 2 IN IP4 10.9.9.9',
        's=x',
        'c=IN IP6 fe80::1',
        't=0 0',
        'a=control:*',
        'a=control:rtsp://[fe80::1]/x',
        'm=video 0 RTP/AVP 96',
        'a=control:a',
        'a=control:b',
      ]),
    );
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
    expect(out).toBe(
      crlf([
        'v=0',
        'o=- 0 0 IN IP4 0.0.0.0',
        's=-',
        'c=IN IP4 0.0.0.0',
        't=0 0',
        'b=AS:0',
        'a=control:*',
        'm=video 0 RTP/AVP 96',
        'a=control:trackID=0',
      ]),
    );
  });

  it.each([
    ['a blank', 'trackID 0'],
    ['a line break', 'trackID=0\r\na=evil'],
    ['nothing', ''],
  ])('refuses a track control with %s', (_name, control) => {
    expect(() => rewriteForRelay(parseSdp(DAHUA), { trackControls: () => control })).toThrow(SdpError);
  });

  it('refuses an origin that would break the o= line', () => {
    expect(() =>
      rewriteForRelay(parseSdp(DAHUA), {
        trackControls: (i) => `t${i}`,
        origin: { username: 'a b', sessionId: '1', address: '10.0.0.1' },
      }),
    ).toThrow(SdpError);
  });
});

describe('rewriteForRelay fuzz', () => {
  // Each test draws from its own generator, so FUZZ_SEED replays one test run alone.
  const { seed } = makeRng();

  const check = (input: string | Buffer): void => {
    const sdp = parsedOrRefused(input);
    if (sdp === null) return;
    // The lines a rewrite adds can take an SDP at the size limit over it.
    const out = formatSdp(relay(sdp));
    expect(credentialedUrls(out)).toEqual([]);
    expect(out).not.toMatch(/^[uep]=/m);
    if (Buffer.byteLength(out) <= SDP_MAX_BYTES)
      expect(parseSdp(out).media.map((m) => m.control)).toEqual(sdp.media.map((_, i) => `trackID=${i}`));
  };

  it(`mutated camera SDPs rewrite cleanly (seed ${seed})`, () => {
    for (const input of mutatedSdps(makeRng(seed))) check(input);
  });

  it(`random bytes and strings rewrite cleanly (seed ${seed})`, () => {
    for (const input of randomSdps(makeRng(seed))) check(input);
  });

  it('stays fast on inputs built to make regular expressions backtrack', () => {
    // Not a timing threshold: these would take minutes if any pattern were quadratic, and finish here.
    for (const input of BACKTRACKING_SDPS) check(input);
  });
});
