import { SETTING_LIMITS } from './camera-settings.js';

// A plain RTSP camera's stream address as its owner gives it (POST /v1/devices with rtsp_url): the
// URL the gateway keeps and opens (no credentials in it: they move to the camera's account and its
// password is sealed), and the same URL as it may be shown (parameters that look like passwords
// masked). Pure: the camera setup checks with it, the store and the manager read with it.

export const RTSP_URL_LIMITS = {
  /** Cameras' URLs are short; a longer one is a mistake or an attempt, not a camera. */
  length: 2048,
} as const;

/** The port a URL without one is opened on: RTSP's registered ports (RFC 2326, RFC 7826). */
export const RTSP_DEFAULT_PORTS: Readonly<Record<'rtsp:' | 'rtsps:', number>> = { 'rtsp:': 554, 'rtsps:': 322 };

/** Whether a camera's address (a cameras row's URL) is a plain RTSP camera's stream rather than an ONVIF service. */
export const isRtspUrl = (url: string): boolean => /^rtsps?:\/\//i.test(url);

export interface ParsedRtspUrl {
  /** scheme://host[:port]/path?query: host as the URL parser writes it, no default port, no credentials. */
  url: string;
  /** The host to connect to, without IPv6 brackets. */
  host: string;
  port: number;
  /** The account the URL carried (`rtsp://user:pass@…`), percent-decoded; null when it carried none. */
  account: { username: string; password: string } | null;
}

/** What is wrong with it, as the end of a sentence naming the field (`rtsp_url …`). */
export type RtspUrlProblem = { problem: string };

/**
 * The URL as the gateway keeps it, or why it cannot be a camera's: rtsp:// or rtsps:// only, a
 * host, a port in 1–65535, no blanks, control characters or fragment, at most
 * RTSP_URL_LIMITS.length characters; credentials in it are taken out (checked as the account
 * fields are). The host is normalised as for http (`127.1` → `127.0.0.1`, lower case), so that
 * the same camera is one URL and the gateway's own addresses cannot hide behind another spelling.
 */
export function parseRtspUrl(text: string): ParsedRtspUrl | RtspUrlProblem {
  if (text.length > RTSP_URL_LIMITS.length) return { problem: `is longer than ${RTSP_URL_LIMITS.length} characters` };
  if (!/^rtsps?:\/\//i.test(text)) return { problem: 'must start with rtsp:// or rtsps://' };
  // eslint-disable-next-line no-control-regex -- refusing control characters is the point
  if (/[\s\u0000-\u001f\u007f]/.test(text)) return { problem: 'holds blanks or control characters' };
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    return { problem: 'is not a URL (rtsp://host[:port]/path)' };
  }
  if (u.hash !== '' || text.includes('#')) return { problem: 'has a fragment (#…), which RTSP does not use' };
  if (u.hostname === '') return { problem: 'names no host (rtsp://host[:port]/path)' };
  const scheme = u.protocol as keyof typeof RTSP_DEFAULT_PORTS;
  const port = u.port === '' ? RTSP_DEFAULT_PORTS[scheme] : Number(u.port);
  if (!(port >= 1 && port <= 65_535)) return { problem: 'has a port out of 1–65535' };
  // RTSP's scheme is not one the URL parser normalises hosts of: http's rules give the one spelling.
  let host: string;
  try {
    host = new URL(`http://${u.hostname}/`).hostname;
  } catch {
    return { problem: 'names a host that is not a name or an IP address' };
  }
  const account = accountOf(u);
  if ('problem' in account) return account;
  const portPart = port === RTSP_DEFAULT_PORTS[scheme] ? '' : `:${port}`;
  return {
    url: `${scheme}//${host}${portPart}${u.pathname}${u.search}`,
    host: host.startsWith('[') ? host.slice(1, -1) : host,
    port,
    account: account.account,
  };
}

/** The credentials of `rtsp://user:pass@host`, held to the rules of the account fields. */
function accountOf(u: URL): { account: ParsedRtspUrl['account'] } | RtspUrlProblem {
  if (u.username === '' && u.password === '') return { account: null };
  let username: string;
  let password: string;
  try {
    username = decodeURIComponent(u.username);
    password = decodeURIComponent(u.password);
  } catch {
    return { problem: 'holds credentials that are not percent-encoded properly' };
  }
  if (username === '') return { problem: 'holds a password without a username' };
  // eslint-disable-next-line no-control-regex -- as the username and password fields refuse them
  const control = /[\u0000-\u001f\u007f]/;
  if (username.length > SETTING_LIMITS.usernameLength || username.includes(':') || control.test(username))
    return { problem: 'holds a username that is not one (1–128 characters, no colon)' };
  if (password.length > SETTING_LIMITS.passwordLength || control.test(password))
    return { problem: 'holds a password longer than 256 characters or with control characters' };
  return { account: { username, password } };
}

/** Parameter names whose value is a secret in the URLs cameras document (`?password=`, `&pwd=`, `_password=`). */
const SECRET_PARAMETER = /([?&;/_](?:password|passwd|pwd|pass|pw|token|secret|auth|key)=)[^&;/_]*/gi;

/**
 * A kept URL as the API shows it and the log writes it: what looks like a secret in its path or
 * query (some cameras take their password there, not by Digest) becomes `***`. It never has
 * credentials before the host: those are taken out when the URL is given.
 */
export const rtspUrlForDisplay = (url: string): string => url.replace(SECRET_PARAMETER, '$1***');
