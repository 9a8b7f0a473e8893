import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { useApp } from '../app.js';
import { focusFirst, focusIsLost } from '../focus.js';
import { when } from '../format.js';
import { AuthImage } from '../parts/auth-image.js';
import { Choice } from '../parts/choice.js';
import { navigate } from '../router.js';
import { timelineHref } from '../routes.js';
import { ALERT_TYPE_NAMES, type Alert } from '../types.js';
import { useFootageCameras } from '../use-footage-cameras.js';
import { usePagedList } from '../use-paged-list.js';

// Alerts, newest first, with the event's picture; filtered by camera, type and unread (kept in the
// URL, so a filtered view can be bookmarked); mark one or all shown as read; new ones appear live.
// An alert named in the URL (`alert=`, the address a notification opens) stands out in the list
// and is scrolled to; when it is older than the page shown, it is shown above the list.

const ALERT_TYPES = Object.keys(ALERT_TYPE_NAMES) as Alert['type'][];
const PAGE = 30;

interface Filter {
  camera: string;
  type: Alert['type'] | '';
  unread: boolean;
}

function filterOf(params: URLSearchParams): Filter {
  const type = params.get('type');
  return {
    camera: params.get('camera') ?? '',
    type: ALERT_TYPES.includes(type as Alert['type']) ? (type as Alert['type']) : '',
    unread: params.get('unread') === '1',
  };
}

function queryOf(filter: Filter) {
  return {
    limit: PAGE,
    ...(filter.camera ? { device_id: filter.camera } : {}),
    ...(filter.type ? { type: filter.type } : {}),
    ...(filter.unread ? { unread: true } : {}),
  };
}

function matches(filter: Filter, alert: Alert): boolean {
  return (
    (!filter.camera || alert.device_id === filter.camera) &&
    (!filter.type || alert.type === filter.type) &&
    (!filter.unread || !alert.read)
  );
}

/** The events screen with this filter, in place of the one shown. */
function showFilter(filter: Filter): void {
  const q = new URLSearchParams();
  if (filter.camera) q.set('camera', filter.camera);
  if (filter.type) q.set('type', filter.type);
  if (filter.unread) q.set('unread', '1');
  const text = q.toString();
  navigate(`/events${text ? `?${text}` : ''}`, true);
}

export function EventsScreen(props: { params: URLSearchParams }) {
  const { api, devices, scopes, recountUnread } = useApp();
  const footageCameras = useFootageCameras();
  const filter = filterOf(props.params);
  const canMark = scopes.has('alerts:write');
  const list = usePagedList<Alert>(
    `${filter.camera}|${filter.type}|${filter.unread}`,
    (cursor) => api.alerts({ ...queryOf(filter), cursor }),
    (event) => {
      if (event.type === 'alert.created') return matches(filter, event.data) ? { added: event.data } : null;
      // Read, or changed since (its type refined by detection, its clip written after the
      // post-roll, which brings its picture): the alert as the gateway has it now.
      if (event.type === 'alert.read' || event.type === 'alert.updated') return { changed: event.data };
      return null;
    },
  );
  const alerts = list.items;
  const opened = useOpenedAlert(props.params.get('alert') ?? '', alerts, list.setError);

  const listEl = useRef<HTMLUListElement>(null);
  /** The alert whose "Mark as read" had the focus: the button goes once it is read. */
  const refocusFrom = useRef<string | null>(null);
  // Before the browser paints the list without the button: the focus is never seen on <body>.
  useLayoutEffect(() => {
    const from = refocusFrom.current;
    if (from === null || !focusIsLost()) return;
    refocusFrom.current = null;
    // On to the next unread alert's button (the list is worked down by keyboard), else this alert's clip.
    const rows = [...(listEl.current?.querySelectorAll<HTMLElement>('[data-testid=alert]') ?? [])];
    const at = Math.max(
      0,
      rows.findIndex((row) => row.dataset.alertId === from),
    );
    const ordered = [...rows.slice(at), ...rows.slice(0, at)];
    focusFirst([
      ...ordered.map((row) => row.querySelector<HTMLElement>('button.mark-read')),
      rows[at]?.querySelector<HTMLElement>('a'),
    ]);
  }, [alerts]);

  const markRead = async (ids: string[], from: string | null) => {
    list.setError(null);
    refocusFrom.current = from;
    try {
      const changed = await Promise.all(ids.map((id) => api.markRead(id)));
      list.replace(changed);
      opened.replace(changed);
    } catch (err) {
      list.setError(err instanceof Error ? err.message : 'Marking as read failed.');
    } finally {
      recountUnread();
    }
  };

  const unreadShown = (alerts ?? []).filter((a) => !a.read).map((a) => a.id);
  return (
    <section>
      <h1>Events</h1>
      <form class="filters" onSubmit={(e) => e.preventDefault()} aria-label="Filter events">
        <Choice
          label="Camera"
          value={filter.camera}
          all="All cameras"
          choices={(devices ?? []).map((d) => ({ value: d.id, name: d.name }))}
          onChange={(camera) => showFilter({ ...filter, camera })}
        />
        <Choice
          label="Type"
          value={filter.type}
          all="All types"
          choices={ALERT_TYPES.map((t) => ({ value: t, name: ALERT_TYPE_NAMES[t] }))}
          onChange={(type) => showFilter({ ...filter, type })}
        />
        <label class="check">
          <input
            type="checkbox"
            checked={filter.unread}
            onChange={(e) => showFilter({ ...filter, unread: e.currentTarget.checked })}
          />
          Unread only
        </label>
        {canMark ? (
          <button
            type="button"
            disabled={unreadShown.length === 0}
            onClick={() => void markRead(unreadShown, unreadShown[0] ?? null)}
          >
            Mark all shown as read
          </button>
        ) : null}
      </form>
      {list.error ? (
        <p class="banner warn" role="alert">
          {list.error}
        </p>
      ) : null}
      {alerts === null && !list.error ? <p role="status">Loading events…</p> : null}
      {alerts?.length === 0 ? (
        <p>No events{filter.camera || filter.type || filter.unread ? ' match these filters' : ' yet'}.</p>
      ) : null}
      {opened.outside ? (
        <section class="opened-event" aria-labelledby="opened-event-title">
          <h2 id="opened-event-title">The event you opened</h2>
          <ul class="alerts">
            <AlertRow
              alert={opened.outside}
              opened
              canMark={canMark}
              inTimeline={footageCameras.has(opened.outside.device_id)}
              onMarkRead={() => void markRead([opened.outside!.id], null)}
            />
          </ul>
        </section>
      ) : null}
      <ul class="alerts" aria-label="Events, newest first" ref={listEl}>
        {alerts?.map((alert) => (
          <AlertRow
            key={alert.id}
            alert={alert}
            opened={alert.id === opened.id}
            canMark={canMark}
            inTimeline={footageCameras.has(alert.device_id)}
            onMarkRead={() => void markRead([alert.id], alert.id)}
          />
        ))}
      </ul>
      {list.more ? (
        <button type="button" onClick={list.more}>
          Show older events
        </button>
      ) : null}
    </section>
  );
}

/**
 * The alert named in the URL: its row is scrolled to once the list is in; one that is not in the
 * list shown (older than its first page) is fetched and given as `outside`, to show above it.
 */
function useOpenedAlert(id: string, alerts: Alert[] | null, setError: (message: string | null) => void) {
  const { api } = useApp();
  const [outside, setOutside] = useState<Alert | null>(null);
  const shownFor = useRef('');
  useEffect(() => {
    if (!id || alerts === null || shownFor.current === id) return;
    shownFor.current = id;
    const row = document.querySelector<HTMLElement>(`[data-testid=alert][data-alert-id="${CSS.escape(id)}"]`);
    if (row) {
      row.scrollIntoView({ block: 'center' });
      return;
    }
    api
      .alert(id)
      .then((alert) => {
        setOutside(alert);
        document.getElementById('opened-event-title')?.scrollIntoView({ block: 'start' });
      })
      .catch(() => setError('That event is no longer on the gateway (its retention has passed).'));
  }, [api, id, alerts, setError]);
  return {
    id,
    // Once older pages bring it into the list, it is shown there only.
    outside: outside?.id === id && !alerts?.some((a) => a.id === id) ? outside : null,
    /** Alerts the screen changed (marked as read): the one shown above the list with them. */
    replace: (changed: Alert[]) => setOutside((o) => changed.find((a) => a.id === o?.id) ?? o),
  };
}

function AlertRow(props: {
  alert: Alert;
  opened: boolean;
  canMark: boolean;
  inTimeline: boolean;
  onMarkRead: () => void;
}) {
  const { alert, canMark, onMarkRead } = props;
  const { api, devices, scopes } = useApp();
  const clip = scopes.has('recordings:read') ? alert.recording_id : null;
  const camera = devices?.find((d) => d.id === alert.device_id)?.name ?? 'Unknown camera';
  return (
    <li
      class={`alert ${alert.read ? 'read' : 'unread'}${props.opened ? ' opened' : ''}`}
      data-testid="alert"
      data-alert-id={alert.id}
      {...(props.opened ? { 'aria-current': 'true' as const } : {})}
    >
      {clip ? (
        <AuthImage
          api={api}
          path={api.thumbnailPath(clip)}
          alt={`${ALERT_TYPE_NAMES[alert.type]} at ${camera}`}
          class="thumb"
          placeholder="No picture"
          missingRetries={5}
        />
      ) : (
        <div class="picture thumb">
          <span class="placeholder">{alert.recording_status === 'pending' ? 'Recording…' : 'No picture'}</span>
        </div>
      )}
      <div class="alert-text">
        <span class={`type type-${alert.type}`}>{ALERT_TYPE_NAMES[alert.type]}</span>
        {alert.read ? null : <span class="unread-dot">Unread</span>}
        <p class="message">{alert.message}</p>
        <p class="meta">
          <span>{camera}</span> · <time dateTime={alert.created_at}>{when(alert.created_at)}</time>
        </p>
        <div class="row-actions">
          {clip ? (
            <a href={`/clips?camera=${encodeURIComponent(alert.device_id)}&recording=${encodeURIComponent(clip)}`}>
              Play clip
            </a>
          ) : null}
          {props.inTimeline ? (
            // A few seconds before the alert: what led up to it.
            <a href={timelineHref(alert.device_id, Date.parse(alert.created_at) - 5_000)}>Show in timeline</a>
          ) : null}
          {canMark && !alert.read ? (
            <button type="button" class="small mark-read" onClick={onMarkRead}>
              Mark as read
            </button>
          ) : null}
        </div>
      </div>
    </li>
  );
}
