import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { BaseLogger } from 'pino';
import Type from 'typebox';
import { AuthorizationServer, clientGrants, DEFAULT_SCOPES } from '../../auth/oauth/authorization-server.js';
import { errorRedirect, OAuthError, oauthErrorBody, oauthErrorStatus, tokenErrorHeaders, type AuthorizeErrorCode } from '../../auth/oauth/errors.js';
import type { LoginSessions } from '../../auth/oauth/login-sessions.js';
import { firstPartyRedirectUri, isFirstPartyClient, ownOrigin, type FirstPartyHosts } from '../../auth/oauth/first-party.js';
import { GRANT_TYPES, parseAuthorizeRequest, parseRevocationRequest, parseTokenRequest, type AuthorizeRequest } from '../../auth/oauth/params.js';
import { hashPassword, needsRehash, rateLimitKeyForIp, verifyPassword, type LoginRateLimiter, type RateLimitDecision } from '../../auth/oauth/password.js';
import { checkAuthorizationPkce } from '../../auth/oauth/pkce.js';
import { codeRedirect, matchRedirectUri } from '../../auth/oauth/redirect-uri.js';
import { ROLE_SCOPES, scopesForRole } from '../../auth/roles.js';
import { SCOPE_MEANINGS, SCOPES, isScope } from '../../auth/scope-catalogue.js';
import type { LocalUserRecord, Store } from '../../store/store.js';
import { cookieValue, hostCookie, parseFormBody } from '../forms.js';
import { RepeatedJsonNameError, useStrictJsonParser } from '../json-body.js';
import { consentPage, errorPage, loginPage, PAGE_HEADERS } from '../oauth-pages.js';
import { errorResponse, parserErrorResponses } from '../schemas.js';

// The local authorization server's HTTP side (docs/oauth.md): /oauth/authorize (login and consent
// pages), /oauth/token, and the RFC 8414 metadata. Rules live in src/auth/oauth/; this file reads
// requests, keeps the browser's state in two cookies and writes the answers.

export interface OAuthRoutesOptions {
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
  now?: () => number;
}

const CSRF_COOKIE = '__Host-eg-oauth-csrf';
const SESSION_COOKIE = '__Host-eg-oauth-session';
const CSRF_MAX_AGE_S = 3600;
const SESSION_MAX_AGE_S = 600;
/** The authorization request's own parameters, carried through the forms unchanged. */
const REQUEST_FIELDS = ['client_id', 'redirect_uri', 'response_type', 'scope', 'state', 'code_challenge', 'code_challenge_method'];

const TokenResponseSchema = Type.Object(
  {
    access_token: Type.String(),
    token_type: Type.Literal('Bearer'),
    expires_in: Type.Integer(),
    refresh_token: Type.Optional(Type.String()),
    scope: Type.String(),
  },
  { title: 'TokenResponse' },
);
const MetadataSchema = Type.Object(
  {
    issuer: Type.String(),
    authorization_endpoint: Type.String(),
    token_endpoint: Type.String(),
    jwks_uri: Type.String(),
    revocation_endpoint: Type.String(),
    revocation_endpoint_auth_methods_supported: Type.Array(Type.String()),
    scopes_supported: Type.Array(Type.String()),
    response_types_supported: Type.Array(Type.String()),
    response_modes_supported: Type.Array(Type.String()),
    grant_types_supported: Type.Array(Type.String()),
    token_endpoint_auth_methods_supported: Type.Array(Type.String()),
    code_challenge_methods_supported: Type.Array(Type.String()),
    authorization_response_iss_parameter_supported: Type.Boolean(),
  },
  { title: 'AuthorizationServerMetadata' },
);

/** An HTML page of the browser flow (login, consent, or an error the user reads). */
const pageResponse = (description: string) => ({ description, content: { 'text/html': { schema: Type.String() } } });
/** A 303 to the Location; no body. */
const redirectResponse = (description: string) => ({ type: 'null', description, headers: { location: Type.String() } });

/** The outcome of checking an authorization request (from the query, or a form repeating it). */
type Checked =
  | { kind: 'page'; status: number; error: OAuthError }
  | { kind: 'redirect'; location: string }
  | {
      kind: 'ok';
      request: AuthorizeRequest;
      clientName: string;
      /** The gateway's own web app: no consent page. */
      firstParty: boolean;
      /** As requested; null: none asked for (see grantable). */
      scopes: ReadonlySet<string> | null;
      codeChallenge: string | null;
      /** The request's parameters as received, for the forms' hidden fields. */
      fields: Record<string, string>;
    };

export async function oauthRoutes(app: FastifyInstance, opts: OAuthRoutesOptions): Promise<void> {
  const now = opts.now ?? Date.now;
  const base = opts.issuer.replace(/\/+$/, '');

  // Forms only here: the /v1 API keeps to JSON.
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => done(null, parseFormBody(body as string)));
  // JSON as everywhere, a repeated name refused as in forms; an empty body is an error here.
  useStrictJsonParser(app, { emptyBody: 'error' });

  // Body and content-type failures (bad JSON, a content type we do not read, too large) are the
  // client's malformed request: RFC 6749's invalid_request, as a JSON error at the token endpoint
  // and as a page at the authorization endpoint.
  app.setErrorHandler(async (err: Error & { statusCode?: number }, request, reply) => {
    const clientFault = typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 500;
    if (!clientFault) request.log.error({ err, url: request.url }, 'oauth request failed');
    const oauth =
      err instanceof RepeatedJsonNameError
        ? new OAuthError('invalid_request', err.message)
        : clientFault
          ? new OAuthError('invalid_request', 'the request body could not be read')
          : new OAuthError('server_error', 'the gateway failed to answer; see its log');
    if (request.url.startsWith('/oauth/token') || request.url.startsWith('/oauth/revoke')) return sendTokenError(reply, oauth, request.headers.authorization);
    return sendPage(reply, oauthErrorStatus(oauth.code), errorPage({ title: 'Request refused', error: oauth.code, description: oauth.description }));
  });

  app.get(
    '/.well-known/oauth-authorization-server',
    {
      config: { public: true },
      schema: {
        operationId: 'getAuthorizationServerMetadata',
        summary: 'Authorization server metadata (RFC 8414)',
        tags: ['oauth'],
        response: { 200: MetadataSchema, ...parserErrorResponses },
      },
    },
    // The endpoints are on the origin the client asked (when it is this box), so a browser app on
    // https://192.168.1.20:8443 calls its own origin; the issuer stays the one its tokens name.
    async (request) => {
      const at = ownOrigin(request.headers.host, opts.firstParty) ?? base;
      return {
        issuer: opts.issuer,
        authorization_endpoint: `${at}/oauth/authorize`,
        token_endpoint: `${at}/oauth/token`,
        jwks_uri: `${at}/.well-known/jwks.json`,
        revocation_endpoint: `${at}/oauth/revoke`,
        revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
        scopes_supported: [...SCOPES],
        response_types_supported: ['code'],
        response_modes_supported: ['query'],
        grant_types_supported: [...GRANT_TYPES],
        token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
        code_challenge_methods_supported: ['S256'],
        authorization_response_iss_parameter_supported: true,
      };
    },
  );

  app.post(
    '/oauth/token',
    {
      config: { public: true },
      schema: {
        operationId: 'requestToken',
        summary: 'Token exchange, refresh and client credentials (RFC 6749 §4.1.3, §6, §4.4; JSON or form body)',
        tags: ['oauth'],
        // The statuses of oauthErrorStatus (src/auth/oauth/errors.ts); a body the gateway cannot read is invalid_request.
        response: {
          200: TokenResponseSchema,
          400: errorResponse('invalid_request, invalid_grant, unauthorized_client, unsupported_grant_type or invalid_scope (RFC 6749 §5.2)'),
          ...clientEndpointErrors,
        },
      },
    },
    async (request, reply) => {
      const authorization = request.headers.authorization;
      const parsed = parseTokenRequest(request.body, { knownScopes: SCOPES, authorization });
      if (!parsed.ok) return sendTokenError(reply, parsed.error, authorization);
      return answerClient(reply, authorization, () => opts.server.token(parsed.request));
    },
  );

  app.post(
    '/oauth/revoke',
    {
      config: { public: true },
      schema: {
        operationId: 'revokeToken',
        summary: "Token revocation (RFC 7009): a refresh or access token ends its whole grant (sign-out); JSON or form body",
        tags: ['oauth'],
        response: {
          200: { type: 'null', description: 'Revoked, or nothing to revoke (an unknown, invalid or expired token: RFC 7009 §2.2)' },
          400: errorResponse('invalid_request (no token, a parameter given twice) or unauthorized_client (the token was issued to another client)'),
          ...clientEndpointErrors,
        },
      },
    },
    async (request, reply) => {
      const authorization = request.headers.authorization;
      const parsed = parseRevocationRequest(request.body, { authorization });
      if (!parsed.ok) return sendTokenError(reply, parsed.error, authorization);
      return answerClient(reply, authorization, () => opts.server.revoke(parsed.request));
    },
  );

  /**
   * Checks an authorization request the same way for the GET and for each form POST. `host` is the
   * request's Host header: the web app's redirect URI is on the host the browser used.
   */
  const check = (params: unknown, host: string | undefined): Checked => {
    const parsed = parseAuthorizeRequest(params, SCOPES);
    if (parsed.kind === 'page_error') return { kind: 'page', status: 400, error: parsed.error };
    const clientId = parsed.kind === 'ok' ? parsed.request.clientId : parsed.clientId;
    const redirectUri = parsed.kind === 'ok' ? parsed.request.redirectUri : parsed.redirectUri;
    const state = parsed.kind === 'ok' ? parsed.request.state : parsed.state;
    const client = opts.server.findClient(clientId);
    // RFC 6749 §4.1.2.1: without a known client and one of its redirect URIs there is nobody
    // safe to send an answer to, so the user sees the problem instead.
    if (!client) return { kind: 'page', status: 400, error: new OAuthError('invalid_client', 'unknown client_id') };
    const firstParty = isFirstPartyClient(client.id);
    if (firstParty) {
      const own = firstPartyRedirectUri(host, opts.firstParty);
      if (own === null) {
        return { kind: 'page', status: 400, error: new OAuthError('invalid_request', 'this page was opened at an address that is not a name or address of this gateway; open the web app at one of its own addresses') };
      }
      if (!matchRedirectUri(redirectUri, [own])) return { kind: 'page', status: 400, error: new OAuthError('invalid_request', `redirect_uri must be ${own}`) };
    } else if (!matchRedirectUri(redirectUri, client.redirectUris)) {
      return { kind: 'page', status: 400, error: new OAuthError('invalid_request', 'redirect_uri is not one registered for this client') };
    }
    const redirect = (error: OAuthError<AuthorizeErrorCode>): Checked => ({ kind: 'redirect', location: errorRedirect(redirectUri, error, state, opts.issuer) });
    if (parsed.kind === 'redirect_error') return redirect(parsed.error);
    const req = parsed.request;
    if (!clientGrants(client).grantTypes.includes('authorization_code')) {
      return redirect(new OAuthError('unauthorized_client', 'the client is not registered for authorization_code'));
    }
    const pkce = checkAuthorizationPkce({ codeChallenge: req.codeChallenge, codeChallengeMethod: req.codeChallengeMethod, publicClient: client.secretHash === null });
    if (!pkce.ok) return redirect(pkce.error);
    const fields: Record<string, string> = {};
    const source = params as Record<string, unknown>;
    for (const name of REQUEST_FIELDS) {
      const value = source[name];
      if (typeof value === 'string' && value !== '') fields[name] = value;
    }
    return { kind: 'ok', request: req, clientName: client.name, firstParty, scopes: req.scope, codeChallenge: pkce.codeChallenge, fields };
  };

  /**
   * What the user may be given: the requested scopes (none asked for: the web app gets what the
   * role allows, other clients the read scopes) that the user's role allows. Possibly none.
   */
  const grantable = (ok: Extract<Checked, { kind: 'ok' }>, user: LocalUserRecord): Set<string> =>
    scopesForRole(ok.scopes ?? (ok.firstParty ? ROLE_SCOPES[user.role] : DEFAULT_SCOPES), user.role);

  /** 303 to the client with a new code for these scopes, or access_denied when there are none. */
  const answerWithCode = (reply: FastifyReply, ok: Extract<Checked, { kind: 'ok' }>, user: LocalUserRecord, scopes: ReadonlySet<string>, setCookie: string | null) => {
    const req = ok.request;
    let location: string;
    if (scopes.size === 0) {
      location = errorRedirect(req.redirectUri, new OAuthError('access_denied', "the account's role allows none of the requested scopes"), req.state, opts.issuer);
    } else {
      const client = opts.server.findClient(req.clientId);
      if (!client) return sendCheckPage(reply, { status: 400, error: new OAuthError('invalid_client', 'unknown client_id') });
      const code = opts.server.createCode({ client, redirectUri: req.redirectUri, user: user.username, scopes, codeChallenge: ok.codeChallenge });
      opts.logger.info({ username: user.username, role: user.role, clientId: client.id, scope: [...scopes].sort().join(' ') }, 'local authorization granted');
      location = codeRedirect(req.redirectUri, code, req.state, opts.issuer);
    }
    if (setCookie !== null) reply.header('set-cookie', setCookie);
    return reply.code(303).header('location', location).header('cache-control', 'no-store').send();
  };

  /** The browser's CSRF token: the cookie's value, or a new one (set on this answer). */
  const csrfOf = (request: FastifyRequest, reply: FastifyReply): string => {
    const existing = cookieValue(request.headers.cookie, CSRF_COOKIE);
    if (existing && /^[A-Za-z0-9_-]{43}$/.test(existing)) return existing;
    const fresh = randomBytes(32).toString('base64url');
    reply.header('set-cookie', hostCookie(CSRF_COOKIE, fresh, CSRF_MAX_AGE_S));
    return fresh;
  };

  const consent = (reply: FastifyReply, ok: Extract<Checked, { kind: 'ok' }>, user: LocalUserRecord, csrf: string, sessionId: string | undefined) => {
    const granted = grantable(ok, user);
    if (granted.size === 0) {
      // Nothing to consent to: the answer is a refusal, and like every answer it ends the session.
      if (sessionId) opts.sessions.end(sessionId);
      return answerWithCode(reply, ok, user, granted, hostCookie(SESSION_COOKIE, '', 0));
    }
    const scopes = [...granted].sort().map((name) => ({ name, meaning: isScope(name) ? SCOPE_MEANINGS[name] : name }));
    return sendPage(reply, 200, consentPage({ clientName: ok.clientName, username: user.username, destination: destinationOf(ok.request.redirectUri), scopes, request: ok.fields, csrf }));
  };

  const authorizeSchema = {
    operationId: 'getAuthorizationPage',
    summary: 'Authorization request: login and consent pages (RFC 6749 §4.1.1)',
    tags: ['oauth'],
    response: {
      200: pageResponse('The sign-in page, or the consent page when the browser is signed in'),
      303: redirectResponse("To the client's redirect_uri with an error (RFC 6749 §4.1.2.1)"),
      400: pageResponse('An error page: the request is malformed, or names an unknown client or redirect_uri (nothing is sent to the client)'),
      ...parserErrorResponses,
    },
  };
  app.get('/oauth/authorize', { config: { public: true }, schema: authorizeSchema }, async (request, reply) => {
    const checked = check(request.query, request.headers.host);
    if (checked.kind === 'page') return sendCheckPage(reply, checked);
    if (checked.kind === 'redirect') return reply.code(303).header('location', checked.location).header('cache-control', 'no-store').send();
    const csrf = csrfOf(request, reply);
    // The web app always shows the sign-in form: a GET never hands out a code by itself.
    if (!checked.firstParty) {
      const sessionId = cookieValue(request.headers.cookie, SESSION_COOKIE);
      const username = opts.sessions.get(sessionId, now());
      const user = username === null ? null : opts.users.getLocalUser(username);
      if (user) return consent(reply, checked, user, csrf, sessionId);
    }
    return sendPage(reply, 200, loginPage({ clientName: checked.clientName, firstParty: checked.firstParty, request: checked.fields, csrf }));
  });

  const formSchema = {
    operationId: 'submitAuthorizationForm',
    summary: 'Login and consent form answers',
    tags: ['oauth'],
    // Every answer that is not an error is a redirect: after a sign-in to the consent page, after a
    // consent or refusal to the client.
    response: {
      303: redirectResponse("After a sign-in: back to the consent page; after an answer: to the client's redirect_uri with a code or an error"),
      400: pageResponse('An error page: the form or the request it repeats is malformed'),
      401: pageResponse('The sign-in page again: wrong username or password, or the sign-in expired'),
      403: pageResponse('An error page: the form expired or was not sent from this page (CSRF check)'),
      ...parserErrorResponses,
      429: pageResponse('The sign-in page again: too many failed sign-ins (Retry-After)'),
      default: pageResponse('An error page: server_error, the gateway failed to answer'),
    },
  };
  app.post('/oauth/authorize', { config: { public: true }, schema: formSchema }, async (request, reply) => {
    const form = request.body;
    if (typeof form !== 'object' || form === null) return sendCheckPage(reply, { status: 400, error: new OAuthError('invalid_request', 'the form is empty') });
    const fields = form as Record<string, unknown>;
    // CSRF: the form must carry the value of our own SameSite=Strict cookie, and a browser that
    // names the page's origin must name ours. Checked before anything else is looked at.
    const cookie = cookieValue(request.headers.cookie, CSRF_COOKIE);
    const sent = typeof fields.csrf === 'string' ? fields.csrf : '';
    const origin = request.headers.origin;
    if (!cookie || !sameSecret(cookie, sent) || (origin !== undefined && origin !== `https://${request.headers.host ?? ''}`)) {
      return sendPage(reply, 403, errorPage({ title: 'Form refused', error: 'invalid_request', description: 'the form expired or was not sent from this page; go back to the app and start again' }));
    }
    const checked = check(fields, request.headers.host);
    if (checked.kind === 'page') return sendCheckPage(reply, checked);
    if (checked.kind === 'redirect') return reply.code(303).header('location', checked.location).header('cache-control', 'no-store').send();
    const action = fields.action;
    const sessionId = cookieValue(request.headers.cookie, SESSION_COOKIE);

    if (action === 'login') {
      const username = typeof fields.username === 'string' ? fields.username : '';
      const password = typeof fields.password === 'string' ? fields.password : '';
      const t = now();
      const userKey = `user:${username.normalize('NFC').toLowerCase()}`;
      const addressKey = rateLimitKeyForIp(request.ip);
      // Counted as failed before the slow password check, and given back if it is right: a
      // parallel burst then gets no more attempts than a sequence would (docs/oauth.md).
      const refusal = reserveAttempt(opts.limits, userKey, addressKey, t);
      if (refusal !== null) {
        const waitS = Math.ceil(refusal.retryAfterMs / 1000);
        reply.header('retry-after', String(waitS));
        return sendPage(reply, 429, loginPage({ clientName: checked.clientName, firstParty: checked.firstParty, request: checked.fields, csrf: cookie, username, error: `Too many failed sign-ins. Try again in ${waitS} s.` }));
      }
      const user = username === '' ? null : opts.users.getLocalUser(username);
      const good = await verifyPassword(password, user?.passwordHash ?? null).catch(() => false);
      if (!user || !good) {
        // Not the name itself: people type their password into the username field.
        opts.logger.info({ usernameHash: logHash(username), address: request.ip }, 'local sign-in failed');
        return sendPage(reply, 401, loginPage({ clientName: checked.clientName, firstParty: checked.firstParty, request: checked.fields, csrf: cookie, username, error: 'Wrong username or password.' }));
      }
      opts.limits.byAddress.release(addressKey);
      opts.limits.byUser.succeed(userKey);
      if (needsRehash(user.passwordHash)) opts.users.updateLocalUserPassword(user.username, await hashPassword(password));
      // The web app has no consent page: signed in, the answer goes straight back with the code.
      if (checked.firstParty) return answerWithCode(reply, checked, user, grantable(checked, user), null);
      if (sessionId) opts.sessions.end(sessionId);
      const id = opts.sessions.create(user.username, t);
      // 303 to the same request as a GET: reloading the consent page never posts the password again.
      const query = new URLSearchParams(checked.fields).toString();
      return reply.code(303).header('set-cookie', hostCookie(SESSION_COOKIE, id, SESSION_MAX_AGE_S)).header('location', `/oauth/authorize?${query}`).header('cache-control', 'no-store').send();
    }

    if ((action !== 'allow' && action !== 'deny') || checked.firstParty) {
      return sendCheckPage(reply, { status: 400, error: new OAuthError('invalid_request', 'the form has no known action') });
    }
    const username = opts.sessions.get(sessionId, now());
    const user = username === null ? null : opts.users.getLocalUser(username);
    if (!user) {
      return sendPage(reply, 401, loginPage({ clientName: checked.clientName, firstParty: checked.firstParty, request: checked.fields, csrf: cookie, error: 'Your sign-in expired. Sign in again.' }));
    }
    // One answer per sign-in: the session ends here, whatever the answer.
    if (sessionId) opts.sessions.end(sessionId);
    const expire = hostCookie(SESSION_COOKIE, '', 0);
    const { request: req } = checked;
    if (action === 'deny') {
      const location = errorRedirect(req.redirectUri, new OAuthError('access_denied', 'the user denied access'), req.state, opts.issuer);
      return reply.code(303).header('set-cookie', expire).header('location', location).header('cache-control', 'no-store').send();
    }
    return answerWithCode(reply, checked, user, grantable(checked, user), expire);
  });
}

/** What the token and revocation endpoints answer besides their own 400s (oauthErrorStatus in src/auth/oauth/errors.ts). */
const clientEndpointErrors = {
  401: errorResponse('invalid_client: client authentication failed'),
  ...parserErrorResponses,
  500: errorResponse('server_error: the gateway failed to answer'),
  503: errorResponse('temporarily_unavailable'),
};

/** 200 with what `work` gives (no body for undefined), or the OAuthError it throws as RFC 6749 §5.2 says. */
async function answerClient(reply: FastifyReply, authorization: string | undefined, work: () => Promise<unknown>): Promise<FastifyReply> {
  try {
    const body = await work();
    return reply.code(200).headers({ 'cache-control': 'no-store', pragma: 'no-cache' }).send(body);
  } catch (err) {
    // instanceof on a generic class gives OAuthError<any>: say which.
    if (err instanceof OAuthError) return sendTokenError(reply, err as OAuthError, authorization);
    throw err;
  }
}

function sendTokenError(reply: FastifyReply, err: OAuthError, authorization: string | undefined): FastifyReply {
  return reply.code(oauthErrorStatus(err.code)).headers(tokenErrorHeaders(err, authorization)).send(oauthErrorBody(err));
}

function sendPage(reply: FastifyReply, status: number, html: string): FastifyReply {
  return reply.code(status).headers(PAGE_HEADERS).send(html);
}

function sendCheckPage(reply: FastifyReply, checked: { status: number; error: OAuthError }): FastifyReply {
  return sendPage(reply, checked.status, errorPage({ title: 'This sign-in link does not work', error: checked.error.code, description: checked.error.description }));
}

/**
 * Reserves one attempt for the username and one for the address; null when both are granted,
 * else the refusal (and nothing stays reserved).
 */
function reserveAttempt(limits: OAuthRoutesOptions['limits'], userKey: string, addressKey: string, now: number): Extract<RateLimitDecision, { allowed: false }> | null {
  const byUser = limits.byUser.reserve(userKey, now);
  if (!byUser.allowed) return byUser;
  const byAddress = limits.byAddress.reserve(addressKey, now);
  if (byAddress.allowed) return null;
  limits.byUser.release(userKey);
  return byAddress;
}

// Keyed with a secret that lives only as long as the process, so the short hashes in the log
// tell repeated attempts apart within a run but cannot be reversed by guessing what was typed.
const LOG_HASH_KEY = randomBytes(32);

/** 48 bits of HMAC-SHA-256: enough to tell names apart in a log, too few to identify a secret. */
function logHash(text: string): string {
  return createHmac('sha256', LOG_HASH_KEY).update(text, 'utf8').digest('hex').slice(0, 12);
}

/** Constant-time comparison of two CSRF values. */
function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** What the consent page shows as the answer's destination: scheme and host of the redirect URI. */
function destinationOf(redirectUri: string): string {
  try {
    const url = new URL(redirectUri);
    return url.host === '' ? `${url.protocol}${url.pathname}` : `${url.protocol}//${url.host}`;
  } catch {
    return redirectUri;
  }
}
