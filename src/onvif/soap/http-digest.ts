import { createHash, randomBytes } from 'node:crypto';

// HTTP Digest (RFC 7616 with MD5, qop=auth, as IP cameras implement it): some firmware wants it on
// top of, or instead of, the WS-UsernameToken. Pure: parses a challenge, builds the answer.

export interface DigestChallenge {
  realm: string;
  nonce: string;
  qop: string | null;
  opaque: string | null;
  algorithm: string | null;
}

/** The Digest challenge of a WWW-Authenticate header, or null when there is none we can answer. */
export function parseDigestChallenge(header: string | string[] | undefined): DigestChallenge | null {
  for (const h of Array.isArray(header) ? header : header ? [header] : []) {
    if (!/^\s*Digest\s/i.test(h)) continue;
    const params = new Map<string, string>();
    for (const m of h.matchAll(/([a-z]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))/gi))
      params.set(m[1]!.toLowerCase(), (m[2] ?? m[3] ?? '').replace(/\\(.)/g, '$1'));
    const realm = params.get('realm');
    const nonce = params.get('nonce');
    const algorithm = params.get('algorithm') ?? null;
    if (realm === undefined || !nonce || (algorithm && algorithm.toUpperCase() !== 'MD5')) continue;
    const qops = (params.get('qop') ?? '').split(',').map((q) => q.trim());
    return {
      realm,
      nonce,
      qop: qops.includes('auth') ? 'auth' : null,
      opaque: params.get('opaque') ?? null,
      algorithm,
    };
  }
  return null;
}

const md5 = (s: string) => createHash('md5').update(s, 'utf8').digest('hex');
const quote = (s: string) => `"${s.replace(/["\\]/g, '\\$&')}"`;

export function digestAuthorization(
  c: DigestChallenge,
  account: { username: string; password: string },
  method: string,
  uri: string,
  cnonce = randomBytes(8).toString('hex'),
  nc = '00000001',
): string {
  const ha1 = md5(`${account.username}:${c.realm}:${account.password}`);
  const ha2 = md5(`${method}:${uri}`);
  const response = c.qop ? md5(`${ha1}:${c.nonce}:${nc}:${cnonce}:${c.qop}:${ha2}`) : md5(`${ha1}:${c.nonce}:${ha2}`);
  const parts = [
    `username=${quote(account.username)}`,
    `realm=${quote(c.realm)}`,
    `nonce=${quote(c.nonce)}`,
    `uri=${quote(uri)}`,
    `response=${quote(response)}`,
  ];
  if (c.qop) parts.push(`qop=${c.qop}`, `nc=${nc}`, `cnonce=${quote(cnonce)}`);
  if (c.opaque !== null) parts.push(`opaque=${quote(c.opaque)}`);
  if (c.algorithm) parts.push(`algorithm=${c.algorithm}`);
  return `Digest ${parts.join(', ')}`;
}
