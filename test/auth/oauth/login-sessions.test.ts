import { describe, expect, it } from 'vitest';
import { LoginSessions } from '../../../src/auth/oauth/login-sessions.js';

describe('LoginSessions', () => {
  it('knows a session until it expires or ends', () => {
    const s = new LoginSessions({ ttlMs: 1000 });
    const id = s.create('alice', 0);
    expect(id).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(s.get(id, 999)).toBe('alice');
    expect(s.get(id, 1000)).toBeNull();
    expect(s.size).toBe(0);
    const other = s.create('bob', 0);
    s.end(other);
    expect(s.get(other, 1)).toBeNull();
    expect(s.get(undefined, 1)).toBeNull();
    expect(s.get('made-up', 1)).toBeNull();
  });

  it('holds at most maxSessions, dropping the oldest', () => {
    const s = new LoginSessions({ ttlMs: 60_000, maxSessions: 3 });
    const ids = ['a', 'b', 'c', 'd'].map((u) => s.create(u, 0));
    expect(s.size).toBe(3);
    expect(s.get(ids[0], 1)).toBeNull();
    expect(ids.slice(1).map((id) => s.get(id, 1))).toEqual(['b', 'c', 'd']);
  });
});
