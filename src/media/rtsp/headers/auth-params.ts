import { fail, hasControlChar, isToken, isTokenChar, quote, readQuoted, trimLws } from './syntax.js';

// The list syntax WWW-Authenticate and Authorization share (RFC 7235 §2.1, which RTSP borrows
// from HTTP unchanged: RFC 2326 §12.5, §12.44):
//   auth-scheme [ 1*SP ( token68 / #( token BWS "=" BWS ( token / quoted-string ) ) ) ]

export interface RawAuth {
  scheme: string;
  token68: string | null;
  /** Lower-cased names, unquoted values. */
  params: Map<string, string>;
}

/** Every challenge or set of credentials in one header value, in order. */
export function parseAuthList(value: string): RawAuth[] {
  if (hasControlChar(value)) fail('control character in an authentication header');
  // Sticky (so a fresh one per call: lastIndex is state), and anchored by a following `,` or
  // the end, so it cannot backtrack past one token.
  const token68 = /[A-Za-z0-9\-._~+/]+=*[ \t]*(?=,|$)/y;
  const out: RawAuth[] = [];
  const n = value.length;
  let i = 0;
  let current: RawAuth | null = null;
  const skipWs = (): void => {
    while (i < n && (value.charCodeAt(i) === 0x20 || value.charCodeAt(i) === 0x09)) i++;
  };
  while (i < n) {
    skipWs();
    if (i >= n) break;
    if (value.charCodeAt(i) === 0x2c) {
      i++;
      continue;
    }
    const start = i;
    while (i < n && isTokenChar(value.charCodeAt(i))) i++;
    if (i === start) fail('invalid character in an authentication header');
    const name = value.slice(start, i);
    skipWs();
    if (value.charCodeAt(i) !== 0x3d) {
      // A token not followed by `=` starts the next challenge; an optional token68 follows it.
      current = { scheme: name, token68: null, params: new Map() };
      out.push(current);
      skipWs();
      token68.lastIndex = i;
      const m = token68.exec(value);
      if (m !== null) {
        current.token68 = trimLws(m[0]);
        i += m[0].length;
      }
      continue;
    }
    if (current === null) fail('auth-param before an auth-scheme');
    i++; // '='
    skipWs();
    let v: string;
    if (value.charCodeAt(i) === 0x22) {
      const q = readQuoted(value, i);
      v = q.text;
      i = q.end;
    } else {
      // Cameras send unquoted values that are not tokens (`nonce=abc/def==`): take up to the next separator.
      const vs = i;
      while (i < n && value.charCodeAt(i) !== 0x2c && value.charCodeAt(i) !== 0x20 && value.charCodeAt(i) !== 0x09) i++;
      v = value.slice(vs, i);
    }
    const key = name.toLowerCase();
    if (current.params.has(key)) fail(`duplicate auth-param ${key}`);
    current.params.set(key, v);
  }
  return out;
}

/** A boolean auth-param (`stale`, `userhash`): anything but `true`, in any case, is false. */
export function isTrue(text: string | undefined): boolean | undefined {
  return text === undefined ? undefined : text.toLowerCase() === 'true';
}

export function param(name: string, value: string): string {
  return `${name}=${quote(value)}`;
}

/** Token-valued parameters are written bare, as RFC 7616's examples do; others quoted. */
export function bareOrQuoted(name: string, value: string): string {
  return isToken(value) ? `${name}=${value}` : param(name, value);
}
