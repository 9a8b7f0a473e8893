// Live video in a <video>: WebRTC by WHEP first (lowest delay), LL-HLS when that fails (hls.js,
// loaded only then, or the browser's own HLS). Each returns a stop function; the caller falls back
// to refreshed stills when both fail. The stream URLs carry their own short-lived ticket.

/** How long WebRTC may take to show a first frame before LL-HLS is tried. */
const WEBRTC_FIRST_FRAME_MS = 8_000;
const ICE_GATHERING_MS = 2_000;

export type Stop = () => void;

export async function playWhep(video: HTMLVideoElement, url: string, signal: AbortSignal): Promise<Stop> {
  const pc = new RTCPeerConnection();
  let resource: string | null = null;
  const stop: Stop = () => {
    pc.close();
    video.srcObject = null;
    // Ends the session on the gateway at once instead of when its ICE times out.
    if (resource) void fetch(resource, { method: 'DELETE' }).catch(() => undefined);
  };
  try {
    pc.addTransceiver('video', { direction: 'recvonly' });
    pc.addTransceiver('audio', { direction: 'recvonly' });
    const stream = new MediaStream();
    pc.ontrack = (e) => {
      stream.addTrack(e.track);
      if (video.srcObject !== stream) video.srcObject = stream;
    };
    await pc.setLocalDescription(await pc.createOffer());
    // Non-trickle WHEP: the offer goes with its candidates, so wait (bounded) for gathering.
    await new Promise<void>((resolve) => {
      if (pc.iceGatheringState === 'complete') return resolve();
      const timer = setTimeout(resolve, ICE_GATHERING_MS);
      pc.addEventListener('icegatheringstatechange', () => {
        if (pc.iceGatheringState === 'complete') {
          clearTimeout(timer);
          resolve();
        }
      });
    });
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/sdp' },
      body: pc.localDescription?.sdp ?? '',
      signal,
    });
    if (res.status !== 201) throw new Error(`WHEP answered ${res.status}`);
    const location = res.headers.get('location');
    if (location) resource = new URL(location, url).href;
    await pc.setRemoteDescription({ type: 'answer', sdp: await res.text() });
    await firstFrame(video, pc, signal);
    return stop;
  } catch (err) {
    stop();
    throw err;
  }
}

function firstFrame(video: HTMLVideoElement, pc: RTCPeerConnection, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const done = (err?: Error) => {
      clearTimeout(timer);
      video.removeEventListener('loadeddata', ok);
      pc.removeEventListener('connectionstatechange', state);
      signal.removeEventListener('abort', aborted);
      if (err) reject(err);
      else resolve();
    };
    const ok = () => done();
    const state = () => {
      if (pc.connectionState === 'failed' || pc.connectionState === 'closed')
        done(new Error(`WebRTC ${pc.connectionState}`));
    };
    const aborted = () => done(new Error('stopped'));
    const timer = setTimeout(() => done(new Error('WebRTC showed no picture in time')), WEBRTC_FIRST_FRAME_MS);
    video.addEventListener('loadeddata', ok);
    pc.addEventListener('connectionstatechange', state);
    signal.addEventListener('abort', aborted);
    if (video.readyState >= 2) done();
  });
}

export async function playHls(video: HTMLVideoElement, url: string, signal: AbortSignal): Promise<Stop> {
  const { default: Hls } = await import('hls.js/light');
  if (signal.aborted) throw new Error('stopped');
  if (Hls.isSupported()) {
    const hls = new Hls({ lowLatencyMode: true, backBufferLength: 10 });
    const stop: Stop = () => hls.destroy();
    await new Promise<void>((resolve, reject) => {
      hls.on(Hls.Events.FRAG_BUFFERED, () => resolve());
      hls.on(Hls.Events.ERROR, (_event, data) => {
        if (data.fatal) reject(new Error(`LL-HLS: ${data.details}`));
      });
      signal.addEventListener('abort', () => reject(new Error('stopped')));
      hls.loadSource(url);
      hls.attachMedia(video);
    }).catch((err: unknown) => {
      stop();
      throw err;
    });
    void video.play().catch(() => undefined);
    return stop;
  }
  if (video.canPlayType('application/vnd.apple.mpegurl')) {
    video.src = url;
    await video.play();
    return () => {
      video.removeAttribute('src');
      video.load();
    };
  }
  throw new Error('this browser plays neither WebRTC nor HLS');
}
