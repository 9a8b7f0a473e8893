import { request as httpsRequest } from 'node:https';
import type { OutgoingHttpHeaders, IncomingHttpHeaders } from 'node:http';

export interface Response {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  text: string;
  json: () => unknown;
}

export interface RequestOptions {
  method?: string;
  headers?: OutgoingHttpHeaders;
  /** Sent as is; objects are JSON-encoded with Content-Type application/json. */
  body?: string | Buffer | object;
}

/** A real HTTPS request that trusts only the gateway's certificate. */
export function makeClient(baseUrl: string, ca: Buffer) {
  return (path: string, opts: RequestOptions = {}): Promise<Response> =>
    new Promise((resolve, reject) => {
      const headers: OutgoingHttpHeaders = { ...opts.headers };
      let body: Buffer | undefined;
      if (opts.body !== undefined) {
        if (typeof opts.body === 'string' || Buffer.isBuffer(opts.body)) body = Buffer.from(opts.body);
        else {
          body = Buffer.from(JSON.stringify(opts.body));
          headers['content-type'] ??= 'application/json';
        }
      }
      const req = httpsRequest(
        new URL(path, baseUrl),
        { method: opts.method ?? 'GET', headers, ca, servername: 'localhost' },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const buf = Buffer.concat(chunks);
            const text = buf.toString('utf8');
            resolve({
              status: res.statusCode ?? 0,
              headers: res.headers,
              body: buf,
              text,
              json: () => JSON.parse(text) as unknown,
            });
          });
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
}

export type Client = ReturnType<typeof makeClient>;
