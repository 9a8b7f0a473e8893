// RFC 6750 credentials parsing, kept free of sockets so it can be table- and fuzz-tested.

export interface BearerInput {
  /** Node's `req.rawHeaders`: a flat name, value, name, value … list. */
  rawHeaders: readonly string[];
  /** The raw query string without the leading '?', or ''. */
  query: string;
}

export type BearerResult = { kind: 'none' } | { kind: 'token'; token: string } | { kind: 'malformed'; reason: string };

// RFC 6750 §2.1 b64token.
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;
const AUTHORIZATION = 'authorization';
const SCHEME_SEPARATOR = /[ \t]+/;

export function parseBearer(input: BearerInput): BearerResult {
  const located = locateBearer(input);
  if (located.kind !== 'unchecked') return located;
  const fault = b64TokenFault(located.token);
  return fault === null ? { kind: 'token', token: located.token } : { kind: 'malformed', reason: fault };
}

/** parseBearer's answer before the token's characters are looked at (b64TokenFault does that). */
export type LocatedBearer = Exclude<BearerResult, { kind: 'token' }> | { kind: 'unchecked'; token: string };

/**
 * parseBearer without the scan of the token's characters: where the token is, or why there is none.
 * For a caller that can tell a well-formed token without the scan (one equal to a token it has
 * verified before); any other token must go through b64TokenFault before it is used.
 */
export function locateBearer(input: BearerInput): LocatedBearer {
  // Checked before the header so a token in the URL is refused even when the header is fine:
  // by the time we see it, it has already been written to proxy and access logs.
  if (hasAccessTokenParam(input.query)) {
    return { kind: 'malformed', reason: 'access_token in the query string is not accepted' };
  }

  let found: string | null = null;
  const headers = input.rawHeaders;
  for (let i = 0; i + 1 < headers.length; i += 2) {
    const name = headers[i];
    const value = headers[i + 1];
    // The length first: every request's other headers are passed over without a lower-cased copy.
    if (
      typeof name !== 'string' ||
      name.length !== AUTHORIZATION.length ||
      name.toLowerCase() !== AUTHORIZATION ||
      typeof value !== 'string'
    )
      continue;
    // Two headers may come from a client and a proxy disagreeing; picking either one would let
    // whichever hop we did not expect decide who the caller is.
    if (found !== null) return { kind: 'malformed', reason: 'more than one Authorization header' };
    found = value;
  }
  if (found === null) return { kind: 'none' };

  const value = trimOws(found);
  if (value === '') return { kind: 'malformed', reason: 'empty Authorization header' };

  const sep = SCHEME_SEPARATOR.exec(value);
  const scheme = sep === null ? value : value.slice(0, sep.index);
  // Basic, Digest … are someone else's credentials: the caller is unauthenticated to us, not malformed.
  if (scheme.toLowerCase() !== 'bearer') return { kind: 'none' };
  if (sep === null) return { kind: 'malformed', reason: 'Bearer without a token' };
  return { kind: 'unchecked', token: value.slice(sep.index + sep[0].length) };
}

/** Why `token` is not an RFC 6750 b64token, or null when it is one. */
export function b64TokenFault(token: string): string | null {
  // One pass over the token when it is well formed (b64token has no blanks); which fault it has
  // is only worked out for one that is not.
  if (B64TOKEN.test(token)) return null;
  if (SCHEME_SEPARATOR.test(token)) return 'unexpected data after the token';
  return 'token has characters not allowed by RFC 6750';
}

/** The value without leading and trailing spaces and tabs (RFC 9110 OWS), scanned from each end. */
function trimOws(value: string): string {
  let start = 0;
  let end = value.length;
  while (start < end && isOws(value.charCodeAt(start))) start++;
  while (end > start && isOws(value.charCodeAt(end - 1))) end--;
  return start === 0 && end === value.length ? value : value.slice(start, end);
}

const isOws = (code: number): boolean => code === 0x20 || code === 0x09;

function hasAccessTokenParam(query: string): boolean {
  if (query === '') return false;
  // Decoding turns only %XX and '+' into other characters, so without a '%' the name can only
  // be there as written; the common query (?limit=50) then costs no URLSearchParams.
  if (!query.includes('%') && !query.includes('access_token')) return false;
  // URLSearchParams percent-decodes names, so "access%5Ftoken" is caught too; it never throws.
  return new URLSearchParams(query).has('access_token');
}
