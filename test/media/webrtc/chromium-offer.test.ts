import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSdp } from '../../../src/media/sdp.js';
import { matchCodecs } from '../../../src/media/webrtc/codec-match.js';
import { readWebRtcOffer } from '../../../src/media/webrtc/offer.js';
import { launchChromium } from '../../support/browser.js';
import { GATHERED_OFFER } from './whep-page.js';

// The offer a WHEP player makes in the real browser (Debian's chromium), not a stored copy: the
// reader and the matcher must take whatever this browser version writes.

let browser: Browser;

beforeAll(async () => {
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
});

// Runs in the page (the project compiles without DOM types, so it is handed over as text): what a
// non-trickle WHEP player POSTs, the offer once ICE gathering is over (bounded wait).
const MAKE_OFFER = `(async () => {
  ${GATHERED_OFFER}
  const sdp = pc.localDescription.sdp;
  pc.close();
  return sdp;
})()`;

async function browserOffer(): Promise<string> {
  const page = await browser.newPage();
  try {
    const sdp: unknown = await page.evaluate(MAKE_OFFER);
    if (typeof sdp !== 'string') throw new Error('the page returned no SDP');
    return sdp;
  } finally {
    await page.close();
  }
}

describe("chromium's own WHEP offer", () => {
  it('is read whole: two bundled recvonly sections with ICE, DTLS and H.264 in mode 1; host candidates hidden behind mDNS names', async () => {
    const offer = readWebRtcOffer(await browserOffer());
    expect(offer.media.map((m) => [m.kind, m.direction])).toEqual([
      ['video', 'recvonly'],
      ['audio', 'recvonly'],
    ]);
    expect(offer.bundle).toEqual(offer.media.map((m) => m.mid));
    const video = offer.media[0];
    expect(video?.setup).toBe('actpass');
    expect(video?.fingerprints[0]?.algorithm).toBe('sha-256');
    expect(video?.codecs.some((c) => c.encoding === 'H264' && c.fmtp.get('packetization-mode') === '1')).toBe(true);
    // A headless chromium without camera permission never shows its addresses.
    for (const c of video?.candidates ?? []) expect(c.type === 'host' ? c.mdns : true).toBe(true);
  });

  it("is matched with a Main profile camera with PCMU: an offered mode 1 H.264 type and PCMU's static type", async () => {
    const cameraSdp = parseSdp(
      [
        'v=0',
        'o=- 1 1 IN IP4 0.0.0.0',
        's=-',
        't=0 0',
        'm=video 0 RTP/AVP 96',
        'a=rtpmap:96 H264/90000',
        'a=fmtp:96 packetization-mode=1;profile-level-id=4d0029',
        'm=audio 0 RTP/AVP 0',
      ].join('\r\n'),
    );
    const offer = readWebRtcOffer(await browserOffer());
    const choice = matchCodecs(cameraSdp, offer);
    const offered = offer.media[0]?.codecs.find((c) => c.payloadType === choice.video.payloadType);
    expect(offered?.encoding).toBe('H264');
    expect(offered?.fmtp.get('packetization-mode')).toBe('1');
    expect(choice.video.fmtp).toContain('profile-level-id=4d0029');
    expect(choice.audio).toMatchObject({ encoding: 'PCMU', payloadType: 0 });
  });
});
