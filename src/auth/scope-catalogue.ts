// The scopes of the spec's section 5, the one list the API, the local authorization server and the
// CLI share.

export const SCOPES = [
  'devices:read',
  'devices:write',
  'alerts:read',
  'alerts:write',
  'recordings:read',
  'recordings:write',
  'users:read',
  'users:write',
] as const;

export type Scope = (typeof SCOPES)[number];

/** What each scope lets an app do, for the consent page (the spec's wording). */
export const SCOPE_MEANINGS: Readonly<Record<Scope, string>> = {
  'devices:read': 'List and view device information',
  'devices:write': 'Control devices',
  'alerts:read': 'View alerts',
  'alerts:write': 'Manage alerts',
  'recordings:read': 'Access recordings',
  'recordings:write': 'Download and export recordings',
  'users:read': 'View the user profile',
  'users:write': 'Update user settings',
};

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}
