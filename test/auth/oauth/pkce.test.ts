import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { OAuthError } from '../../../src/auth/oauth/errors.js';
import {
  challengeOf,
  checkAuthorizationPkce,
  checkTokenPkce,
  isValidChallenge,
  isValidVerifier,
  verifyPkce,
  type PkceAuthorizeRefusal,
  type PkceTokenRefusal,
} from '../../../src/auth/oauth/pkce.js';
import { makeRng, mutate } from '../../support/fuzz.js';

// RFC 7636 Appendix B.
const RFC_VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
const RFC_CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';
const UNRESERVED = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~';

describe('RFC 7636 appendix B', () => {
  it('computes the example challenge', () => {
    expect(challengeOf(RFC_VERIFIER)).toBe(RFC_CHALLENGE);
  });
  it('verifies the example pair', () => {
    expect(verifyPkce(RFC_VERIFIER, RFC_CHALLENGE)).toBe(true);
  });
  it('refuses plain (challenge = verifier)', () => {
    expect(verifyPkce(RFC_VERIFIER, RFC_VERIFIER)).toBe(false);
  });
});

describe('isValidVerifier', () => {
  const cases: Array<[string, unknown, boolean]> = [
    ['RFC example (43)', RFC_VERIFIER, true],
    ['42 characters', 'a'.repeat(42), false],
    ['43 characters', 'a'.repeat(43), true],
    ['128 characters', 'a'.repeat(128), true],
    ['129 characters', 'a'.repeat(129), false],
    ['every allowed character', (UNRESERVED + UNRESERVED).slice(0, 128), true],
    ['empty', '', false],
    ['space', 'a'.repeat(42) + ' ', false],
    ['plus (base64, not base64url)', 'a'.repeat(42) + '+', false],
    ['slash', 'a'.repeat(42) + '/', false],
    ['equals padding', 'a'.repeat(42) + '=', false],
    ['percent-encoded', 'a'.repeat(40) + '%41', false],
    ['non-ASCII letter', 'a'.repeat(42) + 'é', false],
    ['NUL', 'a'.repeat(42) + '\0', false],
    ['trailing newline', 'a'.repeat(43) + '\n', false],
    ['number', 12345, false],
    ['undefined', undefined, false],
    ['array', ['a'.repeat(43)], false],
  ];
  it.each(cases)('%s', (_name, value, expected) => {
    expect(isValidVerifier(value)).toBe(expected);
  });
});

describe('isValidChallenge', () => {
  const cases: Array<[string, unknown, boolean]> = [
    ['RFC example', RFC_CHALLENGE, true],
    ['42 characters', RFC_CHALLENGE.slice(0, 42), false],
    ['44 characters', RFC_CHALLENGE + 'A', false],
    ['with padding', RFC_CHALLENGE + '=', false],
    ['standard base64 alphabet', RFC_CHALLENGE.replace('-', '+'), false],
    ['last character with low bits set, no SHA-256 output', RFC_CHALLENGE.slice(0, 42) + 'N', false],
    ['a verifier-like dot', RFC_CHALLENGE.slice(0, 41) + '.M', false],
    ['not a string', 43, false],
  ];
  it.each(cases)('%s', (_name, value, expected) => {
    expect(isValidChallenge(value)).toBe(expected);
  });

  it('accepts the challenge of any valid verifier', () => {
    for (let i = 0; i < 200; i++)
      expect(isValidChallenge(challengeOf(randomBytes(32).toString('base64url')))).toBe(true);
  });
});

describe('challengeOf', () => {
  it('is BASE64URL(SHA256(ASCII(verifier)))', () => {
    const v = 'x'.repeat(128);
    expect(challengeOf(v)).toBe(createHash('sha256').update(v).digest('base64url'));
  });
  it.each([['a'.repeat(42)], ['a'.repeat(129)], ['a'.repeat(42) + '!']])('throws for an invalid verifier %#', (v) => {
    expect(() => challengeOf(v)).toThrow(TypeError);
  });
});

describe('verifyPkce', () => {
  const other = 'b'.repeat(43);
  const cases: Array<[string, string, string, boolean]> = [
    ['matching 128-character verifier', 'Z'.repeat(128), challengeOf('Z'.repeat(128)), true],
    ['other verifier', other, RFC_CHALLENGE, false],
    ['verifier one character short', RFC_VERIFIER.slice(0, -1), RFC_CHALLENGE, false],
    ['verifier with a character changed', 'e' + RFC_VERIFIER.slice(1), RFC_CHALLENGE, false],
    ['challenge case changed', RFC_VERIFIER, RFC_CHALLENGE.toLowerCase(), false],
    [
      '42-character verifier whose hash is the challenge',
      'a'.repeat(42),
      createHash('sha256').update('a'.repeat(42)).digest('base64url'),
      false,
    ],
    [
      '129-character verifier whose hash is the challenge',
      'a'.repeat(129),
      createHash('sha256').update('a'.repeat(129)).digest('base64url'),
      false,
    ],
    ['empty verifier', '', RFC_CHALLENGE, false],
    ['empty challenge', RFC_VERIFIER, '', false],
    ['padded challenge', RFC_VERIFIER, RFC_CHALLENGE + '=', false],
  ];
  it.each(cases)('%s', (_name, verifier, challenge, expected) => {
    expect(verifyPkce(verifier, challenge)).toBe(expected);
  });
});

describe('checkAuthorizationPkce', () => {
  type Case = [
    string,
    string | undefined,
    string | undefined,
    boolean,
    PkceAuthorizeRefusal | { challenge: string | null },
  ];
  const cases: Case[] = [
    ['public client with S256', RFC_CHALLENGE, 'S256', true, { challenge: RFC_CHALLENGE }],
    ['confidential client with S256', RFC_CHALLENGE, 'S256', false, { challenge: RFC_CHALLENGE }],
    ['confidential client without PKCE', undefined, undefined, false, { challenge: null }],
    ['public client without PKCE', undefined, undefined, true, 'challenge_required'],
    ['plain', RFC_VERIFIER, 'plain', true, 'method_not_supported'],
    ['plain, confidential client', RFC_VERIFIER, 'plain', false, 'method_not_supported'],
    ['lower-case s256', RFC_CHALLENGE, 's256', true, 'method_not_supported'],
    ['S512', RFC_CHALLENGE, 'S512', true, 'method_not_supported'],
    ['challenge without method (defaults to plain)', RFC_CHALLENGE, undefined, true, 'method_missing'],
    ['method without challenge', undefined, 'S256', true, 'method_without_challenge'],
    ['method without challenge, confidential', undefined, 'S256', false, 'method_without_challenge'],
    ['challenge too short', RFC_CHALLENGE.slice(1), 'S256', true, 'challenge_malformed'],
    ['challenge with padding', RFC_CHALLENGE + '=', 'S256', true, 'challenge_malformed'],
    ['a verifier sent as the challenge', 'a'.repeat(64), 'S256', true, 'challenge_malformed'],
  ];
  it.each(cases)('%s', (_name, codeChallenge, codeChallengeMethod, publicClient, expected) => {
    const result = checkAuthorizationPkce({ codeChallenge, codeChallengeMethod, publicClient });
    if (typeof expected === 'string') {
      expect(result.ok).toBe(false);
      if (result.ok) return;
      expect(result.refusal).toBe(expected);
      expect(result.error).toBeInstanceOf(OAuthError);
      expect(result.error.code).toBe('invalid_request');
    } else {
      expect(result).toEqual({ ok: true, codeChallenge: expected.challenge });
    }
  });
});

describe('checkTokenPkce', () => {
  type Case = [string, string | null, string | null | undefined, string | undefined, boolean, PkceTokenRefusal | 'ok'];
  const cases: Case[] = [
    ['public client, right verifier', RFC_CHALLENGE, 'S256', RFC_VERIFIER, true, 'ok'],
    ['confidential client, right verifier', RFC_CHALLENGE, 'S256', RFC_VERIFIER, false, 'ok'],
    ['stored method omitted means S256', RFC_CHALLENGE, undefined, RFC_VERIFIER, true, 'ok'],
    ['stored method null means S256', RFC_CHALLENGE, null, RFC_VERIFIER, true, 'ok'],
    ['confidential client, no PKCE at all', null, null, undefined, false, 'ok'],
    ['wrong verifier', RFC_CHALLENGE, 'S256', 'b'.repeat(43), true, 'verifier_mismatch'],
    ['plain: verifier equals the challenge', RFC_CHALLENGE, 'S256', RFC_CHALLENGE, true, 'verifier_mismatch'],
    ['challenge without verifier, public', RFC_CHALLENGE, 'S256', undefined, true, 'verifier_missing'],
    ['challenge without verifier, confidential', RFC_CHALLENGE, 'S256', undefined, false, 'verifier_missing'],
    ['verifier without challenge (downgrade), confidential', null, null, RFC_VERIFIER, false, 'verifier_unexpected'],
    ['verifier without challenge (downgrade), public', null, null, RFC_VERIFIER, true, 'verifier_unexpected'],
    ['public client, code issued without challenge', null, null, undefined, true, 'challenge_required'],
    ['42-character verifier', challengeOf('a'.repeat(43)), 'S256', 'a'.repeat(42), true, 'verifier_malformed'],
    ['129-character verifier', challengeOf('a'.repeat(128)), 'S256', 'a'.repeat(129), true, 'verifier_malformed'],
    ['verifier with a space', RFC_CHALLENGE, 'S256', RFC_VERIFIER + ' ', true, 'verifier_malformed'],
    ['stored plain method', RFC_VERIFIER, 'plain', RFC_VERIFIER, true, 'method_not_supported'],
  ];
  it.each(cases)('%s', (_name, codeChallenge, codeChallengeMethod, codeVerifier, publicClient, expected) => {
    const result = checkTokenPkce({ codeChallenge, codeChallengeMethod, codeVerifier, publicClient });
    if (expected === 'ok') {
      expect(result).toEqual({ ok: true });
      return;
    }
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.refusal).toBe(expected);
    expect(result.error.code).toBe('invalid_grant');
    expect(result.error.description).not.toContain(RFC_VERIFIER);
  });

  it('a verifier for another code is refused', () => {
    const a = randomBytes(32).toString('base64url');
    const b = randomBytes(32).toString('base64url');
    const result = checkTokenPkce({ codeChallenge: challengeOf(a), codeVerifier: b, publicClient: true });
    expect(result.ok).toBe(false);
  });
});

describe('PKCE fuzz', () => {
  const rng = makeRng();
  it(`never throws, and only the true verifier passes (seed ${rng.seed})`, () => {
    const alphabet = UNRESERVED + '+/= %\u00e9\u0000\n';
    for (let i = 0; i < 3000; i++) {
      const verifier = rng.string(140, UNRESERVED);
      const valid = verifier.length >= 43 && verifier.length <= 128;
      expect(isValidVerifier(verifier)).toBe(valid);
      if (!valid) {
        expect(() => challengeOf(verifier)).toThrow(TypeError);
        continue;
      }
      const challenge = challengeOf(verifier);
      expect(verifyPkce(verifier, challenge)).toBe(true);

      const forged = mutate(rng, verifier, alphabet);
      if (forged !== verifier) expect(verifyPkce(forged, challenge)).toBe(false);
      const otherChallenge = mutate(rng, challenge, alphabet);
      if (otherChallenge !== challenge) expect(verifyPkce(verifier, otherChallenge)).toBe(false);

      const junk = rng.bytes(150).toString('latin1');
      expect(() =>
        checkTokenPkce({ codeChallenge: challenge, codeVerifier: junk, publicClient: rng.int(2) === 0 }),
      ).not.toThrow();
      expect(() =>
        checkAuthorizationPkce({
          codeChallenge: junk,
          codeChallengeMethod: rng.pick(['S256', 'plain', junk]),
          publicClient: true,
        }),
      ).not.toThrow();
      expect(verifyPkce(junk, challenge)).toBe(false);
    }
  });
});
