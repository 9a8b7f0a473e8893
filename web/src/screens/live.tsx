import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from '../api.js';
import { useApp } from '../app.js';
import { when } from '../format.js';
import { playHls, playWhep, type Stop } from '../live-player.js';
import { AuthImage } from '../parts/auth-image.js';
import { Confirm } from '../parts/confirm.js';
import { DeviceStatus } from '../parts/device-status.js';
import { PtzPad } from '../parts/ptz-pad.js';
import { pointInPicture } from '../ptz-hold.js';
import { settingsHref } from '../routes.js';
import { ALERT_TYPE_NAMES, type Alert, type ControlAction, type Device } from '../types.js';
import { useFootageCameras } from '../use-footage-cameras.js';
import { CameraNotFound } from '../parts/camera-not-found.js';

// One camera live: WebRTC, else LL-HLS, else a still refreshed every second; main/sub, mute, full
// screen; its latest events beside it; reboot and set-clock for accounts with devices:write, and
// for a pan-tilt-zoom camera the pad that steers it (parts/ptz-pad.tsx), a tap on the picture
// centring it where the camera can.

type Mode = { kind: 'starting' } | { kind: 'webrtc' } | { kind: 'hls' } | { kind: 'stills'; why: string };
type Profile = 'main' | 'sub';

const CONTROL_TEXT: Record<ControlAction, { button: string; title: string; body: string; done: string }> = {
  reboot: {
    button: 'Reboot camera',
    title: 'Reboot this camera?',
    body: 'It stops recording and streaming for about a minute.',
    done: 'The camera is rebooting.',
  },
  sync_time: {
    button: 'Set clock',
    title: "Set the camera's clock?",
    body: "The camera's clock is set to the gateway's time.",
    done: "The camera's clock is set.",
  },
};

export function LiveScreen(props: { deviceId: string }) {
  const { api, devices, scopes } = useApp();
  const footageCameras = useFootageCameras();
  const device = devices?.find((d) => d.id === props.deviceId) ?? null;
  const [profile, setProfile] = useState<Profile>('main');
  const [muted, setMuted] = useState(true);
  const [mode, setMode] = useState<Mode>({ kind: 'starting' });
  const video = useRef<HTMLVideoElement>(null);
  const stage = useRef<HTMLDivElement>(null);
  const online = device?.status === 'online';
  const [centring, setCentring] = useState(false);
  const [ptzSaid, setPtzSaid] = useState<string | null>(null);

  useEffect(() => {
    const el = video.current;
    if (!el || !online) return;
    const abort = new AbortController();
    let stop: Stop | null = null;
    const start = async () => {
      setMode({ kind: 'starting' });
      try {
        const address = await api.stream(props.deviceId, 'webrtc', profile);
        stop = await playWhep(el, address.stream_url, abort.signal);
        if (!abort.signal.aborted) setMode({ kind: 'webrtc' });
        return;
      } catch (err) {
        if (abort.signal.aborted) return;
        console.info('WebRTC did not play; trying LL-HLS', err);
      }
      try {
        const address = await api.stream(props.deviceId, 'hls', profile);
        stop = await playHls(el, address.stream_url, abort.signal);
        if (!abort.signal.aborted) setMode({ kind: 'hls' });
      } catch (err) {
        if (abort.signal.aborted) return;
        const why = err instanceof ApiError ? err.message : 'The live stream does not play here.';
        setMode({ kind: 'stills', why });
      }
    };
    void start();
    return () => {
      abort.abort();
      stop?.();
    };
  }, [api, props.deviceId, profile, online]);

  useEffect(() => {
    if (video.current) video.current.muted = muted;
  }, [muted, mode.kind]);

  if (devices === null) return <p role="status">Loading…</p>;
  if (!device) return <CameraNotFound />;

  const centre = (e: MouseEvent) => {
    const el = mode.kind === 'stills' || !online ? stage.current?.querySelector('img') : video.current;
    if (!centring || !el) return;
    const size =
      el instanceof HTMLVideoElement
        ? { width: el.videoWidth, height: el.videoHeight }
        : { width: el.naturalWidth, height: el.naturalHeight };
    const point = pointInPicture({ x: e.clientX, y: e.clientY }, el.getBoundingClientRect(), size);
    if (!point) return;
    api
      .ptz(device.id, { action: 'ptz_center', ...point })
      .then(() => setPtzSaid('Centred on the point you tapped.'))
      .catch((err: unknown) => setPtzSaid(`The camera did not move: ${err instanceof Error ? err.message : ''}`));
  };

  const fullScreen = () => {
    if (document.fullscreenElement) void document.exitFullscreen();
    else void stage.current?.requestFullscreen().catch(() => undefined);
  };

  return (
    <section class="live">
      <LiveHead device={device} footage={footageCameras.has(device.id)} admin={scopes.has('devices:write')} />
      <div class="live-body">
        <div class="live-main">
          <div
            class={centring ? 'stage centring' : 'stage'}
            ref={stage}
            onClick={centring ? centre : undefined}
            data-testid="live-stage"
          >
            {online ? (
              <video
                ref={video}
                muted
                autoplay
                playsInline
                data-testid="live-video"
                hidden={mode.kind === 'stills'}
                aria-label={`Live video of ${device.name}`}
              />
            ) : null}
            {!online || mode.kind === 'stills' ? (
              <AuthImage
                api={api}
                path={api.snapshotPath(device.id, 1280)}
                alt={`Latest picture of ${device.name}`}
                refreshMs={1_000}
                placeholder={online ? 'No live picture' : 'Camera offline'}
              />
            ) : null}
          </div>
          <div class="toolbar" role="toolbar" aria-label="Live video">
            <div class="segmented" role="group" aria-label="Stream quality">
              <button type="button" aria-pressed={profile === 'main'} onClick={() => setProfile('main')}>
                High quality
              </button>
              <button type="button" aria-pressed={profile === 'sub'} onClick={() => setProfile('sub')}>
                Low bandwidth
              </button>
            </div>
            <button type="button" onClick={() => setMuted((m) => !m)}>
              {muted ? 'Unmute' : 'Mute'}
            </button>
            <button type="button" onClick={fullScreen}>
              Full screen
            </button>
            <span class="mode" role="status" data-testid="live-mode">
              {online ? modeText(mode) : 'Camera offline: showing its last picture'}
            </span>
          </div>
          {scopes.has('devices:write') && device.ptz ? (
            <PtzPad
              device={{ ...device, ptz: device.ptz }}
              online={online}
              centring={centring}
              onCentring={setCentring}
              say={setPtzSaid}
            />
          ) : null}
          {scopes.has('devices:write') && device.ptz ? (
            <p role="status" class="outcome" data-testid="ptz-outcome">
              {ptzSaid}
            </p>
          ) : null}
          {scopes.has('devices:write') ? <Controls deviceId={device.id} online={online} /> : null}
        </div>
        <LatestEvents deviceId={device.id} />
      </div>
    </section>
  );
}

/** The camera's name and status, and where to go from here: its footage, its settings (admins). */
function LiveHead(props: { device: Device; footage: boolean; admin: boolean }) {
  const { device } = props;
  return (
    <div class="live-head">
      <h1>{device.name}</h1>
      <DeviceStatus device={device} withAdvice />
      {props.footage ? (
        <a href={`/cameras/${encodeURIComponent(device.id)}/timeline`} data-testid="timeline-link">
          Recorded footage
        </a>
      ) : null}
      {props.admin ? (
        <a href={settingsHref(device.id)} data-testid="settings-link">
          Settings
        </a>
      ) : null}
    </div>
  );
}

function modeText(mode: Mode): string {
  if (mode.kind === 'starting') return 'Connecting…';
  if (mode.kind === 'webrtc') return 'Live (WebRTC)';
  if (mode.kind === 'hls') return 'Live (LL-HLS, a few seconds behind)';
  return `Stills every second: ${mode.why}`;
}

function Controls(props: { deviceId: string; online: boolean }) {
  const { api } = useApp();
  const [asking, setAsking] = useState<ControlAction | null>(null);
  const [outcome, setOutcome] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const answer = async (yes: boolean) => {
    const action = asking;
    setAsking(null);
    if (!yes || !action) return;
    setBusy(true);
    setOutcome(null);
    try {
      const result = await api.control(props.deviceId, action);
      setOutcome(
        result.status === 'succeeded'
          ? CONTROL_TEXT[action].done
          : `The camera refused: ${result.error ?? 'no reason given'}`,
      );
    } catch (err) {
      setOutcome(err instanceof Error ? err.message : 'The request failed.');
    } finally {
      setBusy(false);
    }
  };

  return (
    <div class="controls" data-testid="device-controls">
      {(['sync_time', 'reboot'] as const).map((action) => (
        // Busy, not disabled: a disabled button would drop the focus the closed dialog gave back to it.
        <button
          key={action}
          type="button"
          disabled={!props.online}
          aria-disabled={busy}
          onClick={() => busy || setAsking(action)}
        >
          {CONTROL_TEXT[action].button}
        </button>
      ))}
      <p role="status" class="outcome">
        {outcome}
      </p>
      <Confirm
        open={asking !== null}
        title={asking ? CONTROL_TEXT[asking].title : ''}
        confirmLabel={asking === 'reboot' ? 'Reboot' : 'Set clock'}
        onAnswer={(yes) => void answer(yes)}
      >
        <p>{asking ? CONTROL_TEXT[asking].body : ''}</p>
      </Confirm>
    </div>
  );
}

function LatestEvents(props: { deviceId: string }) {
  const { api, hub, epoch, scopes } = useApp();
  const [alerts, setAlerts] = useState<Alert[] | null>(null);
  useEffect(() => {
    api
      .alerts({ device_id: props.deviceId, limit: 10 })
      .then((page) => setAlerts(page.data))
      .catch(() => setAlerts([]));
    return hub.on((event) => {
      if (event.type === 'alert.created' && event.data.device_id === props.deviceId)
        setAlerts((list) => [event.data, ...(list ?? [])].slice(0, 10));
      if (event.type === 'alert.updated' || event.type === 'alert.read')
        setAlerts((list) => list && list.map((a) => (a.id === event.data.id ? event.data : a)));
    });
  }, [api, hub, props.deviceId, epoch]);
  return (
    <aside class="latest" aria-labelledby="latest-title">
      <h2 id="latest-title">Latest events</h2>
      {alerts === null ? <p role="status">Loading…</p> : null}
      {alerts?.length === 0 ? <p>No events from this camera yet.</p> : null}
      <ul>
        {alerts?.map((alert) => (
          <li key={alert.id}>
            <span class={`type type-${alert.type}`}>{ALERT_TYPE_NAMES[alert.type]}</span>{' '}
            <span class="time">{when(alert.created_at)}</span>
            {alert.recording_id && scopes.has('recordings:read') ? (
              <a
                href={`/clips?camera=${encodeURIComponent(alert.device_id)}&recording=${encodeURIComponent(alert.recording_id)}`}
                class="small-link"
              >
                Clip
              </a>
            ) : null}
          </li>
        ))}
      </ul>
      <a href={`/events?camera=${encodeURIComponent(props.deviceId)}`}>All events of this camera</a>
    </aside>
  );
}
