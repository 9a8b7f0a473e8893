import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { checkUsernameToken, passwordDigest } from '../../../src/onvif/simulator/wsse.js';

describe('WS-Security UsernameToken digest (camera side)', () => {
  const account = { username: 'admin', password: 'secret' };
  const now = Date.UTC(2026, 10, 22, 12);
  const created = new Date(now).toISOString();
  const nonce = Buffer.from('0123456789abcdef').toString('base64');
  const token = { username: 'admin', nonce, created, passwordDigest: passwordDigest(nonce, created, 'secret') };

  it('matches the ONVIF Core definition Base64(SHA1(nonce + created + password))', () => {
    // Independent computation of the same formula with fixed inputs.
    const expected = createHash('sha1')
      .update(Buffer.concat([Buffer.from('0123456789abcdef'), Buffer.from(created + 'secret')]))
      .digest('base64');
    expect(token.passwordDigest).toBe(expected);
  });

  it.each([
    ['a good token', token, now, { ok: true }],
    ['no token', null, now, { ok: false, reason: 'missing' }],
    ['another user', { ...token, username: 'root' }, now, { ok: false, reason: 'unknown user' }],
    [
      'a wrong password',
      { ...token, passwordDigest: passwordDigest(nonce, created, 'guess') },
      now,
      { ok: false, reason: 'bad digest' },
    ],
    ['a created time 10 minutes off', token, now + 10 * 60_000, { ok: false, reason: 'clock skew' }],
    ['a created time 4 minutes off', token, now + 4 * 60_000, { ok: true }],
    ['a garbage created time', { ...token, created: 'yesterday' }, now, { ok: false, reason: 'malformed' }],
  ])('%s', (_name, t, cameraNow, expected) => {
    expect(checkUsernameToken(t, account, cameraNow)).toEqual(expected);
  });
});
