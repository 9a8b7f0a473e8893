import { describe, expect, it } from 'vitest';
import { cameraConfigLookup, cameraSettingsLookup, fileCameraSettings } from '../../src/config/cameras.js';
import { validateConfig } from '../../src/config/load.js';
import { effectiveSettings, type CameraSettings } from '../../src/domain/camera-settings.js';

// What each cameras[] entry sets (the base of its camera's settings), and the per-camera lookups
// the recorder, detector and continuous recording read: the settings in effect at each look.

const porch = [
  [0.1, 0.6],
  [0.5, 0.6],
  [0.5, 1],
];
const URL_A = 'http://10.0.0.1/onvif/device_service';
const URL_B = 'http://10.0.0.2/onvif/device_service';

describe('fileCameraSettings', () => {
  it('has only the keys an entry sets, by its onvif_url; the first entry for a URL counts', () => {
    const config = validateConfig({
      recording: { continuous: { enabled: true, storage_dir: '/mnt/footage' } },
      cameras: [
        { name: 'A', onvif_url: URL_A, username: 'admin', password: 'pw', detection: 'on', continuous: 'off' },
        {
          name: 'B',
          onvif_url: URL_B,
          zones: { porch, lawn: porch },
          required_zones: ['porch'],
          alert_on_stationary_zones: ['porch'],
          loitering_zones: { lawn: 45 },
          continuous: 'on',
        },
        { name: 'A again', onvif_url: URL_A, detection: 'off' },
      ],
    });
    const base = fileCameraSettings(config);
    expect(base.defaults).toEqual({ recording: 'continuous' });
    expect(base.fileFor(URL_A)).toEqual({
      account: { username: 'admin', hasPassword: true },
      detection: 'on',
      recording: 'events',
    });
    expect(base.fileFor(URL_B)).toEqual({
      account: null,
      recording: 'continuous',
      zones: [
        { name: 'porch', polygon: porch, required: true, alertOnStationary: true, loiteringS: null },
        { name: 'lawn', polygon: porch, required: false, alertOnStationary: false, loiteringS: 45 },
      ],
    });
    expect(base.fileFor('http://10.0.0.3/onvif/device_service')).toBeNull();
  });

  it('reads continuous: on as events where the gateway keeps no continuous footage', () => {
    const config = validateConfig({ cameras: [{ name: 'A', onvif_url: URL_A, continuous: 'on' }] });
    expect(fileCameraSettings(config).fileFor(URL_A)?.recording).toBe('events');
    expect(fileCameraSettings(config).defaults).toEqual({ recording: 'events' });
  });
});

describe('cameraSettingsLookup', () => {
  it('reads the settings anew at each look: a change counts at the next one', () => {
    let settings: CameraSettings = effectiveSettings(
      null,
      null,
      { username: null, hasPassword: false },
      {
        recording: 'continuous',
      },
    );
    const config = validateConfig({ cameras: [{ name: 'A', onvif_url: URL_A, continuous_profile: 'main' }] });
    const lookup = cameraSettingsLookup(
      (id) => (id === 'dev_a' ? settings : null),
      cameraConfigLookup(config.cameras, (id) => (id === 'dev_a' ? URL_A : null)),
    );
    expect(lookup.detection('dev_a')).toEqual({
      detection: 'auto',
      zones: {},
      required_zones: [],
      alert_on_stationary_zones: [],
      loitering_zones: {},
    });
    expect(lookup.motionMask('dev_a')).toEqual([]);
    expect(lookup.recordsEvents('dev_a')).toBe(true);
    expect(lookup.continuous('dev_a')).toEqual({ continuous: 'on', continuous_profile: 'main' });

    settings = {
      ...settings,
      detection: 'on',
      recording: 'off',
      motionMask: [porch as [number, number][]],
      zones: [
        { name: 'porch', polygon: porch as [number, number][], required: true },
        {
          name: 'lawn',
          polygon: porch as [number, number][],
          required: false,
          alertOnStationary: true,
          loiteringS: 30,
        },
      ],
    };
    expect(lookup.detection('dev_a')).toEqual({
      detection: 'on',
      zones: { porch, lawn: porch },
      required_zones: ['porch'],
      alert_on_stationary_zones: ['lawn'],
      loitering_zones: { lawn: 30 },
    });
    expect(lookup.motionMask('dev_a')).toEqual([porch]);
    expect(lookup.recordsEvents('dev_a')).toBe(false);
    expect(lookup.continuous('dev_a')).toEqual({ continuous: 'off', continuous_profile: 'main' });
    expect(lookup.detection('dev_unknown')).toBeNull();
  });
});
