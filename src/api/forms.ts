// The two bits of browser-form HTTP the OAuth pages need, small enough not to need a library:
// application/x-www-form-urlencoded bodies and the Cookie header.

/**
 * A form body as parameters; a name given more than once becomes an array, so the OAuth rules
 * can refuse duplicates (RFC 6749 §3.1) instead of silently taking one. Null-prototype object:
 * a field named __proto__ is a field.
 */
export function parseFormBody(body: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = Object.create(null) as Record<string, string | string[]>;
  for (const [name, value] of new URLSearchParams(body)) {
    const seen = out[name];
    if (seen === undefined) out[name] = value;
    else if (Array.isArray(seen)) seen.push(value);
    else out[name] = [seen, value];
  }
  return out;
}

/** The value of one cookie (RFC 6265 §5.4 syntax), or undefined; the first wins when repeated. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() !== name) continue;
    return part.slice(eq + 1).trim();
  }
  return undefined;
}

/**
 * A Set-Cookie value for our pages' cookies: __Host- names need Secure, Path=/ and no Domain,
 * so no other host or path can set or read them; HttpOnly and SameSite=Strict keep them out of
 * scripts and cross-site requests.
 */
export function hostCookie(name: string, value: string, maxAgeS: number): string {
  return `${name}=${value}; Path=/; Secure; HttpOnly; SameSite=Strict; Max-Age=${maxAgeS}`;
}
