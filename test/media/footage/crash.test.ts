import { appendFileSync, existsSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pino } from 'pino';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { startFleet, type Fleet } from '../../../src/onvif/simulator/fleet.js';
import { cliToken, filesUnder, probeClip, startDaemon, type Daemon } from '../../support/daemon.js';
import { tempDir } from '../../support/temp-dir.js';
import { mountTmpfs, tmpfsUnavailable, unmountTmpfs } from '../../support/tmpfs.js';

// Continuous footage across a SIGKILL of the real daemon (dist/cli.js): the index is committed once
// an hour here, so at the kill no file is indexed; the restart must find every file on the footage
// disk, index the whole ones (a torn last fragment cut off), remove one with nothing whole, and lose
// at most the group of pictures the muxer held; then recording goes on and a clean stop commits.

const USER = 'admin';
const PASS = 'cam-secret-footage-crash';
const unavailable = tmpfsUnavailable();
if (unavailable) console.warn(`skipping the footage crash test: ${unavailable}`);

const cleanups: Array<() => unknown> = [];
afterAll(async () => {
  for (const undo of cleanups.reverse()) await undo();
});

interface Span {
  start: string;
  end: string;
}

describe.skipIf(unavailable !== null)('continuous footage after a SIGKILL', () => {
  it(
    'indexes what the disk holds at the next start: whole files, a torn tail cut off, an empty file removed',
    { timeout: 240_000 },
    async () => {
      const dir = tempDir('eg-footage-crash-');
      cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
      const disk = path.join(dir, 'footage');
      mkdirSync(disk);
      mountTmpfs(disk, 256 * 1024 * 1024);
      cleanups.push(() => unmountTmpfs(disk));
      const fleet: Fleet = await startFleet({
        count: 1,
        host: '127.0.0.1',
        basePort: 0,
        username: USER,
        password: PASS,
        discovery: null,
        rtspPort: 0,
        logger: pino({ level: 'silent' }),
      });
      cleanups.push(() => fleet.stop());
      const dataDir = path.join(dir, 'data');
      const configFile = path.join(dir, 'config.yaml');
      writeFileSync(
        configFile,
        JSON.stringify({
          gateway: { data_dir: dataDir },
          api: { host: '127.0.0.1', port: 0 },
          auth: { local: { issuer: 'https://127.0.0.1:8443' } },
          rtsp: { host: '127.0.0.1', port: 0, udp_port: 0, public_host: '127.0.0.1' },
          onvif: { discovery: { enabled: false } },
          metrics: { listen: null },
          cameras: [{ name: 'Drive', onvif_url: fleet.cameras[0]!.deviceServiceUrl, username: USER, password: PASS }],
          recording: {
            segment_dir: path.join(dataDir, 'segments'),
            motion: { mode: 'off' },
            continuous: { enabled: true, storage_dir: disk, file_s: 10, flush_s: 3600, min_free_bytes: 0 },
          },
          log: { level: 'info' },
        }),
      );
      const start = async (): Promise<Daemon> => {
        const d = await startDaemon(configFile, { cwd: dir, certFile: () => path.join(dataDir, 'tls', 'cert.pem') });
        cleanups.push(() => d.child.exitCode === null && d.child.signalCode === null && d.child.kill('SIGKILL'));
        return d;
      };
      const rows = () => {
        const db = new Database(path.join(dataDir, 'gateway.db'), { readonly: true });
        try {
          return db
            .prepare<[], { name: string; bytes: number; start_ms: number; end_ms: number }>(
              'SELECT name, bytes, start_ms, end_ms FROM footage_files ORDER BY start_ms',
            )
            .all();
        } finally {
          db.close();
        }
      };

      const first = await start();
      // Two closed files and one being written.
      await expect
        .poll(() => filesUnder(disk).filter((f) => f.endsWith('.mp4')).length, { timeout: 90_000, interval: 500 })
        .toBeGreaterThanOrEqual(3);
      first.child.kill('SIGKILL');
      const killedAt = Date.now();
      expect(await first.exited).toEqual({ code: null, signal: 'SIGKILL' });
      expect(rows()).toEqual([]);

      const files = filesUnder(disk).filter((f) => f.endsWith('.mp4'));
      const last = files.sort()[files.length - 1]!;
      // A fragment the disk got only the start of (a power cut mid-write), after the last whole one.
      const wholeSize = statSync(last).size;
      appendFileSync(last, Buffer.concat([Buffer.from([0, 0, 0x10, 0, 0x6d, 0x6f, 0x6f, 0x66]), Buffer.alloc(100)]));
      // A file with nothing whole in it: a name the gateway writes, a few bytes of header.
      const deviceDir = path.dirname(last);
      const empty = path.join(deviceDir, `sub-${killedAt + 5}.mp4`);
      writeFileSync(empty, Buffer.from([0, 0, 0, 0x18, 0x66, 0x74, 0x79, 0x70]));

      const second = await start();
      const headers = { authorization: `Bearer ${cliToken(configFile, dir, 'recordings:read')}` };
      const indexed = rows();
      // Every file of the first run is indexed; only the newest may have had nothing whole (killed
      // between its init segment and its first fragment), and then it is gone.
      const kept = files.filter((f) => existsSync(f));
      expect(kept.length).toBeGreaterThanOrEqual(files.length - 1);
      expect(files.filter((f) => !existsSync(f)).every((f) => f === last)).toBe(true);
      expect(indexed.map((r) => path.join(disk, r.name)).sort()).toEqual(kept.sort());
      if (existsSync(last)) expect(statSync(last).size).toBe(wholeSize);
      expect(existsSync(empty)).toBe(false);
      // Every indexed file is whole: it plays and decodes without an error.
      for (const row of indexed) {
        const probed = await probeClip(path.join(disk, row.name));
        expect(probed.decodeErrors, row.name).toBe('');
        expect(probed.durationS * 1000).toBeGreaterThan(row.end_ms - row.start_ms - 1500);
      }
      // The footage kept reaches the kill, less what the muxer held (a group of pictures).
      const deviceId = path.basename(path.dirname(deviceDir));
      const q = `start=${new Date(killedAt - 3_600_000).toISOString()}&end=${new Date(killedAt).toISOString()}`;
      const { data } = (await second.request(`/v1/devices/${deviceId}/footage?${q}`, { headers })).json() as {
        data: Span[];
      };
      expect(data.length).toBe(1);
      expect(killedAt - Date.parse(data[0]!.end)).toBeLessThan(3000);

      // Recording goes on after the restart; a clean stop commits its rows.
      await expect
        .poll(() => filesUnder(disk).filter((f) => f.endsWith('.mp4')).length, { timeout: 60_000, interval: 500 })
        .toBeGreaterThan(files.length);
      second.child.kill('SIGTERM');
      expect(await second.exited).toEqual({ code: 0, signal: null });
      expect(rows().length).toBeGreaterThan(indexed.length);
    },
  );
});
