import { InvalidTokenError } from './errors.js';
import type { TokenCheck, VerifiedToken } from './verifier.js';

// The resource server's check of the local authorization server's revocations: a token whose grant
// was revoked (a replayed code or refresh token, a removed client or user) is refused until it
// expires. Signature and claims are the verifier's business; this runs after it, on every request,
// cached tokens included.

export function withRevocation(verifier: TokenCheck, localIssuer: string, isRevoked: (jti: string) => boolean): TokenCheck {
  const refuseRevoked = (verified: VerifiedToken): VerifiedToken => {
    if (verified.issuer === localIssuer && verified.tokenId !== null && isRevoked(verified.tokenId)) throw new InvalidTokenError('token revoked');
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
