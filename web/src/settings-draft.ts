import type { CameraSettings, Device, DevicePatch } from './types.js';

// The camera settings form as it is filled in: its fields, what it would send (only what changed),
// what is refused before sending, and which field an answer of the API is about, so that a
// refusal is shown next to that field and nothing typed is lost. Pure, so tests run it without a
// browser.

export interface SettingsDraft {
  name: string;
  enabled: boolean;
  recording: CameraSettings['recording'];
  detection: CameraSettings['detection'];
  username: string;
  /** Empty: the password stays as it is (it is never shown). */
  password: string;
}

export type DraftField = keyof SettingsDraft;
export type FieldErrors = Partial<Record<DraftField, string>>;

/** The API's name of each form field's setting (settings.source's keys). */
export const SOURCE_OF: Record<DraftField, keyof CameraSettings['source']> = {
  name: 'name',
  enabled: 'enabled',
  recording: 'recording',
  detection: 'detection',
  username: 'account',
  password: 'account',
};

export function draftOf(device: Device): SettingsDraft {
  const s = device.settings;
  return {
    name: device.name,
    enabled: s.enabled,
    recording: s.recording,
    detection: s.detection,
    username: s.username ?? '',
    password: '',
  };
}

/**
 * The draft once the camera has changed elsewhere (another browser, the camera itself) from `base`
 * to `next`: a field the user has not touched takes the new value, one they have keeps theirs, so
 * saving never quietly undoes another admin's change to a field this form did not change.
 */
export function rebaseDraft(draft: SettingsDraft, base: Device, next: Device): SettingsDraft {
  const before = draftOf(base);
  const after = draftOf(next);
  const out = { ...draft };
  for (const field of Object.keys(draft) as DraftField[])
    if (draft[field] === before[field]) (out as Record<DraftField, unknown>)[field] = after[field];
  return out;
}

/**
 * What to send for this draft: the fields that differ from the device, none the config file sets;
 * the account (username and password, only together) when a password is typed. `errors` lists
 * what the API would refuse, by field; the patch is not to be sent then.
 */
export function settingsPatch(draft: SettingsDraft, device: Device): { patch: DevicePatch; errors: FieldErrors } {
  const s = device.settings;
  const mine = (field: DraftField) => s.source[SOURCE_OF[field]] !== 'file';
  const patch: DevicePatch = {};
  const errors: FieldErrors = {};
  if (mine('name') && draft.name !== device.name) {
    if (draft.name.trim() === '') errors.name = 'Give the camera a name.';
    else patch.name = draft.name;
  }
  if (mine('enabled') && draft.enabled !== s.enabled) patch.enabled = draft.enabled;
  if (mine('recording') && draft.recording !== s.recording) patch.recording = draft.recording;
  if (mine('detection') && draft.detection !== s.detection) patch.detection = draft.detection;
  if (mine('username')) {
    const usernameChanged = draft.username !== (s.username ?? '');
    if (draft.password !== '' || usernameChanged) {
      if (draft.username === '') errors.username = "Enter the camera's username.";
      else if (draft.username.includes(':')) errors.username = 'A username holds no colon (:).';
      else if (draft.password === '')
        errors.password = 'Enter the password with the new username: they are changed together.';
      else {
        patch.username = draft.username;
        patch.password = draft.password;
      }
    }
  }
  return { patch, errors };
}

/**
 * The field an error of the API is about, from its description: a 400 names it (`body field
 * name …`), a 409 starts with the settings the config file sets (`name, account is set …`) or
 * says continuous recording is not kept. null: about the form as a whole.
 */
export function fieldOfApiError(description: string): DraftField | null {
  const named = /\bbody field (name|enabled|recording|detection|username|password)\b/.exec(description);
  if (named) return named[1] as DraftField;
  const fromFile = /^([a-z_]+)(?:, [a-z_]+)* (?:is|are) set for this camera in the config file/.exec(description);
  if (fromFile) {
    const field = fromFile[1] === 'account' ? 'username' : fromFile[1];
    return field === 'name' ||
      field === 'enabled' ||
      field === 'recording' ||
      field === 'detection' ||
      field === 'username'
      ? field
      : null;
  }
  if (description.startsWith('recording continuous')) return 'recording';
  return null;
}

/**
 * An API refusal as said under the field it names: without the "body field name" that the field's
 * place already says, a sentence. "body field rtsp_url points at …" → "Points at …".
 */
export function underField(description: string): string {
  const text = description.replace(/^body field [\w.[\]]+ /, '');
  const sentence = text.charAt(0).toUpperCase() + text.slice(1);
  return /[.!?)]$/.test(sentence) ? sentence : `${sentence}.`;
}

/** The fields of the add-camera form. */
export type AddField = 'address' | 'username' | 'password' | 'name';

/**
 * Why an address as typed is not one the API takes (`host[:port]` of the camera's ONVIF service),
 * said before sending; null when it may be (the gateway has the last word). An RTSP address
 * belongs in the other form.
 */
export function addressProblem(address: string): string | null {
  const a = address.trim();
  if (a === '') return "Enter the camera's address.";
  if (/^rtsps?:/i.test(a))
    return 'That is an RTSP address: choose "By RTSP address" above, or enter the ONVIF address (host or host:port).';
  if (/[/@\s]/.test(a) || /^[a-z]+:\/\//i.test(a))
    return 'Only the host and port, without http:// or a path: e.g. 192.168.1.20 or cam.lan:8080.';
  return null;
}

/** The add form's field an error of the API is about: the one a 400 names; a 409 is about the address. */
export function addFieldOfApiError(status: number, description: string): AddField | null {
  if (status === 409) return 'address';
  const named = /\bbody field (address|username|password|name)\b/.exec(description);
  return named ? (named[1] as AddField) : null;
}

/** The fields of the add-camera form by RTSP address (url: the API's rtsp_url, sub_url: sub_rtsp_url). */
export type RtspField = 'url' | 'sub_url' | 'username' | 'password' | 'name';

/**
 * What the RTSP form would refuse before sending (the gateway has the last word): the main URL and
 * the name are needed, a URL starts with rtsp:// or rtsps:// and holds no blanks, a password goes
 * with a username.
 */
export function rtspFormProblems(form: Record<RtspField, string>): Partial<Record<RtspField, string>> {
  const urlProblem = (text: string): string | null => {
    const u = text.trim();
    if (!/^rtsps?:\/\//i.test(u))
      return 'An RTSP address starts with rtsp:// (or rtsps://), e.g. rtsp://192.168.1.20:554/stream1.';
    return /\s/.test(u) ? 'An RTSP address holds no blanks.' : null;
  };
  const problems: Partial<Record<RtspField, string>> = {};
  const main = form.url.trim() === '' ? "Enter the camera's RTSP address." : urlProblem(form.url);
  if (main) problems.url = main;
  const sub = form.sub_url.trim() === '' ? null : urlProblem(form.sub_url);
  if (sub) problems.sub_url = sub;
  if (form.name.trim() === '') problems.name = 'Give the camera a name: its address does not say what it shows.';
  if (form.password !== '' && form.username === '') problems.username = 'Enter the username the password goes with.';
  return problems;
}

/** The RTSP form's field an error of the API is about: the one a 400 names; a 409 (a known stream) is about the URL. */
export function rtspFieldOfApiError(status: number, description: string): RtspField | null {
  if (status === 409) return 'url';
  const named = /\bbody field (sub_rtsp_url|rtsp_url|username|password|name)\b/.exec(description)?.[1];
  if (named === undefined) return null;
  return named === 'rtsp_url' ? 'url' : named === 'sub_rtsp_url' ? 'sub_url' : (named as RtspField);
}
