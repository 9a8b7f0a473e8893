import { SdpError } from './errors.js';

// SDP (RFC 8866) as cameras send it in DESCRIBE answers, and the copy the relay hands to viewers.
//
// The model keeps every line in order (`lines`) so that formatting gives back what the camera said
// (vendor attributes such as Hikvision's a=Media_header matter to some players); the other fields
// are what those lines say, read once at parse time. formatSdp writes `lines` and the m= fields, so
// a changed copy is built from new lines with buildSession and buildMedia (as the relay's rewrite,
// relay/sdp-rewrite.ts, does) or by re-parsing, never by editing the views.

export const SDP_MAX_BYTES = 64 * 1024;
export const SDP_MAX_MEDIA = 16;

/** One `<type>=<value>` line, value as received minus surrounding blanks. */
export interface SdpLine {
  readonly type: string;
  readonly value: string;
}

export interface SdpOrigin {
  readonly username: string;
  readonly sessionId: string;
  readonly sessionVersion: string;
  readonly netType: string;
  readonly addrType: string;
  readonly address: string;
}

export interface SdpConnection {
  readonly netType: string;
  readonly addrType: string;
  /** As written, including any `/ttl[/count]` suffix. */
  readonly address: string;
}

export interface SdpRtpMap {
  readonly payloadType: number;
  /** As written (encoding names are case-insensitive; mediaCodecs upper-cases them). */
  readonly encoding: string;
  readonly clockRate: number;
  readonly channels: number | null;
}

/** fmtp parameters with lower-cased names (RFC 6184/7798 names are case-insensitive), values as written. */
export type SdpFmtp = ReadonlyMap<string, string>;

export interface SdpMedia {
  readonly media: string;
  readonly port: number;
  readonly portCount: number | null;
  readonly proto: string;
  readonly formats: readonly string[];
  /** Every line after the m= line, in order. */
  readonly lines: readonly SdpLine[];
  readonly connection: SdpConnection | null;
  readonly control: string | null;
  readonly rtpmap: ReadonlyMap<number, SdpRtpMap>;
  readonly fmtp: ReadonlyMap<number, SdpFmtp>;
}

export interface SdpSession {
  /** Every session-level line (v= included), in order. */
  readonly lines: readonly SdpLine[];
  readonly origin: SdpOrigin | null;
  readonly sessionName: string | null;
  readonly connection: SdpConnection | null;
  /** The first t= value. */
  readonly timing: string | null;
  readonly control: string | null;
  readonly media: readonly SdpMedia[];
}

export interface MediaCodec {
  /** Position in `SdpSession.media`, the same index rewriteForRelay passes to trackControls. */
  readonly index: number;
  readonly media: string;
  /** The first format of the m= line; null when it is not an RTP payload type. */
  readonly payloadType: number | null;
  /** Upper-cased: 'H264', 'H265', 'MPEG4-GENERIC', 'PCMU', 'PCMA', …; null when unknown. */
  readonly encoding: string | null;
  readonly clockRate: number | null;
  readonly channels: number | null;
  readonly fmtp: SdpFmtp;
}

export function parseSdp(input: string | Uint8Array): SdpSession {
  const text = decode(input);
  const session: SdpLine[] = [];
  const sections: Array<{ m: MLine; lines: SdpLine[] }> = [];
  let sawVersion = false;
  let lineNo = 0;
  for (const raw of text.split(/\r\n|\r|\n/)) {
    lineNo++;
    const line = trimLine(raw);
    if (line === '') continue;
    const type = line[0] ?? '';
    if (line[1] !== '=' || !/^[A-Za-z]$/.test(type)) throw new SdpError(`line ${lineNo}: not a <type>=<value> line`);
    const value = line.slice(2).trim();
    if (!sawVersion) {
      if (type !== 'v' || value !== '0') throw new SdpError(`line ${lineNo}: an SDP starts with v=0`);
      sawVersion = true;
      session.push({ type, value });
      continue;
    }
    if (type === 'v') throw new SdpError(`line ${lineNo}: a second v= line`);
    if (type === 'm') {
      if (sections.length === SDP_MAX_MEDIA) throw new SdpError(`more than ${SDP_MAX_MEDIA} media sections`);
      const m = parseMLine(value);
      if (!m) throw new SdpError(`line ${lineNo}: malformed m= line`);
      sections.push({ m, lines: [] });
      continue;
    }
    const current = sections[sections.length - 1];
    (current ? current.lines : session).push({ type, value });
  }
  if (!sawVersion) throw new SdpError('empty SDP');
  return buildSession(
    session,
    sections.map((s) => buildMedia(s.m, s.lines)),
  );
}

/** The SDP as text with CRLF line ends, ready for an RTSP body. */
export function formatSdp(sdp: SdpSession): string {
  let out = '';
  for (const line of sdp.lines) out += formatLine(line);
  for (const m of sdp.media) {
    const port = m.portCount === null ? `${m.port}` : `${m.port}/${m.portCount}`;
    out += `m=${[m.media, port, m.proto, ...m.formats].join(' ')}\r\n`;
    for (const line of m.lines) out += formatLine(line);
  }
  return out;
}

/**
 * The URL a control attribute stands for (RFC 2326 C.1.1): `*` or nothing is the base itself, an
 * absolute URL stands alone, and a relative one is appended to the base.
 *
 * Appending (with one `/` between) rather than RFC 3986 resolution is deliberate: cameras rely on
 * it. Dahua answers `Content-Base: rtsp://cam/cam/realmonitor?channel=1&subtype=0/` with
 * `a=control:trackID=0` and expects SETUP on `…subtype=0/trackID=0`; many send no Content-Base and
 * a request URL without a trailing slash. A control starting with `/` replaces the base's path.
 */
export function resolveControl(baseUrl: string, control: string | null): string {
  const c = (control ?? '').trim();
  if (c === '' || c === '*') return baseUrl;
  if (/^[A-Za-z][A-Za-z0-9+.-]*:/.test(c)) return c;
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*:)?(\/\/[^/?#]*)?/.exec(baseUrl);
  if (c.startsWith('//')) return `${scheme?.[1] ?? ''}${c}`;
  if (c.startsWith('/')) return `${scheme?.[1] ?? ''}${scheme?.[2] ?? ''}${c}`;
  return baseUrl.endsWith('/') ? `${baseUrl}${c}` : `${baseUrl}/${c}`;
}

/** What each media section carries, by its first (preferred) payload type. */
export function mediaCodecs(sdp: SdpSession): MediaCodec[] {
  return sdp.media.map((m, index) => {
    const first = m.formats[0];
    const payloadType = first !== undefined && /^\d{1,3}$/.test(first) && Number(first) <= 127 ? Number(first) : null;
    const map = payloadType === null ? undefined : (m.rtpmap.get(payloadType) ?? staticPayload(payloadType));
    const channels = map?.channels ?? (map && m.media === 'audio' ? 1 : null);
    return {
      index,
      media: m.media,
      payloadType,
      encoding: map ? map.encoding.toUpperCase() : null,
      clockRate: map?.clockRate ?? null,
      channels,
      fmtp: (payloadType === null ? undefined : m.fmtp.get(payloadType)) ?? new Map<string, string>(),
    };
  });
}

/** What an m= line says; an SdpMedia is one too. */
export interface MLine {
  readonly media: string;
  readonly port: number;
  readonly portCount: number | null;
  readonly proto: string;
  readonly formats: readonly string[];
}

function decode(input: string | Uint8Array): string {
  if (typeof input === 'string') {
    // Cheap bound first: a string can never have more UTF-8 bytes than 3 per UTF-16 unit.
    if (input.length > SDP_MAX_BYTES || Buffer.byteLength(input, 'utf8') > SDP_MAX_BYTES)
      throw new SdpError(`SDP over ${SDP_MAX_BYTES} bytes`);
    return input.replace(/^\uFEFF/, '');
  }
  if (input.byteLength > SDP_MAX_BYTES) throw new SdpError(`SDP over ${SDP_MAX_BYTES} bytes`);
  return Buffer.from(input.buffer, input.byteOffset, input.byteLength)
    .toString('utf8')
    .replace(/^\uFEFF/, '');
}

/** Trims blanks, and the NULs some cameras pad the body with up to their Content-Length. */
function trimLine(raw: string): string {
  // A loop rather than /[\s\0]+$/, which backtracks quadratically on long inner runs of blanks.
  let end = raw.length;
  while (end > 0 && isBlank(raw.charCodeAt(end - 1))) end--;
  let start = 0;
  while (start < end && isBlank(raw.charCodeAt(start))) start++;
  return raw.slice(start, end);
}

function isBlank(code: number): boolean {
  return (
    code === 0x20 ||
    code === 0x09 ||
    code === 0x00 ||
    code === 0x0b ||
    code === 0x0c ||
    code === 0xa0 ||
    code === 0xfeff
  );
}

function parseMLine(value: string): MLine | null {
  const parts = value.split(/\s+/);
  const [media, portField, proto, ...formats] = parts;
  if (!media || !portField || !proto) return null;
  const port = /^(\d{1,5})(?:\/(\d{1,5}))?$/.exec(portField);
  if (!port) return null;
  const portNumber = Number(port[1]);
  const portCount = port[2] === undefined ? null : Number(port[2]);
  if (portNumber > 65535 || (portCount !== null && (portCount < 1 || portCount > 65535))) return null;
  return { media, port: portNumber, portCount, proto, formats };
}

/** The session model of these session-level lines and media sections, its views read from the lines. */
export function buildSession(lines: readonly SdpLine[], media: readonly SdpMedia[]): SdpSession {
  const originLine = lines.find((l) => l.type === 'o');
  const nameLine = lines.find((l) => l.type === 's');
  const connectionLine = lines.find((l) => l.type === 'c');
  const timingLine = lines.find((l) => l.type === 't');
  return {
    lines,
    origin: originLine ? parseOrigin(originLine.value) : null,
    sessionName: nameLine ? nameLine.value : null,
    connection: connectionLine ? parseConnection(connectionLine.value) : null,
    timing: timingLine ? timingLine.value : null,
    control: findControl(lines),
    media,
  };
}

/** The media section of this m= line and the lines after it, its views read from the lines. */
export function buildMedia(m: MLine, lines: readonly SdpLine[]): SdpMedia {
  const rtpmap = new Map<number, SdpRtpMap>();
  const fmtp = new Map<number, SdpFmtp>();
  for (const line of lines) {
    if (isAttribute(line, 'rtpmap')) {
      const parsed = parseRtpMap(attributeValue(line));
      if (parsed && !rtpmap.has(parsed.payloadType)) rtpmap.set(parsed.payloadType, parsed);
    } else if (isAttribute(line, 'fmtp')) {
      const parsed = parseFmtp(attributeValue(line));
      if (parsed && !fmtp.has(parsed.payloadType)) fmtp.set(parsed.payloadType, parsed.params);
    }
  }
  const connectionLine = lines.find((l) => l.type === 'c');
  return {
    media: m.media,
    port: m.port,
    portCount: m.portCount,
    proto: m.proto,
    formats: m.formats,
    lines,
    connection: connectionLine ? parseConnection(connectionLine.value) : null,
    control: findControl(lines),
    rtpmap,
    fmtp,
  };
}

function formatLine(line: SdpLine): string {
  // RFC 8866 5.3: a session without a meaningful name is written "s= ", and s= must not be empty.
  if (line.type === 's' && line.value === '') return 's= \r\n';
  return `${line.type}=${line.value}\r\n`;
}

export function isAttribute(line: SdpLine, name: string): boolean {
  if (line.type !== 'a') return false;
  const colon = line.value.indexOf(':');
  const attr = colon < 0 ? line.value : line.value.slice(0, colon);
  return attr.trim().toLowerCase() === name;
}

function attributeValue(line: SdpLine): string {
  const colon = line.value.indexOf(':');
  return colon < 0 ? '' : line.value.slice(colon + 1).trim();
}

function findControl(lines: readonly SdpLine[]): string | null {
  const line = lines.find((l) => isAttribute(l, 'control'));
  return line ? attributeValue(line) : null;
}

export function parseOrigin(value: string): SdpOrigin | null {
  const parts = value.split(/\s+/);
  if (parts.length !== 6) return null;
  const [username = '', sessionId = '', sessionVersion = '', netType = '', addrType = '', address = ''] = parts;
  return { username, sessionId, sessionVersion, netType, addrType, address };
}

export function parseConnection(value: string): SdpConnection | null {
  const parts = value.split(/\s+/);
  if (parts.length !== 3) return null;
  const [netType = '', addrType = '', address = ''] = parts;
  return { netType, addrType, address };
}

function parseRtpMap(value: string): SdpRtpMap | null {
  const m = /^(\d{1,3})\s+([^\s/]+)\/(\d{1,10})(?:\/(\d{1,3}))?$/.exec(value);
  if (!m) return null;
  const payloadType = Number(m[1]);
  const clockRate = Number(m[3]);
  const channels = m[4] === undefined ? null : Number(m[4]);
  if (payloadType > 127 || clockRate === 0 || clockRate > 0xffffffff || channels === 0) return null;
  return { payloadType, encoding: m[2] ?? '', clockRate, channels };
}

function parseFmtp(value: string): { payloadType: number; params: SdpFmtp } | null {
  const m = /^(\d{1,3})(?:\s+([^]*))?$/.exec(value);
  if (!m || Number(m[1]) > 127) return null;
  const params = new Map<string, string>();
  for (const part of (m[2] ?? '').split(';')) {
    const eq = part.indexOf('=');
    const key = (eq < 0 ? part : part.slice(0, eq)).trim().toLowerCase();
    if (key === '' || params.has(key)) continue;
    params.set(key, eq < 0 ? '' : part.slice(eq + 1).trim());
  }
  return { payloadType: Number(m[1]), params };
}

/** RFC 3551 table 4/5: the static payload types a camera may use without an rtpmap. */
export function staticPayload(payloadType: number): SdpRtpMap | undefined {
  const map = (encoding: string, clockRate: number, channels: number | null): SdpRtpMap => ({
    payloadType,
    encoding,
    clockRate,
    channels,
  });
  switch (payloadType) {
    case 0:
      return map('PCMU', 8000, 1);
    case 3:
      return map('GSM', 8000, 1);
    case 4:
      return map('G723', 8000, 1);
    case 8:
      return map('PCMA', 8000, 1);
    case 9:
      return map('G722', 8000, 1);
    case 10:
      return map('L16', 44100, 2);
    case 11:
      return map('L16', 44100, 1);
    case 13:
      return map('CN', 8000, 1);
    case 14:
      return map('MPA', 90000, null);
    case 18:
      return map('G729', 8000, 1);
    case 26:
      return map('JPEG', 90000, null);
    case 32:
      return map('MPV', 90000, null);
    case 33:
      return map('MP2T', 90000, null);
    default:
      return undefined;
  }
}
