import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { playbackMinter } from '../../../src/api/routes/playback.js';
import { TicketSigner } from '../../../src/media/ticket.js';

// The minter of playback_url tickets: pure apart from the HMAC, on a clock the test moves.

const signer = new TicketSigner(randomBytes(32));

function counted() {
  const issued: string[] = [];
  return {
    issued,
    issuePlayback: (claims: { recordingId: string; expiresAt: number }) => {
      issued.push(claims.recordingId);
      return signer.issuePlayback(claims);
    },
  };
}

describe('playbackMinter', () => {
  it('gives tickets accepted for at least the ttl, their expiry rounded up to the step', () => {
    let clock = Date.UTC(2026, 10, 25, 12, 0, 10, 500);
    const mint = playbackMinter(signer, 900, () => clock);
    const { ticket, expiresAt } = mint('rec-a');
    expect(expiresAt).toBe(Date.UTC(2026, 10, 25, 12, 16, 0));
    expect(signer.verifyPlayback(ticket, clock + 900_000, 'rec-a')).toEqual({ recordingId: 'rec-a', expiresAt });
    clock = Date.UTC(2026, 10, 25, 12, 1, 0); // a step boundary: exactly ttl later
    expect(mint('rec-a').expiresAt).toBe(Date.UTC(2026, 10, 25, 12, 16, 0));
  });

  it('mints one ticket per recording and step, a new one in the next step', () => {
    let clock = Date.UTC(2026, 10, 25, 12, 0, 1);
    const issuer = counted();
    const mint = playbackMinter(issuer, 900, () => clock);
    const first = mint('rec-a');
    clock += 30_000;
    expect(mint('rec-a')).toEqual(first);
    expect(mint('rec-b').ticket).not.toBe(first.ticket);
    expect(issuer.issued).toEqual(['rec-a', 'rec-b']);
    clock += 60_000;
    const next = mint('rec-a');
    expect(next.expiresAt).toBe(first.expiresAt + 60_000);
    expect(next.ticket).not.toBe(first.ticket);
    expect(issuer.issued).toEqual(['rec-a', 'rec-b', 'rec-a']);
  });

  it('keeps a bounded number of tickets per step, minting the others each time', () => {
    const issuer = counted();
    const mint = playbackMinter(issuer, 900, () => Date.UTC(2026, 10, 25, 12, 0, 1));
    for (let i = 0; i < 5000; i++) mint(`rec-${i}`);
    expect(issuer.issued).toHaveLength(5000);
    mint('rec-0'); // kept
    mint('rec-4999'); // past the bound: minted again
    expect(issuer.issued).toHaveLength(5001);
    expect(issuer.issued.at(-1)).toBe('rec-4999');
  });
});
