import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from '../api.js';
import { useApp } from '../app.js';
import { momentText } from '../format.js';
import { playFootage, type FootagePlayer } from '../footage-player.js';
import { AuthImage } from '../parts/auth-image.js';
import { ExportRange } from '../parts/export-range.js';
import { FootageFrame } from '../parts/footage-frame.js';
import { FootageKept } from '../parts/footage-kept.js';
import { TimelineBar, type ViewChange } from '../parts/timeline-bar.js';
import { clamp, fractionOf, MIN_SPAN_MS, neighbourEvent, visibleWindow, zoomed, type View } from '../timeline-view.js';
import { EVENT_TYPE_NAMES, type CameraFootage, type FootageStatus } from '../types.js';
import { useFootageIndex, type TimelineEvent } from '../use-footage-index.js';
import { CameraNotFound } from '../parts/camera-not-found.js';

// A camera's continuous footage: the timeline of what is kept (days down to minutes), the picture
// of the moment under the playhead while it moves, playing from there at 1–8×, the events on it,
// the previous / next event, and a range exported as an MP4. `?at=` (from an event or a clip)
// opens it at that moment.

const SPEEDS = [1, 2, 4, 8] as const;
/** How much footage one playback address covers; playing on past it asks for the next window. */
const PLAY_WINDOW_MS = 3 * 3_600_000;
/** How often the playhead follows the video while it plays. */
const FOLLOW_MS = 250;
/** Events shown as pictures under the bar, nearest the playhead first. */
const EVENT_PICTURES = 8;
/** Footage is asked for at most this far back when the gateway does not say how far it keeps. */
const DEFAULT_REACH_MS = 14 * 86_400_000;

/**
 * Where the timeline opens: at `?at=` when given (an hour across), else a little before the newest
 * footage kept (six hours across): what is newer is not in the index yet (docs/recording.md).
 */
function initialView(params: URLSearchParams, camera: CameraFootage | undefined): View {
  const at = Date.parse(params.get('at') ?? '');
  if (!Number.isNaN(at)) return { centerMs: at, spanMs: 3_600_000 };
  const newest = camera?.newest ? Date.parse(camera.newest) : Date.now();
  const oldest = camera?.oldest ? Date.parse(camera.oldest) : newest;
  // What is kept fills half the bar, up to six hours of it.
  return { centerMs: newest - 2_000, spanMs: clamp(2 * (newest - oldest), MIN_SPAN_MS, 6 * 3_600_000) };
}

export function TimelineScreen(props: { deviceId: string; params: URLSearchParams }) {
  const { api, devices, epoch } = useApp();
  const device = devices?.find((d) => d.id === props.deviceId) ?? null;
  const [status, setStatus] = useState<FootageStatus | null>(null);
  const [statusError, setStatusError] = useState<string | null>(null);

  useEffect(() => {
    const load = () =>
      void api
        .footageStatus()
        .then((s) => {
          setStatus(s);
          setStatusError(null);
        })
        .catch((err: unknown) => setStatusError(err instanceof Error ? err.message : 'No answer from the gateway.'));
    load();
    const timer = setInterval(load, 60_000);
    return () => clearInterval(timer);
  }, [api, epoch]);

  if (devices === null || (status === null && statusError === null)) return <p role="status">Loading…</p>;
  if (!device) return <CameraNotFound />;
  const camera = status?.cameras.find((c) => c.device_id === device.id) ?? null;
  return (
    <section class="timeline-screen">
      <div class="live-head">
        <h1>{device.name}: recorded</h1>
        <a href={`/cameras/${encodeURIComponent(device.id)}`}>Live view</a>
      </div>
      {statusError ? (
        <p class="banner warn" role="alert">
          {statusError}
        </p>
      ) : null}
      {status && !status.enabled ? (
        <p class="placeholder-text">
          This gateway does not record around the clock: only events are kept (see them in{' '}
          <a href={`/clips?camera=${encodeURIComponent(device.id)}`}>Clips</a>). Its owner turns it on with
          recording.continuous in the gateway&apos;s configuration (docs/recording.md).
        </p>
      ) : (
        <Footage deviceId={device.id} cameraName={device.name} params={props.params} status={status} />
      )}
      {status?.enabled ? <FootageKept status={status} camera={camera} /> : null}
    </section>
  );
}

function Footage(props: {
  deviceId: string;
  cameraName: string;
  params: URLSearchParams;
  status: FootageStatus | null;
}) {
  const { api, epoch, scopes } = useApp();
  const camera = props.status?.cameras.find((c) => c.device_id === props.deviceId);
  const [view, setView] = useState<View>(() => initialView(props.params, camera));
  const [playing, setPlaying] = useState(false);
  /** The moment the video started from (a new one starts it again); null while the picture of the playhead is shown. */
  const [playFrom, setPlayFrom] = useState<number | null>(null);
  const [speed, setSpeed] = useState<(typeof SPEEDS)[number]>(1);
  const [message, setMessage] = useState<string | null>(null);
  const [exporting, setExporting] = useState(false);
  const video = useRef<HTMLVideoElement>(null);
  const player = useRef<FootagePlayer | null>(null);
  const oldest = camera?.oldest ? Date.parse(camera.oldest) : Date.now() - DEFAULT_REACH_MS;
  const bounds = { minMs: Math.min(oldest, view.centerMs), maxMs: Date.now() };
  const index = useFootageIndex(api, props.deviceId, visibleWindow(view), epoch);

  const stopped = (why: string | null) => {
    setPlaying(false);
    setPlayFrom(null);
    setMessage(why);
  };
  usePlayback({ video, player, deviceId: props.deviceId, playFrom, speed, setView, setPlayFrom, stopped });

  const seekTo = (t: number) => {
    setView((v) => ({ ...v, centerMs: t }));
    setPlayFrom(playing ? t : null);
  };
  const onView = (next: View, change: ViewChange) => {
    setView(next);
    if (change === 'scrub') setPlayFrom(null);
    if (change === 'seek') setPlayFrom(playing ? next.centerMs : null);
  };
  // Pausing keeps the video's picture (the exact frame, not the keyframe before it) until the
  // playhead is moved; playing again goes on from it.
  const togglePlay = () => {
    setMessage(null);
    const el = video.current;
    if (playing) {
      setPlaying(false);
      el?.pause();
    } else {
      setPlaying(true);
      if (playFrom !== null && el) void el.play().catch(() => undefined);
      else setPlayFrom(view.centerMs);
    }
  };
  const jump = (dir: -1 | 1) => {
    const e = neighbourEvent(index.events, view.centerMs, dir);
    if (e) {
      setMessage(null);
      seekTo(e.startMs);
    } else setMessage(`No ${dir < 0 ? 'earlier' : 'later'} event in the time shown: zoom out to see more.`);
  };

  const showVideo = playFrom !== null;
  return (
    <>
      <div class="stage">
        <video
          ref={video}
          muted
          playsInline
          hidden={!showVideo}
          data-testid="footage-video"
          aria-label={`Recorded video of ${props.cameraName}`}
        />
        {showVideo ? null : (
          <FootageFrame
            api={api}
            deviceId={props.deviceId}
            atMs={view.centerMs}
            alt={`${props.cameraName} at ${momentText(view.centerMs)}`}
          />
        )}
      </div>
      <p class="moment" aria-live="off" data-testid="timeline-moment">
        {momentText(view.centerMs)}
      </p>
      <TimelineBar
        view={view}
        bounds={bounds}
        spans={index.spans}
        events={index.events}
        cameraName={props.cameraName}
        onView={onView}
      />
      <p id="timeline-keys" class="meta">
        Drag or use the arrow keys to move through time, + and − to zoom.
      </p>
      <div class="toolbar" role="toolbar" aria-label="Recorded footage">
        <button type="button" onClick={() => jump(-1)}>
          ◀ Previous event
        </button>
        <button type="button" onClick={togglePlay} aria-pressed={playing} data-testid="timeline-play">
          {playing ? 'Pause' : 'Play'}
        </button>
        <button type="button" onClick={() => jump(1)}>
          Next event ▶
        </button>
        <div class="segmented" role="group" aria-label="Speed">
          {SPEEDS.map((s) => (
            <button key={s} type="button" aria-pressed={speed === s} onClick={() => setSpeed(s)}>
              {s}×
            </button>
          ))}
        </div>
        <div class="segmented" role="group" aria-label="Zoom">
          <button type="button" aria-label="Zoom out" onClick={() => setView((v) => zoomed(v, 2, bounds))}>
            −
          </button>
          <button type="button" aria-label="Zoom in" onClick={() => setView((v) => zoomed(v, 0.5, bounds))}>
            +
          </button>
        </div>
        <button type="button" onClick={() => seekTo((index.spans.at(-1)?.endMs ?? Date.now()) - 2_000)}>
          Latest
        </button>
        {scopes.has('recordings:write') ? (
          <button type="button" aria-expanded={exporting} onClick={() => setExporting((x) => !x)}>
            Export…
          </button>
        ) : null}
      </div>
      <p role="status" class="outcome" data-testid="timeline-message">
        {message ?? index.error ?? (index.loading ? 'Loading the footage kept…' : '')}
      </p>
      {exporting ? (
        <ExportRange api={api} deviceId={props.deviceId} aroundMs={view.centerMs} onClose={() => setExporting(false)} />
      ) : null}
      <EventPictures events={index.events} view={view} onPick={(e) => seekTo(e.startMs)} />
    </>
  );
}

function usePlayback(p: {
  video: { current: HTMLVideoElement | null };
  player: { current: FootagePlayer | null };
  deviceId: string;
  playFrom: number | null;
  speed: number;
  setView: (update: (v: View) => View) => void;
  /** Plays on from a new moment (the end of the window played). */
  setPlayFrom: (t: number) => void;
  /** Playing stopped by itself: the end of the footage, or an error (said). */
  stopped: (why: string | null) => void;
}) {
  const { api } = useApp();
  const { video, player, deviceId, playFrom, speed, setView, setPlayFrom, stopped } = p;

  useEffect(() => {
    const el = video.current;
    if (!el || playFrom === null) return;
    const abort = new AbortController();
    let timer: ReturnType<typeof setInterval> | undefined;
    const endMs = playFrom + PLAY_WINDOW_MS;
    const onEnded = () => (endMs < Date.now() ? setPlayFrom(endMs) : stopped('The end of the footage kept.'));
    void (async () => {
      try {
        const { url } = await api.footagePlayback(deviceId, playFrom, endMs);
        const started = await playFootage(el, url, abort.signal);
        if (abort.signal.aborted) return started.stop();
        player.current = started;
        el.playbackRate = speed;
        el.addEventListener('ended', onEnded);
        timer = setInterval(() => {
          const shown = started.shownMs();
          if (shown !== null) setView((v) => ({ ...v, centerMs: shown }));
        }, FOLLOW_MS);
      } catch (err) {
        if (abort.signal.aborted) return;
        stopped(
          err instanceof ApiError && err.status === 404
            ? 'No footage from this moment on.'
            : err instanceof Error
              ? err.message
              : 'The footage does not play.',
        );
      }
    })();
    return () => {
      abort.abort();
      clearInterval(timer);
      el.removeEventListener('ended', onEnded);
      player.current?.stop();
      player.current = null;
    };
    // The speed is applied by the effect below, without restarting.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [api, deviceId, playFrom]);

  useEffect(() => {
    if (video.current) video.current.playbackRate = speed;
  }, [speed, video]);
}

function EventPictures(props: { events: readonly TimelineEvent[]; view: View; onPick: (e: TimelineEvent) => void }) {
  const { api } = useApp();
  const near = props.events
    .filter((e) => {
      const f = fractionOf(props.view, e.startMs);
      return f >= 0 && f <= 1;
    })
    .sort((a, b) => Math.abs(a.startMs - props.view.centerMs) - Math.abs(b.startMs - props.view.centerMs))
    .slice(0, EVENT_PICTURES)
    .sort((a, b) => a.startMs - b.startMs);
  if (near.length === 0) return null;
  return (
    <div class="event-strip">
      <h2 class="meta">Events in the time shown</h2>
      <ul>
        {near.map((e) => (
          <li key={e.id}>
            <button type="button" class="event-pick" onClick={() => props.onPick(e)} data-testid="timeline-event">
              <AuthImage api={api} path={api.thumbnailPath(e.id)} alt="" class="thumb" placeholder="No picture" />
              <span class={`type type-${e.type}`}>{EVENT_TYPE_NAMES[e.type]}</span>
              <span class="time">{momentText(e.startMs)}</span>
            </button>
          </li>
        ))}
      </ul>
    </div>
  );
}
