// Recorded footage in a <video>: the gateway's HLS VOD playlist of a window (hls.js, loaded only
// then, or the browser's own HLS). The playlist's EXT-X-START starts it at the moment asked for
// rather than at the keyframe before it, and the wall-clock moment being shown is read back from
// its EXT-X-PROGRAM-DATE-TIME (gaps in the footage are skipped, so media time alone would drift).

export interface FootagePlayer {
  stop(): void;
  /** The moment on screen, ms since the epoch; null before the first picture. */
  shownMs(): number | null;
}

export async function playFootage(video: HTMLVideoElement, url: string, signal: AbortSignal): Promise<FootagePlayer> {
  const { default: Hls } = await import('hls.js/light');
  if (signal.aborted) throw new Error('stopped');
  if (!Hls.isSupported()) return playNatively(video, url);
  const hls = new Hls({ maxBufferLength: 20, backBufferLength: 30 });
  const player: FootagePlayer = {
    stop: () => hls.destroy(),
    shownMs: () => hls.playingDate?.getTime() ?? null,
  };
  await new Promise<void>((resolve, reject) => {
    hls.once(Hls.Events.FRAG_BUFFERED, () => resolve());
    hls.on(Hls.Events.ERROR, (_event, data) => {
      if (data.fatal) reject(new Error(`The footage does not play: ${data.details}`));
    });
    signal.addEventListener('abort', () => reject(new Error('stopped')));
    hls.loadSource(url);
    hls.attachMedia(video);
  }).catch((err: unknown) => {
    player.stop();
    throw err;
  });
  void video.play().catch(() => undefined);
  return player;
}

/** Safari's own HLS: it dates the playlist's start (getStartDate); gaps are not told apart. */
async function playNatively(video: HTMLVideoElement, url: string): Promise<FootagePlayer> {
  if (!video.canPlayType('application/vnd.apple.mpegurl')) throw new Error('This browser does not play HLS.');
  video.src = url;
  await new Promise<void>((resolve, reject) => {
    video.addEventListener('loadedmetadata', () => resolve(), { once: true });
    video.addEventListener('error', () => reject(new Error('The footage does not play here.')), { once: true });
  });
  const dated = video as HTMLVideoElement & { getStartDate?: () => Date };
  const startMs = dated.getStartDate?.().getTime();
  await video.play();
  return {
    stop: () => {
      video.removeAttribute('src');
      video.load();
    },
    shownMs: () => (startMs === undefined || Number.isNaN(startMs) ? null : startMs + video.currentTime * 1000),
  };
}
