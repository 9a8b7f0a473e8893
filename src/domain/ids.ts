import { randomBytes } from 'node:crypto';

/** Ids handed out by the API: URL-safe, unguessable, with a prefix that says what they name. */
export const ID_PATTERN = '^[A-Za-z0-9_-]{1,128}$';

export function newId(prefix: 'rec' | 'alr' | 'ctl' | 'dev' | 'msg' | 'cli' | 'grt' | 'psh'): string {
  return `${prefix}_${randomBytes(12).toString('base64url')}`;
}
