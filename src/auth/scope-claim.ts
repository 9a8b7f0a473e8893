// RFC 6749 §3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ), separated by single spaces.
// Tokens with other characters are dropped rather than failing the whole claim, so one odd
// scope from an issuer does not lock a client out of the scopes it was rightly granted.
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/;

export function parseScope(claim: unknown): Set<string> {
  const granted = new Set<string>();
  if (typeof claim !== 'string') return granted;
  for (const part of claim.split(' ')) {
    if (SCOPE_TOKEN.test(part)) granted.add(part);
  }
  return granted;
}

/** Whole-name match only: "devices:readx" and "devices" do not grant "devices:read". */
export function hasScope(granted: ReadonlySet<string>, needed: string): boolean {
  return granted.has(needed);
}
