import { useEffect, useState } from 'preact/hooks';
import { useApp } from '../app.js';
import { currentSubscription, pushSupport, subscribe, unsubscribe, PushPermissionError } from '../push-client.js';
import type { PushSupport } from '../push.js';
import type { PushInfo, PushPreferences, PushSubscriptionRecord } from '../types.js';

// Notifications on this browser, each signed-in user their own (docs/notifications.md): turned on
// here (the browser asks its permission only then), the cameras and alert types wanted, quiet
// hours, a test notification, turned off again. What the browser cannot do is said plainly.

const TYPES: ReadonlyArray<{ type: PushPreferences['types'][number]; label: string }> = [
  { type: 'human', label: 'Person' },
  { type: 'vehicle', label: 'Vehicle' },
  { type: 'motion', label: 'Motion' },
  { type: 'device_offline', label: 'Camera offline' },
];

const CANNOT: Record<Exclude<PushSupport, 'ok'>, string> = {
  'no-service-worker':
    'This browser cannot receive notifications from the gateway here: it needs the gateway opened over https, with service workers allowed (not in a private window).',
  'no-push': 'This browser does not support push notifications.',
  denied:
    "Notifications are blocked for this gateway in the browser's settings. Allow them there, then come back to this page.",
  'ios-not-installed':
    "On an iPhone or iPad, notifications work only in the installed app: tap Share, then 'Add to Home Screen', and open the gateway from there.",
};

type State =
  | { kind: 'loading' }
  | { kind: 'off' }
  | { kind: 'on'; mine: PushSubscriptionRecord }
  | { kind: 'failed'; message: string };

export function NotificationsScreen() {
  const { api } = useApp();
  const [support] = useState<PushSupport>(() => pushSupport());
  const [info, setInfo] = useState<PushInfo | null>(null);
  const [state, setState] = useState<State>({ kind: 'loading' });
  const [said, setSaid] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    const load = async () => {
      try {
        const [gateway, list, here] = await Promise.all([
          api.pushInfo(),
          api.pushSubscriptions(),
          support === 'ok' ? currentSubscription() : Promise.resolve(null),
        ]);
        setInfo(gateway);
        const mine = here ? list.data.find((s) => s.endpoint === here.endpoint) : undefined;
        setState(mine ? { kind: 'on', mine } : { kind: 'off' });
      } catch (err) {
        setState({ kind: 'failed', message: err instanceof Error ? err.message : 'The gateway did not answer.' });
      }
    };
    void load();
  }, [api, support]);

  const act = async (run: () => Promise<void>) => {
    setBusy(true);
    setSaid(null);
    try {
      await run();
    } catch (err) {
      setSaid(
        err instanceof PushPermissionError
          ? 'The browser was not allowed to show notifications: nothing was turned on.'
          : `That did not work: ${err instanceof Error ? err.message : 'no reason given'}`,
      );
    } finally {
      setBusy(false);
    }
  };

  const turnOn = () =>
    act(async () => {
      if (!info) return;
      const subscription = await subscribe(info.vapid_public_key);
      const mine = await api.subscribePush(subscription);
      setState({ kind: 'on', mine });
      setSaid('Notifications are on for this browser.');
    });
  const turnOff = (mine: PushSubscriptionRecord) =>
    act(async () => {
      await unsubscribe();
      await api.deletePushSubscription(mine.id);
      setState({ kind: 'off' });
      setSaid('Notifications are off for this browser.');
    });

  return (
    <section class="notifications">
      <h1>Notifications</h1>
      <p class="meta">
        A person or vehicle seen by a camera, told on this phone or computer with its picture, even while the app is
        closed.
      </p>
      {support !== 'ok' ? <p class="notice">{CANNOT[support]}</p> : null}
      {info && !info.enabled ? (
        <p class="notice">The gateway sends no notifications: they are turned off in its configuration.</p>
      ) : null}
      {state.kind === 'loading' ? <p role="status">Loading…</p> : null}
      {state.kind === 'failed' ? <p class="field-error">{state.message}</p> : null}
      {state.kind === 'off' ? (
        <button
          type="button"
          class="primary"
          disabled={busy || support !== 'ok' || !info?.enabled}
          onClick={() => void turnOn()}
        >
          Turn on notifications in this browser
        </button>
      ) : null}
      {state.kind === 'on' ? (
        <Preferences
          mine={state.mine}
          busy={busy}
          onSaved={(mine) => setState({ kind: 'on', mine })}
          act={act}
          say={setSaid}
          onTurnOff={() => void turnOff(state.mine)}
        />
      ) : null}
      <p role="status" class="outcome" data-testid="notifications-outcome">
        {said}
      </p>
    </section>
  );
}

function Preferences(props: {
  mine: PushSubscriptionRecord;
  busy: boolean;
  onSaved: (mine: PushSubscriptionRecord) => void;
  act: (run: () => Promise<void>) => Promise<void>;
  say: (text: string) => void;
  onTurnOff: () => void;
}) {
  const { api, devices } = useApp();
  const { mine } = props;
  const [cameras, setCameras] = useState<string[] | null>(mine.devices);
  const [types, setTypes] = useState<PushPreferences['types']>(mine.types);
  const [quiet, setQuiet] = useState(mine.quiet_hours ?? { start: '22:00', end: '07:00' });
  const [quietOn, setQuietOn] = useState(mine.quiet_hours !== null);
  const noType = types.length === 0;

  const save = () =>
    props.act(async () => {
      const saved = await api.updatePushSubscription(mine.id, {
        devices: cameras,
        types,
        quiet_hours: quietOn ? quiet : null,
      });
      props.onSaved(saved);
      props.say('Saved.');
    });
  const test = () =>
    props.act(async () => {
      const result = await api.testPush(mine.id);
      props.say(result.delivered ? 'A test notification is on its way.' : `Not delivered: ${result.outcome}`);
    });

  return (
    <form
      class="settings-form"
      onSubmit={(e) => {
        e.preventDefault();
        void save();
      }}
    >
      <fieldset>
        <legend>Cameras</legend>
        <label class="check">
          <input
            type="checkbox"
            checked={cameras === null}
            onChange={(e) => setCameras(e.currentTarget.checked ? null : [])}
          />
          All cameras, also ones added later
        </label>
        {cameras !== null
          ? (devices ?? []).map((d) => (
              <label class="check" key={d.id}>
                <input
                  type="checkbox"
                  checked={cameras.includes(d.id)}
                  onChange={(e) =>
                    setCameras(e.currentTarget.checked ? [...cameras, d.id] : cameras.filter((id) => id !== d.id))
                  }
                />
                {d.name}
              </label>
            ))
          : null}
      </fieldset>
      <fieldset>
        <legend>What to be told of</legend>
        {TYPES.map((t) => (
          <label class="check" key={t.type}>
            <input
              type="checkbox"
              checked={types.includes(t.type)}
              onChange={(e) =>
                setTypes(e.currentTarget.checked ? [...types, t.type] : types.filter((x) => x !== t.type))
              }
            />
            {t.label}
          </label>
        ))}
        {noType ? <p class="field-error">Choose at least one, or turn notifications off below.</p> : null}
      </fieldset>
      <fieldset>
        <legend>Quiet hours</legend>
        <label class="check">
          <input type="checkbox" checked={quietOn} onChange={(e) => setQuietOn(e.currentTarget.checked)} />
          No notifications between
        </label>
        <div class="quiet-hours">
          <label>
            From
            <input
              type="time"
              value={quiet.start}
              disabled={!quietOn}
              onInput={(e) => setQuiet({ ...quiet, start: e.currentTarget.value })}
            />
          </label>
          <label>
            to
            <input
              type="time"
              value={quiet.end}
              disabled={!quietOn}
              onInput={(e) => setQuiet({ ...quiet, end: e.currentTarget.value })}
            />
          </label>
        </div>
        <p class="meta">In the gateway&apos;s time zone.</p>
      </fieldset>
      <div class="form-actions">
        <button type="submit" class="primary" disabled={props.busy || noType}>
          Save
        </button>
        <button type="button" disabled={props.busy} onClick={() => void test()}>
          Send a test notification
        </button>
        <button type="button" class="quiet" disabled={props.busy} onClick={props.onTurnOff}>
          Turn off in this browser
        </button>
      </div>
    </form>
  );
}
