import { describe, expect, it } from 'vitest';
import { formatEnd, formatEvent, formatReset, parseLastEventId, streamStart } from '../../../src/api/events/wire.js';

// The event stream's text and where a stream starts: pure rules, table-tested.

describe('parseLastEventId', () => {
  it.each([
    [undefined, { kind: 'none' }],
    ['', { kind: 'none' }],
    ['  ', { kind: 'none' }],
    ['0', { kind: 'id', id: 0 }],
    ['42', { kind: 'id', id: 42 }],
    [' 42 ', { kind: 'id', id: 42 }],
    ['0007', { kind: 'id', id: 7 }],
    ['9007199254740991', { kind: 'id', id: Number.MAX_SAFE_INTEGER }],
    ['9999999999999999', { kind: 'id', id: Number.MAX_SAFE_INTEGER }],
    ['123456789012345678901234567890', { kind: 'id', id: Number.MAX_SAFE_INTEGER }],
    ['abc', { kind: 'malformed' }],
    ['-1', { kind: 'malformed' }],
    ['1.5', { kind: 'malformed' }],
    ['1e3', { kind: 'malformed' }],
    ['0x10', { kind: 'malformed' }],
    ['5, 6', { kind: 'malformed' }],
  ] as const)('%j → %j', (header, expected) => {
    expect(parseLastEventId(header)).toEqual(expected);
  });
});

describe('streamStart', () => {
  const window = { after: 100, latest: 250 };
  it.each([
    [{ kind: 'none' }, { kind: 'after', id: 250 }],
    [
      { kind: 'id', id: 250 },
      { kind: 'after', id: 250 },
    ],
    [
      { kind: 'id', id: 100 },
      { kind: 'after', id: 100 },
    ],
    [
      { kind: 'id', id: 180 },
      { kind: 'after', id: 180 },
    ],
    [
      { kind: 'id', id: 99 },
      { kind: 'reset', reason: 'expired', id: 250 },
    ],
    [
      { kind: 'id', id: 0 },
      { kind: 'reset', reason: 'expired', id: 250 },
    ],
    [
      { kind: 'id', id: 251 },
      { kind: 'reset', reason: 'unknown', id: 250 },
    ],
    [
      { kind: 'id', id: Number.MAX_SAFE_INTEGER },
      { kind: 'reset', reason: 'unknown', id: 250 },
    ],
  ] as const)('%j → %j', (last, expected) => {
    expect(streamStart(last, window)).toEqual(expected);
  });

  it('resumes from 0 on a gateway that never issued an id, and from the last id when all were pruned', () => {
    expect(streamStart({ kind: 'id', id: 0 }, { after: 0, latest: 0 })).toEqual({ kind: 'after', id: 0 });
    expect(streamStart({ kind: 'id', id: 7 }, { after: 7, latest: 7 })).toEqual({ kind: 'after', id: 7 });
    expect(streamStart({ kind: 'id', id: 6 }, { after: 7, latest: 7 })).toEqual({
      kind: 'reset',
      reason: 'expired',
      id: 7,
    });
  });
});

describe('formatting', () => {
  it('writes an event as id, event and one data line of the API JSON, line breaks in text escaped', () => {
    const text = formatEvent({
      seq: 12,
      createdAt: 0,
      type: 'alert.created',
      record: {
        id: 'a1',
        deviceId: 'cam',
        type: 'motion',
        message: 'two\nlines\r\n',
        createdAt: Date.UTC(2026, 0, 1),
        readAt: null,
        recordingId: null,
        recordingStatus: 'pending',
        recordingStatusReason: null,
        detections: [],
      },
    });
    const lines = text.split('\n');
    expect(lines.slice(0, 2)).toEqual(['id: 12', 'event: alert.created']);
    expect(lines.slice(3)).toEqual(['', '']);
    expect(JSON.parse(lines[2]!.slice('data: '.length))).toMatchObject({
      id: 'a1',
      message: 'two\nlines\r\n',
      created_at: '2026-01-01T00:00:00.000Z',
      read: false,
    });
  });

  it('writes reset and end', () => {
    expect(formatReset('expired', 9)).toBe('id: 9\nevent: reset\ndata: {"reason":"expired","last_event_id":9}\n\n');
    expect(formatEnd('token_expired')).toBe('event: end\ndata: {"reason":"token_expired"}\n\n');
  });
});
