import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CameraFaultError, CameraUnauthorizedError, CameraUnreachableError } from '../../src/onvif/errors.js';
import { OnvifSession, pickMainAndSub } from '../../src/onvif/library.js';
import { SimulatedCamera } from '../../src/onvif/simulator/camera.js';
import { systemDateAndTime } from '../../src/onvif/simulator/responses.js';

const FIVE_HOURS = 5 * 3600_000;
let cam: SimulatedCamera;
const sessions: OnvifSession[] = [];
const open = async (
  url: string,
  username: string | null = 'admin',
  password: string | null = 'pw',
  callTimeoutMs = 3000,
) => {
  const s = await OnvifSession.connect({ url, username, password }, { callTimeoutMs });
  sessions.push(s);
  return s;
};

beforeAll(async () => {
  cam = new SimulatedCamera({
    username: 'admin',
    password: 'pw',
    skewMs: FIVE_HOURS,
    rtspMain: 'rtsp://127.0.0.1:8554/cam1/main',
    rtspSub: 'rtsp://127.0.0.1:8554/cam1/sub',
    rebootMs: 500,
  });
  await cam.start();
});
afterEach(() => {
  for (const s of sessions.splice(0)) s.close();
});
afterAll(() => cam.stop());

describe('OnvifSession against the simulated camera', () => {
  it('adopts: clock offset, device information, profiles, stream and snapshot URIs', async () => {
    const s = await open(cam.deviceServiceUrl);
    const d = await s.describe();
    expect(d).toMatchObject({ manufacturer: 'SimCam', model: 'SIM-4MP', firmwareVersion: '1.0.0', media2: false });
    expect(Math.abs(d.clockOffsetMs - FIVE_HOURS)).toBeLessThan(5000); // the camera's clock reading has 1 s resolution
    const { main, sub } = pickMainAndSub(d.profiles);
    expect(main).toMatchObject({ token: 'Profile_1', width: 2560, height: 1440, encoding: 'H264' });
    expect(sub).toMatchObject({ token: 'Profile_2', width: 640, height: 360 });
    expect(await s.streamUri('Profile_1')).toBe('rtsp://127.0.0.1:8554/cam1/main');
    expect(await s.streamUri('Profile_2')).toBe('rtsp://127.0.0.1:8554/cam1/sub');
    expect(await s.snapshotUri('Profile_1')).toBe(`${cam.baseUrl}/snapshot.jpg`);
  });

  it('reports wrong credentials as unauthorized', async () => {
    await expect(open(cam.deviceServiceUrl, 'admin', 'wrong')).rejects.toBeInstanceOf(CameraUnauthorizedError);
    await expect(open(cam.deviceServiceUrl, null, null)).rejects.toBeInstanceOf(CameraUnauthorizedError);
  });

  it('falls back to an authenticated GetSystemDateAndTime when the camera refuses the open one', async () => {
    const strict = new SimulatedCamera({ username: 'admin', password: 'pw', strictTimeAuth: true });
    await strict.start();
    try {
      const s = await open(strict.deviceServiceUrl);
      expect((await s.describe()).model).toBe('SIM-4MP');
      expect(strict.calls.get('GetSystemDateAndTime')).toBeGreaterThanOrEqual(2);
    } finally {
      await strict.stop();
    }
  });

  it('sets the camera clock from ours', async () => {
    const skewed = new SimulatedCamera({ username: 'admin', password: 'pw', skewMs: -FIVE_HOURS });
    await skewed.start();
    try {
      const s = await open(skewed.deviceServiceUrl);
      await s.setClock(new Date());
      expect(Math.abs(skewed.nowMs() - Date.now())).toBeLessThan(2000);
    } finally {
      await skewed.stop();
    }
  });

  it('delivers PullPoint notifications, and close() aborts a pending long-poll', async () => {
    const s = await open(cam.deviceServiceUrl);
    await s.createPullPoint();
    const initial = JSON.stringify(await s.pullMessages());
    expect(initial).toContain('Initialized');
    const pending = s.pullMessages();
    setTimeout(() => cam.trigger('human', true), 100);
    expect(JSON.stringify(await pending)).toContain('PeopleDetector/People');
    await s.renew();
    const hanging = s.pullMessages();
    s.close();
    await expect(hanging).rejects.toBeInstanceOf(CameraUnreachableError);
  });

  it('reboots: the camera drops off and comes back', async () => {
    const s = await open(cam.deviceServiceUrl);
    await s.reboot();
    await new Promise((r) => setTimeout(r, 300));
    await expect(open(cam.deviceServiceUrl)).rejects.toBeInstanceOf(CameraUnreachableError);
    await expect
      .poll(
        async () =>
          await open(cam.deviceServiceUrl).then(
            () => 'up',
            () => 'down',
          ),
        { timeout: 10_000, interval: 200 },
      )
      .toBe('up');
  });

  it('gives a partial description when the camera leaves fields empty', async () => {
    const bare = new SimulatedCamera({
      username: 'admin',
      password: 'pw',
      identity: { manufacturer: '', model: '', firmware: '', serial: '' },
    });
    await bare.start();
    try {
      const d = await (await open(bare.deviceServiceUrl)).describe();
      expect(d).toMatchObject({ manufacturer: null, model: null, firmwareVersion: null, serialNumber: null });
    } finally {
      await bare.stop();
    }
  });
});

describe('OnvifSession against hostile or broken cameras', () => {
  let server: Server;
  let answer: (body: string) => string | null = () => null;
  let url = '';
  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const out = answer(body);
        if (out === null) return; // hang
        res.writeHead(200, { 'content-type': 'application/soap+xml' }).end(out);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/onvif/device_service`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  const dateOk = (body: string) => (body.includes('GetSystemDateAndTime') ? systemDateAndTime(Date.now()) : null);

  it.each<[string, (body: string) => string | null, new (...a: never[]) => Error]>([
    [
      'a huge response',
      () =>
        `<?xml version="1.0"?><env:Envelope xmlns:env="http://www.w3.org/2003/05/soap-envelope"><env:Body>${'x'.repeat(2 * 1024 * 1024)}</env:Body></env:Envelope>`,
      CameraFaultError,
    ],
    [
      'a DTD with entities',
      () =>
        '<?xml version="1.0"?><!DOCTYPE lol [<!ENTITY a "aaaaaaaa">]><env:Envelope xmlns:env="http://www.w3.org/2003/05/soap-envelope"><env:Body>&a;</env:Body></env:Envelope>',
      CameraFaultError,
    ],
    ['malformed XML', () => '<env:Envelope><env:Body><oops></env:Envelope', CameraFaultError],
    [
      'a namespace flood',
      () =>
        `<?xml version="1.0"?><env:Envelope xmlns:env="http://www.w3.org/2003/05/soap-envelope"><env:Body>${'<a xmlns:x="u"/>'.repeat(20_000)}</env:Body></env:Envelope>`,
      CameraFaultError,
    ],
    [
      'a SOAP fault',
      () =>
        '<?xml version="1.0"?><env:Envelope xmlns:env="http://www.w3.org/2003/05/soap-envelope"><env:Body><env:Fault><env:Code><env:Value>env:Receiver</env:Value></env:Code><env:Reason><env:Text>Internal error</env:Text></env:Reason></env:Fault></env:Body></env:Envelope>',
      CameraFaultError,
    ],
    ['no answer at all', () => null, CameraUnreachableError],
    ['an answer to the clock only, then silence', dateOk, CameraUnreachableError],
  ])('%s → a typed error, never a crash', async (_name, respond, errorClass) => {
    answer = respond;
    await expect(open(url, 'admin', 'pw', 500)).rejects.toBeInstanceOf(errorClass);
  });

  it('a closed port is unreachable', async () => {
    await expect(open('http://127.0.0.1:9/onvif/device_service', 'a', 'b', 500)).rejects.toBeInstanceOf(
      CameraUnreachableError,
    );
  });
});

describe('OnvifSession against a camera that wants HTTP Digest', () => {
  it('answers the challenge and goes on; a wrong password is unauthorized', async () => {
    const { digestAuthorization } = await import('../../src/onvif/soap/http-digest.js');
    const { parseSoapRequest } = await import('../../src/onvif/simulator/request.js');
    const R = await import('../../src/onvif/simulator/responses.js');
    const challenge = { realm: 'IPC', nonce: 'n0nce', qop: 'auth', opaque: null, algorithm: null };
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const auth = req.headers.authorization ?? '';
        const cnonce = /cnonce="([^"]+)"/.exec(auth)?.[1] ?? '';
        if (
          auth !== digestAuthorization(challenge, { username: 'admin', password: 'pw' }, 'POST', req.url ?? '', cnonce)
        ) {
          res.writeHead(401, { 'www-authenticate': 'Digest realm="IPC", nonce="n0nce", qop="auth"' }).end();
          return;
        }
        void parseSoapRequest(body).then((r) => {
          const op = r?.operation;
          const xml =
            op === 'GetSystemDateAndTime'
              ? R.systemDateAndTime(Date.now())
              : op === 'GetDeviceInformation'
                ? R.deviceInformation({
                    manufacturer: 'D',
                    model: 'Digest-1',
                    firmware: '1',
                    serial: 's',
                    hardwareId: 'h',
                  })
                : R.fault('env:Receiver', 'ter:ActionNotSupported', 'no');
          res.writeHead(xml.includes('env:Fault') ? 500 : 200, { 'content-type': 'application/soap+xml' }).end(xml);
        });
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const digestUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/onvif/device_service`;
      expect((await (await open(digestUrl)).describe()).model).toBe('Digest-1');
      await expect(open(digestUrl, 'admin', 'nope')).rejects.toBeInstanceOf(CameraUnauthorizedError);
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
});
