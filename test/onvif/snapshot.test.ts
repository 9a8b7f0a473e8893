import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CameraFaultError, CameraUnauthorizedError, CameraUnreachableError } from '../../src/onvif/errors.js';
import { SimulatedCamera } from '../../src/onvif/simulator/camera.js';
import { fetchCameraSnapshot, isWholeJpeg, snapshotUrlAt } from '../../src/onvif/snapshot.js';

// The camera's own snapshot, fetched as the gateway does: from the simulated camera (Digest), and
// from a hand-made HTTP server for Basic and for the answers a camera should not give.

const opts = { timeoutMs: 2000, maxBytes: 1 << 20 };
let cam: SimulatedCamera;
let odd: Server;
let oddUrl: string;
const seen: Array<string | undefined> = [];

const JPEG = Buffer.concat([Buffer.of(0xff, 0xd8), Buffer.alloc(100, 1), Buffer.of(0xff, 0xd9)]);

function oddCamera(req: IncomingMessage, res: ServerResponse): void {
  seen.push(req.headers.authorization);
  switch (req.url) {
    case '/basic.jpg':
      if (req.headers.authorization !== `Basic ${Buffer.from('admin:pw').toString('base64')}`)
        return void res.writeHead(401, { 'www-authenticate': 'Basic realm="cam"' }).end();
      return void res.writeHead(200, { 'content-type': 'image/jpeg' }).end(JPEG);
    case '/open.jpg':
      return void res.writeHead(200).end(JPEG);
    case '/html':
      return void res.writeHead(200, { 'content-type': 'text/html' }).end('<html>login</html>');
    case '/cut.jpg':
      return void res.writeHead(200).end(JPEG.subarray(0, 50));
    case '/huge.jpg':
      return void res.writeHead(200).end(Buffer.alloc(2 << 20));
    case '/hang.jpg':
      return; // never answers
    case '/bearer':
      return void res.writeHead(401, { 'www-authenticate': 'Bearer realm="x"' }).end();
    default:
      return void res.writeHead(404).end();
  }
}

beforeAll(async () => {
  cam = new SimulatedCamera({ username: 'admin', password: 'secret' });
  await cam.start();
  await cam.snapshot.jpeg(); // made by ffmpeg on first use: not the fetch's time
  odd = createServer(oddCamera);
  await new Promise<void>((r) => odd.listen(0, '127.0.0.1', () => r()));
  oddUrl = `http://127.0.0.1:${(odd.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await cam.stop();
  odd.closeAllConnections();
  await new Promise((r) => odd.close(r));
});

describe('fetchCameraSnapshot', () => {
  it("answers the camera's Digest challenge with its credentials and gets the whole JPEG", async () => {
    const jpeg = await fetchCameraSnapshot(
      { url: `${cam.baseUrl}/snapshot.jpg`, username: 'admin', password: 'secret' },
      opts,
    );
    expect(isWholeJpeg(jpeg)).toBe(true);
    expect(jpeg).toEqual(await cam.snapshot.jpeg());
  });

  it('a wrong password: CameraUnauthorizedError', async () => {
    await expect(
      fetchCameraSnapshot({ url: `${cam.baseUrl}/snapshot.jpg`, username: 'admin', password: 'wrong' }, opts),
    ).rejects.toBeInstanceOf(CameraUnauthorizedError);
  });

  it('Basic when the camera asks for Basic; nothing sent to a camera that asks for nothing', async () => {
    seen.length = 0;
    await expect(
      fetchCameraSnapshot({ url: `${oddUrl}/basic.jpg`, username: 'admin', password: 'pw' }, opts),
    ).resolves.toEqual(JPEG);
    expect(seen).toEqual([undefined, `Basic ${Buffer.from('admin:pw').toString('base64')}`]);
    seen.length = 0;
    await expect(
      fetchCameraSnapshot({ url: `${oddUrl}/open.jpg`, username: 'admin', password: 'pw' }, opts),
    ).resolves.toEqual(JPEG);
    expect(seen).toEqual([undefined]);
  });

  it.each([
    ['a 404', '/nope', CameraFaultError, /answered the snapshot request with 404/],
    ['an HTML page', '/html', CameraFaultError, /not a JPEG/],
    ['a cut-off JPEG', '/cut.jpg', CameraFaultError, /not a JPEG/],
    ['an answer over the size bound', '/huge.jpg', CameraFaultError, /larger than/],
    ['no answer in time', '/hang.jpg', CameraUnreachableError, /no answer within/],
    ['a challenge it cannot answer', '/bearer', CameraUnauthorizedError, /refused/],
  ])('%s: a typed error', async (_what, path, type, message) => {
    const err = await fetchCameraSnapshot(
      { url: `${oddUrl}${path}`, username: 'admin', password: 'pw' },
      { ...opts, timeoutMs: 500 },
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(type);
    expect((err as Error).message).toMatch(message);
  });

  it('refuses a non-http address and an unreachable camera with typed errors', async () => {
    await expect(
      fetchCameraSnapshot({ url: 'https://127.0.0.1:1/x.jpg', username: null, password: null }, opts),
    ).rejects.toBeInstanceOf(CameraFaultError);
    await expect(
      fetchCameraSnapshot({ url: 'http://127.0.0.1:1/x.jpg', username: null, password: null }, opts),
    ).rejects.toBeInstanceOf(CameraUnreachableError);
  });
});

describe('snapshotUrlAt', () => {
  it.each([
    [
      'a camera naming its public address (SUNBA capture)',
      'http://162.191.54.181:80/LAPI/V1.0/Media/Video/Streams/0/Snapshot',
      'http://192.168.1.20/onvif/device_service',
      'http://192.168.1.20/LAPI/V1.0/Media/Video/Streams/0/Snapshot',
    ],
    [
      'another port and a query (ENP1A14 capture)',
      'http://192.168.1.182/onvif-http/snapshot?Profile_1',
      'http://192.168.1.182:8000/onvif/device_service',
      'http://192.168.1.182/onvif-http/snapshot?Profile_1',
    ],
    [
      'its own port kept (GX728MF capture)',
      'http://192.168.1.127:85/images/snapshot.jpg',
      'http://10.0.0.5/onvif/device_service',
      'http://10.0.0.5:85/images/snapshot.jpg',
    ],
    [
      'credentials in the URI dropped',
      'http://user:pw@cam/s.jpg',
      'http://10.0.0.5/onvif/device_service',
      'http://10.0.0.5/s.jpg',
    ],
  ])('%s', (_what, uri, onvif, want) => {
    expect(snapshotUrlAt(uri, onvif)).toBe(want);
  });

  it.each([
    ['https', 'https://cam/s.jpg'],
    ['rtsp', 'rtsp://cam/s'],
    ['not a URL', 'snapshot.jpg'],
  ])('%s: null', (_what, uri) => {
    expect(snapshotUrlAt(uri, 'http://10.0.0.5/onvif/device_service')).toBeNull();
  });
});

describe('isWholeJpeg', () => {
  it.each([
    ['a whole JPEG', JPEG, true],
    ['cut off', JPEG.subarray(0, JPEG.length - 1), false],
    ['not a JPEG', Buffer.from('<html>'), false],
    ['empty', Buffer.alloc(0), false],
  ])('%s: %s', (_what, data, want) => expect(isWholeJpeg(data)).toBe(want));
});
