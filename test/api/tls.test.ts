import { X509Certificate, createPrivateKey } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadTlsCredentials } from '../../src/api/tls.js';
import { TlsSetupError } from '../../src/api/errors.js';
import { SecretBox } from '../../src/platform/secret-box.js';
import { tempDir } from '../support/temp-dir.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('API certificate', () => {
  it('generates a self-signed certificate for the given names once, with its key sealed at rest', async () => {
    const dataDir = tempDir('eg-tls-');
    dirs.push(dataDir);
    const secretBox = SecretBox.openInDir(dataDir);
    const names = { dns: ['localhost', 'nvr', 'nvr.local'], ips: ['127.0.0.1', '::1', '192.0.2.7'] };
    const first = await loadTlsCredentials({ certFile: null, keyFile: null, dataDir, secretBox, names });
    expect(first.generated).toBe(true);
    const cert = new X509Certificate(first.cert);
    expect(cert.subjectAltName).toContain('DNS:nvr.local');
    expect(cert.subjectAltName).toContain('IP Address:192.0.2.7');
    expect(cert.checkHost('localhost')).toBe('localhost');
    expect(cert.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(cert.ca).toBe(false);
    expect(cert.checkPrivateKey(createPrivateKey(first.key))).toBe(true);
    expect(new Date(cert.validTo).getTime()).toBeGreaterThan(Date.now() + 5 * 365 * 86_400_000);
    // No private key in plaintext on disk; no leftovers from generation.
    expect(readdirSync(path.join(dataDir, 'tls')).sort()).toEqual(['cert.pem', 'key.sealed']);
    expect(readFileSync(path.join(dataDir, 'tls', 'key.sealed'), 'utf8')).not.toContain('PRIVATE KEY');

    const second = await loadTlsCredentials({
      certFile: null,
      keyFile: null,
      dataDir,
      secretBox,
      names: { dns: ['other'], ips: [] },
    });
    expect(second.generated).toBe(false);
    expect(second.cert.equals(first.cert)).toBe(true);
    expect(second.key.equals(first.key)).toBe(true);
  });

  it('uses configured files and names a missing one', async () => {
    const dataDir = tempDir('eg-tls-');
    dirs.push(dataDir);
    const secretBox = SecretBox.openInDir(dataDir);
    const gen = await loadTlsCredentials({
      certFile: null,
      keyFile: null,
      dataDir,
      secretBox,
      names: { dns: ['localhost'], ips: ['127.0.0.1'] },
    });
    await expect(
      loadTlsCredentials({ certFile: gen.certFile, keyFile: '/nonexistent/key.pem', dataDir, secretBox }),
    ).rejects.toThrow(new TlsSetupError('config: api.tls.key_file: cannot read /nonexistent/key.pem: ENOENT'));
    expect(existsSync('/nonexistent/key.pem')).toBe(false);
  });

  it('says what is missing when openssl cannot be run', async () => {
    const dataDir = tempDir('eg-tls-');
    dirs.push(dataDir);
    await expect(
      loadTlsCredentials({
        certFile: null,
        keyFile: null,
        dataDir,
        secretBox: SecretBox.openInDir(dataDir),
        openssl: '/nonexistent/openssl',
      }),
    ).rejects.toThrow(/openssl is not installed/);
  });
});
