import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

// A real Mosquitto broker for tests (Debian package `mosquitto`). Each call gets its own loopback
// port and temp dir, so parallel test files never share a broker, and nothing here touches the
// system's mosquitto service (port 1883) that the Debian package installs.

const MOSQUITTO = process.env.MOSQUITTO_PATH ?? '/usr/sbin/mosquitto';
const HOST = '127.0.0.1';
// util-linux, on every Debian system; without it the broker is still stopped on a normal exit.
const SETPRIV = ['/usr/bin/setpriv', '/bin/setpriv'].find((p) => existsSync(p)) ?? null;

export interface MosquittoTls {
  /** PEM file paths, as Mosquitto reads them. */
  ca: string;
  cert: string;
  key: string;
  /** Refuse clients without a certificate signed by `ca`. */
  requireClientCert: boolean;
}

export interface MosquittoOptions {
  tls?: MosquittoTls;
  /** Keep sessions and queued messages across restart() (mosquitto.db, written on a clean stop). */
  persistence?: boolean;
  /**
   * Messages queued per client beyond those in flight; 0 (the default here) is no limit. Mosquitto's
   * own default, 1000, silently drops messages for a slow subscriber, which would look like the
   * gateway losing them in the outage tests.
   */
  maxQueuedMessages?: number;
  /** Accounts (user → password); when given, anonymous clients are refused. */
  users?: Record<string, string>;
}

export interface Mosquitto {
  /** mqtt://127.0.0.1:port, or mqtts://127.0.0.1:port with tls (the test server certificate names the IP). */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  /** The temp dir with mosquitto.conf and, with persistence, data/mosquitto.db. */
  readonly dir: string;
  readonly running: boolean;
  /** Stops the broker (SIGTERM, which also saves persistence; SIGKILL after 5 s). Files are kept for restart(). */
  stop(): Promise<void>;
  /** Starts it again (stopping it first if it runs) on the same port with the same config and persistence dir. */
  restart(): Promise<void>;
  /** Stops the broker for good and deletes its temp dir. */
  close(): Promise<void>;
  /** The broker's recent log lines (for a failing test's message). */
  logs(): string;
}

/** A free TCP port on loopback (the OS picks it; released again for Mosquitto to bind). */
export function freeTcpPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, HOST, () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => (port ? resolve(port) : reject(new Error('no port'))));
    });
  });
}

function configText(opts: MosquittoOptions, port: number, dir: string): string {
  const lines = [
    // Mosquitto run as root drops to the `mosquitto` user, which cannot write our temp dir; naming
    // the current user keeps it as is (a non-root broker ignores the option).
    `user ${userInfo().username}`,
    `listener ${port} ${HOST}`,
    // Mosquitto 2 refuses anonymous clients on explicit listeners; these brokers are test-only on loopback.
    `allow_anonymous ${opts.users ? 'false' : 'true'}`,
    ...(opts.users ? [`password_file ${path.join(dir, 'passwords')}`] : []),
    `max_queued_messages ${opts.maxQueuedMessages ?? 0}`,
    'set_tcp_nodelay true',
    'log_dest stderr',
    'log_type error',
    'log_type warning',
    'log_type notice',
    'log_type information',
    'connection_messages true',
    'log_timestamp true',
    'log_timestamp_format %H:%M:%S',
  ];
  if (opts.persistence) {
    // Saved on a clean stop only (autosave 0 would mean never; a long interval keeps saves off the test's path).
    lines.push('persistence true', `persistence_location ${path.join(dir, 'data')}/`, 'autosave_interval 3600');
  } else {
    lines.push('persistence false');
  }
  if (opts.tls) {
    lines.push(
      `cafile ${opts.tls.ca}`,
      `certfile ${opts.tls.cert}`,
      `keyfile ${opts.tls.key}`,
      `require_certificate ${opts.tls.requireClientCert}`,
      'tls_version tlsv1.2',
    );
  }
  return `${lines.join('\n')}\n`;
}

function ended(child: ChildProcess): Promise<void> {
  return new Promise((resolve) =>
    child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve()),
  );
}

const LOG_LIMIT = 200;

export async function startMosquitto(opts: MosquittoOptions = {}): Promise<Mosquitto> {
  if (!existsSync(MOSQUITTO))
    throw new Error(`${MOSQUITTO} is missing: apt-get install mosquitto (./run test installs it)`);
  const dir = mkdtempSync(path.join(tmpdir(), 'mosquitto-test-'));
  if (opts.persistence) mkdirSync(path.join(dir, 'data'));
  const log: string[] = [];
  let child: ChildProcess | null = null;
  let closed = false;
  let port = 0;
  const configFile = path.join(dir, 'mosquitto.conf');

  // The broker must not outlive the test process (a runner exiting early): kill it on exit too.
  const onExit = () => {
    child?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', onExit);

  const remember = (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) log.push(line);
    if (log.length > LOG_LIMIT) log.splice(0, log.length - LOG_LIMIT);
  };

  /** One attempt to run the broker on `port`; resolves once it says it is running. */
  const launch = (): Promise<ChildProcess> =>
    new Promise((resolve, reject) => {
      // Under setpriv --pdeathsig the kernel kills the broker when this process dies by any means:
      // the process 'exit' handler above does not run when the test runner ends a worker with a signal.
      const [cmd, args] = SETPRIV
        ? [SETPRIV, ['--pdeathsig', 'KILL', MOSQUITTO, '-c', configFile]]
        : [MOSQUITTO, ['-c', configFile]];
      const proc = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] });
      // A broker that neither runs nor exits (it takes milliseconds) must not hang the test: killed,
      // it exits, and the exit rejects.
      const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
      let out = '';
      const onData = (d: Buffer) => {
        remember(d);
        out += d.toString('utf8');
        // Printed after every listener is open: clients can connect from here on.
        if (/mosquitto version \S+ running/.test(out)) {
          out = '';
          clearTimeout(timer);
          proc.stderr?.off('data', onData);
          proc.stderr?.on('data', remember);
          resolve(proc);
        }
      };
      proc.stderr?.on('data', onData);
      proc.once('exit', () => clearTimeout(timer));
      proc.once('error', (err) => reject(new Error(`cannot run ${cmd}: ${err.message}`)));
      proc.once('exit', (code, signal) =>
        reject(new Error(`mosquitto exited with ${code ?? signal} before it was ready:\n${log.slice(-20).join('\n')}`)),
      );
    });

  const start = async (firstStart: boolean): Promise<void> => {
    // A port picked then released can be taken by someone else before Mosquitto binds it: on a
    // first start pick another; on a restart the port must stay, so wait for it to come free.
    for (let attempt = 0; ; attempt++) {
      if (firstStart) port = await freeTcpPort();
      writeFileSync(configFile, configText(opts, port, dir));
      if (opts.users) {
        const file = path.join(dir, 'passwords');
        writeFileSync(file, '', { mode: 0o600 });
        for (const [user, password] of Object.entries(opts.users))
          await promisify(execFile)('mosquitto_passwd', ['-b', file, user, password]);
      }
      try {
        const proc = await launch();
        child = proc;
        // A broker that dies by itself is no longer running (a test's stop() then has nothing to do).
        proc.once('exit', () => {
          if (child === proc) child = null;
        });
        return;
      } catch (err) {
        const inUse = /Address already in use/i.test(String(err));
        if (!inUse || attempt >= (firstStart ? 5 : 50)) throw err;
        if (!firstStart) await new Promise((r) => setTimeout(r, 100));
      }
    }
  };

  const stop = async (): Promise<void> => {
    const proc = child;
    if (!proc) return;
    child = null;
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), 5000);
      await ended(proc);
      clearTimeout(timer);
    }
  };

  try {
    await start(true);
  } catch (err) {
    process.off('exit', onExit);
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }

  return {
    get url() {
      return `${opts.tls ? 'mqtts' : 'mqtt'}://${HOST}:${port}`;
    },
    host: HOST,
    get port() {
      return port;
    },
    dir,
    get running() {
      return child !== null;
    },
    stop,
    restart: async () => {
      if (closed) throw new Error('the broker was closed');
      await stop();
      await start(false);
    },
    close: async () => {
      if (closed) return;
      closed = true;
      await stop();
      process.off('exit', onExit);
      rmSync(dir, { recursive: true, force: true });
    },
    logs: () => log.join('\n'),
  };
}

// --- test certificates

const execFileP = promisify(execFile);

export interface TestPki {
  dir: string;
  /** Paths of the PEM files. */
  caCert: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
  /** The same files' contents, as TLS clients take them. */
  ca: Buffer;
  cert: Buffer;
  key: Buffer;
  /** Deletes the dir. */
  remove(): void;
}

export interface TestPkiOptions {
  /** Common name of the client certificate (default `edge-gateway-test-client`). */
  clientName?: string;
  /** openssl binary (default `openssl` on PATH). */
  openssl?: string;
}

/**
 * A throwaway CA, a server certificate for 127.0.0.1 and localhost, and a client certificate, all
 * ECDSA P-256 and valid two days, made with the openssl CLI. Call it twice for a second, untrusted CA.
 */
export async function makeTestPki(opts: TestPkiOptions = {}): Promise<TestPki> {
  const openssl = opts.openssl ?? 'openssl';
  const dir = mkdtempSync(path.join(tmpdir(), 'test-pki-'));
  const file = (name: string) => path.join(dir, name);
  const run = async (args: string[]) => {
    try {
      await execFileP(openssl, args, { cwd: dir });
    } catch (err) {
      const e = err as NodeJS.ErrnoException & { stderr?: string };
      const why =
        e.code === 'ENOENT' ? `${openssl} is not installed (apt-get install openssl)` : (e.stderr ?? e.message).trim();
      throw new Error(`openssl ${args[0]} failed: ${why}`, { cause: err });
    }
  };
  const newKey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  // A fresh random serial per certificate: clients cache nothing across test runs anyway, but two
  // certificates from one CA with the same serial would be a malformed PKI.
  const serial = () => `0x${randomBytes(12).toString('hex')}`;
  try {
    await run([
      'req',
      '-x509',
      ...newKey,
      '-keyout',
      'ca.key',
      '-out',
      'ca.pem',
      '-days',
      '2',
      '-subj',
      '/CN=edge-gateway test CA',
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    ]);
    const issue = async (name: string, cn: string, extensions: string) => {
      writeFileSync(file(`${name}.ext`), extensions);
      await run(['req', ...newKey, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${cn}`]);
      await run([
        'x509',
        '-req',
        '-in',
        `${name}.csr`,
        '-CA',
        'ca.pem',
        '-CAkey',
        'ca.key',
        '-set_serial',
        serial(),
        '-days',
        '2',
        '-extfile',
        `${name}.ext`,
        '-out',
        `${name}.pem`,
      ]);
    };
    await issue(
      'server',
      'localhost',
      'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n',
    );
    await issue(
      'client',
      opts.clientName ?? 'edge-gateway-test-client',
      'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n',
    );
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    dir,
    caCert: file('ca.pem'),
    serverCert: file('server.pem'),
    serverKey: file('server.key'),
    clientCert: file('client.pem'),
    clientKey: file('client.key'),
    ca: readFileSync(file('ca.pem')),
    cert: readFileSync(file('client.pem')),
    key: readFileSync(file('client.key')),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/**
 * A broker front that speaks only MQTT 3.1.1, like older brokers: a CONNECT for protocol level 5 is
 * answered with CONNACK "unacceptable protocol version" (return code 1) and the connection closed;
 * any other connection is passed through to `target`. For the client's fallback to 3.1.1.
 */
export async function startMqtt311Front(target: {
  host: string;
  port: number;
}): Promise<{ url: string; refused: () => number; close: () => Promise<void> }> {
  const { connect: tcpConnect } = await import('node:net');
  let refused = 0;
  const sockets = new Set<import('node:net').Socket>();
  const server = createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => client.destroy());
    client.once('data', (first: Buffer) => {
      // Fixed header (1 byte + 1–4 bytes of remaining length), then "\0\4MQTT" and the level byte.
      let at = 1;
      while (at < 5 && ((first[at] ?? 0) & 0x80) !== 0) at++;
      const level = first[at + 1 + 6];
      if (first[0] === 0x10 && level === 5) {
        refused++;
        client.end(Buffer.from([0x20, 0x02, 0x00, 0x01]));
        return;
      }
      const upstream = tcpConnect(target.port, target.host);
      sockets.add(upstream);
      upstream.on('close', () => {
        sockets.delete(upstream);
        client.destroy();
      });
      upstream.on('error', () => upstream.destroy());
      client.on('close', () => upstream.destroy());
      upstream.write(first);
      client.pipe(upstream);
      upstream.pipe(client);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, HOST, () => resolve()));
  const port = (server.address() as { port: number }).port;
  return {
    url: `mqtt://${HOST}:${port}`,
    refused: () => refused,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
