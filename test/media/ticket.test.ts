import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { TicketSigner } from '../../src/media/ticket.js';
import { TicketError } from '../../src/media/errors.js';
import { SecretBox } from '../../src/platform/secret-box.js';
import { tempDir } from '../support/temp-dir.js';
import { makeRng, mutate } from '../support/fuzz.js';

const signer = new TicketSigner(randomBytes(32));
const now = Date.UTC(2026, 10, 22, 12);
const claims = { deviceId: 'dev_AbCdEfGhIjKlMnOpQrStUvWx', profile: 'main' as const, expiresAt: now + 300_000 };
const reason = (f: () => unknown) => {
  try {
    f();
  } catch (err) {
    if (err instanceof TicketError) return err.reason;
    throw err;
  }
  return 'accepted';
};

describe('stream tickets', () => {
  it('round-trips device, profile and expiry, and is short enough for a URL under 200 characters', () => {
    for (const profile of ['main', 'sub'] as const) {
      const t = signer.issue({ ...claims, profile });
      expect(signer.verify(t, now)).toEqual({ ...claims, profile });
      expect(signer.verify(signer.issue({ ...claims, profile, recorder: true }), now)).toEqual({
        ...claims,
        profile,
        recorder: true,
      });
      expect(`rtsp://192.168.100.200:8554/live/${t}/trackID=0`.length).toBeLessThan(200);
      expect(t).toMatch(/^[A-Za-z0-9_.-]+$/); // URL path safe, no escaping needed
    }
  });

  it('refuses expired, tampered, foreign-key and malformed tickets with the reason', () => {
    const t = signer.issue(claims);
    expect(reason(() => signer.verify(t, claims.expiresAt))).toBe('expired');
    expect(reason(() => signer.verify(t, claims.expiresAt - 1))).toBe('accepted');
    const [body, mac] = t.split('.') as [string, string];
    // Another device's id or a longer expiry under the same MAC.
    const forged = Buffer.from(body, 'base64url');
    forged.writeUInt8(forged.readUInt8(forged.length - 1) ^ 1, forged.length - 1);
    expect(reason(() => signer.verify(`${forged.toString('base64url')}.${mac}`, now))).toBe('bad_signature');
    const later = Buffer.from(body, 'base64url');
    later.writeUInt32BE(later.readUInt32BE(3) + 86_400, 3);
    expect(reason(() => signer.verify(`${later.toString('base64url')}.${mac}`, now))).toBe('bad_signature');
    expect(reason(() => signer.verify(`${body}.${'A'.repeat(22)}`, now))).toBe('bad_signature');
    expect(reason(() => new TicketSigner(randomBytes(32)).verify(t, now))).toBe('unknown_key');
    for (const junk of [
      '',
      'abc',
      `${body}.`,
      `${body}.${mac}x`,
      `${body}${mac}`,
      'x'.repeat(300),
      `${body}.${mac}/trackID=0`,
    ]) {
      expect(
        reason(() => signer.verify(junk, now)),
        junk,
      ).toBe('malformed');
    }
  });

  it('keeps its key sealed in data_dir and reuses it', () => {
    const dir = tempDir('eg-ticket-');
    try {
      const box = SecretBox.openInDir(dir);
      const a = TicketSigner.openInDir(dir, box);
      const b = TicketSigner.openInDir(dir, box);
      expect(b.verify(a.issue(claims), now)).toEqual(claims);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  const rng = makeRng();
  it(`fuzz (seed ${rng.seed}): mutated tickets are refused with a TicketError, never accepted as something else`, () => {
    const good = signer.issue(claims);
    for (let i = 0; i < 5_000; i++) {
      const t = mutate(rng, good, 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.');
      try {
        expect(signer.verify(t, now)).toEqual(claims); // only the untouched ticket can pass
        expect(t).toBe(good);
      } catch (err) {
        expect(err).toBeInstanceOf(TicketError);
      }
    }
  });
});

describe('playback tickets', () => {
  const playback = { recordingId: 'rec_AbCdEfGhIjKlMnOp', expiresAt: now + 900_000 };

  it('round-trip the recording and expiry, and fit a URL query', () => {
    const t = signer.issuePlayback(playback);
    expect(signer.verifyPlayback(t, now, playback.recordingId)).toEqual(playback);
    expect(t).toMatch(/^[A-Za-z0-9_.-]+$/); // no escaping in ?ticket=
    expect(reason(() => signer.verifyPlayback(t, playback.expiresAt, playback.recordingId))).toBe('expired');
    expect(reason(() => signer.verifyPlayback(t, playback.expiresAt - 1, playback.recordingId))).toBe('accepted');
  });

  it('play one recording only: another one is refused, expired or not', () => {
    const t = signer.issuePlayback(playback);
    expect(reason(() => signer.verifyPlayback(t, now, 'rec_other'))).toBe('other_subject');
    expect(reason(() => signer.verifyPlayback(t, playback.expiresAt + 1, 'rec_other'))).toBe('other_subject');
  });

  it('are not stream tickets, and stream tickets are not playback tickets (the kind is signed)', () => {
    const t = signer.issuePlayback({ ...playback, recordingId: claims.deviceId });
    expect(reason(() => signer.verify(t, now))).toBe('wrong_kind');
    for (const stream of [
      signer.issue(claims),
      signer.issue({ ...claims, recorder: true }),
      signer.issue({ ...claims, profile: 'sub' }),
    ]) {
      expect(reason(() => signer.verifyPlayback(stream, now, claims.deviceId))).toBe('wrong_kind');
    }
    // Changing the kind byte breaks the MAC.
    const [body, mac] = t.split('.') as [string, string];
    const asStream = Buffer.from(body, 'base64url');
    asStream[0] = 1;
    expect(reason(() => signer.verify(`${asStream.toString('base64url')}.${mac}`, now))).toBe('bad_signature');
    // A playback ticket carries no flags.
    const flagged = Buffer.from(body, 'base64url');
    flagged[7] = 1;
    expect(reason(() => signer.verifyPlayback(`${flagged.toString('base64url')}.${mac}`, now, claims.deviceId))).toBe(
      'malformed',
    );
    // The error says which kind was asked for.
    expect(() => signer.verifyPlayback(signer.issue(claims), now, claims.deviceId)).toThrow(
      'playback ticket wrong kind',
    );
  });

  it('refuse tampered, foreign-key and malformed tickets', () => {
    const t = signer.issuePlayback(playback);
    const [body, mac] = t.split('.') as [string, string];
    const later = Buffer.from(body, 'base64url');
    later.writeUInt32BE(later.readUInt32BE(3) + 86_400, 3);
    expect(
      reason(() => signer.verifyPlayback(`${later.toString('base64url')}.${mac}`, now, playback.recordingId)),
    ).toBe('bad_signature');
    expect(reason(() => new TicketSigner(randomBytes(32)).verifyPlayback(t, now, playback.recordingId))).toBe(
      'unknown_key',
    );
    for (const junk of ['', `${body}.`, `${body}.${mac}x`, 'x'.repeat(300)]) {
      expect(
        reason(() => signer.verifyPlayback(junk, now, playback.recordingId)),
        junk,
      ).toBe('malformed');
    }
  });

  const rng = makeRng();
  it(`fuzz (seed ${rng.seed}): mutated playback tickets are refused, never accepted for a recording or a stream`, () => {
    const good = signer.issuePlayback(playback);
    for (let i = 0; i < 5_000; i++) {
      const t = mutate(rng, good, 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.');
      expect(() => signer.verify(t, now)).toThrow(TicketError);
      try {
        expect(signer.verifyPlayback(t, now, playback.recordingId)).toEqual(playback);
        expect(t).toBe(good);
      } catch (err) {
        expect(err).toBeInstanceOf(TicketError);
      }
    }
  });
});

describe('footage tickets', () => {
  const signer = new TicketSigner(randomBytes(32));
  const now = Date.UTC(2026, 10, 29, 12);
  const window = { deviceId: 'cam-1', startMs: now - 3_600_000, endMs: now, expiresAt: now + 60_000 };

  it('round-trip the device and the window, played only unless minted for a download', () => {
    expect(signer.verifyFootage(signer.issueFootage(window), now)).toEqual(window);
    expect(signer.verifyFootage(signer.issueFootage({ ...window, download: true }), now)).toEqual({
      ...window,
      download: true,
    });
  });

  it('carry no other flag, and a flag cannot be added without the key', () => {
    const t = signer.issueFootage(window);
    const [body, mac] = t.split('.') as [string, string];
    const raised = Buffer.from(body, 'base64url');
    raised[7] = 1;
    expect(reason(() => signer.verifyFootage(`${raised.toString('base64url')}.${mac}`, now))).toBe('bad_signature');
    raised[7] = 2;
    expect(reason(() => signer.verifyFootage(`${raised.toString('base64url')}.${mac}`, now))).toBe('malformed');
  });

  it('are neither stream nor playback tickets, and expire', () => {
    const t = signer.issueFootage({ ...window, download: true });
    expect(reason(() => signer.verify(t, now))).toBe('wrong_kind');
    expect(reason(() => signer.verifyPlayback(t, now, 'cam-1'))).toBe('wrong_kind');
    expect(reason(() => signer.verifyFootage(t, window.expiresAt))).toBe('expired');
  });
});
