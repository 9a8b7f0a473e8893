import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { DISK_NAMES, DISK_STATES } from '../../domain/system-facts.js';
import type { Device, Page, PageKey } from '../../domain/types.js';
import type { SystemFacts } from '../ports.js';
import { DeviceSchema, errorResponses, NullableTimestamp } from '../schemas.js';

// GET /v1/system: the owner's look at the gateway (the web app's System screen): its version and
// uptime, the machine's load, memory and temperature, its disks, and each camera's stream as the
// relay receives it. Admin only (devices:write): like the metrics listener, it tells what runs and
// who watches, which a viewer's account (a guest, a child's tablet) has no need of, and a version
// tells a stranger with a stolen viewer token what to try. docs/api.md, "System".

export interface SystemStatusRoutesOptions {
  facts: SystemFacts;
  /** Every device, a page at a time (the store's device list). */
  store: { listDevices(f: { limit: number; after: PageKey | null }): Page<Device> };
  version: string;
}

const NullableNumber = (description: string) => Type.Union([Type.Null(), Type.Number()], { description });
const NullableInteger = (description: string) => Type.Union([Type.Null(), Type.Integer()], { description });

export const SystemStatusSchema = Type.Object(
  {
    version: Type.String({ description: "The gateway's version (package.json)" }),
    uptime_s: Type.Integer({ description: 'Seconds since the gateway process started' }),
    host: Type.Object(
      {
        uptime_s: Type.Integer({ description: 'Seconds since the machine booted' }),
        load_1m: Type.Number({ description: 'Load average over the last minute' }),
        cpu_cores: Type.Integer({ description: 'CPU cores online' }),
        cpu_pct: NullableNumber(
          "Share of all cores' time busy (0–100) since the previous look at least 1 s before (by any client); null when there was none within 5 minutes: the next look has it",
        ),
        memory_total_bytes: Type.Integer(),
        memory_available_bytes: Type.Integer({
          description: "What can be had without swapping (the kernel's MemAvailable)",
        }),
        temperature_c: NullableNumber("The hottest thermal zone's reading (°C); null where the board has none"),
      },
      { additionalProperties: false },
    ),
    process: Type.Object(
      {
        rss_bytes: Type.Integer({ description: "The daemon's resident memory (not its ffmpeg children's)" }),
        cpu_pct: NullableNumber(
          "The daemon's CPU time (its threads, not its ffmpeg children) as a share of all cores' time, over the same interval as host.cpu_pct",
        ),
      },
      { additionalProperties: false },
    ),
    storage: Type.Array(
      Type.Object(
        {
          name: Type.Enum([...DISK_NAMES], {
            description:
              'data: data_dir (the database; the clips too while they are inside it); clips: the event clips, where they are elsewhere; footage: continuous footage',
          }),
          path: Type.String({ description: 'The directory the gateway writes there' }),
          total_bytes: NullableInteger("The file system's size; null while it is missing"),
          free_bytes: NullableInteger('What the gateway may still write there; null while it is missing'),
          used_by_gateway_bytes: NullableInteger(
            "The gateway's own files there as its database counts them (the database, the clips, the footage index); null: not known",
          ),
          state: Type.Enum([...DISK_STATES], {
            description:
              'low: under half of the free space the gateway keeps there (recording.retention / recording.continuous min_free_bytes), or footage stopped for a full disk; read_only; missing: not mounted or gone; failed: writes fail for another reason',
          }),
        },
        { additionalProperties: false },
      ),
    ),
    cameras: Type.Array(
      Type.Object(
        {
          device_id: DeviceSchema.properties.id,
          name: DeviceSchema.properties.name,
          status: DeviceSchema.properties.status,
          bitrate_kbps: NullableNumber(
            'The main stream as the relay receives it (every track, RTP headers included), averaged over the last 5 whole seconds; null while the relay has no session with the camera',
          ),
          fps: NullableNumber(
            'Pictures a second received on the main stream, over the same seconds; null as bitrate_kbps',
          ),
          viewers: Type.Integer({
            description: "Live views of the camera (RTSP, WebRTC, HLS sessions); the gateway's own readers not counted",
          }),
          last_error: Type.Union([Type.Null(), Type.String()], {
            description:
              "The camera's last failure, whatever its status now: the gateway could not reach or log into it (ONVIF), or its stream could not be opened or was lost; null: none since the gateway started",
          }),
          last_error_at: NullableTimestamp,
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false, title: 'SystemStatus' },
);

/** Every device, a page at a time (a gateway has a few dozen at most: one page). */
function allDevices(store: SystemStatusRoutesOptions['store']): Device[] {
  const devices: Device[] = [];
  for (let after: Page<Device>['next'] = null; ;) {
    const page = store.listDevices({ limit: 200, after });
    devices.push(...page.items);
    if (page.next === null) return devices;
    after = page.next;
  }
}

export const systemStatusRoutes: FastifyPluginAsyncTypebox<SystemStatusRoutesOptions> = async (
  app,
  { facts, store, version },
) => {
  app.get(
    '/v1/system',
    {
      config: { scope: 'devices:write' },
      schema: {
        operationId: 'getSystemStatus',
        summary: "The gateway, its machine, its disks and its cameras' streams, as they are now (admins)",
        tags: ['system'],
        response: { 200: SystemStatusSchema, ...errorResponses },
      },
    },
    async () => {
      const [{ host, process }, storage] = await Promise.all([facts.machine(), facts.storage()]);
      return {
        version,
        uptime_s: process.uptimeS,
        host: {
          uptime_s: host.uptimeS,
          load_1m: host.load1m,
          cpu_cores: host.cpuCores,
          cpu_pct: host.cpuPct,
          memory_total_bytes: host.memoryTotalBytes,
          memory_available_bytes: host.memoryAvailableBytes,
          temperature_c: host.temperatureC,
        },
        process: { rss_bytes: process.rssBytes, cpu_pct: process.cpuPct },
        storage: storage.map((d) => ({
          name: d.name,
          path: d.path,
          total_bytes: d.totalBytes,
          free_bytes: d.freeBytes,
          used_by_gateway_bytes: d.usedByGatewayBytes,
          state: d.state,
        })),
        cameras: allDevices(store).map((device) => {
          const c = facts.camera(device.id);
          return {
            device_id: device.id,
            name: device.name,
            status: device.status,
            bitrate_kbps: c.bitrateKbps,
            fps: c.fps,
            viewers: c.viewers,
            last_error: c.lastError?.message ?? null,
            last_error_at: c.lastError ? new Date(c.lastError.at).toISOString() : null,
          };
        }),
      };
    },
  );
};
