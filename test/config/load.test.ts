import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/errors.js';
import { parseListenAddress } from '../../src/config/listen.js';
import { isLoopbackHost, loadConfig, validateConfig } from '../../src/config/load.js';

const DEFAULT_YAML = path.resolve(import.meta.dirname, '../../config/default.yaml');

describe('config', () => {
  it('config/default.yaml holds exactly the schema defaults, and every key in it has a comment', () => {
    const fromFile = loadConfig(DEFAULT_YAML, '/srv');
    const defaults = validateConfig({});
    defaults.gateway.data_dir = '/srv/data';
    expect(fromFile).toEqual(defaults);
    const lines = readFileSync(DEFAULT_YAML, 'utf8').split('\n');
    const isValueKey = (l: string | undefined) => l !== undefined && /^\s*[a-z_]+:\s*\S/.test(l);
    lines.forEach((line, i) => {
      if (!isValueKey(line)) return;
      // Keys described together (host/port, cert_file/key_file) share the comment block above them.
      let above = i - 1;
      while (isValueKey(lines[above])) above--;
      expect(lines[above], `comment above "${line.trim()}"`).toMatch(/^\s*#/);
    });
  });

  it('has the contract defaults', () => {
    const c = validateConfig({});
    expect(c.api.port).toBe(8443);
    expect(c.rtsp.port).toBe(8554);
    expect(c.rtsp.ticket_ttl_s).toBe(300);
    expect(c.auth.clock_tolerance_s).toBe(30);
    expect(c.auth.require_at_jwt).toBe(true);
    expect(c.auth.jwks_max_stale_s).toBe(7 * 24 * 3600);
    expect(c.auth.local.enabled).toBe(true);
    expect(c.gateway.id).toBeNull();
    expect(c.api.tls).toEqual({ cert_file: null, key_file: null });
  });

  it('accepts every contract key', () => {
    const c = validateConfig({
      gateway: { data_dir: '/var/lib/eg', id: 'gw-1' },
      api: { host: '::', port: 9443, tls: { cert_file: '/c.pem', key_file: '/k.pem' } },
      auth: {
        issuers: [{ issuer: 'https://auth/', jwks_uri: 'https://auth/jwks', audience: 'gw' }],
        local: { enabled: false, refresh_ttl_s: 60 },
        clock_tolerance_s: 0,
      },
      rtsp: { host: '0.0.0.0', port: 8554, public_host: 'nvr.lan', ticket_ttl_s: 60 },
      cameras: [
        { name: 'Door', onvif_url: 'http://192.0.2.10/onvif/device_service', username: 'admin', password: 'pw' },
      ],
      onvif: {
        discovery: { enabled: false, interval_s: 60, interfaces: ['lo'], unicast_targets: ['192.0.2.11'] },
        credentials: [{ username: 'a', password: 'b' }],
      },
      recording: {
        pre_roll_s: 3,
        post_roll_s: 5,
        max_clip_s: 120,
        retention: { max_age_days: 7, max_bytes: 1e9, min_free_bytes: 0 },
      },
      sync: { mqtt: { url: 'mqtts://broker:8883', topic_prefix: 'home' } },
      ffmpeg: { path: '/usr/bin/ffmpeg' },
      log: { level: 'debug' },
    });
    expect(c.cameras[0]?.username).toBe('admin');
  });

  it.each<[unknown, string]>([
    [{ api: { port: '8443' } }, 'api.port'],
    [{ api: { port: -1 } }, 'api.port'],
    [{ rtsp: { ticket_ttl_s: 1.5 } }, 'rtsp.ticket_ttl_s'],
    [{ cameras: [{ name: 'x' }] }, 'cameras[0].onvif_url'],
    [{ cameras: [{ name: 'x', onvif_url: 'ftp://cam' }] }, 'cameras[0].onvif_url'],
    [{ cameras: [{ name: 'x', onvif_url: 'http://c', colour: 1 }] }, 'cameras[0].colour'],
    [
      {
        auth: {
          issuers: [
            { issuer: 'a', jwks_uri: 'https://a/j', audience: 'x' },
            { issuer: 'a', jwks_uri: 'https://a/j', audience: 'x' },
          ],
        },
      },
      'auth.issuers[1].issuer',
    ],
    [{ auth: { issuers: [{ issuer: 'a', jwks_uri: 'not a url', audience: 'x' }] } }, 'auth.issuers[0].jwks_uri'],
    [{ sync: { mqtt: { url: 'http://broker' } } }, 'sync.mqtt.url'],
    [{ auth: { local: { issuer: 'urn:edge-gateway:x' } } }, 'auth.local.issuer'],
    [{ auth: { local: { issuer: 'http://192.168.1.20:8443' } } }, 'auth.local.issuer'],
    [{ auth: { local: { issuer: 'https://192.168.1.20:8443/?x=1' } } }, 'auth.local.issuer'],
    [{ auth: { local: { issuer: 'https://192.168.1.20:8443#f' } } }, 'auth.local.issuer'],
    [{ auth: { local: { issuer: 'https://u:p@192.168.1.20' } } }, 'auth.local.issuer'],
    [{ auth: { local: { key_rotation_days: 0 } } }, 'auth.local.key_rotation_days'],
    [{ api: { public_host: 'https://nvr.lan' } }, 'api.public_host'],
    [{ api: { public_host: 'nvr.lan:8443' } }, 'api.public_host'],
    [{ sync: { mqtt: { topic_prefix: 'a/#' } } }, 'sync.mqtt.topic_prefix'],
    [{ sync: { mqtt: { url: 'mqtt://broker', topic_prefix: '$SYS' } } }, 'sync.mqtt.topic_prefix'],
    [{ sync: { mqtt: { url: 'mqtt://broker', topic_prefix: 'site//gw' } } }, 'sync.mqtt.topic_prefix'],
    [{ sync: { mqtt: { url: 'mqtt://broker', topic_prefix: 'site/\u0007' } } }, 'sync.mqtt.topic_prefix'],
    [{ recording: { retention: { max_bytes: 0 } } }, 'recording.retention.max_bytes'],
    [{ onvif: { discovery: { interfaces: 'eth0' } } }, 'onvif.discovery.interfaces'],
    [{ gateway: 5 }, 'gateway'],
    [{ metrics: { listen: '9464' } }, 'metrics.listen'],
    [{ metrics: { listen: 'prometheus.lan:9464' } }, 'metrics.listen'],
    [{ metrics: { listen: '::1:9464' } }, 'metrics.listen'],
    [{ metrics: { listen: '[127.0.0.1]:9464' } }, 'metrics.listen'],
    [{ metrics: { listen: '127.0.0.1:65536' } }, 'metrics.listen'],
    [{ metrics: { listen: 'http://127.0.0.1:9464' } }, 'metrics.listen'],
    [{ metrics: { listen: false } }, 'metrics.listen'],
    [{ notifications: { push_hosts: ['https://fcm.googleapis.com'] } }, 'notifications.push_hosts[0]'],
    [{ notifications: { push_hosts: ['push.lan', '*.com'] } }, 'notifications.push_hosts[1]'],
    [{ notifications: { push_hosts: 'fcm.googleapis.com' } }, 'notifications.push_hosts'],
    [{ notifications: { vapid_subject: 'owner@example.org' } }, 'notifications.vapid_subject'],
    [{ notifications: { ttl_s: 0 } }, 'notifications.ttl_s'],
    [[], ''],
    ['text', ''],
  ])('names the key in %j', (raw, key) => {
    try {
      validateConfig(raw);
      expect.unreachable('accepted');
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).key).toBe(key);
      expect((err as Error).message.split('\n')).toHaveLength(1);
    }
  });

  it('allows plain http JWKS only on loopback', () => {
    expect(isLoopbackHost('127.0.0.1')).toBe(true);
    expect(isLoopbackHost('127.8.9.10')).toBe(true);
    expect(isLoopbackHost('[::1]')).toBe(true);
    expect(isLoopbackHost('localhost')).toBe(true);
    expect(isLoopbackHost('192.168.1.1')).toBe(false);
    expect(isLoopbackHost('127.0.0.1.evil.com')).toBe(false);
    const issuer = (jwks_uri: string) => ({ auth: { issuers: [{ issuer: 'i', jwks_uri, audience: 'a' }] } });
    expect(() => validateConfig(issuer('http://127.0.0.1:9000/jwks'))).not.toThrow();
    expect(
      validateConfig({ auth: { local: { issuer: 'https://nvr.lan:8443' } }, api: { public_host: '[fd00::5]' } }).auth
        .local.issuer,
    ).toBe('https://nvr.lan:8443');
    expect(() => validateConfig(issuer('http://[::1]:9000/jwks'))).not.toThrow();
    expect(() => validateConfig(issuer('http://10.0.0.1/jwks'))).toThrow(ConfigError);
  });

  it('metrics.listen: loopback by default, host:port the owner sets (any address, [IPv6]), or null for none', () => {
    expect(validateConfig({}).metrics.listen).toBe('127.0.0.1:9464');
    for (const listen of ['[::1]:9464', 'localhost:0', '0.0.0.0:9100', '192.168.1.20:9464', null]) {
      expect(validateConfig({ metrics: { listen } }).metrics.listen).toBe(listen);
    }
    expect(parseListenAddress('[::1]:9464')).toEqual({ host: '::1', port: 9464 });
    expect(parseListenAddress('127.0.0.1:0')).toEqual({ host: '127.0.0.1', port: 0 });
  });
});
