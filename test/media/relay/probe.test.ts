import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { relayAddressCheck } from '../../../src/media/relay/probe.js';

// Which addresses a plain RTSP camera may not have: the relay's own, by any name of this box.
// (probeCameraStream, against cameras that log in, is in upstream-auth.test.ts.)

const config = { rtsp: { host: '0.0.0.0', public_host: 'gw.example' }, api: { public_host: 'box.lan' } };
const addresses = () => ['127.0.0.1', '::1', '192.168.1.2', 'fe80::2'];
const isRelay = relayAddressCheck(config, 8554, addresses);

describe('relayAddressCheck', () => {
  it.each([
    ['127.0.0.1', 8554],
    ['127.8.9.10', 8554],
    ['0.0.0.0', 8554],
    ['::1', 8554],
    ['[::1]', 8554],
    ['::', 8554],
    ['::ffff:7f00:1', 8554],
    ['localhost', 8554],
    ['LOCALHOST', 8554],
    ['192.168.1.2', 8554],
    ['fe80::2', 8554],
    ['gw.example', 8554],
    ['box.lan', 8554],
    [os.hostname(), 8554],
    [`${os.hostname()}.local`, 8554],
  ])('%s:%i is the relay', (host, port) => {
    expect(isRelay(host, port)).toBe(true);
  });

  it.each([
    ['127.0.0.1', 554],
    ['192.168.1.2', 8555],
    ['192.168.1.3', 8554],
    ['cam.lan', 8554],
    ['fe80::3', 8554],
  ])('%s:%i is not', (host, port) => {
    expect(isRelay(host, port)).toBe(false);
  });
});
