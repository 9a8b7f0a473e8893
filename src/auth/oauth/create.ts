import type { BaseLogger } from 'pino';
import type { Config } from '../../config/schema.js';
import { isOwnHost } from '../../config/lan-address.js';
import type { SecretBox } from '../../platform/secret-box.js';
import type { Store } from '../../store/store.js';
import type { LocalIssuer } from '../local-issuer.js';
import { localAccessTokenId } from '../revocation.js';
import type { TokenCheck } from '../verifier.js';
import { AuthorizationServer, openTokenKey, type OAuthStore } from './authorization-server.js';
import type { FirstPartyHosts } from './first-party.js';
import { LoginSessions } from './login-sessions.js';
import { LoginRateLimiter } from './login-rate-limit.js';

/** The local authorization server with what its pages need: sign-in sessions, login throttling, the web app's hosts. */
export interface LocalOAuth {
  server: AuthorizationServer;
  /** The issuer identifier (an https URL): metadata, and RFC 9207's iss in every redirect. */
  issuer: string;
  users: Pick<Store, 'getLocalUser' | 'updateLocalUserPassword'>;
  sessions: LoginSessions;
  /** Failed logins, by username and by client address. */
  limits: { byUser: LoginRateLimiter; byAddress: LoginRateLimiter };
  /** Which Host headers are this box, for the web app's own client (first-party.ts). */
  firstParty: FirstPartyHosts;
  logger: BaseLogger;
  /** ms; the clock of codes, sessions and login throttling (tests set it). */
  now?: () => number;
}

/** The local authorization server of config auth.local, for the issuer the gateway signs with. */
export function createLocalOAuth(
  config: Config,
  deps: {
    store: OAuthStore & Pick<Store, 'updateLocalUserPassword'>;
    localIssuer: LocalIssuer;
    verifier: TokenCheck;
    secretBox: SecretBox;
    apiPort: number;
    logger: BaseLogger;
    now?: () => number;
  },
): LocalOAuth {
  const { localIssuer, logger } = deps;
  const now = deps.now ? { now: deps.now } : {};
  return {
    server: new AuthorizationServer({
      store: deps.store,
      issuer: localIssuer,
      tokenKey: openTokenKey(config.gateway.data_dir, deps.secretBox),
      accessTtlS: config.auth.local.access_ttl_s,
      refreshTtlS: config.auth.local.refresh_ttl_s,
      accessTokenId: localAccessTokenId(deps.verifier, localIssuer.issuer),
      logger,
      ...now,
    }),
    issuer: localIssuer.issuer,
    users: deps.store,
    sessions: new LoginSessions(),
    limits: { byUser: new LoginRateLimiter(), byAddress: new LoginRateLimiter() },
    firstParty: {
      apiPort: deps.apiPort,
      isOwnHost: (host) => isOwnHost(host, config.api.public_host ? [config.api.public_host] : []),
    },
    logger,
    ...now,
  };
}
