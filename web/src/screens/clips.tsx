import { useEffect, useState } from 'preact/hooks';
import { useApp } from '../app.js';
import { focusFirst } from '../focus.js';
import { duration, localDate, when } from '../format.js';
import { AuthImage } from '../parts/auth-image.js';
import { Choice } from '../parts/choice.js';
import { navigate } from '../router.js';
import { timelineHref } from '../routes.js';
import { EVENT_TYPE_NAMES, type EventType, type Recording } from '../types.js';
import { useFootageCameras } from '../use-footage-cameras.js';
import { usePagedList } from '../use-paged-list.js';

// Recorded clips of one camera, filtered by date range and event type; one plays in the page
// (seekable: a ticketed playback address the <video> fetches with Range requests) and downloads.

const EVENT_TYPES = Object.keys(EVENT_TYPE_NAMES) as EventType[];
const PAGE = 30;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

interface Filter {
  camera: string;
  type: EventType | '';
  from: string;
  to: string;
  recording: string;
}

function filterOf(params: URLSearchParams, firstCamera: string): Filter {
  const type = params.get('type');
  const from = params.get('from') ?? '';
  const to = params.get('to') ?? '';
  return {
    camera: params.get('camera') ?? firstCamera,
    type: EVENT_TYPES.includes(type as EventType) ? (type as EventType) : '',
    from: DATE.test(from) ? from : '',
    to: DATE.test(to) ? to : '',
    recording: params.get('recording') ?? '',
  };
}

/** Local midnight of a YYYY-MM-DD date (the browser's time zone), or its last millisecond. */
function dayEdge(date: string, end: boolean): string {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  return (end ? new Date(y, m - 1, d + 1, 0, 0, 0, -1) : new Date(y, m - 1, d)).toISOString();
}

function queryOf(filter: Filter) {
  return {
    limit: PAGE,
    ...(filter.type ? { event_type: filter.type } : {}),
    ...(filter.from ? { start_date: dayEdge(filter.from, false) } : {}),
    ...(filter.to ? { end_date: dayEdge(filter.to, true) } : {}),
  };
}

/** The clips screen with this filter, in place of the one shown. */
function showFilter(filter: Filter): void {
  const q = new URLSearchParams();
  if (filter.camera) q.set('camera', filter.camera);
  if (filter.type) q.set('type', filter.type);
  if (filter.from) q.set('from', filter.from);
  if (filter.to) q.set('to', filter.to);
  if (filter.recording) q.set('recording', filter.recording);
  navigate(`/clips?${q.toString()}`, true);
}

export function ClipsScreen(props: { params: URLSearchParams }) {
  const { api, devices } = useApp();
  const footageCameras = useFootageCameras();
  const filter = filterOf(props.params, devices?.[0]?.id ?? '');
  const [playing, setPlaying] = useState<Recording | null>(null);
  const list = usePagedList<Recording>(
    filter.camera ? `${filter.camera}|${filter.type}|${filter.from}|${filter.to}` : null,
    (cursor) => api.recordings(filter.camera, { ...queryOf(filter), cursor }),
    (event) =>
      event.type === 'recording.created' &&
      event.data.device_id === filter.camera &&
      (!filter.type || event.data.event_type === filter.type)
        ? { added: event.data }
        : null,
  );
  const { items: clips, setError } = list;

  // A clip named in the URL (from an event): fetched fresh, so its playback address is new.
  useEffect(() => {
    if (!filter.recording) return;
    api
      .recording(filter.recording)
      .then(setPlaying)
      .catch(() => setError('That clip is no longer on the gateway.'));
  }, [api, filter.recording, setError]);

  const play = async (clip: Recording) => {
    // A fresh address each time: the ticket in the one listed may have expired.
    setPlaying(await api.recording(clip.id).catch(() => clip));
    showFilter({ ...filter, recording: clip.id });
  };

  const close = (id: string) => {
    setPlaying(null);
    showFilter({ ...filter, recording: '' });
    // The Close button goes with the player: the focus goes back to the clip's Play button.
    focusFirst([document.querySelector<HTMLElement>(`[data-clip-id="${CSS.escape(id)}"] button`)]);
  };

  if (devices === null) return <p role="status">Loading…</p>;
  const today = localDate(Date.now());
  return (
    <section>
      <h1>Clips</h1>
      <form class="filters" onSubmit={(e) => e.preventDefault()} aria-label="Filter clips">
        <Choice
          label="Camera"
          value={filter.camera}
          all={null}
          choices={devices.map((d) => ({ value: d.id, name: d.name }))}
          onChange={(camera) => showFilter({ ...filter, camera, recording: '' })}
        />
        <label>
          From
          <input
            type="date"
            value={filter.from}
            max={filter.to || today}
            onChange={(e) => showFilter({ ...filter, from: e.currentTarget.value })}
          />
        </label>
        <label>
          To
          <input
            type="date"
            value={filter.to}
            min={filter.from || undefined}
            max={today}
            onChange={(e) => showFilter({ ...filter, to: e.currentTarget.value })}
          />
        </label>
        <Choice
          label="Type"
          value={filter.type}
          all="All types"
          choices={EVENT_TYPES.map((t) => ({ value: t, name: EVENT_TYPE_NAMES[t] }))}
          onChange={(type) => showFilter({ ...filter, type })}
        />
      </form>
      {playing ? (
        <Player
          clip={playing}
          inTimeline={footageCameras.has(playing.device_id)}
          cameraName={devices.find((d) => d.id === playing.device_id)?.name ?? 'Unknown camera'}
          onClose={() => close(playing.id)}
        />
      ) : null}
      {list.error ? (
        <p class="banner warn" role="alert">
          {list.error}
        </p>
      ) : null}
      {devices.length === 0 ? <p>No cameras yet.</p> : null}
      {clips === null && !list.error && devices.length > 0 ? <p role="status">Loading clips…</p> : null}
      {clips?.length === 0 ? (
        <p>No clips{filter.type || filter.from || filter.to ? ' match these filters' : ' from this camera yet'}.</p>
      ) : null}
      <ul class="clips" aria-label="Clips, newest first">
        {clips?.map((clip) => (
          <ClipRow key={clip.id} clip={clip} playing={playing?.id === clip.id} onPlay={() => void play(clip)} />
        ))}
      </ul>
      {list.more ? (
        <button type="button" onClick={list.more}>
          Show older clips
        </button>
      ) : null}
    </section>
  );
}

function ClipRow({ clip, playing, onPlay }: { clip: Recording; playing: boolean; onPlay: () => void }) {
  const { api } = useApp();
  return (
    <li class="clip" data-testid="clip" data-clip-id={clip.id}>
      <AuthImage
        api={api}
        path={api.thumbnailPath(clip.id)}
        alt={`${EVENT_TYPE_NAMES[clip.event_type]} clip`}
        class="thumb"
        placeholder="No picture"
        missingRetries={5}
      />
      <div class="alert-text">
        <span class={`type type-${clip.event_type}`}>{EVENT_TYPE_NAMES[clip.event_type]}</span>
        <p class="meta">
          <time dateTime={clip.started_at}>{when(clip.started_at)}</time> · {duration(clip.duration_s)} ·{' '}
          {(clip.size_bytes / 1e6).toFixed(1)} MB
        </p>
        <div class="row-actions">
          <button type="button" class="small" onClick={onPlay} aria-pressed={playing}>
            Play
          </button>
        </div>
      </div>
    </li>
  );
}

function Player(props: { clip: Recording; cameraName: string; inTimeline: boolean; onClose: () => void }) {
  const { clip } = props;
  const title = `${EVENT_TYPE_NAMES[clip.event_type]} at ${props.cameraName}, ${when(clip.started_at)}`;
  return (
    <div class="player" aria-label="Clip player" role="region">
      <div class="player-head">
        <h2>{title}</h2>
        <button type="button" class="quiet" onClick={props.onClose}>
          Close
        </button>
      </div>
      {clip.playback_url ? (
        <>
          <video
            key={clip.id}
            src={clip.playback_url}
            controls
            autoplay
            muted
            playsInline
            preload="metadata"
            data-testid="clip-video"
            aria-label={title}
          />
          <a
            class="button"
            href={clip.playback_url}
            download={`${props.cameraName}-${clip.started_at}.mp4`.replace(/[^\w.-]+/g, '_')}
          >
            Download
          </a>
          {props.inTimeline ? (
            <a href={timelineHref(clip.device_id, Date.parse(clip.started_at))}>Show in timeline</a>
          ) : null}
        </>
      ) : (
        <p class="placeholder-text">
          The gateway gives no playable address for this clip, so it cannot play in the page.
        </p>
      )}
    </div>
  );
}
