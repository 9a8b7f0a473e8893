import { timingSafeEqual } from 'node:crypto';
import { passwordDigest } from '../soap/security.js';

// WS-Security UsernameToken with PasswordDigest (ONVIF Core §5.12): the camera side of the check,
// for the simulator. Digest = Base64(SHA-1(nonce bytes + Created + password)).

export interface UsernameToken {
  username: string;
  passwordDigest: string;
  nonce: string; // base64
  created: string; // ISO 8601
}

export type TokenCheck =
  { ok: true } | { ok: false; reason: 'missing' | 'unknown user' | 'bad digest' | 'clock skew' | 'malformed' };

export { passwordDigest };

/** Checks a token against the camera's account and clock (cameraNowMs), allowing maxSkewMs either way. */
export function checkUsernameToken(
  token: UsernameToken | null,
  account: { username: string; password: string },
  cameraNowMs: number,
  maxSkewMs = 5 * 60_000,
): TokenCheck {
  if (!token) return { ok: false, reason: 'missing' };
  const created = Date.parse(token.created);
  if (Number.isNaN(created) || token.nonce === '') return { ok: false, reason: 'malformed' };
  if (token.username !== account.username) return { ok: false, reason: 'unknown user' };
  const expected = Buffer.from(passwordDigest(token.nonce, token.created, account.password));
  const given = Buffer.from(token.passwordDigest);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return { ok: false, reason: 'bad digest' };
  // Checked after the digest so a wrong password is reported as such even with a skewed clock.
  if (Math.abs(created - cameraNowMs) > maxSkewMs) return { ok: false, reason: 'clock skew' };
  return { ok: true };
}
