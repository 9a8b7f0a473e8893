// The yardstick for bench/api: a bare Fastify HTTPS server from the same node_modules, answering
// GET PATH with the very bytes (and Content-Type) the gateway answered, with no auth, no store, no
// serialisation, no logger and no hooks. Run as its own process, like the gateway, so each has a
// core's worth of scheduling and its own CPU figures in /proc.
// The body is sent as a string (the goal's yardstick), or with BODY_AS=bytes as
// a Buffer, which is what the gateway sends and costs less per request (no encoding on each send).
// Usage: node bare-https-server.ts CERT_FILE KEY_FILE BODY_FILE PATH CONTENT_TYPE
// Prints one JSON line {"url": …} once it listens on 127.0.0.1.
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';

const [certFile, keyFile, bodyFile, route, contentType] = process.argv.slice(2);
if (!certFile || !keyFile || !bodyFile || !route || !contentType) {
  console.error('usage: node bare-https-server.ts CERT_FILE KEY_FILE BODY_FILE PATH CONTENT_TYPE');
  process.exit(2);
}
const body = process.env.BODY_AS === 'bytes' ? readFileSync(bodyFile) : readFileSync(bodyFile, 'utf8');
const app = Fastify({ https: { cert: readFileSync(certFile), key: readFileSync(keyFile), minVersion: 'TLSv1.2' } });
app.get(route, async (_request, reply) => reply.type(contentType).send(body));
await app.listen({ host: '127.0.0.1', port: 0 });
const { port } = app.server.address() as AddressInfo;
console.log(JSON.stringify({ url: `https://127.0.0.1:${port}` }));
process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
