// PKCE (RFC 7636), S256 only. "plain" is refused: it protects nothing once the authorization
// request has been seen, and accepting it would let an attacker downgrade a client that offers both.

import { createHash, timingSafeEqual } from 'node:crypto';
import { OAuthError } from './errors.js';

export const PKCE_METHOD = 'S256';

// RFC 7636 §4.1: code-verifier = 43*128unreserved, unreserved = ALPHA / DIGIT / "-" / "." / "_" / "~".
const VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;
// BASE64URL(SHA256(...)) without padding: 32 bytes are 43 characters, and the last one carries
// only 4 bits, so its two low bits are zero. A challenge ending otherwise is no SHA-256 output
// at all and could never be met; refusing it at /authorize tells the client now, not at /token.
const CHALLENGE = /^[A-Za-z0-9_-]{42}[AEIMQUYcgkosw048]$/;

export function isValidVerifier(verifier: unknown): verifier is string {
  return typeof verifier === 'string' && VERIFIER.test(verifier);
}

export function isValidChallenge(challenge: unknown): challenge is string {
  return typeof challenge === 'string' && CHALLENGE.test(challenge);
}

/** The S256 code_challenge of a verifier. Throws TypeError for a verifier RFC 7636 does not allow. */
export function challengeOf(verifier: string): string {
  if (!isValidVerifier(verifier))
    throw new TypeError('not a valid PKCE code_verifier (43-128 characters of A-Z a-z 0-9 - . _ ~)');
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

/**
 * Whether `verifier` is the one `challenge` was made from. False for any malformed input; the
 * comparison takes the same time wherever the two differ.
 */
export function verifyPkce(verifier: string, challenge: string): boolean {
  if (!isValidVerifier(verifier) || !isValidChallenge(challenge)) return false;
  const expected = Buffer.from(challengeOf(verifier), 'ascii');
  const given = Buffer.from(challenge, 'ascii');
  // Both are 43 bytes here; the length test only keeps timingSafeEqual from throwing.
  return expected.length === given.length && timingSafeEqual(expected, given);
}

/** Why /oauth/authorize refuses the PKCE parameters; each maps to invalid_request (RFC 7636 §4.4.1). */
export type PkceAuthorizeRefusal =
  /** A public client sent no code_challenge. */
  | 'challenge_required'
  /** code_challenge without code_challenge_method: RFC 7636 then means plain. */
  | 'method_missing'
  /** plain, s256 or anything but S256. */
  | 'method_not_supported'
  | 'method_without_challenge'
  | 'challenge_malformed';

/** Why /oauth/token refuses the code_verifier; each maps to invalid_grant (RFC 7636 §4.6). */
export type PkceTokenRefusal =
  /** A public client redeems a code that was issued without a challenge. */
  | 'challenge_required'
  /** The code was bound to a method other than S256 (storage from elsewhere): never honoured. */
  | 'method_not_supported'
  /** The code has a challenge and the request no verifier. */
  | 'verifier_missing'
  /** The code has no challenge and the request a verifier: a downgrade or an injected code. */
  | 'verifier_unexpected'
  | 'verifier_malformed'
  | 'verifier_mismatch';

export type PkceAuthorizeResult =
  | { ok: true; codeChallenge: string | null }
  | { ok: false; refusal: PkceAuthorizeRefusal; error: OAuthError<'invalid_request'> };

export type PkceTokenResult =
  { ok: true } | { ok: false; refusal: PkceTokenRefusal; error: OAuthError<'invalid_grant'> };

const AUTHORIZE_DESCRIPTIONS: Record<PkceAuthorizeRefusal, string> = {
  challenge_required: 'code_challenge is required for this client (PKCE, S256)',
  method_missing: 'code_challenge_method is required and must be S256',
  method_not_supported: 'code_challenge_method must be S256',
  method_without_challenge: 'code_challenge_method given without code_challenge',
  challenge_malformed: 'code_challenge must be 43 characters of base64url (S256)',
};

const TOKEN_DESCRIPTIONS: Record<PkceTokenRefusal, string> = {
  challenge_required: 'authorization code was issued without PKCE, which this client requires',
  method_not_supported: 'authorization code is bound to an unsupported PKCE method',
  verifier_missing: 'code_verifier is required',
  verifier_unexpected: 'code_verifier given for an authorization code issued without code_challenge',
  verifier_malformed: 'code_verifier must be 43-128 characters of A-Z a-z 0-9 - . _ ~',
  verifier_mismatch: 'code_verifier does not match the code_challenge',
};

/**
 * The PKCE part of an authorization request, once the client is known (only then do we know
 * whether it is public). A confidential client may leave PKCE out; whoever sends it, sends S256.
 * On success, `codeChallenge` is what to store with the code (null: none).
 */
export function checkAuthorizationPkce(input: {
  codeChallenge: string | undefined;
  codeChallengeMethod: string | undefined;
  publicClient: boolean;
}): PkceAuthorizeResult {
  const { codeChallenge, codeChallengeMethod, publicClient } = input;
  if (codeChallenge === undefined) {
    if (codeChallengeMethod !== undefined) return authorizeRefusal('method_without_challenge');
    if (publicClient) return authorizeRefusal('challenge_required');
    return { ok: true, codeChallenge: null };
  }
  if (codeChallengeMethod === undefined) return authorizeRefusal('method_missing');
  // Case-sensitive: RFC 7636 names the method "S256" and we do not guess at others.
  if (codeChallengeMethod !== PKCE_METHOD) return authorizeRefusal('method_not_supported');
  if (!isValidChallenge(codeChallenge)) return authorizeRefusal('challenge_malformed');
  return { ok: true, codeChallenge };
}

/**
 * The PKCE part of an authorization_code token request. `codeChallenge` (and optionally its
 * method) is what was stored with the code; `codeVerifier` is the request's, undefined when absent.
 */
export function checkTokenPkce(input: {
  codeChallenge: string | null;
  codeChallengeMethod?: string | null;
  codeVerifier: string | undefined;
  publicClient: boolean;
}): PkceTokenResult {
  const { codeChallenge, codeVerifier, publicClient } = input;
  if (codeChallenge === null) {
    // RFC 9700 §2.1.1: a verifier for a code without a challenge is refused, or an attacker who
    // strips the challenge from a victim's request could redeem the code with any verifier.
    if (codeVerifier !== undefined) return tokenRefusal('verifier_unexpected');
    if (publicClient) return tokenRefusal('challenge_required');
    return { ok: true };
  }
  const method = input.codeChallengeMethod ?? PKCE_METHOD;
  if (method !== PKCE_METHOD) return tokenRefusal('method_not_supported');
  if (codeVerifier === undefined) return tokenRefusal('verifier_missing');
  if (!isValidVerifier(codeVerifier)) return tokenRefusal('verifier_malformed');
  if (!verifyPkce(codeVerifier, codeChallenge)) return tokenRefusal('verifier_mismatch');
  return { ok: true };
}

function authorizeRefusal(refusal: PkceAuthorizeRefusal): PkceAuthorizeResult {
  return { ok: false, refusal, error: new OAuthError('invalid_request', AUTHORIZE_DESCRIPTIONS[refusal]) };
}

function tokenRefusal(refusal: PkceTokenRefusal): PkceTokenResult {
  return { ok: false, refusal, error: new OAuthError('invalid_grant', TOKEN_DESCRIPTIONS[refusal]) };
}
