import { spawn } from 'node:child_process';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

// The simulated camera's snapshot URI (GET /snapshot.jpg), guarded by HTTP Digest (MD5, qop=auth)
// as cameras do it: a request without credentials gets a 401 challenge. The picture is the test
// pattern, made once by ffmpeg.

const md5 = (s: string) => createHash('md5').update(s, 'utf8').digest('hex');
const REALM = 'SimCam';
const MAX_NONCES = 64;

export class SimulatedSnapshot {
  private picture: Promise<Buffer> | null = null;
  private readonly nonces: string[] = [];

  constructor(
    private readonly account: () => { username: string; password: string },
    private readonly ffmpegPath = 'ffmpeg',
  ) {}

  /** The JPEG served (640x360 test pattern). */
  jpeg(): Promise<Buffer> {
    this.picture ??= new Promise((resolve, reject) => {
      const child = spawn(
        this.ffmpegPath,
        ['-v', 'error', '-f', 'lavfi', '-i', 'testsrc2=size=640x360:rate=1', '-frames:v', '1', '-f', 'mjpeg', 'pipe:1'],
        { stdio: ['ignore', 'pipe', 'ignore'] },
      );
      const chunks: Buffer[] = [];
      child.stdout.on('data', (c: Buffer) => chunks.push(c));
      child.on('error', reject);
      child.on('close', (code) =>
        code === 0 ? resolve(Buffer.concat(chunks)) : reject(new Error(`ffmpeg exited with ${code}`)),
      );
    });
    return this.picture;
  }

  async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!this.authorized(req.headers.authorization, req.method ?? 'GET')) {
      const nonce = randomBytes(16).toString('hex');
      this.nonces.push(nonce);
      if (this.nonces.length > MAX_NONCES) this.nonces.shift();
      res
        .writeHead(401, { 'www-authenticate': `Digest realm="${REALM}", qop="auth", nonce="${nonce}", algorithm=MD5` })
        .end();
      return;
    }
    const jpeg = await this.jpeg();
    res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': jpeg.length }).end(jpeg);
  }

  private authorized(header: string | undefined, method: string): boolean {
    if (!header || !/^Digest\s/i.test(header)) return false;
    const p = new Map<string, string>();
    for (const m of header.matchAll(/([a-z]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))/gi))
      p.set(m[1]!.toLowerCase(), m[2] ?? m[3] ?? '');
    const { username, password } = this.account();
    const nonce = p.get('nonce') ?? '';
    if (p.get('username') !== username || p.get('realm') !== REALM || !this.nonces.includes(nonce)) return false;
    const ha1 = md5(`${username}:${REALM}:${password}`);
    const ha2 = md5(`${method}:${p.get('uri') ?? ''}`);
    const expected =
      p.get('qop') === 'auth'
        ? md5(`${ha1}:${nonce}:${p.get('nc') ?? ''}:${p.get('cnonce') ?? ''}:auth:${ha2}`)
        : md5(`${ha1}:${nonce}:${ha2}`);
    const given = Buffer.from(p.get('response') ?? '', 'latin1');
    return given.length === expected.length && timingSafeEqual(given, Buffer.from(expected, 'latin1'));
  }
}
