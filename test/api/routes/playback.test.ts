import { createHash } from 'node:crypto';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TicketSigner } from '../../../src/media/ticket.js';
import { SecretBox } from '../../../src/platform/secret-box.js';
import { startTestGateway, type TestGateway } from '../../support/gateway.js';

// GET /v1/recordings/{id}/play?ticket=…, the playback_url of a recording, against the started
// gateway over HTTPS: no Authorization header, the ticket is the credential, and each way of
// getting the ticket wrong has its own clear answer.

let t: TestGateway;
let clip: Buffer;
/** The gateway's own ticket key, read from its data_dir: tickets no API call would hand out. */
let signer: TicketSigner;
const logLines: string[] = [];

interface RecordingJson {
  id: string;
  playback_url: string | null;
  playback_expires_at: string | null;
  download_url: string;
}
interface ErrorJson {
  error: string;
  error_description: string;
}

function addRecording(id: string, bytes: Buffer): void {
  const fileName = `cam-p/${id}.mp4`;
  writeFileSync(path.join(t.dataDir, 'recordings', fileName), bytes);
  const startedAt = Date.UTC(2026, 10, 20, 12);
  t.gw.store.insertRecording({
    id,
    deviceId: 'cam-p',
    eventType: 'motion',
    startedAt,
    endedAt: startedAt + 10_000,
    sizeBytes: bytes.length,
    fileName,
    alertId: null,
  });
}

async function playbackUrl(id: string): Promise<string> {
  const res = await t.request(`/v1/recordings/${id}`, { headers: await t.auth('recordings:read') });
  expect(res.status).toBe(200);
  return (res.json() as RecordingJson).playback_url!;
}

const ticketOf = (url: string) => new URL(url, 'https://x').searchParams.get('ticket')!;
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

beforeAll(async () => {
  t = await startTestGateway({}, { logLines });
  signer = TicketSigner.openInDir(t.dataDir, SecretBox.openInDir(t.dataDir));
  t.gw.store.upsertDevice({
    id: 'cam-p',
    name: 'Porch',
    type: 'camera',
    status: 'online',
    model: null,
    manufacturer: null,
    firmwareVersion: null,
    lastSeenAt: Date.now(),
  });
  mkdirSync(path.join(t.dataDir, 'recordings', 'cam-p'), { recursive: true });
  clip = Buffer.alloc(250_000);
  for (let i = 0; i < clip.length; i++) clip[i] = (i * 13 + (i >> 9)) & 0xff;
  addRecording('rec-a', clip);
  addRecording('rec-b', clip.subarray(0, 1000));
});
afterAll(() => t.stop());

describe('playback_url on recording objects', () => {
  it('is a path on this origin with a ticket for that recording, and an expiry recording.playback_ttl_s away (up to a minute more)', async () => {
    const before = Date.now();
    const res = await t.request('/v1/recordings/rec-a', { headers: await t.auth('recordings:read') });
    const rec = res.json() as RecordingJson;
    expect(rec.playback_url).toMatch(/^\/v1\/recordings\/rec-a\/play\?ticket=[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/);
    const expires = Date.parse(rec.playback_expires_at!);
    expect(expires).toBeGreaterThanOrEqual(before + t.config.recording.playback_ttl_s * 1000);
    expect(expires).toBeLessThanOrEqual(Date.now() + t.config.recording.playback_ttl_s * 1000 + 60_000);
    expect(expires % 60_000).toBe(0);
    expect(signer.verifyPlayback(ticketOf(rec.playback_url!), Date.now(), 'rec-a')).toEqual({
      recordingId: 'rec-a',
      expiresAt: expires,
    });
  });

  it('is on every recording of a list, each with its own ticket', async () => {
    const res = await t.request('/v1/devices/cam-p/recordings', { headers: await t.auth('recordings:read') });
    const list = (res.json() as { data: RecordingJson[] }).data;
    expect(list.map((r) => r.id).sort()).toEqual(['rec-a', 'rec-b']);
    for (const r of list)
      expect(signer.verifyPlayback(ticketOf(r.playback_url!), Date.now(), r.id).recordingId).toBe(r.id);
  });
});

describe('GET /v1/recordings/{id}/play', () => {
  it('serves the whole clip without an Authorization header, with the playback headers', async () => {
    const res = await t.request(await playbackUrl('rec-a'));
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('video/mp4');
    expect(res.headers['content-length']).toBe(String(clip.length));
    expect(res.headers['accept-ranges']).toBe('bytes');
    expect(res.headers.etag).toMatch(/^W\/"/);
    expect(new Date(String(res.headers['last-modified'])).getTime()).toBeGreaterThan(0);
    expect(res.headers['cache-control']).toBe('private, no-store');
    expect(res.headers['referrer-policy']).toBe('no-referrer');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(sha(res.body)).toBe(sha(clip));
  });

  it('serves single byte ranges with 206, byte-exact against the file', async () => {
    const url = await playbackUrl('rec-a');
    const cases: Array<[string, number, number]> = [
      ['bytes=0-1', 0, 1],
      ['bytes=0-99', 0, 99],
      ['bytes=1000-', 1000, clip.length - 1],
      ['bytes=-500', clip.length - 500, clip.length - 1],
      ['bytes=249990-400000', 249_990, clip.length - 1],
      ['bytes=123456-123456', 123_456, 123_456],
    ];
    for (const [range, start, end] of cases) {
      const res = await t.request(url, { headers: { range } });
      expect(res.status, range).toBe(206);
      expect(res.headers['content-range']).toBe(`bytes ${start}-${end}/${clip.length}`);
      expect(res.headers['content-length']).toBe(String(end - start + 1));
      expect(res.headers['content-type']).toBe('video/mp4');
      expect(Buffer.compare(res.body, clip.subarray(start, end + 1)), range).toBe(0);
    }
  });

  it('answers 416 with the size for a bytes range past the end or one it cannot read', async () => {
    const url = await playbackUrl('rec-a');
    for (const range of [
      `bytes=${clip.length}-`,
      'bytes=99999999999999999999-',
      'bytes=abc',
      'bytes=9-3',
      'bytes=-0',
      'bytes=',
      'bytes=--1',
    ]) {
      const res = await t.request(url, { headers: { range } });
      expect(res.status, range).toBe(416);
      expect(res.headers['content-range']).toBe(`bytes */${clip.length}`);
      expect(res.json()).toEqual({
        error: 'range_not_satisfiable',
        error_description: `no byte range of the file (${clip.length} bytes) can be read from Range: ask for bytes=first-last, bytes=first- or bytes=-suffix`,
      });
      expect(res.headers['cache-control']).toBe('private, no-store');
    }
  });

  it('serves the whole file for several ranges and for another unit (RFC 9110 lets it ignore them)', async () => {
    const url = await playbackUrl('rec-a');
    for (const range of ['bytes=0-1,5-9', 'bytes=0-10,20-30,40-', 'items=0-10', 'pages=1', '\u00ff']) {
      const res = await t.request(url, { headers: { range } });
      expect(res.status, range).toBe(200);
      expect(res.headers['content-range'], range).toBeUndefined();
      expect(sha(res.body), range).toBe(sha(clip));
    }
  });

  it('answers HEAD with the headers and no body, a range too', async () => {
    const url = await playbackUrl('rec-a');
    const whole = await t.request(url, { method: 'HEAD' });
    expect(whole.status).toBe(200);
    expect(whole.headers['content-length']).toBe(String(clip.length));
    expect(whole.headers['content-type']).toBe('video/mp4');
    expect(whole.body.length).toBe(0);
    const part = await t.request(url, { method: 'HEAD', headers: { range: 'bytes=10-19' } });
    expect(part.status).toBe(206);
    expect(part.headers['content-range']).toBe(`bytes 10-19/${clip.length}`);
    expect(part.body.length).toBe(0);
  });

  it('honours If-None-Match (304) and If-Range', async () => {
    const url = await playbackUrl('rec-a');
    const etag = String((await t.request(url, { method: 'HEAD' })).headers.etag);
    const notModified = await t.request(url, { headers: { 'if-none-match': etag } });
    expect(notModified.status).toBe(304);
    expect(notModified.body.length).toBe(0);
    expect((await t.request(url, { headers: { range: 'bytes=0-9', 'if-range': etag } })).status).toBe(206);
    expect((await t.request(url, { headers: { range: 'bytes=0-9', 'if-range': '"another"' } })).status).toBe(200);
    const lastModified = String((await t.request(url, { method: 'HEAD' })).headers['last-modified']);
    expect((await t.request(url, { headers: { 'if-modified-since': lastModified } })).status).toBe(304);
  });

  it('answers 412 when If-Match does not hold', async () => {
    const res = await t.request(await playbackUrl('rec-a'), { headers: { 'if-match': '"another"' } });
    expect(res.status).toBe(412);
    expect(res.json()).toEqual({
      error: 'precondition_failed',
      error_description: 'If-Match or If-Unmodified-Since does not hold for the file',
    });
  });

  const refused = async (url: string, status: number, error: string, description: RegExp) => {
    const res = await t.request(url);
    expect(res.status, res.text).toBe(status);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const body = res.json() as ErrorJson;
    expect(body.error).toBe(error);
    expect(body.error_description).toMatch(description);
    expect(res.headers['cache-control']).toBe('private, no-store');
    expect(res.headers['referrer-policy']).toBe('no-referrer');
  };

  it('refuses a missing ticket, and an access token instead of one', async () => {
    await refused('/v1/recordings/rec-a/play', 400, 'invalid_request', /ticket is required/);
    const token = await t.token('recordings:read');
    await refused(
      `/v1/recordings/rec-a/play?access_token=${token}`,
      400,
      'invalid_request',
      /unknown query parameter access_token/,
    );
    const withHeader = await t.request('/v1/recordings/rec-a/play', { headers: { authorization: `Bearer ${token}` } });
    expect(withHeader.status).toBe(400); // the bearer token does not stand in for the ticket
  });

  it('refuses an expired ticket with 401, naming where to get a new one', async () => {
    const expired = signer.issuePlayback({
      recordingId: 'rec-a',
      expiresAt: Math.floor(Date.now() / 1000) * 1000 - 1000,
    });
    await refused(
      `/v1/recordings/rec-a/play?ticket=${expired}`,
      401,
      'expired_ticket',
      /expired: get a new one from GET \/v1\/recordings\/\{recording_id\}/,
    );
  });

  it('refuses the ticket of another recording', async () => {
    const other = ticketOf(await playbackUrl('rec-b'));
    await refused(`/v1/recordings/rec-a/play?ticket=${other}`, 403, 'invalid_ticket', /for another recording/);
    // Also when that other recording's ticket has expired: which recording comes first.
    const stale = signer.issuePlayback({ recordingId: 'rec-b', expiresAt: Date.now() - 60_000 });
    await refused(`/v1/recordings/rec-a/play?ticket=${stale}`, 403, 'invalid_ticket', /for another recording/);
  });

  it('refuses a stream ticket, a recorder ticket among them', async () => {
    const expiresAt = Date.now() + 60_000;
    for (const ticket of [
      signer.issue({ deviceId: 'rec-a', profile: 'main', expiresAt }),
      signer.issue({ deviceId: 'cam-p', profile: 'sub', expiresAt, recorder: true }),
    ]) {
      await refused(
        `/v1/recordings/rec-a/play?ticket=${ticket}`,
        403,
        'invalid_ticket',
        /stream ticket does not play recordings/,
      );
    }
  });

  it('refuses tampered, foreign and malformed tickets', async () => {
    const good = ticketOf(await playbackUrl('rec-a'));
    const [body, mac] = good.split('.') as [string, string];
    const longer = Buffer.from(body, 'base64url');
    longer.writeUInt32BE(longer.readUInt32BE(3) + 86_400, 3); // a day more under the same MAC
    await refused(
      `/v1/recordings/rec-a/play?ticket=${longer.toString('base64url')}.${mac}`,
      403,
      'invalid_ticket',
      /altered/,
    );
    const renamed = Buffer.from(body, 'base64url');
    renamed[renamed.length - 1] = 'b'.charCodeAt(0); // rec-a → rec-b under rec-a's MAC
    await refused(
      `/v1/recordings/rec-b/play?ticket=${renamed.toString('base64url')}.${mac}`,
      403,
      'invalid_ticket',
      /altered/,
    );
    const foreign = new TicketSigner(Buffer.alloc(32, 7)).issuePlayback({
      recordingId: 'rec-a',
      expiresAt: Date.now() + 60_000,
    });
    await refused(
      `/v1/recordings/rec-a/play?ticket=${foreign}`,
      403,
      'invalid_ticket',
      /key this gateway no longer has/,
    );
    for (const junk of ['x', `${body}.`, `${body}${mac}`, encodeURIComponent(`${good}/../x`), 'a'.repeat(300)]) {
      await refused(
        `/v1/recordings/rec-a/play?ticket=${junk}`,
        junk.length > 256 ? 400 : 403,
        junk.length > 256 ? 'invalid_request' : 'invalid_ticket',
        /malformed|ticket/,
      );
    }
  });

  it('refuses the ticket twice, or beside another query parameter in any order', async () => {
    const ticket = ticketOf(await playbackUrl('rec-a'));
    await refused(`/v1/recordings/rec-a/play?ticket=${ticket}&ticket=${ticket}`, 400, 'invalid_request', /ticket/);
    await refused(
      `/v1/recordings/rec-a/play?t=10&ticket=${ticket}`,
      400,
      'invalid_request',
      /unknown query parameter t\b/,
    );
    await refused(
      `/v1/recordings/rec-a/play?ticket=${ticket}&t=10`,
      400,
      'invalid_request',
      /unknown query parameter t\b/,
    );
    // The ticket in the path, where /live puts stream tickets: not this route.
    expect((await t.request(`/v1/recordings/rec-a/play/${ticket}`)).status).toBe(404);
    // A media fragment (#t=…) never reaches the server: the address plays as handed out.
    expect((await t.request(`/v1/recordings/rec-a/play?ticket=${ticket}#t=5`)).status).toBe(200);
  });

  it('answers 404 for a recording deleted (or whose file went) after the ticket was minted', async () => {
    addRecording('rec-gone', clip.subarray(0, 100));
    const url = await playbackUrl('rec-gone');
    expect((await t.request(url)).status).toBe(200);
    t.gw.store.deleteRecording('rec-gone');
    await refused(url, 404, 'not_found', /rec-gone/);
    t.gw.store.insertRecording({
      id: 'rec-nofile',
      deviceId: 'cam-p',
      eventType: 'motion',
      startedAt: 1,
      endedAt: 2,
      sizeBytes: 1,
      fileName: 'cam-p/missing.mp4',
      alertId: null,
    });
    await refused(await playbackUrl('rec-nofile'), 404, 'not_found', /rec-nofile/);
  });

  it('does not let a playback ticket open a live stream', async () => {
    const ticket = ticketOf(await playbackUrl('rec-a'));
    expect((await t.request(`/live/${ticket}/index.m3u8`)).status).toBe(404);
    expect(
      (
        await t.request(`/live/${ticket}/whep`, {
          method: 'POST',
          headers: { 'content-type': 'application/sdp' },
          body: 'v=0\r\n',
        })
      ).status,
    ).toBe(404);
  });

  it('never writes a whole ticket to the log', async () => {
    const ticket = ticketOf(await playbackUrl('rec-b'));
    logLines.length = 0;
    await t.request(`/v1/recordings/rec-a/play?ticket=${ticket}`); // refused: logged at debug
    await expect.poll(() => logLines.some((l) => l.includes('playback ticket refused'))).toBe(true);
    const line = JSON.parse(logLines.find((l) => l.includes('playback ticket refused'))!) as {
      url: string;
      reason: string;
    };
    expect(line).toMatchObject({
      url: `/v1/recordings/rec-a/play?ticket=${ticket.slice(0, 6)}…`,
      reason: 'other_subject',
    });
    expect(logLines.join('\n')).not.toContain(ticket.slice(6, 30));
  });

  it('cuts the ticket short in the error log of a request that fails on the server', async () => {
    // A file the gateway cannot read (a symbolic link to itself: ELOOP): 500, logged with its URL.
    symlinkSync('loop.mp4', path.join(t.dataDir, 'recordings', 'cam-p', 'loop.mp4'));
    t.gw.store.insertRecording({
      id: 'rec-loop',
      deviceId: 'cam-p',
      eventType: 'motion',
      startedAt: 1,
      endedAt: 2,
      sizeBytes: 1,
      fileName: 'cam-p/loop.mp4',
      alertId: null,
    });
    const url = await playbackUrl('rec-loop');
    logLines.length = 0;
    const res = await t.request(url);
    expect(res.status).toBe(500);
    expect((res.json() as ErrorJson).error).toBe('server_error');
    await expect.poll(() => logLines.some((l) => l.includes('request failed'))).toBe(true);
    const ticket = ticketOf(url);
    expect(logLines.join('\n')).toContain(`/v1/recordings/rec-loop/play?ticket=${ticket.slice(0, 6)}…`);
    expect(logLines.join('\n')).not.toContain(ticket.slice(6, 30));
  });
});
