import { randomBytes } from 'node:crypto';
import type { StreamProfile } from '../../domain/types.js';

// HLS viewers' sessions. A stream ticket starts one (the first playlist request, before the
// ticket's expiry); from then on the player fetches under /live/<ticket>/<session id>/…, which
// stays valid until the session's own end (rtsp.max_session_s after its start, as an RTSP session)
// or until it has been idle for idleS, whatever the ticket's expiry. The id is 128 random bits:
// the session path is as unguessable as a ticket, and bound to the ticket that started it.
//
// One session per ticket: a player that loads the ticket's index.m3u8 again (a reload of the page,
// a player retrying, a second player given the same address) is led to the ticket's session while
// it lasts, instead of a new one each time, so a client reloading in a loop holds one session, not
// all of maxSessions. Sharing it costs nothing: a session holds no media of its own (the muxer is
// per camera profile) and every request says what it wants.

export interface HlsSession {
  id: string;
  /** The ticket text that started it: only URLs under that ticket reach it. */
  ticket: string;
  deviceId: string;
  profile: StreamProfile;
  /** ms since the epoch. */
  startedAt: number;
  endsAt: number;
  lastSeen: number;
  /** Its requests being answered (held ones included): a session is not idle while one waits. */
  inFlight: number;
}

export const SESSION_ID = /^[A-Za-z0-9_-]{22}$/;

export class HlsSessions {
  private readonly sessions = new Map<string, HlsSession>();
  /** The session each ticket started (its id). */
  private readonly ofTicket = new Map<string, string>();

  constructor(private readonly limits: { maxSessions: number; maxSessionS: number; idleS: number }) {}

  get size(): number {
    return this.sessions.size;
  }

  /** Sessions of the device's streams not ended or idle at `now`. */
  viewersOf(deviceId: string, now: number): number {
    let n = 0;
    for (const s of this.sessions.values()) if (s.deviceId === deviceId && !this.over(s, now)) n++;
    return n;
  }

  /** The ticket's live session (marked as seen), else a new one; null when maxSessions are open. */
  start(
    ticket: string,
    deviceId: string,
    profile: StreamProfile,
    now: number,
  ): { session: HlsSession; created: boolean } | null {
    const id = this.ofTicket.get(ticket);
    const existing = id === undefined ? undefined : this.find(ticket, id, now);
    if (existing) return { session: existing, created: false };
    if (this.sessions.size >= this.limits.maxSessions) return null;
    const session: HlsSession = {
      id: randomBytes(16).toString('base64url'),
      ticket,
      deviceId,
      profile,
      startedAt: now,
      endsAt: now + this.limits.maxSessionS * 1000,
      lastSeen: now,
      inFlight: 0,
    };
    this.sessions.set(session.id, session);
    this.ofTicket.set(ticket, session.id);
    return { session, created: true };
  }

  /** The live session of this ticket and id (marked as seen), or undefined. */
  find(ticket: string, id: string, now: number): HlsSession | undefined {
    const session = this.sessions.get(id);
    if (!session || session.ticket !== ticket || this.over(session, now)) return undefined;
    session.lastSeen = now;
    return session;
  }

  /** Drops ended and idle sessions; returns those left. */
  sweep(now: number): HlsSession[] {
    const live: HlsSession[] = [];
    for (const [id, s] of this.sessions) {
      if (this.over(s, now)) this.end(id);
      else live.push(s);
    }
    return live;
  }

  end(id: string): void {
    const session = this.sessions.get(id);
    if (!session) return;
    this.sessions.delete(id);
    if (this.ofTicket.get(session.ticket) === id) this.ofTicket.delete(session.ticket);
  }

  private over(s: HlsSession, now: number): boolean {
    return now >= s.endsAt || (s.inFlight === 0 && now - s.lastSeen > this.limits.idleS * 1000);
  }
}
