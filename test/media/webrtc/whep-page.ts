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
