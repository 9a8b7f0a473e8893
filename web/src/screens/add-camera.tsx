import { useState } from 'preact/hooks';
import { ApiError } from '../api.js';
import { useApp } from '../app.js';
import { DeviceStatus } from '../parts/device-status.js';
import { Field, fieldAria } from '../parts/field.js';
import { settingsHref } from '../routes.js';
import { addFieldOfApiError, addressProblem, type AddField } from '../settings-draft.js';
import type { Device } from '../types.js';

// Adding cameras (admins): the cameras the gateway found that refuse its account, each with its
// username and password to enter (PATCH), and an ONVIF camera by its address (POST). Each camera
// answered here stays on the screen with its status as it changes, until it lets the gateway in.
// ?camera= puts that camera first (the cameras screen's "Enter password").

type Outcome = { text: string; error: boolean } | null;

export function AddCameraScreen(props: { params: URLSearchParams }) {
  const { devices } = useApp();
  const wanted = props.params.get('camera');
  const [tried, setTried] = useState<ReadonlySet<string>>(new Set());
  const [added, setAdded] = useState<readonly Device[]>([]);
  if (devices === null) return <p role="status">Loading…</p>;
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
        <p class="meta">
          For an ONVIF camera the gateway did not find by itself (on another network, or with discovery off). Cameras
          with only an RTSP address cannot be added yet.
        </p>
        <AddressForm onAdded={(d) => setAdded((list) => [...list.filter((x) => x.id !== d.id), d])} />
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

const EMPTY = { address: '', username: '', password: '', name: '' };

function AddressForm(props: { onAdded: (device: Device) => void }) {
  const { api, deviceChanged } = useApp();
  const [form, setForm] = useState<Record<AddField, string>>(EMPTY);
  const [errors, setErrors] = useState<Partial<Record<AddField, string>>>({});
  const [outcome, setOutcome] = useState<Outcome>(null);
  const [busy, setBusy] = useState(false);
  const set = (field: AddField, value: string) => {
    setForm((f) => ({ ...f, [field]: value }));
    setErrors((e) => ({ ...e, [field]: undefined }));
  };

  const add = async (e: Event) => {
    e.preventDefault();
    if (busy) return;
    const local: Partial<Record<AddField, string>> = {};
    const bad = addressProblem(form.address);
    if (bad) local.address = bad;
    if (form.username === '') local.username = "Enter the camera's username.";
    setErrors(local);
    if (Object.keys(local).length > 0) return setOutcome({ text: 'Not added: see the fields marked.', error: true });
    setBusy(true);
    setOutcome(null);
    try {
      const name = form.name.trim();
      const device = await api.addDevice({
        address: form.address.trim(),
        username: form.username,
        password: form.password,
        ...(name ? { name } : {}),
      });
      deviceChanged(device.id, device);
      props.onAdded(device);
      setForm(EMPTY);
      setOutcome({ text: `${device.name} added.`, error: false });
    } catch (err) {
      const text = err instanceof Error ? err.message : 'The gateway did not answer.';
      const field = err instanceof ApiError ? addFieldOfApiError(err.status, text) : null;
      if (field) setErrors({ [field]: text });
      setOutcome({ text: `Not added: ${text}`, error: true });
    } finally {
      setBusy(false);
    }
  };

  const input = (field: AddField, label: string, extra: { max: number; hint?: string }) => {
    const common = {
      ...fieldAria(`add-${field}`, { hint: extra.hint, error: errors[field] }),
      value: form[field],
      maxLength: extra.max,
      spellcheck: false,
      onInput: (e: { currentTarget: HTMLInputElement }) => set(field, e.currentTarget.value),
    };
    return (
      <Field id={`add-${field}`} label={label} hint={extra.hint} error={errors[field]}>
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
      {input('address', 'ONVIF address', {
        max: 262,
        hint: 'A name or an IP address, with :port when it is not 80: e.g. 192.168.1.20 or cam.lan:8080.',
      })}
      {input('username', 'Username', { max: 128 })}
      {input('password', 'Password', { max: 256 })}
      {input('name', 'Name (optional)', { max: 100, hint: 'Without one it is called "Camera at" its address.' })}
      <div class="save-row">
        <button type="submit" class="primary" aria-disabled={busy}>
          Add camera
        </button>
        <p role="status" class={outcome?.error ? 'outcome field-error' : 'outcome'} data-testid="add-outcome">
          {outcome?.text}
        </p>
      </div>
    </form>
  );
}
