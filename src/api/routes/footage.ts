import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { footageDownloadRoute } from './footage/download.js';
import { footageExportFileRoute, footageExportUrlRoute } from './footage/export.js';
import { footageFrameRoute } from './footage/frame.js';
import type { FootageRoutesOptions } from './footage/options.js';
import { footageFileRoute, footagePlaybackRoute, footagePlaylistRoute } from './footage/playback.js';
import { footageSpansRoute } from './footage/spans.js';
import { footageStatusRoute } from './footage/status.js';

export type { FootageAccess, FootageRoutesOptions, FootageRoutesStore } from './footage/options.js';

// Continuous footage (docs/api.md, "Continuous footage"): the spans kept in a window, a window as
// one MP4 (to the bearer, or through a download_url), a window played (HLS VOD under a ticket), the picture of a moment, and continuous
// recording's status, one part each in footage/.

export const footageRoutes: FastifyPluginAsyncTypebox<FootageRoutesOptions> = async (app, opts) => {
  await app.register(footageSpansRoute, opts);
  await app.register(footageDownloadRoute, opts);
  await app.register(footageExportUrlRoute, opts);
  await app.register(footageExportFileRoute, opts);
  await app.register(footagePlaybackRoute, opts);
  await app.register(footagePlaylistRoute, opts);
  await app.register(footageFileRoute, opts);
  await app.register(footageFrameRoute, opts);
  await app.register(footageStatusRoute, opts);
};
