import { describe, expect, it } from 'vitest';
import {
  answerChallenge,
  RtspStreamReader,
  verifyDigest,
  type DigestChallenge,
  type VerifyDigestOptions,
} from '../../../src/media/rtsp/index.js';
import { makeRng } from '../../support/fuzz.js';
import { genChallenge, mutatedAuthHeaders, QUOTED, server } from './auth-fixtures.js';
import { FFMPEG_REQUESTS, GSTREAMER_REQUESTS } from './fixtures.js';

describe('real clients (captured)', () => {
  it('verifies every Authorization ffmpeg and GStreamer sent to gst-rtsp-server', () => {
    const r = new RtspStreamReader();
    r.push(Buffer.from([...FFMPEG_REQUESTS, ...GSTREAMER_REQUESTS].join('')));
    let verified = 0;
    for (let item = r.next(); item !== null; item = r.next()) {
      if (item.kind !== 'request') continue;
      const auth = item.msg.headers.get('authorization');
      if (auth === undefined) continue;
      const opts = server(
        { method: item.msg.method, uri: item.msg.uri, realm: 'GStreamer RTSP Server' },
        { admin: 'open-sesame' },
      );
      expect(verifyDigest(auth, opts)).toEqual({ ok: true, username: 'admin', algorithm: 'MD5' });
      expect(verifyDigest(auth, { ...opts, method: 'OPTIONS' })).toEqual({ ok: false, reason: 'credentials' });
      verified++;
    }
    expect(verified).toBe(11);
  });

  // Both answered `WWW-Authenticate: Digest realm="cam", nonce="abc123", algorithm=SHA-256, qop="auth", opaque="op"`
  // followed by the same with algorithm=MD5, for DESCRIBE rtsp://127.0.0.1:8660/x as Mufasa / Circle of Life.
  const opts = server(
    { method: 'DESCRIBE', uri: 'rtsp://127.0.0.1:8660/x', realm: 'cam' },
    { Mufasa: 'Circle of Life' },
  );

  it('verifies ffmpeg 5.1, which quotes algorithm and qop', () => {
    const ffmpeg =
      'Digest username="Mufasa", realm="cam", nonce="abc123", uri="rtsp://127.0.0.1:8660/x", response="ec64f7accf0e02706e7f24d8ff2ed62e", algorithm="MD5", opaque="op", qop="auth", cnonce="ea0a51cc9e75af2f", nc=00000001';
    expect(verifyDigest(ffmpeg, opts)).toEqual({ ok: true, username: 'Mufasa', algorithm: 'MD5' });
  });

  it('verifies GStreamer 1.22, which answers without qop even when offered', () => {
    const gst =
      'Digest username="Mufasa", realm="cam", nonce="abc123", uri="rtsp://127.0.0.1:8660/x", response="a5cedc6695932e77559dff82f80c8150", opaque="op"';
    expect(verifyDigest(gst, opts)).toEqual({ ok: true, username: 'Mufasa', algorithm: 'MD5' });
    expect(verifyDigest(gst, { ...opts, requireQop: true })).toEqual({ ok: false, reason: 'qop' });
  });
});

describe('verifyDigest', () => {
  const realm = 'Edge Gateway';
  const uri = 'rtsp://gw.local:8554/cam1/main';
  const ch: DigestChallenge = {
    scheme: 'Digest',
    realm,
    nonce: 'nonce-1',
    algorithm: 'SHA-256',
    qop: ['auth'],
    opaque: 'op',
  };
  const good = answerChallenge(ch, { username: 'viewer', password: 'pw', method: 'DESCRIBE', uri, nc: 3 });
  const opts = server({ method: 'DESCRIBE', uri, realm }, { viewer: 'pw' });

  it('accepts good credentials and hands the nonce and count to the server', () => {
    const seen: Array<[string, number | null]> = [];
    expect(verifyDigest(good, { ...opts, checkNonce: (n, nc) => (seen.push([n, nc]), true) })).toEqual({
      ok: true,
      username: 'viewer',
      algorithm: 'SHA-256',
    });
    expect(seen).toEqual([['nonce-1', 3]]);
  });

  it('says why it refuses', () => {
    const calls: string[] = [];
    const counting = { ...opts, checkNonce: (n: string) => (calls.push(n), true) };
    const cases: Array<[string | undefined, Partial<VerifyDigestOptions>, string]> = [
      [undefined, {}, 'missing'],
      ['  ', {}, 'missing'],
      ['Digest realm="', {}, 'malformed'],
      ['Basic dmlld2VyOnB3', {}, 'scheme'],
      ['Bearer abc', {}, 'scheme'],
      [good, { realm: 'other' }, 'realm'],
      [good, { uri: 'rtsp://gw.local:8554/cam2/main' }, 'uri'],
      [good, { algorithms: ['MD5'] }, 'algorithm'],
      [good.replace('qop=auth', 'qop=auth-int'), {}, 'qop'],
      [`${good}, userhash=true`, {}, 'userhash'],
      [good, { password: () => 'wrong' }, 'credentials'],
      [good, { password: () => undefined }, 'credentials'],
      [good, { method: 'PLAY' }, 'credentials'],
      [good.replace(/response="[0-9a-f]+"/, 'response="00"'), {}, 'credentials'],
    ];
    for (const [header, over, reason] of cases)
      expect(verifyDigest(header, { ...counting, ...over })).toEqual({ ok: false, reason });
    expect(calls).toEqual([]); // the nonce store is never touched for bad credentials
    expect(verifyDigest(good, { ...opts, checkNonce: () => false })).toEqual({ ok: false, reason: 'stale' });
  });

  it('accepts the answer to an RFC 2069 challenge (no qop), as live555 and GStreamer send', () => {
    const legacy = answerChallenge(
      { ...ch, algorithm: 'MD5', qop: [] },
      { username: 'viewer', password: 'pw', method: 'DESCRIBE', uri },
    );
    expect(legacy).not.toMatch(/qop|nc=|cnonce/);
    const seen: Array<number | null> = [];
    expect(verifyDigest(legacy, { ...opts, checkNonce: (_n, nc) => (seen.push(nc), true) })).toEqual({
      ok: true,
      username: 'viewer',
      algorithm: 'MD5',
    });
    expect(seen).toEqual([null]);
  });
});

describe('verifyDigest fuzz', () => {
  const rng1 = makeRng();
  it(`a client's answer verifies on the server for any credentials (seed ${rng1.seed})`, () => {
    for (let i = 0; i < 300; i++) {
      const username = rng1.string(12, QUOTED);
      const password = rng1.string(16, QUOTED);
      const ch = genChallenge(rng1);
      if (ch.scheme !== 'Digest' || (ch.qop.length > 0 && !ch.qop.includes('auth'))) continue;
      const uri = `rtsp://gw/${rng1.string(10, 'abc/=')}`;
      const header = answerChallenge(ch, { username, password, method: 'PLAY', uri, nc: 1 + rng1.int(1000) });
      const opts = server({ method: 'PLAY', uri, realm: ch.realm }, { [username]: password });
      expect(verifyDigest(header, opts)).toEqual({ ok: true, username, algorithm: ch.algorithm });
      expect(verifyDigest(header, { ...opts, password: () => `${password}x` })).toEqual({
        ok: false,
        reason: 'credentials',
      });
    }
  });

  const rng2 = makeRng();
  it(`answers every mutated or random header with a verdict, never an exception (seed ${rng2.seed})`, () => {
    const opts = server(
      { method: 'GET', uri: '/dir/index.html', realm: 'testrealm@host.com' },
      { Mufasa: 'Circle Of Life' },
    );
    for (const input of mutatedAuthHeaders(rng2)) expect(typeof verifyDigest(input, opts).ok).toBe('boolean');
  });
});
