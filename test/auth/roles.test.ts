import { describe, expect, it } from 'vitest';
import { DEFAULT_ROLE, isRole, ROLE_SCOPES, roleNarrows, scopesForRole } from '../../src/auth/roles.js';
import { SCOPES } from '../../src/auth/scope-catalogue.js';

describe('roles', () => {
  it('gives a viewer the read scopes and an admin every scope; viewer is the default', () => {
    expect([...ROLE_SCOPES.viewer].sort()).toEqual(['alerts:read', 'devices:read', 'recordings:read']);
    expect(ROLE_SCOPES.admin).toEqual(SCOPES);
    expect(DEFAULT_ROLE).toBe('viewer');
  });

  it.each([
    ['devices:read devices:write alerts:read', 'viewer', ['alerts:read', 'devices:read']],
    ['devices:write', 'viewer', []],
    ['devices:read devices:write alerts:read', 'admin', ['alerts:read', 'devices:read', 'devices:write']],
    ['', 'admin', []],
  ] as const)('cuts %j to what a %s may have', (requested, role, expected) => {
    expect([...scopesForRole(requested.split(' ').filter(Boolean), role)].sort()).toEqual(expected);
  });

  it('knows its roles and nothing else', () => {
    expect(['viewer', 'admin'].every(isRole)).toBe(true);
    for (const other of ['Admin', 'root', '', ' viewer', null, 1]) expect(isRole(other)).toBe(false);
  });

  it.each([
    ['admin', 'viewer', true],
    ['viewer', 'admin', false],
    ['viewer', 'viewer', false],
    ['admin', 'admin', false],
  ] as const)('says whether %s → %s may be granted less', (from, to, narrows) => {
    expect(roleNarrows(from, to)).toBe(narrows);
  });
});
