import { request, type Agent, type IncomingHttpHeaders } from 'node:http';
import { CameraFaultError, CameraUnreachableError } from '../errors.js';

// One HTTP request to a camera (a POST of a SOAP document, a GET of its snapshot), bounded in time
// and size. Every way it can go wrong (refused, reset, silence, a cut-off answer, the guard's
// refusal) ends as a rejected promise with a typed error; nothing is thrown from a callback.

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
  if (url.protocol !== 'http:')
    return Promise.reject(
      new CameraUnreachableError(`${url.protocol} device services are not supported (plain http only)`),
    );
  const headers = {
    'content-type': `application/soap+xml; charset=utf-8${opts.action ? `; action="${opts.action}"` : ''}`,
    ...(opts.authorization ? { authorization: opts.authorization } : {}),
  };
  return exchange(url, {
    method: 'POST',
    headers,
    body: Buffer.from(xml, 'utf8'),
    agent: opts.agent,
    timeoutMs: opts.timeoutMs,
    maxBytes: opts.maxBytes,
  }).then((answer) => ({
    status: answer.status,
    headers: answer.headers,
    text: answer.body.toString('utf8'),
  }));
}

export interface ExchangeOptions {
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: Buffer;
  /** Node's global agent when absent. */
  agent?: Agent;
  timeoutMs: number;
  maxBytes: number;
}

/** One bounded HTTP request to a camera, its answer whole in memory (SOAP, a snapshot). */
export function exchange(
  url: URL,
  opts: ExchangeOptions,
): Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const finish = (err: Error | null, answer?: { status: number; headers: IncomingHttpHeaders; body: Buffer }) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (err) {
        req.destroy();
        reject(err);
      } else if (answer) resolve(answer);
    };
    const req = request(url, {
      method: opts.method,
      ...(opts.agent ? { agent: opts.agent } : {}),
      headers: { ...opts.headers, ...(opts.body ? { 'content-length': opts.body.length } : {}) },
    });
    const timer = setTimeout(
      () => finish(new CameraUnreachableError(`${url.host}: no answer within ${opts.timeoutMs} ms`)),
      opts.timeoutMs,
    );
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
      res.on('end', () =>
        finish(null, { status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
      );
      res.on('close', () => {
        if (!res.complete) finish(new CameraUnreachableError(`${url.host}: connection closed mid-answer`));
      });
    });
    req.end(opts.body);
  });
}
