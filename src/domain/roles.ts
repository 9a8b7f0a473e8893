// Roles of the local accounts (`edge-gateway users add --role`). The names are the store's as well
// as auth's (local_users.role), so they sit here, below both; what each role may be granted is
// auth's to say (src/auth/roles.ts).

export const ROLES = ['viewer', 'admin'] as const;

export type Role = (typeof ROLES)[number];

export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (ROLES as readonly string[]).includes(value);
}
