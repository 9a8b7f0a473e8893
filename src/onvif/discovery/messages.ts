import { childOf, firstOf, isXmlObject, parseSoapBody, type XmlObject } from '../soap-xml.js';

// WS-Discovery messages as ONVIF uses them (the 2005/04 draft, WS-Addressing 2004/08, SOAP 1.2).
// Everything read here comes off the LAN from devices we do not control, so parsing never throws:
// a datagram that is not a discovery message we understand comes back as null.
//
// soap-xml.ts strips namespace declarations and prefixes before xml2js sees the document, so the
// namespace of the message element is checked here on the raw text; otherwise a same-named element
// from another vocabulary (WS-Discovery 1.1, a vendor protocol) would be read as ours.

export const WSD_NS = 'http://schemas.xmlsoap.org/ws/2005/04/discovery';
export const WSA_NS = 'http://schemas.xmlsoap.org/ws/2004/08/addressing';
export const ONVIF_NETWORK_NS = 'http://www.onvif.org/ver10/network/wsdl';
const ONVIF_DEVICE_NS = 'http://www.onvif.org/ver10/device/wsdl';
const SOAP12_NS = 'http://www.w3.org/2003/05/soap-envelope';
const WSA_ANONYMOUS = `${WSA_NS}/role/anonymous`;
/** The well-known To of multicast discovery messages (WS-Discovery 2005/04, section 2.4). */
const WSD_TO = 'urn:schemas-xmlsoap-org:ws:2005:04:discovery';

export const WSD_MULTICAST_ADDRESS = '239.255.255.250';
export const WSD_PORT = 3702;

/**
 * Largest discovery message accepted. Real ProbeMatches are one or two kilobytes; the cap bounds
 * the parse work a single datagram can cause while leaving room for long scope lists.
 */
export const MAX_DISCOVERY_MESSAGE_BYTES = 32 * 1024;

/** XAddrs kept per message: each is a URL the gateway may later connect to, so a device cannot list hundreds. */
export const MAX_XADDRS = 16;

const MAX_ENDPOINT_CHARS = 1024;

export const DEFAULT_TYPES: readonly string[] = ['dn:NetworkVideoTransmitter', 'tds:Device'];

export type DiscoveryKind = 'probeMatch' | 'hello' | 'bye';

export interface AppSequence {
  instanceId: number;
  messageNumber: number;
}

export interface DiscoveryMessage {
  kind: DiscoveryKind;
  /** The header's MessageID; repeats of one message (SOAP-over-UDP retransmission) share it. */
  messageId: string | null;
  /** For a ProbeMatch, the MessageID of the Probe it answers. */
  relatesTo: string | null;
  /**
   * The EndpointReference Address as sent (trimmed), e.g. urn:uuid:…; see stableEndpoint and deviceIdFrom
   * (domain/device-alias.ts) for identity.
   */
  endpoint: string;
  /** QNames as sent, e.g. "tdn:NetworkVideoTransmitter". */
  types: string[];
  scopes: string[];
  /** http(s) URLs only; other tokens are dropped. May be empty (a Bye, or a Hello that expects a Resolve). */
  xaddrs: string[];
  metadataVersion: number | null;
  appSequence: AppSequence | null;
}

export interface ProbeMessage {
  messageId: string;
  types: string[];
  scopes: string[];
}

function text(v: unknown): string | null {
  const node = firstOf(v);
  if (typeof node === 'string') return node;
  if (isXmlObject(node) && Object.hasOwn(node, '_') && typeof node._ === 'string') return node._;
  return null;
}

function attr(v: unknown, name: string): string | null {
  const node = firstOf(v);
  if (!isXmlObject(node)) return null;
  const attrs = node.$;
  if (!isXmlObject(attrs)) return null;
  const value = childOf(attrs, name);
  return typeof value === 'string' ? value : null;
}

function tokens(v: unknown): string[] {
  const t = text(v);
  return t === null ? [] : t.split(/\s+/).filter((s) => s.length > 0);
}

function unsignedInt(v: string | null): number | null {
  if (v === null || !/^\s*\d{1,10}\s*$/.test(v)) return null;
  const n = Number(v);
  return n <= 0xffffffff ? n : null;
}

/** The local part of a QName ("tdn:NetworkVideoTransmitter" → "NetworkVideoTransmitter"). */
function localName(qname: string): string {
  const colon = qname.lastIndexOf(':');
  return colon < 0 ? qname : qname.slice(colon + 1);
}

/** True when the Types list names an ONVIF NetworkVideoTransmitter, whatever prefix the device chose. */
export function isOnvifCamera(types: readonly string[]): boolean {
  return types.some((t) => localName(t) === 'NetworkVideoTransmitter');
}

// ---- raw-text namespace checks -------------------------------------------------------------------

const NAME = '[A-Za-z_][\\w.-]*';
const ATTRS = `(?:\\s+[^\\s=/>]+\\s*=\\s*(?:"[^"]*"|'[^']*'))*\\s*`;
const BODY_START = new RegExp(`<(?:${NAME}:)?Body(${ATTRS})>`);
// Sticky: the first element inside the Body, after any whitespace, comments or processing instructions.
const FIRST_ELEMENT = `(?:\\s|<!--[\\s\\S]*?-->|<\\?[\\s\\S]*?\\?>)*<(?:(${NAME}):)?(${NAME})(${ATTRS})/?>`;
const XMLNS = new RegExp(`xmlns(?::(${NAME}))?\\s*=\\s*(?:"([^"]*)"|'([^']*)')`, 'g');

function declarations(source: string, prefix: string): Set<string> {
  const out = new Set<string>();
  for (const m of source.matchAll(XMLNS)) {
    if ((m[1] ?? '') === prefix) out.add(m[2] ?? m[3] ?? '');
  }
  return out;
}

/**
 * The first element of the SOAP Body with its namespace. Declarations on the element itself win;
 * otherwise every declaration of the prefix in the document must agree. Tracking XML scopes exactly
 * would need a namespace-aware parser, and a document that binds one prefix to two namespaces is
 * not something a camera needs to send.
 */
function bodyElement(xml: string): { local: string; ns: string | null } | null {
  const body = BODY_START.exec(xml);
  if (!body) return null;
  const firstElement = new RegExp(FIRST_ELEMENT, 'y');
  firstElement.lastIndex = body.index + body[0].length;
  const el = firstElement.exec(xml);
  if (!el || el[2] === undefined) return null;
  const prefix = el[1] ?? '';
  const own = declarations(el[3] ?? '', prefix);
  const all = own.size > 0 ? own : declarations(xml, prefix);
  const [ns] = all;
  return { local: el[2], ns: all.size === 1 && ns !== undefined ? ns : null };
}

// ---- parsing ---------------------------------------------------------------------------------------

/**
 * The SOAP Header, read with the same checks and conventions as parseSoapBody: the Header and Body
 * element names are swapped so the shared parser hands back the Header as if it were the Body. This
 * keeps one parser (and one set of refusals) for everything a device sends.
 */
async function parseSoapHeader(xml: string): Promise<XmlObject> {
  const swapped = xml.replace(
    new RegExp(`<(/?)(${NAME}:)?(Header|Body)(?=[\\s/>])`, 'g'),
    (_m, slash: string, prefix: string | undefined, name: string) =>
      `<${slash}${prefix ?? ''}${name === 'Header' ? 'Body' : 'SwappedBody'}`,
  );
  try {
    return await parseSoapBody(swapped);
  } catch {
    // No Header (or an empty one) is legal; the caller decides what a missing MessageID means.
    return {};
  }
}

/**
 * Namespace declarations accepted per message (real ones carry about ten). The shared parser strips
 * declarations with a pattern whose cost grows with the square of the number of "xmlns" in the
 * text; this keeps a hostile datagram to a few milliseconds.
 */
const MAX_XMLNS = 128;

async function parseEnvelope(xml: unknown): Promise<{ kind: string; element: unknown; header: XmlObject } | null> {
  if (typeof xml !== 'string' || Buffer.byteLength(xml, 'utf8') > MAX_DISCOVERY_MESSAGE_BYTES) return null;
  if ((xml.match(/xmlns/g)?.length ?? 0) > MAX_XMLNS) return null;
  let body: XmlObject;
  try {
    body = await parseSoapBody(xml);
  } catch {
    return null;
  }
  const el = bodyElement(xml);
  if (!el || el.ns !== WSD_NS) return null;
  const element = childOf(body, el.local);
  if (element === undefined) return null;
  const header = await parseSoapHeader(xml);
  const action = text(childOf(header, 'action'))?.trim();
  // Action is required by WS-Addressing, but some firmware omits it; when present it must agree.
  if (action !== undefined && action !== `${WSD_NS}/${el.local}`) return null;
  return { kind: el.local, element, header };
}

function readAppSequence(header: XmlObject): AppSequence | null {
  const node = childOf(header, 'appSequence');
  const instanceId = unsignedInt(attr(node, 'InstanceId'));
  const messageNumber = unsignedInt(attr(node, 'MessageNumber'));
  return instanceId === null || messageNumber === null ? null : { instanceId, messageNumber };
}

/** Whitespace or a control character (C0 or DEL): never in an endpoint reference we would keep. */
function hasControlOrSpace(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c <= 0x20 || c === 0x7f || /\s/.test(text[i]!)) return true;
  }
  return false;
}

function readEndpoint(node: XmlObject): string | null {
  const ref = firstOf(childOf(node, 'endpointReference'));
  if (!isXmlObject(ref)) return null;
  const address = text(childOf(ref, 'address'))?.trim();
  if (!address || address.length > MAX_ENDPOINT_CHARS || hasControlOrSpace(address)) return null;
  return address;
}

function readXAddrs(node: XmlObject): string[] {
  const out: string[] = [];
  for (const t of tokens(childOf(node, 'XAddrs'))) {
    if (out.length >= MAX_XADDRS) break;
    if (!URL.canParse(t)) continue;
    const protocol = new URL(t).protocol;
    if ((protocol === 'http:' || protocol === 'https:') && !out.includes(t)) out.push(t);
  }
  return out;
}

function readEntry(kind: DiscoveryKind, raw: unknown, header: XmlObject): DiscoveryMessage | null {
  const node = firstOf(raw);
  if (!isXmlObject(node)) return null;
  const endpoint = readEndpoint(node);
  if (endpoint === null) return null;
  const types = tokens(childOf(node, 'types'));
  // A Bye need not repeat the Types; anything that does name its types must be a camera.
  if (kind === 'bye' ? types.length > 0 && !isOnvifCamera(types) : !isOnvifCamera(types)) return null;
  return {
    kind,
    messageId: text(childOf(header, 'messageID'))?.trim() || null,
    relatesTo: text(childOf(header, 'relatesTo'))?.trim() || null,
    endpoint,
    types,
    scopes: tokens(childOf(node, 'scopes')),
    xaddrs: readXAddrs(node),
    metadataVersion: unsignedInt(text(childOf(node, 'metadataVersion'))),
    appSequence: readAppSequence(header),
  };
}

/**
 * Reads a ProbeMatches, Hello or Bye for an ONVIF NetworkVideoTransmitter. Returns one message per
 * usable ProbeMatch (a ProbeMatches may hold several; a Hello or Bye gives one), never an empty
 * array: null means "not a camera discovery message" (malformed, refused, another namespace or
 * message, not a NetworkVideoTransmitter, no endpoint). Never throws.
 */
export async function parseDiscoveryMessages(xml: unknown): Promise<DiscoveryMessage[] | null> {
  try {
    const env = await parseEnvelope(xml);
    if (!env) return null;
    const out: DiscoveryMessage[] = [];
    if (env.kind === 'ProbeMatches') {
      const matches = firstOf(env.element);
      if (!isXmlObject(matches)) return null;
      const list = childOf(matches, 'probeMatch');
      for (const raw of Array.isArray(list) ? list : [list]) {
        const m = readEntry('probeMatch', raw, env.header);
        if (m) out.push(m);
      }
    } else if (env.kind === 'Hello' || env.kind === 'Bye') {
      const m = readEntry(env.kind === 'Hello' ? 'hello' : 'bye', env.element, env.header);
      if (m) out.push(m);
    }
    return out.length > 0 ? out : null;
  } catch {
    return null;
  }
}

/** The first message of parseDiscoveryMessages (the only one, except for a multi-match ProbeMatches). */
export async function parseDiscoveryMessage(xml: unknown): Promise<DiscoveryMessage | null> {
  return (await parseDiscoveryMessages(xml))?.[0] ?? null;
}

/** Reads a Probe (the simulator's side). Null when it is not a WS-Discovery 2005/04 Probe with a MessageID. */
export async function parseProbe(xml: unknown): Promise<ProbeMessage | null> {
  try {
    const env = await parseEnvelope(xml);
    if (!env || env.kind !== 'Probe') return null;
    const messageId = text(childOf(env.header, 'messageID'))?.trim();
    // Without a MessageID an answer could not say what it relates to.
    if (!messageId) return null;
    const probe = firstOf(env.element);
    const node = isXmlObject(probe) ? probe : {};
    return { messageId, types: tokens(childOf(node, 'types')), scopes: tokens(childOf(node, 'scopes')) };
  } catch {
    return null;
  }
}

/**
 * Whether a device with `deviceTypes` answers a Probe for `probeTypes`: an empty Probe matches
 * everything, otherwise every probed type must be offered. Types compare by local name, because
 * devices and clients choose prefixes independently.
 */
export function typesMatch(probeTypes: readonly string[], deviceTypes: readonly string[]): boolean {
  const offered = new Set(deviceTypes.map(localName));
  return probeTypes.every((t) => offered.has(localName(t)));
}

// ---- building ---------------------------------------------------------------------------------------

function esc(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function list(name: string, items: readonly string[]): string {
  for (const item of items) {
    if (item.length === 0 || /\s/.test(item))
      throw new TypeError(`${name} entries must be non-empty and free of whitespace: ${JSON.stringify(item)}`);
  }
  return esc(items.join(' '));
}

function envelope(header: string, body: string): string {
  return (
    '<?xml version="1.0" encoding="UTF-8"?>' +
    `<s:Envelope xmlns:s="${SOAP12_NS}" xmlns:a="${WSA_NS}" xmlns:d="${WSD_NS}" xmlns:dn="${ONVIF_NETWORK_NS}" xmlns:tds="${ONVIF_DEVICE_NS}">` +
    `<s:Header>${header}</s:Header><s:Body>${body}</s:Body></s:Envelope>`
  );
}

function addressing(action: string, messageId: string, to: string, relatesTo?: string): string {
  return (
    `<a:Action s:mustUnderstand="true">${WSD_NS}/${action}</a:Action>` +
    `<a:MessageID>${esc(messageId)}</a:MessageID>` +
    (relatesTo === undefined ? '' : `<a:RelatesTo>${esc(relatesTo)}</a:RelatesTo>`) +
    `<a:To s:mustUnderstand="true">${esc(to)}</a:To>`
  );
}

function appSequence(seq: AppSequence | undefined): string {
  return seq ? `<d:AppSequence InstanceId="${seq.instanceId}" MessageNumber="${seq.messageNumber}"/>` : '';
}

/** A multicast (or directed) Probe for ONVIF NetworkVideoTransmitters. */
export function buildProbe(messageId: string): string {
  return envelope(
    addressing('Probe', messageId, WSD_TO) + `<a:ReplyTo><a:Address>${WSA_ANONYMOUS}</a:Address></a:ReplyTo>`,
    '<d:Probe><d:Types>dn:NetworkVideoTransmitter</d:Types></d:Probe>',
  );
}

export interface DeviceDescription {
  messageId: string;
  endpoint: string;
  /** QNames; the prefixes dn (ONVIF network) and tds (ONVIF device) are declared. Default DEFAULT_TYPES. */
  types?: readonly string[];
  scopes?: readonly string[];
  xaddrs?: readonly string[];
  metadataVersion?: number;
  appSequence?: AppSequence;
}

function description(d: DeviceDescription, withXAddrs: boolean): string {
  const scopes = d.scopes ?? [];
  const xaddrs = d.xaddrs ?? [];
  return (
    `<a:EndpointReference><a:Address>${esc(d.endpoint)}</a:Address></a:EndpointReference>` +
    `<d:Types>${list('types', d.types ?? DEFAULT_TYPES)}</d:Types>` +
    (scopes.length > 0 ? `<d:Scopes>${list('scopes', scopes)}</d:Scopes>` : '') +
    (withXAddrs && xaddrs.length > 0 ? `<d:XAddrs>${list('xaddrs', xaddrs)}</d:XAddrs>` : '') +
    (withXAddrs ? `<d:MetadataVersion>${d.metadataVersion ?? 1}</d:MetadataVersion>` : '')
  );
}

/** The answer to a Probe, sent unicast to the prober; `relatesTo` is the Probe's MessageID. */
export function buildProbeMatch(d: DeviceDescription & { relatesTo: string }): string {
  return envelope(
    addressing('ProbeMatches', d.messageId, WSA_ANONYMOUS, d.relatesTo) + appSequence(d.appSequence),
    `<d:ProbeMatches><d:ProbeMatch>${description(d, true)}</d:ProbeMatch></d:ProbeMatches>`,
  );
}

/** The multicast announcement of a device joining the network. */
export function buildHello(d: DeviceDescription): string {
  return envelope(
    addressing('Hello', d.messageId, WSD_TO) + appSequence(d.appSequence),
    `<d:Hello>${description(d, true)}</d:Hello>`,
  );
}

/** The multicast announcement of a device leaving; only the endpoint and types are sent. */
export function buildBye(d: Pick<DeviceDescription, 'messageId' | 'endpoint' | 'types' | 'appSequence'>): string {
  return envelope(
    addressing('Bye', d.messageId, WSD_TO) + appSequence(d.appSequence),
    `<d:Bye>${description(d, false)}</d:Bye>`,
  );
}
