import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { downloadRecordingRoute } from './recordings/download.js';
import { getRecordingRoute, listDeviceRecordingsRoute } from './recordings/objects.js';
import type { RecordingRoutesOptions } from './recordings/options.js';
import { recordingThumbnailRoute } from './recordings/thumbnail.js';

export type { RecordingRoutesOptions, RecordingStore } from './recordings/options.js';

// The recordings API (docs/api.md): a device's list and one recording as JSON, a clip's download
// and its thumbnail, one part each in recordings/. The clip's playback_url is served by playback.ts.

export const recordingRoutes: FastifyPluginAsyncTypebox<RecordingRoutesOptions> = async (app, opts) => {
  await app.register(listDeviceRecordingsRoute, opts);
  await app.register(getRecordingRoute, opts);
  await app.register(downloadRecordingRoute, opts);
  await app.register(recordingThumbnailRoute, opts);
};
