import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { CameraRecord } from '../domain/types.js';
import { createOnce } from './durable-files.js';
import { SecretBoxError } from './errors.js';

const KEY_FILE = 'secret.key';
const KEY_BYTES = 32;
const IV_BYTES = 12;
const FORMAT = 'v1';

/**
 * Encrypts secrets at rest (camera passwords, signing keys, refresh tokens) with AES-256-GCM under
 * one key file in data_dir. The label is bound as associated data, so a sealed value copied into
 * another column or file does not open there.
 */
export class SecretBox {
  private constructor(private readonly key: Buffer) {}

  /** Loads data_dir/secret.key, creating it 0600 on first use. */
  static openInDir(dataDir: string): SecretBox {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    const file = path.join(dataDir, KEY_FILE);
    return new SecretBox(readOrCreateKey(file));
  }

  static fromKey(key: Buffer): SecretBox {
    if (key.length !== KEY_BYTES) throw new SecretBoxError(`key must be ${KEY_BYTES} bytes`);
    return new SecretBox(Buffer.from(key));
  }

  seal(plain: string | Buffer, label: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(label, 'utf8'));
    const body = Buffer.concat([cipher.update(plain), cipher.final()]);
    return [
      FORMAT,
      iv.toString('base64url'),
      body.toString('base64url'),
      cipher.getAuthTag().toString('base64url'),
    ].join('.');
  }

  open(sealed: string, label: string): Buffer {
    const parts = sealed.split('.');
    if (parts.length !== 4 || parts[0] !== FORMAT) throw new SecretBoxError('not a sealed secret');
    const [, iv, body, tag] = parts as [string, string, string, string];
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
      decipher.setAAD(Buffer.from(label, 'utf8'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]);
    } catch {
      throw new SecretBoxError(`sealed secret "${label}" does not open with this data_dir's key`);
    }
  }
}

function readOrCreateKey(file: string): Buffer {
  const key = createOnce(file, () => randomBytes(KEY_BYTES));
  if (key.length !== KEY_BYTES)
    throw new SecretBoxError(`${file} is not a ${KEY_BYTES}-byte key; move it away to start over`);
  return key;
}

const CONFIG_SECRET_PREFIX = 'sealed:';
const CONFIG_SECRET_LABEL = 'config-secret';

/** A secret for the config file (`edge-gateway seal`): only this data_dir's key opens it. */
export function sealConfigSecret(box: SecretBox, secret: string): string {
  return `${CONFIG_SECRET_PREFIX}${box.seal(secret, CONFIG_SECRET_LABEL)}`;
}

/** A secret from the config: written as is, or `sealed:…` (opened here; SecretBoxError if it does not). */
export function openConfigSecret(box: SecretBox, value: string): string {
  return value.startsWith(CONFIG_SECRET_PREFIX)
    ? box.open(value.slice(CONFIG_SECRET_PREFIX.length), CONFIG_SECRET_LABEL).toString('utf8')
    : value;
}

/** A camera's password is sealed under a label of its own device, so one camera's does not open as another's. */
const cameraPasswordLabel = (deviceId: string) => `camera-password:${deviceId}`;

/** A camera's password as CameraRecord.passwordSealed keeps it; null for none. */
export function sealCameraPassword(box: SecretBox, deviceId: string, password: string | null): string | null {
  return password ? box.seal(password, cameraPasswordLabel(deviceId)) : null;
}

/** The password of a camera's stored record; null when it has none (SecretBoxError if it does not open). */
export function openCameraPassword(
  box: SecretBox,
  camera: Pick<CameraRecord, 'deviceId' | 'passwordSealed'>,
): string | null {
  return camera.passwordSealed
    ? box.open(camera.passwordSealed, cameraPasswordLabel(camera.deviceId)).toString('utf8')
    : null;
}
