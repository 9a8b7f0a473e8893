import { createContext } from 'preact';
import { useCallback, useContext, useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import { UNREAD_FILTER, type Api } from './api.js';
import { SessionEndedError, UnreachableError, type AuthState, type Session } from './auth.js';
import { startFeed, type EventHub, type FeedMode } from './events.js';
import { focusScreenHeading } from './focus.js';
import type { Subscribe } from './hub.js';
import { isSignInPath } from './paths.js';
import { navigate, useLocation } from './router.js';
import { parseRoute } from './routes.js';
import { AddCameraScreen } from './screens/add-camera.js';
import { CameraSettingsScreen } from './screens/camera-settings.js';
import { CamerasScreen } from './screens/cameras.js';
import { ClipsScreen } from './screens/clips.js';
import { EventsScreen } from './screens/events.js';
import { LiveScreen } from './screens/live.js';
import { SignInScreen } from './screens/signin.js';
import { SystemScreen } from './screens/system.js';
import { NotificationsScreen } from './screens/notifications.js';
import { unsubscribe } from './push-client.js';
import { TimelineScreen } from './screens/timeline.js';
import type { Device } from './types.js';

// The frame around the screens: sign-in state, the navigation, the banners (lost connection,
// session expired), and what several screens use: the device list and the unread count.

interface AppContext {
  api: Api;
  hub: EventHub;
  scopes: ReadonlySet<string>;
  devices: Device[] | null;
  /** Bumped when the gateway is reachable again: screens reload what they show. */
  epoch: number;
  /** A screen changed what is read; the unread count is fetched again. */
  recountUnread: () => void;
  /** A screen added, changed or removed (null) a camera: the list shows it at once. */
  deviceChanged: (id: string, device: Device | null) => void;
}

const Ctx = createContext<AppContext | null>(null);

export function useApp(): AppContext {
  const ctx = useContext(Ctx);
  if (!ctx) throw new Error('useApp outside App');
  return ctx;
}

export interface AppProps {
  session: Session;
  /** session.start() for this page's address, begun before the first render. */
  started: ReturnType<Session['start']>;
  api: Api;
  hub: EventHub;
  /** The session's sign-in state as it changes (signed out elsewhere, expired, refused). */
  authChanges: Subscribe<AuthState>;
  /** Whether the gateway answers, as the session's and the API's requests find it. */
  reachability: Subscribe<boolean>;
}

/** What the app says when it opens and the gateway does not answer (offline, another network). */
const UNREACHABLE =
  "Check that this phone or computer is on the gateway's network. This page tries again every few seconds and goes on by itself.";

type Boot =
  { kind: 'starting' } | { kind: 'ready'; auth: AuthState; fromSignIn?: boolean } | { kind: 'failed'; message: string };

export function App({ session, started, api, hub, authChanges, reachability }: AppProps) {
  const [boot, setBoot] = useState<Boot>({ kind: 'starting' });
  const [reachable, setReachable] = useState(true);
  const [epoch, setEpoch] = useState(0);
  const signIn = useCallback(() => void session.signIn(location.pathname + location.search), [session]);

  // Layout effects here and below: Preact runs useEffect only after the next painted frame (up to
  // 100 ms later, more in a tab not drawn), and what the first screen waits for is chained on these
  // (measured in `npm run bench -- web`: sign-in to cameras, docs/web-app.md).
  useLayoutEffect(() => reachability(setReachable), [reachability]);
  useLayoutEffect(() => authChanges((auth) => setBoot({ kind: 'ready', auth })), [authChanges]);
  useLayoutEffect(() => {
    started
      .then(({ state, returnTo }) => {
        if (returnTo !== null) navigate(returnTo, true);
        setBoot({ kind: 'ready', auth: state, fromSignIn: returnTo !== null });
      })
      .catch((err: unknown) => {
        if (isSignInPath(location.pathname)) navigate('/', true);
        if (err instanceof SessionEndedError)
          setBoot({ kind: 'ready', auth: { kind: 'signed-out', reason: 'refused', detail: err.message } });
        else if (err instanceof UnreachableError) setBoot({ kind: 'failed', message: UNREACHABLE });
        else setBoot({ kind: 'failed', message: err instanceof Error ? err.message : 'Starting failed.' });
      });
  }, [started]);

  // Lost connection: look for the gateway every few seconds; once it answers, screens reload.
  useEffect(() => {
    if (reachable && boot.kind !== 'failed') return;
    const timer = setInterval(() => {
      fetch('/healthz', { cache: 'no-store' })
        .then((res) => {
          if (!res.ok) return;
          setReachable(true);
          setEpoch((n) => n + 1);
          if (boot.kind === 'failed') location.reload();
        })
        .catch(() => undefined);
    }, 3_000);
    return () => clearInterval(timer);
  }, [reachable, boot.kind]);

  if (boot.kind === 'starting')
    return (
      <p class="boot" role="status">
        Loading…
      </p>
    );
  if (boot.kind === 'failed') return <SignInScreen message={boot.message} onSignIn={null} />;
  // A first visit (an installed app opened from the home screen is one too: a new tab) with no
  // gateway to sign in at: said, rather than "Signing in…" for ever; once the gateway answers,
  // the sign-in starts by itself.
  if (boot.auth.kind === 'signed-out' && boot.auth.reason === 'new' && !reachable)
    return <SignInScreen message={UNREACHABLE} onSignIn={null} />;
  if (boot.auth.kind === 'signed-out') {
    return <SignInScreen reason={boot.auth.reason} message={boot.auth.detail ?? null} onSignIn={signIn} />;
  }
  return (
    <SignedIn
      session={session}
      api={api}
      hub={hub}
      scopes={boot.auth.scopes}
      reachable={reachable}
      epoch={epoch}
      fromSignIn={boot.fromSignIn === true}
    />
  );
}

/**
 * A new screen (and the first one after signing in) takes the focus to its heading once it is
 * shown: the link that led there is gone or elsewhere, and a screen reader says where the user
 * is. Not when the user has already moved into the new screen.
 */
function useFocusOnNewScreen(pathname: string, focusFirst: boolean): void {
  const pending = useRef(focusFirst);
  const shown = useRef(pathname);
  if (shown.current !== pathname) {
    shown.current = pathname;
    pending.current = true;
  }
  useEffect(() => {
    if (!pending.current) return;
    const active = document.activeElement;
    const main = document.getElementById('main');
    const movedIn = active !== null && active !== main && main?.contains(active) === true && active.tagName !== 'H1';
    if (movedIn || focusScreenHeading()) pending.current = false;
  });
}

function SignedIn(props: {
  session: Session;
  api: Api;
  hub: EventHub;
  scopes: ReadonlySet<string>;
  reachable: boolean;
  epoch: number;
  fromSignIn: boolean;
}) {
  const { api, hub, scopes, epoch } = props;
  const loc = useLocation();
  const route = parseRoute(loc.pathname, loc.search);
  useFocusOnNewScreen(loc.pathname, props.fromSignIn);
  const [devices, setDevices] = useState<Device[] | null>(null);
  const [unread, setUnread] = useState<{ count: number; more: boolean } | null>(null);
  const [feed, setFeed] = useState<FeedMode>('connecting');
  const [recount, setRecount] = useState(0);
  const recountUnread = useCallback(() => setRecount((n) => n + 1), []);
  // A camera removed here may still be told of as going offline (its session ends first), after
  // the removal's answer: that news must not bring it back to the list.
  const removed = useRef(new Set<string>());

  useEffect(() => startFeed(api, hub, setFeed), [api, hub]);

  // The device list is what the first screen waits for: its request leaves with this render.
  useLayoutEffect(() => {
    const load = () =>
      api
        .devices()
        .then((page) => setDevices(page.data))
        .catch(() => undefined);
    void load();
    const off = hub.on((event) => {
      // Added, changed or removed in another browser (or by the camera): every open app sees it at
      // once. Only a status may come late for a camera removed (its session ended after).
      if (event.type === 'device.removed') {
        const { id } = event.data;
        removed.current.add(id);
        setDevices((list) => list && replaced(list, id, null));
      } else if (
        event.type === 'device.updated' ||
        (event.type === 'device.status' && !removed.current.has(event.data.id))
      ) {
        const device = event.data;
        removed.current.delete(device.id);
        setDevices((list) => list && replaced(list, device.id, device));
      }
      if (event.type === 'alert.created' || event.type === 'alert.read') recountUnread();
    });
    const timer = setInterval(() => void load(), 30_000);
    return () => {
      off();
      clearInterval(timer);
    };
  }, [api, hub, epoch, recountUnread]);

  useLayoutEffect(() => {
    api
      .alerts(UNREAD_FILTER)
      .then((page) => setUnread({ count: page.data.length, more: page.next_cursor !== null }))
      .catch(() => undefined);
  }, [api, epoch, recount]);

  const deviceChanged = useCallback((id: string, device: Device | null) => {
    if (device === null) removed.current.add(id);
    else removed.current.delete(id);
    setDevices((list) => list && replaced(list, id, device));
  }, []);
  const ctx = useMemo<AppContext>(
    () => ({ api, hub, scopes, devices, epoch, recountUnread, deviceChanged }),
    [api, hub, scopes, devices, epoch, recountUnread, deviceChanged],
  );
  const current = route.screen;
  const cameraScreens = ['live', 'timeline', 'settings', 'add-camera'];
  const link = (href: string, label: string, screen: string, extra?: preact.ComponentChildren) => (
    <a href={href} aria-current={current === screen ? 'page' : undefined}>
      {label}
      {extra}
    </a>
  );

  return (
    <Ctx.Provider value={ctx}>
      <a
        class="skip"
        href="#main"
        onClick={(e) => {
          // Past the navigation to the screen's heading; the router would drop the #main.
          e.preventDefault();
          e.stopPropagation();
          focusScreenHeading();
        }}
      >
        Skip to content
      </a>
      <header class="top">
        <span class="brand">Edge gateway</span>
        <nav aria-label="Screens">
          {link('/', 'Cameras', cameraScreens.includes(current) ? current : 'cameras')}
          {link(
            '/events',
            'Events',
            'events',
            unread && unread.count > 0 ? (
              <span
                class="badge"
                aria-label={`${unread.count}${unread.more ? ' or more' : ''} unread`}
                data-testid="unread-count"
              >
                {unread.count}
                {unread.more ? '+' : ''}
              </span>
            ) : null,
          )}
          {scopes.has('recordings:read') ? link('/clips', 'Clips', 'clips') : null}
          {scopes.has('devices:write') ? link('/system', 'System', 'system') : null}
          {scopes.has('alerts:read') ? link('/notifications', 'Notify', 'notifications') : null}
        </nav>
        <button
          type="button"
          class="quiet"
          // This browser's push subscription ends with the session: the gateway forgets it with the
          // sign-in's grant, the browser here.
          onClick={() =>
            void unsubscribe()
              .then(undefined, () => null)
              .finally(() => void props.session.signOut())
          }
        >
          Sign out
        </button>
      </header>
      <div class="banners" aria-live="polite">
        {!props.reachable ? (
          <p class="banner warn" role="status">
            Lost connection to the gateway. Retrying… (this page recovers by itself)
          </p>
        ) : feed === 'retrying' ? (
          <p class="banner" role="status">
            Live updates paused; reconnecting…
          </p>
        ) : null}
      </div>
      <main id="main" tabIndex={-1}>
        {route.screen === 'cameras' ? <CamerasScreen /> : null}
        {route.screen === 'live' ? <LiveScreen deviceId={route.deviceId} /> : null}
        {route.screen === 'timeline' ? (
          scopes.has('recordings:read') ? (
            <TimelineScreen deviceId={route.deviceId} params={route.params} />
          ) : (
            <p>Your account may not view recorded footage.</p>
          )
        ) : null}
        {route.screen === 'settings' || route.screen === 'add-camera' ? (
          !scopes.has('devices:write') ? (
            <section>
              <h1>{route.screen === 'settings' ? 'Camera settings' : 'Add a camera'}</h1>
              <p>Your account may not set cameras up: ask an admin of the gateway.</p>
            </section>
          ) : route.screen === 'settings' ? (
            <CameraSettingsScreen deviceId={route.deviceId} />
          ) : (
            <AddCameraScreen params={route.params} />
          )
        ) : null}
        {route.screen === 'events' ? <EventsScreen params={route.params} /> : null}
        {route.screen === 'clips' ? (
          scopes.has('recordings:read') ? (
            <ClipsScreen params={route.params} />
          ) : (
            <p>Your account may not view clips.</p>
          )
        ) : null}
        {route.screen === 'system' ? (
          scopes.has('devices:write') ? (
            <SystemScreen />
          ) : (
            <section>
              <h1>System</h1>
              <p>Your account may not see the gateway's system status: ask an admin of the gateway.</p>
            </section>
          )
        ) : null}
        {route.screen === 'notifications' ? (
          scopes.has('alerts:read') ? (
            <NotificationsScreen />
          ) : (
            <p>Your account may not be told of alerts.</p>
          )
        ) : null}
        {route.screen === 'missing' ? (
          <section>
            <h1>Nothing here</h1>
            <p>
              This page does not exist. <a href="/">Back to the cameras</a>.
            </p>
          </section>
        ) : null}
      </main>
    </Ctx.Provider>
  );
}

/** The list with the device of this id replaced, added (a camera new to it) or removed (null). */
function replaced(list: Device[], id: string, device: Device | null): Device[] {
  if (device === null) return list.filter((d) => d.id !== id);
  return list.some((d) => d.id === id) ? list.map((d) => (d.id === id ? device : d)) : [...list, device];
}
