import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { validateConfig } from '../../src/config/load.js';
import { createSystemFacts, readDisk, type SystemFactsDeps } from '../../src/daemon/system-facts.js';
import { tempDir } from '../support/temp-dir.js';

// What GET /v1/system is told: the disks as statfs and the database say (data_dir, the clips where
// they are elsewhere, the footage disk with what its recorder found), and per camera the sum of
// the live views and the newest failure of those the parts report.

let dir = '';
beforeEach(() => {
  dir = tempDir();
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const store = (file: string) => ({ file, recordingBytes: () => 5_000_000, footageBytes: () => 70_000_000 });

function deps(overrides: Partial<SystemFactsDeps> = {}): SystemFactsDeps {
  const dataDir = path.join(dir, 'data');
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(path.join(dataDir, 'gateway.db'), Buffer.alloc(4096));
  writeFileSync(path.join(dataDir, 'gateway.db-wal'), Buffer.alloc(1000));
  return {
    store: store(path.join(dataDir, 'gateway.db')),
    clipsDir: path.join(dataDir, 'recordings'),
    footage: null,
    traffic: () => null,
    viewers: [],
    errors: [],
    ...overrides,
  };
}

/** Floors of 0: a test machine's own free space must not make a disk read as low. */
const config = (extra: Record<string, unknown> = {}) =>
  validateConfig({
    gateway: { data_dir: path.join(dir, 'data') },
    recording: {
      retention: { min_free_bytes: 0 },
      continuous: { enabled: true, storage_dir: path.join(dir, 'footage'), min_free_bytes: 0 },
    },
    ...extra,
  });

describe('storage', () => {
  it('is data_dir alone while the clips are inside it: the database and the clips are the gateway’s share', async () => {
    const disks = await createSystemFacts(config(), deps()).storage();
    expect(disks).toEqual([
      {
        name: 'data',
        path: path.join(dir, 'data'),
        totalBytes: expect.any(Number),
        freeBytes: expect.any(Number),
        usedByGatewayBytes: 4096 + 1000 + 5_000_000,
        state: 'ok',
      },
    ]);
    const [data] = disks;
    expect(data!.totalBytes).toBeGreaterThanOrEqual(data!.freeBytes!);
    expect(data!.freeBytes).toBeGreaterThan(0);
  });

  it('lists the clips apart where they are elsewhere, and the footage disk with what its recorder found', async () => {
    const clipsDir = path.join(dir, 'clips');
    mkdirSync(clipsDir);
    mkdirSync(path.join(dir, 'footage'));
    let problem: 'disk_full' | 'read_only' | 'disk_missing' | 'io' | null = null;
    const facts = createSystemFacts(config(), deps({ clipsDir, footage: { diskProblem: () => problem } }));
    const byName = async () => Object.fromEntries((await facts.storage()).map((d) => [d.name, d]));
    let disks = await byName();
    expect(Object.keys(disks)).toEqual(['data', 'clips', 'footage']);
    expect(disks.data?.usedByGatewayBytes).toBe(4096 + 1000);
    expect(disks.clips).toMatchObject({ path: clipsDir, usedByGatewayBytes: 5_000_000, state: 'ok' });
    expect(disks.footage).toMatchObject({ usedByGatewayBytes: 70_000_000, state: 'ok' });
    const expected = { disk_full: 'low', read_only: 'read_only', io: 'failed' } as const;
    for (const [cause, state] of Object.entries(expected)) {
      problem = cause as keyof typeof expected;
      disks = await byName();
      expect(disks.footage, cause).toMatchObject({ state, totalBytes: expect.any(Number) });
    }
    // An unmounted disk leaves its mount point behind: its figures would be the system disk's.
    problem = 'disk_missing';
    expect((await byName()).footage).toMatchObject({ state: 'missing', totalBytes: null, freeBytes: null });
  });

  it('says missing for a directory that is gone, low under the floor', async () => {
    const gone = await readDisk('clips', path.join(dir, 'nowhere'), 0, null, async () => 1);
    expect(gone).toEqual({
      name: 'clips',
      path: path.join(dir, 'nowhere'),
      totalBytes: null,
      freeBytes: null,
      usedByGatewayBytes: 1,
      state: 'missing',
    });
    const low = await readDisk('data', dir, Number.MAX_SAFE_INTEGER, null, async () => 0);
    expect(low.state).toBe('low');
  });

  it('leaves the footage disk out while continuous recording is off', async () => {
    const off = validateConfig({ gateway: { data_dir: path.join(dir, 'data') } });
    expect((await createSystemFacts(off, deps()).storage()).map((d) => d.name)).toEqual(['data']);
  });
});

describe('camera', () => {
  it('sums the live views, takes the newest failure, and rounds the stream’s figures', () => {
    const facts = createSystemFacts(
      config(),
      deps({
        traffic: (id) => (id === 'cam-a' ? { kbps: 2048.4, fps: 24.96 } : null),
        viewers: [(id) => (id === 'cam-a' ? 2 : 0), () => 1],
        errors: [
          (id) => (id === 'cam-a' ? { message: 'ONVIF: timeout', at: 2000 } : null),
          (id) => (id === 'cam-a' ? { message: 'main stream: camera closed the connection', at: 3000 } : null),
        ],
      }),
    );
    expect(facts.camera('cam-a')).toEqual({
      bitrateKbps: 2048,
      fps: 25,
      viewers: 3,
      lastError: { message: 'main stream: camera closed the connection', at: 3000 },
    });
    expect(facts.camera('cam-b')).toEqual({ bitrateKbps: null, fps: null, viewers: 1, lastError: null });
  });
});
