import { describe, expect, it } from 'vitest';
import { ALERT_TYPE_LABELS, EVENT_TYPE_LABELS } from '../../src/domain/event-labels.js';
import { ALERT_TYPES, EVENT_TYPES } from '../../src/domain/types.js';
import { ALERT_TYPE_NAMES, EVENT_TYPE_NAMES } from '../../web/src/types.js';

describe('event labels', () => {
  it('name every event and alert type', () => {
    expect(Object.keys(EVENT_TYPE_LABELS).sort()).toEqual([...EVENT_TYPES].sort());
    expect(Object.keys(ALERT_TYPE_LABELS).sort()).toEqual([...ALERT_TYPES].sort());
  });

  it("are the web app's too (it keeps a copy: its bundle may hold no file of src/)", () => {
    expect(EVENT_TYPE_NAMES).toEqual(EVENT_TYPE_LABELS);
    expect(ALERT_TYPE_NAMES).toEqual(ALERT_TYPE_LABELS);
  });
});
