import { CameraFaultError, CameraUnauthorizedError, CameraUnreachableError, SoapFaultError } from '../errors.js';
import { parseSoapBody, type XmlObject } from '../soap-xml.js';
import { envelope, type Addressing } from './envelope.js';
import type { GuardedAgent } from './guarded-agent.js';
import { digestAuthorization, parseDigestChallenge } from './http-digest.js';
import { postXml } from './transport.js';
import { usernameTokenXml, type Account } from './security.js';

// One camera's SOAP calls: envelope, WS-UsernameToken dated by the camera's clock, HTTP Digest when
// the camera challenges for it, and every answer mapped to a result or a typed error.

export interface SoapCall<T> {
  url: string;
  body: string;
  /** Reads the Body; anything it throws that is not a typed camera error becomes a CameraFaultError. */
  read: (body: XmlObject) => T;
  /** Send the UsernameToken (default true; GetSystemDateAndTime is first tried without). */
  authenticated?: boolean;
  addressing?: Addressing | null;
  timeoutMs?: number;
}

const AUTH_FAULT_CODES = new Set([
  'NotAuthorized',
  'FailedAuthentication',
  'InvalidSecurity',
  'InvalidSecurityToken',
  'FailedCheck',
  'SecurityTokenUnavailable',
]);

/** A fault the camera gave because of who asked (wrong account, token refused) rather than what was asked. */
export function isAuthFault(err: SoapFaultError): boolean {
  return (
    err.codes.some((c) => AUTH_FAULT_CODES.has(c)) ||
    /not ?authori[sz]ed|unauthori[sz]ed|authentication|\b401\b/i.test(err.message)
  );
}

export class SoapClient {
  /** Camera clock minus ours, ms: dates every UsernameToken. */
  clockOffsetMs = 0;

  constructor(
    private readonly account: Account | null,
    private readonly agent: GuardedAgent,
    private readonly timeoutMs: number,
    private readonly maxBytes: number,
    private readonly isClosed: () => boolean,
  ) {}

  async call<T>(c: SoapCall<T>): Promise<T> {
    if (this.isClosed()) throw new CameraUnreachableError('session closed');
    let url: URL;
    try {
      url = new URL(c.url);
    } catch {
      throw new CameraUnreachableError(`not a URL: ${c.url.slice(0, 200)}`);
    }
    const account = c.authenticated === false ? null : this.account;
    const xml = envelope(c.body, {
      security: account ? usernameTokenXml(account, Date.now() + this.clockOffsetMs) : null,
      addressing: c.addressing ?? null,
    });
    const post = (authorization: string | null) =>
      postXml(url, xml, {
        agent: this.agent,
        timeoutMs: c.timeoutMs ?? this.timeoutMs,
        maxBytes: this.maxBytes,
        action: c.addressing?.action ?? null,
        authorization,
      });
    let answer = await post(null);
    if (answer.status === 401 && account) {
      const challenge = parseDigestChallenge(answer.headers['www-authenticate']);
      if (challenge)
        answer = await post(digestAuthorization(challenge, account, 'POST', `${url.pathname}${url.search}`));
    }
    if (answer.status === 401 || answer.status === 403)
      throw new CameraUnauthorizedError(`${url.host}: HTTP ${answer.status}`);
    let body: XmlObject;
    try {
      body = await parseSoapBody(answer.text);
    } catch (err) {
      if (err instanceof SoapFaultError)
        throw isAuthFault(err)
          ? new CameraUnauthorizedError(err.message)
          : new CameraFaultError(err.message, err.codes);
      const why = err instanceof Error ? err.message : String(err);
      throw new CameraFaultError(
        answer.status >= 300 ? `HTTP ${answer.status} without a SOAP answer (${why})` : `not a SOAP answer: ${why}`,
      );
    }
    try {
      return c.read(body);
    } catch (err) {
      if (
        err instanceof CameraFaultError ||
        err instanceof CameraUnauthorizedError ||
        err instanceof CameraUnreachableError
      )
        throw err;
      throw new CameraFaultError(`unreadable answer: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
}
