import { describe, expect, it } from 'vitest';
import { PTZ_ACTIONS, PTZ_LIMITS, ptzCommandOf, type PtzAction, type PtzFields } from '../../src/domain/ptz.js';

// Which fields each PTZ action takes (the API's schema has checked each field's own value).

describe('ptzCommandOf', () => {
  it.each<[PtzAction, PtzFields, unknown]>([
    [
      'ptz_move',
      { pan: 0.5, tilt: -1, zoom: 0, timeout_ms: 250 },
      { action: 'ptz_move', pan: 0.5, tilt: -1, zoom: 0, timeoutMs: 250 },
    ],
    ['ptz_move', { zoom: 1 }, { action: 'ptz_move', pan: 0, tilt: 0, zoom: 1, timeoutMs: PTZ_LIMITS.defaultMoveMs }],
    ['ptz_stop', {}, { action: 'ptz_stop' }],
    ['ptz_home', {}, { action: 'ptz_home' }],
    ['ptz_goto_preset', { preset: '3' }, { action: 'ptz_goto_preset', preset: '3' }],
    ['ptz_remove_preset', { preset: 'a' }, { action: 'ptz_remove_preset', preset: 'a' }],
    ['ptz_set_preset', { name: 'Gate' }, { action: 'ptz_set_preset', name: 'Gate' }],
    ['ptz_center', { x: 0, y: 1 }, { action: 'ptz_center', x: 0, y: 1 }],
  ])('%s %j', (action, fields, command) => {
    expect(ptzCommandOf(action, fields)).toEqual({ command });
  });

  it.each<[PtzAction, PtzFields, string]>([
    ['ptz_move', {}, 'body fields pan, tilt, zoom: ptz_move needs at least one of them'],
    [
      'ptz_move',
      { pan: 1, preset: '1' },
      'body field preset is not taken by ptz_move (it takes pan, tilt, zoom, timeout_ms)',
    ],
    ['ptz_stop', { pan: 0 }, 'body field pan is not taken by ptz_stop'],
    ['ptz_home', { timeout_ms: 500 }, 'body field timeout_ms is not taken by ptz_home'],
    ['ptz_goto_preset', {}, 'body field preset is required with ptz_goto_preset'],
    ['ptz_goto_preset', { name: 'x' }, 'body field name is not taken by ptz_goto_preset (it takes preset)'],
    ['ptz_set_preset', { preset: '1' }, 'body field preset is not taken by ptz_set_preset (it takes name)'],
    ['ptz_remove_preset', {}, 'body field preset is required with ptz_remove_preset'],
    ['ptz_center', { x: 0.5 }, 'body field y is required with ptz_center'],
  ])('%s %j is refused', (action, fields, problem) => {
    expect(ptzCommandOf(action, fields)).toEqual({ problem });
  });

  it('a field given as undefined counts as left out', () => {
    expect(ptzCommandOf('ptz_stop', { pan: undefined })).toEqual({ command: { action: 'ptz_stop' } });
  });

  it('names every action', () => {
    expect(new Set(PTZ_ACTIONS).size).toBe(7);
  });
});
