import { describe, expect, it } from 'vitest';
import type { OfferErrorCode } from '../../../src/domain/errors.js';
import { SDP_MAX_BYTES } from '../../../src/media/sdp.js';
import { parseCandidate } from '../../../src/media/webrtc/candidate.js';
import { CandidateError, OfferError } from '../../../src/media/webrtc/errors.js';
import {
  MAX_CANDIDATES_PER_MEDIA,
  answerDirection,
  answerSetupRole,
  readWebRtcOffer,
  type OfferMedia,
} from '../../../src/media/webrtc/offer.js';
import { makeRng, mutate } from '../../support/fuzz.js';
import { CHROMIUM_OFFER, FIREFOX_OFFER, SAFARI_OFFER } from './offers.js';

function section(media: readonly OfferMedia[], kind: string): OfferMedia {
  const m = media.find((x) => x.kind === kind);
  if (!m) throw new Error(`no ${kind} section`);
  return m;
}

describe('readWebRtcOffer: browser offers', () => {
  it("reads Chromium's recvonly offer: BUNDLE, mids, H.264 payload types with their fmtp, RTX, feedback, extensions, mDNS candidates", () => {
    const offer = readWebRtcOffer(CHROMIUM_OFFER);
    expect(offer.bundle).toEqual(['0', '1']);
    expect(offer.extmapAllowMixed).toBe(true);
    expect(offer.media.map((m) => [m.kind, m.mid, m.direction])).toEqual([
      ['video', '0', 'recvonly'],
      ['audio', '1', 'recvonly'],
    ]);
    const video = section(offer.media, 'video');
    const h264 = video.codecs
      .filter((c) => c.encoding === 'H264')
      .map((c) => [c.payloadType, c.fmtp.get('packetization-mode'), c.fmtp.get('profile-level-id')]);
    expect(h264).toEqual([
      [102, '1', '42001f'],
      [104, '0', '42001f'],
      [108, '1', '42e01f'],
      [114, '0', '42e01f'],
      [116, '1', '4d001f'],
      [39, '0', '4d001f'],
      [41, '1', 'f4001f'],
      [43, '0', 'f4001f'],
    ]);
    expect(video.codecs.find((c) => c.payloadType === 116)?.rtcpFeedback).toEqual([
      { type: 'goog-remb', parameter: null },
      { type: 'transport-cc', parameter: null },
      { type: 'ccm', parameter: 'fir' },
      { type: 'nack', parameter: null },
      { type: 'nack', parameter: 'pli' },
    ]);
    expect(video.rtx.get(116)).toBe(117);
    expect(video.extensions.find((e) => e.uri === 'urn:ietf:params:rtp-hdrext:sdes:mid')?.id).toBe(9);
    expect(video.iceUfrag).toBe('/Yen');
    expect(video.icePwd).toBe('BjtMzw0WLYobC+WbEL97P0Rj');
    expect(video.fingerprints).toEqual([
      { algorithm: 'sha-256', value: expect.stringMatching(/^21:8C:0C(:[0-9A-F]{2}){29}$/) },
    ]);
    expect(video.setup).toBe('actpass');
    expect(video.rtcpMux).toBe(true);
    expect(video.rtcpRsize).toBe(true);
    expect(video.candidates.length).toBeGreaterThan(0);
    expect(video.candidates.every((c) => c.mdns && c.type === 'host' && c.address.endsWith('.local'))).toBe(true);
    const audio = section(offer.media, 'audio');
    expect(audio.codecs.map((c) => `${c.payloadType} ${c.encoding}/${c.clockRate}/${c.channels}`)).toEqual([
      '111 OPUS/48000/2',
      '63 RED/48000/2',
      '9 G722/8000/1',
      '0 PCMU/8000/1',
      '8 PCMA/8000/1',
      '13 CN/8000/1',
      '110 TELEPHONE-EVENT/48000/1',
      '126 TELEPHONE-EVENT/8000/1',
    ]);
  });

  it("reads Firefox's layout: session-level fingerprint and setup, media-level ICE, a TCP candidate, end-of-candidates", () => {
    const offer = readWebRtcOffer(FIREFOX_OFFER);
    const video = section(offer.media, 'video');
    expect(video.fingerprints[0]?.value.startsWith('0A:1B')).toBe(true);
    expect(video.setup).toBe('actpass');
    expect(video.iceUfrag).toBe('8a1b2c3d');
    expect(video.endOfCandidates).toBe(true);
    expect(video.candidates.map((c) => [c.transport, c.tcpType, c.mdns])).toEqual([
      ['udp', null, true],
      ['tcp', 'active', true],
    ]);
    expect(video.codecs.find((c) => c.payloadType === 97)?.fmtp.get('packetization-mode')).toBeUndefined();
    // PCMU, PCMA and G722 are offered by static type without an rtpmap line.
    expect(section(offer.media, 'audio').codecs.map((c) => c.encoding)).toEqual([
      'OPUS',
      'G722',
      'PCMU',
      'PCMA',
      'TELEPHONE-EVENT',
    ]);
  });

  it("reads Safari's bundle-only audio section with the transport of the BUNDLE group's first section", () => {
    const offer = readWebRtcOffer(SAFARI_OFFER);
    const audio = section(offer.media, 'audio');
    expect(audio.port).toBe(0);
    expect(audio.iceUfrag).toBe('rL9k');
    expect(audio.fingerprints[0]?.value.startsWith('AA:BB')).toBe(true);
    const h265 = section(offer.media, 'video').codecs.find((c) => c.encoding === 'H265');
    expect(h265?.fmtp.get('profile-id')).toBe('1');
    expect(section(offer.media, 'video').candidates[0]).toMatchObject({ address: '192.168.1.20', mdns: false });
  });

  it('takes bytes as well as text', () => {
    expect(readWebRtcOffer(Buffer.from(CHROMIUM_OFFER)).media).toHaveLength(2);
  });
});

describe('answer roles', () => {
  it.each([
    ['actpass', 'active'],
    ['active', 'passive'],
    ['passive', 'active'],
  ] as const)('setup %s → %s', (offer, answer) => {
    expect(answerSetupRole(offer)).toBe(answer);
  });

  it.each([
    ['recvonly', 'sendonly'],
    ['sendrecv', 'sendonly'],
    ['sendonly', 'inactive'],
    ['inactive', 'inactive'],
  ] as const)('direction %s → %s', (offer, answer) => {
    expect(answerDirection(offer)).toBe(answer);
  });
});

// Each row breaks the Chromium offer in one way; the error must say what and where.
const replaceLine = (from: RegExp, to: string) => (sdp: string) => sdp.replace(from, to);
const dropLines = (re: RegExp) => (sdp: string) =>
  sdp
    .split('\r\n')
    .filter((l) => !re.test(l))
    .join('\r\n');

const MALFORMED: Array<[string, (sdp: string) => string, OfferErrorCode, RegExp]> = [
  ['empty body', () => '', 'malformed_sdp', /empty/],
  ['not SDP', () => '<html>offer</html>', 'malformed_sdp', /not a <type>=<value>/],
  ['over the size bound', (s) => s + `a=x-pad:${'p'.repeat(SDP_MAX_BYTES)}\r\n`, 'malformed_sdp', /over/],
  ['no media', (s) => s.slice(0, s.indexOf('m=video')), 'no_media', /no media/],
  ['a section without mid', dropLines(/^a=mid:1$/), 'bad_mid', /media 1 \(audio\): no a=mid/],
  ['a mid with blanks', replaceLine(/a=mid:0/, 'a=mid:0 1'), 'bad_mid', /media 0/],
  ['the same mid twice', replaceLine(/a=mid:1/, 'a=mid:0'), 'duplicate_mid', /mid "0" used twice/],
  [
    'BUNDLE naming an unknown mid',
    replaceLine(/a=group:BUNDLE 0 1/, 'a=group:BUNDLE 0 1 7'),
    'bad_attribute',
    /BUNDLE names mid "7"/,
  ],
  ['no ice-ufrag', dropLines(/^a=ice-ufrag:/), 'bad_ice_credentials', /ice-ufrag/],
  ['a short ice-pwd', (s) => s.replace(/a=ice-pwd:\S+/g, 'a=ice-pwd:short'), 'bad_ice_credentials', /ice-pwd/],
  ['no fingerprint', dropLines(/^a=fingerprint:/), 'bad_fingerprint', /no a=fingerprint/],
  [
    'a fingerprint that is not hex',
    replaceLine(/a=fingerprint:sha-256 21:8C/, 'a=fingerprint:sha-256 ZZ:8C'),
    'bad_fingerprint',
    /malformed/,
  ],
  ['setup holdconn', replaceLine(/a=setup:actpass/, 'a=setup:holdconn'), 'bad_setup', /holdconn/],
  ['no setup', dropLines(/^a=setup:/), 'bad_setup', /no a=setup/],
  ['plain RTP/AVP video', replaceLine(/UDP\/TLS\/RTP\/SAVPF 96/, 'RTP/AVP 96'), 'bad_media', /not DTLS-SRTP/],
  ['a payload type over 127', replaceLine(/SAVPF 96 97/, 'SAVPF 96 200'), 'bad_media', /"200" is not 0\.\.127/],
  ['a payload type listed twice', replaceLine(/SAVPF 96 97/, 'SAVPF 96 96'), 'bad_media', /96 listed twice/],
  ['an extmap id of 0', replaceLine(/a=extmap:1 /, 'a=extmap:0 '), 'bad_attribute', /extmap:0/],
  ['an extmap id used twice', replaceLine(/a=extmap:2 /, 'a=extmap:1 '), 'bad_attribute', /extmap id 1 used twice/],
  ['an rtcp-fb without type', replaceLine(/a=rtcp-fb:96 goog-remb/, 'a=rtcp-fb:96'), 'bad_attribute', /rtcp-fb/],
  [
    'a candidate with a bad port',
    replaceLine(/(a=candidate:\S+ 1 udp \d+ \S+) \d+/, '$1 70000'),
    'bad_candidate',
    /media 0 \(video\): candidate 1: port 70000/,
  ],
  ['a candidate without typ', replaceLine(/ typ host/, ' type host'), 'bad_candidate', /typ/],
  [
    'a candidate flood',
    (s) =>
      s.replace(
        'a=mid:0\r\n',
        `a=mid:0\r\n${'a=candidate:1 1 udp 1 10.0.0.1 9 typ host\r\n'.repeat(MAX_CANDIDATES_PER_MEDIA + 1)}`,
      ),
    'too_many_candidates',
    /more than 32 candidates/,
  ],
];

describe('readWebRtcOffer: malformed offers', () => {
  it.each(MALFORMED)('%s → %s', (_name, breakIt, code, message) => {
    const broken = breakIt(CHROMIUM_OFFER);
    let caught: unknown;
    try {
      readWebRtcOffer(broken);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(OfferError);
    expect((caught as OfferError).code).toBe(code);
    expect((caught as OfferError).message).toMatch(message);
  });
});

describe('parseCandidate', () => {
  it.each([
    [
      'mDNS host',
      '3285839065 1 udp 2113937151 a8884af2-a7d9-4797-aaf8-9ef4f033c32e.local 50818 typ host generation 0 network-cost 999',
      { address: 'a8884af2-a7d9-4797-aaf8-9ef4f033c32e.local', port: 50818, type: 'host', mdns: true },
    ],
    [
      'IPv4 host',
      '1 1 UDP 2122252543 192.168.1.20 61234 typ host',
      { transport: 'udp', mdns: false, address: '192.168.1.20' },
    ],
    ['IPv6 host', '2 1 udp 2122262783 fd00::2 40000 typ host', { address: 'fd00::2', mdns: false }],
    [
      'srflx with raddr',
      '842163049 1 udp 1677729535 203.0.113.7 3478 typ srflx raddr 0.0.0.0 rport 0',
      { type: 'srflx', relatedAddress: '0.0.0.0', relatedPort: 0 },
    ],
    [
      'TCP passive',
      'abc+/ 1 tcp 1518280447 10.0.0.5 9 typ host tcptype passive',
      { transport: 'tcp', tcpType: 'passive' },
    ],
  ])('%s', (_name, value, expected) => {
    expect(parseCandidate(value)).toMatchObject(expected);
  });

  it.each([
    ['too few fields', '1 1 udp 1 10.0.0.1 9 typ'],
    ['a foundation with a dash', 'a-b 1 udp 1 10.0.0.1 9 typ host'],
    ['component 0', '1 0 udp 1 10.0.0.1 9 typ host'],
    ['sctp transport', '1 1 sctp 1 10.0.0.1 9 typ host'],
    ['priority 0', '1 1 udp 0 10.0.0.1 9 typ host'],
    ['an IPv4 address out of range', '1 1 udp 1 10.0.0.256 9 typ host'],
    ['a name with forbidden characters', '1 1 udp 1 bad_name!.local 9 typ host'],
    ['an unknown type', '1 1 udp 1 10.0.0.1 9 typ local'],
    ['a dangling extension', '1 1 udp 1 10.0.0.1 9 typ host generation'],
    ['a bad rport', '1 1 udp 1 10.0.0.1 9 typ srflx raddr 10.0.0.2 rport 99999'],
  ])('refuses %s', (_name, value) => {
    expect(() => parseCandidate(value)).toThrow(CandidateError);
  });
});

describe('readWebRtcOffer fuzz', () => {
  const rng = makeRng();
  const SDP_ALPHABET = 'am=:;/ 0123456789.-+\r\nabcdefABCDEF\t*';

  it(`fuzz (seed ${rng.seed}): a mutated offer is read or refused with an OfferError, and what is read keeps its bounds`, () => {
    const samples = [CHROMIUM_OFFER, FIREFOX_OFFER, SAFARI_OFFER];
    let read = 0;
    let refused = 0;
    for (let i = 0; i < 1500; i++) {
      const sample = rng.pick(samples);
      // Mutate one region at a time so most inputs stay close to an offer and reach the deep checks.
      const at = rng.int(sample.length);
      const input = sample.slice(0, at) + mutate(rng, sample.slice(at, at + 80), SDP_ALPHABET) + sample.slice(at + 80);
      let offer;
      try {
        offer = readWebRtcOffer(input);
      } catch (err) {
        if (!(err instanceof OfferError)) throw new Error(`seed ${rng.seed} case ${i}: ${String(err)}`, { cause: err });
        expect(err.message.length).toBeGreaterThan(0);
        refused++;
        continue;
      }
      read++;
      const mids = offer.media.map((m) => m.mid);
      expect(new Set(mids).size).toBe(mids.length);
      for (const m of offer.media) {
        expect(m.candidates.length).toBeLessThanOrEqual(MAX_CANDIDATES_PER_MEDIA);
        expect(m.fingerprints.length).toBeGreaterThan(0);
        expect(m.iceUfrag.length).toBeGreaterThanOrEqual(4);
        expect(m.icePwd.length).toBeGreaterThanOrEqual(22);
        for (const c of m.codecs) expect(c.payloadType >= 0 && c.payloadType <= 127 && c.clockRate > 0).toBe(true);
      }
    }
    // Both outcomes must occur, or the mutation is not exercising the reader.
    expect(read).toBeGreaterThan(0);
    expect(refused).toBeGreaterThan(0);
  });
});
