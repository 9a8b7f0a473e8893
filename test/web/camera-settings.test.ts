import { DEFAULT_SETTINGS_JSON, deviceJson } from '../support/camera-settings.js';
import { describe, expect, it } from 'vitest';
import {
  areaOfApiError,
  areasOf,
  areasPatch,
  areasProblems,
  newZoneName,
  rebaseAreas,
  withNewArea,
  withoutArea,
  withZone,
} from '../../web/src/areas.js';
import {
  addFieldOfApiError,
  addressProblem,
  rtspFieldOfApiError,
  rtspFormProblems,
  draftOf,
  fieldOfApiError,
  rebaseDraft,
  underField,
  settingsPatch,
} from '../../web/src/settings-draft.js';
import type { Device } from '../../web/src/types.js';

// The camera set-up screens' pure parts: the settings form's change (only what changed, never what
// the config file sets), the mask and zone lists' problems and change, and which field an answer
// of the API is about.

const square = [
  [0.1, 0.1],
  [0.6, 0.1],
  [0.6, 0.6],
  [0.1, 0.6],
];

function device(
  settings: Partial<Device['settings']> = {},
  source: Partial<Device['settings']['source']> = {},
): Device {
  return deviceJson({
    address: '10.0.0.5',
    settings: {
      ...DEFAULT_SETTINGS_JSON,
      username: 'admin',
      has_password: true,
      ...settings,
      source: {
        name: 'app',
        account: 'app',
        enabled: 'default',
        recording: 'default',
        detection: 'default',
        motion_mask: 'default',
        zones: 'default',
        ...source,
      },
    },
  });
}

describe('the settings form', () => {
  it('sends only what changed, and nothing when nothing did', () => {
    const d = device();
    expect(settingsPatch(draftOf(d), d)).toEqual({ patch: {}, errors: {} });
    const draft = { ...draftOf(d), name: 'Front door', detection: 'off' as const };
    expect(settingsPatch(draft, d)).toEqual({ patch: { name: 'Front door', detection: 'off' }, errors: {} });
  });

  it('sends the account as a whole, only when a password is typed', () => {
    const d = device();
    expect(settingsPatch({ ...draftOf(d), password: 'secret' }, d).patch).toEqual({
      username: 'admin',
      password: 'secret',
    });
    expect(settingsPatch({ ...draftOf(d), username: 'other' }, d)).toMatchObject({
      patch: {},
      errors: { password: expect.stringContaining('together') },
    });
    expect(settingsPatch({ ...draftOf(d), username: 'a:b', password: 'x' }, d).errors.username).toMatch(/colon/);
    expect(settingsPatch({ ...draftOf(d), name: '  ' }, d).errors.name).toBeTruthy();
  });

  it('never sends what the config file sets', () => {
    const d = device({ detection: 'on' }, { name: 'file', account: 'file', detection: 'file' });
    const draft = { ...draftOf(d), name: 'Other', detection: 'off' as const, password: 'x', recording: 'off' as const };
    expect(settingsPatch(draft, d)).toEqual({ patch: { recording: 'off' }, errors: {} });
  });

  it('knows which field the API refused', () => {
    expect(fieldOfApiError('body field name must match pattern "^(?=.*\\S)…"')).toBe('name');
    expect(fieldOfApiError('body field password is required with username: the account is changed as a whole')).toBe(
      'password',
    );
    expect(
      fieldOfApiError(
        'name, account are set for this camera in the config file (its cameras[] entry): change it there',
      ),
    ).toBe('name');
    expect(fieldOfApiError('account is set for this camera in the config file (its cameras[] entry)')).toBe('username');
    expect(fieldOfApiError('recording continuous needs continuous recording on this gateway')).toBe('recording');
    expect(fieldOfApiError('the body names no setting to change')).toBeNull();
  });

  it('says a refusal under its field without the field name the place already says', () => {
    expect(underField("body field rtsp_url points at this gateway's own RTSP relay")).toBe(
      "Points at this gateway's own RTSP relay.",
    );
    expect(underField('body field zones[1].name repeats the zone name a')).toBe('Repeats the zone name a.');
    expect(underField('a camera at 10.0.0.5 is already known')).toBe('A camera at 10.0.0.5 is already known.');
    expect(underField('name is set for this camera in the config file (change it there)')).toBe(
      'Name is set for this camera in the config file (change it there)',
    );
  });

  it('checks an address before it is sent, and places the answers of the API', () => {
    expect(addressProblem('')).toMatch(/Enter/);
    expect(addressProblem('rtsp://10.0.0.5/stream')).toMatch(/RTSP/);
    expect(addressProblem('http://10.0.0.5')).toMatch(/without http/);
    expect(addressProblem('10.0.0.5/onvif')).toMatch(/path/);
    expect(addressProblem('10.0.0.5:8080')).toBeNull();
    expect(addressProblem('[fe80::1]:80')).toBeNull();
    expect(addFieldOfApiError(409, 'a camera at 10.0.0.5 is already known')).toBe('address');
    expect(addFieldOfApiError(400, 'body field username must match pattern')).toBe('username');
    expect(addFieldOfApiError(400, 'the body is not valid JSON')).toBeNull();
  });

  it('checks a plain RTSP camera before it is sent, and places the answers of the API', () => {
    const form = { url: 'rtsp://10.0.0.5/stream1', sub_url: '', username: '', password: '', name: 'Yard' };
    expect(rtspFormProblems(form)).toEqual({});
    expect(rtspFormProblems({ ...form, url: '' })).toEqual({ url: expect.stringMatching(/Enter/) });
    expect(rtspFormProblems({ ...form, url: '10.0.0.5/stream1' })).toEqual({ url: expect.stringMatching(/rtsp:\/\//) });
    expect(rtspFormProblems({ ...form, url: 'rtsp://10.0.0.5/my stream' })).toEqual({
      url: expect.stringMatching(/no blanks/),
    });
    expect(rtspFormProblems({ ...form, sub_url: 'http://10.0.0.5/sub' })).toEqual({
      sub_url: expect.stringMatching(/rtsp:\/\//),
    });
    expect(rtspFormProblems({ ...form, name: '  ' })).toEqual({ name: expect.stringMatching(/name/) });
    expect(rtspFormProblems({ ...form, password: 'x' })).toEqual({ username: expect.stringMatching(/username/) });
    expect(rtspFieldOfApiError(409, 'a camera with the stream rtsp://10.0.0.5/s is already known')).toBe('url');
    expect(rtspFieldOfApiError(400, "body field rtsp_url points at this gateway's own RTSP relay")).toBe('url');
    expect(rtspFieldOfApiError(400, 'body field sub_rtsp_url must start with rtsp://')).toBe('sub_url');
    expect(rtspFieldOfApiError(400, 'body field name is required with rtsp_url')).toBe('name');
    expect(rtspFieldOfApiError(400, 'the body is not valid JSON')).toBeNull();
  });
});

describe('a camera changed elsewhere while its settings are open', () => {
  it('takes the new value of a field not touched here, keeps the one typed here', () => {
    const base = device();
    const next = { ...device({ detection: 'off' }), name: 'Porch' };
    const typed = { ...draftOf(base), detection: 'on' as const, password: 'new one' };
    expect(rebaseDraft(typed, base, next)).toEqual({ ...draftOf(next), detection: 'on', password: 'new one' });
    // Saving then sends what was typed here only: the other change is not undone.
    expect(settingsPatch(rebaseDraft(typed, base, next), next).patch).toEqual({
      detection: 'on',
      username: 'admin',
      password: 'new one',
    });
    expect(rebaseDraft(draftOf(base), base, next)).toEqual(draftOf(next));
  });

  it('the mask and zones: the new ones when nothing was drawn here, else what was drawn', () => {
    const base = device();
    const next = device({ motion_mask: [square] });
    expect(rebaseAreas(areasOf(base.settings), base.settings, next.settings)).toEqual(areasOf(next.settings));
    const [drawn] = withNewArea(
      areasOf(base.settings),
      'zone',
      square.map(([x, y]) => [x!, y!] as const),
    );
    expect(rebaseAreas(drawn, base.settings, next.settings)).toBe(drawn);
  });
});

describe('the mask and zone lists', () => {
  it('are read from the settings and sent only when they changed', () => {
    const d = device({
      zones: [{ name: 'porch', polygon: square, required: true, alert_on_stationary: false, loitering_s: null }],
    });
    const areas = areasOf(d.settings);
    expect(areasPatch(areas, d.settings)).toEqual({});
    const [withMask] = withNewArea(
      areas,
      'mask',
      square.map(([x, y]) => [x!, y!] as const),
    );
    expect(areasPatch(withMask, d.settings)).toEqual({ motion_mask: [square] });
    const renamed = withZone(areas, 0, { required: false });
    expect(areasPatch(renamed, d.settings)).toEqual({
      zones: [{ name: 'porch', polygon: square, required: false, alert_on_stationary: false, loitering_s: null }],
    });
    expect(areasPatch(withoutArea(areas, { kind: 'zone', index: 0 }), d.settings)).toEqual({ zones: [] });
    const staying = withZone(areas, 0, { alert_on_stationary: true, loitering_s: 30 });
    expect(areasPatch(staying, d.settings)).toEqual({
      zones: [{ name: 'porch', polygon: square, required: true, alert_on_stationary: true, loitering_s: 30 }],
    });
  });

  it('refuse a stay that is not a whole number of seconds from 1 to an hour', () => {
    const areas = areasOf(
      device({
        zones: [{ name: 'porch', polygon: square, required: false, alert_on_stationary: false, loitering_s: null }],
      }).settings,
    );
    for (const bad of [0, -5, 2.5, 3601, Number.NaN]) {
      const problems = areasProblems(withZone(areas, 0, { loitering_s: bad }));
      expect(problems, String(bad)).toEqual([
        { ref: { kind: 'zone', index: 0 }, field: 'loitering', message: expect.stringMatching(/1 to 3600/) },
      ]);
    }
    expect(areasProblems(withZone(areas, 0, { loitering_s: 3600 }))).toEqual([]);
    expect(areaOfApiError('body field zones[0].loitering_s must be <= 3600')).toEqual({
      ref: { kind: 'zone', index: 0 },
      field: 'loitering',
    });
  });

  it('name a new zone with the first free zone-n', () => {
    const polygon = square.map(([x, y]) => [x!, y!] as const);
    expect(newZoneName([])).toBe('zone-1');
    expect(
      newZoneName([{ name: 'zone-2', polygon, required: false, alert_on_stationary: false, loitering_s: null }]),
    ).toBe('zone-3');
    expect(
      newZoneName([
        { name: 'zone-3', polygon, required: false, alert_on_stationary: false, loitering_s: null },
        { name: 'x', polygon, required: false, alert_on_stationary: false, loitering_s: null },
      ]),
    ).toBe('zone-4');
  });

  it('say what the API would refuse, where it is', () => {
    const bowTie = [
      [0, 0],
      [1, 1],
      [1, 0],
      [0, 0.5],
    ] as const;
    const areas = areasOf(
      device({
        motion_mask: [square, bowTie.map((p) => [...p])],
        zones: [
          { name: 'front door', polygon: square, required: false, alert_on_stationary: false, loitering_s: null },
          { name: 'a', polygon: square, required: false, alert_on_stationary: false, loitering_s: null },
          { name: 'a', polygon: square, required: false, alert_on_stationary: false, loitering_s: null },
        ],
      }).settings,
    );
    const problems = areasProblems(areas);
    expect(problems.map((p) => [p.ref, p.field])).toEqual([
      [{ kind: 'mask', index: 1 }, 'polygon'],
      [{ kind: 'zone', index: 0 }, 'name'],
      [{ kind: 'zone', index: 2 }, 'name'],
    ]);
    expect(problems[0]!.message).toMatch(/edges cross/);
    const many = { mask: Array.from({ length: 33 }, () => areas.mask[0]!), zones: [] };
    expect(areasProblems(many)[0]).toMatchObject({ ref: null });
  });

  it("place the API's refusals on their polygon, from its checks and from its schema", () => {
    expect(areaOfApiError('body field motion_mask[1] is not a valid polygon: edges 0 and 2 cross')).toEqual({
      ref: { kind: 'mask', index: 1 },
      field: 'polygon',
    });
    expect(areaOfApiError('body field zones[2].name repeats the zone name a')).toEqual({
      ref: { kind: 'zone', index: 2 },
      field: 'name',
    });
    expect(areaOfApiError('body field zones.0.name must match pattern')).toEqual({
      ref: { kind: 'zone', index: 0 },
      field: 'name',
    });
    expect(areaOfApiError('body field name must match pattern')).toBeNull();
  });
});
