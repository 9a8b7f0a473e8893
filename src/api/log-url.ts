// Credentials that ride in URLs are cut short before a URL is logged: the stream ticket in a
// /live/<ticket>/… path, the playback ticket in ?ticket=…, and an access_token a client put in the
// query against RFC 6750 §2.3 (refused, but the URL still reaches the log). A few leading
// characters stay, enough to tell two log lines apart, far too few to use. Pure.

const KEPT = 6;
const SECRET_PARAMS = new Set(['ticket', 'access_token']);
const LIVE_TICKET = /^(\/live\/)([^/?]+)/;

const cut = (secret: string): string => (secret.length <= KEPT ? '…' : `${secret.slice(0, KEPT)}…`);

function paramName(pair: string): string {
  const eq = pair.indexOf('=');
  const raw = (eq < 0 ? pair : pair.slice(0, eq)).replaceAll('+', ' ');
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

/** `url` (a request target: path and query) with every ticket and access token cut short. */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  const pathPart = q < 0 ? url : url.slice(0, q);
  const path = pathPart.replace(LIVE_TICKET, (_m, prefix: string, ticket: string) => prefix + cut(ticket));
  if (q < 0) return path;
  const query = url
    .slice(q + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      return eq >= 0 && SECRET_PARAMS.has(paramName(pair))
        ? `${pair.slice(0, eq + 1)}${cut(pair.slice(eq + 1))}`
        : pair;
    })
    .join('&');
  return `${path}?${query}`;
}
