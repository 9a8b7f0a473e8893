import { rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SecretBoxError } from '../../src/platform/errors.js';
import { openCameraPassword, SecretBox, sealCameraPassword } from '../../src/platform/secret-box.js';
import { tempDir } from '../support/temp-dir.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const dir = () => {
  const d = tempDir('eg-secret-');
  dirs.push(d);
  return d;
};

describe('SecretBox', () => {
  it('creates a 0600 key once and opens what it sealed, also after reopening', () => {
    const d = dir();
    const box = SecretBox.openInDir(d);
    expect(statSync(path.join(d, 'secret.key')).mode & 0o777).toBe(0o600);
    const sealed = box.seal('camera-password', 'camera:cam-1');
    expect(sealed).not.toContain('camera-password');
    expect(SecretBox.openInDir(d).open(sealed, 'camera:cam-1').toString()).toBe('camera-password');
  });

  it('refuses another label, another key, tampering and garbage', () => {
    const box = SecretBox.openInDir(dir());
    const sealed = box.seal('s3cret', 'a');
    expect(() => box.open(sealed, 'b')).toThrow(SecretBoxError);
    expect(() => SecretBox.openInDir(dir()).open(sealed, 'a')).toThrow(SecretBoxError);
    const parts = sealed.split('.');
    const body = Buffer.from(parts[2] as string, 'base64url');
    body[0] = (body[0] as number) ^ 1;
    expect(() => box.open([parts[0], parts[1], body.toString('base64url'), parts[3]].join('.'), 'a')).toThrow(
      SecretBoxError,
    );
    for (const junk of ['', 'v1', 'v2.a.b.c', 'v1.a.b']) expect(() => box.open(junk, 'a')).toThrow(SecretBoxError);
  });

  it('refuses a key file of the wrong size instead of using it', () => {
    const d = dir();
    writeFileSync(path.join(d, 'secret.key'), 'short');
    expect(() => SecretBox.openInDir(d)).toThrow(/not a 32-byte key/);
  });

  it("opens a camera's sealed password for that camera only; none stays none", () => {
    const box = SecretBox.fromKey(Buffer.alloc(32, 7));
    const passwordSealed = sealCameraPassword(box, 'dev_a', 'front door');
    expect(passwordSealed).not.toContain('front door');
    expect(openCameraPassword(box, { deviceId: 'dev_a', passwordSealed })).toBe('front door');
    // The label is in every stored row: a change would leave the cameras' passwords unopenable.
    expect(box.open(passwordSealed as string, 'camera-password:dev_a').toString('utf8')).toBe('front door');
    expect(() => openCameraPassword(box, { deviceId: 'dev_b', passwordSealed })).toThrow(SecretBoxError);
    expect(sealCameraPassword(box, 'dev_a', null)).toBeNull();
    expect(openCameraPassword(box, { deviceId: 'dev_a', passwordSealed: null })).toBeNull();
  });
});
