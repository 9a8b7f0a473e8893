import { clientGrants } from '../../../auth/oauth/authorization-server.js';
import { OAuthError, type AuthorizeErrorCode } from '../../../auth/oauth/errors.js';
import { firstPartyRedirectUri, isFirstPartyClient } from '../../../auth/oauth/first-party.js';
import { parseAuthorizeRequest, type AuthorizeRequest } from '../../../auth/oauth/params.js';
import { checkAuthorizationPkce } from '../../../auth/oauth/pkce.js';
import { matchRedirectUri } from '../../../auth/oauth/redirect-uri.js';
import { SCOPES } from '../../../auth/scope-catalogue.js';
import type { OAuthClientRecord } from '../../../store/store.js';
import type { OAuthRoutesOptions } from './options.js';
import { clientRedirect } from './replies.js';

// The authorization request, checked the same way for the GET and for each form POST.

/** The authorization request's own parameters, carried through the forms unchanged. */
const REQUEST_FIELDS = [
  'client_id',
  'redirect_uri',
  'response_type',
  'scope',
  'state',
  'code_challenge',
  'code_challenge_method',
];

/** A request that can be answered: the pages go on with it. */
export interface AuthorizeOk {
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
}

/** The outcome of checking an authorization request (from the query, or a form repeating it). */
export type AuthorizeCheck =
  { kind: 'page'; status: number; error: OAuthError } | { kind: 'redirect'; location: string } | AuthorizeOk;

/**
 * Checks an authorization request from the query or a form. `host` is the request's Host header:
 * the web app's redirect URI is on the host the browser used.
 */
export function checkAuthorizeRequest(
  params: unknown,
  host: string | undefined,
  opts: Pick<OAuthRoutesOptions, 'server' | 'issuer' | 'firstParty'>,
): AuthorizeCheck {
  const parsed = parseAuthorizeRequest(params, SCOPES);
  if (parsed.kind === 'page_error') return { kind: 'page', status: 400, error: parsed.error };
  const { clientId, redirectUri, state } = parsed.kind === 'ok' ? parsed.request : parsed;
  const client = opts.server.findClient(clientId);
  // RFC 6749 §4.1.2.1: without a known client and one of its redirect URIs there is nobody
  // safe to send an answer to, so the user sees the problem instead.
  if (!client) return { kind: 'page', status: 400, error: new OAuthError('invalid_client', 'unknown client_id') };
  const firstParty = isFirstPartyClient(client.id);
  const unsafe = redirectUriProblem(client, firstParty, redirectUri, host, opts.firstParty);
  if (unsafe !== null) return { kind: 'page', status: 400, error: unsafe };
  const redirect = (error: OAuthError<AuthorizeErrorCode>): AuthorizeCheck => ({
    kind: 'redirect',
    location: clientRedirect(opts.issuer, { redirectUri, state }, { error }),
  });
  if (parsed.kind === 'redirect_error') return redirect(parsed.error);
  const req = parsed.request;
  if (!clientGrants(client).grantTypes.includes('authorization_code')) {
    return redirect(new OAuthError('unauthorized_client', 'the client is not registered for authorization_code'));
  }
  const pkce = checkAuthorizationPkce({
    codeChallenge: req.codeChallenge,
    codeChallengeMethod: req.codeChallengeMethod,
    publicClient: client.secretHash === null,
  });
  if (!pkce.ok) return redirect(pkce.error);
  return {
    kind: 'ok',
    request: req,
    clientName: client.name,
    firstParty,
    scopes: req.scope,
    codeChallenge: pkce.codeChallenge,
    fields: requestFields(params),
  };
}

/** Why the answer may not go to `redirectUri`, or null when it may. */
function redirectUriProblem(
  client: OAuthClientRecord,
  firstParty: boolean,
  redirectUri: string,
  host: string | undefined,
  hosts: OAuthRoutesOptions['firstParty'],
): OAuthError | null {
  if (!firstParty)
    return matchRedirectUri(redirectUri, client.redirectUris)
      ? null
      : new OAuthError('invalid_request', 'redirect_uri is not one registered for this client');
  const own = firstPartyRedirectUri(host, hosts);
  if (own === null) {
    return new OAuthError(
      'invalid_request',
      'this page was opened at an address that is not a name or address of this gateway; open the web app at one of its own addresses',
    );
  }
  return matchRedirectUri(redirectUri, [own]) ? null : new OAuthError('invalid_request', `redirect_uri must be ${own}`);
}

/** The request's own parameters as received (the non-empty ones), for the forms' hidden fields. */
function requestFields(params: unknown): Record<string, string> {
  const fields: Record<string, string> = {};
  const source = params as Record<string, unknown>;
  for (const name of REQUEST_FIELDS) {
    const value = source[name];
    if (typeof value === 'string' && value !== '') fields[name] = value;
  }
  return fields;
}
