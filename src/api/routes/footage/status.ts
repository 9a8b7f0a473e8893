import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { errorResponses } from '../../schemas.js';
import type { FootageRoutesOptions } from './options.js';

// GET /v1/footage: whether continuous recording runs, on which disk, and per camera what it keeps
// (docs/api.md, "Continuous footage").

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const NullableDate = Type.Union([Type.Null(), Type.String({ format: 'date-time' })]);

const CameraStatus = Type.Object(
  {
    device_id: Type.String(),
    profile: Type.Union([Type.Null(), Type.Enum(['main', 'sub'])], {
      description: 'The stream kept; null when the camera keeps none',
    }),
    recording: Type.Boolean(),
    reason: Type.Union([Type.Null(), Type.String()], { description: 'Why not, while it is not recording' }),
    files: Type.Integer(),
    bytes: Type.Integer(),
    oldest: NullableDate,
    newest: NullableDate,
    hours_kept: Type.Number({ description: 'Hours between the oldest and the newest footage kept' }),
  },
  { additionalProperties: false },
);

export const FootageStatusSchema = Type.Object(
  {
    enabled: Type.Boolean({ description: 'recording.continuous.enabled' }),
    recording: Type.Boolean({ description: 'The footage disk takes writes' }),
    reason: Type.Union([Type.Null(), Type.String()], { description: 'Why not, while it does not' }),
    disk: Type.Object(
      {
        device: Type.String({ description: 'major:minor of the block device' }),
        source: Type.Union([Type.Null(), Type.String()], { description: 'What is mounted there (/dev/sda1)' }),
        mount_point: Type.Union([Type.Null(), Type.String()]),
        free_bytes: Type.Union([Type.Null(), Type.Integer()]),
      },
      { additionalProperties: false },
    ),
    cameras: Type.Array(CameraStatus),
  },
  { additionalProperties: false, title: 'FootageStatus' },
);

export const footageStatusRoute: FastifyPluginAsyncTypebox<Pick<FootageRoutesOptions, 'footage'>> = async (
  app,
  { footage },
) => {
  app.get(
    '/v1/footage',
    {
      config: { scope: 'recordings:read' },
      schema: {
        operationId: 'getFootageStatus',
        summary: 'Continuous recording: its disk, and per camera the footage kept',
        tags: ['footage'],
        response: { 200: FootageStatusSchema, ...errorResponses },
      },
    },
    async () => {
      if (!footage)
        return {
          enabled: false,
          recording: false,
          reason: 'continuous recording is off (recording.continuous.enabled)',
          disk: { device: 'none', source: null, mount_point: null, free_bytes: null },
          cameras: [],
        };
      const s = footage.status();
      return {
        enabled: true,
        recording: s.recording,
        reason: s.reason,
        disk: {
          device: s.disk.device,
          source: s.disk.source,
          mount_point: s.disk.mountPoint,
          free_bytes: s.disk.freeBytes,
        },
        cameras: s.cameras.map((c) => ({
          device_id: c.deviceId,
          profile: c.profile,
          recording: c.recording,
          reason: c.reason,
          files: c.files,
          bytes: c.bytes,
          oldest: iso(c.oldestMs),
          newest: iso(c.newestMs),
          hours_kept:
            c.oldestMs === null || c.newestMs === null
              ? 0
              : Math.round(((c.newestMs - c.oldestMs) / 3_600_000) * 100) / 100,
        })),
      };
    },
  );
};
