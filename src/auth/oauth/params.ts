// Parameters of /oauth/authorize (query) and /oauth/token (JSON object, or a form body the HTTP
// layer has already decoded into Record<string, string | string[]>), narrowed from `unknown`.
// Shape only: whether the client exists, the code is good or the redirect_uri is registered is
// decided by the caller with the results of this module.

import { OAuthError, type AuthorizeErrorCode, type TokenErrorCode } from './errors.js';

/** Longest parameter value accepted; codes, tokens, secrets and URIs are all far shorter. */
export const MAX_PARAM_LENGTH = 4096;

export const GRANT_TYPES = ['authorization_code', 'refresh_token', 'client_credentials'] as const;
export type GrantType = (typeof GRANT_TYPES)[number];

/** The scopes the server knows (the spec's section 5 list), as an array or a set. */
export type KnownScopes = readonly string[] | ReadonlySet<string>;

// RFC 6749 Appendix A: VSCHAR = %x20-7E, the alphabet of client_id, client_secret, state, code,
// refresh_token, response_type and grant_type.
const VSCHAR = /^[\x20-\x7E]*$/;
// RFC 6749 §3.3: scope = scope-token *( SP scope-token ), scope-token = 1*( %x21 / %x23-5B / %x5D-7E ).
const SCOPE_PARAM = /^[\x21\x23-\x5B\x5D-\x7E]+(?: [\x21\x23-\x5B\x5D-\x7E]+)*$/;

type Lookup =
  | { ok: true; values: Map<string, string> }
  | { ok: false; name: string; problem: 'duplicate' | 'not_string' | 'too_long' | 'characters' };

/**
 * Reads `names` from a decoded parameter object. A value that is empty or null counts as absent (RFC 6749
 * §3.1: "parameters sent without a value MUST be treated as if they were omitted"); a name given
 * twice is refused (§3.1: parameters MUST NOT be included more than once), because the HTTP layer
 * and this code could otherwise pick different ones. Names we do not read are ignored (§3.1),
 * duplicated or not.
 */
function readParams(input: Record<string, unknown>, names: readonly string[], vschar: ReadonlySet<string>): Lookup {
  const values = new Map<string, string>();
  for (const name of names) {
    if (!Object.hasOwn(input, name)) continue;
    let value: unknown = input[name];
    if (Array.isArray(value)) {
      // Form and query decoders turn a repeated name into an array.
      if (value.length > 1) return { ok: false, name, problem: 'duplicate' };
      value = value.length === 1 ? value[0] : '';
    }
    // JSON null (and undefined from a JS caller) is a parameter without a value, like "".
    if (value === '' || value === null || value === undefined) continue;
    if (typeof value !== 'string') return { ok: false, name, problem: 'not_string' };
    if (value.length > MAX_PARAM_LENGTH) return { ok: false, name, problem: 'too_long' };
    if (vschar.has(name) && !VSCHAR.test(value)) return { ok: false, name, problem: 'characters' };
    values.set(name, value);
  }
  return { ok: true, values };
}

function lookupError(failed: Extract<Lookup, { ok: false }>): OAuthError<'invalid_request'> {
  // Names come from our fixed lists, never from the request, so they are safe to echo.
  const phrase = {
    duplicate: `${failed.name} is given more than once`,
    not_string: `${failed.name} must be a string`,
    too_long: `${failed.name} is longer than ${MAX_PARAM_LENGTH} characters`,
    characters: `${failed.name} has characters outside %x20-7E`,
  }[failed.problem];
  return new OAuthError('invalid_request', phrase);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A scope parameter as a set. Absent → null: what that means is the caller's (the client's
 * default scopes at /authorize; the grant's scopes on refresh, RFC 6749 §6). Malformed or unknown
 * → invalid_scope (§5.2 covers "invalid, unknown, or malformed").
 */
export function parseScopeParam(
  value: string | undefined,
  known: KnownScopes,
): { ok: true; scopes: ReadonlySet<string> | null } | { ok: false; error: OAuthError<'invalid_scope'> } {
  if (value === undefined || value === '') return { ok: true, scopes: null };
  if (!SCOPE_PARAM.test(value)) {
    return {
      ok: false,
      error: new OAuthError('invalid_scope', 'scope must be scope names separated by single spaces'),
    };
  }
  const knownSet: ReadonlySet<string> = known instanceof Set ? known : new Set(known);
  const scopes = new Set(value.split(' '));
  for (const scope of scopes) {
    if (!knownSet.has(scope)) {
      // The request's own scope is not echoed; the list of known ones is ours and helps more.
      return {
        ok: false,
        error: new OAuthError('invalid_scope', `unknown scope requested; known scopes: ${[...knownSet].join(' ')}`),
      };
    }
  }
  return { ok: true, scopes };
}

/** RFC 6749 §6: a refresh may ask for the same scopes or fewer, never more. */
export function checkScopeSubset(
  requested: ReadonlySet<string>,
  granted: ReadonlySet<string>,
): OAuthError<'invalid_scope'> | null {
  for (const scope of requested) {
    if (!granted.has(scope))
      return new OAuthError('invalid_scope', 'requested scope exceeds the scope originally granted');
  }
  return null;
}

/** The scope string of a token response: sorted, single spaces (spec section 2). */
export function formatScope(scopes: Iterable<string>): string {
  return [...new Set(scopes)].sort().join(' ');
}

export interface AuthorizeRequest {
  clientId: string;
  redirectUri: string;
  /** Undefined when the client sent none; otherwise returned unchanged. */
  state: string | undefined;
  responseType: 'code';
  /** Null when absent (see parseScopeParam). */
  scope: ReadonlySet<string> | null;
  /** Unjudged; pass both to checkAuthorizationPkce once the client is known. */
  codeChallenge: string | undefined;
  codeChallengeMethod: string | undefined;
}

export type AuthorizeParseResult =
  | { kind: 'ok'; request: AuthorizeRequest }
  /**
   * Redirect `error` to `redirectUri` with `state`, but only after the client exists and
   * `redirectUri` matches one of its registered ones; otherwise show an error page.
   */
  | {
      kind: 'redirect_error';
      clientId: string;
      redirectUri: string;
      state: string | undefined;
      error: OAuthError<AuthorizeErrorCode>;
    }
  /** Show an error page; never redirect: we cannot trust where to (RFC 6749 §4.1.2.1). */
  | { kind: 'page_error'; error: OAuthError<'invalid_request'> };

const AUTHORIZE_PARAMS = [
  'client_id',
  'redirect_uri',
  'state',
  'response_type',
  'scope',
  'code_challenge',
  'code_challenge_method',
];
// scope has its own, stricter grammar and its own error (invalid_scope).
const AUTHORIZE_VSCHAR: ReadonlySet<string> = new Set(AUTHORIZE_PARAMS.filter((n) => n !== 'scope'));

/**
 * The query of GET /oauth/authorize. client_id and redirect_uri are required (redirect_uri even
 * for a client with a single registered one, so what the token request must repeat is never
 * implied). A problem with client_id, redirect_uri or state is a page error: the first two say
 * where to redirect, and a state we could not return unchanged would break the client's CSRF check.
 */
export function parseAuthorizeRequest(query: unknown, knownScopes: KnownScopes): AuthorizeParseResult {
  if (!isRecord(query))
    return { kind: 'page_error', error: new OAuthError('invalid_request', 'the request has no parameters') };
  const read = readParams(query, AUTHORIZE_PARAMS, AUTHORIZE_VSCHAR);
  if (!read.ok) {
    const error = lookupError(read);
    if (read.name === 'client_id' || read.name === 'redirect_uri' || read.name === 'state')
      return { kind: 'page_error', error };
    // The redirect fields come first in AUTHORIZE_PARAMS, so they were read without fault; read
    // them alone to get their values for the redirect.
    const target = readParams(query, ['client_id', 'redirect_uri', 'state'], AUTHORIZE_VSCHAR);
    if (!target.ok) return { kind: 'page_error', error: lookupError(target) };
    return redirectOrPage(target.values, error);
  }
  const v = read.values;
  const clientId = v.get('client_id');
  const redirectUri = v.get('redirect_uri');
  const state = v.get('state');
  if (clientId === undefined)
    return { kind: 'page_error', error: new OAuthError('invalid_request', 'client_id is required') };
  if (redirectUri === undefined)
    return { kind: 'page_error', error: new OAuthError('invalid_request', 'redirect_uri is required') };
  const redirectError = (error: OAuthError<AuthorizeErrorCode>): AuthorizeParseResult => ({
    kind: 'redirect_error',
    clientId,
    redirectUri,
    state,
    error,
  });

  const responseType = v.get('response_type');
  if (responseType === undefined) return redirectError(new OAuthError('invalid_request', 'response_type is required'));
  if (responseType !== 'code')
    return redirectError(new OAuthError('unsupported_response_type', 'response_type must be code'));

  const scope = parseScopeParam(v.get('scope'), knownScopes);
  if (!scope.ok) return redirectError(scope.error);

  return {
    kind: 'ok',
    request: {
      clientId,
      redirectUri,
      state,
      responseType: 'code',
      scope: scope.scopes,
      codeChallenge: v.get('code_challenge'),
      codeChallengeMethod: v.get('code_challenge_method'),
    },
  };
}

function redirectOrPage(target: Map<string, string>, error: OAuthError<'invalid_request'>): AuthorizeParseResult {
  const clientId = target.get('client_id');
  const redirectUri = target.get('redirect_uri');
  if (clientId === undefined || redirectUri === undefined) return { kind: 'page_error', error };
  return { kind: 'redirect_error', clientId, redirectUri, state: target.get('state'), error };
}

/** How the client presented itself at the token endpoint (RFC 6749 §2.3.1). */
export type ClientAuthentication =
  | { method: 'client_secret_basic' | 'client_secret_post'; clientId: string; clientSecret: string }
  /** A public client: only its client_id in the body. */
  | { method: 'none'; clientId: string };

export type TokenRequest =
  | {
      grantType: 'authorization_code';
      client: ClientAuthentication;
      code: string;
      redirectUri: string;
      codeVerifier: string | undefined;
    }
  | {
      grantType: 'refresh_token';
      client: ClientAuthentication;
      refreshToken: string;
      scope: ReadonlySet<string> | null;
    }
  | { grantType: 'client_credentials'; client: ClientAuthentication; scope: ReadonlySet<string> | null };

export type TokenParseResult = { ok: true; request: TokenRequest } | { ok: false; error: OAuthError<TokenErrorCode> };

const TOKEN_PARAMS = [
  'grant_type',
  'client_id',
  'client_secret',
  'code',
  'redirect_uri',
  'code_verifier',
  'refresh_token',
  'scope',
];
// code_verifier is left to checkTokenPkce, so every verifier problem is the same invalid_grant;
// scope has its own grammar and error (invalid_scope).
const TOKEN_VSCHAR: ReadonlySet<string> = new Set(TOKEN_PARAMS.filter((n) => n !== 'code_verifier' && n !== 'scope'));

/**
 * The body of POST /oauth/token. `authorization` is the request's Authorization header, if any:
 * HTTP Basic carries client credentials (RFC 6749 §2.3.1); other schemes are not client
 * authentication and are ignored. Order of checks: shape and duplicates (invalid_request), client
 * credentials (invalid_client), grant_type (unsupported_grant_type), the grant's parameters.
 */
export function parseTokenRequest(
  body: unknown,
  opts: { knownScopes: KnownScopes; authorization?: string | undefined },
): TokenParseResult {
  if (!isRecord(body))
    return tokenError(new OAuthError('invalid_request', 'the request body must be an object of parameters'));
  const read = readParams(body, TOKEN_PARAMS, TOKEN_VSCHAR);
  if (!read.ok) return tokenError(lookupError(read));
  const v = read.values;

  const client = clientAuthentication(v, opts.authorization);
  if (!client.ok) return client;

  const grantType = v.get('grant_type');
  if (grantType === undefined) return tokenError(new OAuthError('invalid_request', 'grant_type is required'));
  switch (grantType) {
    case 'authorization_code': {
      const code = v.get('code');
      if (code === undefined) return tokenError(new OAuthError('invalid_request', 'code is required'));
      // Required because /authorize always requires it, and §4.1.3 then requires it here.
      const redirectUri = v.get('redirect_uri');
      if (redirectUri === undefined) return tokenError(new OAuthError('invalid_request', 'redirect_uri is required'));
      return {
        ok: true,
        request: { grantType, client: client.client, code, redirectUri, codeVerifier: v.get('code_verifier') },
      };
    }
    case 'refresh_token': {
      const refreshToken = v.get('refresh_token');
      if (refreshToken === undefined) return tokenError(new OAuthError('invalid_request', 'refresh_token is required'));
      const scope = parseScopeParam(v.get('scope'), opts.knownScopes);
      if (!scope.ok) return tokenError(scope.error);
      return { ok: true, request: { grantType, client: client.client, refreshToken, scope: scope.scopes } };
    }
    case 'client_credentials': {
      const scope = parseScopeParam(v.get('scope'), opts.knownScopes);
      if (!scope.ok) return tokenError(scope.error);
      return { ok: true, request: { grantType, client: client.client, scope: scope.scopes } };
    }
    default:
      return tokenError(
        new OAuthError('unsupported_grant_type', `grant_type must be one of ${GRANT_TYPES.join(', ')}`),
      );
  }
}

/** A token revocation request (RFC 7009 §2.1): the token, a hint of its kind, and the client. */
export interface RevocationRequest {
  client: ClientAuthentication;
  token: string;
  /** access_token or refresh_token; any other value is ignored (every kind is looked for anyway). */
  tokenTypeHint: string | undefined;
}

const REVOCATION_PARAMS = ['token', 'token_type_hint', 'client_id', 'client_secret'];

/**
 * The body of POST /oauth/revoke: client authentication exactly as at the token endpoint
 * (invalid_client first), then `token` (required: invalid_request).
 */
export function parseRevocationRequest(
  body: unknown,
  opts: { authorization?: string | undefined },
): { ok: true; request: RevocationRequest } | { ok: false; error: OAuthError<TokenErrorCode> } {
  if (!isRecord(body))
    return tokenError(new OAuthError('invalid_request', 'the request body must be an object of parameters'));
  const read = readParams(body, REVOCATION_PARAMS, new Set(REVOCATION_PARAMS));
  if (!read.ok) return tokenError(lookupError(read));
  const v = read.values;
  const client = clientAuthentication(v, opts.authorization);
  if (!client.ok) return client;
  const token = v.get('token');
  if (token === undefined) return tokenError(new OAuthError('invalid_request', 'token is required'));
  return { ok: true, request: { client: client.client, token, tokenTypeHint: v.get('token_type_hint') } };
}

function tokenError(error: OAuthError<TokenErrorCode>): { ok: false; error: OAuthError<TokenErrorCode> } {
  return { ok: false, error };
}

function clientAuthentication(
  v: Map<string, string>,
  authorization: string | undefined,
): { ok: true; client: ClientAuthentication } | { ok: false; error: OAuthError<TokenErrorCode> } {
  const bodyId = v.get('client_id');
  const bodySecret = v.get('client_secret');
  const basic = authorization === undefined ? { kind: 'none' as const } : parseBasicClientAuth(authorization);
  if (basic.kind === 'malformed')
    return tokenError(new OAuthError('invalid_client', 'malformed HTTP Basic client credentials'));
  if (basic.kind === 'credentials') {
    // §2.3: a client MUST NOT use more than one authentication method in a request.
    if (bodySecret !== undefined)
      return tokenError(
        new OAuthError('invalid_request', 'client credentials given both in the Authorization header and in the body'),
      );
    if (bodyId !== undefined && bodyId !== basic.clientId)
      return tokenError(
        new OAuthError('invalid_request', 'client_id in the body differs from the Authorization header'),
      );
    return {
      ok: true,
      client: { method: 'client_secret_basic', clientId: basic.clientId, clientSecret: basic.clientSecret },
    };
  }
  if (bodyId === undefined) {
    // §5.2 lists "no client authentication included" under invalid_client.
    return tokenError(
      new OAuthError(
        'invalid_client',
        bodySecret === undefined ? 'client authentication is required' : 'client_secret without client_id',
      ),
    );
  }
  if (bodySecret !== undefined)
    return { ok: true, client: { method: 'client_secret_post', clientId: bodyId, clientSecret: bodySecret } };
  return { ok: true, client: { method: 'none', clientId: bodyId } };
}

export type BasicClientAuth =
  { kind: 'none' } | { kind: 'malformed' } | { kind: 'credentials'; clientId: string; clientSecret: string };

const BASIC = /^[ \t]*basic[ \t]+([A-Za-z0-9+/]+={0,2})[ \t]*$/i;
const BASIC_SCHEME = /^[ \t]*basic(?:[ \t]|$)/i;
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * An Authorization header as client credentials. RFC 6749 §2.3.1 has client_id and secret
 * form-urlencoded before they are joined with ":" and base64-encoded (so a ":" in the id
 * survives); both are decoded back here. Another scheme → none; Basic we cannot read → malformed.
 */
export function parseBasicClientAuth(authorization: string): BasicClientAuth {
  if (!BASIC_SCHEME.test(authorization)) return { kind: 'none' };
  const match = BASIC.exec(authorization);
  const encoded = match?.[1];
  if (encoded === undefined || encoded.length % 4 !== 0) return { kind: 'malformed' };
  const bytes = Buffer.from(encoded, 'base64');
  // Node's decoder skips what it cannot read; the round trip catches it.
  if (bytes.toString('base64') !== encoded) return { kind: 'malformed' };
  let text: string;
  try {
    text = UTF8.decode(bytes);
  } catch {
    return { kind: 'malformed' };
  }
  const colon = text.indexOf(':');
  if (colon === -1) return { kind: 'malformed' };
  const clientId = formDecode(text.slice(0, colon));
  const clientSecret = formDecode(text.slice(colon + 1));
  if (clientId === null || clientSecret === null || clientId === '' || clientSecret === '')
    return { kind: 'malformed' };
  if (!VSCHAR.test(clientId) || !VSCHAR.test(clientSecret)) return { kind: 'malformed' };
  if (clientId.length > MAX_PARAM_LENGTH || clientSecret.length > MAX_PARAM_LENGTH) return { kind: 'malformed' };
  return { kind: 'credentials', clientId, clientSecret };
}

function formDecode(text: string): string | null {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return null;
  }
}

/** What the client is registered for (clients add --public / --grant). */
export interface ClientGrants {
  public: boolean;
  grantTypes: readonly GrantType[];
}

/**
 * unauthorized_client when the client may not use this grant: one it was not registered for, or
 * client_credentials for a public client, which has no credentials to stand on.
 */
export function checkClientGrant(client: ClientGrants, grantType: GrantType): OAuthError<'unauthorized_client'> | null {
  if (grantType === 'client_credentials' && client.public) {
    return new OAuthError('unauthorized_client', 'client_credentials is only for confidential clients');
  }
  if (!client.grantTypes.includes(grantType))
    return new OAuthError('unauthorized_client', `the client is not registered for ${grantType}`);
  return null;
}
