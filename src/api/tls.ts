import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import os from 'node:os';
import { interfaceAddresses } from '../config/lan-address.js';
import path from 'node:path';
import { promisify } from 'node:util';
import type { SecretBox } from '../platform/secret-box.js';
import { replaceFile } from '../platform/durable-files.js';
import { TlsSetupError } from './errors.js';

const run = promisify(execFile);
const KEY_LABEL = 'api-tls-key';

export interface TlsCredentials {
  cert: Buffer;
  key: Buffer;
  /** The certificate file, for clients to trust (curl --cacert). */
  certFile: string;
  generated: boolean;
}

/** DNS names and addresses a LAN client may use to reach this box; all go into the certificate. */
export function localNames(): { dns: string[]; ips: string[] } {
  const host = os.hostname();
  const dns = ['localhost', host, `${host}.local`].filter((n) => /^[A-Za-z0-9.-]{1,253}$/.test(n));
  const ips = new Set(['127.0.0.1', '::1']);
  // Scoped IPv6 addresses (fe80::1%eth0) cannot go into a certificate.
  for (const address of interfaceAddresses()) if (!address.includes('%')) ips.add(address);
  return { dns: [...new Set(dns)], ips: [...ips] };
}

/**
 * The API's certificate: the configured files, or a self-signed ECDSA P-256 certificate generated on
 * first start into data_dir/tls and reused after. Its private key is kept sealed with the data_dir key.
 */
export async function loadTlsCredentials(opts: {
  certFile: string | null;
  keyFile: string | null;
  dataDir: string;
  secretBox: SecretBox;
  names?: { dns: string[]; ips: string[] };
  openssl?: string;
}): Promise<TlsCredentials> {
  if (opts.certFile && opts.keyFile) {
    return {
      cert: readOrFail(opts.certFile, 'api.tls.cert_file'),
      key: readOrFail(opts.keyFile, 'api.tls.key_file'),
      certFile: opts.certFile,
      generated: false,
    };
  }
  const dir = path.join(opts.dataDir, 'tls');
  const certFile = path.join(dir, 'cert.pem');
  const sealedKeyFile = path.join(dir, 'key.sealed');
  if (existsSync(certFile) && existsSync(sealedKeyFile)) {
    const key = opts.secretBox.open(readFileSync(sealedKeyFile, 'utf8'), KEY_LABEL);
    return { cert: readFileSync(certFile), key, certFile, generated: false };
  }
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const { cert, key } = await generateSelfSigned(opts.names ?? localNames(), dir, opts.openssl ?? 'openssl');
  // Key before certificate: the certificate's presence is what marks the pair complete.
  replaceFile(sealedKeyFile, opts.secretBox.seal(key, KEY_LABEL), 0o600);
  replaceFile(certFile, cert, 0o644);
  return { cert, key, certFile, generated: true };
}

function readOrFail(file: string, key: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    throw new TlsSetupError(
      `config: ${key}: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
    );
  }
}

async function generateSelfSigned(
  names: { dns: string[]; ips: string[] },
  dir: string,
  openssl: string,
): Promise<{ cert: Buffer; key: Buffer }> {
  const work = mkdtempSync(path.join(dir, '.gen-'));
  try {
    const keyOut = path.join(work, 'key.pem');
    const certOut = path.join(work, 'cert.pem');
    const san = [...names.dns.map((n) => `DNS:${n}`), ...names.ips.map((ip) => `IP:${ip}`)].join(',');
    await run(
      openssl,
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        keyOut,
        '-out',
        certOut,
        '-days',
        '3650',
        '-sha256',
        '-subj',
        `/CN=${names.dns[1] ?? 'edge-gateway'}/O=edge-gateway self-signed`,
        '-addext',
        `subjectAltName=${san}`,
        '-addext',
        'basicConstraints=critical,CA:FALSE',
        '-addext',
        'keyUsage=critical,digitalSignature',
        '-addext',
        'extendedKeyUsage=serverAuth',
      ],
      { timeout: 30_000 },
    ).catch((err: NodeJS.ErrnoException & { stderr?: string }) => {
      const why =
        err.code === 'ENOENT'
          ? `${openssl} is not installed (apt-get install openssl)`
          : (err.stderr ?? err.message).trim().split('\n')[0];
      throw new TlsSetupError(`cannot create a self-signed certificate: ${why}`);
    });
    return { cert: readFileSync(certOut), key: readFileSync(keyOut) };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
