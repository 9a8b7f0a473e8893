// RFC 6750 credentials parsing, kept free of sockets so it can be table- and fuzz-tested.

export interface BearerInput {
  /** Node's `req.rawHeaders`: a flat name, value, name, value … list. */
  rawHeaders: readonly string[];
  /** The raw query string without the leading '?', or ''. */
  query: string;
}

export type BearerResult =
  | { kind: 'none' }
  | { kind: 'token'; token: string }
  | { kind: 'malformed'; reason: string };

// RFC 6750 §2.1 b64token.
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;
const OWS = /^[ \t]+|[ \t]+$/g;
const SCHEME_SEPARATOR = /[ \t]+/;

export function parseBearer(input: BearerInput): BearerResult {
  // Checked before the header so a token in the URL is refused even when the header is fine:
  // by the time we see it, it has already been written to proxy and access logs.
  if (hasAccessTokenParam(input.query)) {
    return { kind: 'malformed', reason: 'access_token in the query string is not accepted' };
  }

  const values: string[] = [];
  const headers = input.rawHeaders;
  for (let i = 0; i + 1 < headers.length; i += 2) {
    const name = headers[i];
    const value = headers[i + 1];
    if (typeof name === 'string' && name.toLowerCase() === 'authorization' && typeof value === 'string') values.push(value);
  }
  if (values.length === 0) return { kind: 'none' };
  // Two headers may come from a client and a proxy disagreeing; picking either one would let
  // whichever hop we did not expect decide who the caller is.
  if (values.length > 1) return { kind: 'malformed', reason: 'more than one Authorization header' };

  const value = (values[0] as string).replace(OWS, '');
  if (value === '') return { kind: 'malformed', reason: 'empty Authorization header' };

  const sep = SCHEME_SEPARATOR.exec(value);
  const scheme = sep === null ? value : value.slice(0, sep.index);
  // Basic, Digest … are someone else's credentials: the caller is unauthenticated to us, not malformed.
  if (scheme.toLowerCase() !== 'bearer') return { kind: 'none' };
  if (sep === null) return { kind: 'malformed', reason: 'Bearer without a token' };

  const rest = value.slice(sep.index + sep[0].length);
  if (SCHEME_SEPARATOR.test(rest)) return { kind: 'malformed', reason: 'unexpected data after the token' };
  if (!B64TOKEN.test(rest)) return { kind: 'malformed', reason: 'token has characters not allowed by RFC 6750' };
  return { kind: 'token', token: rest };
}

function hasAccessTokenParam(query: string): boolean {
  if (query === '') return false;
  // Decoding turns only %XX and '+' into other characters, so without a '%' the name can only
  // be there as written; the common query (?limit=50) then costs no URLSearchParams.
  if (!query.includes('%') && !query.includes('access_token')) return false;
  // URLSearchParams percent-decodes names, so "access%5Ftoken" is caught too; it never throws.
  return new URLSearchParams(query).has('access_token');
}
