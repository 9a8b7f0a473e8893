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

/**
 * The first name that appears twice among the top-level members of a JSON object text (already
 * known to be valid JSON), or null. JSON.parse keeps the last of repeated names silently; the
 * OAuth endpoints refuse a repeated parameter instead (RFC 6749 §3.1), in JSON bodies as in forms.
 */
export function repeatedJsonName(text: string): string | null {
  const seen = new Set<string>();
  let depth = 0;
  let expectName = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      const start = i;
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === '\\') i++;
      if (depth === 1 && expectName) {
        const name = JSON.parse(text.slice(start, i + 1)) as string;
        if (seen.has(name)) return name;
        seen.add(name);
        expectName = false;
      }
    } else if (c === '{' || c === '[') {
      depth++;
      expectName = depth === 1 && c === '{';
    } else if (c === '}' || c === ']') {
      depth--;
    } else if (c === ',' && depth === 1) {
      expectName = true;
    }
  }
  return null;
}
