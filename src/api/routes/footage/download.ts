import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Readable } from 'node:stream';
import Type from 'typebox';
import { exportBytes, readInit } from '../../../media/footage/export.js';
import { planExport } from '../../../media/footage/range-plan.js';
import type { IndexedFootageFile } from '../../../store/footage.js';
import { sendRanged } from '../../range-reply.js';
import { errorResponse, errorResponses, FileBody, Id } from '../../schemas.js';
import type { FootageRoutesOptions } from './options.js';
import { footageWindow, noFootageIn, requireDevice, requireFootage, WindowQuery } from './window.js';

// GET and HEAD /v1/devices/{device_id}/footage/download: a window of continuous footage as one MP4
// (fragmented), from the keyframe at or before start (docs/api.md). Its length is known from the
// index before a byte is read, so Range and HEAD work as for clips; the bytes are read from the
// footage files as the client takes them.

/** A file name for the attachment: the camera's name and the export's start, in characters any file system takes. */
function attachmentName(cameraName: string, startMs: number): string {
  const safe =
    cameraName
      .replace(/[^A-Za-z0-9._-]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 64) || 'camera';
  return `${safe}-${new Date(startMs).toISOString().slice(0, 19).replace(/:/g, '-')}.mp4`;
}

/**
 * The init segments of the first file of each run (a run shares one init): what tells whether a range can be one MP4.
 */
async function runInits(root: string, files: readonly IndexedFootageFile[]): Promise<Map<number, Buffer>> {
  const inits = new Map<number, Buffer>();
  for (const f of files) if (!inits.has(f.zeroMs)) inits.set(f.zeroMs, await readInit(root, f));
  return inits;
}

/**
 * Answers with the window of the device's footage as one MP4 (its Range, HEAD, 416), or throws a
 * 404 when the window holds none. The bearer's download and a download_url's both send it.
 */
export async function sendFootageMp4(
  req: FastifyRequest,
  reply: FastifyReply,
  root: string,
  store: FootageRoutesOptions['store'],
  device: { id: string; name: string },
  { startMs, endMs }: { startMs: number; endMs: number },
): Promise<FastifyReply> {
  const files = store.footageIn(device.id, startMs, endMs);
  const inits = await runInits(root, files);
  const plan = planExport(files, startMs, endMs, (a, b) =>
    (inits.get(a.zeroMs) as Buffer).equals(inits.get(b.zeroMs) as Buffer),
  );
  if (!plan) throw noFootageIn(device.id, startMs, endMs);
  const init = (await runInits(root, [plan.initFile])).get(plan.initFile.zeroMs) as Buffer;
  reply.headers({
    'content-type': 'video/mp4',
    'accept-ranges': 'bytes',
    'cache-control': 'private, no-store',
    'content-disposition': `attachment; filename="${attachmentName(device.name, plan.startMs)}"`,
  });
  return sendRanged(req, reply, { size: plan.bytes, range: req.headers.range, what: 'the export' }, (first, last) =>
    Readable.from(exportBytes(root, plan, init, first, last), { objectMode: false }),
  );
}

export const footageDownloadRoute: FastifyPluginAsyncTypebox<FootageRoutesOptions> = async (
  app,
  { store, footage },
) => {
  // GET and HEAD declared together: Fastify's automatic HEAD route would read the whole export to discard it.
  app.route({
    method: ['GET', 'HEAD'],
    url: '/v1/devices/:device_id/footage/download',
    config: { scope: 'recordings:write' },
    schema: {
      operationId: 'downloadDeviceFootage',
      summary: 'Download a window of continuous footage (MP4)',
      description:
        'One fragmented MP4 of the window, from the keyframe at or before start to the last picture before end, gaps kept as gaps; at most 24 hours. ' +
        'Supports HEAD and a single byte Range (206/416). It stops early where the camera changed resolution or codec (one MP4 has one).',
      tags: ['footage'],
      params: Type.Object({ device_id: Id }),
      querystring: WindowQuery,
      response: {
        200: FileBody('video/mp4', 'The MP4'),
        206: FileBody('video/mp4', 'The requested byte range'),
        ...errorResponses,
        404: errorResponse('not_found: no such device, no footage in the window, or continuous recording is off'),
        416: errorResponse('range_not_satisfiable: the range starts past the end (Content-Range: bytes */size)'),
      },
    },
    handler: async (req, reply) => {
      const { startMs, endMs } = footageWindow(req.query);
      const access = requireFootage(footage);
      const device = requireDevice(store, req.params.device_id);
      return sendFootageMp4(req, reply, access.root, store, device, { startMs, endMs });
    },
  });
};
