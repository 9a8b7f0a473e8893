import { describe, expect, it } from 'vitest';
import { HlsSessions } from '../../../src/media/hls/sessions.js';

// One HLS session per ticket while it lasts: the ticket's index.m3u8 requested again leads to the
// same session (a reload holds no new place); a session over (idle, past its lifetime, ended)
// gives way to a new one; the bound counts sessions, not requests.

const sessions = () => new HlsSessions({ maxSessions: 2, maxSessionS: 60, idleS: 10 });

describe('HlsSessions', () => {
  it('gives the ticket its live session again, and another ticket its own', () => {
    const s = sessions();
    const a = s.start('t', 'cam', 'main', 0);
    expect(a?.created).toBe(true);
    for (const at of [1000, 5000, 14_000])
      expect(s.start('t', 'cam', 'main', at)).toEqual({ session: a?.session, created: false });
    expect(s.size).toBe(1);
    const b = s.start('u', 'cam', 'main', 15_000);
    expect(b?.created).toBe(true);
    expect(b?.session.id).not.toBe(a?.session.id);
    // Two sessions are the bound: a third ticket is refused, the first two still reuse theirs.
    expect(s.start('v', 'cam', 'main', 15_000)).toBeNull();
    expect(s.start('t', 'cam', 'main', 15_000)?.created).toBe(false);
  });

  it('starts a new session for the ticket once its session is idle, past its lifetime, or ended', () => {
    const s = sessions();
    const first = s.start('t', 'cam', 'main', 0)!.session;
    const afterIdle = s.start('t', 'cam', 'main', 10_001)!;
    expect(afterIdle.created).toBe(true);
    expect(afterIdle.session.id).not.toBe(first.id);
    s.sweep(10_001);
    expect(s.size).toBe(1);
    s.end(afterIdle.session.id);
    expect(s.start('t', 'cam', 'main', 10_002)?.created).toBe(true);
    // Kept alive by requests, it still ends maxSessionS after its start.
    const kept = s.start('k', 'cam', 'main', 0)!.session;
    for (let at = 5000; at < 60_000; at += 5000) expect(s.find('k', kept.id, at)).toBe(kept);
    expect(s.start('k', 'cam', 'main', 60_000)?.session.id).not.toBe(kept.id);
  });

  it('finds a session only under the ticket that started it', () => {
    const s = sessions();
    const { session } = s.start('t', 'cam', 'main', 0)!;
    expect(s.find('u', session.id, 1)).toBeUndefined();
    expect(s.find('t', session.id, 1)).toBe(session);
  });
});
