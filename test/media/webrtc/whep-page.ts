import type { Page } from 'playwright-core';

// What a non-trickle WHEP player does in the page, as text (the project compiles without DOM
// types): a recvonly video + audio RTCPeerConnection whose offer is taken once ICE gathering is
// over (bounded wait), then, for playing, the POST to the WHEP URL and the answer.

/** Statements leaving `pc` with its complete local offer. */
export const GATHERED_OFFER = `
  const pc = new RTCPeerConnection();
  pc.addTransceiver('video', { direction: 'recvonly' });
  pc.addTransceiver('audio', { direction: 'recvonly' });
  await pc.setLocalDescription(await pc.createOffer());
  await new Promise((resolve) => {
    const timer = setTimeout(resolve, 3000);
    pc.addEventListener('icegatheringstatechange', () => {
      if (pc.iceGatheringState === 'complete') { clearTimeout(timer); resolve(); }
    });
  });`;

/**
 * An expression playing `url` by WHEP: resolves with the session's absolute Location, the
 * connection kept as `window.pc` (a video track shown in `#v` when the page has one).
 */
export function whepPlay(url: string): string {
  return `(async (url) => {
  ${GATHERED_OFFER}
  pc.ontrack = (e) => {
    const v = document.getElementById('v');
    if (v && e.track.kind === 'video') v.srcObject = new MediaStream([e.track]);
  };
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/sdp' }, body: pc.localDescription.sdp });
  const answer = await res.text();
  if (res.status !== 201) throw new Error('WHEP POST answered ' + res.status + ': ' + answer);
  await pc.setRemoteDescription({ type: 'answer', sdp: answer });
  window.pc = pc;
  return new URL(res.headers.get('location'), url).href;
})(${JSON.stringify(url)})`;
}

/** What `window.pc`'s getStats says of the received video and audio. */
export interface PageStats {
  frames: number;
  audioPackets: number;
  audioCodec: string | null;
}

const PAGE_STATS = `(async () => {
  const out = { frames: 0, audioPackets: 0, audioCodec: null };
  const stats = await window.pc.getStats();
  stats.forEach((r) => {
    if (r.type === 'inbound-rtp' && r.kind === 'video') out.frames = r.framesDecoded || 0;
    if (r.type === 'inbound-rtp' && r.kind === 'audio') {
      out.audioPackets = r.packetsReceived || 0;
      const codec = stats.get(r.codecId);
      out.audioCodec = codec ? codec.mimeType + '/' + codec.clockRate : null;
    }
  });
  return out;
})()`;

/** Decoded video frames, received audio packets and the audio codec of the page's `window.pc`. */
export function pageStats(page: Page): Promise<PageStats> {
  return page.evaluate<PageStats>(PAGE_STATS);
}
