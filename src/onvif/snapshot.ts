import type { IncomingHttpHeaders } from 'node:http';
import { CameraFaultError, CameraUnauthorizedError } from './errors.js';
import { digestAuthorization, parseDigestChallenge } from './soap/http-digest.js';
import { exchange } from './soap/transport.js';

// A camera's own still picture, at the URI of its ONVIF GetSnapshotUri answer, fetched by the
// gateway with the camera's stored credentials: HTTP Digest or Basic, whichever the camera's 401
// asks for. The credentials and the address never leave the gateway; the answer is bounded in
// time and size and must be a whole JPEG.

export interface CameraSnapshotSource {
  url: string;
  username: string | null;
  password: string | null;
}

export interface SnapshotFetchOptions {
  timeoutMs: number;
  maxBytes: number;
}

/** The Authorization answering a 401 (Digest preferred, as it sends no password); null when none can. */
function authorizationFor(
  headers: IncomingHttpHeaders,
  url: URL,
  account: { username: string; password: string },
): string | null {
  const challenge = parseDigestChallenge(headers['www-authenticate']);
  if (challenge) return digestAuthorization(challenge, account, 'GET', `${url.pathname}${url.search}`);
  const asks = [headers['www-authenticate'] ?? []].flat();
  if (asks.some((h) => /^\s*Basic\b/i.test(h)))
    return `Basic ${Buffer.from(`${account.username}:${account.password}`, 'utf8').toString('base64')}`;
  return null;
}

/** Starts with SOI and ends with EOI (FF D8 … FF D9): a whole JPEG, not a cut-off one. */
export function isWholeJpeg(data: Buffer): boolean {
  return (
    data.length >= 4 &&
    data[0] === 0xff &&
    data[1] === 0xd8 &&
    data[data.length - 2] === 0xff &&
    data[data.length - 1] === 0xd9
  );
}

/** The camera's JPEG; CameraUnreachableError, CameraUnauthorizedError or CameraFaultError otherwise. */
export async function fetchCameraSnapshot(source: CameraSnapshotSource, opts: SnapshotFetchOptions): Promise<Buffer> {
  const url = new URL(source.url);
  if (url.protocol !== 'http:')
    throw new CameraFaultError(`${url.protocol} snapshot addresses are not supported (plain http only)`);
  const get = (authorization: string | null) =>
    exchange(url, {
      method: 'GET',
      headers: { accept: 'image/jpeg', ...(authorization ? { authorization } : {}) },
      timeoutMs: opts.timeoutMs,
      maxBytes: opts.maxBytes,
    });
  let answer = await get(null);
  if (answer.status === 401 && source.username !== null) {
    const authorization = authorizationFor(answer.headers, url, {
      username: source.username,
      password: source.password ?? '',
    });
    if (authorization) answer = await get(authorization);
  }
  if (answer.status === 401 || answer.status === 403)
    throw new CameraUnauthorizedError(`${url.host}: the camera refused the snapshot request (${answer.status})`);
  if (answer.status !== 200)
    throw new CameraFaultError(`${url.host}: the camera answered the snapshot request with ${answer.status}`);
  if (!isWholeJpeg(answer.body)) throw new CameraFaultError(`${url.host}: the camera's snapshot is not a JPEG`);
  return answer.body;
}

/**
 * The snapshot URI to fetch: the camera's answer with its host replaced by the address the gateway
 * reaches the camera at (cameras behind NAT or with several interfaces name another, and a camera
 * must not make the gateway fetch from anywhere else). Null when the URI is not http.
 */
export function snapshotUrlAt(snapshotUri: string, onvifUrl: string): string | null {
  let snapshot: URL;
  let device: URL;
  try {
    snapshot = new URL(snapshotUri);
    device = new URL(onvifUrl);
  } catch {
    return null;
  }
  if (snapshot.protocol !== 'http:') return null;
  snapshot.hostname = device.hostname;
  snapshot.username = '';
  snapshot.password = '';
  return snapshot.href;
}
