import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { parseDiscoveryMessages } from '../../src/onvif/discovery/messages.js';
import { CameraFaultError, CameraUnauthorizedError, CameraUnreachableError } from '../../src/onvif/errors.js';
import { OnvifSession } from '../../src/onvif/library.js';
import * as R from '../../src/onvif/simulator/responses.js';
import { FAILURE_MODES, HostileCamera, type FailureMode } from '../support/hostile-camera.js';

// Every ONVIF operation the gateway uses, against a camera that breaks that one operation in each
// failure mode: the call ends as a result or a typed error of that call, never as an exception
// outside its promise (which would end the daemon).

const TRANSPORT: readonly FailureMode[] = ['hang', 'refused', 'reset', 'cut'];
type Outcome = 'ok' | 'CameraFaultError' | 'CameraUnreachableError' | 'CameraUnauthorizedError' | `untyped: ${string}`;

interface Row {
  name: string;
  op: string;
  /** Other operations broken for the whole case (to reach a fallback). */
  also?: Record<string, FailureMode>;
  /** Steps before the broken operation, on a camera that still answers everything. */
  before?: (s: OnvifSession) => Promise<void>;
  /** The broken step; without `before` the connect itself. */
  act: (s: OnvifSession | null, url: string) => Promise<unknown>;
  /** What an answer that is not the proper one gives: an optional step falls back, a required one faults. */
  answered: 'ok' | 'CameraFaultError';
  /** What a valid envelope with an empty response element gives. */
  missing: 'ok' | 'CameraFaultError';
  /** A PTZ camera (the PTZ operations' rows). */
  ptz?: boolean;
}

const sessions: OnvifSession[] = [];
const open = async (url: string) => {
  const s = await OnvifSession.connect(
    { url, username: 'admin', password: 'pw' },
    { callTimeoutMs: 400, pullWaitS: 1 },
  );
  sessions.push(s);
  return s;
};
const connectAndDescribe = async (_s: OnvifSession | null, url: string) => (await open(url)).describe();
const subscribed = async (s: OnvifSession) => s.createPullPoint();
const described = async (s: OnvifSession) => void (await s.describe());
/** A PTZ operation of a described PTZ camera: every failure is the call's, the session goes on. */
const ptzRow = (name: string, op: string, act: (s: OnvifSession) => Promise<unknown>): Row => ({
  name,
  op,
  ptz: true,
  before: described,
  act: (s) => act(s!),
  answered: 'CameraFaultError',
  missing: 'ok',
});

const ROWS: Row[] = [
  {
    name: 'adoption: camera clock',
    op: 'GetSystemDateAndTime',
    act: connectAndDescribe,
    answered: 'ok',
    missing: 'ok',
  },
  {
    name: 'adoption: device information',
    op: 'GetDeviceInformation',
    act: connectAndDescribe,
    answered: 'CameraFaultError',
    missing: 'ok',
  },
  { name: 'adoption: services', op: 'GetServices', act: connectAndDescribe, answered: 'ok', missing: 'ok' },
  {
    name: 'adoption: capabilities',
    op: 'GetCapabilities',
    also: { GetServices: 'fault' },
    act: connectAndDescribe,
    answered: 'ok',
    missing: 'ok',
  },
  { name: 'adoption: profiles', op: 'GetProfiles', act: connectAndDescribe, answered: 'ok', missing: 'ok' },
  {
    name: 'health check',
    op: 'GetSystemDateAndTime',
    before: async () => undefined,
    act: (s) => s!.ping(),
    answered: 'CameraFaultError',
    missing: 'ok',
  },
  {
    name: 'stream URI',
    op: 'GetStreamUri',
    before: async (s) => void (await s.describe()),
    act: (s) => s!.streamUri('Profile_1'),
    answered: 'CameraFaultError',
    missing: 'ok',
  },
  {
    name: 'snapshot URI',
    op: 'GetSnapshotUri',
    before: async (s) => void (await s.describe()),
    act: (s) => s!.snapshotUri('Profile_1'),
    answered: 'CameraFaultError',
    missing: 'ok',
  },
  {
    name: 'events subscription',
    op: 'CreatePullPointSubscription',
    before: async () => undefined,
    act: (s) => s!.createPullPoint(),
    answered: 'CameraFaultError',
    missing: 'CameraFaultError',
  },
  {
    name: 'pull',
    op: 'PullMessages',
    before: subscribed,
    act: (s) => s!.pullMessages(),
    answered: 'CameraFaultError',
    missing: 'ok',
  },
  {
    name: 'renew',
    op: 'Renew',
    before: subscribed,
    act: (s) => s!.renew(),
    answered: 'CameraFaultError',
    missing: 'ok',
  },
  {
    name: 'unsubscribe',
    op: 'Unsubscribe',
    before: subscribed,
    act: (s) => s!.unsubscribe(),
    answered: 'CameraFaultError',
    missing: 'ok',
  },
  {
    name: 'reboot',
    op: 'SystemReboot',
    before: async () => undefined,
    act: (s) => s!.reboot(),
    answered: 'CameraFaultError',
    missing: 'ok',
  },
  {
    name: 'set time',
    op: 'SetSystemDateAndTime',
    before: async () => undefined,
    act: (s) => s!.setClock(new Date()),
    answered: 'CameraFaultError',
    missing: 'ok',
  },
  // What adoption reads of PTZ is optional: a camera that breaks it is adopted without that part.
  ...['GetNodes', 'GetConfigurationOptions', 'GetPresets'].map((op): Row => ({
    name: `adoption: PTZ ${op}`,
    op,
    ptz: true,
    act: connectAndDescribe,
    answered: 'ok',
    missing: 'ok',
  })),
  ptzRow('PTZ move', 'ContinuousMove', (s) => s.ptzMove({ pan: 1, tilt: 0, zoom: 0 }, 1000)),
  ptzRow('PTZ stop', 'Stop', (s) => s.ptzStop()),
  ptzRow('PTZ preset recalled', 'GotoPreset', (s) => s.ptzGotoPreset('1')),
  ptzRow('PTZ preset saved', 'SetPreset', (s) => s.ptzSetPreset('Gate')),
  ptzRow('PTZ preset removed', 'RemovePreset', (s) => s.ptzRemovePreset('1')),
  ptzRow('PTZ presets read again', 'GetPresets', (s) => s.ptzPresets()),
  ptzRow('PTZ home', 'GotoHomePosition', (s) => s.ptzHome()),
  ptzRow('PTZ centre', 'RelativeMove', (s) => s.ptzCenter({ x: 0.2, y: 0.8 })),
];

function expected(row: Row, mode: FailureMode): Outcome {
  if (TRANSPORT.includes(mode)) return 'CameraUnreachableError';
  return mode === 'missing-fields' ? row.missing : row.answered;
}

async function outcome(p: Promise<unknown>): Promise<Outcome> {
  try {
    await p;
    return 'ok';
  } catch (err) {
    for (const cls of [CameraFaultError, CameraUnreachableError, CameraUnauthorizedError])
      if (err instanceof cls) return cls.name as Outcome;
    return `untyped: ${String(err)}`;
  }
}

// Vitest would report an escaped exception too; counting them here makes the assertion explicit.
let escaped = 0;
const onEscape = () => void escaped++;
beforeAll(() => {
  process.on('uncaughtException', onEscape);
  process.on('unhandledRejection', onEscape);
});
afterAll(() => {
  process.off('uncaughtException', onEscape);
  process.off('unhandledRejection', onEscape);
});
// The cases run side by side: most of the time of a "hang" case is its call timeout, spent idle.
// Each case stops its own camera; the sessions are closed once all have ended.
afterAll(() => {
  for (const s of sessions.splice(0)) s.close();
});

const cases = ROWS.flatMap((row) => FAILURE_MODES.map((mode) => [row.name, mode, row] as const));

describe('every ONVIF operation against a hostile camera', () => {
  it.concurrent.for(cases)(
    '%s, %s → a result or a typed error of that call',
    async ([_name, mode, row], { expect, onTestFinished }) => {
      const cam = new HostileCamera(row.ptz);
      onTestFinished(() => cam.stopListening());
      await cam.start();
      for (const [op, m] of Object.entries(row.also ?? {})) cam.breaks.set(op, m);
      let session: OnvifSession | null = null;
      if (row.before) {
        session = await open(cam.deviceServiceUrl);
        await row.before(session);
      }
      cam.breaks.set(row.op, mode);
      if (mode === 'refused') await cam.stopListening();
      expect(await outcome(row.act(session, cam.deviceServiceUrl))).toBe(expected(row, mode));
      if (mode !== 'refused') expect(cam.calls.get(row.op) ?? 0).toBeGreaterThan(0); // the broken operation was really sent
      expect(escaped).toBe(0);
    },
  );

  it('a partial adoption still describes what the camera did answer', async () => {
    const cam = new HostileCamera();
    onTestFinished(() => cam.stopListening());
    await cam.start();
    for (const op of ['GetSystemDateAndTime', 'GetServices', 'GetCapabilities', 'GetProfiles'])
      cam.breaks.set(op, 'fault');
    const d = await (await open(cam.deviceServiceUrl)).describe();
    expect(d).toMatchObject({
      manufacturer: 'Hostile',
      model: 'H-1',
      serialNumber: cam.serial,
      clockOffsetMs: 0,
      profiles: [],
    });
  });
});

describe('discovery answers in the same failure modes', () => {
  const proper = R.envelope(
    '<d:ProbeMatches xmlns:d="http://schemas.xmlsoap.org/ws/2005/04/discovery"><d:ProbeMatch/></d:ProbeMatches>',
  );
  it.each<[string, string]>([
    ['not SOAP', 'OK'],
    ['empty Body', R.envelope('')],
    ['a SOAP Fault', R.fault('env:Receiver', 'ter:ActionNotSupported', 'no')],
    ['wrong namespace', proper.replace('http://www.w3.org/2003/05/soap-envelope', 'urn:example:not-soap')],
    ['HTML', '<html><body>500</body></html>'],
    ['truncated', proper.slice(0, proper.length >> 1)],
    ['missing fields', proper],
  ])('%s → nothing reported, nothing thrown', async (_name, text) => {
    expect(await parseDiscoveryMessages(text)).toBeNull();
    expect(escaped).toBe(0);
  });
});
