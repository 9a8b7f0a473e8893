import { RtspParseError } from '../errors.js';
import {
  fail,
  hasControlChar,
  isSsrc,
  isToken,
  parseSsrc,
  parseUint,
  splitOutsideQuotes,
  splitParam,
  trimLws,
  unquote,
} from './syntax.js';

// Transport (RFC 2326 §12.39). A client offers one or more comma-separated alternatives in
// SETUP; the server answers with the one it picked.

export type RtpProfile = 'RTP/AVP' | 'RTP/SAVP' | 'RTP/AVPF' | 'RTP/SAVPF';
export type LowerTransport = 'TCP' | 'UDP';
/** As written on the wire: `RTP/AVP` and `RTP/AVP/UDP` mean the same, and some peers only echo what they got. */
export type TransportProtocol = RtpProfile | `${RtpProfile}/${LowerTransport}`;

export interface TransportSpec {
  protocol: TransportProtocol;
  /** Derived from `protocol` when parsing; must agree with it when formatting. */
  lowerTransport: LowerTransport;
  delivery: 'unicast' | 'multicast' | null;
  /** Channel pair for RTP and RTCP over the RTSP connection (RFC 2326 §10.12). */
  interleaved?: [number, number];
  clientPort?: [number, number];
  serverPort?: [number, number];
  /** Multicast port pair. */
  port?: [number, number];
  /** 8 upper-case hex digits. */
  ssrc?: string;
  /** Upper-cased and unquoted, e.g. `PLAY` or `RECORD`. */
  mode?: string;
  /** `''` for a bare `destination` without an address. */
  destination?: string;
  source?: string;
  ttl?: number;
  /**
   * Parameters this module does not model (`append`, `layers`, RTSP 2.0's `dest_addr`, …),
   * in order, names as written and values as raw text (quotes kept) so a relay can pass
   * them on unchanged.
   */
  extra?: Array<[string, string | null]>;
}

const PROFILES: ReadonlyMap<string, RtpProfile> = new Map<string, RtpProfile>([
  ['RTP/AVP', 'RTP/AVP'],
  ['RTP/SAVP', 'RTP/SAVP'],
  ['RTP/AVPF', 'RTP/AVPF'],
  ['RTP/SAVPF', 'RTP/SAVPF'],
]);

function parseProtocol(text: string): { protocol: TransportProtocol; lowerTransport: LowerTransport } | null {
  const upper = text.toUpperCase();
  const parts = upper.split('/');
  if (parts.length < 2 || parts.length > 3) return null;
  const profile = PROFILES.get(`${parts[0]}/${parts[1]}`);
  if (profile === undefined) return null;
  const lower = parts[2];
  if (lower === undefined) return { protocol: profile, lowerTransport: 'UDP' };
  if (lower !== 'TCP' && lower !== 'UDP') return null;
  return { protocol: `${profile}/${lower}`, lowerTransport: lower };
}

function lowerOf(protocol: TransportProtocol): LowerTransport {
  return protocol.endsWith('/TCP') ? 'TCP' : 'UDP';
}

/** `a-b` or a lone `a`, which RTSP peers read as the pair `a, a+1` (RTP on even, RTCP on the next). */
function parsePair(value: string | null, max: number, what: string): [number, number] {
  if (value === null) fail(`${what} needs a value`);
  const dash = value.indexOf('-');
  const first = parseUint(dash < 0 ? value : value.slice(0, dash), max, what);
  if (dash < 0) {
    if (first === max) fail(`${what} out of range`);
    return [first, first + 1];
  }
  return [first, parseUint(value.slice(dash + 1), max, what)];
}

function parseHost(value: string | null, what: string): string {
  if (value === null) fail(`${what} needs a value`);
  const host = unquote(value);
  if (!isHost(host)) fail(`invalid ${what}`);
  return host;
}

function isHost(host: string): boolean {
  return /^[^\s;,"]+$/.test(host) && !hasControlChar(host);
}

function parseMode(value: string | null): string {
  if (value === null) fail('mode needs a value');
  const mode = unquote(value).toUpperCase();
  if (!isMode(mode)) fail('invalid mode');
  return mode;
}

function isMode(mode: string): boolean {
  return mode.split(',').every((m) => isToken(trimLws(m)));
}

function parseSpec(text: string): TransportSpec | null {
  const params = splitOutsideQuotes(text, ';');
  const proto = parseProtocol(params[0] ?? '');
  if (proto === null) {
    if (!/^[A-Za-z0-9._+-]+\/[A-Za-z0-9._+-]+(\/[A-Za-z0-9._+-]+)?$/.test(params[0] ?? ''))
      fail('invalid transport-protocol');
    return null; // well-formed but not RTP over a profile we speak: the caller skips this alternative
  }
  const spec: TransportSpec = { ...proto, delivery: null };
  const seen = new Set<string>();
  const extra: Array<[string, string | null]> = [];
  for (let i = 1; i < params.length; i++) {
    const part = params[i] ?? '';
    if (part === '') continue; // `…;unicast;` with a trailing separator is common
    const { name, value } = splitParam(part);
    if (name === '') fail('empty transport parameter name');
    const known = name === 'unicast' || name === 'multicast' ? 'delivery' : name;
    if (KNOWN.has(known)) {
      if (seen.has(known)) fail(`duplicate transport parameter ${name}`);
      seen.add(known);
    }
    switch (name) {
      case 'unicast':
      case 'multicast':
        if (value !== null) fail(`${name} takes no value`);
        spec.delivery = name;
        break;
      case 'interleaved':
        spec.interleaved = parsePair(value, 255, 'interleaved channel');
        break;
      case 'client_port':
        spec.clientPort = parsePair(value, 65535, 'client_port');
        break;
      case 'server_port':
        spec.serverPort = parsePair(value, 65535, 'server_port');
        break;
      case 'port':
        spec.port = parsePair(value, 65535, 'port');
        break;
      case 'ssrc':
        if (value === null) fail('ssrc needs a value');
        spec.ssrc = parseSsrc(unquote(value));
        break;
      case 'mode':
        spec.mode = parseMode(value);
        break;
      case 'destination':
        // A bare `destination` (RFC 2326 grammar) means "send to me": kept as ''.
        spec.destination = value === null ? '' : parseHost(value, 'destination');
        break;
      case 'source':
        spec.source = parseHost(value, 'source');
        break;
      case 'ttl':
        if (value === null) fail('ttl needs a value');
        spec.ttl = parseUint(value, 255, 'ttl');
        break;
      default: {
        const eq = part.indexOf('=');
        const raw = eq < 0 ? part : trimLws(part.slice(0, eq));
        if (!isToken(raw)) fail('invalid transport parameter name');
        extra.push([raw, value]);
      }
    }
  }
  if (extra.length > 0) spec.extra = extra;
  return spec;
}

const KNOWN: ReadonlySet<string> = new Set([
  'delivery',
  'interleaved',
  'client_port',
  'server_port',
  'port',
  'ssrc',
  'mode',
  'destination',
  'source',
  'ttl',
]);

/**
 * Parses every alternative. Alternatives that are well-formed but not RTP over AVP/SAVP/AVPF/SAVPF
 * (e.g. RealNetworks' `x-real-rdt/tcp`) are skipped, as a server must ignore transports it does
 * not know; when none is left the error carries 461 Unsupported Transport.
 */
export function parseTransport(value: string): TransportSpec[] {
  if (hasControlChar(value)) fail('control character in Transport');
  const specs: TransportSpec[] = [];
  let skipped = 0;
  for (const alt of splitOutsideQuotes(value, ',')) {
    if (alt === '') continue;
    const spec = parseSpec(alt);
    if (spec === null) skipped++;
    else specs.push(spec);
  }
  if (specs.length === 0) {
    if (skipped > 0) throw new RtspParseError(461, 'no supported transport');
    fail('empty Transport header');
  }
  return specs;
}

function pair(p: [number, number], max: number, what: string): string {
  for (const n of p) if (!Number.isInteger(n) || n < 0 || n > max) throw new TypeError(`invalid ${what}`);
  return `${p[0]}-${p[1]}`;
}

export function formatTransportSpec(spec: TransportSpec): string {
  const proto = parseProtocol(spec.protocol);
  if (proto === null || proto.protocol !== spec.protocol)
    throw new TypeError(`invalid transport protocol ${spec.protocol}`);
  if (lowerOf(spec.protocol) !== spec.lowerTransport)
    throw new TypeError(`${spec.protocol} is not over ${spec.lowerTransport}`);
  const out: string[] = [spec.protocol];
  if (spec.delivery !== null) out.push(spec.delivery);
  if (spec.destination === '') {
    out.push('destination');
  } else if (spec.destination !== undefined) {
    if (!isHost(spec.destination)) throw new TypeError('invalid destination');
    out.push(`destination=${spec.destination}`);
  }
  if (spec.source !== undefined) {
    if (!isHost(spec.source)) throw new TypeError('invalid source');
    out.push(`source=${spec.source}`);
  }
  if (spec.interleaved !== undefined) out.push(`interleaved=${pair(spec.interleaved, 255, 'interleaved channel')}`);
  if (spec.ttl !== undefined) {
    if (!Number.isInteger(spec.ttl) || spec.ttl < 0 || spec.ttl > 255) throw new TypeError('invalid ttl');
    out.push(`ttl=${spec.ttl}`);
  }
  if (spec.port !== undefined) out.push(`port=${pair(spec.port, 65535, 'port')}`);
  if (spec.clientPort !== undefined) out.push(`client_port=${pair(spec.clientPort, 65535, 'client_port')}`);
  if (spec.serverPort !== undefined) out.push(`server_port=${pair(spec.serverPort, 65535, 'server_port')}`);
  if (spec.ssrc !== undefined) {
    if (!isSsrc(spec.ssrc)) throw new TypeError('ssrc must be 8 upper-case hex digits');
    out.push(`ssrc=${spec.ssrc}`);
  }
  if (spec.mode !== undefined) {
    if (!isMode(spec.mode)) throw new TypeError('invalid mode');
    // RFC 2326 allows `mode=PLAY` and `mode="PLAY"`; ffmpeg only recognises the bare form, so
    // quotes are kept for lists, which need them.
    out.push(spec.mode.includes(',') ? `mode="${spec.mode}"` : `mode=${spec.mode}`);
  }
  for (const [name, value] of spec.extra ?? []) {
    if (
      !isToken(name) ||
      KNOWN.has(name.toLowerCase()) ||
      name.toLowerCase() === 'unicast' ||
      name.toLowerCase() === 'multicast'
    ) {
      throw new TypeError(`invalid extra transport parameter ${name}`);
    }
    if (value !== null && !isRawValue(value)) throw new TypeError(`invalid value for transport parameter ${name}`);
    out.push(value === null ? name : `${name}=${value}`);
  }
  return out.join(';');
}

/** A raw value survives a round trip if it has no separator outside quotes and no controls. */
function isRawValue(value: string): boolean {
  if (hasControlChar(value) || value !== trimLws(value)) return false;
  try {
    return splitOutsideQuotes(value, ';').length === 1 && splitOutsideQuotes(value, ',').length === 1;
  } catch (err) {
    if (err instanceof RtspParseError) return false;
    throw err;
  }
}

export function formatTransport(specs: readonly TransportSpec[]): string {
  if (specs.length === 0) throw new TypeError('a Transport header needs at least one spec');
  return specs.map(formatTransportSpec).join(',');
}
