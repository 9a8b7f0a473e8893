import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type, { type Static } from 'typebox';
import {
  DETECTION_MODES,
  parseCameraAddress,
  RECORDING_MODES,
  SETTING_LIMITS,
  settingsProblem,
  type SettingsPatch,
} from '../../domain/camera-settings.js';
import { presentDevice } from '../../domain/present.js';
import { RTSP_URL_LIMITS } from '../../domain/rtsp-url.js';
import type { Device } from '../../domain/types.js';
import { PolygonSchema, ZoneSchema } from '../../domain/record-schemas.js';
import { subjectOf } from '../authenticate.js';
import { badRequest } from '../errors.js';
import type { DeviceSetup } from '../ports.js';
import { DeviceSchema, errorResponse, errorResponses, Id, NoBody, notFoundResponse } from '../schemas.js';

// Cameras set up from the app (admin only: devices:write): POST /v1/devices adds an ONVIF camera by
// address or a plain RTSP camera by its stream URL, PATCH /v1/devices/{id} changes its settings,
// DELETE /v1/devices/{id} removes it. Input is held to the rules the config file's cameras[] is held
// to at load (src/domain/camera-settings.ts, polygon.ts), an RTSP URL to rtsp-url.ts's; the config
// file wins for the fields it sets (409). docs/api.md, "Setting cameras up".

export interface DeviceSetupRoutesOptions {
  setup: DeviceSetup;
}

const DeviceParams = Type.Object({ device_id: Id });

// No control characters; at least one that is not a blank.
const Name = Type.String({
  minLength: 1,
  maxLength: SETTING_LIMITS.nameLength,
  pattern: '^(?=.*\\S)[^\\u0000-\\u001f\\u007f]+$',
  description: 'What the camera is called (1–100 characters)',
});
// RFC 7617: a user-id of HTTP Basic holds no colon (cameras' snapshot and RTSP logins use it).
const Username = Type.String({
  minLength: 1,
  maxLength: SETTING_LIMITS.usernameLength,
  pattern: '^[^:\\u0000-\\u001f\\u007f]+$',
  description: "The camera's account: 1–128 characters, no colon",
});
const Password = Type.String({
  maxLength: SETTING_LIMITS.passwordLength,
  pattern: '^[^\\u0000-\\u001f\\u007f]*$',
  description: 'Its password (at most 256 characters; kept sealed, never shown)',
});
const ZoneInput = Type.Object(
  {
    name: ZoneSchema.properties.name,
    polygon: PolygonSchema,
    required: Type.Optional(Type.Boolean({ description: 'Default false', default: false })),
    alert_on_stationary: Type.Optional(
      Type.Boolean({ description: 'An object inside it that has not moved alerts all the same. Default false' }),
    ),
    loitering_s: Type.Optional(
      Type.Union([Type.Integer({ minimum: 1, maximum: SETTING_LIMITS.loiteringS }), Type.Null()], {
        description:
          'A person inside it alerts once, after staying this many seconds (1–3600). Default null: no such rule',
      }),
    ),
  },
  { additionalProperties: false },
);

const RtspUrl = (description: string) => Type.String({ minLength: 1, maxLength: RTSP_URL_LIMITS.length, description });
const MainRtspUrl = RtspUrl(
  "A plain RTSP camera's main stream: rtsp://host[:port]/path or rtsps://…, at most 2048 characters. Credentials in it are taken out and kept as username and password. The gateway connects to it from the LAN: it must be a camera, not this gateway's own relay",
);
const SubRtspUrl = RtspUrl('Its sub stream (lower resolution), checked as rtsp_url and opened with the same account');

// One object rather than a union of the two kinds: a refusal then names the field at fault ("body
// field name is required with rtsp_url") instead of every branch's complaint; addOf says which
// fields go together.
const AddBody = Type.Object(
  {
    address: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 262,
        description:
          'An ONVIF camera: host[:port] of its ONVIF service, a name or an IP address ([…] for IPv6), e.g. 192.168.1.20. Either this or rtsp_url',
      }),
    ),
    rtsp_url: Type.Optional(MainRtspUrl),
    sub_rtsp_url: Type.Optional(SubRtspUrl),
    username: Type.Optional(Username),
    password: Type.Optional(Password),
    name: Type.Optional(Name),
  },
  {
    additionalProperties: false,
    description:
      'An ONVIF camera: address, username and password, name optional. A plain RTSP camera: rtsp_url and name, sub_rtsp_url optional, username and password when it asks for a login (or in the URL)',
  },
);

const PatchBody = Type.Object(
  {
    name: Type.Optional(Name),
    username: Type.Optional(Username),
    password: Type.Optional(Password),
    enabled: Type.Optional(Type.Boolean({ description: 'false: the gateway stops using the camera' })),
    recording: Type.Optional(Type.Enum([...RECORDING_MODES])),
    detection: Type.Optional(Type.Enum([...DETECTION_MODES])),
    motion_mask: Type.Optional(Type.Array(PolygonSchema, { maxItems: SETTING_LIMITS.polygons })),
    zones: Type.Optional(Type.Array(ZoneInput, { maxItems: SETTING_LIMITS.zones })),
    rtsp_url: Type.Optional(MainRtspUrl),
    sub_rtsp_url: Type.Optional(Type.Union([SubRtspUrl, Type.Null()])),
  },
  {
    additionalProperties: false,
    description:
      'Any of the settings; username and password only together. rtsp_url and sub_rtsp_url (null: none) only for a camera added by its RTSP URL',
  },
);

const conflict = (meaning: string) => ({ 409: errorResponse(`conflict: ${meaning}`) });

export const deviceSetupRoutes: FastifyPluginAsyncTypebox<DeviceSetupRoutesOptions> = async (app, { setup }) => {
  app.post(
    '/v1/devices',
    {
      config: { scope: 'devices:write' },
      schema: {
        operationId: 'addDevice',
        summary: 'Add a camera: an ONVIF camera by its address, or a plain RTSP camera by its stream URL',
        description:
          'Answers at once with the camera offline; it then goes online, offline or unauthorized as the gateway reaches it (a plain RTSP camera: as its stream answers DESCRIBE). A camera removed before comes back under its id.',
        tags: ['devices'],
        body: AddBody,
        response: {
          201: DeviceSchema,
          ...errorResponses,
          ...conflict('a camera at that address or with that stream URL is known already, or the config file lists it'),
        },
      },
    },
    async (req, reply) => {
      const device = addOf(req.body, setup, subjectOf(req));
      return reply.code(201).header('location', `/v1/devices/${device.id}`).send(presentDevice(device));
    },
  );

  app.patch(
    '/v1/devices/:device_id',
    {
      config: { scope: 'devices:write' },
      schema: {
        operationId: 'updateDevice',
        summary: "Change a camera's settings",
        description:
          'Applied at once, without a restart. A field the config file sets is refused with 409 (settings.source says which are). All or nothing: a refused change changes nothing.',
        tags: ['devices'],
        params: DeviceParams,
        body: PatchBody,
        response: {
          200: DeviceSchema,
          ...errorResponses,
          ...notFoundResponse,
          ...conflict('a field the config file sets, or continuous recording on a gateway that keeps none'),
        },
      },
    },
    async (req) => presentDevice(setup.change(req.params.device_id, patchOf(req.body), subjectOf(req))),
  );

  app.delete(
    '/v1/devices/:device_id',
    {
      config: { scope: 'devices:write' },
      schema: {
        operationId: 'removeDevice',
        summary: 'Remove a camera',
        description:
          'The gateway stops using it and forgets its settings; its recordings and alerts are kept until their retention. Discovery finding it again leaves it alone until it is added again (POST /v1/devices).',
        tags: ['devices'],
        params: DeviceParams,
        response: {
          204: NoBody('Removed'),
          ...errorResponses,
          ...notFoundResponse,
          ...conflict('the config file lists the camera: remove it there'),
        },
      },
    },
    async (req, reply) => {
      await setup.remove(req.params.device_id, subjectOf(req));
      return reply.code(204).send();
    },
  );
};

type AddJson = Static<typeof AddBody>;
type PatchJson = Static<typeof PatchBody>;

/** Adds the camera the body describes, either kind: which fields go together, 400 naming the one at fault. */
function addOf(b: AddJson, setup: DeviceSetup, by: string): Device {
  if (b.address !== undefined && b.rtsp_url !== undefined)
    throw badRequest('body field rtsp_url is not taken with address: give one, the ONVIF address or the RTSP URL');
  if (b.rtsp_url !== undefined) {
    if (b.name === undefined)
      throw badRequest('body field name is required with rtsp_url: an RTSP URL does not tell what the camera is');
    if (b.password !== undefined && b.username === undefined)
      throw badRequest('body field username is required with password');
    const { rtsp_url: url, sub_rtsp_url: subUrl, username, password, name } = b;
    return setup.addRtsp(
      { url, subUrl: subUrl ?? null, username: username ?? null, password: password ?? null, name },
      by,
    );
  }
  if (b.address === undefined)
    throw badRequest('body field address is required (or rtsp_url, for a plain RTSP camera)');
  if (b.sub_rtsp_url !== undefined)
    throw badRequest('body field sub_rtsp_url is not taken with address: ONVIF tells the gateway the streams');
  const host = parseCameraAddress(b.address);
  if (host === null)
    throw badRequest(
      'body field address must be host[:port] of the camera: a name or an IP address, no scheme or path (e.g. 192.168.1.20 or cam.lan:8080)',
    );
  if (b.username === undefined) throw badRequest('body field username is required');
  if (b.password === undefined) throw badRequest('body field password is required');
  return setup.add({ host, username: b.username, password: b.password, name: b.name ?? null }, by);
}

/** The body as a change in the gateway's terms, checked further than the schema can: 400 naming the field. */
function patchOf(b: PatchJson): SettingsPatch {
  if (Object.keys(b).length === 0)
    throw badRequest(
      'the body names no setting to change (name, username and password, enabled, recording, detection, motion_mask, zones, rtsp_url, sub_rtsp_url)',
    );
  if ((b.username === undefined) !== (b.password === undefined))
    throw badRequest(
      `body field ${b.username === undefined ? 'username' : 'password'} is required with ${b.username === undefined ? 'password' : 'username'}: the account is changed as a whole`,
    );
  const patch: SettingsPatch = {
    ...(b.name !== undefined ? { name: b.name } : {}),
    ...(b.username !== undefined && b.password !== undefined
      ? { account: { username: b.username, password: b.password } }
      : {}),
    ...(b.rtsp_url !== undefined || b.sub_rtsp_url !== undefined
      ? {
          streams: {
            ...(b.rtsp_url !== undefined ? { main: b.rtsp_url } : {}),
            ...(b.sub_rtsp_url !== undefined ? { sub: b.sub_rtsp_url } : {}),
          },
        }
      : {}),
    ...(b.enabled !== undefined ? { enabled: b.enabled } : {}),
    ...(b.recording !== undefined ? { recording: b.recording } : {}),
    ...(b.detection !== undefined ? { detection: b.detection } : {}),
    ...(b.motion_mask !== undefined ? { motionMask: b.motion_mask.map(corners) } : {}),
    ...(b.zones !== undefined
      ? {
          zones: b.zones.map((z) => ({
            name: z.name,
            polygon: corners(z.polygon),
            required: z.required ?? false,
            alertOnStationary: z.alert_on_stationary ?? false,
            loiteringS: z.loitering_s ?? null,
          })),
        }
      : {}),
  };
  const problem = settingsProblem(patch);
  if (problem) throw badRequest(`body field ${problem.field} ${problem.problem}`);
  return patch;
}

/** The schema holds each corner to two numbers in 0–1. */
const corners = (polygon: number[][]) => polygon.map((p): [number, number] => [p[0]!, p[1]!]);
