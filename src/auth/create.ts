import type { BaseLogger } from 'pino';
import type { Registry } from 'prom-client';
import type { Config } from '../config/schema.js';
import type { SecretBox } from '../platform/secret-box.js';
import { openLocalIssuer, startKeyRotation, type LocalIssuer } from './local-issuer.js';
import { tokenRevocation, withRevocation } from './revocation.js';
import { TokenVerifier, type TokenCheck, type VerifiedToken } from './verifier.js';

/** What token checking needs of the store: the local authorization server's revoked grants. */
export interface RevokedTokens {
  isAccessTokenRevoked(jti: string): boolean;
}

export interface TokenChecks {
  /** The gateway's own issuer (auth.local); null when it is off. */
  localIssuer: LocalIssuer | null;
  /** Signature, issuer, audience and expiry of a token, from any configured issuer. */
  verifier: TokenVerifier;
  /** What the API checks: the verifier, and a local token whose grant was revoked is refused until it expires. */
  apiVerifier: TokenCheck;
  /**
   * Whether a token verified earlier has had its grant revoked since (held streams look again); null: no local issuer.
   */
  revoked: ((token: Pick<VerifiedToken, 'issuer' | 'tokenId'>) => boolean) | null;
}

/**
 * The local issuer (its keys, the issuer URL for the API's port, the rotation schedule) and the
 * token verifier over every configured issuer (config auth.*). `defer` is given what stops them.
 */
export async function createTokenChecks(
  config: Config,
  deps: { secretBox: SecretBox; apiPort: number; revocations: RevokedTokens; registry: Registry; logger: BaseLogger },
  defer: (undo: () => unknown) => void,
): Promise<TokenChecks> {
  const localIssuer = config.auth.local.enabled ? await openLocalIssuer(config, deps.secretBox, deps.apiPort) : null;
  if (localIssuer) defer(await startKeyRotation(localIssuer, config.auth.local.key_rotation_days, deps.logger));
  const verifier = new TokenVerifier({
    issuers: config.auth.issuers,
    localIssuer,
    dataDir: config.gateway.data_dir,
    clockToleranceS: config.auth.clock_tolerance_s,
    requireAtJwt: config.auth.require_at_jwt,
    jwksMaxStaleS: config.auth.jwks_max_stale_s,
    jwksRefreshS: config.auth.jwks_refresh_s,
    jwksCooldownS: config.auth.jwks_cooldown_s,
    logger: deps.logger,
    registry: deps.registry,
  });
  await verifier.start();
  defer(() => verifier.close());
  const isRevoked = (jti: string) => deps.revocations.isAccessTokenRevoked(jti);
  return {
    localIssuer,
    verifier,
    apiVerifier: localIssuer ? withRevocation(verifier, localIssuer.issuer, isRevoked) : verifier,
    revoked: localIssuer ? tokenRevocation(localIssuer.issuer, isRevoked) : null,
  };
}
