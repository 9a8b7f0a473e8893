import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import {
  CONTROL_ACTIONS,
  DEVICE_STATUSES,
  DEVICE_TYPES,
  STREAM_PROFILES,
  STREAM_PROTOCOLS,
  type Device,
  type Page,
} from '../../domain/types.js';
import { NotFoundError } from '../../domain/errors.js';
import { isPtzAction, PTZ_ACTIONS, PTZ_LIMITS, ptzCommandOf, type PtzFields } from '../../domain/ptz.js';
import { subjectOf } from '../authenticate.js';
import { badRequest } from '../errors.js';
import type { DeviceFilter } from '../../store/devices.js';
import { decodeCursorParam, pageResponder } from '../paging.js';
import type { DeviceControl, StreamAddresses } from '../ports.js';
import { memoized, presentControl, presentDevice } from '../../domain/present.js';
import {
  ControlResultSchema,
  DeviceSchema,
  Envelope,
  errorResponse,
  errorResponses,
  Id,
  notFoundResponse,
  PageQuery,
  StreamAddressSchema,
} from '../schemas.js';

/** What the device routes read of the store: devices listed and looked up. */
export interface DeviceStore {
  getDevice(id: string): Device | null;
  listDevices(f: DeviceFilter): Page<Device>;
}

export interface DeviceRoutesOptions {
  store: DeviceStore;
  control: DeviceControl;
  streams: StreamAddresses;
}

const DeviceParams = Type.Object({ device_id: Id });

const Velocity = (what: string) =>
  Type.Number({
    minimum: -1,
    maximum: 1,
    description: `ptz_move: ${what}, -1…1 of the camera's speed (0 when left out)`,
  });
const Point = (what: string) =>
  Type.Number({
    minimum: 0,
    maximum: 1,
    description: `ptz_center: the point's ${what}, 0–1 of the picture from its top-left corner`,
  });
// ONVIF tokens and names: at most 64 characters, none of them a control character.
const PtzText = (description: string) =>
  Type.String({
    minLength: 1,
    maxLength: PTZ_LIMITS.tokenLength,
    pattern: '^[^\\u0000-\\u001f\\u007f]+$',
    description,
  });

/**
 * One flat object rather than a union per action: a wrong field is then named as such ("body field
 * preset is not taken by ptz_move") rather than as a failure of every branch; ptzCommandOf checks
 * which fields go with which action.
 */
const ControlBody = Type.Object(
  {
    action: Type.Enum([...CONTROL_ACTIONS, ...PTZ_ACTIONS]),
    pan: Type.Optional(Velocity('pan, positive to the right')),
    tilt: Type.Optional(Velocity('tilt, positive upwards')),
    zoom: Type.Optional(Velocity('zoom, positive towards tele')),
    timeout_ms: Type.Optional(
      Type.Integer({
        minimum: PTZ_LIMITS.minMoveMs,
        maximum: PTZ_LIMITS.maxMoveMs,
        description: `ptz_move: the gateway stops the camera this long after the move unless another command comes first (default ${PTZ_LIMITS.defaultMoveMs})`,
      }),
    ),
    preset: Type.Optional(PtzText("ptz_goto_preset, ptz_remove_preset: the token of one of the Device's ptz.presets")),
    name: Type.Optional(PtzText("ptz_set_preset: the new preset's name (1–64 characters)")),
    x: Type.Optional(Point('x')),
    y: Type.Optional(Point('y')),
  },
  {
    additionalProperties: false,
    description:
      'reboot and sync_time take no other field; the ptz_* actions take theirs (docs/api.md, "Pan, tilt and zoom")',
  },
);

export const deviceRoutes: FastifyPluginAsyncTypebox<DeviceRoutesOptions> = async (
  app,
  { store, control, streams },
) => {
  const respond = pageResponder(memoized(presentDevice));
  const requireDevice = (id: string) => {
    const device = store.getDevice(id);
    if (!device) throw new NotFoundError('device', id);
    return device;
  };

  app.get(
    '/v1/devices',
    {
      config: { scope: 'devices:read' },
      schema: {
        operationId: 'listDevices',
        summary: 'List devices',
        tags: ['devices'],
        querystring: Type.Object(
          {
            status: Type.Optional(Type.Enum([...DEVICE_STATUSES])),
            type: Type.Optional(Type.Enum([...DEVICE_TYPES])),
            limit: PageQuery.limit,
            cursor: Type.Optional(PageQuery.cursor),
          },
          { additionalProperties: false },
        ),
        response: { 200: Envelope(DeviceSchema), ...errorResponses },
      },
    },
    (req, reply) => {
      const q = req.query;
      const page = store.listDevices({
        status: q.status,
        type: q.type,
        limit: q.limit,
        after: decodeCursorParam(q.cursor),
      });
      respond(reply, page);
    },
  );

  app.get(
    '/v1/devices/:device_id',
    {
      config: { scope: 'devices:read' },
      schema: {
        operationId: 'getDevice',
        summary: 'Get a device',
        tags: ['devices'],
        params: DeviceParams,
        response: { 200: DeviceSchema, ...errorResponses, ...notFoundResponse },
      },
    },
    async (req) => presentDevice(requireDevice(req.params.device_id)),
  );

  app.post(
    '/v1/devices/:device_id/control',
    {
      config: { scope: 'devices:write' },
      schema: {
        operationId: 'controlDevice',
        summary: 'Send a control action to a device',
        description:
          'Carries out the action on the camera and answers when it is done. 409 device_unavailable when the device is offline, not_supported when it cannot do it at all (PTZ of a fixed camera); 502 device_error when the camera refused (a PTZ action: also when it did not answer). The ptz_* actions are not kept as control requests.',
        tags: ['devices'],
        params: DeviceParams,
        body: ControlBody,
        response: {
          200: ControlResultSchema,
          ...errorResponses,
          ...notFoundResponse,
          409: errorResponse(
            'device_unavailable: the device is not online; not_supported: it has no pan, tilt or zoom (or no home position, no centring)',
          ),
          502: errorResponse('device_error: the camera answered the action with an error'),
        },
      },
    },
    async (req) => {
      const deviceId = req.params.device_id;
      requireDevice(deviceId);
      const { action, ...fields } = req.body;
      if (!isPtzAction(action)) {
        const extra = Object.keys(fields)[0];
        if (extra !== undefined) throw badRequest(`body field ${extra} is not taken by ${action}`);
        return presentControl(await control.run(deviceId, action, undefined, subjectOf(req)));
      }
      const parsed = ptzCommandOf(action, fields satisfies PtzFields);
      if (parsed.problem !== undefined) throw badRequest(parsed.problem);
      return presentControl(await control.ptzCommand(deviceId, parsed.command, subjectOf(req)));
    },
  );

  app.get(
    '/v1/devices/:device_id/stream',
    {
      config: { scope: 'devices:read' },
      schema: {
        operationId: 'getDeviceStream',
        summary: 'Get a time-limited live stream address',
        tags: ['devices'],
        params: DeviceParams,
        querystring: Type.Object(
          {
            profile: Type.Enum([...STREAM_PROFILES], { default: 'main' }),
            protocol: Type.Enum([...STREAM_PROTOCOLS], {
              default: 'rtsp',
              description: 'rtsp (the relay), webrtc (a WHEP endpoint) or hls (an LL-HLS playlist)',
            }),
          },
          { additionalProperties: false },
        ),
        response: {
          200: StreamAddressSchema,
          ...errorResponses,
          ...notFoundResponse,
          409: errorResponse('device_unavailable: the device is not online, or has no such stream'),
        },
      },
    },
    async (req) => {
      requireDevice(req.params.device_id);
      const { profile, protocol } = req.query;
      const address = await streams.issue(req.params.device_id, profile, { protocol, requestHost: req.hostname });
      return { stream_url: address.url, expires_at: new Date(address.expiresAt).toISOString(), protocol };
    },
  );
};
