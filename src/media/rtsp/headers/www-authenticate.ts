import { RtspParseError } from '../errors.js';
import { bareOrQuoted, isTrue, param, parseAuthList, type RawAuth } from './auth-params.js';
import { digestAlgorithm, isDigestAlgorithm, type DigestAlgorithm } from './digest.js';
import { fail, isToken, trimLws } from './syntax.js';

// WWW-Authenticate (RFC 2326 §12.44) for Basic (RFC 7617) and Digest (RFC 2617, RFC 7616): the
// challenges of a 401, and which one a client should answer.
//
// What real peers do (observed with ffmpeg 5.1 and GStreamer 1.22 against a test server):
// ffmpeg keeps the *last* Digest challenge of a 401 and sends nothing if its algorithm is not
// MD5, so a server offering SHA-256 and MD5 must send SHA-256 first and MD5 last (RFC 7616
// clients take the first one they support, so that order suits both). GStreamer, like live555,
// answers with MD5 and without qop whatever was offered, so a server that wants those clients
// must accept qop-less answers (RFC 2069 style) and offer MD5.

export interface BasicChallenge {
  scheme: 'Basic';
  /** `''` when a camera sends a bare `Basic`. */
  realm: string;
  charset?: string;
}

export interface DigestChallenge {
  scheme: 'Digest';
  realm: string;
  nonce: string;
  /** MD5 when the challenge names none. */
  algorithm: DigestAlgorithm;
  /** Offered qop values, lower-cased; empty for an RFC 2069 challenge without qop. */
  qop: string[];
  opaque?: string;
  stale?: boolean;
  domain?: string;
  charset?: string;
  userhash?: boolean;
}

export type Challenge = BasicChallenge | DigestChallenge;

/** Lower ranks win in chooseChallenge. */
const RANK: Readonly<Record<DigestAlgorithm | 'Basic', number>> = {
  'SHA-256': 0,
  'SHA-256-sess': 1,
  MD5: 2,
  'MD5-sess': 3,
  Basic: 4,
};

function toChallenge(raw: RawAuth): Challenge | null {
  const scheme = raw.scheme.toLowerCase();
  const p = raw.params;
  if (scheme === 'basic') {
    const out: BasicChallenge = { scheme: 'Basic', realm: p.get('realm') ?? '' };
    const charset = p.get('charset');
    if (charset !== undefined) out.charset = charset;
    return out;
  }
  if (scheme !== 'digest') return null;
  const realm = p.get('realm');
  const nonce = p.get('nonce');
  if (realm === undefined || nonce === undefined) fail('Digest challenge without realm or nonce');
  const algorithm = digestAlgorithm(p.get('algorithm'));
  if (algorithm === null) return null; // e.g. SHA-512-256: skipped so the caller can pick another
  const out: DigestChallenge = {
    scheme: 'Digest',
    realm,
    nonce,
    algorithm,
    qop: (p.get('qop') ?? '')
      .split(',')
      .map((q) => trimLws(q).toLowerCase())
      .filter((q) => q !== ''),
  };
  const opaque = p.get('opaque');
  if (opaque !== undefined) out.opaque = opaque;
  const stale = isTrue(p.get('stale'));
  if (stale !== undefined) out.stale = stale;
  const domain = p.get('domain');
  if (domain !== undefined) out.domain = domain;
  const charset = p.get('charset');
  if (charset !== undefined) out.charset = charset;
  const userhash = isTrue(p.get('userhash'));
  if (userhash !== undefined) out.userhash = userhash;
  return out;
}

/**
 * Every challenge of a 401's WWW-Authenticate headers (each header may hold several), in order.
 * Schemes other than Basic and Digest, and Digest algorithms other than MD5 and SHA-256 (and
 * their -sess variants), are left out. A malformed header is left out too as long as another
 * header yields a challenge, since one camera quirk should not hide a usable challenge;
 * otherwise its RtspParseError is thrown.
 */
export function parseChallenges(values: readonly string[]): Challenge[] {
  const out: Challenge[] = [];
  let firstError: RtspParseError | null = null;
  for (const value of values) {
    let parsed: Challenge[];
    try {
      parsed = parseAuthList(value)
        .map(toChallenge)
        .filter((ch): ch is Challenge => ch !== null);
    } catch (err) {
      if (!(err instanceof RtspParseError)) throw err;
      firstError ??= err;
      continue;
    }
    out.push(...parsed);
  }
  if (out.length === 0 && firstError !== null) throw firstError;
  return out;
}

export function formatChallenge(ch: Challenge): string {
  if (ch.scheme === 'Basic') {
    const parts = [param('realm', ch.realm)];
    if (ch.charset !== undefined) parts.push(bareOrQuoted('charset', ch.charset));
    return `Basic ${parts.join(', ')}`;
  }
  if (!isDigestAlgorithm(ch.algorithm)) throw new TypeError(`unsupported algorithm ${ch.algorithm}`);
  for (const q of ch.qop) if (!isToken(q)) throw new TypeError(`invalid qop ${q}`);
  const parts = [param('realm', ch.realm), param('nonce', ch.nonce), `algorithm=${ch.algorithm}`];
  if (ch.qop.length > 0) parts.push(param('qop', ch.qop.join(',')));
  if (ch.opaque !== undefined) parts.push(param('opaque', ch.opaque));
  if (ch.stale !== undefined) parts.push(`stale=${ch.stale ? 'TRUE' : 'FALSE'}`);
  if (ch.domain !== undefined) parts.push(param('domain', ch.domain));
  if (ch.charset !== undefined) parts.push(bareOrQuoted('charset', ch.charset));
  if (ch.userhash !== undefined) parts.push(`userhash=${ch.userhash ? 'true' : 'false'}`);
  return `Digest ${parts.join(', ')}`;
}

/**
 * The challenge a client should answer: SHA-256 over MD5 over Basic (plain before -sess).
 * Digest challenges that offer qop but not `auth` (only `auth-int`, which needs a body hash
 * this module does not compute) are passed over. Null when nothing is usable.
 */
export function chooseChallenge(challenges: readonly Challenge[]): Challenge | null {
  let best: Challenge | null = null;
  let bestRank = Infinity;
  for (const ch of challenges) {
    if (ch.scheme === 'Digest' && ch.qop.length > 0 && !ch.qop.includes('auth')) continue;
    const rank = RANK[ch.scheme === 'Basic' ? 'Basic' : ch.algorithm];
    if (rank < bestRank) {
      best = ch;
      bestRank = rank;
    }
  }
  return best;
}
