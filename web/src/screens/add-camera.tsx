import { useState } from 'preact/hooks';
import { ApiError } from '../api.js';
import { useApp } from '../app.js';
import { DeviceStatus } from '../parts/device-status.js';
import { Field, fieldAria } from '../parts/field.js';
import { settingsHref } from '../routes.js';
import {
  addFieldOfApiError,
  underField,
  addressProblem,
  rtspFieldOfApiError,
  rtspFormProblems,
  type AddField,
  type RtspField,
} from '../settings-draft.js';
import type { Device } from '../types.js';

// Adding cameras (admins): the cameras the gateway found that refuse its account, each with its
// username and password to enter (PATCH), and a camera by its address (POST): an ONVIF camera by
// host[:port], or a plain RTSP camera by its rtsp:// URL (?by=rtsp opens that form). Each camera
// answered here stays on the screen with its status as it changes, until it lets the gateway in.
// ?camera= puts that camera first (the cameras screen's "Enter password").

type Outcome = { text: string; error: boolean } | null;

export function AddCameraScreen(props: { params: URLSearchParams }) {
  const { devices } = useApp();
  const wanted = props.params.get('camera');
  const [tried, setTried] = useState<ReadonlySet<string>>(new Set());
  const [added, setAdded] = useState<readonly Device[]>([]);
  const [kind, setKind] = useState<'onvif' | 'rtsp'>(props.params.get('by') === 'rtsp' ? 'rtsp' : 'onvif');
  if (devices === null) return <p role="status">Loading…</p>;
  const onAdded = (d: Device) => setAdded((list) => [...list.filter((x) => x.id !== d.id), d]);
  const refusing = devices
    .filter((d) => d.status === 'unauthorized' || tried.has(d.id))
    .sort((a, b) => Number(b.id === wanted) - Number(a.id === wanted));
  const current = (d: Device) => devices.find((x) => x.id === d.id) ?? d;

  return (
    <section class="add-camera">
      <h1>Add a camera</h1>
      <section class="panel" aria-labelledby="refusing-title">
        <h2 id="refusing-title">Cameras that refuse the gateway</h2>
        <p class="meta">
          The gateway found these cameras, but they refuse its username and password. Enter the ones the camera was set
          up with.
        </p>
        {refusing.length === 0 ? (
          <p class="placeholder-text">None: every camera the gateway found lets it in.</p>
        ) : (
          <ul class="refusing">
            {refusing.map((d) => (
              <li key={d.id} class={d.id === wanted ? 'wanted' : undefined} data-testid="refusing-camera">
                <PasswordForm device={d} onTried={() => setTried((s) => new Set([...s, d.id]))} />
              </li>
            ))}
          </ul>
        )}
      </section>
      <section class="panel" aria-labelledby="address-title">
        <h2 id="address-title">Add a camera by its address</h2>
        <div class="segmented add-kind" role="group" aria-label="How the gateway reaches the camera">
          <button type="button" aria-pressed={kind === 'onvif'} onClick={() => setKind('onvif')}>
            By ONVIF address
          </button>
          <button type="button" aria-pressed={kind === 'rtsp'} onClick={() => setKind('rtsp')}>
            By RTSP address
          </button>
        </div>
        {kind === 'onvif' ? (
          <>
            <p class="meta">
              For an ONVIF camera the gateway did not find by itself (on another network, or with discovery off): the
              gateway learns its streams, snapshot and events from it, and can reboot or turn it.
            </p>
            <AddressForm onAdded={onAdded} />
          </>
        ) : (
          <>
            <p class="meta">
              For a camera that only gives an rtsp:// address: the gateway shows, records and watches its video for
              motion and people; it gets no events, snapshot or control from it. The gateway connects to this address
              itself: it must be a camera on your network.
            </p>
            <RtspForm onAdded={onAdded} />
          </>
        )}
        {added.length > 0 ? (
          <ul class="added" aria-label="Cameras added">
            {added.map((d) => (
              <li key={d.id} data-testid="added-camera">
                <span class="camera-name">{current(d).name}</span>
                <DeviceStatus device={current(d)} withAdvice />
                <span class="row-actions">
                  <a href={`/cameras/${encodeURIComponent(d.id)}`}>Live view</a>
                  <a href={settingsHref(d.id)}>Settings</a>
                </span>
              </li>
            ))}
          </ul>
        ) : null}
      </section>
    </section>
  );
}

/** The account for a camera that refuses the gateway's: username and password, sent together. */
function PasswordForm(props: { device: Device; onTried: () => void }) {
  const { api, deviceChanged } = useApp();
  const { device } = props;
  const [username, setUsername] = useState(device.settings.username ?? '');
  const [password, setPassword] = useState('');
  const [outcome, setOutcome] = useState<Outcome>(null);
  const [busy, setBusy] = useState(false);
  const id = (field: string) => `${field}-${device.id}`;

  const send = async (e: Event) => {
    e.preventDefault();
    if (busy) return;
    if (username === '' || password === '')
      return setOutcome({ text: 'Enter both the username and the password.', error: true });
    setBusy(true);
    try {
      const saved = await api.updateDevice(device.id, { username, password });
      deviceChanged(saved.id, saved);
      props.onTried();
      setPassword('');
      setOutcome({ text: 'Sent: the gateway is trying this account (see the status above).', error: false });
    } catch (err) {
      setOutcome({ text: err instanceof Error ? err.message : 'The gateway did not answer.', error: true });
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      <div class="refusing-head">
        <span class="camera-name">{device.name}</span>
        {device.address ? <span class="meta">at {device.address}</span> : null}
        <DeviceStatus device={device} />
        {device.status === 'online' ? <a href={settingsHref(device.id)}>Settings</a> : null}
      </div>
      {device.settings.source.account === 'file' ? (
        <p class="file-note">
          Its account is set in the gateway&apos;s configuration file: change the username and password there.
        </p>
      ) : (
        <form class="filters" aria-label={`Account for ${device.name}`} onSubmit={(e) => void send(e)}>
          <Field id={id('user')} label="Username">
            <input
              {...fieldAria(id('user'), {})}
              value={username}
              maxLength={128}
              autocomplete="off"
              spellcheck={false}
              onInput={(e) => setUsername(e.currentTarget.value)}
            />
          </Field>
          <Field id={id('password')} label="Password">
            <input
              {...fieldAria(id('password'), {})}
              type="password"
              value={password}
              maxLength={256}
              autocomplete="new-password"
              onInput={(e) => setPassword(e.currentTarget.value)}
            />
          </Field>
          <button type="submit" class="primary" aria-disabled={busy}>
            Connect
          </button>
          <p role="status" class={outcome?.error ? 'outcome field-error' : 'outcome'}>
            {outcome?.text}
          </p>
        </form>
      )}
    </>
  );
}

/** One field of an add form: its label, length and what is said under it. */
interface FieldSpec<F extends string> {
  field: F;
  label: string;
  max: number;
  hint?: string;
}

const ONVIF_FIELDS: ReadonlyArray<FieldSpec<AddField>> = [
  {
    field: 'address',
    label: 'ONVIF address',
    max: 262,
    hint: 'A name or an IP address, with :port when it is not 80: e.g. 192.168.1.20 or cam.lan:8080.',
  },
  { field: 'username', label: 'Username', max: 128 },
  { field: 'password', label: 'Password', max: 256 },
  { field: 'name', label: 'Name (optional)', max: 100, hint: 'Without one it is called "Camera at" its address.' },
];

const RTSP_FIELDS: ReadonlyArray<FieldSpec<RtspField>> = [
  {
    field: 'url',
    label: 'RTSP address',
    max: 2048,
    hint: "The camera's main stream, as its manual gives it: e.g. rtsp://192.168.1.20:554/stream1. A username and password in it are taken out and kept like the fields below.",
  },
  {
    field: 'sub_url',
    label: 'Sub stream address (optional)',
    max: 2048,
    hint: 'Its lower-resolution stream, if it has one: the gateway uses it for motion and small pictures.',
  },
  { field: 'username', label: 'Username (if it asks for one)', max: 128 },
  { field: 'password', label: 'Password', max: 256 },
  { field: 'name', label: 'Name', max: 100 },
];

const emptyOf = <F extends string>(fields: ReadonlyArray<FieldSpec<F>>) =>
  Object.fromEntries(fields.map((f) => [f.field, ''])) as Record<F, string>;

/** The ONVIF camera by its address (POST with address). */
function AddressForm(props: { onAdded: (device: Device) => void }) {
  const { api } = useApp();
  return (
    <AddForm
      prefix="add"
      fields={ONVIF_FIELDS}
      check={(form) => {
        const local: Partial<Record<AddField, string>> = {};
        const bad = addressProblem(form.address);
        if (bad) local.address = bad;
        if (form.username === '') local.username = "Enter the camera's username.";
        return local;
      }}
      send={(form) => {
        const name = form.name.trim();
        return api.addDevice({
          address: form.address.trim(),
          username: form.username,
          password: form.password,
          ...(name ? { name } : {}),
        });
      }}
      fieldOf={addFieldOfApiError}
      onAdded={props.onAdded}
    />
  );
}

/** A plain RTSP camera by its stream address (POST with rtsp_url). */
function RtspForm(props: { onAdded: (device: Device) => void }) {
  const { api } = useApp();
  return (
    <AddForm
      prefix="rtsp"
      fields={RTSP_FIELDS}
      check={rtspFormProblems}
      send={(form) => {
        const sub = form.sub_url.trim();
        return api.addDevice({
          rtsp_url: form.url.trim(),
          ...(sub ? { sub_rtsp_url: sub } : {}),
          ...(form.username !== '' ? { username: form.username, password: form.password } : {}),
          name: form.name.trim(),
        });
      }}
      fieldOf={rtspFieldOfApiError}
      onAdded={props.onAdded}
    />
  );
}

/**
 * An add form: its fields, what is refused before sending (said next to the field, nothing sent),
 * the POST, and a refusal of the API said next to the field it names, nothing typed lost.
 */
function AddForm<F extends string>(props: {
  /** Ids of the controls: `${prefix}-${field}`; the outcome's test id `${prefix}-outcome`. */
  prefix: string;
  fields: ReadonlyArray<FieldSpec<F>>;
  check: (form: Record<F, string>) => Partial<Record<F, string>>;
  send: (form: Record<F, string>) => Promise<Device>;
  fieldOf: (status: number, description: string) => F | null;
  onAdded: (device: Device) => void;
}) {
  const { deviceChanged } = useApp();
  const [form, setForm] = useState<Record<F, string>>(() => emptyOf(props.fields));
  const [errors, setErrors] = useState<Partial<Record<F, string>>>({});
  const [outcome, setOutcome] = useState<Outcome>(null);
  const [busy, setBusy] = useState(false);
  const set = (field: F, value: string) => {
    setForm((f) => ({ ...f, [field]: value }));
    setErrors((e) => ({ ...e, [field]: undefined }));
  };

  const add = async (e: Event) => {
    e.preventDefault();
    if (busy) return;
    const local = props.check(form);
    setErrors(local);
    if (Object.keys(local).length > 0) return setOutcome({ text: 'Not added: see the fields marked.', error: true });
    setBusy(true);
    setOutcome(null);
    try {
      const device = await props.send(form);
      deviceChanged(device.id, device);
      props.onAdded(device);
      setForm(emptyOf(props.fields));
      setOutcome({ text: `${device.name} added.`, error: false });
    } catch (err) {
      const text = err instanceof Error ? err.message : 'The gateway did not answer.';
      const field = err instanceof ApiError ? props.fieldOf(err.status, text) : null;
      if (field) setErrors({ [field]: underField(text) } as Partial<Record<F, string>>);
      setOutcome({ text: `Not added: ${text}`, error: true });
    } finally {
      setBusy(false);
    }
  };

  const input = ({ field, label, max, hint }: FieldSpec<F>) => {
    const id = `${props.prefix}-${field}`;
    const common = {
      ...fieldAria(id, { hint, error: errors[field] }),
      value: form[field],
      maxLength: max,
      spellcheck: false,
      onInput: (e: { currentTarget: HTMLInputElement }) => set(field, e.currentTarget.value),
    };
    return (
      <Field key={field} id={id} label={label} hint={hint} error={errors[field]}>
        {/* new-password: a browser must not fill in the gateway user's own password here. */}
        {field === 'password' ? (
          <input {...common} type="password" autocomplete="new-password" />
        ) : (
          <input {...common} autocomplete="off" />
        )}
      </Field>
    );
  };

  return (
    <form class="settings-form add-form" aria-labelledby="address-title" onSubmit={(e) => void add(e)}>
      {props.fields.map(input)}
      <div class="save-row">
        <button type="submit" class="primary" aria-disabled={busy}>
          Add camera
        </button>
        <p
          role="status"
          class={outcome?.error ? 'outcome field-error' : 'outcome'}
          data-testid={`${props.prefix}-outcome`}
        >
          {outcome?.text}
        </p>
      </div>
    </form>
  );
}
