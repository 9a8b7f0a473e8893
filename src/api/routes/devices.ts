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
          'Carries out the action on the camera and answers when it is done. 409 device_unavailable when the device is offline; 502 device_error when the camera refused.',
        tags: ['devices'],
        params: DeviceParams,
        body: Type.Object({ action: Type.Enum([...CONTROL_ACTIONS]) }, { additionalProperties: false }),
        response: {
          200: ControlResultSchema,
          ...errorResponses,
          ...notFoundResponse,
          409: errorResponse('device_unavailable: the device is not online'),
          502: errorResponse('device_error: the camera answered the action with an error'),
        },
      },
    },
    async (req) => {
      requireDevice(req.params.device_id);
      return presentControl(await control.run(req.params.device_id, req.body.action));
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
