// What a WHEP endpoint (RFC 9725) needs from a browser's SDP offer (JSEP, RFC 8829): per media
// section its mid, direction, codecs (payload type, rtpmap, fmtp, rtcp-fb, RTX), header extensions
// and candidates, and the transport: ICE credentials, DTLS fingerprint and setup role, BUNDLE.
//
// The grammar is sdp.ts's (the same line model, size and media bounds); this file adds what WebRTC
// requires of an offer and refuses an offer a session could not be built from, with a code the API
// maps to a 400 and a message that names the line or section at fault.

import { parseSdp, staticPayload, type SdpFmtp, type SdpLine, type SdpMedia, type SdpSession } from '../sdp.js';
import { SdpError } from '../errors.js';
import { parseCandidate, type IceCandidate } from './candidate.js';
import { CandidateError, OfferError } from './errors.js';

export type Direction = 'sendrecv' | 'sendonly' | 'recvonly' | 'inactive';
export type SetupRole = 'actpass' | 'active' | 'passive';

export interface RtcpFeedback {
  /** Lower-cased: 'nack', 'ccm', 'goog-remb', 'transport-cc', … */
  readonly type: string;
  /** Lower-cased, null when absent: 'pli' (with nack), 'fir' (with ccm). */
  readonly parameter: string | null;
}

export interface OfferCodec {
  readonly payloadType: number;
  /** Upper-cased: 'H264', 'H265', 'VP8', 'OPUS', 'PCMU', 'PCMA', 'RTX', … */
  readonly encoding: string;
  readonly clockRate: number;
  readonly channels: number | null;
  /** Lower-cased names, values as written (empty when the offer has no fmtp for it). */
  readonly fmtp: SdpFmtp;
  /** This payload type's rtcp-fb lines and the `*` ones, in offer order, without duplicates. */
  readonly rtcpFeedback: readonly RtcpFeedback[];
}

export interface HeaderExtension {
  readonly id: number;
  readonly uri: string;
  readonly direction: Direction | null;
}

export interface Fingerprint {
  /** Lower-cased hash function name, e.g. 'sha-256'. */
  readonly algorithm: string;
  /** Upper-cased colon-separated hex, as browsers write it. */
  readonly value: string;
}

export interface OfferMedia {
  /** Position in the offer; the answer has one section per offered section, in the same order. */
  readonly index: number;
  /** 'audio', 'video', 'application' (data channels) or anything else the peer offers. */
  readonly kind: string;
  readonly mid: string;
  /** 0 when the offerer rejects (bundle-only / disabled) this section. */
  readonly port: number;
  readonly proto: string;
  readonly direction: Direction;
  /** RTP codecs in the offerer's order of preference; empty for non-RTP sections. */
  readonly codecs: readonly OfferCodec[];
  /** RTX payload type per original payload type (from `apt=`). */
  readonly rtx: ReadonlyMap<number, number>;
  readonly extensions: readonly HeaderExtension[];
  readonly iceUfrag: string;
  readonly icePwd: string;
  readonly fingerprints: readonly Fingerprint[];
  readonly setup: SetupRole;
  readonly rtcpMux: boolean;
  readonly rtcpRsize: boolean;
  readonly candidates: readonly IceCandidate[];
  readonly endOfCandidates: boolean;
}

export interface WebRtcOffer {
  /** The mids of the first BUNDLE group, in its order; empty when the offer bundles nothing. */
  readonly bundle: readonly string[];
  readonly iceOptions: readonly string[];
  readonly extmapAllowMixed: boolean;
  readonly media: readonly OfferMedia[];
}

/** More candidates than a browser ever gathers per section; more is a flood, not an offer. */
export const MAX_CANDIDATES_PER_MEDIA = 32;

const RTP_PROTOS = new Set(['UDP/TLS/RTP/SAVPF', 'UDP/TLS/RTP/SAVP', 'TCP/TLS/RTP/SAVPF', 'RTP/SAVPF']);
const DIRECTIONS: readonly string[] = ['sendrecv', 'sendonly', 'recvonly', 'inactive'];
// RFC 8839 5.4: ice-char = ALPHA / DIGIT / "+" / "/"; ufrag 4..256, pwd 22..256 characters.
const ICE_UFRAG = /^[A-Za-z0-9+/]{4,256}$/;
const ICE_PWD = /^[A-Za-z0-9+/]{22,256}$/;
// RFC 8122 5: a hash name token, then upper- or lower-case hex bytes joined by colons.
const FINGERPRINT = /^([A-Za-z0-9-]{1,32})\s+([0-9A-Fa-f]{2}(?::[0-9A-Fa-f]{2}){15,63})$/;
// RFC 8843: a mid is an RFC 8866 token. Browsers use short numbers; 32 characters bound it.
const MID = /^[A-Za-z0-9!#$%&'*+\-.^_`{|}~]{1,32}$/;

/** Reads a browser's offer, or throws OfferError. */
export function readWebRtcOffer(input: string | Uint8Array): WebRtcOffer {
  let sdp: SdpSession;
  try {
    sdp = parseSdp(input);
  } catch (err) {
    if (err instanceof SdpError) throw new OfferError('malformed_sdp', err.message);
    throw err;
  }
  if (sdp.media.length === 0) throw new OfferError('no_media', 'the offer has no media section');

  const session = sessionAttributes(sdp.lines);
  const sections = sdp.media.map((m, index) => readMedia(m, index, session));
  const mids = new Set<string>();
  for (const s of sections) {
    if (mids.has(s.media.mid))
      throw new OfferError('duplicate_mid', `${s.where}: mid ${JSON.stringify(s.media.mid)} used twice`);
    mids.add(s.media.mid);
  }
  for (const mid of session.bundle) {
    if (!mids.has(mid))
      throw new OfferError('bad_attribute', `BUNDLE names mid ${JSON.stringify(mid)}, which no media section has`);
  }
  // RFC 8843 7.2: a bundle-only section may leave its transport to the group's first (tagged) section.
  const tag = sections.find((s) => s.media.mid === session.bundle[0]);
  const media = sections.map((s) => withTransport(s, session.bundle.includes(s.media.mid) ? tag : undefined));
  return { bundle: session.bundle, iceOptions: session.iceOptions, extmapAllowMixed: session.extmapAllowMixed, media };
}

/** The DTLS role the answer takes (RFC 8842 5.2): the other end of the offer's, active for actpass. */
export function answerSetupRole(offer: SetupRole): 'active' | 'passive' {
  return offer === 'active' ? 'passive' : 'active';
}

/** The direction of our answering section for a send-only server: what the peer wants to receive. */
export function answerDirection(offered: Direction): Direction {
  return offered === 'recvonly' || offered === 'sendrecv' ? 'sendonly' : 'inactive';
}

interface SessionAttributes extends TransportAttributes {
  bundle: string[];
  iceOptions: string[];
  extmapAllowMixed: boolean;
}

function sessionAttributes(lines: readonly SdpLine[]): SessionAttributes {
  const attrs: SessionAttributes = { bundle: [], iceOptions: [], extmapAllowMixed: false, ...noTransport() };
  let sawBundle = false;
  for (const line of lines) {
    const a = attribute(line);
    if (!a) continue;
    if (a.name === 'group') {
      const [semantics, ...ids] = a.value.split(/\s+/);
      // Only the first BUNDLE group matters: browsers send exactly one.
      if (semantics?.toUpperCase() === 'BUNDLE' && !sawBundle) {
        sawBundle = true;
        attrs.bundle = ids.filter((id) => id !== '');
      }
    } else if (a.name === 'ice-options') {
      attrs.iceOptions = a.value.split(/\s+/).filter((o) => o !== '');
    } else if (a.name === 'extmap-allow-mixed') {
      attrs.extmapAllowMixed = true;
    } else {
      readTransportAttribute(a, attrs, 'session');
    }
  }
  return attrs;
}

interface TransportAttributes {
  iceUfrag: string | null;
  icePwd: string | null;
  fingerprints: Fingerprint[];
  setup: SetupRole | null;
  direction: Direction | null;
  extensions: HeaderExtension[];
}

function noTransport(): TransportAttributes {
  return { iceUfrag: null, icePwd: null, fingerprints: [], setup: null, direction: null, extensions: [] };
}

/** The attributes JSEP allows at session level and in media sections (the media one wins). */
function readTransportAttribute(a: Attribute, into: TransportAttributes, where: string): boolean {
  switch (a.name) {
    case 'ice-ufrag':
      if (into.iceUfrag === null) into.iceUfrag = a.value;
      return true;
    case 'ice-pwd':
      if (into.icePwd === null) into.icePwd = a.value;
      return true;
    case 'fingerprint': {
      const m = FINGERPRINT.exec(a.value);
      if (!m) throw new OfferError('bad_fingerprint', `${where}: malformed a=fingerprint`);
      into.fingerprints.push({ algorithm: (m[1] ?? '').toLowerCase(), value: (m[2] ?? '').toUpperCase() });
      return true;
    }
    case 'setup': {
      const role = a.value.toLowerCase();
      if (role !== 'actpass' && role !== 'active' && role !== 'passive') {
        throw new OfferError(
          'bad_setup',
          `${where}: a=setup:${a.value.slice(0, 20)} is not actpass, active or passive`,
        );
      }
      if (into.setup === null) into.setup = role;
      return true;
    }
    case 'extmap':
      into.extensions.push(readExtmap(a.value, where));
      return true;
    default:
      if (DIRECTIONS.includes(a.name) && a.value === '') {
        if (into.direction === null) into.direction = a.name as Direction;
        return true;
      }
      return false;
  }
}

type PartialMedia = Omit<OfferMedia, 'iceUfrag' | 'icePwd' | 'fingerprints' | 'setup'>;

interface SectionDraft {
  where: string;
  media: PartialMedia;
  transport: Pick<TransportAttributes, 'iceUfrag' | 'icePwd' | 'fingerprints' | 'setup'>;
}

function withTransport(s: SectionDraft, tag: SectionDraft | undefined): OfferMedia {
  const own = s.transport;
  const from =
    own.iceUfrag === null && own.icePwd === null && own.fingerprints.length === 0 && tag ? tag.transport : own;
  const { iceUfrag, icePwd, fingerprints, setup } = from;
  if (iceUfrag === null || !ICE_UFRAG.test(iceUfrag))
    throw new OfferError('bad_ice_credentials', `${s.where}: missing or malformed a=ice-ufrag`);
  if (icePwd === null || !ICE_PWD.test(icePwd))
    throw new OfferError('bad_ice_credentials', `${s.where}: missing or malformed a=ice-pwd`);
  if (fingerprints.length === 0)
    throw new OfferError('bad_fingerprint', `${s.where}: no a=fingerprint (DTLS-SRTP needs one)`);
  if (setup === null) throw new OfferError('bad_setup', `${s.where}: no a=setup`);
  return { ...s.media, iceUfrag, icePwd, fingerprints, setup };
}

function readMedia(m: SdpMedia, index: number, session: SessionAttributes): SectionDraft {
  const where = `media ${index} (${m.media})`;
  const own = noTransport();
  let mid: string | null = null;
  let rtcpMux = false;
  let rtcpRsize = false;
  let endOfCandidates = false;
  const candidates: IceCandidate[] = [];
  const feedback: Array<{ pt: number | '*'; fb: RtcpFeedback }> = [];

  for (const line of m.lines) {
    const a = attribute(line);
    if (!a || readTransportAttribute(a, own, where)) continue;
    switch (a.name) {
      case 'mid':
        if (!MID.test(a.value))
          throw new OfferError(
            'bad_mid',
            `${where}: a=mid ${JSON.stringify(a.value.slice(0, 40))} is not a token of 1..32 characters`,
          );
        if (mid === null) mid = a.value;
        break;
      case 'rtcp-mux':
        rtcpMux = true;
        break;
      case 'rtcp-rsize':
        rtcpRsize = true;
        break;
      case 'end-of-candidates':
        endOfCandidates = true;
        break;
      case 'candidate':
        if (candidates.length === MAX_CANDIDATES_PER_MEDIA) {
          throw new OfferError('too_many_candidates', `${where}: more than ${MAX_CANDIDATES_PER_MEDIA} candidates`);
        }
        try {
          candidates.push(parseCandidate(a.value));
        } catch (err) {
          if (err instanceof CandidateError)
            throw new OfferError('bad_candidate', `${where}: candidate ${candidates.length + 1}: ${err.message}`);
          throw err;
        }
        break;
      case 'rtcp-fb':
        feedback.push(readRtcpFeedback(a.value, where));
        break;
      default:
        break;
    }
  }

  if (mid === null) throw new OfferError('bad_mid', `${where}: no a=mid (JSEP offers name every section)`);

  const isRtp = RTP_PROTOS.has(m.proto.toUpperCase());
  if (!isRtp && (m.media === 'audio' || m.media === 'video')) {
    throw new OfferError(
      'bad_media',
      `${where}: protocol ${m.proto.slice(0, 40)} is not DTLS-SRTP (UDP/TLS/RTP/SAVPF)`,
    );
  }
  const codecs = isRtp ? readCodecs(m, feedback, where) : [];
  const rtx = new Map<number, number>();
  for (const c of codecs) {
    const apt = c.encoding === 'RTX' ? c.fmtp.get('apt') : undefined;
    if (apt !== undefined && /^\d{1,3}$/.test(apt)) rtx.set(Number(apt), c.payloadType);
  }
  const extensions = own.extensions.length > 0 ? own.extensions : session.extensions;
  const ids = new Set<number>();
  for (const e of extensions) {
    if (ids.has(e.id)) throw new OfferError('bad_attribute', `${where}: extmap id ${e.id} used twice`);
    ids.add(e.id);
  }

  return {
    where,
    media: {
      index,
      kind: m.media,
      mid,
      port: m.port,
      proto: m.proto,
      direction: own.direction ?? session.direction ?? 'sendrecv',
      codecs,
      rtx,
      extensions,
      rtcpMux,
      rtcpRsize,
      candidates,
      endOfCandidates,
    },
    transport: {
      iceUfrag: own.iceUfrag ?? session.iceUfrag,
      icePwd: own.icePwd ?? session.icePwd,
      fingerprints: own.fingerprints.length > 0 ? own.fingerprints : session.fingerprints,
      setup: own.setup ?? session.setup,
    },
  };
}

function readCodecs(
  m: SdpMedia,
  feedback: ReadonlyArray<{ pt: number | '*'; fb: RtcpFeedback }>,
  where: string,
): OfferCodec[] {
  const codecs: OfferCodec[] = [];
  const seen = new Set<number>();
  for (const format of m.formats) {
    if (!/^\d{1,3}$/.test(format) || Number(format) > 127)
      throw new OfferError('bad_media', `${where}: payload type ${JSON.stringify(format.slice(0, 10))} is not 0..127`);
    const pt = Number(format);
    if (seen.has(pt)) throw new OfferError('bad_media', `${where}: payload type ${pt} listed twice`);
    seen.add(pt);
    const map = m.rtpmap.get(pt);
    // RFC 3551's static audio types may come without an rtpmap line (the table is sdp.ts's).
    const fixed = m.media === 'audio' && !map ? staticPayload(pt) : undefined;
    if (fixed && fixed.clockRate !== 8000) continue;
    // A dynamic type without rtpmap cannot be used; skip it rather than refuse the offer (RFC 8866 6.6).
    if (!map && !fixed) continue;
    const fbs: RtcpFeedback[] = [];
    for (const f of feedback) {
      if ((f.pt === '*' || f.pt === pt) && !fbs.some((x) => x.type === f.fb.type && x.parameter === f.fb.parameter))
        fbs.push(f.fb);
    }
    codecs.push({
      payloadType: pt,
      encoding: (map?.encoding ?? fixed?.encoding ?? '').toUpperCase(),
      clockRate: map?.clockRate ?? fixed?.clockRate ?? 0,
      channels: map?.channels ?? (m.media === 'audio' ? 1 : null),
      fmtp: m.fmtp.get(pt) ?? new Map<string, string>(),
      rtcpFeedback: fbs,
    });
  }
  return codecs;
}

function readRtcpFeedback(value: string, where: string): { pt: number | '*'; fb: RtcpFeedback } {
  const [ptField = '', type = '', parameter, ...rest] = value.split(/\s+/);
  const pt = ptField === '*' ? '*' : /^\d{1,3}$/.test(ptField) && Number(ptField) <= 127 ? Number(ptField) : null;
  if (pt === null || type === '' || rest.length > 1)
    throw new OfferError('bad_attribute', `${where}: malformed a=rtcp-fb:${value.slice(0, 40)}`);
  return { pt, fb: { type: type.toLowerCase(), parameter: parameter === undefined ? null : parameter.toLowerCase() } };
}

function readExtmap(value: string, where: string): HeaderExtension {
  // RFC 8285 8: extmap:<value>["/"<direction>] <URI> <extensionattributes>
  const m = /^(\d{1,4})(?:\/([a-z]+))?\s+(\S+)(?:\s+.*)?$/.exec(value);
  const id = m ? Number(m[1]) : NaN;
  const dir = m?.[2];
  // 1..14 one-byte, 1..255 two-byte headers; 4096..4351 are for negotiation only and never used.
  if (!m || id < 1 || id > 255 || (dir !== undefined && !DIRECTIONS.includes(dir))) {
    throw new OfferError('bad_attribute', `${where}: malformed a=extmap:${value.slice(0, 60)}`);
  }
  return { id, uri: m[3] ?? '', direction: (dir as Direction | undefined) ?? null };
}

interface Attribute {
  /** Lower-cased. */
  readonly name: string;
  readonly value: string;
}

function attribute(line: SdpLine): Attribute | null {
  if (line.type !== 'a') return null;
  const colon = line.value.indexOf(':');
  if (colon < 0) return { name: line.value.trim().toLowerCase(), value: '' };
  return { name: line.value.slice(0, colon).trim().toLowerCase(), value: line.value.slice(colon + 1).trim() };
}
