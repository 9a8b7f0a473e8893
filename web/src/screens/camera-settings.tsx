import { useEffect, useState } from 'preact/hooks';
import { ApiError } from '../api.js';
import { useApp } from '../app.js';
import { AreaEditor } from '../parts/area-editor.js';
import { Confirm } from '../parts/confirm.js';
import { Field, fieldAria, type FieldText } from '../parts/field.js';
import { DeviceStatus } from '../parts/device-status.js';
import { navigate } from '../router.js';
import {
  draftOf,
  fieldOfApiError,
  rebaseDraft,
  underField,
  settingsPatch,
  SOURCE_OF,
  type DraftField,
  type FieldErrors,
  type SettingsDraft,
} from '../settings-draft.js';
import type { CameraSettings, Device } from '../types.js';
import { CameraNotFound } from '../parts/camera-not-found.js';
import { useChanged } from '../use-changed.js';

// One camera set up by an admin: its name, whether the gateway uses it, recording, detection and
// the account the gateway logs in with (the password never shown), each saved with one PATCH of
// what changed; a plain RTSP camera's stream addresses, read-only; its motion mask and zones drawn
// on its picture; and its removal. What the config file sets is shown read-only: the API refuses
// to change it.

const RECORDING: Record<CameraSettings['recording'], string> = {
  events: 'Clips of events',
  continuous: 'Around the clock, and clips of events',
  off: 'Off: no clips, no footage, no event alerts',
};
const DETECTION: Record<CameraSettings['detection'], string> = { auto: 'Automatic', on: 'On', off: 'Off' };
const DETECTION_HINT =
  "Whether the gateway looks for people and vehicles in this camera's motion. Automatic: unless the camera tells them apart itself.";
const FILE_NOTE = "Set in the gateway's configuration file.";

export function CameraSettingsScreen(props: { deviceId: string }) {
  const { devices } = useApp();
  const device = devices?.find((d) => d.id === props.deviceId) ?? null;
  if (devices === null) return <p role="status">Loading…</p>;
  if (!device) return <CameraNotFound />;
  return (
    <section class="settings-screen">
      <div class="live-head">
        <h1>{device.name}: settings</h1>
        <DeviceStatus device={device} />
        <a href={`/cameras/${encodeURIComponent(device.id)}`}>Live view</a>
      </div>
      {device.address ? (
        <p class="meta">
          {device.source === 'rtsp' ? 'Added by its RTSP address, at' : 'ONVIF address:'} {device.address}
        </p>
      ) : null}
      <div class="settings-body">
        {/* Keyed: another camera's settings start from that camera, not from this one's drafts. */}
        <SettingsForm key={device.id} device={device} />
        <AreaEditor key={device.id} device={device} />
      </div>
      <RemoveCamera device={device} />
    </section>
  );
}

/** Whether this gateway keeps continuous footage at all (GET /v1/footage); null: not known. */
function useContinuousKept(): boolean | null {
  const { api, scopes } = useApp();
  const [kept, setKept] = useState<boolean | null>(null);
  useEffect(() => {
    if (!scopes.has('recordings:read')) return;
    api
      .footageStatus()
      .then((s) => setKept(s.enabled))
      .catch(() => setKept(null));
  }, [api, scopes]);
  return kept;
}

/** The form's fields as typed, what refused them, and sending what changed (one PATCH). */
function useSettingsForm(device: Device) {
  const { api, deviceChanged } = useApp();
  const [draft, setDraft] = useState<SettingsDraft>(() => draftOf(device));
  const [errors, setErrors] = useState<FieldErrors>({});
  const [outcome, setOutcome] = useState<{ text: string; error: boolean } | null>(null);
  const [busy, setBusy] = useState(false);
  // Changed in another browser meanwhile: the fields not touched here follow.
  useChanged(device, (before, now) => setDraft((d) => rebaseDraft(d, before, now)));
  const set = <K extends DraftField>(field: K, value: SettingsDraft[K]) => {
    setDraft((d) => ({ ...d, [field]: value }));
    setErrors((e) => ({ ...e, [field]: undefined }));
  };

  const save = async (e: Event) => {
    e.preventDefault();
    if (busy) return;
    const { patch, errors: refused } = settingsPatch(draft, device);
    setErrors(refused);
    if (Object.keys(refused).length > 0) return setOutcome({ text: 'Not saved: see the fields marked.', error: true });
    if (Object.keys(patch).length === 0) return setOutcome({ text: 'Nothing to save: no change.', error: false });
    setBusy(true);
    setOutcome(null);
    try {
      const saved = await api.updateDevice(device.id, patch);
      deviceChanged(saved.id, saved);
      setDraft((d) => ({ ...d, password: '' }));
      const account = patch.password === undefined ? '' : ' The gateway logs in with the new account now.';
      setOutcome({ text: `Saved.${account}`, error: false });
    } catch (err) {
      // Nothing typed is lost: the refusal is said next to its field, or above the button.
      const text = err instanceof Error ? err.message : 'The gateway did not answer.';
      const field = err instanceof ApiError ? fieldOfApiError(text) : null;
      if (field) setErrors({ [field]: underField(text) });
      setOutcome({ text: `Not saved: ${text}`, error: true });
    } finally {
      setBusy(false);
    }
  };
  return { draft, set, errors, outcome, busy, save };
}

/** Each field's control attributes and its label, hint, note and error: the file's fields say so. */
function fieldsOf(device: Device, errors: FieldErrors) {
  const fromFile = (field: DraftField) => device.settings.source[SOURCE_OF[field]] === 'file';
  const text = (name: DraftField, hint?: string): FieldText => ({
    hint,
    note: fromFile(name) ? FILE_NOTE : undefined,
    error: errors[name],
  });
  return {
    fromFile,
    aria: (name: DraftField, hint?: string) => fieldAria(`setting-${name}`, text(name, hint)),
    fieldProps: (name: DraftField, label: string, hint?: string) => ({
      id: `setting-${name}`,
      label,
      ...text(name, hint),
    }),
  };
}

function SettingsForm(props: { device: Device }) {
  const { device } = props;
  const { draft, set, errors, outcome, busy, save } = useSettingsForm(device);
  const continuous = useContinuousKept();
  const { fromFile, aria, fieldProps } = fieldsOf(device, errors);
  const passwordHint = device.settings.has_password
    ? 'A password is set; enter a new one to change it.'
    : 'No password is set.';

  return (
    <form
      class="settings-form"
      aria-labelledby="settings-title"
      onSubmit={(e) => void save(e)}
      data-testid="settings-form"
    >
      <h2 id="settings-title">Camera</h2>
      <Field {...fieldProps('name', 'Name')}>
        <input
          {...aria('name')}
          value={draft.name}
          maxLength={100}
          readOnly={fromFile('name')}
          autocomplete="off"
          onInput={(e) => set('name', e.currentTarget.value)}
        />
      </Field>
      <div class="field">
        <label class="check">
          <input
            type="checkbox"
            id="setting-enabled"
            checked={draft.enabled}
            disabled={fromFile('enabled')}
            aria-describedby="enabled-hint"
            onChange={(e) => set('enabled', e.currentTarget.checked)}
          />
          Use this camera
        </label>
        <p class="meta" id="enabled-hint">
          Off: the gateway does not connect to it (no live view, recording or detection) and lists it offline.
        </p>
      </div>
      <Field {...fieldProps('recording', 'Recording')}>
        <select
          {...aria('recording')}
          value={draft.recording}
          disabled={fromFile('recording')}
          onChange={(e) => set('recording', e.currentTarget.value as SettingsDraft['recording'])}
        >
          {(Object.keys(RECORDING) as SettingsDraft['recording'][]).map((mode) => (
            <option
              key={mode}
              value={mode}
              disabled={mode === 'continuous' && continuous === false && draft.recording !== mode}
            >
              {RECORDING[mode]}
              {mode === 'continuous' && continuous === false ? ' (not kept on this gateway)' : ''}
            </option>
          ))}
        </select>
      </Field>
      <Field {...fieldProps('detection', 'Person and vehicle detection', DETECTION_HINT)}>
        <select
          {...aria('detection', DETECTION_HINT)}
          value={draft.detection}
          disabled={fromFile('detection')}
          onChange={(e) => set('detection', e.currentTarget.value as SettingsDraft['detection'])}
        >
          {(Object.keys(DETECTION) as SettingsDraft['detection'][]).map((mode) => (
            <option key={mode} value={mode}>
              {DETECTION[mode]}
            </option>
          ))}
        </select>
      </Field>
      {device.source === 'rtsp' ? <StreamAddresses device={device} /> : null}
      <fieldset class="account">
        <legend>The camera&apos;s account</legend>
        <Field {...fieldProps('username', 'Username')}>
          <input
            {...aria('username')}
            value={draft.username}
            maxLength={128}
            readOnly={fromFile('username')}
            autocomplete="off"
            spellcheck={false}
            onInput={(e) => set('username', e.currentTarget.value)}
          />
        </Field>
        {fromFile('password') ? null : (
          <Field {...fieldProps('password', 'Password', passwordHint)}>
            {/* new-password: a browser must not fill in the gateway user's own password here. */}
            <input
              {...aria('password', passwordHint)}
              type="password"
              value={draft.password}
              maxLength={256}
              autocomplete="new-password"
              onInput={(e) => set('password', e.currentTarget.value)}
            />
          </Field>
        )}
      </fieldset>
      <div class="save-row">
        <button type="submit" class="primary" aria-disabled={busy}>
          Save changes
        </button>
        <p role="status" class={outcome?.error ? 'outcome field-error' : 'outcome'} data-testid="settings-outcome">
          {outcome?.text}
        </p>
      </div>
    </form>
  );
}

/**
 * A plain RTSP camera's stream addresses, read-only: what the gateway opens (never with the
 * password, which is kept apart; a parameter that looks like one shows as ***).
 */
function StreamAddresses(props: { device: Device }) {
  const { device } = props;
  const hint = 'The gateway opens this address itself. Its password is kept apart and never shown.';
  return (
    <fieldset class="account" data-testid="stream-addresses">
      <legend>The camera&apos;s streams</legend>
      <Field id="setting-rtsp-url" label="RTSP address" hint={hint}>
        <input {...fieldAria('setting-rtsp-url', { hint })} value={device.rtsp_url ?? ''} readOnly spellcheck={false} />
      </Field>
      <Field id="setting-sub-rtsp-url" label="Sub stream address">
        <input
          id="setting-sub-rtsp-url"
          value={device.sub_rtsp_url ?? ''}
          placeholder="None: the main stream serves for everything"
          readOnly
          spellcheck={false}
        />
      </Field>
    </fieldset>
  );
}

function RemoveCamera(props: { device: Device }) {
  const { api, deviceChanged } = useApp();
  const { device } = props;
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);

  const answer = async (yes: boolean) => {
    setAsking(false);
    if (!yes) return;
    setBusy(true);
    setProblem(null);
    try {
      await api.removeDevice(device.id);
      deviceChanged(device.id, null);
      navigate('/');
    } catch (err) {
      setProblem(err instanceof Error ? err.message : 'The gateway did not answer.');
      setBusy(false);
    }
  };

  return (
    <section class="remove-camera" aria-labelledby="remove-title">
      <h2 id="remove-title">Remove this camera</h2>
      {device.settings.source.name === 'file' ? (
        <p class="file-note">This camera is listed in the gateway&apos;s configuration file: remove it there.</p>
      ) : (
        <>
          <p class="meta">
            The gateway stops using it. Its recordings and events are kept until their retention removes them.
          </p>
          <button type="button" class="danger" aria-disabled={busy} onClick={() => busy || setAsking(true)}>
            Delete camera…
          </button>
          <p role="status" class="outcome field-error">
            {problem}
          </p>
          <Confirm
            open={asking}
            title={`Delete ${device.name}?`}
            confirmLabel="Delete camera"
            onAnswer={(yes) => void answer(yes)}
          >
            <p>
              The gateway stops using this camera and forgets its settings and password. Its recordings and events are
              kept until their retention removes them. It can be added again later by its address.
            </p>
          </Confirm>
        </>
      )}
    </section>
  );
}
