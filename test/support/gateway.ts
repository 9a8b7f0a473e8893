import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { pino } from 'pino';
import { validateConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';
import { startGateway, type Gateway } from '../../src/main.js';
import { makeClient, type Client } from './https.js';
import { tempDir } from './temp-dir.js';

export interface TestGateway {
  gw: Gateway;
  config: Config;
  dataDir: string;
  request: Client;
  /** The text of GET /metrics from the metrics listener (plain HTTP on loopback). */
  metrics(): Promise<string>;
  /** A token from the gateway's own local issuer. */
  token(scope: string): Promise<string>;
  auth(scope: string): Promise<{ authorization: string }>;
  stop(): Promise<void>;
}

/** The built worker (the test setup builds dist/): the gateway runs from source here, the worker cannot. */
const DETECTOR_WORKER = new URL('../../dist/detect/worker.js', import.meta.url);

/** Starts the real gateway (HTTPS on a free loopback port, SQLite in a temp dir). */
export async function startTestGateway(
  raw: Record<string, unknown> = {},
  opts: {
    dataDir?: string;
    keepDataDir?: boolean;
    /** Every log line at debug level and above is pushed here. */
    logLines?: string[];
    /** The local authorization server's clock (ms). */
    oauthClock?: () => number;
  } = {},
): Promise<TestGateway> {
  const dataDir = opts.dataDir ?? tempDir();
  const section = (name: string) => (raw[name] ?? {}) as Record<string, unknown>;
  const config = validateConfig({
    ...raw,
    gateway: { data_dir: dataDir, ...section('gateway') },
    api: { host: '127.0.0.1', port: 0, ...section('api') },
    rtsp: { host: '127.0.0.1', port: 0, udp_port: 0, public_host: '127.0.0.1', ...section('rtsp') },
    // A free port per gateway: tests start many at once.
    metrics: { listen: '127.0.0.1:0', ...section('metrics') },
    recording: { segment_dir: path.join(dataDir, 'segments'), ...section('recording') },
    // Tests never probe real interfaces: discovery is off unless a test turns it on (over loopback).
    onvif: { ...section('onvif'), discovery: { enabled: false, ...(section('onvif').discovery ?? {}) } },
    // The object detector (a model per gateway, ~140 MB and seconds of CPU) only where a test asks for it.
    detection: { mode: 'off', ...section('detection') },
    log: { level: process.env.TEST_LOG_LEVEL ?? 'silent' },
  });
  const lines = opts.logLines;
  const logger = lines
    ? pino({ level: 'debug' }, { write: (line: string) => void lines.push(line) })
    : pino({ level: config.log.level });
  const gw = await startGateway(config, {
    logger,
    env: {},
    detectorWorkerUrl: DETECTOR_WORKER,
    ...(opts.oauthClock ? { oauthClock: opts.oauthClock } : {}),
  });
  const request = makeClient(gw.apiUrl, readFileSync(gw.certFile));
  const token = async (scope: string) => {
    if (!gw.localIssuer) throw new Error('local issuer disabled');
    return gw.localIssuer.issue({ subject: 'tester', scope, ttlS: 600 });
  };
  return {
    gw,
    config,
    dataDir,
    request,
    metrics: async () => {
      if (!gw.metricsUrl) throw new Error('the gateway has no metrics listener');
      const res = await fetch(gw.metricsUrl);
      if (res.status !== 200) throw new Error(`GET ${gw.metricsUrl}: ${res.status}`);
      return res.text();
    },
    token,
    auth: async (scope) => ({ authorization: `Bearer ${await token(scope)}` }),
    stop: async () => {
      await gw.stop();
      if (!opts.keepDataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Device ids by name once every one of `names` is online (for beforeAll, where expect.poll does not
 * belong); throws after ~60 s.
 */
export async function onlineDevicesByName(t: TestGateway, names: readonly string[]): Promise<Record<string, string>> {
  const headers = await t.auth('devices:read');
  for (let i = 0; i < 240; i++) {
    const { data } = (await t.request('/v1/devices', { headers })).json() as {
      data: Array<{ id: string; name: string; status: string }>;
    };
    const found = Object.fromEntries(data.filter((d) => d.status === 'online').map((d) => [d.name, d.id]));
    if (names.every((n) => n in found)) return found;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`the simulated cameras ${names.join(', ')} were not all adopted`);
}

/**
 * The id of the first device to come online (adoption takes a few hundred ms), for beforeAll hooks
 * where expect.poll does not belong. Throws after ~15 s.
 */
export async function firstOnlineDevice(t: TestGateway): Promise<string> {
  const headers = await t.auth('devices:read');
  for (let i = 0; i < 150; i++) {
    const { data } = (await t.request('/v1/devices', { headers })).json() as {
      data: Array<{ id: string; status: string }>;
    };
    const online = data.find((d) => d.status === 'online');
    if (online) return online.id;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the simulated camera was not adopted');
}
