import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync, rmSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { request } from 'node:https';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Store } from '../src/store/store.js';
import { startTestGateway, type TestGateway } from './support/gateway.js';
import { tempDir } from './support/temp-dir.js';
import { signInAsWebApp, tokenRequest } from './support/oauth.js';
import { makeClient } from './support/https.js';
import { onlineCamera } from './support/devices.js';
import { unitEnvironment } from './support/daemon.js';

const CLI = path.resolve(import.meta.dirname, '../dist/cli.js');
// Daemons started by tests never probe the machine's real interfaces.
const NO_DISCOVERY =
  'onvif:\n  discovery:\n    enabled: false\nrtsp:\n  host: 127.0.0.1\n  port: 0\n  udp_port: 0\nmetrics:\n  listen: 127.0.0.1:0\n';
const dirs: string[] = [];
const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function workDir(): string {
  const d = tempDir('eg-cli-');
  dirs.push(d);
  return d;
}

function cli(args: string[], env: Record<string, string> = {}, cwd = workDir()) {
  const r = spawnSync(process.execPath, [CLI, ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? '', ...env },
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function writeConfig(dir: string, yaml: string): string {
  const file = path.join(dir, 'config.yaml');
  writeFileSync(file, yaml);
  return file;
}

/** Starts the daemon as the unit does and resolves with its API URL once it logged that it started. */
function startDaemon(
  configFile: string,
  cwd: string,
): Promise<{ child: ChildProcess; apiUrl: string; logs: () => string }> {
  const child = spawn(process.execPath, [CLI, 'start', '--config', configFile], {
    cwd,
    env: { PATH: process.env.PATH ?? '', ...unitEnvironment() },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  return new Promise((resolve, reject) => {
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n').find((l) => l.includes('"edge gateway started"'));
      if (line) resolve({ child, apiUrl: (JSON.parse(line) as { apiUrl: string }).apiUrl, logs: () => out });
    });
    child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
    child.on('exit', (code) => reject(new Error(`daemon exited with ${code}: ${out}`)));
  });
}

const exited = (child: ChildProcess) =>
  new Promise<number | null>((resolve) =>
    child.exitCode !== null ? resolve(child.exitCode) : child.on('exit', (code) => resolve(code)),
  );

describe('edge-gateway CLI', () => {
  it('prints usage for --help and exits 2 for unknown commands and flags', () => {
    const help = cli(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: edge-gateway');
    for (const args of [
      [],
      ['frobnicate'],
      ['start', '--bogus'],
      ['token', '--scope', 'devices:read', 'extra'],
      ['token'],
    ]) {
      const r = cli(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toContain('Usage: edge-gateway');
    }
  });

  it.each([
    ['api:\n  port: 70000\n', 'config: api.port: must be <= 65535 (got 70000)'],
    [
      'log:\n  level: loud\n',
      'config: log.level: must be one of fatal, error, warn, info, debug, trace, silent (got "loud")',
    ],
    ['api:\n  prot: 1\n', 'config: api.prot: unknown key'],
    ['auth:\n  clock_tolerance_s: 120\n', 'config: auth.clock_tolerance_s: must be <= 60 (got 120)'],
    [
      'auth:\n  issuers:\n    - issuer: https://a/\n      jwks_uri: http://auth.example.com/jwks\n      audience: x\n',
      'config: auth.issuers[0].jwks_uri: must use https',
    ],
    [
      'auth:\n  issuers:\n    - issuer: https://a/\n      audience: x\n',
      'config: auth.issuers[0].jwks_uri: is required',
    ],
    ['api: [1, 2\n', 'is not valid YAML: '],
    ['api:\n  port: 1\napi:\n  port: 2\n', 'is not valid YAML'],
    ['- just\n- a list\n', 'the file must hold a mapping'],
    ['gateway:\n  id: "has spaces"\n', 'config: gateway.id: must be null or'],
    ['api:\n  tls:\n    cert_file: /x.pem\n', 'config: api.tls: cert_file and key_file must be given together'],
  ])('refuses a bad config with one clear line: %j', (yaml, message) => {
    const dir = workDir();
    const r = cli(['start', '--config', writeConfig(dir, yaml)], {}, dir);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain(message);
  });

  it('names a config file that cannot be read, also through EDGE_GATEWAY_CONFIG', () => {
    const r = cli(['start'], { EDGE_GATEWAY_CONFIG: '/nonexistent/gw.yaml' });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('cannot read /nonexistent/gw.yaml: ENOENT');
  });

  it('token prints a working token alone on stdout; bad scopes and ttl are refused', () => {
    const dir = workDir();
    const cfg = writeConfig(dir, `gateway:\n  data_dir: ${dir}/data\n`);
    const r = cli(['token', '--config', cfg, '--scope', 'devices:read alerts:read', '--ttl', '600'], {}, dir);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+\n$/);
    const claims = JSON.parse(Buffer.from(r.stdout.split('.')[1] as string, 'base64url').toString()) as Record<
      string,
      unknown
    >;
    expect(claims.scope).toBe('devices:read alerts:read');
    expect((claims.exp as number) - (claims.iat as number)).toBe(600);
    expect(statSync(path.join(dir, 'data', 'secret.key')).mode & 0o777).toBe(0o600);
    expect(cli(['token', '--config', cfg, '--scope', 'devices:readx'], {}, dir).code).toBe(2);
    expect(cli(['token', '--config', cfg, '--scope', 'devices:read', '--ttl', '10'], {}, dir).code).toBe(2);
    const off = writeConfig(dir, `gateway:\n  data_dir: ${dir}/data\nauth:\n  local:\n    enabled: false\n`);
    expect(cli(['token', '--config', off, '--scope', 'devices:read'], {}, dir).code).toBe(1);
  });
});

describe('edge-gateway start', () => {
  it('serves the API with a token from the CLI, keeps its identity across restarts, and stops cleanly on SIGTERM', async () => {
    const dir = workDir();
    // api.port 0 gives each start another port, and so by default another issuer URL: it is named
    // here, so that the old token can show the key survived the restart.
    const cfg = writeConfig(
      dir,
      `gateway:\n  data_dir: ${dir}/data\napi:\n  host: 127.0.0.1\n  port: 0\nauth:\n  local:\n    issuer: https://127.0.0.1:8443\n${NO_DISCOVERY}`,
    );
    const first = await startDaemon(cfg, dir);
    const cert = readFileSync(path.join(dir, 'data/tls/cert.pem'));
    const token = cli(['token', '--config', cfg, '--scope', 'devices:read'], {}, dir).stdout.trim();
    const call = makeClient(first.apiUrl, cert);
    expect((await call('/v1/devices', { headers: { authorization: `Bearer ${token}` } })).json()).toEqual({
      data: [],
      next_cursor: null,
    });
    const gatewayId = readFileSync(path.join(dir, 'data/gateway-id'), 'utf8');
    first.child.kill('SIGTERM');
    expect(await exited(first.child)).toBe(0);
    expect(first.logs()).toContain('"edge gateway stopped"');

    // Same data dir: same certificate, same gateway id, same issuer key (the old token still works).
    const second = await startDaemon(cfg, dir);
    expect(readFileSync(path.join(dir, 'data/tls/cert.pem')).equals(cert)).toBe(true);
    expect(readFileSync(path.join(dir, 'data/gateway-id'), 'utf8')).toBe(gatewayId);
    expect(
      (await makeClient(second.apiUrl, cert)('/v1/devices', { headers: { authorization: `Bearer ${token}` } })).status,
    ).toBe(200);
    second.child.kill('SIGTERM');
    expect(await exited(second.child)).toBe(0);
  });

  it('finishes a download in flight when SIGTERM arrives', async () => {
    const dir = workDir();
    const dataDir = path.join(dir, 'data');
    const cfg = writeConfig(
      dir,
      `gateway:\n  data_dir: ${dataDir}\napi:\n  host: 127.0.0.1\n  port: 0\n${NO_DISCOVERY}`,
    );
    // Seed a device and a 32 MiB recording through the store, as the recorder will.
    mkdirSync(path.join(dataDir, 'recordings'), { recursive: true });
    const big = Buffer.alloc(32 * 1024 * 1024, 7);
    writeFileSync(path.join(dataDir, 'recordings', 'big.mp4'), big);
    const store = Store.open(dataDir);
    store.upsertDevice(onlineCamera('cam'));
    store.insertRecording({
      id: 'big',
      deviceId: 'cam',
      eventType: 'motion',
      startedAt: Date.now() - 60_000,
      endedAt: Date.now() - 50_000,
      sizeBytes: big.length,
      fileName: 'big.mp4',
      alertId: null,
    });
    store.close();

    const d = await startDaemon(cfg, dir);
    const token = cli(['token', '--config', cfg, '--scope', 'recordings:write'], {}, dir).stdout.trim();
    const url = new URL('/v1/recordings/big/download', d.apiUrl);
    const received = await new Promise<number>((resolve, reject) => {
      const req = request(
        url,
        {
          ca: readFileSync(path.join(dataDir, 'tls/cert.pem')),
          servername: 'localhost',
          headers: { authorization: `Bearer ${token}` },
        },
        (res) => {
          let n = 0;
          res.pause();
          // Headers are here and the body is still to come: now ask the daemon to stop.
          d.child.kill('SIGTERM');
          setTimeout(() => res.resume(), 300);
          res.on('data', (c: Buffer) => (n += c.length));
          res.on('end', () => resolve(n));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end();
    });
    expect(received).toBe(big.length);
    expect(await exited(d.child)).toBe(0);
  });
});

describe('edge-gateway simulate-camera', () => {
  it('runs simulated ONVIF cameras that answer with digest auth and take triggers, until SIGTERM', async () => {
    const child = spawn(
      process.execPath,
      [
        CLI,
        'simulate-camera',
        '--count',
        '2',
        '--port',
        '0',
        '--discovery-port',
        '0',
        '--rtsp-port',
        'off',
        '--password',
        's3cret',
      ],
      {
        env: { PATH: process.env.PATH ?? '' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    children.push(child);
    const urls = await new Promise<string[]>((resolve, reject) => {
      let out = '';
      child.stdout?.on('data', (d: Buffer) => {
        out += d.toString();
        const ready = out.split('\n').filter((l) => l.includes('"simulated camera ready"'));
        if (ready.length === 2) resolve(ready.map((l) => (JSON.parse(l) as { onvif: string }).onvif));
      });
      child.on('exit', (code) => reject(new Error(`simulator exited ${code}: ${out}`)));
    });
    const { OnvifSession } = await import('../src/onvif/library.js');
    const models: string[] = [];
    for (const url of urls) {
      const s = await OnvifSession.connect({ url, username: 'admin', password: 's3cret' }, { callTimeoutMs: 3000 });
      models.push(String((await s.describe()).model));
      s.close();
    }
    expect(models).toEqual(['SIM-1', 'SIM-2']);
    const trigger = await fetch(new URL('/sim/trigger?kind=vehicle&active=true', urls[0]), { method: 'POST' });
    expect(await trigger.text()).toBe('vehicle started\n');
    const bad = await fetch(new URL('/sim/trigger?kind=cat', urls[0]), { method: 'POST' });
    expect(bad.status).toBe(400);
    child.kill('SIGTERM');
    expect(await exited(child)).toBe(0);
  });

  it('refuses bad options', () => {
    expect(cli(['simulate-camera', '--count', '0']).code).toBe(2);
    expect(cli(['simulate-camera', '--port', 'x']).code).toBe(2);
  });
});

describe('edge-gateway seal', () => {
  it('prints the secret from stdin sealed with the data_dir key, which the gateway opens', async () => {
    const dir = workDir();
    const cfg = writeConfig(dir, `gateway:\n  data_dir: ${dir}/data\n`);
    const r = spawnSync(process.execPath, [CLI, 'seal', '--config', cfg], {
      input: 'broker-pw\n',
      encoding: 'utf8',
      timeout: 30_000,
      env: { PATH: process.env.PATH ?? '' },
    });
    expect(r.status).toBe(0);
    const sealed = r.stdout.trim();
    expect(sealed).toMatch(/^sealed:v\d+\./);
    expect(sealed).not.toContain('broker-pw');
    const { SecretBox, openConfigSecret } = await import('../src/platform/secret-box.js');
    expect(openConfigSecret(SecretBox.openInDir(path.join(dir, 'data')), sealed)).toBe('broker-pw'); // the newline is not part of it
    const empty = spawnSync(process.execPath, [CLI, 'seal', '--config', cfg], {
      input: '',
      encoding: 'utf8',
      timeout: 30_000,
      env: { PATH: process.env.PATH ?? '' },
    });
    expect(empty.status).toBe(2);
    expect(empty.stderr).toMatch(/seal reads the secret on stdin/);
  });
});

describe('edge-gateway clients and users (the local authorization server stand-ins for the developer portal)', () => {
  const run = (args: string[], input = '') =>
    spawnSync(process.execPath, [CLI, ...args], {
      input,
      encoding: 'utf8',
      timeout: 30_000,
      env: { PATH: process.env.PATH ?? '' },
    });

  it('registers, lists and removes clients; the secret is shown once and stored hashed', () => {
    const dir = workDir();
    const cfg = writeConfig(dir, `gateway:\n  data_dir: ${dir}/data\n`);
    const added = run([
      'clients',
      'add',
      '--config',
      cfg,
      '--name',
      'Phone app',
      '--redirect-uri',
      'https://app.example/cb',
      '--redirect-uri',
      'http://127.0.0.1/cb',
      '--json',
    ]);
    expect(added.status).toBe(0);
    const { client_id, client_secret } = JSON.parse(added.stdout) as { client_id: string; client_secret: string };
    expect(client_id).toMatch(/^cli_/);
    expect(client_secret).toMatch(/^[\w-]{43}$/);
    const pub = JSON.parse(
      run([
        'clients',
        'add',
        '--config',
        cfg,
        '--name',
        'SPA',
        '--public',
        '--redirect-uri',
        'https://spa.example/cb',
        '--json',
      ]).stdout,
    ) as { client_secret: string | null };
    expect(pub.client_secret).toBeNull();
    const svc = run([
      'clients',
      'add',
      '--config',
      cfg,
      '--name',
      'NVR sync',
      '--grant',
      'client_credentials',
      '--json',
    ]);
    expect(svc.status).toBe(0);
    const list = JSON.parse(run(['clients', 'list', '--config', cfg, '--json']).stdout) as Array<{
      client_id: string;
      public: boolean;
      grant_types: string[];
    }>;
    expect(list.map((c) => [c.public, c.grant_types])).toEqual([
      [false, ['authorization_code', 'refresh_token']],
      [true, ['authorization_code', 'refresh_token']],
      [false, ['client_credentials']],
    ]);
    const db = readFileSync(path.join(dir, 'data', 'gateway.db'));
    expect(db.includes(Buffer.from(client_secret))).toBe(false);
    expect(run(['clients', 'remove', '--config', cfg, '--client-id', client_id]).status).toBe(0);
    expect(run(['clients', 'remove', '--config', cfg, '--client-id', client_id]).status).toBe(1);
    expect((JSON.parse(run(['clients', 'list', '--config', cfg, '--json']).stdout) as unknown[]).length).toBe(2);
  });

  it("keeps the web app's built-in client out of clients list and refuses to remove it", async () => {
    const dir = workDir();
    const cfg = writeConfig(dir, `gateway:\n  data_dir: ${dir}/data\n`);
    expect(run(['clients', 'list', '--config', cfg, '--json']).stdout).toBe('[]\n');
    const removed = run(['clients', 'remove', '--config', cfg, '--client-id', 'gateway-web']);
    expect(removed.status).toBe(2);
    expect(removed.stderr).toMatch(/gateway-web is the gateway's own web app, built in; it cannot be removed/);
    const store = Store.open(path.join(dir, 'data'));
    try {
      expect(store.getOAuthClient('gateway-web')).not.toBeNull();
    } finally {
      store.close();
    }
  });

  it('gives users a role (viewer unless --role says admin), shown by users list; an unknown role writes nothing', () => {
    const dir = workDir();
    const cfg = writeConfig(dir, `gateway:\n  data_dir: ${dir}/data\n`);
    const admin = run(
      ['users', 'add', '--config', cfg, '--username', 'boss', '--role', 'admin', '--password-stdin'],
      'pw one\n',
    );
    expect(admin.status).toBe(0);
    expect(admin.stdout).toBe('user boss added (role admin)\n');
    expect(run(['users', 'add', '--config', cfg, '--username', 'guest', '--password-stdin'], 'pw three\n').stdout).toBe(
      'user guest added (role viewer)\n',
    );
    const bad = run(
      ['users', 'add', '--config', cfg, '--username', 'eve', '--role', 'root', '--password-stdin'],
      'pw four\n',
    );
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/--role must be one of viewer, admin, not root/);
    expect(run(['users', 'list', '--config', cfg]).stdout).toBe('boss  admin\nguest  viewer\n');
  });

  it.each([
    [
      ['--name', 'x', '--redirect-uri', 'https://app.example/cb#frag'],
      /--redirect-uri https:\/\/app\.example\/cb#frag: /,
    ],
    [['--name', 'x', '--redirect-uri', 'http://app.example/cb'], /--redirect-uri http:\/\/app\.example\/cb: /],
    [['--name', 'x', '--public', '--grant', 'client_credentials'], /public client cannot use client_credentials/],
    [['--name', 'x', '--grant', 'password'], /--grant must be one of/],
    [['--name', 'x'], /needs at least one --redirect-uri/],
    [['--redirect-uri', 'https://app.example/cb'], /needs --name/],
  ])('refuses clients add %j with a usage error', (args, message) => {
    const dir = workDir();
    const cfg = writeConfig(dir, `gateway:\n  data_dir: ${dir}/data\n`);
    const r = run(['clients', 'add', '--config', cfg, ...args]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(message);
  });

  it('adds users with the password from stdin (scrypt-hashed), lists and removes them', async () => {
    const dir = workDir();
    const cfg = writeConfig(dir, `gateway:\n  data_dir: ${dir}/data\n`);
    expect(
      run(['users', 'add', '--config', cfg, '--username', 'owner', '--password-stdin'], 'correct horse battery\n')
        .status,
    ).toBe(0);
    expect(run(['users', 'add', '--config', cfg, '--username', 'owner', '--password-stdin'], 'again\n').status).toBe(1);
    expect(run(['users', 'add', '--config', cfg, '--username', 'x', '--password-stdin'], '').stderr).toMatch(
      /password is empty/,
    );
    expect(run(['users', 'add', '--config', cfg, '--username', 'bad name', '--password-stdin'], 'pw').status).toBe(2);
    expect(run(['users', 'add', '--config', cfg, '--username', 'owner2']).stderr).toMatch(/--password-stdin/);
    expect(run(['users', 'list', '--config', cfg]).stdout).toBe('owner  viewer\n');
    const { Store } = await import('../src/store/store.js');
    const { verifyPassword } = await import('../src/auth/oauth/password.js');
    const store = Store.open(path.join(dir, 'data'));
    try {
      const user = store.getLocalUser('owner')!;
      expect(user.passwordHash).toMatch(/^scrypt\$/);
      expect(await verifyPassword('correct horse battery', user.passwordHash)).toBe(true);
      expect(await verifyPassword('correct horse battery\n', user.passwordHash)).toBe(false);
    } finally {
      store.close();
    }
    expect(run(['users', 'remove', '--config', cfg, '--username', 'owner']).status).toBe(0);
    expect(run(['users', 'list', '--config', cfg]).stdout).toBe('');
  });
});

describe('edge-gateway users set-role, against the gateway running on the same database', () => {
  const run = (args: string[]) =>
    spawnSync(process.execPath, [CLI, ...args], {
      encoding: 'utf8',
      timeout: 30_000,
      env: { PATH: process.env.PATH ?? '' },
    });
  const ALL = 'devices:read devices:write alerts:read alerts:write recordings:read';
  const VIEWER_SCOPES = 'alerts:read devices:read recordings:read';
  const sorted = (scope: string) => scope.split(' ').sort().join(' ');

  const signIn = (t: TestGateway, username: string, password: string) =>
    signInAsWebApp(t.gw.apiUrl, t.request, { username, password }, ALL);
  async function refresh(t: TestGateway, token: string): Promise<{ scope: string; error?: string }> {
    const res = await tokenRequest(t.request, {
      grant_type: 'refresh_token',
      refresh_token: token,
      client_id: 'gateway-web',
    });
    const body = res.json() as { scope: string; error?: string };
    return res.status === 200
      ? { scope: body.scope }
      : { scope: '', ...(body.error === undefined ? {} : { error: body.error }) };
  }
  const devicesStatus = async (t: TestGateway, access: string) =>
    (await t.request('/v1/devices', { headers: { authorization: `Bearer ${access}` } })).status;

  it(
    'lowers a role: the sign-ins end at once, the next grant has the new role; raising keeps them; bad input changes nothing',
    { timeout: 120_000 },
    async () => {
      const dir = workDir();
      const t = await startTestGateway({}, { dataDir: path.join(dir, 'data'), keepDataDir: true });
      try {
        const cfg = writeConfig(dir, `gateway:\n  data_dir: ${dir}/data\n`);
        const added = spawnSync(
          process.execPath,
          [CLI, 'users', 'add', '--config', cfg, '--username', 'boss', '--role', 'admin', '--password-stdin'],
          { input: 'boss password 1\n', encoding: 'utf8', env: { PATH: process.env.PATH ?? '' } },
        );
        expect(added.status).toBe(0);
        const admin = await signIn(t, 'boss', 'boss password 1');
        expect(sorted(admin.scope)).toBe(sorted(ALL));
        expect(await devicesStatus(t, admin.access)).toBe(200);

        // Bad input: a clear error, a failing exit code, and the role and the sign-in untouched.
        for (const [args, status, message] of [
          [['--username', 'nobody', '--role', 'viewer'], 1, /no user nobody/],
          [['--username', 'boss', '--role', 'root'], 2, /--role must be one of viewer, admin, not root/],
          [['--username', 'boss'], 2, /needs --role \(viewer or admin\)/],
          [['--role', 'viewer'], 2, /needs --username/],
          [['--username', 'boss', '--role', 'viewer', '--colour', 'red'], 2, /colour/],
        ] as const) {
          const r = run(['users', 'set-role', '--config', cfg, ...args]);
          expect(r.status, args.join(' ')).toBe(status);
          expect(r.stderr).toMatch(message);
          expect(r.stdout).toBe('');
        }
        expect(run(['users', 'list', '--config', cfg]).stdout).toBe('boss  admin\n');
        expect(await devicesStatus(t, admin.access)).toBe(200);

        const same = run(['users', 'set-role', '--config', cfg, '--username', 'boss', '--role', 'admin']);
        expect([same.status, same.stdout]).toEqual([0, 'user boss already has role admin\n']);

        // Lowered: the running gateway refuses the access token at once and the refresh token too.
        const lowered = run(['users', 'set-role', '--config', cfg, '--username', 'boss', '--role', 'viewer']);
        expect([lowered.status, lowered.stdout]).toEqual([
          0,
          'user boss: role viewer (was admin); 1 sign-in ended (sign in again)\n',
        ]);
        expect(run(['users', 'list', '--config', cfg]).stdout).toBe('boss  viewer\n');
        expect(await devicesStatus(t, admin.access)).toBe(401);
        expect((await refresh(t, admin.refresh)).error).toBe('invalid_grant');
        // The next grant is cut to the role, whatever the app asks for.
        const viewer = await signIn(t, 'boss', 'boss password 1');
        expect(sorted(viewer.scope)).toBe(VIEWER_SCOPES);

        // Raised: nothing ends; the grant keeps what it was given (no more), a new sign-in gets the rest.
        const raised = run(['users', 'set-role', '--config', cfg, '--username', 'boss', '--role', 'admin']);
        expect([raised.status, raised.stdout]).toEqual([0, 'user boss: role admin (was viewer)\n']);
        expect(await devicesStatus(t, viewer.access)).toBe(200);
        const refreshed = await refresh(t, viewer.refresh);
        expect(refreshed.error).toBeUndefined();
        expect(sorted(refreshed.scope)).toBe(VIEWER_SCOPES);
        expect(sorted((await signIn(t, 'boss', 'boss password 1')).scope)).toBe(sorted(ALL));
      } finally {
        await t.stop();
      }
    },
  );
});
