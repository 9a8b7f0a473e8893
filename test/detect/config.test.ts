import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/errors.js';
import { validateConfig } from '../../src/config/load.js';

const camera = { name: 'Front door', onvif_url: 'http://192.168.1.20/onvif/device_service' };
const porch = [
  [0.1, 0.6],
  [0.5, 0.6],
  [0.5, 1],
  [0.1, 1],
];

function errorOf(raw: unknown): ConfigError {
  try {
    validateConfig(raw);
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('config: detection', () => {
  it('has the documented defaults, per camera too', () => {
    const c = validateConfig({ cameras: [camera] });
    expect(c.detection).toEqual({
      mode: 'auto',
      min_score: 0.35,
      threshold: 0.45,
      unconfirmed: 'keep',
      stationary_iou: 0.6,
      labels: { human: ['person'], vehicle: ['car', 'truck', 'bus', 'motorcycle', 'bicycle'] },
      threads: 1,
      queue_size: 16,
      max_wait_s: 10,
      model_dir: null,
    });
    // Keys the file leaves out are the app's to set: absent, their defaults applied with the app's
    // settings (src/domain/camera-settings.ts, effectiveSettings).
    const appKeys = ['detection', 'motion_mask', 'zones', 'required_zones', 'continuous'];
    for (const key of [...appKeys, 'alert_on_stationary_zones', 'loitering_zones'])
      expect(c.cameras[0]).not.toHaveProperty(key);
  });

  it('accepts masks, zones and their rules, and stationary_iou null (off)', () => {
    const c = validateConfig({
      detection: { mode: 'on', unconfirmed: 'drop', labels: { human: ['person'], vehicle: ['car'] } },
      cameras: [
        {
          ...camera,
          detection: 'off',
          motion_mask: [
            [
              [0, 0],
              [1, 0],
              [1, 0.1],
              [0, 0.1],
            ],
          ],
          zones: { porch },
          required_zones: ['porch'],
          alert_on_stationary_zones: ['porch'],
          loitering_zones: { porch: 60 },
        },
      ],
    });
    expect(c.cameras[0]?.zones?.porch).toEqual(porch);
    expect(c.cameras[0]?.loitering_zones).toEqual({ porch: 60 });
    expect(c.detection.unconfirmed).toBe('drop');
    expect(validateConfig({ detection: { stationary_iou: null } }).detection.stationary_iou).toBeNull();
  });

  it.each([
    [
      'a bow-tie mask',
      {
        cameras: [
          {
            ...camera,
            motion_mask: [
              [
                [0, 0],
                [1, 1],
                [1, 0],
                [0, 0.5],
              ],
            ],
          },
        ],
      },
      'cameras[0].motion_mask[0]',
      /not a valid polygon: edges 0 and 2 cross/,
    ],
    [
      'a zone with no area',
      {
        cameras: [
          {
            ...camera,
            zones: {
              line: [
                [0, 0],
                [0.5, 0.5],
                [1, 1],
              ],
            },
          },
        ],
      },
      'cameras[0].zones.line',
      /no area/,
    ],
    [
      'a zone of two corners',
      {
        cameras: [
          {
            ...camera,
            zones: {
              porch: [
                [0, 0],
                [1, 1],
              ],
            },
          },
        ],
      },
      'cameras[0].zones.porch',
      /fewer than 3|must NOT have fewer/i,
    ],
    [
      'a corner outside 0–1',
      {
        cameras: [
          {
            ...camera,
            zones: {
              porch: [
                [0, 0],
                [1.2, 0],
                [1, 1],
              ],
            },
          },
        ],
      },
      'cameras[0].zones.porch[1][0]',
      /1/,
    ],
    [
      'a corner that is not a pair',
      { cameras: [{ ...camera, motion_mask: [[[0, 0], [1], [1, 1]]] }] },
      'cameras[0].motion_mask[0][1][1]',
      /./,
    ],
    [
      'a required zone that does not exist',
      { cameras: [{ ...camera, zones: { porch }, required_zones: ['garden'] }] },
      'cameras[0].required_zones[0]',
      /names no zone.*"garden".*porch/,
    ],
    [
      'an alert_on_stationary zone that does not exist',
      { cameras: [{ ...camera, zones: { porch }, alert_on_stationary_zones: ['porch', 'drive'] }] },
      'cameras[0].alert_on_stationary_zones[1]',
      /names no zone.*"drive".*porch/,
    ],
    [
      'a loitering zone that does not exist',
      { cameras: [{ ...camera, zones: { porch }, loitering_zones: { gate: 30 } }] },
      'cameras[0].loitering_zones.gate',
      /names no zone.*"gate"/,
    ],
    [
      'a loitering time of 0',
      { cameras: [{ ...camera, zones: { porch }, loitering_zones: { porch: 0 } }] },
      'cameras[0].loitering_zones.porch',
      /1/,
    ],
    [
      'a loitering time over an hour',
      { cameras: [{ ...camera, zones: { porch }, loitering_zones: { porch: 3601 } }] },
      'cameras[0].loitering_zones.porch',
      /3600/,
    ],
    ['stationary_iou 0', { detection: { stationary_iou: 0 } }, 'detection.stationary_iou', /0\.1|null/],
    [
      'a label the model does not know',
      { detection: { labels: { human: ['human'] } } },
      'detection.labels.human[0]',
      /"human" is not a class/,
    ],
    [
      'a label in both lists',
      { detection: { labels: { human: ['person'], vehicle: ['person'] } } },
      'detection.labels.vehicle',
      /both/,
    ],
    ['threshold above 1', { detection: { threshold: 1.5 } }, 'detection.threshold', /1/],
    ['no threads', { detection: { threads: 0 } }, 'detection.threads', /1/],
    ['an unknown mode', { detection: { mode: 'always' } }, 'detection.mode', /auto/],
    ['an unknown unconfirmed choice', { detection: { unconfirmed: 'hide' } }, 'detection.unconfirmed', /keep/],
  ])('%s is refused, naming the key', (_name, raw, key, message) => {
    const err = errorOf(raw);
    expect(err.key).toBe(key);
    expect(err.message).toMatch(message);
  });
});
