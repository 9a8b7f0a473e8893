#!/usr/bin/env node
import { SCOPES, isScope } from './auth/scope-catalogue.js';
import { parseArgs } from 'node:util';
import { ConfigError } from './config/errors.js';
import { configPathFrom, loadConfig } from './config/load.js';
import type { Config } from './config/schema.js';
import { openLocalIssuer } from './auth/local-issuer.js';
import { pino } from 'pino';
import { SecretBox, sealConfigSecret } from './platform/secret-box.js';
import { Store } from './store/store.js';
import { createHash, randomBytes } from 'node:crypto';
import { GRANT_TYPES } from './auth/oauth/params.js';
import { PasswordPolicyError } from './auth/oauth/errors.js';
import { hashPassword } from './auth/oauth/password.js';
import { validateRegisteredRedirectUri } from './auth/oauth/redirect-uri.js';
import { isFirstPartyClient } from './auth/oauth/first-party.js';
import { DEFAULT_ROLE, isRole, ROLE_SCOPES, roleNarrows, ROLES } from './auth/roles.js';
import { GatewayError } from './domain/errors.js';
import { newId } from './domain/ids.js';
import { readVersion } from './version.js';

const USAGE = `Usage: edge-gateway <command> [options]

Commands:
  start  [--config FILE]                 run the gateway (foreground; systemd runs it this way)
  token  [--config FILE] --scope "S ..." [--ttl SECONDS] [--subject NAME]
                                         print an access token from the gateway's local issuer
                                         scopes: ${SCOPES.join(' ')}
  clients add --name N --redirect-uri U [--redirect-uri U2 ...] [--public]
              [--grant authorization_code|refresh_token|client_credentials ...] [--json] [--config FILE]
                                         register a client of the local authorization server; prints its
                                         client_id (and client_secret, shown once, stored hashed)
  clients list [--json] | clients remove --client-id ID   [--config FILE]
  users add --username U [--role viewer|admin] --password-stdin | users list | users remove --username U
  users set-role --username U --role viewer|admin   [--config FILE]
                                         local accounts for the gateway's own login page; a token gets only the
                                         scopes of its user's role (default ${DEFAULT_ROLE}):
                                         viewer: ${ROLE_SCOPES.viewer.join(' ')}; admin: every scope;
                                         a lowered role ends the user's sign-ins at once
  seal   [--config FILE]                 read a secret on stdin, print it sealed with this gateway's key
                                         (for sync.mqtt.password: "sealed:…"; only this data_dir opens it)
  simulate-camera [--count N] [--host 127.0.0.1] [--port 8081] [--username admin] [--password admin]
                  [--discovery-port 3702 | 0 for none] [--rtsp-port 8556 | 0 any | off] [--ptz on|off]
                                         run simulated ONVIF cameras (for the demo and benchmarks);
                                         POST http://HOST:PORT/sim/trigger?kind=human&active=true starts an event
  --help                                 this text
  --version                              the gateway's version

The config file may also be given by EDGE_GATEWAY_CONFIG; without one the defaults apply
(config/default.yaml documents every key).
`;

/**
 * A command line that cannot be run: printed with the usage, exit status 2. The one error class
 * outside an errors.ts: cli.ts is a file at src's root, a layer of its own, and a root errors.ts
 * would read, in the layer rule's import patterns, as every folder's own ./errors.js.
 */
class UsageError extends GatewayError.of('usage') {}

type Io = { out: (s: string) => void; err: (s: string) => void; stdin?: () => Promise<string> };

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

type OptionSpec = Record<string, { type: 'string' | 'boolean'; multiple?: boolean }>;

/** util.parseArgs, strict (unknown flags and stray words are usage errors). */
function parseArgsStrict<T extends OptionSpec>(argv: string[], options: T) {
  try {
    return parseArgs({ args: argv, options, strict: true, allowPositionals: false });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

/** Parses --name value flags that are all plain strings. */
function parse(argv: string[], names: string[]): Record<string, string | undefined> {
  return parseArgsStrict(argv, Object.fromEntries(names.map((n) => [n, { type: 'string' as const }]))).values;
}

function config(flag: string | undefined, env: NodeJS.ProcessEnv): Config {
  return loadConfig(configPathFrom(flag, env));
}

async function start(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const values = parse(argv, ['config']);
  const cfg = config(values.config, env);
  // Imported here, not at the top: the daemon pulls in every part (Fastify, WebRTC, the detector's
  // TensorFlow.js), a second of CPU here and several on a Pi that `users list` or `--help` need not pay.
  const { createLogger, installFatalHandlers, startGateway, tuneHeapGrowth } = await import('./main.js');
  tuneHeapGrowth();
  const logger = createLogger(cfg);
  installFatalHandlers(logger);
  const gateway = await startGateway(cfg, { logger, env });
  await new Promise<void>((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      logger.info({ signal }, 'signal received');
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      resolve();
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
  await gateway.stop();
  return 0;
}

async function token(argv: string[], env: NodeJS.ProcessEnv, io: Io): Promise<number> {
  const values = parse(argv, ['config', 'scope', 'ttl', 'subject']);
  if (typeof values.scope !== 'string')
    throw new UsageError('token needs --scope, e.g. --scope "devices:read alerts:read"');
  const scopes = values.scope.split(' ').filter(Boolean);
  const unknown = scopes.filter((s) => !isScope(s));
  if (scopes.length === 0 || unknown.length)
    throw new UsageError(`unknown scope ${unknown.join(', ') || '(none given)'}; known: ${SCOPES.join(' ')}`);
  const ttlText = values.ttl;
  const cfg = config(values.config, env);
  const ttl = ttlText === undefined ? cfg.auth.local.access_ttl_s : Number(ttlText);
  if (!Number.isInteger(ttl) || ttl < 60 || ttl > 86_400)
    throw new UsageError('--ttl must be a whole number of seconds from 60 to 86400');
  if (!cfg.auth.local.enabled) {
    io.err('edge-gateway token: the local issuer is off (auth.local.enabled: false)\n');
    return 1;
  }
  const issuer = await openLocalIssuer(cfg, SecretBox.openInDir(cfg.gateway.data_dir));
  const subject = values.subject || 'local-admin';
  io.out(`${await issuer.issue({ subject, scope: scopes.join(' '), ttlS: ttl })}\n`);
  return 0;
}

async function seal(argv: string[], env: NodeJS.ProcessEnv, io: Io, stdin: () => Promise<string>): Promise<number> {
  const values = parse(argv, ['config']);
  const cfg = config(values.config, env);
  // One trailing newline (echo, a here-string) is not part of the secret.
  const secret = (await stdin()).replace(/\r?\n$/, '');
  if (secret.length === 0)
    throw new UsageError('seal reads the secret on stdin, e.g.: printf %s "$PASSWORD" | edge-gateway seal');
  io.out(`${sealConfigSecret(SecretBox.openInDir(cfg.gateway.data_dir), secret)}\n`);
  return 0;
}

/**
 * The store of the configured data_dir, for the management commands. The daemon may be running:
 * each command closes it with closeWhenVisible, so the daemon sees its change once it returns.
 */
function openStore(configFlag: string | undefined, env: NodeJS.ProcessEnv): Store {
  return Store.open(config(configFlag, env).gateway.data_dir);
}

async function clients(argv: string[], env: NodeJS.ProcessEnv, io: Io): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === 'add') {
    const { values } = parseArgsStrict(rest, {
      config: { type: 'string' },
      name: { type: 'string' },
      'redirect-uri': { type: 'string', multiple: true },
      grant: { type: 'string', multiple: true },
      public: { type: 'boolean' },
      json: { type: 'boolean' },
    });
    const name = values.name?.trim();
    if (!name) throw new UsageError('clients add needs --name');
    const redirectUris = values['redirect-uri'] ?? [];
    const grants = values.grant ?? ['authorization_code', 'refresh_token'];
    for (const g of grants)
      if (!(GRANT_TYPES as readonly string[]).includes(g))
        throw new UsageError(`--grant must be one of ${GRANT_TYPES.join(', ')}, not ${g}`);
    if (values.public && grants.includes('client_credentials'))
      throw new UsageError('a public client cannot use client_credentials (it has no secret)');
    if (grants.includes('authorization_code') && redirectUris.length === 0)
      throw new UsageError('the authorization_code grant needs at least one --redirect-uri');
    for (const uri of redirectUris) {
      const check = validateRegisteredRedirectUri(uri);
      if (!check.ok) throw new UsageError(`--redirect-uri ${uri}: ${check.message}`);
    }
    const clientId = newId('cli');
    const secret = values.public ? null : randomBytes(32).toString('base64url');
    const store = openStore(values.config, env);
    try {
      store.insertOAuthClient({
        id: clientId,
        name,
        secretHash: secret === null ? null : createHash('sha256').update(secret).digest('hex'),
        redirectUris,
        grantTypes: [...new Set(grants)],
        createdAt: Date.now(),
      });
    } finally {
      await store.closeWhenVisible();
    }
    if (values.json) io.out(`${JSON.stringify({ client_id: clientId, client_secret: secret })}\n`);
    else
      io.out(
        `client_id: ${clientId}\n${secret === null ? 'public client: no secret\n' : `client_secret: ${secret}\n(shown once; only its hash is kept)\n`}`,
      );
    return 0;
  }
  if (sub === 'list') {
    const { values } = parseArgsStrict(rest, { config: { type: 'string' }, json: { type: 'boolean' } });
    const store = openStore(values.config, env);
    try {
      // The web app's own client is the gateway's, not one of the user's: not listed, not removable.
      const list = store
        .listOAuthClients()
        .filter((c) => !isFirstPartyClient(c.id))
        .map((c) => ({
          client_id: c.id,
          name: c.name,
          public: c.secretHash === null,
          redirect_uris: c.redirectUris,
          grant_types: c.grantTypes,
        }));
      io.out(
        values.json
          ? `${JSON.stringify(list)}\n`
          : list
              .map(
                (c) =>
                  `${c.client_id}  ${c.name}  ${c.public ? 'public' : 'confidential'}  ${c.grant_types.join(',')}  ${c.redirect_uris.join(' ')}\n`,
              )
              .join(''),
      );
    } finally {
      await store.closeWhenVisible();
    }
    return 0;
  }
  if (sub === 'remove') {
    const { values } = parseArgsStrict(rest, { config: { type: 'string' }, 'client-id': { type: 'string' } });
    if (!values['client-id']) throw new UsageError('clients remove needs --client-id');
    if (isFirstPartyClient(values['client-id']))
      throw new UsageError(`${values['client-id']} is the gateway's own web app, built in; it cannot be removed`);
    const store = openStore(values.config, env);
    try {
      if (!store.deleteOAuthClient(values['client-id'])) {
        io.err(`edge-gateway clients remove: no client ${values['client-id']}\n`);
        return 1;
      }
    } finally {
      await store.closeWhenVisible();
    }
    return 0;
  }
  throw new UsageError('clients needs add, list or remove');
}

async function users(argv: string[], env: NodeJS.ProcessEnv, io: Io, stdin: () => Promise<string>): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === 'add') {
    const { values } = parseArgsStrict(rest, {
      config: { type: 'string' },
      username: { type: 'string' },
      role: { type: 'string' },
      'password-stdin': { type: 'boolean' },
    });
    const username = values.username?.trim();
    if (!username || !/^[A-Za-z0-9._@-]{1,64}$/.test(username))
      throw new UsageError('users add needs --username (1–64 of A-Z a-z 0-9 . _ @ -)');
    const role = values.role ?? DEFAULT_ROLE;
    if (!isRole(role)) throw new UsageError(`--role must be one of ${ROLES.join(', ')}, not ${role}`);
    if (!values['password-stdin'])
      throw new UsageError(
        'users add reads the password from stdin: --password-stdin (never on the command line, where ps shows it)',
      );
    const password = (await stdin()).replace(/\r?\n$/, '');
    let passwordHash: string;
    try {
      passwordHash = await hashPassword(password);
    } catch (err) {
      if (err instanceof PasswordPolicyError) throw new UsageError(`the password is ${err.reason}`);
      throw err;
    }
    const store = openStore(values.config, env);
    try {
      if (store.getLocalUser(username)) {
        io.err(`edge-gateway users add: ${username} exists (users remove first to set a new password)\n`);
        return 1;
      }
      store.insertLocalUser({ username, passwordHash, role, createdAt: Date.now() });
    } finally {
      await store.closeWhenVisible();
    }
    io.out(`user ${username} added (role ${role})\n`);
    return 0;
  }
  if (sub === 'list') {
    const { values } = parseArgsStrict(rest, { config: { type: 'string' } });
    const store = openStore(values.config, env);
    try {
      io.out(
        store
          .listLocalUsers()
          .map((u) => `${u.username}  ${u.role}\n`)
          .join(''),
      );
    } finally {
      await store.closeWhenVisible();
    }
    return 0;
  }
  if (sub === 'remove') {
    const { values } = parseArgsStrict(rest, { config: { type: 'string' }, username: { type: 'string' } });
    if (!values.username) throw new UsageError('users remove needs --username');
    const store = openStore(values.config, env);
    try {
      if (!store.deleteLocalUser(values.username)) {
        io.err(`edge-gateway users remove: no user ${values.username}\n`);
        return 1;
      }
    } finally {
      await store.closeWhenVisible();
    }
    return 0;
  }
  if (sub === 'set-role') {
    const { values } = parseArgsStrict(rest, {
      config: { type: 'string' },
      username: { type: 'string' },
      role: { type: 'string' },
    });
    if (!values.username) throw new UsageError('users set-role needs --username');
    if (values.role === undefined) throw new UsageError(`users set-role needs --role (${ROLES.join(' or ')})`);
    if (!isRole(values.role)) throw new UsageError(`--role must be one of ${ROLES.join(', ')}, not ${values.role}`);
    const store = openStore(values.config, env);
    try {
      const changed = store.setLocalUserRole(values.username, values.role, roleNarrows);
      if (changed === null) {
        io.err(`edge-gateway users set-role: no user ${values.username}\n`);
        return 1;
      }
      const revoked =
        changed.revokedGrants > 0
          ? `; ${changed.revokedGrants} sign-in${changed.revokedGrants === 1 ? '' : 's'} ended (sign in again)`
          : '';
      io.out(
        changed.previous === values.role
          ? `user ${values.username} already has role ${values.role}\n`
          : `user ${values.username}: role ${values.role} (was ${changed.previous})${revoked}\n`,
      );
    } finally {
      await store.closeWhenVisible();
    }
    return 0;
  }
  throw new UsageError('users needs add, list, set-role or remove');
}

async function simulateCamera(argv: string[]): Promise<number> {
  const v = parse(argv, ['count', 'host', 'port', 'username', 'password', 'discovery-port', 'rtsp-port', 'ptz']);
  const int = (name: string, text: string | undefined, def: number, min: number, max: number) => {
    const n = text === undefined ? def : Number(text);
    if (!Number.isInteger(n) || n < min || n > max)
      throw new UsageError(`--${name} must be a whole number from ${min} to ${max}`);
    return n;
  };
  const count = int('count', v.count, 1, 1, 256);
  const port = int('port', v.port, 8081, 0, 65535);
  const discoveryPort = int('discovery-port', v['discovery-port'], 3702, 0, 65535);
  const rtspPort = v['rtsp-port'] === 'off' ? null : int('rtsp-port', v['rtsp-port'], 8556, 0, 65535);
  const host = v.host ?? '127.0.0.1';
  if (v.ptz !== undefined && v.ptz !== 'on' && v.ptz !== 'off') throw new UsageError('--ptz must be on or off');
  const ptz = v.ptz !== 'off';
  const logger = pino({ level: 'info', base: { service: 'edge-gateway-simulator' } });
  const { startFleet } = await import('./onvif/simulator/fleet.js');
  const fleet = await startFleet({
    count,
    host,
    basePort: port,
    username: v.username ?? 'admin',
    password: v.password ?? 'admin',
    // The simulator announces itself on the interface of its own address only (loopback by default).
    discovery: discoveryPort === 0 ? null : { port: discoveryPort, interfaceAddress: host },
    rtspPort,
    // PTZ cameras pan their picture, so the demo shows what the buttons do.
    ptz,
    ptzPicture: ptz,
    logger,
  });
  fleet.cameras.forEach((cam, i) =>
    logger.info(
      { onvif: cam.deviceServiceUrl, endpoint: cam.endpoint, rtsp: fleet.rtsp?.url(i, 'main') ?? null },
      'simulated camera ready',
    ),
  );
  await new Promise<void>((resolve) => {
    const done = () => resolve();
    process.once('SIGTERM', done);
    process.once('SIGINT', done);
  });
  await fleet.stop();
  return 0;
}

export async function runCli(argv: string[], env: NodeJS.ProcessEnv, io: Io): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case 'start':
        return await start(rest, env);
      case 'token':
        return await token(rest, env, io);
      case 'clients':
        return await clients(rest, env, io);
      case 'users':
        return await users(rest, env, io, io.stdin ?? readStdin);
      case 'seal':
        return await seal(rest, env, io, io.stdin ?? readStdin);
      case 'simulate-camera':
        return await simulateCamera(rest);
      case '--help':
      case '-h':
      case 'help':
        io.out(USAGE);
        return 0;
      case '--version':
        io.out(`${readVersion()}\n`);
        return 0;
      default:
        throw new UsageError(command === undefined ? 'no command given' : `unknown command ${command}`);
    }
  } catch (err) {
    if (err instanceof UsageError) {
      io.err(`edge-gateway: ${err.message}\n\n${USAGE}`);
      return 2;
    }
    if (err instanceof ConfigError) {
      io.err(`edge-gateway: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
}

runCli(process.argv.slice(2), process.env, {
  out: (s) => process.stdout.write(s),
  err: (s) => process.stderr.write(s),
}).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`edge-gateway: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
