import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const UNIT = fileURLToPath(new URL('../../systemd/edge-gateway.service', import.meta.url));
const INSTALL_SCRIPT = fileURLToPath(new URL('../../scripts/install-service.sh', import.meta.url));
const RUN_SCRIPT = fileURLToPath(new URL('../../run', import.meta.url));
const BENCH_GATEWAY = fileURLToPath(new URL('../../bench/support/gateway-process.ts', import.meta.url));
const MAX_EXPOSURE = 2.0;

// Checks that systemd-analyze security is expected to fail, each for a reason
// given in the unit's comments and docs/systemd.md. A new entry here means the
// sandbox got weaker and needs a reason.
const ACCEPTED_EXPOSURES = new Set([
  'RootDirectory=/RootImage=', // the daemon runs from the host's /opt
  'MemoryDenyWriteExecute=', // V8's JIT needs W+X pages
  'RestrictAddressFamilies=~AF_NETLINK', // os.networkInterfaces()
  'RestrictAddressFamilies=~AF_UNIX', // systemd-notify, local IPC
  'RestrictAddressFamilies=~AF_(INET|INET6)', // cameras and API clients
  'PrivateNetwork=', // must reach the LAN
  'IPAddressDeny=', // cameras live at arbitrary LAN addresses
  'DeviceAllow=', // ProtectClock= itself grants char-rtc read access
  'NotifyAccess=', // notifications come from systemd-notify children
]);

function run(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync('systemd-analyze', args, { encoding: 'utf8', env: { ...process.env, SYSTEMD_COLORS: '0' } });
  if (r.error) throw r.error;
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

let dir: string;
let unitCopy: string;

beforeAll(async () => {
  const probe = spawnSync('systemd-analyze', ['--version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) {
    throw new Error(
      'systemd-analyze is not installed, so the unit cannot be checked; install the Debian package "systemd" ' +
        '(scripts/setup.sh should do this)',
    );
  }
  dir = await mkdtemp(join(tmpdir(), 'unit-'));
  const cli = join(dir, 'cli.js');
  await writeFile(cli, '// stand-in for dist/cli.js\n');
  const text = await readFile(UNIT, 'utf8');
  const execStart = 'ExecStart=/opt/edge-gateway/node/bin/node /opt/edge-gateway/dist/cli.js ';
  if (!text.includes(`\n${execStart}`)) {
    throw new Error(`the unit no longer starts with "${execStart}"; scripts/install-service.sh rewrites exactly that`);
  }
  // verify insists that ExecStart's binary exists here; node may live elsewhere
  // on this machine and dist/ may not be built.
  const copy = text.replace(execStart, `ExecStart=${process.execPath} ${cli} `);
  // verify derives the unit type from the name, so it must end in .service.
  unitCopy = join(dir, 'edge-gateway.service');
  await writeFile(unitCopy, copy);
});

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('systemd/edge-gateway.service', () => {
  it('passes systemd-analyze verify without warnings', () => {
    const r = run(['verify', unitCopy]);
    const lines = (r.stdout + r.stderr).split('\n').filter((l) => l.trim() !== '');
    // verify also loads the units ours names (network-online.target,
    // multi-user.target) and may talk about the host (no D-Bus or PID 1 in a
    // sandbox); only lines about our unit count.
    const ours = lines.filter((l) => l.includes('edge-gateway') || l.includes(unitCopy));
    const other = lines.filter((l) => !ours.includes(l));
    if (other.length > 0) {
      console.info(`ignored systemd-analyze verify output not about edge-gateway.service:\n${other.join('\n')}`);
    }
    expect(ours).toEqual([]);
    expect(r.status).toBe(0);
  });

  it(`has an offline security exposure of at most ${MAX_EXPOSURE}`, () => {
    const r = run(['security', '--offline=true', '--no-pager', unitCopy]);
    expect(r.status, r.stderr).toBe(0);
    const overall = /Overall exposure level for \S+: (\d+(?:\.\d+)?)/.exec(r.stdout);
    if (!overall?.[1]) throw new Error(`no "Overall exposure level" line in:\n${r.stdout}\n${r.stderr}`);
    const exposure = Number(overall[1]);
    console.info(`systemd-analyze security --offline=true: overall exposure ${exposure}`);
    expect(exposure).toBeLessThanOrEqual(MAX_EXPOSURE);

    const failing = r.stdout
      .split('\n')
      .filter((l) => l.trimStart().startsWith('✗'))
      .map((l) => l.trimStart().slice(1).trim().split(/\s+/)[0] ?? '');
    expect(failing.filter((name) => !ACCEPTED_EXPOSURES.has(name))).toEqual([]);
  });

  it('keeps the settings the daemon and install script depend on', async () => {
    const text = await readFile(UNIT, 'utf8');
    const settings = new Set(text.split('\n').map((l) => l.trim()));
    for (const line of [
      'Type=notify',
      'NotifyAccess=all',
      'WatchdogSec=30',
      'User=edge-gateway',
      'StateDirectory=edge-gateway',
      'RuntimeDirectory=edge-gateway',
      'ConfigurationDirectory=edge-gateway',
      // node is killed with SIGSYS at start-up without it (V8's pkey_alloc).
      'SystemCallFilter=@pkey',
      // ffmpeg's libnuma probe of set_mempolicy must fail softly.
      'SystemCallErrorNumber=EPERM',
      // A memory limit that fits a 2 GB Pi; the daemon warns near the lower one.
      'MemoryHigh=1200M',
      'MemoryMax=1500M',
    ]) {
      expect(settings.has(line), line).toBe(true);
    }
    expect(text).not.toMatch(/^MemoryDenyWriteExecute=yes/m);
  });

  it('gives the daemon the same memory settings as ./run start and the benches', async () => {
    const unit = await readFile(UNIT, 'utf8');
    const runScript = await readFile(RUN_SCRIPT, 'utf8');
    const bench = await readFile(BENCH_GATEWAY, 'utf8');
    const nodeOptions = /^Environment=NODE_OPTIONS=(.+)$/m.exec(unit)?.[1];
    const mmap = /^Environment=(MALLOC_MMAP_THRESHOLD_=\d+)$/m.exec(unit)?.[1];
    expect(nodeOptions).toBe('--max-semi-space-size=8');
    expect(mmap).toBe('MALLOC_MMAP_THRESHOLD_=131072');
    expect(runScript).toContain(`NODE_OPTIONS=${nodeOptions} ${mmap} node dist/cli.js start &`);
    expect(bench).toContain(`export const DAEMON_NODE_OPTIONS = '${nodeOptions}';`);
    expect(bench).toContain(`export const DAEMON_MMAP_THRESHOLD = '${mmap?.split('=')[1]}';`);
  });
});

describe('scripts/install-service.sh', () => {
  it('parses', () => {
    const r = spawnSync('bash', ['-n', INSTALL_SCRIPT], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  it('prints usage for --help without needing root', () => {
    const r = spawnSync('bash', [INSTALL_SCRIPT, '--help'], { encoding: 'utf8' });
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('--prefix DIR');
    expect(r.stdout).toContain('--no-start');
  });

  it('rejects unknown options', () => {
    const r = spawnSync('bash', [INSTALL_SCRIPT, '--bogus'], { encoding: 'utf8' });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain('unknown option: --bogus');
  });
});
