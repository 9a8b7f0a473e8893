// Redirect URI rules of the local authorization server. The redirect_uri is where the browser
// carries the authorization code, so any leniency here (prefix match, case folding, decoding)
// is a way to send someone's code to an attacker. Everything is an exact string comparison
// except the one relaxation RFC 8252 §7.3 requires: the port of a loopback IP redirect URI.

export const MAX_REDIRECT_URI_LENGTH = 2000;

/** https, loopback http (RFC 8252 §7.3) or a private-use scheme (RFC 8252 §7.1). */
export type RedirectUriKind = 'https' | 'loopback' | 'private_use';

export type RedirectUriProblem =
  | 'empty'
  | 'too_long'
  | 'bad_characters'
  | 'fragment'
  | 'unparseable'
  | 'userinfo'
  | 'http_not_loopback'
  | 'scheme_not_allowed'
  | 'private_use_form'
  | 'not_normalized'
  | 'reserved_query_parameter';

export type RedirectUriCheck =
  { ok: true; kind: RedirectUriKind } | { ok: false; problem: RedirectUriProblem; message: string };

// Parameters the authorization response adds; a registered query holding one of them would make
// the redirect carry two values and leave the client to guess which is ours.
const RESERVED_QUERY_PARAMS = ['code', 'state', 'error', 'error_description', 'error_uri', 'iss'];

// Printable ASCII without space. Anything else would be percent-encoded or silently dropped by
// the URL parser (tabs and newlines are), so the string we compare would not be the one we use.
const URI_CHARS = /^[\x21-\x7E]+$/;
// RFC 8252 §7.1: scheme:/path, one slash, because there is no naming authority.
const PRIVATE_USE_FORM = /^[a-z][a-z0-9+.-]*:\/(?!\/)/;
// Only the IP literals count as loopback. "localhost" is a name that DNS or /etc/hosts may send
// elsewhere, and a port-free match on it would let any local listener catch the code (RFC 8252 §8.3).
const LOOPBACK_PREFIX = /^http:\/\/(127\.0\.0\.1|\[::1\])(?::[0-9]+)?(?=[/?]|$)/;

/**
 * Checks a redirect URI before `clients add` stores it, and the requested one before it is
 * compared. The URI must already be in the form the WHATWG URL parser writes it (lower-case scheme
 * and host, no default port, no dot segments, needed percent-encoding done): then the exact
 * string we store is the one a browser ends up at.
 */
export function validateRegisteredRedirectUri(uri: string): RedirectUriCheck {
  if (typeof uri !== 'string' || uri === '') return refuse('empty', 'the redirect URI is empty');
  if (uri.length > MAX_REDIRECT_URI_LENGTH)
    return refuse('too_long', `the redirect URI is longer than ${MAX_REDIRECT_URI_LENGTH} characters`);
  if (!URI_CHARS.test(uri))
    return refuse('bad_characters', 'the redirect URI may hold only printable ASCII characters without spaces');
  // RFC 6749 §3.1.2: the redirection endpoint URI MUST NOT include a fragment; an empty one ("#")
  // counts too, since the response would be appended after it and never reach the server.
  if (uri.includes('#')) return refuse('fragment', 'the redirect URI must not have a fragment (#)');

  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return refuse('unparseable', 'the redirect URI is not an absolute URI');
  }

  const scheme = url.protocol.slice(0, -1);
  // Before anything that looks at the host: in http://127.0.0.1@evil.example/ the host is
  // evil.example, and the parser drops an empty "@" without a trace.
  if (url.username !== '' || url.password !== '' || (hasAuthority(uri) && rawAuthority(uri).includes('@'))) {
    return refuse('userinfo', 'the redirect URI must not hold user information (user@host)');
  }
  if (url.href !== uri)
    return refuse('not_normalized', `the redirect URI is not in normalized form; write it as ${url.href}`);

  let kind: RedirectUriKind;
  if (scheme === 'https') {
    kind = 'https';
  } else if (scheme === 'http') {
    if (!LOOPBACK_PREFIX.test(uri)) {
      return refuse(
        'http_not_loopback',
        url.hostname === 'localhost'
          ? 'http is allowed only for the loopback IP literals 127.0.0.1 and [::1]; localhost is not accepted (RFC 8252 §8.3)'
          : 'http is allowed only for the loopback IP literals 127.0.0.1 and [::1]; use https',
      );
    }
    kind = 'loopback';
  } else if (isSpecialScheme(scheme) || !scheme.includes('.')) {
    // Requiring a dot keeps out javascript:, data:, file:, vbscript: … and asks for the reverse
    // domain name RFC 8252 §7.1 says a private-use scheme must be.
    return refuse(
      'scheme_not_allowed',
      'the redirect URI must use https, loopback http, or a private-use scheme such as com.example.app:/callback',
    );
  } else if (!PRIVATE_USE_FORM.test(uri)) {
    return refuse(
      'private_use_form',
      'a private-use scheme redirect URI has the form com.example.app:/path (one slash, no host; RFC 8252 §7.1)',
    );
  } else {
    kind = 'private_use';
  }

  for (const name of RESERVED_QUERY_PARAMS) {
    if (url.searchParams.has(name)) {
      return refuse(
        'reserved_query_parameter',
        `the redirect URI's query must not have a ${name} parameter: the authorization response adds it`,
      );
    }
  }
  return { ok: true, kind };
}

/**
 * Whether `requested` may be used as the redirect URI of a client registered with `registered`:
 * the same string as one of them, or, for a loopback IP redirect URI, the same string up to the
 * port (RFC 8252 §7.3: native apps listen on whatever port the OS gives them). A URI that would
 * fail registration never matches, even if an older registration stored it.
 */
export function matchRedirectUri(requested: string, registered: readonly string[]): boolean {
  const check = validateRegisteredRedirectUri(requested);
  if (!check.ok) return false;
  if (registered.includes(requested)) return true;
  if (check.kind !== 'loopback') return false;
  const wanted = withoutLoopbackPort(requested);
  for (const candidate of registered) {
    if (typeof candidate !== 'string' || !LOOPBACK_PREFIX.test(candidate)) continue;
    const candidateCheck = validateRegisteredRedirectUri(candidate);
    if (candidateCheck.ok && candidateCheck.kind === 'loopback' && withoutLoopbackPort(candidate) === wanted)
      return true;
  }
  return false;
}

/**
 * Adds parameters to a redirect URI's query in application/x-www-form-urlencoded form (RFC 6749
 * §4.1.2), keeping the existing query byte for byte (§3.1.2: it MUST be retained). Entries whose
 * value is undefined are left out. Used for both successful and error authorization responses.
 */
export function appendQueryParams(uri: string, params: ReadonlyArray<readonly [string, string | undefined]>): string {
  // Validated redirect URIs never have one; appending after a fragment would hide the response.
  if (uri.includes('#')) throw new TypeError('cannot add query parameters to a URI with a fragment');
  const added = new URLSearchParams();
  for (const [name, value] of params) {
    if (value !== undefined) added.append(name, value);
  }
  const encoded = added.toString();
  if (encoded === '') return uri;
  const q = uri.indexOf('?');
  if (q === -1) return `${uri}?${encoded}`;
  const separator = q === uri.length - 1 || uri.endsWith('&') ? '' : '&';
  return `${uri}${separator}${encoded}`;
}

/** The successful authorization response redirect (RFC 6749 §4.1.2), with RFC 9207's iss when given. */
export function codeRedirect(redirectUri: string, code: string, state: string | undefined, issuer?: string): string {
  return appendQueryParams(redirectUri, [
    ['code', code],
    ['state', state],
    ['iss', issuer],
  ]);
}

function refuse(problem: RedirectUriProblem, message: string): RedirectUriCheck {
  return { ok: false, problem, message };
}

function isSpecialScheme(scheme: string): boolean {
  return ['http', 'https', 'ws', 'wss', 'ftp', 'file'].includes(scheme);
}

function hasAuthority(uri: string): boolean {
  return /^[A-Za-z][A-Za-z0-9+.-]*:[/\\]{2}/.test(uri);
}

/** The authority as written, between "//" and the first "/", "?", "#" or "\" (which WHATWG treats as "/"). */
function rawAuthority(uri: string): string {
  const start = uri.indexOf(':') + 3;
  const rest = uri.slice(start);
  const end = rest.search(/[/?#\\]/);
  return end === -1 ? rest : rest.slice(0, end);
}

function withoutLoopbackPort(uri: string): string {
  return uri.replace(LOOPBACK_PREFIX, 'http://$1');
}
