import { describe, expect, it } from 'vitest';
import {
  alertsTopic,
  controlResultTopic,
  controlSubscription,
  controlTopic,
  DEVICE_STATE_KINDS,
  deviceStateTopic,
  deviceTopic,
  MAX_TOPIC_BYTES,
  parseControlTopic,
  recordingsTopic,
  statusTopic,
  validatePrefix,
  validateTopicBase,
} from '../../src/sync/topics.js';
import { TopicError } from '../../src/sync/errors.js';
import { makeRng, mutate } from '../support/fuzz.js';

const P = 'edge-gateway';
const GW = 'gw_Ab3-x';
const DEV = 'dev_9Zq-_k';

describe('topic builders', () => {
  it.each([
    ['status', statusTopic(P, GW), 'edge-gateway/gw_Ab3-x/status'],
    ['device', deviceTopic(P, GW, DEV), 'edge-gateway/gw_Ab3-x/devices/dev_9Zq-_k'],
    ['alerts', alertsTopic(P, GW), 'edge-gateway/gw_Ab3-x/alerts'],
    ['recordings', recordingsTopic(P, GW), 'edge-gateway/gw_Ab3-x/recordings'],
    ['control', controlTopic(P, GW, DEV), 'edge-gateway/gw_Ab3-x/devices/dev_9Zq-_k/control'],
    ['control result', controlResultTopic(P, GW, DEV), 'edge-gateway/gw_Ab3-x/devices/dev_9Zq-_k/control/result'],
    ['control subscription', controlSubscription(P, GW), 'edge-gateway/gw_Ab3-x/devices/+/control'],
    ['motion state', deviceStateTopic(P, GW, DEV, 'motion'), 'edge-gateway/gw_Ab3-x/devices/dev_9Zq-_k/state/motion'],
    [
      'connectivity state',
      deviceStateTopic(P, GW, DEV, 'connectivity'),
      'edge-gateway/gw_Ab3-x/devices/dev_9Zq-_k/state/connectivity',
    ],
    ['multi-level prefix', statusTopic('acme/site-1', GW), 'acme/site-1/gw_Ab3-x/status'],
    ['non-ASCII prefix', alertsTopic('maison/été', GW), 'maison/été/gw_Ab3-x/alerts'],
    ['"$" inside a level', statusTopic('a/$b', 'gw$1'), 'a/$b/gw$1/status'],
  ])('%s', (_name, topic, expected) => {
    expect(topic).toBe(expected);
  });

  it('has a state topic per Home Assistant sensor kind', () => {
    expect(DEVICE_STATE_KINDS).toEqual(['motion', 'human', 'vehicle', 'connectivity']);
  });
});

describe('topic validation', () => {
  const bad = (fn: () => unknown, field: string, reason: RegExp) => {
    let caught: unknown;
    try {
      fn();
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(TopicError);
    expect((caught as TopicError).field).toBe(field);
    expect((caught as TopicError).reason).toMatch(reason);
  };

  it.each([
    ['', /empty/],
    ['a/+/b', /wildcard/],
    ['a/#', /wildcard/],
    ['a#b', /wildcard/],
    ['/lead', /empty level/],
    ['trail/', /empty level/],
    ['a//b', /empty level/],
    ['$SYS', /reserved/],
    ['nul\u0000', /control/],
    ['tab\there', /control/],
    ['del\u007f', /control/],
    ['c1\u0085', /control/],
    ['lone\ud800', /surrogate/],
    ['nonchar\ufffe', /non-character/],
  ])('refuses prefix %j', (prefix, reason) => {
    bad(() => statusTopic(prefix, GW), 'prefix', reason);
  });

  it.each([
    ['', /empty/],
    ['a/b', /"\/"/],
    ['+', /wildcard/],
    ['#', /wildcard/],
    ['x+y', /wildcard/],
    ['line\nbreak', /control/],
  ])('refuses gateway id %j', (gatewayId, reason) => {
    bad(() => alertsTopic(P, gatewayId), 'gatewayId', reason);
  });

  it.each([
    ['', /empty/],
    ['../x', /"\/"/],
    ['dev/1', /"\/"/],
    ['dev+', /wildcard/],
    ['dev#', /wildcard/],
    ['\u0000', /control/],
  ])('refuses device id %j', (deviceId, reason) => {
    for (const build of [deviceTopic, controlTopic, controlResultTopic])
      bad(() => build(P, GW, deviceId), 'deviceId', reason);
    bad(() => deviceStateTopic(P, GW, deviceId, 'human'), 'deviceId', reason);
  });

  it('says what is wrong in the message, quoting the value', () => {
    expect(() => validatePrefix('a/+')).toThrow('prefix "a/+" contains an MQTT wildcard ("+" or "#")');
    expect(() => validateTopicBase('ok', 'a/b')).toThrow(/^gatewayId "a\/b" contains "\/"/);
    expect(() => validateTopicBase('ok', 'gw')).not.toThrow();
  });

  it('refuses a topic longer than MQTT can carry', () => {
    const long = 'é'.repeat(MAX_TOPIC_BYTES / 2);
    bad(() => statusTopic(long, GW), 'topic', /longer than 65535 bytes/);
    // Just under the limit in bytes although over it in UTF-16 units: 'é' is two bytes.
    const fits = 'x'.repeat(MAX_TOPIC_BYTES - `/${GW}/status`.length);
    expect(Buffer.byteLength(statusTopic(fits, GW))).toBe(MAX_TOPIC_BYTES);
    bad(() => statusTopic(`${fits}x`, GW), 'topic', /longer/);
  });
});

describe('parseControlTopic', () => {
  it.each([
    ['edge-gateway/gw_Ab3-x/devices/dev_9Zq-_k/control', 'dev_9Zq-_k'],
    ['edge-gateway/gw_Ab3-x/devices/x/control', 'x'],
    // Not checked against the store or ID_PATTERN: an unknown device gets an error result, not silence.
    ['edge-gateway/gw_Ab3-x/devices/caméra 1/control', 'caméra 1'],
    ['edge-gateway/gw_Ab3-x/devices/control/control', 'control'],
    ['edge-gateway/gw_Ab3-x/devices//control', null],
    ['edge-gateway/gw_Ab3-x/devices/control', null],
    ['edge-gateway/gw_Ab3-x/devices/a/b/control', null],
    ['edge-gateway/gw_Ab3-x/devices/dev/control/result', null],
    ['edge-gateway/gw_Ab3-x/devices/dev', null],
    ['edge-gateway/gw_Ab3-x/devices/dev/controls', null],
    ['edge-gateway/gw_OTHER/devices/dev/control', null],
    ['other/gw_Ab3-x/devices/dev/control', null],
    ['edge-gateway/gw_Ab3-x/device/dev/control', null],
    ['edge-gateway/gw_Ab3-x/status', null],
    ['edge-gateway/gw_Ab3-x/devices/+/control', null],
    ['edge-gateway/gw_Ab3-x/devices/#/control', null],
    ['edge-gateway/gw_Ab3-x/devices/\u0000/control', null],
    ['', null],
  ])('%j → %j', (topic, expected) => {
    expect(parseControlTopic(P, GW, topic)).toBe(expected);
  });

  it('reads ids under a multi-level prefix', () => {
    expect(parseControlTopic('a/b/c', 'gw', 'a/b/c/gw/devices/d1/control')).toBe('d1');
    expect(parseControlTopic('a/b/c', 'gw', 'a/b/gw/devices/d1/control')).toBeNull();
  });

  it('inverts controlTopic', () => {
    for (const id of ['d', DEV, 'x'.repeat(128), '$weird', 'ünï cödé'])
      expect(parseControlTopic(P, GW, controlTopic(P, GW, id))).toBe(id);
  });

  it('throws TopicError for an invalid prefix or gateway id (configuration errors)', () => {
    expect(() => parseControlTopic('a/#', GW, 'a/#/gw/devices/d/control')).toThrow(TopicError);
    expect(() => parseControlTopic(P, '', 'edge-gateway//devices/d/control')).toThrow(TopicError);
  });
});

describe('fuzz', () => {
  const ALPHABET = 'abcdevicontrlsu/+#$_-é\u0000 ';

  it('parseControlTopic never throws for a valid base, and what it returns builds the same topic back', () => {
    const rng = makeRng();
    const sample = controlTopic(P, GW, DEV);
    for (let i = 0; i < 20_000; i++) {
      const topic = rng.next() < 0.7 ? mutate(rng, sample, ALPHABET) : rng.string(60, ALPHABET);
      let id: string | null;
      try {
        id = parseControlTopic(P, GW, topic);
      } catch (err) {
        throw new Error(`seed ${rng.seed}: parseControlTopic threw for ${JSON.stringify(topic)}: ${String(err)}`, {
          cause: err,
        });
      }
      if (id !== null) expect(controlTopic(P, GW, id), `seed ${rng.seed}`).toBe(topic);
    }
  });

  it('builders either throw TopicError or make a topic whose levels are the inputs', () => {
    const rng = makeRng();
    for (let i = 0; i < 20_000; i++) {
      const prefix = rng.next() < 0.5 ? mutate(rng, 'acme/site', ALPHABET) : rng.string(12, ALPHABET);
      const gw = rng.next() < 0.5 ? mutate(rng, GW, ALPHABET) : rng.string(8, ALPHABET);
      const dev = rng.next() < 0.5 ? mutate(rng, DEV, ALPHABET) : rng.string(8, ALPHABET);
      let topic: string;
      try {
        topic = controlResultTopic(prefix, gw, dev);
      } catch (err) {
        expect(err, `seed ${rng.seed}: ${JSON.stringify([prefix, gw, dev])}`).toBeInstanceOf(TopicError);
        continue;
      }
      // A valid topic: no wildcard, no empty level, and exactly the expected number of levels.
      expect(topic, `seed ${rng.seed}`).not.toMatch(/[+#]/);
      expect(topic, `seed ${rng.seed}`).not.toContain('\u0000');
      const levels = topic.split('/');
      expect(
        levels.every((l) => l.length > 0),
        `seed ${rng.seed}: ${topic}`,
      ).toBe(true);
      expect(levels.length, `seed ${rng.seed}: ${topic}`).toBe(prefix.split('/').length + 5);
      expect(levels.slice(-5), `seed ${rng.seed}`).toEqual([gw, 'devices', dev, 'control', 'result']);
    }
  });
});
