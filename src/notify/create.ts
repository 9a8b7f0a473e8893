import { readFileSync } from 'node:fs';
import { createSecureContext, getCACertificates } from 'node:tls';
import type { BaseLogger } from 'pino';
import type { Registry } from 'prom-client';
import { ConfigError } from '../config/errors.js';
import type { Config } from '../config/schema.js';
import { readPushHost, type PushHostEntry } from '../domain/push-hosts.js';
import type { Alert } from '../domain/types.js';
import type { SecretBox } from '../platform/secret-box.js';
import type { PushQueueRules, PushSubscriptionRecord } from '../store/store.js';
import { checkEndpoint, checkKeys } from './endpoint.js';
import { registerPushMetrics, type PushFigures } from './metrics.js';
import { Notifier, type NotifierStore, type PushTarget, type TestOutcome } from './notifier.js';
import { pushPictures, type PictureSources } from './picture.js';
import { localMinuteOf, wantsAlert } from './schedule.js';
import { PushSender } from './sender.js';
import { openVapidKeys, PushEncoder } from './vapid.js';

// Web Push as main.ts builds it (config notifications.*): the VAPID keys, the endpoint policy, the
// sender and the notifier over the store's queue, and what the API asks of them.

/** Pushes in flight at once: a slow push service never holds more than this. */
const MAX_IN_FLIGHT = 4;
/** Most bytes of a push service's answer read. */
const MAX_RESPONSE_BYTES = 64 * 1024;
/** Most rows in the queue (each a camera of a subscription): 500 subscriptions × 64 cameras fit at the defaults' scale. */
const MAX_QUEUE_ROWS = 32_000;

/** What Web Push needs of the store. */
export type PushStore = NotifierStore &
  PushFigures & {
    enablePushQueue(rules: PushQueueRules): void;
    clearPushQueue(): void;
    getOAuthAccessTokenGrant(jti: string): string | null;
  };

/** What the API is given (its PushNotifications port). */
export interface PushService {
  readonly publicKey: string;
  readonly enabled: boolean;
  readonly bounds: { perOwner: number; total: number };
  endpointProblem(endpoint: string): string | null;
  checkKeys: typeof checkKeys;
  grantOf(token: { issuer: string; tokenId: string | null }): string | null;
  sendTest(target: PushTarget): Promise<TestOutcome>;
}

/**
 * The push notifier, started when notifications.enabled: every alert written from here on queues
 * its pushes in its own transaction, and the notifier sends them. The VAPID key pair is made on the
 * first start either way (the web app may subscribe while pushes are off).
 */
export function createNotifications(
  config: Config,
  deps: {
    store: PushStore;
    secretBox: SecretBox;
    /** The local issuer's identifier (its tokens' grants can be revoked); null when it is off. */
    localIssuer: string | null;
    pictures: Omit<PictureSources, 'logger'>;
    registry: Registry;
    logger: BaseLogger;
  },
  defer: (undo: () => unknown) => void,
): PushService {
  const c = config.notifications;
  const { store, logger } = deps;
  const keys = openVapidKeys(config.gateway.data_dir, deps.secretBox);
  const hosts: PushHostEntry[] = c.push_hosts.map((entry) => {
    const read = readPushHost(entry);
    if ('problem' in read) throw new ConfigError('notifications.push_hosts', read.problem);
    return read.entry;
  });
  const check = (endpoint: string) => checkEndpoint(endpoint, hosts);
  const sender = new PushSender({
    secureContext: pushServiceCas(c.ca_file),
    timeoutMs: c.request_timeout_s * 1000,
    maxResponseBytes: MAX_RESPONSE_BYTES,
    maxSockets: MAX_IN_FLIGHT,
  });
  defer(() => sender.close());
  const encoder = new PushEncoder(keys, c.vapid_subject);
  const notifier = new Notifier({
    store,
    encode: (target, payload, headers) => encoder.request(target, payload, headers),
    send: (endpoint, request) => sender.send(endpoint, request),
    checkEndpoint: check,
    picture: pushPictures({ ...deps.pictures, logger }),
    cooldownMs: c.cooldown_s * 1000,
    ttlMs: c.ttl_s * 1000,
    maxInFlight: MAX_IN_FLIGHT,
    logger,
  });
  registerPushMetrics(deps.registry, notifier.stats, store);
  if (c.enabled) {
    store.enablePushQueue({
      wants: (s: PushSubscriptionRecord, alert: Alert) => wantsAlert(s, alert, localMinuteOf(alert.createdAt)),
      maxRows: MAX_QUEUE_ROWS,
      onChange: (change) => notifier.queueChanged(change),
    });
    notifier.start();
    defer(() => notifier.stop());
  } else if (store.pushQueueSize > 0) {
    // Turned off: what was waiting would be stale by the time they are turned on again.
    store.clearPushQueue();
  }
  const localIssuer = deps.localIssuer;
  return {
    publicKey: keys.publicKey,
    enabled: c.enabled,
    bounds: { perOwner: c.max_subscriptions_per_user, total: c.max_subscriptions },
    endpointProblem: (endpoint) => {
      const result = check(endpoint);
      return result.ok ? null : result.problem;
    },
    checkKeys,
    grantOf: (token) =>
      localIssuer !== null && token.issuer === localIssuer && token.tokenId !== null
        ? store.getOAuthAccessTokenGrant(token.tokenId)
        : null,
    sendTest: (target) => notifier.sendTest(target),
  };
}

/**
 * The CAs a push service's certificate must chain to: the system's (Debian's ca-certificates),
 * NODE_EXTRA_CA_CERTS, and notifications.ca_file (a self-hosted push service's own CA). Made once:
 * a context per connection would parse a few hundred certificates each time.
 */
function pushServiceCas(caFile: string | null) {
  const system = getCACertificates('system');
  const ca = [...(system.length > 0 ? system : getCACertificates('bundled')), ...getCACertificates('extra')];
  if (caFile !== null) {
    try {
      ca.push(readFileSync(caFile, 'utf8'));
    } catch (err) {
      throw new ConfigError(
        'notifications.ca_file',
        `cannot be read: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
      );
    }
  }
  return createSecureContext({ ca });
}
