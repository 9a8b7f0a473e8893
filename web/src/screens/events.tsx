import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { useApp } from '../app.js';
import { focusFirst, focusIsLost } from '../focus.js';
import { when } from '../format.js';
import { AuthImage } from '../parts/auth-image.js';
import { Choice } from '../parts/choice.js';
import { navigate } from '../router.js';
import { ALERT_TYPE_NAMES, type Alert } from '../types.js';

// Alerts, newest first, with the event's picture; filtered by camera, type and unread (kept in the
// URL, so a filtered view can be bookmarked); mark one or all shown as read; new ones appear live.

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

export function EventsScreen(props: { params: URLSearchParams }) {
  const { api, hub, devices, scopes, epoch, recountUnread } = useApp();
  const filter = filterOf(props.params);
  const [alerts, setAlerts] = useState<Alert[] | null>(null);
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const canMark = scopes.has('alerts:write');
  const canClips = scopes.has('recordings:read');
  const key = `${filter.camera}|${filter.type}|${filter.unread}`;

  const matches = (alert: Alert) => (!filter.camera || alert.device_id === filter.camera) && (!filter.type || alert.type === filter.type) && (!filter.unread || !alert.read);

  const query = { limit: PAGE, ...(filter.camera ? { device_id: filter.camera } : {}), ...(filter.type ? { type: filter.type } : {}), ...(filter.unread ? { unread: true } : {}) };

  useEffect(() => {
    setAlerts(null);
    setError(null);
    api
      .alerts(query)
      .then((page) => {
        setAlerts(page.data);
        setCursor(page.next_cursor);
      })
      .catch((err: unknown) => setError(err instanceof Error ? err.message : 'Loading failed.'));
    return hub.on((event) => {
      if (event.type === 'alert.created' && matches(event.data)) setAlerts((list) => (list && !list.some((a) => a.id === event.data.id) ? [event.data, ...list] : list));
      // Read, or changed since (its type refined by detection, its clip written after the
      // post-roll, which brings its picture): the alert as the gateway has it now.
      if (event.type === 'alert.read' || event.type === 'alert.updated') setAlerts((list) => list && list.map((a) => (a.id === event.data.id ? event.data : a)));
    });
  }, [api, hub, key, epoch]);

  const setFilter = (next: Partial<Filter>) => {
    const merged = { ...filter, ...next };
    const q = new URLSearchParams();
    if (merged.camera) q.set('camera', merged.camera);
    if (merged.type) q.set('type', merged.type);
    if (merged.unread) q.set('unread', '1');
    const text = q.toString();
    navigate(`/events${text ? `?${text}` : ''}`, true);
  };

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
    const at = Math.max(0, rows.findIndex((row) => row.dataset.alertId === from));
    const ordered = [...rows.slice(at), ...rows.slice(0, at)];
    focusFirst([...ordered.map((row) => row.querySelector<HTMLElement>('button.mark-read')), rows[at]?.querySelector<HTMLElement>('a')]);
  }, [alerts]);

  const markRead = async (ids: string[], from: string | null) => {
    setError(null);
    refocusFrom.current = from;
    try {
      const updated = await Promise.all(ids.map((id) => api.markRead(id)));
      const byId = new Map(updated.map((a) => [a.id, a]));
      setAlerts((list) => list && list.map((a) => byId.get(a.id) ?? a));
    } catch (err) {
      setError(err instanceof Error ? err.message : 'Marking as read failed.');
    } finally {
      recountUnread();
    }
  };

  const more = async () => {
    if (!cursor) return;
    const page = await api.alerts({ ...query, cursor });
    setAlerts((list) => [...(list ?? []), ...page.data]);
    setCursor(page.next_cursor);
  };

  const nameOf = (id: string) => devices?.find((d) => d.id === id)?.name ?? 'Unknown camera';
  const unreadShown = (alerts ?? []).filter((a) => !a.read).map((a) => a.id);

  return (
    <section>
      <h1>Events</h1>
      <form class="filters" onSubmit={(e) => e.preventDefault()} aria-label="Filter events">
        <Choice label="Camera" value={filter.camera} all="All cameras" choices={(devices ?? []).map((d) => ({ value: d.id, name: d.name }))} onChange={(camera) => setFilter({ camera })} />
        <Choice label="Type" value={filter.type} all="All types" choices={ALERT_TYPES.map((t) => ({ value: t, name: ALERT_TYPE_NAMES[t] }))} onChange={(type) => setFilter({ type })} />
        <label class="check">
          <input type="checkbox" checked={filter.unread} onChange={(e) => setFilter({ unread: e.currentTarget.checked })} />
          Unread only
        </label>
        {canMark ? (
          <button type="button" disabled={unreadShown.length === 0} onClick={() => void markRead(unreadShown, unreadShown[0] ?? null)}>
            Mark all shown as read
          </button>
        ) : null}
      </form>
      {error ? (
        <p class="banner warn" role="alert">
          {error}
        </p>
      ) : null}
      {alerts === null && !error ? <p role="status">Loading events…</p> : null}
      {alerts?.length === 0 ? <p>No events{filter.camera || filter.type || filter.unread ? ' match these filters' : ' yet'}.</p> : null}
      <ul class="alerts" aria-label="Events, newest first" ref={listEl}>
        {alerts?.map((alert) => (
          <li key={alert.id} class={alert.read ? 'alert read' : 'alert unread'} data-testid="alert" data-alert-id={alert.id}>
            {alert.recording_id && canClips ? (
              <AuthImage api={api} path={api.thumbnailPath(alert.recording_id)} alt={`${ALERT_TYPE_NAMES[alert.type]} at ${nameOf(alert.device_id)}`} class="thumb" placeholder="No picture" missingRetries={5} />
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
                <span>{nameOf(alert.device_id)}</span> · <time dateTime={alert.created_at}>{when(alert.created_at)}</time>
              </p>
              <div class="row-actions">
                {alert.recording_id && canClips ? (
                  <a href={`/clips?camera=${encodeURIComponent(alert.device_id)}&recording=${encodeURIComponent(alert.recording_id)}`}>Play clip</a>
                ) : null}
                {canMark && !alert.read ? (
                  <button type="button" class="small mark-read" onClick={() => void markRead([alert.id], alert.id)}>
                    Mark as read
                  </button>
                ) : null}
              </div>
            </div>
          </li>
        ))}
      </ul>
      {cursor ? (
        <button type="button" onClick={() => void more()}>
          Show older events
        </button>
      ) : null}
    </section>
  );
}
