import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/errors.js';
import { validateConfig } from '../../src/config/load.js';
import { readMqttCredentials } from '../../src/config/mqtt-credentials.js';
import { openConfigSecret, SecretBox, sealConfigSecret } from '../../src/platform/secret-box.js';
import { tempDir } from '../support/temp-dir.js';

const mqttConfig = (mqtt: Record<string, unknown>) =>
  validateConfig({ sync: { mqtt: { url: 'mqtts://broker:8883', ...mqtt } } }).sync.mqtt;

function refusal(run: () => unknown): ConfigError {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  return expect.unreachable('accepted');
}

describe('readMqttCredentials', () => {
  it('reads the TLS files named and opens a sealed password', () => {
    const dir = tempDir();
    const box = SecretBox.openInDir(dir);
    writeFileSync(path.join(dir, 'ca.pem'), 'CA');
    writeFileSync(path.join(dir, 'key.pem'), 'KEY');
    const m = mqttConfig({
      ca_file: path.join(dir, 'ca.pem'),
      key_file: path.join(dir, 'key.pem'),
      password: sealConfigSecret(box, 's3cret'),
    });
    const read = readMqttCredentials(m, (value) => openConfigSecret(box, value));
    expect(read.password).toBe('s3cret');
    expect(Object.keys(read.tls)).toEqual(['ca', 'key']);
    expect(read.tls.ca?.toString()).toBe('CA');
    expect(read.tls.key?.toString()).toBe('KEY');
  });

  it('passes a plain password as it is, and gives no TLS and no password when none is configured', () => {
    const box = SecretBox.openInDir(tempDir());
    expect(readMqttCredentials(mqttConfig({ password: 'plain' }), (value) => openConfigSecret(box, value))).toEqual({
      tls: {},
      password: 'plain',
    });
    expect(readMqttCredentials(mqttConfig({}), () => expect.unreachable('nothing to open'))).toEqual({
      tls: {},
      password: null,
    });
  });

  it.each(['ca_file', 'cert_file', 'key_file'] as const)('names sync.mqtt.%s when its file cannot be read', (key) => {
    const err = refusal(() => readMqttCredentials(mqttConfig({ [key]: '/nonexistent/file.pem' }), (value) => value));
    expect(err.key).toBe(`sync.mqtt.${key}`);
    expect(err.message).toMatch(
      new RegExp(`^config: sync\\.mqtt\\.${key}: cannot read /nonexistent/file\\.pem: ENOENT`),
    );
  });

  it('names sync.mqtt.password when a sealed password does not open with this data_dir key', () => {
    const sealed = sealConfigSecret(SecretBox.openInDir(tempDir()), 's3cret');
    const other = SecretBox.openInDir(tempDir());
    const err = refusal(() =>
      readMqttCredentials(mqttConfig({ password: sealed }), (value) => openConfigSecret(other, value)),
    );
    expect(err.key).toBe('sync.mqtt.password');
    expect(err.message).toMatch(/^config: sync\.mqtt\.password: .+ \(seal it again with: edge-gateway seal\)$/);
    expect(err.message.split('\n')).toHaveLength(1);
  });
});
