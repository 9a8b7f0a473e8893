// The SDP answer a WHEP POST gets (RFC 9725, JSEP RFC 8829 5.3), written from the codec choice
// rather than taken from the stack: libdatachannel's own answer advertises feedback we do not
// implement (goog-remb) and leaves a dropped section with no format at all, which browsers refuse.
// From the stack's local description only the transport is taken: ICE credentials, the DTLS
// fingerprint, the port and address, and its host candidates.
//
// One section per offered section, in order, same mids. The chosen video (and audio) sections are
// sendonly with the offered payload type and the camera's parameters; every other section is
// rejected (port 0, outside BUNDLE). We never trickle: `a=end-of-candidates` in every used section.

import type { CodecChoice } from './codec-match.js';
import { LocalDescriptionError } from './errors.js';
import type { WebRtcOffer } from './offer.js';

export interface LocalTransport {
  iceUfrag: string;
  icePwd: string;
  /** `sha-256 AB:CD:…` */
  fingerprint: string;
  /** The DTLS role the stack took (`active` after a browser's `actpass`). */
  setup: 'active' | 'passive';
  port: number;
  address: string;
  /** The `candidate:…` attribute values (without `a=`). */
  candidates: string[];
}

/** The transport of the stack's local description (trusted text: our own stack wrote it). */
export function readLocalTransport(sdp: string): LocalTransport {
  const lines = sdp.split(/\r?\n/);
  const value = (prefix: string) =>
    lines
      .find((l) => l.startsWith(prefix))
      ?.slice(prefix.length)
      .trim();
  const iceUfrag = value('a=ice-ufrag:');
  const icePwd = value('a=ice-pwd:');
  const fingerprint = value('a=fingerprint:');
  const setup = value('a=setup:');
  const m = /^m=\S+ (\d+) /.exec(lines.find((l) => l.startsWith('m=')) ?? '');
  const address = /^c=IN IP[46] (\S+)$/.exec(lines.find((l) => l.startsWith('c=')) ?? '')?.[1];
  if (!iceUfrag || !icePwd || !fingerprint || !m || !address || (setup !== 'active' && setup !== 'passive'))
    throw new LocalDescriptionError('the WebRTC stack gave no usable local description');
  const candidates = [...new Set(lines.filter((l) => l.startsWith('a=candidate:')).map((l) => l.slice(2).trim()))];
  return { iceUfrag, icePwd, fingerprint, setup, port: Number(m[1]), address, candidates };
}

export interface AnswerIds {
  videoSsrc: number;
  audioSsrc: number;
  cname: string;
  /** The MediaStream id the browser groups the tracks under. */
  streamId: string;
  /** The o= session id (decimal digits). */
  sessionId: string;
}

export function writeAnswer(offer: WebRtcOffer, choice: CodecChoice, local: LocalTransport, ids: AnswerIds): string {
  const chosen = [choice.video, ...(choice.audio ? [choice.audio] : [])];
  const used = offer.media.filter((m) => chosen.some((c) => c.offerIndex === m.index));
  const family = local.address.includes(':') ? 'IP6' : 'IP4';
  const out = ['v=0', `o=- ${ids.sessionId} 1 IN ${family} ${local.address}`, 's=-', 't=0 0'];
  if (offer.bundle.length > 0) out.push(`a=group:BUNDLE ${used.map((m) => m.mid).join(' ')}`);
  out.push(`a=msid-semantic:WMS ${ids.streamId}`, `a=fingerprint:${local.fingerprint}`);
  for (const m of offer.media) {
    const c = chosen.find((x) => x.offerIndex === m.index);
    const offeredFormat = m.codecs[0]?.payloadType ?? 0;
    if (!c) {
      // Rejected (JSEP 5.3.1): port 0, one of the offered formats, no transport.
      out.push(
        `m=${m.kind} 0 ${m.proto} ${m.kind === 'application' ? 'webrtc-datachannel' : offeredFormat}`,
        `c=IN ${family} ${local.address}`,
        `a=mid:${m.mid}`,
        'a=inactive',
      );
      continue;
    }
    const ssrc = c === choice.video ? ids.videoSsrc : ids.audioSsrc;
    out.push(
      `m=${m.kind} ${local.port} ${m.proto} ${c.payloadType}`,
      `c=IN ${family} ${local.address}`,
      `a=mid:${m.mid}`,
      'a=sendonly',
    );
    out.push(
      `a=msid:${ids.streamId} ${m.kind}`,
      `a=ssrc:${ssrc} cname:${ids.cname}`,
      `a=ssrc:${ssrc} msid:${ids.streamId} ${m.kind}`,
    );
    if (m.rtcpMux) out.push('a=rtcp-mux');
    if (m.rtcpRsize) out.push('a=rtcp-rsize');
    if (c === choice.video) {
      out.push(`a=rtpmap:${c.payloadType} ${choice.video.encoding}/90000`);
      for (const fb of choice.video.rtcpFeedback)
        out.push(`a=rtcp-fb:${c.payloadType} ${fb.type}${fb.parameter ? ` ${fb.parameter}` : ''}`);
      out.push(`a=fmtp:${c.payloadType} ${choice.video.fmtp}`);
    } else if (choice.audio) {
      const a = choice.audio;
      out.push(
        `a=rtpmap:${a.payloadType} ${a.encoding === 'OPUS' ? 'opus' : a.encoding}/${a.clockRate}${a.channels > 1 ? `/${a.channels}` : ''}`,
      );
    }
    out.push(`a=setup:${local.setup}`, `a=ice-ufrag:${local.iceUfrag}`, `a=ice-pwd:${local.icePwd}`);
    for (const candidate of local.candidates) out.push(`a=${candidate}`);
    out.push('a=end-of-candidates');
  }
  return `${out.join('\r\n')}\r\n`;
}

/**
 * The offer as handed to the stack: without mDNS (`.local`) host candidates, which would make it
 * resolve names by multicast from the box; the peer is found from its own connectivity checks.
 */
export function withoutMdnsCandidates(sdp: string): string {
  return sdp
    .split(/\r?\n/)
    .filter((l) => !(l.startsWith('a=candidate:') && /\s\S+\.local\s/i.test(l)))
    .join('\r\n');
}
