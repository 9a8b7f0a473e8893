import type { Role } from '../domain/roles.js';
import { SCOPES, type Scope } from './scope-catalogue.js';

// Roles of the local accounts (`edge-gateway users add --role`): what a user may be granted,
// whatever an app asks for. A token gets the intersection of the requested scopes with the role's.
// The role names are defined in src/domain (the store keeps them too) and offered here with the rest.

export { isRole, ROLES, type Role } from '../domain/roles.js';

/**
 * `users add` without --role: the least that is still useful (docs/oauth.md). Accounts made before
 * roles existed became admin (store migration 9): they could be granted every scope then.
 */
export const DEFAULT_ROLE: Role = 'viewer';

export const ROLE_SCOPES: Readonly<Record<Role, readonly Scope[]>> = {
  viewer: ['devices:read', 'alerts:read', 'recordings:read'],
  admin: SCOPES,
};

/** The requested scopes this role may have (possibly none). */
export function scopesForRole(requested: Iterable<string>, role: Role): Set<string> {
  const allowed: ReadonlySet<string> = new Set(ROLE_SCOPES[role]);
  return new Set([...requested].filter((s) => allowed.has(s)));
}

/** True when `to` may be granted less than `from`: a grant made under `from` may hold scopes `to` lacks. */
export function roleNarrows(from: Role, to: Role): boolean {
  const allowed: ReadonlySet<string> = new Set(ROLE_SCOPES[to]);
  return ROLE_SCOPES[from].some((s) => !allowed.has(s));
}
