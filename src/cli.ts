#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { ConfigError } from './config/errors.js';
import { configPathFrom, loadConfig } from './config/load.js';
import type { Config } from './config/schema.js';
import { createLogger, gatewayId, openLocalIssuer, startGateway } from './main.js';
import { startFleet } from './onvif/simulator/fleet.js';
import { pino } from 'pino';
import { SecretBox, sealConfigSecret } from './store/secret-box.js';
import { readVersion } from './version.js';

const SCOPES = [
  'devices:read',
  'devices:write',
  'alerts:read',
  'alerts:write',
  'recordings:read',
  'recordings:write',
  'users:read',
  'users:write',
];

const USAGE = `Usage: edge-gateway <command> [options]

Commands:
  start  [--config FILE]                 run the gateway (foreground; systemd runs it this way)
  token  [--config FILE] --scope "S ..." [--ttl SECONDS] [--subject NAME]
                                         print an access token from the gateway's local issuer
                                         scopes: ${SCOPES.join(' ')}
  seal   [--config FILE]                 read a secret on stdin, print it sealed with this gateway's key
                                         (for sync.mqtt.password: "sealed:…"; only this data_dir opens it)
  simulate-camera [--count N] [--host 127.0.0.1] [--port 8081] [--username admin] [--password admin]
                  [--discovery-port 3702 | 0 for none] [--rtsp-port 8556 | 0 any | off]
                                         run simulated ONVIF cameras (for the demo and benchmarks);
                                         POST http://HOST:PORT/sim/trigger?kind=human&active=true starts an event
  --help                                 this text
  --version                              the gateway's version

The config file may also be given by EDGE_GATEWAY_CONFIG; without one the defaults apply
(config/default.yaml documents every key).
`;

class UsageError extends Error {}

type Io = { out: (s: string) => void; err: (s: string) => void; stdin?: () => Promise<string> };

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Parses --name value flags (all strings); unknown flags and stray words are usage errors. */
function parse(argv: string[], names: string[]): Record<string, string | undefined> {
  const options = Object.fromEntries(names.map((n) => [n, { type: 'string' as const }]));
  try {
    return parseArgs({ args: argv, options, strict: true, allowPositionals: false }).values as Record<string, string | undefined>;
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

function config(flag: string | undefined, env: NodeJS.ProcessEnv): Config {
  return loadConfig(configPathFrom(flag, env));
}

async function start(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const values = parse(argv, ['config']);
  const cfg = config(values.config, env);
  const logger = createLogger(cfg);
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
  if (typeof values.scope !== 'string') throw new UsageError('token needs --scope, e.g. --scope "devices:read alerts:read"');
  const scopes = values.scope.split(' ').filter(Boolean);
  const unknown = scopes.filter((s) => !SCOPES.includes(s));
  if (scopes.length === 0 || unknown.length) throw new UsageError(`unknown scope ${unknown.join(', ') || '(none given)'}; known: ${SCOPES.join(' ')}`);
  const ttlText = values.ttl;
  const cfg = config(values.config, env);
  const ttl = ttlText === undefined ? cfg.auth.local.access_ttl_s : Number(ttlText);
  if (!Number.isInteger(ttl) || ttl < 60 || ttl > 86_400) throw new UsageError('--ttl must be a whole number of seconds from 60 to 86400');
  if (!cfg.auth.local.enabled) {
    io.err('edge-gateway token: the local issuer is off (auth.local.enabled: false)\n');
    return 1;
  }
  const issuer = await openLocalIssuer(cfg, SecretBox.openInDir(cfg.gateway.data_dir), gatewayId(cfg));
  const subject = values.subject || 'local-admin';
  io.out(`${await issuer.issue({ subject, scope: scopes.join(' '), ttlS: ttl })}\n`);
  return 0;
}

async function seal(argv: string[], env: NodeJS.ProcessEnv, io: Io, stdin: () => Promise<string>): Promise<number> {
  const values = parse(argv, ['config']);
  const cfg = config(values.config, env);
  // One trailing newline (echo, a here-string) is not part of the secret.
  const secret = (await stdin()).replace(/\r?\n$/, '');
  if (secret.length === 0) throw new UsageError('seal reads the secret on stdin, e.g.: printf %s "$PASSWORD" | edge-gateway seal');
  io.out(`${sealConfigSecret(SecretBox.openInDir(cfg.gateway.data_dir), secret)}\n`);
  return 0;
}

async function simulateCamera(argv: string[]): Promise<number> {
  const v = parse(argv, ['count', 'host', 'port', 'username', 'password', 'discovery-port', 'rtsp-port']);
  const int = (name: string, text: string | undefined, def: number, min: number, max: number) => {
    const n = text === undefined ? def : Number(text);
    if (!Number.isInteger(n) || n < min || n > max) throw new UsageError(`--${name} must be a whole number from ${min} to ${max}`);
    return n;
  };
  const count = int('count', v.count, 1, 1, 256);
  const port = int('port', v.port, 8081, 0, 65535);
  const discoveryPort = int('discovery-port', v['discovery-port'], 3702, 0, 65535);
  const rtspPort = v['rtsp-port'] === 'off' ? null : int('rtsp-port', v['rtsp-port'], 8556, 0, 65535);
  const host = v.host ?? '127.0.0.1';
  const logger = pino({ level: 'info', base: { service: 'edge-gateway-simulator' } });
  const fleet = await startFleet({
    count,
    host,
    basePort: port,
    username: v.username ?? 'admin',
    password: v.password ?? 'admin',
    // The simulator announces itself on the interface of its own address only (loopback by default).
    discovery: discoveryPort === 0 ? null : { port: discoveryPort, interfaceAddress: host },
    rtspPort,
    logger,
  });
  fleet.cameras.forEach((cam, i) =>
    logger.info({ onvif: cam.deviceServiceUrl, endpoint: cam.endpoint, rtsp: fleet.rtsp?.url(i, 'main') ?? null }, 'simulated camera ready'),
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
