import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { Agent, request, type RequestOptions } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import type { SecureContext } from 'node:tls';
import { isPublicAddress, type AllowedEndpoint } from './endpoint.js';
import type { SendResult } from './schedule.js';
import type { PushRequest } from './vapid.js';

// The one place that talks to push services: one HTTPS POST per push (RFC 8030), bounded in every
// way a push service, or whoever answers in its place, could stretch it. The address a name
// resolves to is checked as the connection is made (DNS rebinding: the name was checked when
// subscribed, its address was not); redirects are never followed; the whole request has a deadline;
// at most maxResponseBytes of an answer are read, then the socket is destroyed. Connections are
// kept alive and reused (a TLS handshake per push is most of a push's CPU on a Pi).

export interface SenderOptions {
  /** The CAs a push service's certificate is verified against: the system's, NODE_EXTRA_CA_CERTS, notifications.ca_file. */
  secureContext: SecureContext;
  /** The whole request, from connecting to the end of the answer. */
  timeoutMs: number;
  /** Most bytes of an answer read (its text is kept for the log and the test button). */
  maxResponseBytes?: number;
  /** Connections open at once (requests beyond wait for one). */
  maxSockets?: number;
  /** For tests: the resolver. */
  lookup?: typeof dnsLookup;
}

/** The error a lookup gives when the name leads only to addresses that are not allowed. */
const FORBIDDEN = 'EPUSHADDRESS';
/** Text kept of an answer's body. */
const MAX_TEXT = 1024;

export class PushSender {
  private readonly agent: Agent;

  constructor(private readonly opts: SenderOptions) {
    this.agent = new Agent({
      keepAlive: true,
      maxSockets: opts.maxSockets ?? 4,
      maxFreeSockets: opts.maxSockets ?? 4,
      // An idle kept-alive connection is closed after this long.
      timeout: 30_000,
      scheduling: 'lifo',
    });
  }

  send(endpoint: AllowedEndpoint, push: PushRequest): Promise<SendResult> {
    return new Promise<SendResult>((resolve) => {
      let settled = false;
      const finish = (result: SendResult) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(result);
      };
      const { url, host, port } = endpoint;
      // secureContext is a tls.connect option: the agent hands the request's options to it.
      const options: RequestOptions & { secureContext: SecureContext } = {
        host,
        port,
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        headers: push.headers,
        agent: this.agent,
        secureContext: this.opts.secureContext,
        ...(isIP(host) === 0 ? { servername: host } : {}),
        lookup: this.guardedLookup(endpoint.anyAddress),
      };
      const req = request(options);
      const timer = setTimeout(() => {
        finish({ kind: 'failed', reason: 'timeout', text: `${host} did not answer within ${this.opts.timeoutMs} ms` });
        req.destroy();
      }, this.opts.timeoutMs);
      req.on('error', (err: NodeJS.ErrnoException) =>
        finish(
          err.code === FORBIDDEN
            ? { kind: 'failed', reason: 'forbidden_address', text: err.message }
            : { kind: 'failed', reason: 'unreachable', text: `cannot reach ${host}: ${err.message}` },
        ),
      );
      req.on('response', (res) => {
        const status = res.statusCode ?? 0;
        const retryAfter = res.headers['retry-after'] ?? null;
        let size = 0;
        const kept: Buffer[] = [];
        let keptBytes = 0;
        const answered = () =>
          finish({
            kind: 'answered',
            status,
            retryAfter,
            text: Buffer.concat(kept).toString('utf8').slice(0, MAX_TEXT),
          });
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (keptBytes < MAX_TEXT) {
            kept.push(chunk.subarray(0, MAX_TEXT - keptBytes));
            keptBytes += Math.min(chunk.length, MAX_TEXT - keptBytes);
          }
          if (size > (this.opts.maxResponseBytes ?? 65_536)) {
            // More than any push service says: the rest is not read, and the connection not reused.
            answered();
            res.destroy();
            req.destroy();
          }
        });
        res.on('end', answered);
        // Cut off (by the deadline, or the other side): the status is known all the same.
        res.on('close', answered);
        res.on('error', answered);
      });
      req.end(push.body);
    });
  }

  /** Resolves as the system does, keeping only the addresses the endpoint may have. */
  private guardedLookup(anyAddress: boolean): LookupFunction {
    const resolve = this.opts.lookup ?? dnsLookup;
    return (hostname, options, callback) => {
      resolve(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
        if (err) return callback(err, '', 4);
        const allowed = anyAddress ? addresses : addresses.filter((a) => isPublicAddress(a.address));
        const first = allowed[0];
        if (!first) {
          const refused: NodeJS.ErrnoException = new Error(
            `${hostname} resolves to ${addresses.map((a) => a.address).join(', ') || 'nothing'}: not a public address (a name listed in notifications.push_hosts by the owner may resolve to any)`,
          );
          refused.code = FORBIDDEN;
          return callback(refused, '', 4);
        }
        if (options.all) callback(null, allowed);
        else callback(null, first.address, first.family);
      });
    };
  }

  close(): void {
    this.agent.destroy();
  }
}
