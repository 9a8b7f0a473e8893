import { describe, expect, it } from 'vitest';
import { parseBlockingRequest } from '../../../src/media/hls/blocking-request.js';
import { HlsRequestError, PlaylistParseError } from '../../../src/media/hls/errors.js';
import { LiveWindow } from '../../../src/media/hls/live-window.js';
import { parseMediaPlaylist } from '../../../src/media/hls/playlist-parse.js';
import { writeMediaPlaylist } from '../../../src/media/hls/playlist.js';
import { makeRng, mutate } from '../../support/fuzz.js';

// Blocking-reload parameters and playlist text at random: a result or the module's own typed error,
// never another throw. Failures print the seed; FUZZ_SEED=<n> replays them.

const rng = makeRng();
const ROUNDS = 500;

function only<T>(errorClass: new (...args: never[]) => Error, run: () => T): 'ok' | 'refused' {
  try {
    run();
    return 'ok';
  } catch (err) {
    if (err instanceof errorClass) return 'refused';
    throw err;
  }
}

describe(`HLS fuzz (seed ${rng.seed})`, () => {
  it('answers random _HLS_msn/_HLS_part queries against a live window with ready, wait or an HlsRequestError', () => {
    const window = new LiveWindow({ partTarget: 0.25, targetDuration: 2, maxSegments: 3, maxBytes: 1 << 20 });
    const seen = new Set<string>();
    const value = (): unknown =>
      rng.pick([
        undefined,
        String(rng.int(12)),
        String(rng.int(2 ** 31)),
        rng.string(6, '0123456789-.e x'),
        [String(rng.int(5)), '1'],
        rng.int(5),
        '9'.repeat(1 + rng.int(30)),
      ]);
    let inSegment = 0;
    for (let i = 0; i < ROUNDS; i++) {
      if (rng.int(3) === 0) {
        // A segment of at most 8 parts of 0.25 s: the 2 s target duration.
        const startsSegment = inSegment === 8 || rng.int(4) === 0;
        inSegment = startsSegment ? 1 : inSegment + 1;
        window.addPart({
          bytes: Buffer.alloc(10),
          duration: 0.25,
          independent: startsSegment,
          startsSegment,
          wallClock: i,
        });
      }
      const query: Record<string, unknown> = {};
      const msn = value();
      const part = value();
      if (msn !== undefined) query._HLS_msn = msn;
      if (part !== undefined) query._HLS_part = part;
      seen.add(
        only(HlsRequestError, () => {
          const request = parseBlockingRequest(query);
          if (request) expect(['ready', 'wait']).toContain(window.readiness(request));
        }),
      );
    }
    expect(seen).toEqual(new Set(['ok', 'refused']));
  });

  it('reads mutated playlists or refuses them with a PlaylistParseError', () => {
    const window = new LiveWindow({ partTarget: 0.5, targetDuration: 2, maxSegments: 3, maxBytes: 1 << 20 });
    for (let i = 0; i < 10; i++)
      window.addPart({
        bytes: Buffer.alloc(1),
        duration: 0.5,
        independent: i % 4 === 0,
        startsSegment: i % 4 === 0,
        wallClock: Date.UTC(2026, 0, 1) + i * 500,
      });
    const text = writeMediaPlaylist(window.playlist());
    const seen = new Set<string>();
    for (let i = 0; i < ROUNDS; i++)
      seen.add(only(PlaylistParseError, () => parseMediaPlaylist(mutate(rng, text, '#:,="\n.0123456789ABCDEFXPT-'))));
    expect(seen).toEqual(new Set(['ok', 'refused']));
  });
});
