import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CameraFaultError } from '../../../src/onvif/errors.js';
import { readCapabilities, readServices } from '../../../src/onvif/soap/device-ops.js';
import { envelope } from '../../../src/onvif/soap/envelope.js';
import { readProfiles } from '../../../src/onvif/soap/media-ops.js';
import {
  continuousMove,
  FOV_SPACE,
  fovTranslation,
  GET_CONFIGURATIONS,
  GET_NODES,
  getConfigurationOptions,
  getPresets,
  gotoHomePosition,
  gotoPreset,
  readConfigurationOptions,
  readConfigurations,
  readNodes,
  readPresets,
  readSetPreset,
  relativeMoveFov,
  removePreset,
  setPreset,
  stop,
  xmlDuration,
  xmlNumber,
} from '../../../src/onvif/soap/ptz-ops.js';
import { parseSoapBody } from '../../../src/onvif/soap-xml.js';
import { readStop, readTimeout, readTranslation, readVelocity } from '../../../src/onvif/simulator/ptz.js';
import { field, parseSoapRequest } from '../../../src/onvif/simulator/request.js';
import * as R from '../../../src/onvif/simulator/responses.js';
import { makeRng, mutate } from '../../support/fuzz.js';

// The PTZ operations both ways, as round-trip tables: each request the gateway builds, read back as
// the simulated camera reads it; each answer the simulated camera builds, read by the gateway's
// reader; the captured PTZ cameras' profiles and service lists; and a fuzz of the readers.

const CAPTURES = path.resolve(import.meta.dirname, '../../../../shared/onvif-captures/easy_onvif_workspace');
const capture = (p: string) => {
  if (existsSync(path.join(CAPTURES, p))) return readFileSync(path.join(CAPTURES, p), 'utf8');
  console.log(`skipping the test of ${p}: ${CAPTURES} is absent (the shared captures live outside the repository)`);
  return null;
};

type Body = Record<string, unknown>;
/** What the camera sees of a request body: its operation and the operation element. */
async function request(body: string): Promise<{ operation: string; body: Body }> {
  const r = await parseSoapRequest(envelope(body));
  if (!r) throw new Error(`unreadable request: ${body}`);
  return r;
}

describe('PTZ requests, as the camera reads them', () => {
  it.each<[string, string, string, (b: Body) => unknown, unknown]>([
    [
      'ContinuousMove with a Timeout',
      continuousMove('Profile_1', { pan: 0.5, tilt: -0.25, zoom: 0 }, 1500),
      'ContinuousMove',
      (b) => ({ profile: field(b, 'ProfileToken'), v: readVelocity(b), timeout: readTimeout(b) }),
      { profile: 'Profile_1', v: { pan: 0.5, tilt: -0.25, zoom: 0 }, timeout: 1500 },
    ],
    [
      'ContinuousMove at the ends of the range, without a Timeout',
      continuousMove('p', { pan: -1, tilt: 1, zoom: -1 }, null),
      'ContinuousMove',
      (b) => ({ v: readVelocity(b), timeout: readTimeout(b) }),
      { v: { pan: -1, tilt: 1, zoom: -1 }, timeout: null },
    ],
    [
      'ContinuousMove rounds to a millionth and never writes an exponent',
      continuousMove('p', { pan: 1e-9, tilt: 0.1234567, zoom: -0.0000004 }, 250),
      'ContinuousMove',
      (b) => ({ v: readVelocity(b), timeout: readTimeout(b) }),
      { v: { pan: 0, tilt: 0.123457, zoom: 0 }, timeout: 250 },
    ],
    ['Stop of both axes', stop('Profile_1'), 'Stop', readStop, { panTilt: true, zoom: true }],
    [
      'GotoPreset with a token that needs escaping',
      gotoPreset('Profile_1', 'a&b<"c">'),
      'GotoPreset',
      (b) => [field(b, 'ProfileToken'), field(b, 'PresetToken')],
      ['Profile_1', 'a&b<"c">'],
    ],
    [
      'SetPreset by name',
      setPreset('Profile_1', "Porch 'left' & gate"),
      'SetPreset',
      (b) => [field(b, 'PresetName'), field(b, 'PresetToken')],
      ["Porch 'left' & gate", null],
    ],
    ['RemovePreset', removePreset('P', '7'), 'RemovePreset', (b) => field(b, 'PresetToken'), '7'],
    ['GotoHomePosition', gotoHomePosition('P'), 'GotoHomePosition', (b) => field(b, 'ProfileToken'), 'P'],
    [
      'RelativeMove in the field-of-view space',
      relativeMoveFov('P', -37.5, 12),
      'RelativeMove',
      readTranslation,
      { x: -37.5, y: 12, space: FOV_SPACE },
    ],
    ['GetPresets', getPresets('Profile_2'), 'GetPresets', (b) => field(b, 'ProfileToken'), 'Profile_2'],
    [
      'GetConfigurationOptions',
      getConfigurationOptions('PTZConfig_1'),
      'GetConfigurationOptions',
      (b) => field(b, 'ConfigurationToken'),
      'PTZConfig_1',
    ],
    ['GetNodes', GET_NODES, 'GetNodes', () => null, null],
    ['GetConfigurations', GET_CONFIGURATIONS, 'GetConfigurations', () => null, null],
  ])('%s', async (_name, xml, operation, read, expected) => {
    const r = await request(xml);
    expect(r.operation).toBe(operation);
    expect(read(r.body)).toEqual(expected);
  });

  it.each<[number, string]>([
    [0, '0'],
    [1, '1'],
    [-1, '-1'],
    [0.5, '0.5'],
    [-0.000001, '-0.000001'],
    [-0.0000001, '0'],
    [1e-9, '0'],
    [123.4567894, '123.456789'],
  ])('writes %d as %s', (n, text) => {
    expect(xmlNumber(n)).toBe(text);
    expect(Number(xmlNumber(Number(text)))).toBe(Number(text));
  });

  it.each<[number, string]>([
    [1000, 'PT1S'],
    [1500, 'PT1.5S'],
    [100, 'PT0.1S'],
    [10_000, 'PT10S'],
  ])('writes a Timeout of %d ms as %s', (ms, text) => {
    expect(xmlDuration(ms)).toBe(text);
  });
});

const body = (xml: string) => parseSoapBody(xml);

describe('PTZ answers, as the gateway reads them', () => {
  const fov = { x: { min: -100, max: 100 }, y: { min: -100, max: 100 } };
  it.each<[string, string, (b: Body) => unknown, unknown]>([
    [
      'nodes with the field-of-view space and a home position',
      R.ptzNodes({ fov: true, homeSupported: true }),
      readNodes,
      [{ token: 'PTZNode_1', homeSupported: true, maxPresets: 64, fov }],
    ],
    [
      'nodes without either',
      R.ptzNodes({ fov: false, homeSupported: false }),
      readNodes,
      [{ token: 'PTZNode_1', homeSupported: false, maxPresets: 64, fov: null }],
    ],
    ['no nodes (a fixed camera listing a PTZ service)', R.envelope('<tptz:GetNodesResponse/>'), readNodes, []],
    [
      'configuration options',
      R.ptzConfigurationOptions({ fov: true }),
      readConfigurationOptions,
      { fov, timeout: { min: 1000, max: 60_000 } },
    ],
    [
      'configuration options without the field-of-view space',
      R.ptzConfigurationOptions({ fov: false }),
      readConfigurationOptions,
      { fov: null, timeout: { min: 1000, max: 60_000 } },
    ],
    [
      'configurations',
      R.ptzConfigurations(),
      readConfigurations,
      [{ configurationToken: 'PTZConfig_1', nodeToken: 'PTZNode_1' }],
    ],
    [
      'presets, names escaped',
      R.ptzPresets([
        { token: '1', name: 'Gate & "drive"', position: { pan: 0.5, tilt: 0, zoom: 0 } },
        { token: 'b<2>', name: 'Porch', position: { pan: -1, tilt: 1, zoom: 1 } },
      ]),
      readPresets,
      [
        { token: '1', name: 'Gate & "drive"' },
        { token: 'b<2>', name: 'Porch' },
      ],
    ],
    [
      'presets without a name, a token or twice over',
      R.envelope(
        '<tptz:GetPresetsResponse><tptz:Preset token="1"/><tptz:Preset><tt:Name>no token</tt:Name></tptz:Preset>' +
          '<tptz:Preset token="1"><tt:Name>again</tt:Name></tptz:Preset></tptz:GetPresetsResponse>',
      ),
      readPresets,
      [{ token: '1', name: '1' }],
    ],
    ['no presets', R.envelope('<tptz:GetPresetsResponse/>'), readPresets, []],
    ['the new preset token', R.ptzSetPreset('7'), readSetPreset, '7'],
    ['a SetPreset answer without a token', R.ptzDone('SetPreset'), readSetPreset, null],
    [
      'services with PTZ',
      R.services('http://10.0.0.9', { ptz: true }),
      readServices,
      {
        media1: 'http://10.0.0.9/onvif/media_service',
        media2: null,
        events: 'http://10.0.0.9/onvif/event_service',
        ptz: 'http://10.0.0.9/onvif/ptz_service',
      },
    ],
    [
      'capabilities with PTZ',
      R.capabilities('http://10.0.0.9', { ptz: true }),
      (b) => readCapabilities(b).ptz,
      'http://10.0.0.9/onvif/ptz_service',
    ],
    [
      "profiles with the PTZ configuration (Media1's PTZConfiguration)",
      R.profiles([{ token: 'P1', name: 'main', width: 1920, height: 1080 }], { ptz: true }),
      (b) => readProfiles(b, 'media1').map((p) => p.ptz),
      [{ configurationToken: 'PTZConfig_1', nodeToken: 'PTZNode_1' }],
    ],
    [
      'Media2 profiles with the PTZ configuration (Configurations/PTZ)',
      R.envelope(
        '<tr2:GetProfilesResponse xmlns:tr2="http://www.onvif.org/ver20/media/wsdl"><tr2:Profiles token="m"><tr2:Name>Main</tr2:Name><tr2:Configurations>' +
          '<tr2:PTZ token="ptz0"><tt:Name>p</tt:Name><tt:NodeToken>node0</tt:NodeToken></tr2:PTZ></tr2:Configurations></tr2:Profiles></tr2:GetProfilesResponse>',
      ),
      (b) => readProfiles(b, 'media2').map((p) => p.ptz),
      [{ configurationToken: 'ptz0', nodeToken: 'node0' }],
    ],
  ])('%s', async (_name, xml, read, expected) => {
    expect(read(await body(xml))).toEqual(expected);
  });

  it.each<[string, (b: Body) => unknown]>([
    ['nodes', readNodes],
    ['configurations', readConfigurations],
    ['configuration options', readConfigurationOptions],
    ['presets', readPresets],
    ['SetPreset', readSetPreset],
  ])('%s: an answer to another operation is a fault of this call', (_name, read) => {
    expect(() => read({ somethingElseResponse: [''] })).toThrow(CameraFaultError);
  });

  it.each<[string, { x: number; y: number }, { x: number; y: number }]>([
    ['the centre is no move', { x: 0.5, y: 0.5 }, { x: 0, y: 0 }],
    ['the right edge is half the view to the right', { x: 1, y: 0.5 }, { x: 100, y: 0 }],
    ['the top-left corner is left and up (ONVIF y grows upwards)', { x: 0, y: 0 }, { x: -100, y: 100 }],
    ['a quarter in from the bottom-right', { x: 0.75, y: 0.75 }, { x: 50, y: -50 }],
  ])('centring on a point: %s', (_name, point, expected) => {
    expect(fovTranslation({ x: { min: -100, max: 100 }, y: { min: -100, max: 100 } }, point)).toEqual(expected);
  });

  it('centring maps onto a space of another range, e.g. -1…1', () => {
    expect(fovTranslation({ x: { min: -1, max: 1 }, y: { min: -0.5, max: 0.5 } }, { x: 1, y: 1 })).toEqual({
      x: 1,
      y: -0.5,
    });
  });
});

describe('the captured PTZ cameras', () => {
  it.each<[string, string | null]>([
    ['ENP1A14-IR_25X', 'PTZToken'],
    ['IPD-H4K8M05-BS', 'PTZCFG_CH0'],
    ['IPG-8150PSS', 'PTZConfigurationToken'],
    ['SUNBA', 'ptz_node_config1'],
    ['DCS-6511', null],
    ['GX728MF-IR28', null],
  ])(
    '%s: its Media1 profiles name the PTZ configuration (%s), in the generic velocity space',
    async (camera, token) => {
      const xml = capture(`${camera}/media1/GetProfilesResponse.xml`);
      if (!xml) return;
      const profiles = readProfiles(await body(xml), 'media1');
      expect(profiles.length).toBeGreaterThan(0);
      expect(profiles[0]!.ptz?.configurationToken ?? null).toBe(token);
      // The gateway sends velocities without a space: it relies on this default.
      if (token)
        expect(xml).toMatch(
          /DefaultContinuousPanTiltVelocitySpace>http:\/\/www\.onvif\.org\/ver10\/tptz\/PanTiltSpaces\/VelocityGenericSpace</,
        );
    },
  );

  it.each<[string, string]>([
    ['ENP1A14-IR_25X', 'http://192.168.1.182/onvif/PTZ'],
    ['IPD-H4K8M05-BS', 'http://192.168.15.40:8999/onvif/ptz_service'],
    ['IPG-8150PSS', 'http://10.200.1.2/onvif/ptz_service'],
    ['SUNBA', 'http://162.191.54.181:80/onvif/ptz'],
  ])('%s: the PTZ service address from GetCapabilities (and GetServices where it lists one)', async (camera, url) => {
    const caps = capture(`${camera}/device_management/GetCapabilitiesResponse.xml`);
    if (!caps) return;
    expect(readCapabilities(await body(caps)).ptz).toBe(url);
    const services = capture(`${camera}/device_management/GetServicesResponse.xml`);
    if (services) expect(readServices(await body(services)).ptz).toMatch(/^http:\/\/.+\/onvif\/(PTZ|ptz|ptz_service)$/);
  });
});

describe('PTZ reader fuzz', () => {
  const rng = makeRng();
  const samples: Array<[string, string, (b: Body) => unknown]> = [
    ['nodes', R.ptzNodes({ fov: true, homeSupported: true }), readNodes],
    ['options', R.ptzConfigurationOptions({ fov: true }), readConfigurationOptions],
    ['configurations', R.ptzConfigurations(), readConfigurations],
    [
      'presets',
      R.ptzPresets([
        { token: '1', name: 'a', position: { pan: 0, tilt: 0, zoom: 0 } },
        { token: '2', name: 'b', position: { pan: 1, tilt: -1, zoom: 0.5 } },
      ]),
      readPresets,
    ],
    ['set preset', R.ptzSetPreset('9'), readSetPreset],
  ];
  const alphabet = '<>/="\' :tptzPresetTokenNameMinMaxXRangeURI01.-e&;';

  it(`mutated answers give a value or a fault of the call, never another throw (seed ${rng.seed})`, async () => {
    for (let i = 0; i < 600; i++) {
      const [name, sample, read] = rng.pick(samples);
      const xml = mutate(rng, sample, alphabet);
      let b: Body;
      try {
        b = await parseSoapBody(xml);
      } catch {
        continue; // refusing a broken document is the parser's job
      }
      const context = `seed ${rng.seed}, iteration ${i}, ${name}: ${xml}`;
      try {
        const value = read(b);
        if (Array.isArray(value)) for (const item of value as unknown[]) expect(typeof item, context).toBe('object');
      } catch (err) {
        expect(err, context).toBeInstanceOf(CameraFaultError);
      }
    }
  });
});
