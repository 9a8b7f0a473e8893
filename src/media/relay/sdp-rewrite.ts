import {
  buildMedia,
  buildSession,
  isAttribute,
  parseConnection,
  parseOrigin,
  type SdpLine,
  type SdpSession,
} from '../sdp.js';
import { SdpError } from '../errors.js';

// The relay's rewrite of a camera's SDP for its viewers (docs/relay.md), over the SDP model of
// ../sdp.ts: which lines it keeps, scrubs, replaces or adds.

export interface RelayRewriteOptions {
  /** The control each media gets, relative to the relay's own URL (e.g. `trackID=0`). */
  trackControls: (index: number) => string;
  /** Session-level control; `*` when absent. */
  sessionControl?: string;
  /** What the o= line says instead of the camera's; `-`, the camera's session id and 0.0.0.0 when absent. */
  origin?: { username: string; sessionId: string; address: string };
}

/**
 * The copy of a camera's SDP that viewers get: controls point at the relay, and nothing tells a
 * viewer where the camera is or how to log in to it. Lines that could carry either and that a
 * player does not need (u=, e=, p=, a=tool) are dropped; any other line still naming the camera's
 * host after credentials are stripped from its URLs is dropped too (s= becomes `-`, as it must stay).
 */
export function rewriteForRelay(sdp: SdpSession, opts: RelayRewriteOptions): SdpSession {
  const sessionControl = opts.sessionControl ?? '*';
  checkToken('sessionControl', sessionControl);
  const hosts = cameraHosts(sdp);

  const origin = opts.origin;
  if (origin) {
    checkToken('origin.username', origin.username);
    checkToken('origin.sessionId', origin.sessionId);
    checkToken('origin.address', origin.address);
  }
  const originAddress = origin?.address ?? '0.0.0.0';
  const originLine: SdpLine = {
    type: 'o',
    value: [
      origin?.username ?? '-',
      origin?.sessionId ?? safeNumber(sdp.origin?.sessionId),
      safeNumber(sdp.origin?.sessionVersion),
      'IN',
      originAddress.includes(':') ? 'IP6' : 'IP4',
      originAddress,
    ].join(' '),
  };

  const session: SdpLine[] = [];
  let sawControl = false;
  for (const line of sdp.lines) {
    if (line.type === 'o') {
      insertMissing(session, originLine);
    } else if (line.type === 'c') {
      session.push(unspecifiedConnection(line));
    } else if (isAttribute(line, 'control')) {
      if (!sawControl) session.push({ type: 'a', value: `control:${sessionControl}` });
      sawControl = true;
    } else {
      const kept = scrubLine(line, hosts);
      if (kept) session.push(kept);
    }
  }
  insertMissing(session, originLine);
  insertMissing(session, { type: 's', value: '-' });
  insertMissing(session, { type: 't', value: '0 0' });
  if (!sdp.connection && sdp.media.some((m) => !m.connection))
    insertMissing(session, { type: 'c', value: 'IN IP4 0.0.0.0' });
  if (!sawControl) session.push({ type: 'a', value: `control:${sessionControl}` });

  const media = sdp.media.map((m, index) => {
    const control = opts.trackControls(index);
    checkToken(`trackControls(${index})`, control);
    const lines: SdpLine[] = [];
    let sawTrackControl = false;
    for (const line of m.lines) {
      if (line.type === 'c') {
        lines.push(unspecifiedConnection(line));
      } else if (isAttribute(line, 'control')) {
        if (!sawTrackControl) lines.push({ type: 'a', value: `control:${control}` });
        sawTrackControl = true;
      } else {
        const kept = scrubLine(line, hosts);
        if (kept) lines.push(kept);
      }
    }
    if (!sawTrackControl) lines.push({ type: 'a', value: `control:${control}` });
    return buildMedia(m, lines);
  });
  return buildSession(session, media);
}

function checkToken(what: string, value: string): void {
  // Relay-supplied values go verbatim into lines; a blank or line break would change the SDP's shape.
  if (value === '' || /[\s\0]/.test(value))
    throw new SdpError(`${what}: must be non-empty without blanks or line breaks`);
}

function safeNumber(value: string | undefined): string {
  return value !== undefined && /^\d{1,20}$/.test(value) ? value : '0';
}

function unspecifiedConnection(line: SdpLine): SdpLine {
  const c = parseConnection(line.value);
  return { type: 'c', value: c?.addrType.toUpperCase() === 'IP6' ? 'IN IP6 ::' : 'IN IP4 0.0.0.0' };
}

/**
 * Calls `fn` with the authority part (`user:pass@host:port`) of each URL in `value`, by its
 * position. indexOf on "://" rather than a scheme regex, which would backtrack quadratically on long
 * runs of letters.
 */
function forEachAuthority(value: string, fn: (start: number, end: number) => void): void {
  let at = value.indexOf('://');
  while (at >= 0) {
    const start = at + 3;
    let end = start;
    while (end < value.length && !'/?#'.includes(value[end] ?? '/') && !/\s/.test(value[end] ?? ' ')) end++;
    fn(start, end);
    // From `start`, not `end`: the authority may end in the ':' of the next "://".
    at = value.indexOf('://', start);
  }
}

function stripCredentials(value: string): string {
  let out = '';
  let copied = 0;
  forEachAuthority(value, (start, end) => {
    const at = value.lastIndexOf('@', end - 1);
    if (at < start) return;
    out += value.slice(copied, start);
    copied = at + 1;
  });
  return copied === 0 ? value : out + value.slice(copied);
}

/** Every address or host name the SDP reveals about the camera, lower-cased. */
function cameraHosts(sdp: SdpSession): Set<string> {
  const hosts = new Set<string>();
  const add = (host: string): void => {
    const h = host.replace(/^\[/, '').replace(/\]$/, '').toLowerCase();
    if (h !== '' && h !== '0.0.0.0' && h !== '::' && h !== '-' && h !== '*') hosts.add(h);
  };
  const scan = (lines: readonly SdpLine[]): void => {
    for (const line of lines) {
      if (line.type === 'o') {
        const o = parseOrigin(line.value);
        if (o) add(o.address);
      } else if (line.type === 'c') {
        const c = parseConnection(line.value);
        if (c) add(c.address.split('/')[0] ?? '');
      }
      forEachAuthority(line.value, (start, end) => {
        const at = line.value.lastIndexOf('@', end - 1);
        const hostPort = line.value.slice(at >= start ? at + 1 : start, end);
        if (hostPort.startsWith('[')) add(hostPort.slice(0, hostPort.indexOf(']') + 1));
        else add(hostPort.replace(/:\d*$/, ''));
      });
    }
  };
  scan(sdp.lines);
  for (const m of sdp.media) scan(m.lines);
  return hosts;
}

function mentionsHost(value: string, hosts: ReadonlySet<string>): boolean {
  const lower = value.toLowerCase();
  // Whole host-name tokens only: "cam" must not match "camera" or "cam.lan", "10.0.0.1" not "10.0.0.12".
  for (const token of lower.split(/[^a-z0-9.-]+/)) {
    let end = token.length;
    while (end > 0 && token[end - 1] === '.') end--;
    if (hosts.has(token) || hosts.has(token.slice(0, end))) return true;
  }
  // IPv6 literals and odd names that the token split would cut in pieces.
  for (const host of hosts) if (!/^[a-z0-9.-]+$/.test(host) && lower.includes(host)) return true;
  return false;
}

function scrubLine(line: SdpLine, hosts: ReadonlySet<string>): SdpLine | null {
  if (line.type === 'u' || line.type === 'e' || line.type === 'p') return null;
  if (isAttribute(line, 'tool')) return null;
  const value = stripCredentials(line.value);
  // Numbers-only lines (version, timing, bandwidth) and rtpmap/fmtp cannot name a host, though a
  // garbled address ("0") or base64 in sprop-* could look like one; they must not be dropped.
  if ('vtrzb'.includes(line.type) || isAttribute(line, 'rtpmap') || isAttribute(line, 'fmtp'))
    return { type: line.type, value };
  if (!mentionsHost(value, hosts)) return { type: line.type, value };
  return line.type === 's' ? { type: 's', value: '-' } : null;
}

const SESSION_ORDER = 'vosiuepcbtrzka';

/** Adds a line the RFC requires when the camera left it out, where the RFC's order puts it. */
function insertMissing(lines: SdpLine[], line: SdpLine): void {
  if (lines.some((l) => l.type === line.type)) return;
  const rank = SESSION_ORDER.indexOf(line.type);
  let at = lines.length;
  for (let i = 0; i < lines.length; i++) {
    const r = SESSION_ORDER.indexOf(lines[i]?.type ?? '');
    if (r > rank) {
      at = i;
      break;
    }
  }
  lines.splice(at, 0, line);
}
