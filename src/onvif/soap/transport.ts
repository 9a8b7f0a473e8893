import { request, type Agent, type IncomingHttpHeaders } from 'node:http';
import { CameraFaultError, CameraUnreachableError } from '../errors.js';

// One HTTP POST of a SOAP document to a camera, bounded in time and size. Every way it can go
// wrong (refused, reset, silence, a cut-off answer, the guard's refusal) ends as a rejected
// promise with a typed error; nothing is thrown from a callback.

export interface HttpAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

export interface PostOptions {
  agent: Agent;
  timeoutMs: number;
  maxBytes: number;
  /** SOAP 1.2 action, given in the content type. */
  action?: string | null;
  authorization?: string | null;
}

function transportError(err: unknown, url: URL): Error {
  if (err instanceof CameraFaultError || err instanceof CameraUnreachableError) return err;
  const code = (err as NodeJS.ErrnoException | null)?.code;
  const message = err instanceof Error ? err.message : String(err);
  return new CameraUnreachableError(`${url.host}: ${code ? `${code} ` : ''}${message}`);
}

export function postXml(url: URL, xml: string, opts: PostOptions): Promise<HttpAnswer> {
  if (url.protocol !== 'http:') return Promise.reject(new CameraUnreachableError(`${url.protocol} device services are not supported (plain http only)`));
  return new Promise<HttpAnswer>((resolve, reject) => {
    let settled = false;
    const finish = (err: Error | null, answer?: HttpAnswer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (err) {
        req.destroy();
        reject(err);
      } else resolve(answer as HttpAnswer);
    };
    const body = Buffer.from(xml, 'utf8');
    const req = request(url, {
      method: 'POST',
      agent: opts.agent,
      headers: {
        'content-type': `application/soap+xml; charset=utf-8${opts.action ? `; action="${opts.action}"` : ''}`,
        'content-length': body.length,
        ...(opts.authorization ? { authorization: opts.authorization } : {}),
      },
    });
    const timer = setTimeout(() => finish(new CameraUnreachableError(`${url.host}: no answer within ${opts.timeoutMs} ms`)), opts.timeoutMs);
    req.on('error', (err) => finish(transportError(err, url)));
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > opts.maxBytes) finish(new CameraFaultError(`camera response larger than ${opts.maxBytes} bytes`));
        else chunks.push(chunk);
      });
      res.on('error', (err) => finish(transportError(err, url)));
      res.on('end', () => finish(null, { status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('close', () => {
        if (!res.complete) finish(new CameraUnreachableError(`${url.host}: connection closed mid-answer`));
      });
    });
    req.end(body);
  });
}
