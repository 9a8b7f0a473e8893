import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseSoapRequest } from '../../src/onvif/simulator/request.js';
import * as R from '../../src/onvif/simulator/responses.js';

// A camera that answers every ONVIF operation properly except the ones it is told to break, each
// in one failure mode. It speaks plain HTTP on loopback; the simulator's response builders give the
// proper answers, so only the broken operation differs from a working camera.

export const FAILURE_MODES = [
  'hang', // never answers
  'refused', // nothing listens any more (the test calls stopListening() before the operation)
  'reset', // the connection is dropped as soon as the request arrives
  'cut', // the answer starts, then the connection is dropped mid-body
  'not-soap', // 200 text/plain
  'no-content', // 200 with an empty body
  'empty-body', // a SOAP envelope whose Body is empty
  'fault', // SOAP Fault ActionNotSupported
  'wrong-namespace', // an "envelope" in a namespace that is not SOAP's
  'html-500', // a web server error page
  'truncated', // a complete HTTP answer whose XML stops halfway
  'missing-fields', // a valid envelope whose response element is empty
] as const;
export type FailureMode = (typeof FAILURE_MODES)[number];

export class HostileCamera {
  private server: Server | null = null;
  private port = 0;
  /** Operations to break, and how. */
  readonly breaks = new Map<string, FailureMode>();
  readonly calls = new Map<string, number>();
  /** Each camera its own serial number: the gateway takes two cameras with one serial for one device. */
  readonly serial = `H-${randomUUID().slice(0, 8)}`;

  /** `ptz`: a PTZ camera (its service listed, a PTZ configuration in its profile, PTZ operations answered). */
  constructor(private readonly ptz = false) {}

  get baseUrl(): string {
    return `http://127.0.0.1:${this.port}`;
  }
  get deviceServiceUrl(): string {
    return `${this.baseUrl}/onvif/device_service`;
  }

  async start(): Promise<void> {
    const server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((r) => server.listen(this.port, '127.0.0.1', r));
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  /** Closes the port and every connection: later requests are refused. */
  async stopListening(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }

  private proper(op: string, now: number): string {
    switch (op) {
      case 'GetSystemDateAndTime':
        return R.systemDateAndTime(now);
      case 'GetDeviceInformation':
        return R.deviceInformation({
          manufacturer: 'Hostile',
          model: 'H-1',
          firmware: '6.6.6',
          serial: this.serial,
          hardwareId: 'h',
        });
      case 'GetServices':
        return R.services(this.baseUrl, { ptz: this.ptz });
      case 'GetCapabilities':
        return R.capabilities(this.baseUrl, { ptz: this.ptz });
      case 'GetProfiles':
        return R.profiles([{ token: 'Profile_1', name: 'main', width: 1920, height: 1080 }], { ptz: this.ptz });
      case 'GetNodes':
        return R.ptzNodes({ fov: true, homeSupported: true });
      case 'GetConfigurationOptions':
        return R.ptzConfigurationOptions({ fov: true });
      case 'GetPresets':
        return R.ptzPresets([{ token: '1', name: 'Gate', position: { pan: 0, tilt: 0, zoom: 0 } }]);
      case 'SetPreset':
        return R.ptzSetPreset('2');
      case 'ContinuousMove':
      case 'Stop':
      case 'GotoPreset':
      case 'RemovePreset':
      case 'GotoHomePosition':
      case 'RelativeMove':
        return R.ptzDone(op);
      case 'GetStreamUri':
        return R.streamUri('rtsp://127.0.0.1:1/main');
      case 'GetSnapshotUri':
        return R.snapshotUri(`${this.baseUrl}/snap.jpg`);
      case 'CreatePullPointSubscription':
        return R.createPullPoint(`${this.baseUrl}/onvif/subscription/${randomUUID()}`, now, now + 60_000);
      case 'PullMessages':
        return R.pullMessages(now, now + 60_000, [
          {
            topic: 'tns1:RuleEngine/CellMotionDetector/Motion',
            operation: 'Changed',
            utcMs: now,
            source: [['Rule', 'r']],
            data: [['IsMotion', 'true']],
          },
        ]);
      case 'Renew':
        return R.renew(now, now + 60_000);
      case 'Unsubscribe':
        return R.unsubscribe();
      case 'SystemReboot':
        return R.systemReboot();
      case 'SetSystemDateAndTime':
        return R.setSystemDateAndTime();
      default:
        return R.fault('env:Receiver', 'ter:ActionNotSupported', 'Optional Action Not Implemented');
    }
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req as AsyncIterable<Buffer>) chunks.push(c);
    const request = await parseSoapRequest(Buffer.concat(chunks).toString('utf8'));
    const op = request?.operation ?? '(unreadable)';
    this.calls.set(op, (this.calls.get(op) ?? 0) + 1);
    const soap = (status: number, xml: string): void =>
      void res.writeHead(status, { 'content-type': 'application/soap+xml; charset=utf-8' }).end(xml);
    const proper = this.proper(op, Date.now());
    switch (this.breaks.get(op)) {
      case undefined:
        return soap(proper.includes('<env:Fault>') ? 500 : 200, proper);
      case 'hang':
      case 'refused': // only reached if the test did not stop listening: behave as a dead camera
        return;
      case 'reset':
        req.socket.destroy();
        return;
      case 'cut': {
        res.writeHead(200, { 'content-type': 'application/soap+xml', 'content-length': Buffer.byteLength(proper) });
        res.write(proper.slice(0, proper.length >> 1));
        setTimeout(() => req.socket.destroy(), 20);
        return;
      }
      case 'not-soap':
        return void res.writeHead(200, { 'content-type': 'text/plain' }).end('OK');
      case 'no-content':
        return void res.writeHead(200, { 'content-type': 'application/soap+xml', 'content-length': 0 }).end();
      case 'empty-body':
        return soap(200, R.envelope(''));
      case 'fault':
        return soap(500, R.fault('env:Receiver', 'ter:ActionNotSupported', 'Optional Action Not Implemented'));
      case 'wrong-namespace':
        return soap(
          200,
          proper.replace('xmlns:env="http://www.w3.org/2003/05/soap-envelope"', 'xmlns:env="urn:example:not-soap"'),
        );
      case 'html-500':
        return void res
          .writeHead(500, { 'content-type': 'text/html' })
          .end('<html><body><h1>500 Internal Server Error</h1></body></html>');
      case 'truncated':
        return soap(200, proper.slice(0, proper.length >> 1));
      case 'missing-fields':
        return soap(200, R.envelope(`<tds:${op}Response/>`));
    }
  }
}
