import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { EventTracker } from '../../src/onvif/event-tracker.js';
import { toNotifications, type Notification } from '../../src/onvif/notification.js';
import { parseSoapBody } from '../../src/onvif/soap-xml.js';
import { classify } from '../../src/onvif/topics.js';
import { makeRng, mutate } from '../support/fuzz.js';

const CAPTURES = path.resolve(import.meta.dirname, '../../../shared/onvif-captures');
const MOTION_DIR = path.join(CAPTURES, '2BAD-onvif/dvc/dcn-bf5365');
const haveCaptures =
  existsSync(path.join(MOTION_DIR, 'events.PullMessagesMotion.xml')) &&
  existsSync(path.join(MOTION_DIR, 'events.PullMessagesMotionEnd.xml'));
if (!haveCaptures)
  console.log(
    `skipping the real-camera capture tests: ${MOTION_DIR} is absent (the shared captures live outside the repository)`,
  );

async function notificationsOf(xml: string): Promise<Notification[]> {
  const body = await parseSoapBody(xml);
  return toNotifications(body.pullMessagesResponse);
}

const NS =
  'xmlns:SOAP-ENV="http://www.w3.org/2003/05/soap-envelope" xmlns:tev="http://www.onvif.org/ver10/events/wsdl" ' +
  'xmlns:wsnt="http://docs.oasis-open.org/wsn/b-2" xmlns:tt="http://www.onvif.org/ver10/schema" ' +
  'xmlns:tns1="http://www.onvif.org/ver10/topics" xmlns:tnsaxis="http://www.axis.com/2009/event/topics"';

function envelope(messages: string): string {
  return (
    `<?xml version="1.0" encoding="UTF-8"?><SOAP-ENV:Envelope ${NS}><SOAP-ENV:Body><tev:PullMessagesResponse>` +
    '<tev:CurrentTime>2026-01-02T03:04:05Z</tev:CurrentTime><tev:TerminationTime>2026-01-02T03:05:05Z</tev:TerminationTime>' +
    `${messages}</tev:PullMessagesResponse></SOAP-ENV:Body></SOAP-ENV:Envelope>`
  );
}

function items(kind: 'Source' | 'Data', values: Record<string, string>): string {
  const inner = Object.entries(values)
    .map(([name, value]) => `<tt:SimpleItem Name="${name}" Value="${value}"/>`)
    .join('');
  return `<tt:${kind}>${inner}</tt:${kind}>`;
}

function message(
  topic: string,
  opts: { source?: Record<string, string>; data: Record<string, string>; op?: string; time?: string },
): string {
  const op =
    opts.op === undefined ? ' PropertyOperation="Changed"' : opts.op === '' ? '' : ` PropertyOperation="${opts.op}"`;
  const time =
    opts.time === undefined ? ' UtcTime="2026-01-02T03:04:05Z"' : opts.time === '' ? '' : ` UtcTime="${opts.time}"`;
  return (
    '<wsnt:NotificationMessage><wsnt:Topic Dialect="http://www.onvif.org/ver10/tev/topicExpression/ConcreteSet">' +
    `${topic}</wsnt:Topic><wsnt:Message><tt:Message${time}${op}>${items('Source', opts.source ?? {})}${items('Data', opts.data)}` +
    '</tt:Message></wsnt:Message></wsnt:NotificationMessage>'
  );
}

describe('real camera capture (D-Link DCS, 2BAD/onvif test data)', () => {
  it.skipIf(!haveCaptures)(
    'motion start then end: both topics active, then inactive, on the same detectors',
    async () => {
      const start = await notificationsOf(readFileSync(path.join(MOTION_DIR, 'events.PullMessagesMotion.xml'), 'utf8'));
      const end = await notificationsOf(
        readFileSync(path.join(MOTION_DIR, 'events.PullMessagesMotionEnd.xml'), 'utf8'),
      );

      expect(start.map((n) => n.topic)).toEqual([
        'tns1:VideoSource/MotionAlarm',
        'tns1:RuleEngine/CellMotionDetector/Motion',
      ]);
      expect(end.map((n) => n.topic)).toEqual([
        'tns1:VideoSource/MotionAlarm',
        'tns1:RuleEngine/CellMotionDetector/Motion',
      ]);
      expect(start[0]).toEqual({
        topic: 'tns1:VideoSource/MotionAlarm',
        operation: 'Changed',
        utcTime: Date.parse('2026-10-03T02:56:20Z'),
        source: { Source: 'VideoSource_token_1' },
        data: { State: 'true' },
      });
      expect(start[1]?.source).toEqual({
        VideoSourceConfigurationToken: 'VideoSource_token_1',
        VideoAnalyticsConfigurationToken: 'VideoAnalyticsToken',
        Rule: 'MotionDetectorRule',
      });
      expect(start[1]?.data).toEqual({ IsMotion: 'true' });
      expect(end[1]?.utcTime).toBe(Date.parse('2026-10-03T02:56:40Z'));

      const startC = start.map(classify);
      const endC = end.map(classify);
      expect(startC.map((c) => [c?.kind, c?.active])).toEqual([
        ['motion', true],
        ['motion', true],
      ]);
      expect(endC.map((c) => [c?.kind, c?.active])).toEqual([
        ['motion', false],
        ['motion', false],
      ]);
      expect(startC[0]?.key).not.toBe(startC[1]?.key);
      expect(endC.map((c) => c?.key)).toEqual(startC.map((c) => c?.key));

      // Through the tracker: the two detectors make one motion event, closed after the debounce.
      const tracker = new EventTracker({ debounceMs: 1500 });
      const out = [
        ...start.flatMap((n) => tracker.push(n, classify(n), 20_000)),
        ...end.flatMap((n) => tracker.push(n, classify(n), 40_000)),
        ...tracker.tick(41_500),
      ];
      expect(out).toEqual([
        { type: 'start', kind: 'motion', at: 20_000 },
        { type: 'stop', kind: 'motion', at: 40_000 },
      ]);
    },
  );
});

describe('vendor shapes (hand-made)', () => {
  it('Hikvision-style cell motion, one message with one item each', async () => {
    const ns = await notificationsOf(
      envelope(
        message('tns1:RuleEngine/CellMotionDetector/Motion', {
          source: {
            VideoSourceConfigurationToken: 'VideoSourceToken',
            VideoAnalyticsConfigurationToken: 'VideoAnalyticsToken',
            Rule: 'MyMotionDetectorRule',
          },
          data: { IsMotion: 'true' },
        }),
      ),
    );
    expect(ns).toHaveLength(1);
    expect(ns[0]?.data).toEqual({ IsMotion: 'true' });
    expect(classify(ns[0] as Notification)).toMatchObject({ kind: 'motion', active: true });
  });

  it('Axis-style tnsaxis:VideoSource/MotionAlarm with "1"/"0"', async () => {
    const ns = await notificationsOf(
      envelope(
        message('tnsaxis:VideoSource/MotionAlarm', {
          source: { VideoSourceConfigurationToken: '0' },
          data: { State: '1' },
        }) +
          message('tnsaxis:VideoSource/MotionAlarm', {
            source: { VideoSourceConfigurationToken: '0' },
            data: { State: '0' },
          }),
      ),
    );
    expect(ns.map((n) => n.topic)).toEqual(['tnsaxis:VideoSource/MotionAlarm', 'tnsaxis:VideoSource/MotionAlarm']);
    expect(ns.map((n) => classify(n)?.active)).toEqual([true, false]);
    expect(ns.map((n) => classify(n)?.kind)).toEqual(['motion', 'motion']);
  });

  it('TP-Link TPSmartEvent IsPeople and IsVehicle, per-segment prefixes', async () => {
    const src = {
      VideoSourceConfigurationToken: 'vsconf',
      VideoAnalyticsConfigurationToken: 'VideoAnalyticsToken',
      Rule: 'MyTPSmartEventDetectorRule',
    };
    const ns = await notificationsOf(
      envelope(
        message('tns1:RuleEngine/TPSmartEventDetector/TPSmartEvent', { source: src, data: { IsPeople: 'true' } }) +
          message('tns1:RuleEngine/tns1:TPSmartEventDetector/tns1:TPSmartEvent', {
            source: src,
            data: { IsVehicle: 'true' },
          }) +
          message('tns1:RuleEngine/PeopleDetector/People', { source: src, data: { IsPeople: 'false' } }),
      ),
    );
    expect(ns.map((n) => [classify(n)?.kind, classify(n)?.active])).toEqual([
      ['human', true],
      ['vehicle', true],
      ['human', false],
    ]);
  });

  it('Dahua-ish ObjectDetection with ClassTypes Human', async () => {
    const ns = await notificationsOf(
      envelope(
        message('tns1:RuleEngine/ObjectDetection/Object', {
          source: { VideoSourceToken: 'VideoSource_1', Rule: 'ObjectRule' },
          data: { ClassTypes: 'Human' },
        }),
      ),
    );
    expect(classify(ns[0] as Notification)).toMatchObject({ kind: 'human', active: true, momentary: true });
  });

  it('Initialized operation; missing operation and time are null, not a skip', async () => {
    const ns = await notificationsOf(
      envelope(
        message('tns1:VideoSource/MotionAlarm', { data: { State: 'false' }, op: 'Initialized' }) +
          message('tns1:VideoSource/MotionAlarm', { data: { State: 'true' }, op: '', time: '' }) +
          message('tns1:VideoSource/MotionAlarm', { data: { State: 'true' }, op: 'Bogus', time: 'yesterday' }),
      ),
    );
    expect(ns.map((n) => [n.operation, n.utcTime])).toEqual([
      ['Initialized', Date.parse('2026-01-02T03:04:05Z')],
      [null, null],
      [null, null],
    ]);
  });

  it('skips unreadable messages and items but keeps the rest of the batch', async () => {
    const good = message('tns1:VideoSource/MotionAlarm', { data: { State: 'true' } });
    const ns = await notificationsOf(
      envelope(
        '<wsnt:NotificationMessage><wsnt:Message><tt:Message/></wsnt:Message></wsnt:NotificationMessage>' + // no topic
          '<wsnt:NotificationMessage><wsnt:Topic>tns1:VideoSource/MotionAlarm</wsnt:Topic></wsnt:NotificationMessage>' + // no message
          '<wsnt:NotificationMessage><wsnt:Topic>  </wsnt:Topic><wsnt:Message><tt:Message/></wsnt:Message></wsnt:NotificationMessage>' + // blank topic
          good +
          '<wsnt:NotificationMessage><wsnt:Topic>tns1:VideoSource/MotionAlarm</wsnt:Topic><wsnt:Message><tt:Message><tt:Data>' +
          '<tt:SimpleItem Value="x"/><tt:SimpleItem Name="State"/><tt:SimpleItem Name="State" Value="false"/><tt:SimpleItem Name="State" Value="true"/>' +
          '<tt:ElementItem Name="Shape"><tt:Polygon/></tt:ElementItem></tt:Data></tt:Message></wsnt:Message></wsnt:NotificationMessage>',
      ),
    );
    expect(ns).toHaveLength(2);
    expect(ns[0]?.data).toEqual({ State: 'true' });
    // The first readable State wins; nameless and valueless items and ElementItems are skipped.
    expect(ns[1]).toEqual({
      topic: 'tns1:VideoSource/MotionAlarm',
      operation: null,
      utcTime: null,
      source: {},
      data: { State: 'false' },
    });
  });

  it('reads a wsnt:Message without the tt:Message wrapper', async () => {
    const ns = await notificationsOf(
      envelope(
        '<wsnt:NotificationMessage><wsnt:Topic>tns1:VideoSource/MotionAlarm</wsnt:Topic><wsnt:Message PropertyOperation="Changed">' +
          '<tt:Data><tt:SimpleItem Name="State" Value="true"/></tt:Data></wsnt:Message></wsnt:NotificationMessage>',
      ),
    );
    expect(ns).toEqual([
      {
        topic: 'tns1:VideoSource/MotionAlarm',
        operation: 'Changed',
        utcTime: null,
        source: {},
        data: { State: 'true' },
      },
    ]);
  });

  it('keeps camera item names away from Object.prototype', async () => {
    const ns = await notificationsOf(
      envelope(
        '<wsnt:NotificationMessage><wsnt:Topic>tns1:VideoSource/MotionAlarm</wsnt:Topic><wsnt:Message><tt:Message><tt:Data>' +
          '<tt:SimpleItem Name="__proto__" Value="true"/><tt:SimpleItem Name="constructor" Value="x"/></tt:Data></tt:Message></wsnt:Message></wsnt:NotificationMessage>',
      ),
    );
    const data = ns[0]?.data ?? {};
    expect(Object.keys(data)).toEqual(['__proto__', 'constructor']);
    expect(data.constructor).toBe('x');
    expect(Object.getPrototypeOf(data)).toBeNull();
    expect(Object.getPrototypeOf({})).toBe(Object.prototype);
  });

  it('an empty response has no notifications', async () => {
    expect(await notificationsOf(envelope(''))).toEqual([]);
  });

  it('accepts the whole Body as well as its PullMessagesResponse element', async () => {
    const body = await parseSoapBody(envelope(message('tns1:VideoSource/MotionAlarm', { data: { State: 'true' } })));
    expect(toNotifications(body)).toEqual(toNotifications(body.pullMessagesResponse));
    expect(toNotifications(body)).toHaveLength(1);
  });
});

describe('malformed input gives [] rather than a throw', () => {
  const cyclic: Record<string, unknown> = {};
  cyclic.notificationMessage = [cyclic];
  it.each<[string, unknown]>([
    ['undefined', undefined],
    ['null', null],
    ['a string', '<xml/>'],
    ['a number', 42],
    ['an empty array', []],
    ['an array of junk', [null, 1, 'x', [], {}]],
    ['notificationMessage is a string', [{ notificationMessage: 'x' }]],
    ['notificationMessage of nulls', [{ notificationMessage: [null, 1, []] }]],
    [
      'topic is an object without text',
      [{ notificationMessage: [{ topic: [{ $: { Dialect: 'x' } }], message: [{}] }] }],
    ],
    ['two topics', [{ notificationMessage: [{ topic: [1, 2], message: [{}] }] }]],
    ['message is a string', [{ notificationMessage: [{ topic: ['tns1:VideoSource/MotionAlarm'], message: ['x'] }] }]],
    ['self-referencing', cyclic],
  ])('%s', (_name, input) => {
    expect(toNotifications(input)).toEqual([]);
  });

  it('odd items inside a readable message are skipped', () => {
    const input = [
      {
        notificationMessage: [
          {
            topic: ['tns1:VideoSource/MotionAlarm'],
            message: [
              {
                message: [
                  {
                    $: { UtcTime: { nested: true }, PropertyOperation: ['Changed', 'Deleted'] },
                    source: 'x',
                    data: [
                      {
                        simpleItem: [
                          null,
                          'x',
                          { $: null },
                          { $: { Name: { a: 1 }, Value: 'v' } },
                          { $: { Name: 'Level', Value: Number.NaN } },
                          { $: { Name: 'State', Value: 1 } },
                        ],
                      },
                    ],
                  },
                ],
              },
            ],
          },
        ],
      },
    ];
    expect(toNotifications(input)).toEqual([
      { topic: 'tns1:VideoSource/MotionAlarm', operation: null, utcTime: null, source: {}, data: { State: '1' } },
    ]);
  });
});

describe('notification fuzz', () => {
  const rng = makeRng();
  const sample = envelope(
    message('tns1:RuleEngine/CellMotionDetector/Motion', {
      source: { VideoSourceConfigurationToken: 'VS', Rule: 'R' },
      data: { IsMotion: 'true' },
    }) + message('tns1:RuleEngine/ObjectDetection/Object', { data: { ClassTypes: 'Human', State: '1' } }),
  );
  const alphabet = '<>/="\' :tnsSimpleItemNameValuetruefalse01&;';

  it(`mutated documents either fail to parse or give notifications, never a throw from toNotifications (seed ${rng.seed})`, async () => {
    for (let i = 0; i < 400; i++) {
      const xml = mutate(rng, sample, alphabet);
      let body: Record<string, unknown>;
      try {
        body = await parseSoapBody(xml);
      } catch {
        continue; // refusing a broken document is the parser's job; it is tested elsewhere
      }
      const context = `seed ${rng.seed}, iteration ${i}: ${xml}`;
      const ns = toNotifications(body.pullMessagesResponse);
      expect(Array.isArray(ns), context).toBe(true);
      for (const n of ns) {
        expect(typeof n.topic, context).toBe('string');
        expect(n.topic.length, context).toBeGreaterThan(0);
        expect(() => classify(n), context).not.toThrow();
        for (const v of [...Object.values(n.source), ...Object.values(n.data)])
          expect(typeof v, context).toBe('string');
      }
    }
  });
});
