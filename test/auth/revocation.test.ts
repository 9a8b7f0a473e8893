import { describe, expect, it } from 'vitest';
import { InvalidTokenError } from '../../src/auth/errors.js';
import { withRevocation } from '../../src/auth/revocation.js';
import type { VerifiedToken } from '../../src/auth/verifier.js';

const token = (issuer: string, tokenId: string | null): VerifiedToken => ({
  issuer,
  subject: 's',
  scopes: new Set(),
  expiresAt: Date.now() + 60_000,
  clientId: null,
  tokenId,
});

describe('withRevocation', () => {
  const revoked = new Set(['jti-revoked']);
  const check = (t: VerifiedToken) =>
    withRevocation({ verify: async () => t }, 'https://gw.local', (jti) => revoked.has(jti)).verify('x');

  it('refuses a local token whose jti is revoked, with a 401 reason', async () => {
    await expect(check(token('https://gw.local', 'jti-revoked'))).rejects.toThrow(InvalidTokenError);
    await expect(check(token('https://gw.local', 'jti-revoked'))).rejects.toMatchObject({ reason: 'token revoked' });
  });

  it("passes live local tokens, tokens without jti, and other issuers' tokens", async () => {
    expect((await check(token('https://gw.local', 'jti-live'))).tokenId).toBe('jti-live');
    expect((await check(token('https://gw.local', null))).tokenId).toBeNull();
    expect((await check(token('https://cloud.example', 'jti-revoked'))).issuer).toBe('https://cloud.example');
  });

  it("lets the verifier's own refusals through unchanged", async () => {
    const failing = withRevocation(
      { verify: async () => Promise.reject(new InvalidTokenError('token expired')) },
      'i',
      () => false,
    );
    await expect(failing.verify('x')).rejects.toMatchObject({ reason: 'token expired' });
  });

  it('applies the revocation to cached answers too, and passes a miss on as null', () => {
    const seen = new Map([
      ['a', token('https://gw.local', 'jti-revoked')],
      ['b', token('https://gw.local', 'jti-live')],
    ]);
    const wrapped = withRevocation(
      { verify: async () => Promise.reject(new Error('not used')), cached: (t) => seen.get(t) ?? null },
      'https://gw.local',
      (jti) => revoked.has(jti),
    );
    expect(() => wrapped.cached?.('a')).toThrow('token revoked');
    expect(wrapped.cached?.('b')?.tokenId).toBe('jti-live');
    expect(wrapped.cached?.('c')).toBeNull();
    expect('cached' in withRevocation({ verify: () => Promise.resolve(token('i', null)) }, 'i', () => false)).toBe(
      false,
    );
  });
});
