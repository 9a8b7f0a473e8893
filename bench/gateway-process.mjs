// Shared by the benchmarks: the gateway as its own process (as in production), started from the
// built CLI with a config file, plus a token from its local issuer.
import { execFileSync, spawn } from 'node:child_process';
import path from 'node:path';

const cli = path.resolve(import.meta.dirname, '../dist/cli.js');

/** Starts `edge-gateway start --config FILE`; resolves once it logged that it started. */
export async function startGatewayProcess(configFile) {
  const child = spawn(process.execPath, [cli, 'start', '--config', configFile], { stdio: ['ignore', 'pipe', 'inherit'] });
  // A benchmark that fails half-way must not leave a gateway running.
  process.once('exit', () => child.kill('SIGTERM'));
  const apiUrl = await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const line = out.split('\n').find((l) => l.includes('"edge gateway started"'));
      if (line) resolve(JSON.parse(line).apiUrl);
    });
    child.on('exit', (code) => reject(new Error(`gateway exited ${code}`)));
  });
  const token = (scope) => execFileSync(process.execPath, [cli, 'token', '--config', configFile, '--scope', scope], { encoding: 'utf8' }).trim();
  const stop = async () => {
    child.kill('SIGTERM');
    await new Promise((r) => (child.exitCode !== null ? r() : child.on('exit', r)));
  };
  return { child, apiUrl, token, stop };
}
