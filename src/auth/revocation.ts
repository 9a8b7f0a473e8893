import { decodeJwt } from 'jose';
import { InvalidTokenError } from './errors.js';
import type { TokenCheck, VerifiedToken } from './verifier.js';

// The resource server's check of the local authorization server's revocations: a token whose grant
// was revoked (a replayed code or refresh token, a removed client or user) is refused until it
// expires. Signature and claims are the verifier's business; this runs after it, on every request,
// cached tokens included.

/** The store's answer for a local access token's jti. */
export type IsRevoked = (jti: string) => boolean;

/** Whether a verified token's grant was revoked: only the local issuer's tokens with a jti can be. */
export function tokenRevocation(
  localIssuer: string,
  isRevoked: IsRevoked,
): (token: Pick<VerifiedToken, 'issuer' | 'tokenId'>) => boolean {
  return (token) => token.issuer === localIssuer && token.tokenId !== null && isRevoked(token.tokenId);
}

export function withRevocation(verifier: TokenCheck, localIssuer: string, isRevoked: IsRevoked): TokenCheck {
  const revoked = tokenRevocation(localIssuer, isRevoked);
  const refuseRevoked = (verified: VerifiedToken): VerifiedToken => {
    if (revoked(verified)) throw new InvalidTokenError('token revoked');
    return verified;
  };
  const check: TokenCheck = {
    async verify(token: string): Promise<VerifiedToken> {
      return refuseRevoked(await verifier.verify(token));
    },
  };
  const cached = verifier.cached?.bind(verifier);
  if (cached !== undefined) {
    check.cached = (token) => {
      const verified = cached(token);
      return verified === null ? null : refuseRevoked(verified);
    };
  }
  return check;
}

/**
 * The jti of a valid access token of the local issuer, else null: what token revocation (RFC 7009)
 * looks the grant up by. The issuer is read from the unverified claims first, so a token naming
 * another issuer is never sent to the verifier (which could fetch that issuer's keys).
 */
export function localAccessTokenId(
  verifier: TokenCheck,
  localIssuer: string,
): (token: string) => Promise<string | null> {
  return async (token) => {
    let claimedIssuer: unknown;
    try {
      claimedIssuer = decodeJwt(token).iss;
    } catch {
      return null;
    }
    if (claimedIssuer !== localIssuer) return null;
    try {
      const verified = await verifier.verify(token);
      return verified.issuer === localIssuer ? verified.tokenId : null;
    } catch {
      return null;
    }
  };
}
