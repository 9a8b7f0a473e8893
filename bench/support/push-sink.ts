// A push service for bench/push: HTTPS on 127.0.0.1, answering every POST 201 as a push service
// does, in a process of its own so that the bench's CPU figures are the gateway's side alone. It
// keeps when each push arrived and how large it was (a push with its picture is a few KB, without
// one a few hundred bytes); GET /stats answers them as JSON and forgets them.
// Usage: node push-sink.ts CERT_FILE KEY_FILE. Prints one JSON line {"port": …} once it listens.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';

const [certFile, keyFile] = process.argv.slice(2);
if (!certFile || !keyFile) {
  console.error('usage: node push-sink.ts CERT_FILE KEY_FILE');
  process.exit(2);
}
let arrivals: Array<{ at: number; path: string; bytes: number; topic: string }> = [];
const server = createServer({ cert: readFileSync(certFile), key: readFileSync(keyFile) }, (req, res) => {
  let bytes = 0;
  req.on('data', (c: Buffer) => (bytes += c.length));
  req.on('end', () => {
    if (req.method === 'GET' && req.url === '/stats') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(arrivals));
      arrivals = [];
      return;
    }
    arrivals.push({ at: Date.now(), path: req.url ?? '', bytes, topic: String(req.headers.topic ?? '') });
    res.writeHead(201).end();
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ port: (server.address() as AddressInfo).port })));
process.once('SIGTERM', () => server.close(() => process.exit(0)));
