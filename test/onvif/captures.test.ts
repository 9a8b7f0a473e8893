import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OnvifSession, pickMainAndSub } from '../../src/onvif/library.js';
import { fault } from '../../src/onvif/simulator/responses.js';

// Real firmware answers, replayed over HTTP to the real adapter (library parsing + our mapping),
// checked against values read from the same files with plain regular expressions.

const CAPTURES = path.resolve(import.meta.dirname, '../../../shared/onvif-captures/easy_onvif_workspace');
const present = existsSync(CAPTURES);
if (!present)
  console.log(
    `skipping the capture replay tests: ${CAPTURES} is absent (it lives in ../shared, outside the repository)`,
  );

const cameras = present
  ? readdirSync(CAPTURES).filter((d) =>
      existsSync(path.join(CAPTURES, d, 'device_management/GetDeviceInformationResponse.xml')),
    )
  : [];

const read = (dir: string, file: string): string | null => {
  const f = path.join(CAPTURES, dir, file);
  return existsSync(f) ? readFileSync(f, 'utf8') : null;
};
const tag = (xml: string | null, name: string): string | null => {
  const m = xml ? new RegExp(`<(?:\\w+:)?${name}>([^<]*)</(?:\\w+:)?${name}>`).exec(xml) : null;
  return m ? m[1]!.trim().replace(/&amp;/g, '&') || null : null;
};

/** Answers each ONVIF operation with the capture of that camera, or a "not implemented" fault. */
function replay(dir: string): Server {
  return createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const op = /<(?:\w+:)?(Get\w+|SystemReboot)[\s/>]/.exec(
        body.replace(
          /<[\w:]*(Envelope|Header|Body|Security|UsernameToken|Username|Password|Nonce|Created|To)\b[^>]*>/g,
          '',
        ),
      )?.[1];
      const media2 = body.includes('http://www.onvif.org/ver20/media/wsdl');
      const folder =
        op && /Profiles|StreamUri|SnapshotUri/.test(op) ? (media2 ? 'media2' : 'media1') : 'device_management';
      const xml = op ? read(dir, `${folder}/${op}Response.xml`) : null;
      res
        .writeHead(xml ? 200 : 500, { 'content-type': 'application/soap+xml' })
        .end(xml ?? fault('env:Receiver', 'ter:ActionNotSupported', 'Optional Action Not Implemented'));
    });
  });
}

describe.skipIf(!present)('real camera captures through OnvifSession', () => {
  const servers = new Map<string, { server: Server; url: string }>();
  beforeAll(async () => {
    for (const dir of cameras) {
      const server = replay(dir);
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      servers.set(dir, {
        server,
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/onvif/device_service`,
      });
    }
  });
  afterAll(async () => {
    for (const { server } of servers.values()) await new Promise((r) => server.close(r));
  });

  it('has captures to check', () => {
    expect(cameras.length).toBeGreaterThanOrEqual(5);
  });

  it.each(cameras)('%s: device information, profiles, stream and snapshot URIs', async (dir) => {
    const s = await OnvifSession.connect(
      { url: servers.get(dir)!.url, username: 'admin', password: 'x' },
      { callTimeoutMs: 3000 },
    );
    try {
      const d = await s.describe();
      const info = read(dir, 'device_management/GetDeviceInformationResponse.xml');
      expect(d.manufacturer).toBe(tag(info, 'Manufacturer'));
      expect(d.model).toBe(tag(info, 'Model'));
      expect(d.firmwareVersion).toBe(tag(info, 'FirmwareVersion'));
      expect(d.serialNumber).toBe(tag(info, 'SerialNumber'));

      const media = d.media2 ? 'media2' : 'media1';
      const profilesXml = read(dir, `${media}/GetProfilesResponse.xml`) ?? '';
      const tokens = [...profilesXml.matchAll(/<(?:\w+:)?Profiles\b[^>]*\btoken="([^"]+)"/g)].map((m) => m[1]);
      expect(d.profiles.map((p) => p.token)).toEqual(tokens);
      expect(d.profiles.length).toBeGreaterThan(0);
      const { main, sub } = pickMainAndSub(d.profiles);
      expect(main).not.toBeNull();
      expect((main!.width ?? 0) * (main!.height ?? 0)).toBeGreaterThanOrEqual((sub!.width ?? 0) * (sub!.height ?? 0));

      const streamXml = read(dir, `${media}/GetStreamUriResponse.xml`);
      if (streamXml) expect(await s.streamUri(main!.token)).toBe(tag(streamXml, 'Uri'));
      else await expect(s.streamUri(main!.token)).rejects.toThrow();
      const snapXml = read(dir, `${media}/GetSnapshotUriResponse.xml`);
      if (snapXml) expect(await s.snapshotUri(main!.token)).toBe(tag(snapXml, 'Uri'));
    } finally {
      s.close();
    }
  });
});
