import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifySchemaCompiler,
} from 'fastify';
import type { Registry } from 'prom-client';
import type { TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import { makeClientErrorHandler } from './client-error.js';
import { paramsReader } from './coerce.js';
import { REPEAT_LOG_INTERVAL_MS, throttledLog } from '../daemon/throttled-log.js';
import type { TokenCheck } from '../auth/verifier.js';
import { authenticate } from './authenticate.js';
import { ApiError, sendApiError, toApiError } from './errors.js';
import { useStrictJsonParser } from './json-body.js';
import { finishOpenApiDocument } from './openapi-document.js';
import type {
  DeviceControl,
  DeviceSetup,
  DeviceSnapshots,
  PushNotifications,
  StreamAddresses,
  SystemFacts,
} from './ports.js';
import { alertRoutes, type AlertsStore } from './routes/alerts.js';
import { deviceRoutes, type DeviceStore } from './routes/devices.js';
import { deviceSetupRoutes } from './routes/device-setup.js';
import { oauthRoutes, type OAuthRoutesOptions } from './routes/oauth.js';
import { liveRoutes, type LiveRoutesOptions } from './routes/live.js';
import { footageRoutes, type FootageAccess, type FootageRoutesStore } from './routes/footage.js';
import { recordingRoutes, type RecordingStore } from './routes/recordings.js';
import { systemRoutes } from './routes/system.js';
import { systemStatusRoutes } from './routes/system-status.js';
import { eventRoutes, type EventRoutesOptions } from './routes/events.js';
import type { DetectorHealth } from '../detect/service.js';
import { addRouteOnResponse } from './route-hooks.js';
import { requestMetrics, type RequestMetrics } from './request-metrics.js';
import { strictQuery } from './strict-query.js';
import { guardConnections } from './connection-guard.js';
import { redactUrl } from './log-url.js';
import { playbackRoutes, type PlaybackStore } from './routes/playback.js';
import type { MintPlayback } from '../domain/present.js';
import type { TicketSigner } from '../media/ticket.js';
import { DEFAULT_WEB_ROOT, webApp, type WebAppOptions } from './web-app.js';
import { snapshotRoutes, type SnapshotStore } from './routes/snapshot.js';
import { pushRoutes, type PushRoutesStore } from './routes/push.js';

/** What the API needs of the store: what each route group declares it reads and writes, together. */
export type ApiStore = DeviceStore &
  RecordingStore &
  AlertsStore &
  PlaybackStore &
  SnapshotStore &
  FootageRoutesStore &
  PushRoutesStore;

export interface ApiServerOptions {
  logger: FastifyBaseLogger;
  tls: { cert: string | Buffer; key: string | Buffer };
  bodyLimit: number;
  /** Bounds on what one client can hold open (config api.*): see src/api/connection-guard.ts. */
  connections: { maxPerAddress: number; requestTimeoutMs: number; idleTimeoutMs: number };
  verifier: TokenCheck;
  store: ApiStore;
  storageDir: string;
  control: DeviceControl;
  /** POST, PATCH and DELETE /v1/devices…: cameras set up from the app; absent: not served. */
  setup?: DeviceSetup;
  streams: StreamAddresses;
  registry: Registry;
  version: string;
  localJwks: (() => { keys: object[] }) | null;
  /** The object detector's state for /healthz (absent: not reported). */
  detector?: () => DetectorHealth;
  /** Whether the service is near its memory limit, for /healthz (absent or null: not reported). */
  memory?: () => 'ok' | 'near_limit' | null;
  /** The local authorization server's endpoints; null when auth.local is off. */
  oauth: OAuthRoutesOptions | null;
  /** Browser live view under /live: WebRTC (WHEP) and LL-HLS; absent: none. */
  live?: LiveRoutesOptions;
  /**
   * Recordings' playback_url and GET /v1/recordings/{id}/play: the ticket signer, and the minter the event stream
   * shares (one ticket memo); absent: none.
   */
  playback?: { tickets: TicketSigner; mint: MintPlayback };
  /** GET /v1/events (Server-Sent Events); absent: none. */
  events?: EventRoutesOptions;
  /** The web app at / (docs/web-app.md); absent: dist/web of this install; null: none. */
  web?: WebAppOptions | null;
  /** GET /v1/devices/{id}/snapshot; absent: not served. */
  snapshots?: DeviceSnapshots;
  /**
   * Continuous footage (GET /v1/footage, /v1/devices/{id}/footage…); absent or null: continuous recording is off (the
   * routes answer 404).
   */
  footage?: FootageAccess | null;
  /** GET /v1/system (admins); absent: not served. */
  system?: SystemFacts;
  /** GET /v1/push and the push subscriptions (Web Push); absent: not served. */
  push?: PushNotifications;
}

/**
 * Request validation with TypeBox. Bodies are checked as sent (no type coercion: "1" is not 1);
 * query strings and path parameters are text by nature, so they are converted strictly, then
 * defaults applied.
 */
const validatorCompiler: FastifySchemaCompiler<TSchema> = ({ schema, httpPart }) => {
  const check = Compile(schema);
  const readParams = paramsReader(schema);
  return (value: unknown) => {
    // No body at all is read as {}: "POST …/read" needs none, and for other routes the error then
    // names the missing field instead of saying "must be object".
    const prepared = httpPart === 'body' ? (value ?? {}) : readParams(value);
    if (check.Check(prepared)) return { value: prepared };
    return { error: check.Errors(prepared) as unknown as Error };
  };
};

export async function buildApiServer(opts: ApiServerOptions): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: opts.logger,
    // Node checks request timeouts on a timer (30 s by default): every second keeps a slow request
    // from outliving requestTimeout by much; the check only walks the open connections.
    https: { cert: opts.tls.cert, key: opts.tls.key, minVersion: 'TLSv1.2', connectionsCheckingInterval: 1000 },
    bodyLimit: opts.bodyLimit,
    // A request must arrive whole within requestTimeout (slowloris; also a connection that never
    // sends one), and a connection silent for idleTimeout is closed (a client that stopped reading
    // an answer). Between requests the keep-alive timeout replaces the idle one: the same, so that
    // what the Keep-Alive header announces is when an unused connection is closed. Fastify's
    // defaults leave the first two off and the third at 72 s. A download or event stream in
    // progress is not silent.
    requestTimeout: opts.connections.requestTimeoutMs,
    connectionTimeout: opts.connections.idleTimeoutMs,
    keepAliveTimeout: opts.connections.idleTimeoutMs,
    // Per-request info lines would dominate the journal (and SD card) of a busy gateway; errors are logged below.
    logController: new LogController({ disableRequestLogging: true }),
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: 200 },
    // Oversized headers and the like are answered in the API's error shape (src/api/client-error.ts).
    clientErrorHandler: makeClientErrorHandler(opts.logger),
  }).withTypeProvider<TypeBoxTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  const guard = guardConnections(app.server, {
    maxPerAddress: opts.connections.maxPerAddress,
    registry: opts.registry,
    logger: opts.logger,
  });
  app.addHook('onClose', async () => guard.close());

  // An empty body with Content-Type: application/json is what many clients send for "no body"
  // (POST /v1/alerts/{id}/read); a member named twice is refused (src/api/json-body.ts).
  useStrictJsonParser(app, { emptyBody: 'absent' });

  // Answers counted and timed by each route's own onResponse hook (src/api/request-metrics.ts).
  const answers = requestMetrics(opts.registry);
  app.addHook('onRoute', (route) => addRouteOnResponse(route, answers.hookFor(route.url)));

  answerErrors(app, opts.logger, answers.unmatched);

  await app.register(authenticate, { verifier: opts.verifier });
  await app.register(strictQuery);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Edge gateway /v1 API',
        version: opts.version,
        description:
          'Devices, recordings, alerts and live streams of the cameras next to this gateway. See docs/api.md.',
        // package.json's "UNLICENSED": not licensed for use by others. SPDX has no identifier for
        // that, so a LicenseRef names it (OpenAPI 3.1 wants an identifier or a URL).
        license: { name: 'UNLICENSED', identifier: 'LicenseRef-UNLICENSED' },
      },
      // Relative: the origin the client fetched this document from. The gateway cannot know which
      // of its names or addresses that was (the same reason download_url is a path).
      servers: [{ url: '/', description: 'This gateway' }],
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } } },
    },
    transformObject: (built) =>
      'openapiObject' in built ? finishOpenApiDocument(built.openapiObject) : built.swaggerObject,
  });

  await registerRoutes(app, opts);
  await app.ready();
  return app;
}

/**
 * Errors become the API's answers (src/api/errors.ts); unexpected ones and server-side answers are
 * logged, throttled. Anyone who can reach the port decides how often these happen (a forged token
 * naming an issuer whose keys are out of reach answers 503): the first of a burst is written, the
 * rest summed up once a minute. Every answer is counted in edge_gateway_http_requests_total by status
 * anyway.
 */
function answerErrors(app: FastifyInstance, logger: FastifyBaseLogger, unmatched: RequestMetrics['unmatched']): void {
  const failed = throttledLog({
    logger: logger,
    level: 'error',
    msg: 'request failed',
    intervalMs: REPEAT_LOG_INTERVAL_MS,
  });
  const serverSide = throttledLog({
    logger: logger,
    level: 'warn',
    msg: 'request answered with a server-side error',
    intervalMs: REPEAT_LOG_INTERVAL_MS,
  });
  app.addHook('onClose', async () => {
    failed.close();
    serverSide.close();
  });
  app.setErrorHandler(async (err, request, reply) => {
    const api = toApiError(err);
    const route = request.routeOptions.url ?? 'unmatched';
    if (!api) {
      failed.hit({ err, url: redactUrl(request.url) }, route);
      return sendApiError(reply, new ApiError('server_error', 'the gateway failed to answer; see its log'));
    }
    if (api.statusCode >= 500)
      serverSide.hit(
        { url: redactUrl(request.url), status: api.statusCode, error: api.code, description: api.description },
        `${api.statusCode} ${route}`,
      );
    return sendApiError(reply, api);
  });
  // Not a route, so without a route's hooks: the handler counts its own answers (timed until here;
  // what is left is sending a short body).
  app.setNotFoundHandler(async (request, reply) => {
    unmatched.record(request.method, 404, reply.elapsedTime / 1000);
    return sendApiError(
      reply,
      new ApiError('not_found', `no such resource: ${request.method} ${request.url.split('?')[0]}`),
    );
  });
}

/** The route groups, each a plugin with its schemas (src/api/routes/). */
async function registerRoutes(app: FastifyInstance, opts: ApiServerOptions): Promise<void> {
  await app.register(systemRoutes, {
    localJwks: opts.localJwks,
    openapi: () => app.swagger(),
    ...(opts.detector ? { detector: opts.detector } : {}),
    ...(opts.memory ? { memory: opts.memory } : {}),
  });
  await app.register(deviceRoutes, { store: opts.store, control: opts.control, streams: opts.streams });
  if (opts.setup) await app.register(deviceSetupRoutes, { setup: opts.setup });
  await app.register(recordingRoutes, {
    store: opts.store,
    storageDir: opts.storageDir,
    ...(opts.playback ? { mintPlayback: opts.playback.mint } : {}),
  });
  await app.register(alertRoutes, { store: opts.store });
  await app.register(footageRoutes, { store: opts.store, footage: opts.footage ?? null });
  if (opts.oauth) await app.register(oauthRoutes, opts.oauth);
  if (opts.live) await app.register(liveRoutes, { ...opts.live, prefix: '/live' });
  if (opts.playback)
    await app.register(playbackRoutes, {
      store: opts.store,
      storageDir: opts.storageDir,
      tickets: opts.playback.tickets,
    });
  if (opts.events) await app.register(eventRoutes, opts.events);
  if (opts.web !== null) await app.register(webApp, opts.web ?? { root: DEFAULT_WEB_ROOT });
  if (opts.snapshots) await app.register(snapshotRoutes, { store: opts.store, snapshots: opts.snapshots });
  if (opts.system)
    await app.register(systemStatusRoutes, { facts: opts.system, store: opts.store, version: opts.version });
  if (opts.push) await app.register(pushRoutes, { store: opts.store, push: opts.push });
}
