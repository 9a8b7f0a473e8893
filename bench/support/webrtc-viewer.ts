// A WebRTC viewer for the benches: a node-datachannel peer in the bench's own process that asks the
// gateway's WHEP endpoint for the video (recvonly H.264) and counts the RTP packets it receives.
import nodeDataChannel, { type PeerConnection, type Track } from 'node-datachannel';
import type { RequestOptions } from 'node:https';
import type { Answer } from './gateway-process.ts';

/** An HTTPS call to the gateway (the bench's CA and server name already in it). */
export type GatewayCall = (url: string, options?: RequestOptions, body?: string) => Promise<Answer>;

export interface WebrtcViewer {
  pc: PeerConnection;
  track: Track;
  /** RTP packets received so far (a bench may set it back to 0). */
  packets: number;
  /** Its session on the gateway (DELETE ends it). */
  location: string;
}

/**
 * A viewer of the WHEP endpoint `url`. node-datachannel's offer side now and then fails on its own
 * ("Got a remote candidate without ICE transport", also seen in test/media/mixed-viewers.test.ts):
 * the viewer then ends its session and is made again (at most three times), saying so through
 * `onRetry`.
 */
export async function webrtcViewer(
  url: string,
  call: GatewayCall,
  onRetry: (message: string) => void,
  attempt = 1,
): Promise<WebrtcViewer> {
  const pc = new nodeDataChannel.PeerConnection('bench', { iceServers: [], bindAddress: '127.0.0.1' });
  const video = new nodeDataChannel.Video('0', 'RecvOnly');
  video.addH264Codec(102, 'level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42e01f');
  for (const line of ['a=rtcp-fb:102 nack', 'a=rtcp-fb:102 nack pli']) video.parseSdpLine(line);
  const track = pc.addTrack(video);
  track.setMediaHandler(new nodeDataChannel.RtcpReceivingSession());
  // The track is held: one nothing refers to is garbage-collected, and its onMessage callback with it.
  const counter = { packets: 0 };
  track.onMessage(() => counter.packets++);
  // Without these two, node-datachannel holds this process open after close (as in session.ts).
  track.onClosed(() => undefined);
  pc.onStateChange(() => undefined);
  const offer = await new Promise<string>((resolve, reject) => {
    pc.onGatheringStateChange((s) => {
      if (s !== 'complete') return;
      const description = pc.localDescription();
      if (description) resolve(description.sdp);
      else reject(new Error('no local description'));
    });
    pc.setLocalDescription();
  });
  let res: Answer;
  try {
    res = await call(url, { method: 'POST', headers: { 'content-type': 'application/sdp' } }, offer);
  } catch (err) {
    track.close();
    pc.close();
    throw err;
  }
  if (res.status !== 201 || res.headers.location === undefined) {
    track.close();
    pc.close();
    throw new Error(`WHEP POST ${res.status}: ${res.body}`);
  }
  const location = res.headers.location;
  try {
    pc.setRemoteDescription(res.body, 'answer');
  } catch (err) {
    await call(location, { method: 'DELETE' });
    track.close();
    pc.close();
    const message = err instanceof Error ? err.message : String(err);
    if (attempt >= 3 || !/without ICE transport/.test(message)) throw err;
    onRetry(`receiver failed on its side (${message}); made again`);
    return webrtcViewer(url, call, onRetry, attempt + 1);
  }
  return Object.assign(counter, { pc, track, location });
}

/** Ends the viewer's session on the gateway, then its peer. */
export async function closeViewer(viewer: WebrtcViewer, call: GatewayCall): Promise<void> {
  await call(viewer.location, { method: 'DELETE' }).catch(() => undefined);
  viewer.track.close();
  viewer.pc.close();
}
