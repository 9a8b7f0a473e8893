import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { BaseLogger } from 'pino';
import type { Registry } from 'prom-client';
import type { ListenAddress } from '../config/listen.js';

// GET /metrics on a plain-HTTP listener of its own (metrics.listen, loopback by default), as
// MediaMTX and node_exporter do: what the metrics tell (live viewers, failed logins, versions)
// stays off the LAN-facing API, and a scraper needs no token. Nothing else is served here.

export interface MetricsServer {
  /** http://host:port/metrics */
  readonly url: string;
  close(): Promise<void>;
}

// Prometheus needs one connection; a few more for a curl by hand. Past that a client waits.
const MAX_CONNECTIONS = 8;
const REQUEST_TIMEOUT_MS = 10_000;

export async function startMetricsServer(listen: ListenAddress, registry: Registry): Promise<MetricsServer> {
  const server = createServer(
    { requestTimeout: REQUEST_TIMEOUT_MS, headersTimeout: REQUEST_TIMEOUT_MS },
    (req, res) => void answer(req, res, registry),
  );
  server.maxConnections = MAX_CONNECTIONS;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen.port, listen.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return {
    url: `http://${host}:${addr.port}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function answer(req: IncomingMessage, res: ServerResponse, registry: Registry): Promise<void> {
  const path = (req.url ?? '').split('?')[0];
  if (path !== '/metrics') return send(res, 404, 'not found: only /metrics is served here\n');
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.setHeader('allow', 'GET, HEAD');
    return send(res, 405, 'GET or HEAD only\n');
  }
  let text: string;
  try {
    text = await registry.metrics();
  } catch (err) {
    return send(res, 500, `metrics could not be collected: ${(err as Error).message}\n`);
  }
  res.writeHead(200, { 'content-type': registry.contentType, 'content-length': Buffer.byteLength(text) });
  res.end(req.method === 'HEAD' ? undefined : text);
}

function send(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/**
 * The metrics listener. A port already taken (another exporter on the box) does not stop the
 * gateway: cameras and recording matter more than their figures, and the error line names the key.
 */
export async function openMetricsListener(
  listen: ListenAddress,
  registry: Registry,
  log: BaseLogger,
): Promise<MetricsServer | null> {
  try {
    return await startMetricsServer(listen, registry);
  } catch (err) {
    log.error(
      { err: (err as Error).message, listen: `${listen.host}:${listen.port}` },
      'metrics listener not started (metrics.listen): /metrics is unavailable',
    );
    return null;
  }
}
