// Benchmark: the local authorization server and what it costs the API.
// 1. GET /v1/devices with a token from `edge-gateway token` (no grant: the revocation lookup finds
//    nothing) against the same call with a token from /oauth/token (its grant is looked up on every
//    request): the revocation check's price on the API's hot path, as a ratio within one run.
// 2. POST /oauth/token (client_credentials): tokens minted per second and server CPU per token
//    (ES256 signature, two SQLite inserts in one transaction).
// The gateway runs as its own process; autocannon over HTTPS on loopback.
// Env: BENCH_SECONDS (per slice, default 5), BENCH_ROUNDS (default 3), BENCH_CONNECTIONS (default 20).
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Type from 'typebox';
import { Store } from '../dist/store/store.js';
import {
  httpsText,
  measure,
  startGatewayProcess,
  summarize,
  type Measured,
  type Target,
} from './support/gateway-process.ts';
import { parseAs } from './support/json.ts';

const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 20);

const dir = mkdtempSync(path.join(os.tmpdir(), 'eg-bench-oauth-'));
const dataDir = path.join(dir, 'data');
const configFile = path.join(dir, 'config.yaml');
writeFileSync(
  configFile,
  `gateway:\n  data_dir: ${dataDir}\napi:\n  host: 127.0.0.1\n  port: 0\nonvif:\n  discovery:\n    enabled: false\nrtsp:\n  host: 127.0.0.1\n  port: 0\n  udp_port: 0\nlog:\n  level: info\n`,
);

const secret = randomBytes(32).toString('base64url');
const store = Store.open(dataDir);
store.insertOAuthClient({
  id: 'cli_bench',
  name: 'bench',
  secretHash: createHash('sha256').update(secret).digest('hex'),
  redirectUris: ['https://app.example/cb'],
  grantTypes: ['client_credentials'],
  createdAt: Date.now(),
});
for (let i = 0; i < 10; i++) {
  store.upsertDevice({
    id: `cam-${i}`,
    name: `Camera ${i}`,
    type: 'camera',
    status: 'online',
    model: 'IPC',
    manufacturer: 'X',
    firmwareVersion: '1',
    lastSeenAt: Date.now(),
    createdAt: Date.now() + i,
  });
}
store.close();

const gateway = await startGatewayProcess(configFile);
const { pid, apiUrl } = gateway;
const tokenBody = new URLSearchParams({
  grant_type: 'client_credentials',
  client_id: 'cli_bench',
  client_secret: secret,
  scope: 'devices:read',
}).toString();
const form = { 'content-type': 'application/x-www-form-urlencoded' };

/** One token, over HTTPS trusting the gateway's own certificate. */
async function fetchToken(): Promise<string> {
  const res = await httpsText(
    `${apiUrl}/oauth/token`,
    { method: 'POST', headers: form, ca: readFileSync(path.join(dataDir, 'tls/cert.pem')), servername: 'localhost' },
    tokenBody,
  );
  if (res.status !== 200) throw new Error(`token request: ${res.status} ${res.body}`);
  return parseAs(Type.Object({ access_token: Type.String() }), res.body, 'POST /oauth/token').access_token;
}
const minted = await fetchToken();
const cliToken = gateway.token('devices:read');

type Name = 'cliToken' | 'oauthToken' | 'tokenEndpoint';
const targets: Record<Name, Target> = {
  cliToken: { url: `${apiUrl}/v1/devices`, headers: { authorization: `Bearer ${cliToken}` } },
  oauthToken: { url: `${apiUrl}/v1/devices`, headers: { authorization: `Bearer ${minted}` } },
  tokenEndpoint: { url: `${apiUrl}/oauth/token`, method: 'POST', headers: form, body: tokenBody },
};

const slice = (name: Name, duration: number) => measure(pid, name, targets[name], { connections, duration });

const names: Name[] = ['cliToken', 'oauthToken', 'tokenEndpoint'];
for (const name of names) await slice(name, 2); // warm-up
const results: Record<Name, Measured[]> = { cliToken: [], oauthToken: [], tokenEndpoint: [] };
for (let i = 0; i < rounds; i++) {
  for (const name of i % 2 ? names.toReversed() : names) results[name].push(await slice(name, seconds));
}
await gateway.stop();
rmSync(dir, { recursive: true, force: true });

const c = summarize(results.cliToken);
const o = summarize(results.oauthToken);
const t = summarize(results.tokenEndpoint);
const ratio = Number((o.rps / c.rps).toFixed(3));
const cpuRatio = Number((o.server_cpu_us_per_req / c.server_cpu_us_per_req).toFixed(3));

console.log(
  `\nbench oauth: ${connections} connections, ${rounds} rounds × ${seconds}s per target, HTTPS on loopback, node ${process.version}, ${os.cpus().length} cores\n`,
);
const row = (name: string, r: ReturnType<typeof summarize>) =>
  `| ${name.padEnd(44)} | ${String(r.rps).padStart(6)} | ${String(r.p50_ms).padStart(6)} | ${String(r.p99_ms).padStart(6)} | ${String(r.server_cpu_us_per_req).padStart(17)} |`;
console.log('| target                                       | req/s  | p50 ms | p99 ms | server µs CPU/req |');
console.log('|----------------------------------------------|--------|--------|--------|-------------------|');
console.log(row('GET /v1/devices, token from the CLI', c));
console.log(row('GET /v1/devices, token from /oauth/token', o));
console.log(row('POST /oauth/token (client_credentials)', t));
console.log(
  `\nrevocation check: oauth-token/cli-token req/s ${ratio} (goal >= 0.9), server CPU per request ×${cpuRatio}; tokens minted ${t.rps}/s\n`,
);
console.log(
  JSON.stringify({
    bench: 'oauth',
    connections,
    seconds,
    rounds,
    cli_token: c,
    oauth_token: o,
    token_endpoint: t,
    ratio,
    cpu_ratio: cpuRatio,
    goal_ratio_met: ratio >= 0.9,
  }),
);
