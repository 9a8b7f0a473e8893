import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  buildBye,
  buildHello,
  buildProbe,
  buildProbeMatch,
  isOnvifCamera,
  MAX_XADDRS,
  parseDiscoveryMessage,
  parseDiscoveryMessages,
  parseProbe,
  typesMatch,
  type DiscoveryMessage,
} from '../../../src/onvif/discovery/messages.js';
import { aliasOf, deviceIdFrom } from '../../../src/domain/device-alias.js';
import { makeRng, mutate } from '../../support/fuzz.js';

// The captures live next to the repository (../shared), not in it.
const CAPTURES = path.resolve(import.meta.dirname, '../../../../shared/onvif-captures');
const CAPTURE = path.join(CAPTURES, '2BAD-onvif/dvc/dcn-bf5365/discovery.ProbeMatches.xml');
const haveCapture = existsSync(CAPTURE);
if (!haveCapture)
  console.warn(
    `skipping the real-capture test: ${CAPTURE} is absent (the shared captures folder is not checked out next to the repository)`,
  );

const EP = 'urn:uuid:6f1c2e8a-2b7d-4c1e-9a55-0a1b2c3d4e5f';
const WSD = 'http://schemas.xmlsoap.org/ws/2005/04/discovery';

const camera = {
  messageId: 'urn:uuid:11111111-2222-4333-8444-555555555555',
  endpoint: EP,
  scopes: ['onvif://www.onvif.org/type/video_encoder', 'onvif://www.onvif.org/name/Front%20door'],
  xaddrs: ['http://127.0.0.21:8080/onvif/device_service', 'http://[fe80::1]/onvif/device_service'],
  metadataVersion: 7,
  appSequence: { instanceId: 1700000000, messageNumber: 3 },
};

/** A document in the shape real firmware writes (prefixes and layout differ from our builders). */
function foreignMessage(body: string, opts: { action?: string; ns?: string } = {}): string {
  return `<?xml version="1.0" encoding="UTF-8"?>
<env:Envelope xmlns:env="http://www.w3.org/2003/05/soap-envelope" xmlns:wsa="http://schemas.xmlsoap.org/ws/2004/08/addressing" xmlns:wsdd="${opts.ns ?? WSD}" xmlns:dn="http://www.onvif.org/ver10/network/wsdl">
  <env:Header>
    <wsa:MessageID>urn:uuid:aaaaaaaa-0000-4000-8000-000000000001</wsa:MessageID>
    <wsa:RelatesTo>urn:uuid:bbbbbbbb-0000-4000-8000-000000000002</wsa:RelatesTo>
    <wsa:Action>${opts.action ?? `${WSD}/ProbeMatches`}</wsa:Action>
  </env:Header>
  <env:Body>
    ${body}
  </env:Body>
</env:Envelope>`;
}

function match(endpoint: string, types: string, xaddrs = 'http://10.0.0.9/onvif/device_service'): string {
  return `<wsdd:ProbeMatch><wsa:EndpointReference><wsa:Address>${endpoint}</wsa:Address></wsa:EndpointReference>
    <wsdd:Types>${types}</wsdd:Types><wsdd:Scopes MatchBy="x">onvif://www.onvif.org/Profile/Streaming</wsdd:Scopes>
    <wsdd:XAddrs>${xaddrs}</wsdd:XAddrs><wsdd:MetadataVersion>2</wsdd:MetadataVersion></wsdd:ProbeMatch>`;
}

describe('Probe', () => {
  it('builds a Probe for NetworkVideoTransmitter that parses back with its MessageID', async () => {
    const xml = buildProbe('urn:uuid:12345678-1234-4123-8123-123456789abc');
    expect(await parseProbe(xml)).toEqual({
      messageId: 'urn:uuid:12345678-1234-4123-8123-123456789abc',
      types: ['dn:NetworkVideoTransmitter'],
      scopes: [],
    });
    // A Probe is a question, not something discovery acts on.
    expect(await parseDiscoveryMessage(xml)).toBeNull();
  });

  it('escapes what it is given', async () => {
    const probe = await parseProbe(buildProbe('urn:x:<&>"\''));
    expect(probe?.messageId).toBe('urn:x:<&>"\'');
  });

  it('matches types by local name; an empty Probe matches everything', () => {
    expect(typesMatch(['dn:NetworkVideoTransmitter'], ['tdn:NetworkVideoTransmitter', 'tds:Device'])).toBe(true);
    expect(typesMatch([], ['tds:Device'])).toBe(true);
    expect(typesMatch(['dn:NetworkVideoTransmitter', 'tds:Device'], ['tds:Device'])).toBe(false);
    expect(typesMatch(['prn:PrintDeviceType'], ['dn:NetworkVideoTransmitter'])).toBe(false);
  });
});

describe('round trips', () => {
  it('ProbeMatch', async () => {
    const xml = buildProbeMatch({ ...camera, relatesTo: 'urn:uuid:99999999-9999-4999-8999-999999999999' });
    expect(await parseDiscoveryMessages(xml)).toEqual<DiscoveryMessage[]>([
      {
        kind: 'probeMatch',
        messageId: camera.messageId,
        relatesTo: 'urn:uuid:99999999-9999-4999-8999-999999999999',
        endpoint: EP,
        types: ['dn:NetworkVideoTransmitter', 'tds:Device'],
        scopes: camera.scopes,
        xaddrs: camera.xaddrs,
        metadataVersion: 7,
        appSequence: camera.appSequence,
      },
    ]);
  });

  it('Hello', async () => {
    const m = await parseDiscoveryMessage(buildHello(camera));
    expect(m).toMatchObject({
      kind: 'hello',
      relatesTo: null,
      endpoint: EP,
      scopes: camera.scopes,
      xaddrs: camera.xaddrs,
      metadataVersion: 7,
    });
  });

  it('Bye', async () => {
    const m = await parseDiscoveryMessage(buildBye({ messageId: camera.messageId, endpoint: EP }));
    expect(m).toMatchObject({ kind: 'bye', endpoint: EP, xaddrs: [], scopes: [], metadataVersion: null });
  });

  it('builders refuse list entries that would split into several', () => {
    expect(() => buildHello({ ...camera, scopes: ['two words'] })).toThrow(TypeError);
    expect(() => buildHello({ ...camera, xaddrs: [''] })).toThrow(TypeError);
  });
});

describe.skipIf(!haveCapture)('real capture', () => {
  it('a DCN-BF5365 ProbeMatches gives its endpoint, both XAddrs and its scopes', async () => {
    const xml = readFileSync(CAPTURE, 'utf8');
    const [m, ...rest] = (await parseDiscoveryMessages(xml)) ?? [];
    expect(rest).toEqual([]);
    expect(m?.kind).toBe('probeMatch');
    expect(m?.endpoint).toBe('urn:uuid:00000000-0000-4000-8000-000000000011');
    expect(m?.relatesTo).toBe('urn:uuid:00000000-0000-4000-8000-000000000012');
    expect(m?.xaddrs).toEqual([
      'http://192.0.2.14:80/onvif/device_service',
      'http://[fe80::a]:80/onvif/device_service',
    ]);
    expect(m?.scopes).toContain('onvif://www.onvif.org/hardware/DCN-BF5365');
    expect(m?.scopes).toContain('onvif://www.onvif.org/Profile/Streaming');
    expect(m?.scopes).toContain('onvif://www.onvif.org/Profile/G');
    expect(m?.scopes.every((s) => s.length > 0 && !/\s/.test(s))).toBe(true);
    expect(m?.metadataVersion).toBe(10);
    expect(isOnvifCamera(m?.types ?? [])).toBe(true);
  });
});

describe('what firmware sends', () => {
  it('gives one message per camera ProbeMatch and drops the others', async () => {
    const body = `<wsdd:ProbeMatches>${match('urn:uuid:AAAAAAAA-0000-4000-8000-000000000001', 'dn:NetworkVideoTransmitter')}${match('urn:uuid:aaaaaaaa-0000-4000-8000-000000000002', 'wsdp:Device prn:PrintDeviceType')}${match('uuid:aaaaaaaa-0000-4000-8000-000000000003', 'tds:Device NetworkVideoTransmitter')}</wsdd:ProbeMatches>`;
    const ms = await parseDiscoveryMessages(foreignMessage(body));
    expect(ms?.map((m) => m.endpoint)).toEqual([
      'urn:uuid:AAAAAAAA-0000-4000-8000-000000000001',
      'uuid:aaaaaaaa-0000-4000-8000-000000000003',
    ]);
    expect(ms?.[0]?.scopes).toEqual(['onvif://www.onvif.org/Profile/Streaming']);
    expect(ms?.[0]?.relatesTo).toBe('urn:uuid:bbbbbbbb-0000-4000-8000-000000000002');
    expect(ms?.[0]?.messageId).toBe('urn:uuid:aaaaaaaa-0000-4000-8000-000000000001');
  });

  it('keeps only http(s) XAddrs, at most MAX_XADDRS of them', async () => {
    const many = Array.from({ length: 40 }, (_, i) => `http://10.0.0.${i}/onvif/device_service`).join(' ');
    const ms = await parseDiscoveryMessages(
      foreignMessage(
        `<wsdd:ProbeMatches>${match(EP, 'dn:NetworkVideoTransmitter', `ftp://x/ javascript:alert(1) not-a-url https://10.0.0.9/onvif ${many}`)}</wsdd:ProbeMatches>`,
      ),
    );
    expect(ms?.[0]?.xaddrs[0]).toBe('https://10.0.0.9/onvif');
    expect(ms?.[0]?.xaddrs).toHaveLength(MAX_XADDRS);
  });

  it('accepts the discovery namespace as a default namespace', async () => {
    const xml = foreignMessage(
      `<Hello xmlns="${WSD}"><EndpointReference xmlns="http://schemas.xmlsoap.org/ws/2004/08/addressing"><Address>${EP}</Address></EndpointReference><Types>dn:NetworkVideoTransmitter</Types></Hello>`,
      { action: `${WSD}/Hello` },
    );
    expect((await parseDiscoveryMessage(xml))?.kind).toBe('hello');
  });

  it('accepts a message without a Header', async () => {
    const xml = buildHello(camera).replace(/<s:Header>.*<\/s:Header>/, '');
    expect(await parseDiscoveryMessage(xml)).toMatchObject({ kind: 'hello', messageId: null, appSequence: null });
  });

  it('accepts a Bye without Types', async () => {
    const xml = foreignMessage(
      `<wsdd:Bye><wsa:EndpointReference><wsa:Address>${EP}</wsa:Address></wsa:EndpointReference></wsdd:Bye>`,
      { action: `${WSD}/Bye` },
    );
    expect(await parseDiscoveryMessage(xml)).toMatchObject({ kind: 'bye', endpoint: EP, types: [] });
  });
});

describe('refusals (null, never a throw)', () => {
  const valid = buildProbeMatch({ ...camera, relatesTo: 'urn:uuid:99999999-9999-4999-8999-999999999999' });
  const cases: [string, string][] = [
    ['empty', ''],
    ['not XML', 'hello camera'],
    ['JSON', '{"probeMatches": []}'],
    ['unclosed', '<s:Envelope><s:Body><d:Hello>'],
    ['mismatched tags', '<a><b></a></b>'],
    ['truncated', valid.slice(0, valid.length / 2)],
    ['no Body', '<s:Envelope xmlns:s="http://www.w3.org/2003/05/soap-envelope"><s:Header/></s:Envelope>'],
    [
      'SOAP Fault',
      `<s:Envelope xmlns:s="http://www.w3.org/2003/05/soap-envelope"><s:Body><s:Fault><s:Reason><s:Text>no</s:Text></s:Reason></s:Fault></s:Body></s:Envelope>`,
    ],
    [
      'billion laughs',
      `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]>${valid.replace('<?xml version="1.0" encoding="UTF-8"?>', '').replace('Streaming', '&lol2;')}`,
    ],
    [
      'external entity',
      `<!DOCTYPE x [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>${valid.replace('<?xml version="1.0" encoding="UTF-8"?>', '').replace(EP, '&xxe;')}`,
    ],
    ['DTD only', valid.replace('?>', '?><!DOCTYPE Envelope>')],
    ['undeclared entity', valid.replace(EP, '&xxe;')],
    ['over the size cap', valid.replace('</d:Scopes>', ` ${'onvif://www.onvif.org/x '.repeat(2000)}</d:Scopes>`)],
    ['hundreds of namespace declarations', valid.replace('</d:Scopes>', ` ${'xmlns'.repeat(2000)}</d:Scopes>`)],
    ['huge', valid.replace('</d:Scopes>', ` ${'x'.repeat(2 * 1024 * 1024)}</d:Scopes>`)],
    ['WS-Discovery 1.1 namespace', valid.replaceAll(WSD, 'http://docs.oasis-open.org/ws-dd/ns/discovery/2009/01')],
    ['discovery prefix bound to another namespace', valid.replace(`xmlns:d="${WSD}"`, 'xmlns:d="urn:example:other"')],
    ['undeclared prefix', valid.replace(`xmlns:d="${WSD}"`, '')],
    [
      'prefix bound twice, differently',
      valid.replace('<d:ProbeMatch>', '<d:ProbeMatch xmlns:x="a"><x:y xmlns:d="urn:example:other"/>'),
    ],
    ['Action of another message', valid.replace(`${WSD}/ProbeMatches`, `${WSD}/Hello`)],
    [
      'a printer',
      valid.replace(
        '<d:Types>dn:NetworkVideoTransmitter tds:Device</d:Types>',
        '<d:Types>wsdp:Device prn:PrintDeviceType</d:Types>',
      ),
    ],
    ['no Types', valid.replace('<d:Types>dn:NetworkVideoTransmitter tds:Device</d:Types>', '')],
    ['Bye of a printer', buildBye({ messageId: 'urn:uuid:1', endpoint: EP, types: ['prn:PrintDeviceType'] })],
    ['no endpoint', valid.replace(/<a:EndpointReference>.*<\/a:EndpointReference>/, '')],
    ['empty endpoint', valid.replace(EP, '  ')],
    ['endpoint with whitespace', valid.replace(EP, 'urn:a b')],
    ['a Resolve', valid.replaceAll('ProbeMatches', 'Resolve').replace(/<d:ProbeMatch>.*<\/d:ProbeMatch>/, '')],
    [
      'an ONVIF response',
      `<s:Envelope xmlns:s="http://www.w3.org/2003/05/soap-envelope" xmlns:tds="http://www.onvif.org/ver10/device/wsdl"><s:Body><tds:GetDeviceInformationResponse><tds:SerialNumber>1</tds:SerialNumber></tds:GetDeviceInformationResponse></s:Body></s:Envelope>`,
    ],
    [
      '__proto__ elements',
      valid
        .replace('<d:ProbeMatch>', '<d:ProbeMatch><__proto__><polluted>1</polluted></__proto__>')
        .replace(/<a:EndpointReference>.*<\/a:EndpointReference>/, '<__proto__/>'),
    ],
  ];
  it.each(cases)('%s', async (_name, xml) => {
    await expect(parseDiscoveryMessages(xml)).resolves.toBeNull();
    await expect(parseProbe(xml)).resolves.toBeNull();
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('a Probe without a MessageID cannot be answered', async () => {
    await expect(parseProbe(buildProbe('x').replace('<a:MessageID>x</a:MessageID>', ''))).resolves.toBeNull();
  });

  it('non-string input', async () => {
    for (const v of [undefined, null, 42, {}, Buffer.from('<a/>')])
      await expect(parseDiscoveryMessages(v)).resolves.toBeNull();
  });
});

describe('device id of a discovered camera', () => {
  // The rest of deviceIdFrom is tested in test/domain/device-alias.test.ts.
  it('depends on the endpoint only, not on XAddrs (a DHCP move keeps the id)', async () => {
    const before = await parseDiscoveryMessage(
      buildHello({ ...camera, xaddrs: ['http://192.168.1.20/onvif/device_service'] }),
    );
    const after = await parseDiscoveryMessage(
      buildHello({
        ...camera,
        endpoint: EP.toUpperCase().replace('URN:UUID:', 'urn:uuid:'),
        xaddrs: ['http://192.168.1.77:8000/onvif/device_service'],
      }),
    );
    const [a, b] = [aliasOf.endpoint(before?.endpoint ?? ''), aliasOf.endpoint(after?.endpoint ?? '')];
    expect(a && b).toBeTruthy();
    if (a && b) expect(deviceIdFrom(a)).toBe(deviceIdFrom(b));
  });
});

it('isOnvifCamera accepts NetworkVideoTransmitter under any prefix', () => {
  expect(isOnvifCamera(['dn:NetworkVideoTransmitter'])).toBe(true);
  expect(isOnvifCamera(['tds:Device', 'tdn:NetworkVideoTransmitter'])).toBe(true);
  expect(isOnvifCamera(['NetworkVideoTransmitter'])).toBe(true);
  expect(isOnvifCamera(['tds:Device'])).toBe(false);
  expect(isOnvifCamera(['dn:NetworkVideoTransmitterX', 'NetworkVideo'])).toBe(false);
  expect(isOnvifCamera([])).toBe(false);
});

describe('fuzz', () => {
  const rng = makeRng();
  const samples = [
    buildProbeMatch({ ...camera, relatesTo: 'urn:uuid:99999999-9999-4999-8999-999999999999' }),
    buildHello(camera),
    buildBye({ messageId: camera.messageId, endpoint: EP }),
    buildProbe(camera.messageId),
    ...(haveCapture ? [readFileSync(CAPTURE, 'utf8')] : []),
  ];
  const alphabet = '<>/:="\' &;!?[]-_abcdeXYZ0123456789\n\u00e9\u0000';

  it(`mutated discovery messages never throw and give well-formed results (seed ${rng.seed}, replay with FUZZ_SEED)`, async () => {
    let accepted = 0;
    for (let i = 0; i < 1500; i++) {
      const input = i % 10 === 0 ? rng.bytes(512).toString('latin1') : mutate(rng, rng.pick(samples), alphabet);
      const ms = await parseDiscoveryMessages(input);
      if (ms !== null) {
        accepted++;
        expect(ms.length).toBeGreaterThan(0);
        for (const m of ms) {
          expect(['probeMatch', 'hello', 'bye']).toContain(m.kind);
          expect(m.endpoint).toMatch(/^\S+$/);
          expect(m.kind === 'bye' || isOnvifCamera(m.types)).toBe(true);
          for (const list of [m.types, m.scopes, m.xaddrs]) for (const t of list) expect(t).toMatch(/^\S+$/);
          for (const x of m.xaddrs) expect(['http:', 'https:']).toContain(new URL(x).protocol);
        }
      }
      const probe = await parseProbe(input);
      if (probe !== null) expect(probe.messageId.length).toBeGreaterThan(0);
      const endpoint = ms?.[0]?.endpoint ?? input.slice(0, 200);
      const alias = aliasOf.endpoint(endpoint) ?? aliasOf.serial(null, rng.int(2) ? null : rng.string(20));
      if (alias) expect(deviceIdFrom(alias)).toMatch(/^dev_[A-Za-z0-9_-]{24}$/);
    }
    // Mutations are small, so many inputs stay valid: the checks above were exercised.
    expect(accepted).toBeGreaterThan(0);
  });
});
