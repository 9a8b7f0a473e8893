import { describe, expect, it } from 'vitest';
import {
  effectiveSettings,
  parseCameraAddress,
  patchedFields,
  settingsProblem,
  type AppCameraSettings,
  type FileCameraSettings,
} from '../../src/domain/camera-settings.js';
import { sourcesAll } from '../support/camera-settings.js';
import { makeRng } from '../support/fuzz.js';

// A camera's settings in effect: the file's where it sets a field, else the app's, else the default.

const square = [
  [0, 0],
  [0.5, 0],
  [0.5, 0.5],
  [0, 0.5],
] as const;
const bowTie = [
  [0, 0],
  [1, 1],
  [1, 0],
  [0, 0.5],
] as const;
const noApp: AppCameraSettings = {
  nameSet: false,
  username: null,
  hasPassword: false,
  enabled: null,
  recording: null,
  detection: null,
  motionMask: null,
  zones: null,
};
const adopted = { username: 'found', hasPassword: true };
const defaults = { recording: 'events' as const };

describe('effectiveSettings', () => {
  it('is the defaults, and the account adoption found, when nobody set anything', () => {
    expect(effectiveSettings(null, null, adopted, defaults)).toEqual({
      enabled: true,
      recording: 'events',
      detection: 'auto',
      motionMask: [],
      zones: [],
      username: 'found',
      hasPassword: true,
      source: sourcesAll('default'),
    });
  });

  it("takes the app's value where the file sets nothing, and the file's where it does", () => {
    const file: FileCameraSettings = { account: { username: 'admin', hasPassword: true }, detection: 'off' };
    const app: AppCameraSettings = {
      ...noApp,
      username: 'other',
      hasPassword: false,
      enabled: false,
      detection: 'on',
      recording: 'off',
      motionMask: [square],
      zones: [{ name: 'porch', polygon: square, required: true }],
    };
    const s = effectiveSettings(file, app, adopted, defaults);
    expect(s).toMatchObject({
      enabled: false,
      recording: 'off',
      detection: 'off',
      motionMask: [square],
      zones: [{ name: 'porch', polygon: square, required: true }],
      username: 'admin',
      hasPassword: true,
    });
    expect(s.source).toEqual({
      name: 'file',
      account: 'file',
      enabled: 'app',
      recording: 'app',
      detection: 'file',
      motion_mask: 'app',
      zones: 'app',
    });
  });

  it("an empty list the file sets is the file's (an empty mask, no zones)", () => {
    const s = effectiveSettings(
      { account: null, motionMask: [], zones: [] },
      { ...noApp, motionMask: [square] },
      adopted,
      defaults,
    );
    expect(s.motionMask).toEqual([]);
    expect(s.source.motion_mask).toBe('file');
    expect(s.source.zones).toBe('file');
    expect(s.source.account).toBe('default');
  });

  it("the app's name is the app's; a camera of the file is named by the file", () => {
    expect(effectiveSettings(null, { ...noApp, nameSet: true }, adopted, defaults).source.name).toBe('app');
    expect(effectiveSettings({ account: null }, { ...noApp, nameSet: true }, adopted, defaults).source.name).toBe(
      'file',
    );
  });
});

describe('settingsProblem', () => {
  it('accepts real polygons and distinct zone names', () => {
    expect(
      settingsProblem({
        motionMask: [square],
        zones: [
          { name: 'a', polygon: square, required: false },
          { name: 'b', polygon: square, required: true },
        ],
      }),
    ).toBeNull();
  });

  it.each([
    ['a bow tie in the mask', { motionMask: [square, bowTie] }, 'motion_mask[1]', /edges 0 and 2 cross/],
    [
      'corners on one line',
      {
        motionMask: [
          [
            [0, 0],
            [0.5, 0.5],
            [1, 1],
          ],
        ],
      },
      'motion_mask[0]',
      /no area/,
    ],
    [
      'two corners',
      {
        motionMask: [
          [
            [0, 0],
            [1, 1],
          ],
        ],
      },
      'motion_mask[0]',
      /at least 3 corners/,
    ],
    [
      'a corner outside 0–1',
      {
        motionMask: [
          [
            [0, 0],
            [1.5, 0],
            [0, 1],
          ],
        ],
      },
      'motion_mask[0]',
      /0–1/,
    ],
    ['a bow tie zone', { zones: [{ name: 'porch', polygon: bowTie, required: false }] }, 'zones[0].polygon', /cross/],
    [
      'a zone name twice',
      {
        zones: [
          { name: 'porch', polygon: square, required: false },
          { name: 'porch', polygon: square, required: true },
        ],
      },
      'zones[1].name',
      /repeats/,
    ],
  ])('names the element at fault: %s', (_what, patch, field, problem) => {
    const found = settingsProblem(patch as Parameters<typeof settingsProblem>[0]);
    expect(found?.field).toBe(field);
    expect(found?.problem).toMatch(problem);
  });
});

describe('patchedFields', () => {
  it('names the fields by their API names', () => {
    expect(
      patchedFields({ account: { username: 'a', password: 'b' }, motionMask: [], zones: [], enabled: false }),
    ).toEqual(['account', 'enabled', 'motion_mask', 'zones']);
  });
});

describe('parseCameraAddress', () => {
  it.each([
    ['192.168.1.20', '192.168.1.20'],
    ['192.168.1.20:8080', '192.168.1.20:8080'],
    ['192.168.1.20:80', '192.168.1.20'],
    ['Cam-1.LAN', 'cam-1.lan'],
    ['[fe80::1]:8000', '[fe80::1]:8000'],
    ['localhost:1', 'localhost:1'],
  ])('takes %s as %s', (address, host) => expect(parseCameraAddress(address)).toBe(host));

  it.each([
    '',
    'http://192.168.1.20',
    '192.168.1.20/onvif',
    'admin:pw@192.168.1.20',
    '192.168.1.20:0',
    '192.168.1.20:65536',
    '192.168.1.20:',
    ' 192.168.1.20',
    'cam .lan',
    '[zz::1]',
    '-cam',
    '256.1.1.1',
  ])('refuses %j', (address) => expect(parseCameraAddress(address)).toBeNull());

  it('never throws, and what it takes is a host the URL parser writes the same way (fuzz)', () => {
    const rng = makeRng();
    for (let i = 0; i < 2000; i++) {
      const text = rng.string(24, 'ab1.:-[]/@ %09fe');
      const host = parseCameraAddress(text);
      if (host !== null) expect(new URL(`http://${host}/`).host, `seed ${rng.seed}: ${text}`).toBe(host);
    }
  });
});
