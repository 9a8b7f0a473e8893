import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import path from 'node:path';
import { createOnce } from '../platform/durable-files.js';
import type { StreamProfile } from '../domain/types.js';
import type { SecretBox } from '../platform/secret-box.js';
import { TicketError } from './errors.js';

// Stream tickets: the short, unforgeable token inside a live-stream URL
// (rtsp://gateway:8554/live/<ticket>). It names the device and profile and carries its expiry; an
// HMAC-SHA-256 (truncated to 128 bits) under a key kept sealed in data_dir makes it unforgeable.
// It sits in the path, which every client keeps when it builds SETUP URLs ("…/<ticket>/trackID=0").
//
// Layout before base64url: kind (1: 1 a stream, 2 a recording's playback, 3 a window of footage) | key id (2) | expiry,
// Unix seconds (4, big-endian) | flags (1: for a stream, bit 0 profile, 0 main / 1 sub; bit 1 the
// recorder's own ticket; for footage, bit 0 a download's; 0 for the others) | subject: the device id, the recording id, or
// device~start~end (seconds) for footage (UTF-8).
// Then ".", then the MAC over those bytes: the kind is signed, so neither kind passes for the other.
//
// Playback tickets are the credential of a recording's playback_url (GET
// /v1/recordings/{id}/play?ticket=…), which a <video> element fetches without an Authorization
// header: one recording, playback only, short-lived. Footage tickets are the same for a window of a
// camera's continuous footage (GET /v1/footage/play/{ticket}/…, the playlist and its files); a
// download's footage ticket, minted only for recordings:write, also opens the window as one MP4
// (GET /v1/footage/export/{ticket}), which a download link fetches without the bearer token too.

export interface TicketClaims {
  deviceId: string;
  profile: StreamProfile;
  /** ms since the epoch (whole seconds). */
  expiresAt: number;
  /**
   * A ticket for this box's own readers (the motion watcher, the audio transcoder): honoured from
   * loopback only, and its session is not cut at rtsp.max_session_s (they read around the clock).
   * Absent: a viewer's.
   */
  recorder?: boolean;
}

/** What a playback ticket names: one recording, until expiresAt (ms since the epoch, whole seconds). */
export interface PlaybackClaims {
  recordingId: string;
  expiresAt: number;
}

/**
 * What a footage ticket names: one device's continuous footage in [startMs, endMs) (whole seconds), until expiresAt.
 */
export interface FootageClaims {
  deviceId: string;
  startMs: number;
  endMs: number;
  expiresAt: number;
  /** The window may also be downloaded (minted for recordings:write). Absent: played only. */
  download?: boolean;
}

export type TicketKind = 'stream' | 'playback' | 'footage';

const VERSION = 1;
const PLAYBACK = 2;
const FOOTAGE = 3;
const KIND_BYTE: Record<TicketKind, number> = { stream: VERSION, playback: PLAYBACK, footage: FOOTAGE };
/** The flags each kind may carry. */
const MAX_FLAGS: Record<number, number> = { [VERSION]: 3, [PLAYBACK]: 0, [FOOTAGE]: 1 };
const FOOTAGE_SUBJECT = /^([A-Za-z0-9_-]{1,100})~(\d{1,11})~(\d{1,11})$/;
const MAC_BYTES = 16;
const MAX_SUBJECT = 128;
const MAX_TICKET = 256;
const KEY_LABEL = 'rtsp-ticket-key';
const TICKET_TEXT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/;

export class TicketSigner {
  private readonly keyId: Buffer;

  constructor(private readonly key: Buffer) {
    if (key.length < 32) throw new RangeError('ticket key must be at least 32 bytes');
    // Names the key inside each ticket, so a ticket from before a key change is refused as 'unknown_key'.
    this.keyId = createHash('sha256').update(key).digest().subarray(0, 2);
  }

  /** The key in data_dir/rtsp-ticket.key, sealed at rest; created on first use. */
  static openInDir(dataDir: string, secretBox: SecretBox): TicketSigner {
    const sealed = createOnce(path.join(dataDir, 'rtsp-ticket.key'), () =>
      secretBox.seal(randomBytes(32), KEY_LABEL),
    ).toString('utf8');
    return new TicketSigner(secretBox.open(sealed, KEY_LABEL));
  }

  issue(claims: TicketClaims): string {
    return this.seal(
      'stream',
      claims.expiresAt,
      (claims.profile === 'sub' ? 1 : 0) | (claims.recorder ? 2 : 0),
      claims.deviceId,
    );
  }

  /** The claims of a valid, unexpired stream ticket; throws TicketError otherwise. */
  verify(ticket: string, nowMs: number): TicketClaims {
    const { body, expiresAt } = this.open(ticket, 'stream');
    if (nowMs >= expiresAt) throw new TicketError('expired');
    const flags = body[7] as number;
    return {
      deviceId: body.subarray(8).toString('utf8'),
      profile: flags & 1 ? 'sub' : 'main',
      expiresAt,
      ...(flags & 2 ? { recorder: true } : {}),
    };
  }

  /** A ticket that plays one recording (and opens nothing else) until claims.expiresAt. */
  issuePlayback(claims: PlaybackClaims): string {
    return this.seal('playback', claims.expiresAt, 0, claims.recordingId);
  }

  /**
   * The claims of a valid, unexpired playback ticket of `recordingId`; throws TicketError (kind
   * 'playback') otherwise. Another recording's ticket is refused before its expiry is looked at.
   */
  verifyPlayback(ticket: string, nowMs: number, recordingId: string): PlaybackClaims {
    const { body, expiresAt } = this.open(ticket, 'playback');
    const subject = body.subarray(8).toString('utf8');
    if (subject !== recordingId) throw new TicketError('other_subject', 'playback');
    if (nowMs >= expiresAt) throw new TicketError('expired', 'playback');
    return { recordingId: subject, expiresAt };
  }

  /** A ticket that plays one device's footage in one window (and opens nothing else) until claims.expiresAt. */
  issueFootage(claims: FootageClaims): string {
    const subject = `${claims.deviceId}~${Math.floor(claims.startMs / 1000)}~${Math.ceil(claims.endMs / 1000)}`;
    if (!FOOTAGE_SUBJECT.test(subject))
      throw new RangeError('a footage ticket needs a device id of at most 100 URL-safe characters');
    return this.seal('footage', claims.expiresAt, claims.download ? 1 : 0, subject);
  }

  /** The claims of a valid, unexpired footage ticket; throws TicketError (kind 'footage') otherwise. */
  verifyFootage(ticket: string, nowMs: number): FootageClaims {
    const { body, expiresAt } = this.open(ticket, 'footage');
    const m = FOOTAGE_SUBJECT.exec(body.subarray(8).toString('utf8'));
    if (!m) throw new TicketError('malformed', 'footage');
    if (nowMs >= expiresAt) throw new TicketError('expired', 'footage');
    return {
      deviceId: m[1] as string,
      startMs: Number(m[2]) * 1000,
      endMs: Number(m[3]) * 1000,
      expiresAt,
      ...((body[7] as number) & 1 ? { download: true } : {}),
    };
  }

  private seal(kind: TicketKind, expiresAtMs: number, flags: number, subject: string): string {
    const id = Buffer.from(subject, 'utf8');
    if (id.length === 0 || id.length > MAX_SUBJECT)
      throw new RangeError(`a ${kind} ticket's subject must be 1–128 bytes`);
    const body = Buffer.alloc(8 + id.length);
    body[0] = KIND_BYTE[kind];
    this.keyId.copy(body, 1);
    body.writeUInt32BE(Math.floor(expiresAtMs / 1000), 3);
    body[7] = flags;
    id.copy(body, 8);
    return `${body.toString('base64url')}.${this.mac(body).toString('base64url')}`;
  }

  /** The authentic body of a ticket of `kind`, and its expiry (not checked here). */
  private open(ticket: string, kind: TicketKind): { body: Buffer; expiresAt: number } {
    if (ticket.length > MAX_TICKET || !TICKET_TEXT.test(ticket)) throw new TicketError('malformed', kind);
    const [bodyText, macText] = ticket.split('.') as [string, string];
    const body = Buffer.from(bodyText, 'base64url');
    const maxFlags = MAX_FLAGS[body[0] ?? -1];
    // Re-encoding must give the same text: refuses non-canonical base64 (one ticket, one spelling).
    if (
      body.length < 9 ||
      body.toString('base64url') !== bodyText ||
      maxFlags === undefined ||
      (body[7] as number) > maxFlags
    ) {
      throw new TicketError('malformed', kind);
    }
    if (!body.subarray(1, 3).equals(this.keyId)) throw new TicketError('unknown_key', kind);
    const mac = Buffer.from(macText, 'base64url');
    // 22 base64 characters carry 132 bits for 128: the last character has spellings that decode
    // alike, so the text is checked too (found by the fuzz test).
    if (mac.length !== MAC_BYTES || mac.toString('base64url') !== macText) throw new TicketError('malformed', kind);
    if (!timingSafeEqual(mac, this.mac(body))) throw new TicketError('bad_signature', kind);
    // Only an authentic ticket is said to be of the other kind.
    if (body[0] !== KIND_BYTE[kind]) throw new TicketError('wrong_kind', kind);
    return { body, expiresAt: body.readUInt32BE(3) * 1000 };
  }

  private mac(body: Buffer): Buffer {
    return createHmac('sha256', this.key).update(body).digest().subarray(0, MAC_BYTES);
  }
}

/**
 * The claims of a ticket that may start a viewer's session; null when the answer is the plain 404
 * of an unknown path (tampered, malformed, another key's, a recorder's or a playback ticket: which
 * is not told). Only an authentic, expired ticket is said to be one (TicketError 'expired': 401).
 */
export function startingClaims(
  tickets: Pick<TicketSigner, 'verify'>,
  ticket: string,
  nowMs: number,
): TicketClaims | null {
  try {
    const claims = tickets.verify(ticket, nowMs);
    // The recorder's own tickets serve the RTSP relay only.
    return claims.recorder ? null : claims;
  } catch (err) {
    if (err instanceof TicketError && err.reason === 'expired') throw err;
    return null;
  }
}
