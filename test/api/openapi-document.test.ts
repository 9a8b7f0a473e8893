import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  BaseResolver,
  createConfig,
  lintFromString,
  ResolveError,
  type NormalizedProblem,
  type Source,
} from '@redocly/openapi-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { finishOpenApiDocument } from '../../src/api/openapi-document.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import type { RequestOptions } from '../support/https.js';

// The OpenAPI document is what client generators and API tools read first (docs/api.md, "The
// OpenAPI document"): the one the running gateway serves must pass Redocly's recommended rules, no
// rule turned off, and the error statuses it declares must be the ones the gateway answers.

/** Refuses every document besides the one linted: the lint never reaches the network or the disk. */
class OfflineResolver extends BaseResolver {
  readonly attempted: string[] = [];
  override async loadExternalRef(absoluteRef: string): Promise<Source> {
    this.attempted.push(absoluteRef);
    throw new ResolveError(new Error(`external reference ${absoluteRef} refused: the document must stand alone`));
  }
}

const describeProblem = (p: NormalizedProblem): string =>
  `${p.severity} ${p.ruleId}: ${p.message} at ${p.location.map((l) => l.pointer ?? '').join(', ')}`;

interface Response {
  description: string;
  content?: Record<string, { schema?: { $ref?: string } }>;
}
interface Operation {
  operationId?: string;
  responses: Record<string, Response>;
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, { properties?: { error?: { enum?: string[] } } }> };
}

let t: TestGateway;
let text: string;
let doc: Document;
beforeAll(async () => {
  t = await startTestGateway();
  const res = await t.request('/v1/openapi.json');
  expect(res.status).toBe(200);
  text = res.text;
  doc = JSON.parse(text) as Document;
  // An offline camera (409 on control) and a recording whose file is there (416 on a range past its end).
  const store = t.gw.store;
  store.upsertDevice({
    id: 'cam-off',
    name: 'Porch',
    type: 'camera',
    status: 'offline',
    model: null,
    manufacturer: null,
    firmwareVersion: null,
    lastSeenAt: null,
  });
  mkdirSync(path.join(t.dataDir, 'recordings', 'cam-off'), { recursive: true });
  writeFileSync(path.join(t.dataDir, 'recordings', 'cam-off', 'rec-1.mp4'), Buffer.alloc(1000));
  store.insertRecording({
    id: 'rec-1',
    deviceId: 'cam-off',
    eventType: 'motion',
    startedAt: Date.UTC(2026, 10, 1),
    endedAt: Date.UTC(2026, 10, 1, 0, 0, 10),
    sizeBytes: 1000,
    fileName: 'cam-off/rec-1.mp4',
    alertId: null,
  });
});
afterAll(() => t.stop());

describe('GET /v1/openapi.json', () => {
  it('is clean under Redocly recommended rules: no error, no warning, nothing fetched', async () => {
    const resolver = new OfflineResolver();
    const config = await createConfig({ extends: ['recommended'] });
    const problems = await lintFromString({
      source: text,
      absoluteRef: 'openapi.json',
      config,
      externalRefResolver: resolver,
    });
    const lines = problems.map(describeProblem);
    expect(lines, `Redocly recommended found:\n${lines.join('\n')}`).toEqual([]);
    expect(resolver.attempted).toEqual([]);
  });

  it('names its types, for generated clients', async () => {
    const schemas = (JSON.parse(text) as { components: { schemas: Record<string, unknown> } }).components.schemas;
    expect(Object.keys(schemas)).toEqual(
      expect.arrayContaining([
        'ErrorBody',
        'Device',
        'DevicePage',
        'Recording',
        'RecordingPage',
        'Alert',
        'AlertPage',
        'ControlResult',
        'StreamAddress',
      ]),
    );
    expect(doc.paths['/v1/devices']?.get?.responses['200']?.content?.['application/json']?.schema).toEqual({
      $ref: '#/components/schemas/DevicePage',
    });
    expect(doc.paths['/v1/devices/{device_id}']?.get?.responses['404']?.content?.['application/json']?.schema).toEqual({
      $ref: '#/components/schemas/ErrorBody',
    });
    // Every JSON body of the resource API and the token endpoint is a named type (the document itself is any JSON).
    const unnamed: string[] = [];
    for (const [route, item] of Object.entries(doc.paths)) {
      if (!route.startsWith('/v1/') && !route.startsWith('/oauth/')) continue;
      for (const [method, operation] of Object.entries(item)) {
        if (operation.operationId === 'getOpenApiDocument') continue;
        for (const [status, response] of Object.entries(operation.responses)) {
          const json = response.content?.['application/json'];
          if (json && json.schema?.$ref === undefined) unnamed.push(`${method} ${route} ${status}`);
        }
      }
    }
    expect(unnamed).toEqual([]);
  });

  it('marks a body required only where the gateway needs one', () => {
    const bodyOf = (route: string) =>
      (doc.paths[route]?.post as { requestBody?: { required?: boolean } } | undefined)?.requestBody;
    expect(bodyOf('/v1/alerts/{alert_id}/read')?.required).toBe(false);
    expect(bodyOf('/v1/devices/{device_id}/control')?.required).toBe(true);
  });

  it('describes the live view under /live like the rest: WHEP with SDP bodies, LL-HLS with playlists and fMP4 (docs/live.md)', () => {
    const types = (route: string, method: string) =>
      Object.keys(
        doc.paths[route]?.[method]?.responses['200']?.content ??
          doc.paths[route]?.[method]?.responses['201']?.content ??
          {},
      );
    expect(types('/live/{ticket}/whep', 'post')).toEqual(['application/sdp']);
    expect(types('/live/{ticket}/index.m3u8', 'get')).toEqual(['application/vnd.apple.mpegurl']);
    expect(types('/live/{ticket}/{session}/{file}', 'get')).toEqual(['application/vnd.apple.mpegurl', 'video/mp4']);
  });
});

/** A bad request to one operation and the status the gateway answers it with. */
interface Probe {
  operationId: string;
  what: string;
  path: string;
  options?: RequestOptions | (() => Promise<RequestOptions>);
  status: number;
}

const withScope =
  (scope: string, options: RequestOptions = {}) =>
  async (): Promise<RequestOptions> => ({ ...options, headers: { ...options.headers, ...(await t.auth(scope)) } });
const hugeHeader = { headers: { 'x-padding': 'a'.repeat(20_000) } };
const form = (fields: Record<string, string>): RequestOptions => ({
  method: 'POST',
  body: new URLSearchParams(fields).toString(),
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
});

const PROBES: Probe[] = [
  {
    operationId: 'listDevices',
    what: 'limit out of range',
    path: '/v1/devices?limit=0',
    options: withScope('devices:read'),
    status: 400,
  },
  { operationId: 'listDevices', what: 'no token', path: '/v1/devices', status: 401 },
  {
    operationId: 'listDevices',
    what: 'a forged token',
    path: '/v1/devices',
    options: { headers: { authorization: 'Bearer eyJhbGciOiJFUzI1NiJ9.e30.c2ln' } },
    status: 401,
  },
  {
    operationId: 'listDevices',
    what: 'another scope',
    path: '/v1/devices',
    options: withScope('alerts:read'),
    status: 403,
  },
  {
    operationId: 'listDevices',
    what: 'a header section over 16 KiB',
    path: '/v1/devices',
    options: withScope('devices:read', hugeHeader),
    status: 431,
  },
  {
    operationId: 'getDevice',
    what: 'unknown id',
    path: '/v1/devices/nope',
    options: withScope('devices:read'),
    status: 404,
  },
  {
    operationId: 'controlDevice',
    what: 'unknown action',
    path: '/v1/devices/cam-off/control',
    options: withScope('devices:write', { method: 'POST', body: { action: 'explode' } }),
    status: 400,
  },
  {
    operationId: 'controlDevice',
    what: 'an offline camera',
    path: '/v1/devices/cam-off/control',
    options: withScope('devices:write', { method: 'POST', body: { action: 'reboot' } }),
    status: 409,
  },
  {
    operationId: 'addDevice',
    what: 'an address with a scheme',
    path: '/v1/devices',
    options: withScope('devices:write', {
      method: 'POST',
      body: { address: 'http://10.0.0.5', username: 'a', password: 'b' },
    }),
    status: 400,
  },
  {
    operationId: 'addDevice',
    what: 'a viewer',
    path: '/v1/devices',
    options: withScope('devices:read', { method: 'POST', body: { address: '10.0.0.5', username: 'a', password: 'b' } }),
    status: 403,
  },
  {
    operationId: 'updateDevice',
    what: 'crossing edges',
    path: '/v1/devices/cam-off',
    options: withScope('devices:write', {
      method: 'PATCH',
      body: {
        motion_mask: [
          [
            [0, 0],
            [1, 1],
            [1, 0],
            [0, 0.5],
          ],
        ],
      },
    }),
    status: 400,
  },
  {
    operationId: 'updateDevice',
    what: 'continuous recording on a gateway without it',
    path: '/v1/devices/cam-off',
    options: withScope('devices:write', { method: 'PATCH', body: { recording: 'continuous' } }),
    status: 409,
  },
  {
    operationId: 'updateDevice',
    what: 'unknown id',
    path: '/v1/devices/nope',
    options: withScope('devices:write', { method: 'PATCH', body: { enabled: false } }),
    status: 404,
  },
  {
    operationId: 'removeDevice',
    what: 'unknown id',
    path: '/v1/devices/nope',
    options: withScope('devices:write', { method: 'DELETE' }),
    status: 404,
  },
  {
    operationId: 'getDeviceStream',
    what: 'unknown profile',
    path: '/v1/devices/cam-off/stream?profile=huge',
    options: withScope('devices:read'),
    status: 400,
  },
  {
    operationId: 'getDeviceStream',
    what: 'an offline camera',
    path: '/v1/devices/cam-off/stream',
    options: withScope('devices:read'),
    status: 409,
  },
  {
    operationId: 'listDeviceRecordings',
    what: 'start after end',
    path: '/v1/devices/cam-off/recordings?start_date=2026-11-02&end_date=2026-11-01',
    options: withScope('recordings:read'),
    status: 400,
  },
  {
    operationId: 'listDeviceRecordings',
    what: 'unknown device',
    path: '/v1/devices/nope/recordings',
    options: withScope('recordings:read'),
    status: 404,
  },
  {
    operationId: 'getRecording',
    what: 'malformed id',
    path: '/v1/recordings/a%20b',
    options: withScope('recordings:read'),
    status: 400,
  },
  {
    operationId: 'downloadRecording',
    what: 'a range past the end',
    path: '/v1/recordings/rec-1/download',
    options: withScope('recordings:write', { headers: { range: 'bytes=5000-' } }),
    status: 416,
  },
  {
    operationId: 'downloadRecordingHead',
    what: 'unknown id',
    path: '/v1/recordings/nope/download',
    options: withScope('recordings:write', { method: 'HEAD' }),
    status: 404,
  },
  { operationId: 'playRecording', what: 'no ticket', path: '/v1/recordings/rec-1/play', status: 400 },
  {
    operationId: 'playRecording',
    what: 'a forged ticket',
    path: '/v1/recordings/rec-1/play?ticket=AQAAAAAAAAByZWMtMQ.AAAAAAAAAAAAAAAAAAAAAA',
    status: 403,
  },
  {
    operationId: 'playRecordingHead',
    what: 'a malformed ticket',
    path: '/v1/recordings/rec-1/play?ticket=x',
    options: { method: 'HEAD' },
    status: 403,
  },
  {
    operationId: 'getRecordingThumbnail',
    what: 'a clip without one',
    path: '/v1/recordings/rec-1/thumbnail',
    options: withScope('recordings:read'),
    status: 404,
  },
  {
    operationId: 'listAlerts',
    what: 'unread=yes',
    path: '/v1/alerts?unread=yes',
    options: withScope('alerts:read'),
    status: 400,
  },
  {
    operationId: 'markAlertRead',
    what: 'a body field',
    path: '/v1/alerts/nope/read',
    options: withScope('alerts:write', { method: 'POST', body: { read: true } }),
    status: 400,
  },
  {
    operationId: 'markAlertRead',
    what: 'unknown id',
    path: '/v1/alerts/nope/read',
    options: withScope('alerts:write', { method: 'POST' }),
    status: 404,
  },
  {
    operationId: 'streamEvents',
    what: 'none of the read scopes',
    path: '/v1/events',
    options: withScope('alerts:write'),
    status: 403,
  },
  {
    operationId: 'streamEvents',
    what: 'a Last-Event-ID that is no id',
    path: '/v1/events',
    options: withScope('alerts:read', { headers: { 'last-event-id': 'abc' } }),
    status: 400,
  },
  { operationId: 'getOpenApiDocument', what: 'a query parameter', path: '/v1/openapi.json?format=yaml', status: 400 },
  {
    operationId: 'getHealth',
    what: 'a header section over 16 KiB',
    path: '/healthz',
    options: hugeHeader,
    status: 431,
  },
  {
    operationId: 'getJwks',
    what: 'a header section over 16 KiB',
    path: '/.well-known/jwks.json',
    options: hugeHeader,
    status: 431,
  },
  {
    operationId: 'getAuthorizationServerMetadata',
    what: 'a header section over 16 KiB',
    path: '/.well-known/oauth-authorization-server',
    options: hugeHeader,
    status: 431,
  },
  {
    operationId: 'requestToken',
    what: 'no grant_type',
    path: '/oauth/token',
    options: form({ client_id: 'nobody' }),
    status: 400,
  },
  {
    operationId: 'requestToken',
    what: 'an unknown client',
    path: '/oauth/token',
    options: form({ grant_type: 'client_credentials', client_id: 'nobody', client_secret: 'x' }),
    status: 401,
  },
  { operationId: 'getAuthorizationPage', what: 'no parameters', path: '/oauth/authorize', status: 400 },
  {
    operationId: 'submitAuthorizationForm',
    what: 'no CSRF cookie',
    path: '/oauth/authorize',
    options: form({ action: 'login', username: 'a', password: 'b' }),
    status: 403,
  },
  {
    operationId: 'revokeToken',
    what: 'no token',
    path: '/oauth/revoke',
    options: form({ client_id: 'gateway-web' }),
    status: 400,
  },
  {
    operationId: 'revokeToken',
    what: 'an unknown client',
    path: '/oauth/revoke',
    options: form({ client_id: 'nobody', token: 'x' }),
    status: 401,
  },
  {
    operationId: 'getDeviceSnapshot',
    what: 'width out of range',
    path: '/v1/devices/cam-off/snapshot?width=10',
    options: withScope('devices:read'),
    status: 400,
  },
  {
    operationId: 'getDeviceSnapshot',
    what: 'an offline camera',
    path: '/v1/devices/cam-off/snapshot',
    options: withScope('devices:read'),
    status: 409,
  },
  {
    operationId: 'getDeviceSnapshot',
    what: 'unknown device',
    path: '/v1/devices/nope/snapshot',
    options: withScope('devices:read'),
    status: 404,
  },
  {
    operationId: 'getSystemStatus',
    what: "a viewer's token",
    path: '/v1/system',
    options: withScope('devices:read'),
    status: 403,
  },
  {
    operationId: 'subscribePush',
    what: 'an http endpoint',
    path: '/v1/push/subscriptions',
    options: withScope('alerts:read', {
      method: 'POST',
      body: { endpoint: 'http://fcm.googleapis.com/fcm/send/x', keys: { p256dh: 'x', auth: 'y' } },
    }),
    status: 400,
  },
  {
    operationId: 'listPushSubscriptions',
    what: 'another scope',
    path: '/v1/push/subscriptions',
    options: withScope('devices:read'),
    status: 403,
  },
  {
    operationId: 'getSystemStatus',
    what: 'a query parameter',
    path: '/v1/system?verbose=1',
    options: withScope('devices:write'),
    status: 400,
  },
  {
    operationId: 'getPushSubscription',
    what: 'unknown id',
    path: '/v1/push/subscriptions/nope',
    options: withScope('alerts:read'),
    status: 404,
  },
  {
    operationId: 'updatePushSubscription',
    what: 'an unknown type',
    path: '/v1/push/subscriptions/nope',
    options: withScope('alerts:read', { method: 'PATCH', body: { types: ['cat'] } }),
    status: 400,
  },
  {
    operationId: 'testPushSubscription',
    what: 'unknown id',
    path: '/v1/push/subscriptions/nope/test',
    options: withScope('alerts:read', { method: 'POST' }),
    status: 404,
  },
  { operationId: 'startHlsSession', what: 'a malformed ticket', path: '/live/not-a-ticket/index.m3u8', status: 404 },
  {
    operationId: 'getHlsSessionFile',
    what: 'an unknown session',
    path: `/live/not-a-ticket/${'A'.repeat(22)}/index.m3u8`,
    status: 404,
  },
  {
    operationId: 'getHlsSessionFile',
    what: 'a repeated _HLS_msn',
    path: `/live/not-a-ticket/${'A'.repeat(22)}/index.m3u8?_HLS_msn=1&_HLS_msn=2`,
    status: 400,
  },
  {
    operationId: 'startWhepSession',
    what: 'a JSON body',
    path: '/live/not-a-ticket/whep',
    options: { method: 'POST', body: { sdp: 'v=0' } },
    status: 415,
  },
  {
    operationId: 'endWhepSession',
    what: 'an unknown session',
    path: '/live/not-a-ticket/whep/nope',
    options: { method: 'DELETE' },
    status: 404,
  },
];

function findOperation(operationId: string): { method: string; operation: Operation } {
  for (const item of Object.values(doc.paths)) {
    for (const [method, operation] of Object.entries(item))
      if (operation.operationId === operationId) return { method, operation };
  }
  throw new Error(`no operation ${operationId} in the document`);
}

describe('the error statuses the document declares', () => {
  it.each(PROBES)('$operationId, $what: $status is declared, in the declared media type and body', async (probe) => {
    const { method, operation } = findOperation(probe.operationId);
    const options = typeof probe.options === 'function' ? await probe.options() : (probe.options ?? {});
    expect(options.method ?? 'GET').toBe(method.toUpperCase());
    const res = await t.request(probe.path, options);
    expect(res.status, res.text).toBe(probe.status);
    const declared = operation.responses[String(res.status)];
    expect(declared, `${probe.operationId} declares ${Object.keys(operation.responses).join(', ')}`).toBeDefined();
    if (method === 'head') {
      expect(declared?.content).toBeUndefined();
      return;
    }
    const mediaType = String(res.headers['content-type']).split(';')[0] ?? '';
    const content = declared?.content?.[mediaType];
    expect(
      content,
      `${res.status} declared as ${Object.keys(declared?.content ?? {}).join(', ')}, answered ${mediaType}`,
    ).toBeDefined();
    const body = /^#\/components\/schemas\/((?:OAuth)?ErrorBody)$/.exec(content?.schema?.$ref ?? '')?.[1];
    if (body !== undefined) {
      // The code is one of the body's enum: the catalogue (ErrorBody) or RFC 6749 §5.2's (OAuthErrorBody).
      const codes = doc.components.schemas[body]?.properties?.error?.enum ?? [];
      expect(res.json()).toEqual({ error: expect.toBeOneOf(codes), error_description: expect.any(String) });
    }
  });
});

describe('finishOpenApiDocument', () => {
  const titled = (title: string, properties: object) => ({ type: 'object', title, properties });

  it('makes each titled schema a component, nested ones too, referenced where it was', () => {
    const item = titled('Item', { id: { type: 'string' } });
    const finished = finishOpenApiDocument({
      paths: {
        '/items': {
          get: {
            parameters: [{ name: 'q', in: 'query', schema: { type: 'string' } }],
            responses: {
              200: {
                description: 'ok',
                content: {
                  'application/json': { schema: titled('ItemPage', { data: { type: 'array', items: item } }) },
                },
              },
            },
          },
        },
        '/items/{id}': {
          get: {
            responses: {
              200: { description: 'ok', content: { 'application/json': { schema: structuredClone(item) } } },
            },
          },
        },
      },
    });
    expect(finished).toEqual({
      components: {
        schemas: {
          Item: item,
          ItemPage: titled('ItemPage', { data: { type: 'array', items: { $ref: '#/components/schemas/Item' } } }),
        },
      },
      paths: {
        '/items': {
          get: {
            parameters: [{ name: 'q', in: 'query', schema: { type: 'string' } }],
            responses: {
              200: {
                description: 'ok',
                content: { 'application/json': { schema: { $ref: '#/components/schemas/ItemPage' } } },
              },
            },
          },
        },
        '/items/{id}': {
          get: {
            responses: {
              200: {
                description: 'ok',
                content: { 'application/json': { schema: { $ref: '#/components/schemas/Item' } } },
              },
            },
          },
        },
      },
    });
  });

  it('refuses two different schemas with one title, and a title that cannot name a component', () => {
    const response = (schema: object) => ({
      get: { responses: { 200: { description: 'ok', content: { 'application/json': { schema } } } } },
    });
    expect(() =>
      finishOpenApiDocument({
        paths: {
          '/a': response(titled('Item', { id: { type: 'string' } })),
          '/b': response(titled('Item', { id: { type: 'integer' } })),
        },
      }),
    ).toThrow('two different schemas are titled Item');
    expect(() => finishOpenApiDocument({ paths: { '/a': response(titled('An item', {})) } })).toThrow(
      'not a valid component name',
    );
  });

  it('marks a JSON body that requires no field optional (the API reads no body as {}), and leaves the others required', () => {
    const post = (schema: object) => ({
      post: { requestBody: { required: true, content: { 'application/json': { schema } } }, responses: {} },
    });
    const finished = finishOpenApiDocument({
      paths: {
        '/read': post({ type: 'object', properties: {}, additionalProperties: false }),
        '/control': post({ type: 'object', required: ['action'], properties: { action: { type: 'string' } } }),
      },
    });
    expect(finished.paths['/read'].post.requestBody.required).toBe(false);
    expect(finished.paths['/control'].post.requestBody.required).toBe(true);
  });

  it('gives the HEAD twin of a GET its own operationId and no bodies, leaving the GET as it was', () => {
    const shared = {
      operationId: 'download',
      responses: { 200: { description: 'the file', content: { 'video/mp4': { schema: { type: 'string' } } } } },
    };
    const finished = finishOpenApiDocument({ paths: { '/f': { get: shared, head: shared } } });
    expect(finished.paths['/f'].get).toEqual({
      operationId: 'download',
      responses: { 200: { description: 'the file', content: { 'video/mp4': { schema: { type: 'string' } } } } },
    });
    expect(finished.paths['/f'].head).toEqual({
      operationId: 'downloadHead',
      responses: { 200: { description: 'the file' } },
    });
  });
});
