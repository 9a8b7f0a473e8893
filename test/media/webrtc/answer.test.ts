import { describe, expect, it } from 'vitest';
import { parseSdp } from '../../../src/media/sdp.js';
import { readLocalTransport, withoutMdnsCandidates, writeAnswer } from '../../../src/media/webrtc/answer.js';
import { LocalDescriptionError } from '../../../src/media/webrtc/errors.js';
import { matchCodecs } from '../../../src/media/webrtc/codec-match.js';
import { readWebRtcOffer } from '../../../src/media/webrtc/offer.js';
import { CHROMIUM_OFFER, FIREFOX_OFFER } from './offers.js';

// The answer written from the codec choice and the stack's transport: one section per offered one,
// in order and with the same mids; the chosen ones sendonly with the camera's parameters; the rest
// rejected; all our candidates and end-of-candidates.

// A local description as libdatachannel makes it (shortened): the transport is all that is read from it.
const LOCAL = [
  'v=0',
  'o=rtc 1351603304 0 IN IP4 127.0.0.1',
  's=-',
  't=0 0',
  'a=group:BUNDLE 0 1',
  'a=fingerprint:sha-256 E3:71:6A:93:89:B9:69:92:49:9A:0B:9D:D3:3B:6B:E2:9F:22:43:FF:4E:5C:E4:32:2A:14:1C:4D:11:A8:60:1C',
  'm=video 51574 UDP/TLS/RTP/SAVPF 102',
  'c=IN IP4 127.0.0.1',
  'a=mid:0',
  'a=rtcp-fb:102 goog-remb',
  'a=setup:active',
  'a=ice-ufrag:YSjq',
  'a=ice-pwd:hHCLwltBk/p7UMCnfloMyb',
  'a=candidate:1 1 UDP 2114977791 127.0.0.1 51574 typ host',
  'a=end-of-candidates',
  'm=audio 51574 UDP/TLS/RTP/SAVPF ',
  'a=mid:1',
  'a=candidate:1 1 UDP 2114977791 127.0.0.1 51574 typ host',
  '',
].join('\r\n');

const camera = (audio: string) =>
  parseSdp(
    [
      'v=0',
      'o=- 1 1 IN IP4 0.0.0.0',
      's=cam',
      't=0 0',
      'm=video 0 RTP/AVP 96',
      'a=rtpmap:96 H264/90000',
      'a=fmtp:96 packetization-mode=1;profile-level-id=4d0029;sprop-parameter-sets=Z00AKZpkA8ARPyzUBAQFAAADA+gAAOpgBA==,aO48gA==',
      ...audio.split('\n').filter(Boolean),
      '',
    ].join('\r\n'),
  );
const IDS = { videoSsrc: 111, audioSsrc: 222, cname: 'cn', streamId: 'live-1', sessionId: '42' };

describe('writeAnswer', () => {
  it('answers Chromium: video sendonly on its payload type with the camera profile, PCMU sendonly, our transport', () => {
    const offer = readWebRtcOffer(CHROMIUM_OFFER);
    const choice = matchCodecs(camera('m=audio 0 RTP/AVP 0\na=rtpmap:0 PCMU/8000'), offer);
    const text = writeAnswer(offer, choice, readLocalTransport(LOCAL), IDS);
    const answer = parseSdp(text);
    expect(answer.media.map((m) => m.media)).toEqual(offer.media.map((m) => m.kind));
    const lines = text.split('\r\n');
    expect(lines).toContain(`a=group:BUNDLE ${offer.media.map((m) => m.mid).join(' ')}`);
    expect(lines).toContain(`m=video 51574 UDP/TLS/RTP/SAVPF ${choice.video.payloadType}`);
    expect(lines).toContain(
      `a=fmtp:${choice.video.payloadType} level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=4d0029`,
    );
    expect(lines).toContain(`a=rtcp-fb:${choice.video.payloadType} nack pli`);
    expect(lines.some((l) => l.includes('goog-remb') || l.includes('transport-cc'))).toBe(false);
    expect(lines).toContain('m=audio 51574 UDP/TLS/RTP/SAVPF 0');
    expect(lines).toContain('a=rtpmap:0 PCMU/8000');
    expect(lines.filter((l) => l === 'a=sendonly')).toHaveLength(2);
    expect(lines).toContain('a=ssrc:111 cname:cn');
    expect(lines).toContain('a=ssrc:222 cname:cn');
    expect(lines.filter((l) => l === 'a=candidate:1 1 UDP 2114977791 127.0.0.1 51574 typ host')).toHaveLength(2);
    expect(lines.filter((l) => l === 'a=setup:active')).toHaveLength(2);
    expect(lines).toContain(
      'a=fingerprint:sha-256 E3:71:6A:93:89:B9:69:92:49:9A:0B:9D:D3:3B:6B:E2:9F:22:43:FF:4E:5C:E4:32:2A:14:1C:4D:11:A8:60:1C',
    );
  });

  it('rejects the sections it does not send (AAC camera audio: port 0, outside BUNDLE, one offered format)', () => {
    const offer = readWebRtcOffer(FIREFOX_OFFER);
    const choice = matchCodecs(camera('m=audio 0 RTP/AVP 97\na=rtpmap:97 MPEG4-GENERIC/16000/1'), offer);
    expect(choice.audio).toBeNull();
    const text = writeAnswer(offer, choice, readLocalTransport(LOCAL), IDS);
    const audio = offer.media.find((m) => m.kind === 'audio');
    expect(text).toMatch(new RegExp(`^m=audio 0 UDP/TLS/RTP/SAVPF ${audio?.codecs[0]?.payloadType}\\r$`, 'm'));
    expect(text).toContain(`a=group:BUNDLE ${choice.video.mid}\r\n`);
    expect(parseSdp(text).media).toHaveLength(offer.media.length);
  });

  it('a local description without ICE credentials, fingerprint or setup is an error, not an answer', () => {
    for (const drop of ['a=ice-ufrag', 'a=fingerprint', 'a=setup', 'm=', 'c=IN']) {
      expect(() =>
        readLocalTransport(
          LOCAL.split('\r\n')
            .filter((l) => !l.startsWith(drop))
            .join('\r\n'),
        ),
      ).toThrow(LocalDescriptionError);
    }
  });
});

describe('withoutMdnsCandidates', () => {
  it('drops only the .local host candidates', () => {
    const sdp = [
      'a=candidate:1 1 udp 2113937151 0b6e1d4c-2c43-4b1c-9cde-1c1f0f3f0a6e.local 54321 typ host',
      'a=candidate:2 1 udp 2113937151 192.0.2.7 54321 typ host',
      'a=mid:0',
    ].join('\r\n');
    expect(withoutMdnsCandidates(sdp)).toBe(
      ['a=candidate:2 1 udp 2113937151 192.0.2.7 54321 typ host', 'a=mid:0'].join('\r\n'),
    );
  });
});
