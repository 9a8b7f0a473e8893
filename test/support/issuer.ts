import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';

export type JwksMode = 'ok' | 'error500' | 'garbage' | 'down';

interface Key {
  kid: string;
  alg: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

/**
 * A real test authorization server: jose key pairs and their JWKS served over HTTP on loopback.
 * Keys can be added (rotation) and the JWKS endpoint switched to failing modes.
 */
export class TestIssuer {
  mode: JwksMode = 'ok';
  fetches = 0;
  private readonly keys: Key[] = [];
  private server: Server | null = null;
  private port = 0;

  constructor(
    readonly issuer = 'https://auth.test.example/',
    readonly audience = 'edge-gateway-test',
  ) {}

  get jwksUri(): string {
    return `http://127.0.0.1:${this.port}/jwks.json`;
  }

  async addKey(
    alg: 'RS256' | 'ES256' | 'EdDSA',
    kid = `${alg.toLowerCase()}-${this.keys.length + 1}`,
    publish = true,
  ): Promise<Key> {
    const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
    const publicJwk = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' };
    const key = { kid, alg, privateKey, publicJwk };
    if (publish) this.keys.push(key);
    return key;
  }

  publish(key: Key): void {
    this.keys.push(key);
  }

  jwks(): { keys: JWK[] } {
    return { keys: this.keys.map((k) => k.publicJwk) };
  }

  async listen(port = 0): Promise<void> {
    this.server = createServer((req, res) => {
      this.fetches++;
      if (this.mode === 'error500') {
        res.writeHead(500).end('oops');
        return;
      }
      if (this.mode === 'garbage') {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"keys": [ this is not json');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(this.jwks()));
    });
    await new Promise<void>((resolve) => this.server?.listen(port, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** A valid RFC 9068 access token unless claims/header say otherwise; undefined values drop a claim. */
  async sign(
    opts: {
      key?: Key;
      scope?: string;
      claims?: Record<string, unknown>;
      header?: Record<string, unknown>;
      ttlS?: number;
    } = {},
  ): Promise<string> {
    const key = opts.key ?? this.keys[0];
    if (!key) throw new Error('no key');
    const now = Math.floor(Date.now() / 1000);
    const payload: Record<string, unknown> = {
      iss: this.issuer,
      aud: this.audience,
      sub: 'user-1',
      iat: now,
      exp: now + (opts.ttlS ?? 600),
      jti: `jti-${Math.random()}`,
      client_id: 'test-client',
      scope: opts.scope ?? 'devices:read',
      ...opts.claims,
    };
    for (const [k, v] of Object.entries(payload)) if (v === undefined) delete payload[k];
    return new SignJWT(payload)
      .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'at+jwt', ...opts.header })
      .sign(key.privateKey);
  }
}
