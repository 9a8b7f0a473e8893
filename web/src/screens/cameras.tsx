import { useLayoutEffect, useState } from 'preact/hooks';
import { useApp } from '../app.js';
import { when } from '../format.js';
import { AuthImage } from '../parts/auth-image.js';
import { DeviceStatus } from '../parts/device-status.js';
import { addCameraHref } from '../routes.js';
import { ALERT_TYPE_NAMES, type Alert } from '../types.js';

// Every camera: its picture (refreshed while on screen), name, status and last event. Click → live.

const STILL_REFRESH_MS = 5_000;

/**
 * A User Timing mark when this page first shows the camera list: how long a sign-in or a load
 * took to reach the cameras, readable in the browser's own clock (performance panel, a RUM
 * script, `npm run bench -- web`) without watching the page while it starts.
 */
const CAMERAS_SHOWN_MARK = 'edge-gateway:cameras-shown';

export function CamerasScreen() {
  const { api, hub, devices, epoch, scopes } = useApp();
  const admin = scopes.has('devices:write');
  const [latest, setLatest] = useState<Record<string, Alert | null>>({});
  const shown = devices !== null;
  // The cameras' ids, one string: the list is a new array at every status change, and the last
  // events are fetched again only when the cameras themselves change. Ids hold no spaces
  // (ID_PATTERN, src/domain/ids.ts).
  const ids = devices?.map((d) => d.id).join(' ') ?? null;

  // Run with the render that draws the cards, before they are painted.
  useLayoutEffect(() => {
    if (shown && performance.getEntriesByName(CAMERAS_SHOWN_MARK).length === 0) performance.mark(CAMERAS_SHOWN_MARK);
  }, [shown]);

  // With the render, as the device list in app.tsx: the cards' last events come in the same round.
  useLayoutEffect(() => {
    if (ids === null) return;
    let stopped = false;
    for (const id of ids.split(' ').filter(Boolean)) {
      api
        .alerts({ device_id: id, limit: 1 })
        .then((page) => !stopped && setLatest((m) => ({ ...m, [id]: page.data[0] ?? null })))
        .catch(() => undefined);
    }
    const off = hub.on((event) => {
      if (event.type === 'alert.created') setLatest((m) => ({ ...m, [event.data.device_id]: event.data }));
      // Its type refined (motion → person): the card says so.
      if (event.type === 'alert.updated')
        setLatest((m) =>
          m[event.data.device_id]?.id === event.data.id ? { ...m, [event.data.device_id]: event.data } : m,
        );
    });
    return () => {
      stopped = true;
      off();
    };
  }, [api, hub, ids, epoch]);

  if (devices === null) return <p role="status">Loading cameras…</p>;
  return (
    <section>
      <div class="live-head">
        <h1>Cameras</h1>
        {admin ? (
          <a href={addCameraHref()} class="button" data-testid="add-camera-link">
            Add camera
          </a>
        ) : null}
      </div>
      {devices.length === 0 ? (
        <p>No cameras yet. The gateway adds the cameras it finds on the network, and those in its config.</p>
      ) : null}
      <ul class="cameras">
        {devices.map((device) => {
          const last = latest[device.id];
          return (
            <li key={device.id} class="camera-card" data-testid="camera">
              <a href={`/cameras/${encodeURIComponent(device.id)}`} class="card-link">
                {device.status === 'online' ? (
                  <AuthImage
                    api={api}
                    path={api.snapshotPath(device.id, 640)}
                    alt={`Current picture of ${device.name}`}
                    refreshMs={STILL_REFRESH_MS}
                    placeholder="No picture yet"
                    testId="still"
                  />
                ) : (
                  <div class="picture">
                    <span class="placeholder">
                      No picture: camera {device.status === 'offline' ? 'offline' : 'refuses the gateway'}
                    </span>
                  </div>
                )}
                <span class="camera-name">{device.name}</span>
              </a>
              <DeviceStatus device={device} withAdvice />
              {admin && device.status === 'unauthorized' ? (
                <a href={addCameraHref(device.id)} class="button small" data-testid="enter-password">
                  Enter password<span class="visually-hidden"> for {device.name}</span>
                </a>
              ) : null}
              <span class="last-event">
                {last === undefined
                  ? ''
                  : last === null
                    ? 'No events yet'
                    : `${ALERT_TYPE_NAMES[last.type]} · ${when(last.created_at)}`}
              </span>
            </li>
          );
        })}
      </ul>
    </section>
  );
}
