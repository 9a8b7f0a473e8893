import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import path from 'node:path';
import Value from 'typebox/value';
import { parseDocument } from 'yaml';
import { labelMapProblem } from '../domain/object-classes.js';
import { polygonProblem } from '../domain/polygon.js';
import { readPushHost } from '../domain/push-hosts.js';
import { topicPrefixProblem } from '../domain/topic-names.js';
import { ConfigError } from './errors.js';
import { parseListenAddress } from './listen.js';
import { ConfigSchema, type Config } from './schema.js';

export const CONFIG_ENV = 'EDGE_GATEWAY_CONFIG';

/** Which file to read: --config wins over the environment; neither means defaults only. */
export function configPathFrom(flag: string | undefined, env: NodeJS.ProcessEnv): string | null {
  return flag ?? env[CONFIG_ENV] ?? null;
}

/** Reads, parses and validates a config file (or the defaults when path is null). */
export function loadConfig(file: string | null, cwd = process.cwd()): Config {
  let raw: unknown = {};
  if (file !== null) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      throw new ConfigError('', `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
    }
    raw = parseYaml(text, file);
  }
  const config = validateConfig(raw);
  config.gateway.data_dir = path.resolve(cwd, config.gateway.data_dir);
  return config;
}

function parseYaml(text: string, file: string): unknown {
  const doc = parseDocument(text, { uniqueKeys: true, prettyErrors: true });
  const first = doc.errors[0];
  if (first) {
    // prettyErrors adds "at line L, column C:" and then a context excerpt, which would break the one-line rule.
    const headline = first.message.split('\n')[0]?.replace(/:$/, '') ?? first.code;
    throw new ConfigError('', `${file} is not valid YAML: ${headline}`);
  }
  const value: unknown = doc.toJS();
  return value ?? {};
}

/** Applies defaults and checks every key; throws ConfigError naming the first bad key. */
export function validateConfig(raw: unknown): Config {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new ConfigError('', 'the file must hold a mapping of sections (gateway:, api:, auth: …)');
  }
  const withDefaults = Value.Default(ConfigSchema, structuredClone(raw));
  const errors = Value.Errors(ConfigSchema, withDefaults);
  const first = pickMostUseful(errors);
  if (first) throw describe(first, withDefaults);
  const config = withDefaults as Config;
  checkCrossKeyRules(config);
  return config;
}

interface SchemaError {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message: string;
}

// Union schemas report one error per branch; the "anyOf"/"enum" summary is the useful one.
function pickMostUseful(errors: readonly SchemaError[]): SchemaError | undefined {
  return (
    errors.find((e) => e.keyword === 'additionalProperties') ??
    errors.find((e) => e.keyword === 'anyOf') ??
    errors.find((e) => e.keyword !== 'boolean') ??
    errors[0]
  );
}

function keyOf(instancePath: string): string {
  return instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((acc, part) => (/^\d+$/.test(part) ? `${acc}[${part}]` : acc ? `${acc}.${part}` : part), '');
}

function valueAt(root: unknown, instancePath: string): unknown {
  let node: unknown = root;
  for (const part of instancePath.split('/').slice(1)) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<string, unknown>)[part];
  }
  return node;
}

function describe(err: SchemaError, root: unknown): ConfigError {
  const key = keyOf(err.instancePath);
  const got = JSON.stringify(valueAt(root, err.instancePath)) ?? 'nothing';
  switch (err.keyword) {
    case 'additionalProperties': {
      const extra = (err.params.additionalProperties as string[] | undefined)?.[0] ?? '?';
      return new ConfigError(
        key ? `${key}.${extra}` : extra,
        'unknown key (see config/default.yaml for the keys there are)',
      );
    }
    case 'required':
      return new ConfigError(
        `${key ? `${key}.` : ''}${String((err.params.requiredProperties as string[] | undefined)?.[0] ?? '')}`,
        'is required',
      );
    case 'enum':
      return new ConfigError(key, `must be one of ${(err.params.allowedValues as unknown[]).join(', ')} (got ${got})`);
    case 'anyOf':
      return new ConfigError(key, `must be null or ${branchHint(key)} (got ${got})`);
    default:
      return new ConfigError(key, `${err.message} (got ${got})`);
  }
}

function branchHint(key: string): string {
  if (key === 'gateway.id') return 'a string of 4–64 letters, digits, _ or -';
  if (key.endsWith('max_bytes')) return 'a positive whole number';
  return 'a non-empty string';
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '::1', '[::1]']);

/** True for hosts that never leave this machine, where plain http cannot be intercepted. */
export function isLoopbackHost(hostname: string): boolean {
  if (LOOPBACK_HOSTS.has(hostname)) return true;
  return isIP(hostname) === 4 && hostname.startsWith('127.');
}

function checkCrossKeyRules(config: Config): void {
  const continuous = config.recording.continuous;
  if (continuous.enabled && continuous.storage_dir === null) {
    throw new ConfigError(
      'recording.continuous.storage_dir',
      'is required when recording.continuous.enabled is true: a directory on a second disk (a USB disk, an SSD), never the SD card',
    );
  }
  const tls = config.api.tls;
  if ((tls.cert_file === null) !== (tls.key_file === null)) {
    throw new ConfigError(
      'api.tls',
      'cert_file and key_file must be given together (or both null for a self-signed certificate)',
    );
  }
  if (config.webrtc.udp_port_min > config.webrtc.udp_port_max) {
    throw new ConfigError('webrtc.udp_port_min', 'must not be above webrtc.udp_port_max');
  }
  const seen = new Set<string>();
  config.auth.issuers.forEach((entry, i) => {
    const key = `auth.issuers[${i}]`;
    if (seen.has(entry.issuer)) throw new ConfigError(`${key}.issuer`, `${entry.issuer} is listed twice`);
    seen.add(entry.issuer);
    let url: URL;
    try {
      url = new URL(entry.jwks_uri);
    } catch {
      throw new ConfigError(`${key}.jwks_uri`, `must be an absolute https URL (got ${JSON.stringify(entry.jwks_uri)})`);
    }
    const loopback = isLoopbackHost(url.hostname);
    if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) {
      throw new ConfigError(
        `${key}.jwks_uri`,
        `must use https (http only for loopback addresses), got ${url.protocol}//${url.host}`,
      );
    }
  });
  config.cameras.forEach((cam, i) => {
    try {
      const url = new URL(cam.onvif_url);
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('scheme');
    } catch {
      throw new ConfigError(
        `cameras[${i}].onvif_url`,
        'must be an http(s) URL such as http://192.168.1.20/onvif/device_service',
      );
    }
  });
  checkDetectionRules(config);
  const issuer = config.auth.local.issuer;
  if (issuer !== null) {
    // RFC 8414 §2: an https URL with no query or fragment; clients compare it byte for byte.
    let url: URL | null = null;
    try {
      url = new URL(issuer);
    } catch {
      /* refused below */
    }
    if (
      !url ||
      url.protocol !== 'https:' ||
      url.search !== '' ||
      url.hash !== '' ||
      issuer.includes('?') ||
      issuer.includes('#') ||
      url.username !== '' ||
      url.password !== ''
    ) {
      throw new ConfigError(
        'auth.local.issuer',
        `must be null or an https URL without query or fragment, such as https://192.168.1.20:8443 (got ${JSON.stringify(issuer)})`,
      );
    }
  }
  if (config.api.public_host !== null && !/^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])$/.test(config.api.public_host)) {
    throw new ConfigError(
      'api.public_host',
      `must be null or a host name or address, without scheme or port (got ${JSON.stringify(config.api.public_host)})`,
    );
  }
  if (config.sync.mqtt.url !== null && !/^mqtts?:\/\/[^\s]+$/.test(config.sync.mqtt.url)) {
    throw new ConfigError('sync.mqtt.url', 'must be null or an mqtt:// or mqtts:// URL');
  }
  if (config.sync.mqtt.url !== null) {
    // The whole topic tree hangs under it (src/sync/topics.ts); the gateway id, the level after it,
    // is valid by gateway.id's own pattern or generated so.
    const prefix = config.sync.mqtt.topic_prefix;
    const problem = topicPrefixProblem(prefix);
    if (problem) throw new ConfigError('sync.mqtt.topic_prefix', `${problem} (got ${JSON.stringify(prefix)})`);
  }
  config.notifications.push_hosts.forEach((entry, i) => {
    const read = readPushHost(entry);
    if ('problem' in read)
      throw new ConfigError(`notifications.push_hosts[${i}]`, `${read.problem} (got ${JSON.stringify(entry)})`);
  });
  if (config.metrics.listen !== null) {
    try {
      parseListenAddress(config.metrics.listen);
    } catch (err) {
      throw new ConfigError('metrics.listen', `${(err as Error).message}; or null for no metrics listener`);
    }
  }
}

/** Masks and zones must be real polygons, required zones must exist, labels must be model classes. */
function checkDetectionRules(config: Config): void {
  const labels = labelMapProblem(config.detection.labels);
  if (labels) throw new ConfigError(`detection.labels.${labels[0]}`, labels[1]);
  config.cameras.forEach((cam, i) => {
    const key = `cameras[${i}]`;
    (cam.motion_mask ?? []).forEach((polygon, j) => {
      const problem = polygonProblem(polygon);
      if (problem) throw new ConfigError(`${key}.motion_mask[${j}]`, `is not a valid polygon: ${problem}`);
    });
    const zones = cam.zones ?? {};
    for (const [name, polygon] of Object.entries(zones)) {
      const problem = polygonProblem(polygon);
      if (problem) throw new ConfigError(`${key}.zones.${name}`, `is not a valid polygon: ${problem}`);
    }
    const noZone = (name: string) =>
      `names no zone of this camera (${JSON.stringify(name)}; zones: ${Object.keys(zones).join(', ') || 'none'})`;
    (cam.required_zones ?? []).forEach((name, j) => {
      if (!(name in zones)) throw new ConfigError(`${key}.required_zones[${j}]`, noZone(name));
    });
    (cam.alert_on_stationary_zones ?? []).forEach((name, j) => {
      if (!(name in zones)) throw new ConfigError(`${key}.alert_on_stationary_zones[${j}]`, noZone(name));
    });
    for (const name of Object.keys(cam.loitering_zones ?? {}))
      if (!(name in zones)) throw new ConfigError(`${key}.loitering_zones.${name}`, noZone(name));
  });
}
