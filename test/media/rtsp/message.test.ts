import { describe, expect, it } from 'vitest';
import {
  RtspHeaders,
  RtspStreamReader,
  formatInterleaved,
  formatRequest,
  formatResponse,
  parseChallenges,
  parseRange,
  parseRtpInfo,
  parseSession,
  parseTransport,
  reasonPhrase,
  type ReadItem,
  type RtspStreamReaderOptions,
} from '../../../src/media/rtsp/index.js';
import { RtspParseError } from '../../../src/media/rtsp/errors.js';
import { makeRng, mutate, type Rng } from '../../support/fuzz.js';
import {
  CAMERA_401_DIGEST_BASIC,
  CAMERA_401_SHA256_MD5,
  FFMPEG_REQUESTS,
  GSTREAMER_REQUESTS,
  GST_SERVER_RESPONSES,
  GST_SETUP_UDP_RESPONSE,
  RTCP_RR,
  RTP_PPS,
  RTP_SPS,
  SDP_BODY,
  VLC_REQUESTS,
  frame,
} from './fixtures.js';

type Plain =
  | { kind: 'request'; method: string; uri: string; headers: Array<[string, string]>; body: string }
  | { kind: 'response'; status: number; reason: string; headers: Array<[string, string]>; body: string }
  | { kind: 'interleaved'; channel: number; payload: string };

function plain(item: ReadItem): Plain {
  switch (item.kind) {
    case 'request':
      return {
        kind: 'request',
        method: item.msg.method,
        uri: item.msg.uri,
        headers: [...item.msg.headers],
        body: item.msg.body.toString('hex'),
      };
    case 'response':
      return {
        kind: 'response',
        status: item.msg.status,
        reason: item.msg.reason,
        headers: [...item.msg.headers],
        body: item.msg.body.toString('hex'),
      };
    case 'interleaved':
      return { kind: 'interleaved', channel: item.channel, payload: item.payload.toString('hex') };
  }
}

function drain(r: RtspStreamReader, out: ReadItem[]): void {
  for (let item = r.next(); item !== null; item = r.next()) out.push(item);
}

/** Feeds the chunks, draining after each; returns the items and the error that stopped it, if any. */
function run(
  chunks: readonly Buffer[],
  opts?: RtspStreamReaderOptions,
): { items: ReadItem[]; error: RtspParseError | null; maxBuffered: number } {
  const r = new RtspStreamReader(opts);
  const items: ReadItem[] = [];
  let maxBuffered = 0;
  try {
    for (const c of chunks) {
      r.push(c);
      drain(r, items);
      maxBuffered = Math.max(maxBuffered, r.bufferedBytes);
    }
  } catch (err) {
    if (!(err instanceof RtspParseError)) throw err;
    return { items, error: err, maxBuffered };
  }
  return { items, error: null, maxBuffered };
}

function readAll(chunks: readonly Buffer[], opts?: RtspStreamReaderOptions): ReadItem[] {
  const { items, error } = run(chunks, opts);
  if (error !== null) throw error;
  return items;
}

function bytewise(buf: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < buf.length; i++) out.push(buf.subarray(i, i + 1));
  return out;
}

function randomChunks(buf: Buffer, rng: Rng, max: number): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < buf.length;) {
    const n = 1 + rng.int(max);
    out.push(buf.subarray(i, i + n));
    i += n;
  }
  return out;
}

function errorOf(input: string | Buffer, opts?: RtspStreamReaderOptions): RtspParseError {
  const { error } = run([typeof input === 'string' ? Buffer.from(input, 'latin1') : input], opts);
  if (error === null) throw new Error('expected an RtspParseError');
  return error;
}

const b = (s: string): Buffer => Buffer.from(s, 'latin1');

// A viewer's connection: every client's requests, with RTCP receiver reports interleaved after PLAY.
const CLIENT_STREAM = Buffer.concat([
  ...FFMPEG_REQUESTS.slice(0, 6).map(b),
  frame(1, RTCP_RR),
  ...FFMPEG_REQUESTS.slice(6).map(b),
  ...GSTREAMER_REQUESTS.map(b),
  frame(1, RTCP_RR),
  frame(3, RTCP_RR),
  ...VLC_REQUESTS.map(b),
  frame(3, Buffer.alloc(0)),
]);

// A camera's connection: responses, with RTP frames after PLAY and a keep-alive answer between them.
const SERVER_STREAM = Buffer.concat([
  ...GST_SERVER_RESPONSES.map(b),
  frame(0, RTP_SPS),
  frame(0, RTP_PPS),
  b(CAMERA_401_DIGEST_BASIC),
  frame(0, RTP_SPS),
  b(CAMERA_401_SHA256_MD5),
  b(GST_SETUP_UDP_RESPONSE),
  frame(1, RTCP_RR),
]);

describe('RtspStreamReader on real traffic', () => {
  it('reads ffmpeg requests', () => {
    const items = readAll(FFMPEG_REQUESTS.map(b));
    const reqs = items.map((i) => (i.kind === 'request' ? i.msg : null));
    expect(reqs.map((r) => r?.method)).toEqual([
      'OPTIONS',
      'DESCRIBE',
      'DESCRIBE',
      'SETUP',
      'SETUP',
      'PLAY',
      'GET_PARAMETER',
      'TEARDOWN',
    ]);
    const [options, describe1, describe2, setupTcp, setupUdp, play, keepAlive] = reqs;
    expect(options?.uri).toBe('rtsp://127.0.0.1:8655/cam0/main');
    expect(options?.headers.get('cseq')).toBe('1');
    expect(options?.headers.get('USER-AGENT')).toBe('Lavf59.27.100');
    expect(describe1?.headers.get('Accept')).toBe('application/sdp');
    expect(describe1?.headers.get('Authorization')).toBeUndefined();
    expect(describe2?.headers.get('Authorization')).toMatch(/^Digest username="admin"/);
    expect(parseTransport(setupTcp?.headers.get('Transport') ?? '')).toEqual([
      { protocol: 'RTP/AVP/TCP', lowerTransport: 'TCP', delivery: 'unicast', interleaved: [0, 1] },
    ]);
    expect(parseTransport(setupUdp?.headers.get('Transport') ?? '')).toEqual([
      { protocol: 'RTP/AVP/UDP', lowerTransport: 'UDP', delivery: 'unicast', clientPort: [19282, 19283] },
    ]);
    expect(parseRange(play?.headers.get('Range') ?? '')).toEqual({ unit: 'npt', start: 0, end: null });
    expect(parseSession(play?.headers.get('Session') ?? '')).toEqual({ id: 'xKSdjQVQC-+PL71g' });
    expect(keepAlive?.headers.get('session')).toBe('CW94n65.XzNMvqUG');
    for (const r of reqs) expect(r?.body.length).toBe(0);
  });

  it('reads GStreamer requests, keeping repeated fields', () => {
    const reqs = readAll(GSTREAMER_REQUESTS.map(b)).map((i) => (i.kind === 'request' ? i.msg : null));
    expect(reqs[0]?.headers.getAll('user-agent')).toEqual([
      'GStreamer/1.22.0',
      'RealMedia Player Version 6.0.9.1235 (linux-2.0-libc6-i386-gcc2.95)',
    ]);
    expect(reqs[0]?.headers.get('PlayerStarttime')).toBe('[28/03/2003:22:50:23 00:00]');
    expect(parseTransport(reqs[3]?.headers.get('transport') ?? '')).toEqual([
      { protocol: 'RTP/AVP', lowerTransport: 'UDP', delivery: 'unicast', clientPort: [52720, 52721] },
    ]);
    expect(parseRange(reqs[5]?.headers.get('range') ?? '')).toEqual({ unit: 'npt', start: 'now', end: null });
    expect(reqs[6]?.method).toBe('GET_PARAMETER');
  });

  it('reads VLC (live555) requests', () => {
    const reqs = readAll(VLC_REQUESTS.map(b)).map((i) => (i.kind === 'request' ? i.msg : null));
    expect(reqs.map((r) => r?.method)).toEqual([
      'OPTIONS',
      'DESCRIBE',
      'DESCRIBE',
      'SETUP',
      'SETUP',
      'PLAY',
      'GET_PARAMETER',
      'TEARDOWN',
    ]);
    expect(reqs[4]?.uri).toBe('rtsp://192.168.1.64:554/Streaming/Channels/101/trackID=2');
    expect(parseTransport(reqs[4]?.headers.get('transport') ?? '')[0]?.interleaved).toEqual([2, 3]);
    expect(reqs[5]?.headers.get('range')).toBe('npt=0.000-');
  });

  it('reads camera responses: SDP body, two WWW-Authenticate, Transport, Session, RTP-Info', () => {
    const res = readAll([b(GST_SERVER_RESPONSES.join('')), b(CAMERA_401_DIGEST_BASIC), b(CAMERA_401_SHA256_MD5)]).map(
      (i) => (i.kind === 'response' ? i.msg : null),
    );
    expect(res.map((r) => r?.status)).toEqual([200, 401, 200, 200, 200, 401, 401]);
    expect(res[1]?.reason).toBe('Unauthorized');
    expect(Buffer.byteLength(SDP_BODY)).toBe(510);
    expect(res[2]?.body.toString('utf8')).toBe(SDP_BODY);
    expect(res[2]?.headers.get('content-type')).toBe('application/sdp');
    expect(parseTransport(res[3]?.headers.get('transport') ?? '')).toEqual([
      {
        protocol: 'RTP/AVP/TCP',
        lowerTransport: 'TCP',
        delivery: 'unicast',
        interleaved: [0, 1],
        ssrc: '53D7DF92',
        mode: 'PLAY',
      },
    ]);
    expect(parseSession(res[3]?.headers.get('session') ?? '')).toEqual({ id: 'HHkP8X7HaOtH9-d_', timeout: 4 });
    expect(parseRtpInfo(res[4]?.headers.get('rtp-info') ?? '')).toEqual([
      { url: 'rtsp://127.0.0.1:8657/cam0/main/stream=0', seq: 29691, rtptime: 957027478 },
    ]);
    expect(res[5]?.headers.getAll('www-authenticate')).toHaveLength(2);
    expect(parseChallenges(res[5]?.headers.getAll('www-authenticate') ?? []).map((c) => c.scheme)).toEqual([
      'Digest',
      'Basic',
    ]);
    expect(
      parseChallenges(res[6]?.headers.getAll('www-authenticate') ?? []).map((c) =>
        c.scheme === 'Digest' ? c.algorithm : c.scheme,
      ),
    ).toEqual(['SHA-256', 'MD5']);
    // The Date header with two spaces after the colon is trimmed, not rejected.
    expect(res[5]?.headers.get('date')).toBe('Mon, Nov 23 2026 10:00:00 GMT');
  });

  for (const [name, stream] of [
    ['client', CLIENT_STREAM],
    ['camera', SERVER_STREAM],
  ] as const) {
    const whole = (): Plain[] => readAll([stream]).map(plain);

    it(`reads the ${name} stream with interleaved frames mixed in`, () => {
      const items = whole();
      expect(items.filter((i) => i.kind === 'interleaved').length).toBeGreaterThan(2);
      expect(items.filter((i) => i.kind !== 'interleaved').length).toBeGreaterThan(6);
    });

    it(`reads the ${name} stream fed one byte at a time`, () => {
      const { items, error, maxBuffered } = run(bytewise(stream));
      expect(error).toBeNull();
      expect(items.map(plain)).toEqual(whole());
      expect(maxBuffered).toBeLessThanOrEqual(8 * 1024);
    });

    const rng = makeRng();
    it(`reads the ${name} stream in random chunks (seed ${rng.seed})`, () => {
      const expected = whole();
      for (let round = 0; round < 50; round++) {
        const chunks = randomChunks(stream, rng, 1 + rng.int(700));
        expect(readAll(chunks).map(plain)).toEqual(expected);
      }
    });
  }

  it('reads every message split in two at every byte boundary', () => {
    const messages = [...FFMPEG_REQUESTS, ...GSTREAMER_REQUESTS, ...GST_SERVER_RESPONSES, CAMERA_401_DIGEST_BASIC].map(
      b,
    );
    for (const m of [...messages, frame(1, RTCP_RR)]) {
      const whole = readAll([m]).map(plain);
      expect(whole).toHaveLength(1);
      for (let i = 0; i <= m.length; i++) expect(readAll([m.subarray(0, i), m.subarray(i)]).map(plain)).toEqual(whole);
    }
  });
});

describe('RtspStreamReader framing details', () => {
  it('returns a frame payload as a view of the pushed chunk when it lies inside one', () => {
    const chunk = Buffer.concat([frame(0, RTP_SPS), frame(1, RTCP_RR)]);
    const r = new RtspStreamReader();
    r.push(chunk);
    const first = r.next();
    expect(first?.kind).toBe('interleaved');
    if (first?.kind !== 'interleaved') return;
    expect(first.payload.buffer).toBe(chunk.buffer);
    expect(first.payload.byteOffset).toBe(chunk.byteOffset + 4);
    expect(first.payload.equals(RTP_SPS)).toBe(true);
  });

  it('copies a payload that spans chunks', () => {
    const whole = frame(2, RTCP_RR);
    const r = new RtspStreamReader();
    const a = Buffer.from(whole.subarray(0, 20));
    r.push(a);
    expect(r.next()).toBeNull();
    r.push(Buffer.from(whole.subarray(20)));
    const item = r.next();
    expect(item?.kind === 'interleaved' && item.payload.equals(RTCP_RR)).toBe(true);
    a.fill(0);
    expect(item?.kind === 'interleaved' && item.payload.equals(RTCP_RR)).toBe(true);
  });

  it('accepts LF-only line ends, folded fields, blank lines between messages and space before a colon', () => {
    const items = readAll([
      b(
        '\r\n\r\nOPTIONS * RTSP/1.0\nCSeq : 7\nX-Folded: one\n  two\n\ttwo-and-a-half\n\n\r\nRTSP/1.0 200\r\nCSeq: 7\r\n\r\n',
      ),
    ]).map(plain);
    expect(items).toEqual([
      {
        kind: 'request',
        method: 'OPTIONS',
        uri: '*',
        headers: [
          ['CSeq', '7'],
          ['X-Folded', 'one two two-and-a-half'],
        ],
        body: '',
      },
      { kind: 'response', status: 200, reason: '', headers: [['CSeq', '7']], body: '' },
    ]);
  });

  it('reads a body that is followed at once by a frame and another message', () => {
    const stream = Buffer.concat([
      b(
        'SET_PARAMETER rtsp://cam/ RTSP/1.0\r\nCSeq: 9\r\nContent-Type: text/parameters\r\nContent-Length: 11\r\n\r\nbarparam: x',
      ),
      frame(0, RTP_PPS),
      b('RTSP/1.0 200 OK\r\nCSeq: 9\r\n\r\n'),
    ]);
    const items = readAll(bytewise(stream)).map(plain);
    expect(items.map((i) => i.kind)).toEqual(['request', 'interleaved', 'response']);
    expect(items[0]?.kind === 'request' && Buffer.from(items[0].body, 'hex').toString()).toBe('barparam: x');
  });

  it('accepts a header section, body and frame of exactly the configured sizes', () => {
    const head = 'OPTIONS * RTSP/1.0\r\nCSeq: 1\r\nContent-Length: 5\r\n\r\n';
    const opts = { maxHeaderBytes: head.length, maxBodyBytes: 5, maxInterleavedBytes: 4 + RTP_PPS.length };
    expect(readAll([b(`${head}12345`), frame(0, RTP_PPS)], opts)).toHaveLength(2);
    expect(errorOf(`${head.replace('CSeq: 1', 'CSeq: 12')}12345`, opts).status).toBe(431);
    expect(errorOf(`${head.replace('5', '6')}123456`, { ...opts, maxHeaderBytes: 100 }).status).toBe(413);
    expect(errorOf(Buffer.concat([frame(0, Buffer.concat([RTP_PPS, Buffer.from([0])]))]), opts).status).toBe(413);
  });
});

describe('RtspStreamReader errors', () => {
  const long = 'a'.repeat(9000);
  const cases: Array<[string, string | Buffer, number, RtspStreamReaderOptions?]> = [
    ['an HTTP request', 'GET / HTTP/1.1\r\nHost: cam\r\n\r\n', 505],
    ['RTSP 2.0', 'OPTIONS * RTSP/2.0\r\nCSeq: 1\r\n\r\n', 505],
    ['a response of RTSP 2.0', 'RTSP/2.0 200 OK\r\nCSeq: 1\r\n\r\n', 505],
    ['a request line without version', 'OPTIONS *\r\n\r\n', 400],
    ['a request line with four parts', 'OPTIONS * RTSP/1.0 x\r\n\r\n', 400],
    ['a malformed version', 'OPTIONS * RTSP1.0\r\n\r\n', 400],
    ['a method alone', 'HELLO\r\n\r\n', 400],
    ['a line starting with white space', ' OPTIONS * RTSP/1.0\r\n\r\n', 400],
    ['a TLS ClientHello', Buffer.from('160301020001', 'hex'), 400],
    ['JSON', '{"hello": 1}\r\n\r\n', 400],
    ['a non-numeric status', 'RTSP/1.0 2x0 OK\r\n\r\n', 400],
    ['a status out of range', 'RTSP/1.0 700 Huh\r\n\r\n', 400],
    ['a response prefix alone', 'RTSP\r\n\r\n', 400],
    ['a header without a colon', 'OPTIONS * RTSP/1.0\r\nCSeq 1\r\n\r\n', 400],
    ['a header name with a space', 'OPTIONS * RTSP/1.0\r\nC Seq: 1\r\n\r\n', 400],
    ['an empty header name', 'OPTIONS * RTSP/1.0\r\n: 1\r\n\r\n', 400],
    ['a continuation before any header', 'OPTIONS * RTSP/1.0\r\n folded\r\n\r\n', 400],
    ['a control character in a value', 'OPTIONS * RTSP/1.0\r\nX: a\u0001b\r\n\r\n', 400],
    ['a bare CR in a value', 'OPTIONS * RTSP/1.0\r\nX: a\rb\r\n\r\n', 400],
    ['a NUL in the request line', 'OPTIONS rtsp://cam/\u0000 RTSP/1.0\r\n\r\n', 400],
    ['a non-numeric Content-Length', 'ANNOUNCE * RTSP/1.0\r\nContent-Length: ten\r\n\r\n', 400],
    ['a negative Content-Length', 'ANNOUNCE * RTSP/1.0\r\nContent-Length: -1\r\n\r\n', 400],
    ['conflicting Content-Lengths', 'ANNOUNCE * RTSP/1.0\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n', 400],
    ['a body over the limit', 'ANNOUNCE * RTSP/1.0\r\nContent-Length: 65537\r\n\r\n', 413],
    ['a huge Content-Length', 'ANNOUNCE * RTSP/1.0\r\nContent-Length: 99999999999999999999999\r\n\r\n', 413],
    ['a frame over the limit', Buffer.from('2400ffff', 'hex'), 413, { maxInterleavedBytes: 1500 }],
    ['a header section over the limit', `OPTIONS * RTSP/1.0\r\nX-Pad: ${long}\r\n\r\n`, 431],
    ['a header section that never ends', `OPTIONS * RTSP/1.0\r\n${'X: y\r\n'.repeat(2000)}`, 431],
    ['a response header section over the limit', `RTSP/1.0 200 OK\r\nX-Pad: ${long}\r\n\r\n`, 431],
    ['a request URI over the limit', `DESCRIBE rtsp://cam/${long} RTSP/1.0\r\n\r\n`, 414],
    ['a method over the limit', 'A'.repeat(9000), 400],
    [
      'garbage after a message whose Content-Length was short',
      'RTSP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nv=0\r\n',
      400,
    ],
  ];
  for (const [name, input, status, opts] of cases) {
    it(`answers ${status} to ${name}`, () => {
      const err = errorOf(input, opts);
      expect(err).toBeInstanceOf(RtspParseError);
      expect(err.status).toBe(status);
    });
  }

  it('fails on the first byte of something that is not RTSP, without buffering more', () => {
    const r = new RtspStreamReader();
    r.push(Buffer.from([0x16]));
    expect(() => r.next()).toThrow(RtspParseError);
  });

  it('fails as soon as an oversized Content-Length is read, before the body arrives', () => {
    const r = new RtspStreamReader({ maxBodyBytes: 100 });
    r.push(b('ANNOUNCE * RTSP/1.0\r\nContent-Length: 101\r\n\r\n'));
    expect(() => r.next()).toThrow(RtspParseError);
    expect(r.bufferedBytes).toBe(0);
    expect(errorOf('ANNOUNCE * RTSP/1.0\r\nContent-Length: 101\r\n\r\n', { maxBodyBytes: 100 }).status).toBe(413);
  });

  it('fails when the header limit is reached, whatever the chunking', () => {
    const r = new RtspStreamReader({ maxHeaderBytes: 1024 });
    r.push(b('OPTIONS * RTSP/1.0\r\n'));
    let thrown: unknown = null;
    for (let i = 0; i < 2000 && thrown === null; i++) {
      r.push(b('X: y\r\n'));
      try {
        r.next();
      } catch (err) {
        thrown = err;
      }
      expect(r.bufferedBytes).toBeLessThanOrEqual(1024 + 6);
    }
    expect(thrown).toBeInstanceOf(RtspParseError);
    expect((thrown as RtspParseError).status).toBe(431);
  });

  it('keeps failing after the first error and drops further input', () => {
    const r = new RtspStreamReader();
    r.push(b('OPTIONS * RTSP/1.0\r\nCSeq: 1\r\n\r\n\u0000garbage'));
    expect(r.next()?.kind).toBe('request');
    const first = (() => {
      try {
        r.next();
      } catch (err) {
        return err;
      }
      return null;
    })();
    expect(first).toBeInstanceOf(RtspParseError);
    r.push(b('OPTIONS * RTSP/1.0\r\n\r\n'));
    expect(r.bufferedBytes).toBe(0);
    expect(() => r.next()).toThrow(first);
  });

  it('rejects nonsensical limits', () => {
    expect(() => new RtspStreamReader({ maxHeaderBytes: 0 })).toThrow(TypeError);
    expect(() => new RtspStreamReader({ maxInterleavedBytes: 3 })).toThrow(TypeError);
    expect(() => new RtspStreamReader({ maxBodyBytes: Number.NaN })).toThrow(TypeError);
  });
});

describe('formatting', () => {
  it('formats a request the way clients send it', () => {
    const req = {
      method: 'SETUP',
      uri: 'rtsp://cam/stream=0',
      version: 'RTSP/1.0' as const,
      headers: new RtspHeaders([
        ['CSeq', '4'],
        ['Transport', 'RTP/AVP/TCP;unicast;interleaved=0-1'],
      ]),
      body: Buffer.alloc(0),
    };
    expect(formatRequest(req).toString()).toBe(
      'SETUP rtsp://cam/stream=0 RTSP/1.0\r\nCSeq: 4\r\nTransport: RTP/AVP/TCP;unicast;interleaved=0-1\r\n\r\n',
    );
  });

  it('sets Content-Length from the body and drops a stale one', () => {
    const res = {
      status: 200,
      reason: reasonPhrase(200),
      headers: new RtspHeaders({ CSeq: '2', 'Content-Type': 'application/sdp', 'content-length': '9999' }),
      body: Buffer.from(SDP_BODY),
    };
    const out = formatResponse(res);
    expect(out.toString()).toBe(
      `RTSP/1.0 200 OK\r\nCSeq: 2\r\nContent-Type: application/sdp\r\nContent-Length: 510\r\n\r\n${SDP_BODY}`,
    );
    const [again] = readAll([out]);
    expect(again?.kind === 'response' && again.msg.body.toString()).toBe(SDP_BODY);
  });

  it('round-trips every captured message through parse and format', () => {
    for (const item of readAll([CLIENT_STREAM, SERVER_STREAM])) {
      const bytes =
        item.kind === 'request'
          ? formatRequest(item.msg)
          : item.kind === 'response'
            ? formatResponse(item.msg)
            : formatInterleaved(item.channel, item.payload);
      expect(readAll([bytes]).map(plain)).toEqual([plain(item)]);
    }
  });

  it('refuses values that would break the framing', () => {
    const headers = new RtspHeaders();
    expect(() => headers.set('X', 'a\r\nInjected: 1')).toThrow(TypeError);
    expect(() => headers.append('Bad Name', 'x')).toThrow(TypeError);
    const base = { version: 'RTSP/1.0' as const, headers, body: Buffer.alloc(0) };
    expect(() => formatRequest({ ...base, method: 'BAD METHOD', uri: '*' })).toThrow(TypeError);
    expect(() => formatRequest({ ...base, method: 'OPTIONS', uri: 'rtsp://cam/ x' })).toThrow(TypeError);
    expect(() => formatResponse({ status: 200, reason: 'OK\r\nX: y', headers, body: Buffer.alloc(0) })).toThrow(
      TypeError,
    );
    expect(() => formatResponse({ status: 99, reason: '', headers, body: Buffer.alloc(0) })).toThrow(TypeError);
    expect(() => formatInterleaved(256, Buffer.alloc(1))).toThrow(TypeError);
    expect(() => formatInterleaved(0, Buffer.alloc(65536))).toThrow(TypeError);
  });
});

describe('RtspHeaders', () => {
  it('matches names case-insensitively and keeps order and spelling', () => {
    const h = new RtspHeaders([
      ['WWW-Authenticate', 'Digest realm="a"'],
      ['CSeq', '1'],
      ['www-authenticate', 'Basic realm="a"'],
    ]);
    expect(h.get('www-AUTHENTICATE')).toBe('Digest realm="a"');
    expect(h.getAll('WWW-Authenticate')).toEqual(['Digest realm="a"', 'Basic realm="a"']);
    expect(h.has('cseq')).toBe(true);
    h.set('Www-Authenticate', 'Basic realm="b"');
    expect([...h]).toEqual([
      ['Www-Authenticate', 'Basic realm="b"'],
      ['CSeq', '1'],
    ]);
    h.append('Session', 'abc');
    expect(h.delete('SESSION')).toBe(true);
    expect(h.delete('session')).toBe(false);
    expect(h.size).toBe(2);
    expect(new RtspHeaders({ A: ['1', '2'] }).getAll('a')).toEqual(['1', '2']);
  });

  it('hands out copies of its entries', () => {
    const h = new RtspHeaders([['X', '1']]);
    for (const entry of h.entries()) entry[1] = 'a\r\nb';
    expect(h.get('x')).toBe('1');
  });
});

describe('RtspStreamReader fuzz', () => {
  const LIMITS = { maxHeaderBytes: 600, maxBodyBytes: 600, maxInterleavedBytes: 400 };
  const BOUND = Math.max(LIMITS.maxHeaderBytes, LIMITS.maxBodyBytes, LIMITS.maxInterleavedBytes);
  const ALPHABET = '\r\n\r\n$:; =,"\t\u0000\u00ff0123456789RTSP/1.0 CSeq Content-Length: 9';

  const summary = (r: ReturnType<typeof run>): unknown => ({
    items: r.items.map(plain),
    status: r.error?.status ?? null,
    message: r.error?.message ?? null,
  });

  const rng1 = makeRng();
  it(`random bytes only ever raise RtspParseError and stay bounded (seed ${rng1.seed})`, () => {
    for (let round = 0; round < 300; round++) {
      const stream = Buffer.concat([
        rng1.bytes(300),
        rng1.int(2) === 0 ? b(rng1.pick(FFMPEG_REQUESTS)) : Buffer.alloc(0),
        rng1.bytes(300),
      ]);
      const result = run(randomChunks(stream, rng1, 64), LIMITS);
      expect(result.maxBuffered).toBeLessThanOrEqual(BOUND);
    }
  });

  const rng2 = makeRng();
  it(`mutated traffic parses the same however it is chunked (seed ${rng2.seed})`, () => {
    const sample = Buffer.concat([CLIENT_STREAM.subarray(0, 2500), SERVER_STREAM.subarray(0, 900)]).toString('latin1');
    for (let round = 0; round < 150; round++) {
      const stream = b(mutate(rng2, sample, ALPHABET));
      const whole = run([stream], LIMITS);
      const chunked = run(randomChunks(stream, rng2, 1 + rng2.int(200)), LIMITS);
      expect(chunked.maxBuffered).toBeLessThanOrEqual(BOUND);
      expect(summary(chunked)).toEqual(summary(whole));
    }
  });

  const rng3 = makeRng();
  it(`generated valid traffic comes back exactly (seed ${rng3.seed})`, () => {
    const TOKEN = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.!~*+';
    const VALUE = `${TOKEN} ;,="/:@[]?<>{}\\'\t`;
    for (let round = 0; round < 60; round++) {
      const expected: Plain[] = [];
      const parts: Buffer[] = [];
      for (let n = rng3.int(12); n > 0; n--) {
        const headers = new RtspHeaders();
        for (let h = rng3.int(6); h > 0; h--)
          headers.append(`X-${rng3.string(8, TOKEN)}`, rng3.string(30, VALUE).replace(/^[ \t]+|[ \t]+$/g, ''));
        const body = rng3.int(3) === 0 ? rng3.bytes(200) : Buffer.alloc(0);
        const entries = [...headers].concat(body.length > 0 ? [['Content-Length', String(body.length)]] : []);
        switch (rng3.int(3)) {
          case 0: {
            const method = rng3.pick(['OPTIONS', 'DESCRIBE', 'SETUP', 'PLAY', 'GET_PARAMETER', 'TEARDOWN', 'X-CUSTOM']);
            const uri = `rtsp://cam.local:554/${rng3.string(20, TOKEN)}`;
            parts.push(formatRequest({ method, uri, version: 'RTSP/1.0', headers, body }));
            expected.push({ kind: 'request', method, uri, headers: entries, body: body.toString('hex') });
            break;
          }
          case 1: {
            const status = rng3.pick([200, 401, 404, 454, 461, 500]);
            parts.push(formatResponse({ status, reason: reasonPhrase(status), headers, body }));
            expected.push({
              kind: 'response',
              status,
              reason: reasonPhrase(status),
              headers: entries,
              body: body.toString('hex'),
            });
            break;
          }
          default: {
            const channel = rng3.int(256);
            const payload = rng3.bytes(396);
            parts.push(formatInterleaved(channel, payload));
            expected.push({ kind: 'interleaved', channel, payload: payload.toString('hex') });
          }
        }
      }
      const stream = Buffer.concat(parts);
      const chunks = rng3.int(4) === 0 ? bytewise(stream) : randomChunks(stream, rng3, 1 + rng3.int(500));
      const result = run(chunks, LIMITS);
      expect(result.error).toBeNull();
      expect(result.items.map(plain)).toEqual(expected);
      expect(result.maxBuffered).toBeLessThanOrEqual(BOUND);
    }
  });
});
