import { describe, expect, it } from 'vitest';
import type { Notification } from '../../src/onvif/notification.js';
import { classify, normaliseTopic, parseFlag, type Classification } from '../../src/onvif/topics.js';
import { makeRng, mutate } from '../support/fuzz.js';

function note(
  topic: string,
  data: Record<string, string>,
  source: Record<string, string> = {},
  operation: Notification['operation'] = 'Changed',
): Notification {
  return { topic, operation, utcTime: null, source, data };
}

type Expected = Pick<Classification, 'kind' | 'active' | 'momentary'> | null;
const motion = (active: boolean): Expected => ({ kind: 'motion', active });
const human = (active: boolean): Expected => ({ kind: 'human', active });
const vehicle = (active: boolean): Expected => ({ kind: 'vehicle', active });

describe('classify', () => {
  it.each<[string, string, Record<string, string>, Record<string, string>, Expected]>([
    // ONVIF core motion alarm
    ['motion alarm true', 'tns1:VideoSource/MotionAlarm', { State: 'true' }, {}, motion(true)],
    ['motion alarm false', 'tns1:VideoSource/MotionAlarm', { State: 'false' }, {}, motion(false)],
    ['motion alarm "1"', 'tns1:VideoSource/MotionAlarm', { State: '1' }, {}, motion(true)],
    ['motion alarm "0"', 'tns1:VideoSource/MotionAlarm', { State: '0' }, {}, motion(false)],
    ['motion alarm "True"', 'tns1:VideoSource/MotionAlarm', { State: 'True' }, {}, motion(true)],
    ['motion alarm " FALSE "', 'tns1:VideoSource/MotionAlarm', { State: ' FALSE ' }, {}, motion(false)],
    ['Axis prefix on the first segment', 'tnsaxis:VideoSource/MotionAlarm', { State: '1' }, {}, motion(true)],
    ['prefix on every segment', 'tns1:VideoSource/tnsaxis:MotionAlarm', { State: 'true' }, {}, motion(true)],
    ['upper-case prefix', 'TNS1:VideoSource/MotionAlarm', { State: 'true' }, {}, motion(true)],
    ['no prefix', 'VideoSource/MotionAlarm', { State: 'true' }, {}, motion(true)],
    ['leading and trailing slash', '/tns1:VideoSource/MotionAlarm/', { State: 'true' }, {}, motion(true)],
    ['segment case folded', 'tns1:videoSource/motionAlarm', { State: 'true' }, {}, motion(true)],
    ['item name case folded', 'tns1:VideoSource/MotionAlarm', { state: 'true' }, {}, motion(true)],
    // ONVIF cell motion (Hikvision, Dahua, TP-Link, D-Link …)
    [
      'cell motion true',
      'tns1:RuleEngine/CellMotionDetector/Motion',
      { IsMotion: 'true' },
      { Rule: 'MyMotionDetectorRule' },
      motion(true),
    ],
    ['cell motion "0"', 'tns1:RuleEngine/CellMotionDetector/Motion', { IsMotion: '0' }, {}, motion(false)],
    [
      'cell motion with "//." suffix',
      'tns1:RuleEngine/CellMotionDetector/Motion//.',
      { IsMotion: 'true' },
      {},
      motion(true),
    ],
    [
      'cell motion with per-segment prefixes',
      'tns1:RuleEngine/tns1:CellMotionDetector/tns1:Motion',
      { IsMotion: 'true' },
      {},
      motion(true),
    ],
    [
      'cell motion: lone item of another name',
      'tns1:RuleEngine/CellMotionDetector/Motion',
      { State: 'true' },
      {},
      motion(true),
    ],
    // Profile T motion region
    ['motion region', 'tns1:RuleEngine/MotionRegionDetector/Motion', { State: '1' }, {}, motion(true)],
    ['motion region off', 'tns1:RuleEngine/MotionRegionDetector/Motion', { State: 'false' }, {}, motion(false)],
    // Reolink
    [
      'Reolink people',
      'tns1:RuleEngine/MyRuleDetector/PeopleDetect',
      { State: 'true' },
      { Source: '000' },
      human(true),
    ],
    ['Reolink people off', 'tns1:RuleEngine/MyRuleDetector/PeopleDetect', { State: 'false' }, {}, human(false)],
    ['Reolink vehicle', 'tns1:RuleEngine/MyRuleDetector/VehicleDetect', { State: 'true' }, {}, vehicle(true)],
    ['Reolink pets are not tracked', 'tns1:RuleEngine/MyRuleDetector/DogCatDetect', { State: 'true' }, {}, null],
    // TP-Link
    ['TP-Link people', 'tns1:RuleEngine/PeopleDetector/People', { IsPeople: 'true' }, {}, human(true)],
    ['TP-Link people off', 'tns1:RuleEngine/tns1:PeopleDetector/tns1:People', { IsPeople: 'false' }, {}, human(false)],
    [
      'TP-Link smart event person',
      'tns1:RuleEngine/TPSmartEventDetector/TPSmartEvent',
      { IsPeople: 'true' },
      {},
      human(true),
    ],
    [
      'TP-Link smart event vehicle',
      'tns1:RuleEngine/TPSmartEventDetector/TPSmartEvent',
      { IsVehicle: '1' },
      {},
      vehicle(true),
    ],
    [
      'TP-Link smart event vehicle off',
      'tns1:RuleEngine/TPSmartEventDetector/TPSmartEvent',
      { IsVehicle: 'false' },
      {},
      vehicle(false),
    ],
    ['TP-Link smart event pet', 'tns1:RuleEngine/TPSmartEventDetector/TPSmartEvent', { IsPet: 'true' }, {}, null],
    [
      'TP-Link smart event unreadable',
      'tns1:RuleEngine/TPSmartEventDetector/TPSmartEvent',
      { IsPeople: 'maybe' },
      {},
      null,
    ],
    // Uniview
    ['Uniview human shape', 'tns1:UserAlarm/IVA/HumanShapeDetect', { State: 'true' }, {}, human(true)],
    ['Uniview human shape off', 'tns1:UserAlarm/IVA/HumanShapeDetect', { State: 'false' }, {}, human(false)],
    // Class-carrying analytics
    [
      'object detection Human, no state',
      'tns1:RuleEngine/ObjectDetection/Object',
      { ClassTypes: 'Human' },
      {},
      { kind: 'human', active: true, momentary: true },
    ],
    [
      'object detection Vehicle with state',
      'tns1:RuleEngine/ObjectDetection/Object',
      { ClassTypes: 'Vehicle', State: 'true' },
      {},
      vehicle(true),
    ],
    [
      'object detection Vehicle ended',
      'tns1:RuleEngine/ObjectDetection/Object',
      { ClassTypes: 'Vehicle', State: 'false' },
      {},
      vehicle(false),
    ],
    [
      'object detection Human and Vehicle',
      'tns1:RuleEngine/ObjectDetection/Object',
      { ClassTypes: 'Vehicle Human' },
      {},
      { kind: 'human', active: true, momentary: true },
    ],
    [
      'object detection comma list',
      'tns1:RuleEngine/ObjectDetection/Object',
      { ClassTypes: 'Animal,Car' },
      {},
      { kind: 'vehicle', active: true, momentary: true },
    ],
    ['object detection Animal', 'tns1:RuleEngine/ObjectDetection/Object', { ClassTypes: 'Animal' }, {}, null],
    [
      'object detection, longer topic',
      'tns1:RuleEngine/ObjectDetection/ObjectCount',
      { ClassTypes: 'Human' },
      {},
      null,
    ],
    ['object detection without class', 'tns1:RuleEngine/ObjectDetection/Object', { State: 'true' }, {}, null],
    [
      'field detector Person',
      'tns1:RuleEngine/FieldDetector/ObjectsInside',
      { IsInside: 'true', ObjectType: 'Person' },
      {},
      human(true),
    ],
    [
      'field detector People off',
      'tns1:RuleEngine/FieldDetector/ObjectsInside',
      { IsInside: 'false', Class: 'People' },
      {},
      human(false),
    ],
    [
      'field detector Truck',
      'tns1:RuleEngine/FieldDetector/ObjectsInside',
      { IsInside: '1', ObjectType: 'Truck' },
      {},
      vehicle(true),
    ],
    [
      'field detector class in source',
      'tns1:RuleEngine/FieldDetector/ObjectsInside',
      { IsInside: 'true' },
      { Class: 'Car' },
      vehicle(true),
    ],
    ['field detector without class', 'tns1:RuleEngine/FieldDetector/ObjectsInside', { IsInside: 'true' }, {}, null],
    [
      'line crossed by a human (ObjectId is not a state)',
      'tns1:RuleEngine/LineDetector/Crossed',
      { ObjectId: '1', ClassTypes: 'Human' },
      {},
      { kind: 'human', active: true, momentary: true },
    ],
    [
      'line crossed by a vehicle, lone ObjectId "0"',
      'tns1:RuleEngine/LineDetector/Crossed',
      { ObjectId: '0' },
      { ObjectType: 'Vehicle' },
      { kind: 'vehicle', active: true, momentary: true },
    ],
    ['line crossed, no class', 'tns1:RuleEngine/LineDetector/Crossed', { ObjectId: '1' }, {}, null],
    // Missing or unreadable state
    ['no data items', 'tns1:VideoSource/MotionAlarm', {}, {}, null],
    ['state not a flag', 'tns1:VideoSource/MotionAlarm', { State: 'maybe' }, {}, null],
    ['empty state', 'tns1:RuleEngine/CellMotionDetector/Motion', { IsMotion: '' }, {}, null],
    ['lone item of another name', 'tns1:VideoSource/MotionAlarm', { Alarm: 'true' }, {}, motion(true)],
    ['two items, none named', 'tns1:VideoSource/MotionAlarm', { A: 'true', B: 'false' }, {}, null],
    ['named item wins over others', 'tns1:VideoSource/MotionAlarm', { Level: '1', State: 'false' }, {}, motion(false)],
    // Unknown topics
    ['digital input', 'tns1:Device/Trigger/DigitalInput', { LogicalState: 'true' }, {}, null],
    ['tamper', 'tns1:RuleEngine/TamperDetector/Tamper', { IsTamper: 'true' }, {}, null],
    ['longer than a known topic', 'tns1:VideoSource/MotionAlarm/Extra', { State: 'true' }, {}, null],
    ['prefix of a known topic', 'tns1:VideoSource', { State: 'true' }, {}, null],
    ['empty topic', '', { State: 'true' }, {}, null],
    ['only slashes and prefixes', '/tns1:/', { State: 'true' }, {}, null],
  ])('%s', (_name, topic, data, source, expected) => {
    const c = classify(note(topic, data, source));
    if (expected === null) {
      expect(c).toBeNull();
      return;
    }
    expect(c).not.toBeNull();
    expect({ kind: c?.kind, active: c?.active, momentary: c?.momentary }).toEqual({
      momentary: undefined,
      ...expected,
    });
  });

  it('reports a Deleted property as inactive, whatever its data', () => {
    expect(classify(note('tns1:VideoSource/MotionAlarm', { State: 'true' }, {}, 'Deleted'))).toMatchObject({
      kind: 'motion',
      active: false,
    });
    expect(classify(note('tns1:VideoSource/MotionAlarm', {}, {}, 'Deleted'))).toMatchObject({
      kind: 'motion',
      active: false,
    });
    expect(classify(note('tns1:RuleEngine/ObjectDetection/Object', { ClassTypes: 'Human' }, {}, 'Deleted'))).toEqual(
      expect.objectContaining({ kind: 'human', active: false }),
    );
    expect(
      classify(note('tns1:RuleEngine/ObjectDetection/Object', { ClassTypes: 'Human' }, {}, 'Deleted'))?.momentary,
    ).toBeUndefined();
  });

  it('treats Initialized and a missing operation like Changed', () => {
    expect(classify(note('tns1:VideoSource/MotionAlarm', { State: 'true' }, {}, 'Initialized'))).toMatchObject({
      kind: 'motion',
      active: true,
    });
    expect(classify(note('tns1:VideoSource/MotionAlarm', { State: 'true' }, {}, null))).toMatchObject({
      kind: 'motion',
      active: true,
    });
  });

  describe('key', () => {
    const cell = (topic: string, source: Record<string, string>) =>
      classify(note(topic, { IsMotion: 'true' }, source))?.key;
    const src = {
      VideoSourceConfigurationToken: 'VideoSource_1',
      VideoAnalyticsConfigurationToken: 'VA_1',
      Rule: 'MotionRule',
    };

    it('differs between two rules on one camera', () => {
      expect(cell('tns1:RuleEngine/CellMotionDetector/Motion', { ...src, Rule: 'A' })).not.toBe(
        cell('tns1:RuleEngine/CellMotionDetector/Motion', { ...src, Rule: 'B' }),
      );
    });

    it('differs between video sources and between topics', () => {
      expect(cell('tns1:RuleEngine/CellMotionDetector/Motion', src)).not.toBe(
        cell('tns1:RuleEngine/CellMotionDetector/Motion', { ...src, VideoSourceConfigurationToken: 'VideoSource_2' }),
      );
      expect(
        classify(note('tns1:VideoSource/MotionAlarm', { State: 'true' }, { Source: 'VideoSource_1' }))?.key,
      ).not.toBe(
        classify(note('tns1:RuleEngine/MotionRegionDetector/Motion', { State: 'true' }, { Source: 'VideoSource_1' }))
          ?.key,
      );
    });

    it('ignores prefixes, case, slashes and source item order', () => {
      const reordered = {
        Rule: src.Rule,
        VideoAnalyticsConfigurationToken: src.VideoAnalyticsConfigurationToken,
        VideoSourceConfigurationToken: src.VideoSourceConfigurationToken,
      };
      const base = cell('tns1:RuleEngine/CellMotionDetector/Motion', src);
      expect(base).toBeDefined();
      expect(cell('TNS1:RuleEngine/tns1:CellMotionDetector/Motion/', reordered)).toBe(base);
      expect(cell('ruleEngine/cellMotionDetector/motion', src)).toBe(base);
    });

    it('is bounded however long the source values are', () => {
      const key = cell('tns1:RuleEngine/CellMotionDetector/Motion', { Rule: 'x'.repeat(100_000) });
      expect(key?.length).toBeLessThanOrEqual(512);
    });
  });
});

describe('normaliseTopic and parseFlag', () => {
  it.each([
    ['tns1:RuleEngine/CellMotionDetector/Motion', 'ruleengine/cellmotiondetector/motion'],
    ['tns1:RuleEngine/tnsaxis:VMD4/Camera1Profile1', 'ruleengine/vmd4/camera1profile1'],
    [' /tns1:VideoSource/MotionAlarm// ', 'videosource/motionalarm'],
    ['tns1:RuleEngine/CellMotionDetector/Motion//.', 'ruleengine/cellmotiondetector/motion'],
    ['', ''],
  ])('%j → %j', (topic, normalised) => {
    expect(normaliseTopic(topic)).toBe(normalised);
  });

  it.each<[string | undefined, boolean | null]>([
    ['true', true],
    ['True', true],
    ['TRUE', true],
    ['1', true],
    [' 1 ', true],
    ['false', false],
    ['False', false],
    ['0', false],
    ['', null],
    ['yes', null],
    ['2', null],
    ['01', null],
    [undefined, null],
  ])('%j → %j', (value, flag) => {
    expect(parseFlag(value)).toBe(flag);
  });
});

describe('classify fuzz', () => {
  const rng = makeRng();
  const topics = [
    'tns1:VideoSource/MotionAlarm',
    'tns1:RuleEngine/CellMotionDetector/Motion',
    'tns1:RuleEngine/MotionRegionDetector/Motion',
    'tns1:RuleEngine/MyRuleDetector/PeopleDetect',
    'tns1:RuleEngine/PeopleDetector/People',
    'tns1:RuleEngine/TPSmartEventDetector/TPSmartEvent',
    'tns1:RuleEngine/ObjectDetection/Object',
    'tns1:RuleEngine/FieldDetector/ObjectsInside',
    'tns1:RuleEngine/LineDetector/Crossed',
    'tns1:UserAlarm/IVA/HumanShapeDetect',
  ];
  const names = [
    'State',
    'IsMotion',
    'IsPeople',
    'IsVehicle',
    'ClassTypes',
    'ObjectType',
    'Class',
    'IsInside',
    'ObjectId',
    'Rule',
    '__proto__',
    'constructor',
  ];
  const values = ['true', 'false', '1', '0', 'Human', 'Vehicle Car', 'Person,Truck', ''];
  const topicAlphabet = 'tns1:/RuleEnginVdoMAlarmPplDtct. \u0000\u00e9';
  const valueAlphabet = 'truefalsTRUE01 ,;|HumanVehicl\u0000';

  it(`never throws and returns null or a well-formed classification (seed ${rng.seed})`, () => {
    for (let i = 0; i < 5000; i++) {
      const items = (): Record<string, string> => {
        // Null prototype so names like "__proto__" really become items, as they do in toNotifications.
        const out = Object.create(null) as Record<string, string>;
        const count = rng.int(4);
        for (let j = 0; j < count; j++) {
          const name = rng.int(4) === 0 ? rng.string(12) : mutate(rng, rng.pick(names), valueAlphabet);
          out[name] = rng.int(3) === 0 ? rng.string(20) : mutate(rng, rng.pick(values), valueAlphabet);
        }
        return out;
      };
      const n: Notification = {
        topic: rng.int(5) === 0 ? rng.string(60) : mutate(rng, rng.pick(topics), topicAlphabet),
        operation: rng.pick(['Initialized', 'Changed', 'Deleted', null] as const),
        utcTime: null,
        source: items(),
        data: items(),
      };
      const context = `seed ${rng.seed}, iteration ${i}: ${JSON.stringify(n)}`;
      const c = classify(n);
      if (c === null) continue;
      expect(['motion', 'human', 'vehicle'], context).toContain(c.kind);
      expect(typeof c.active, context).toBe('boolean');
      expect(c.key.length, context).toBeLessThanOrEqual(512);
      if (c.momentary) expect(c.active, context).toBe(true);
    }
  });
});
