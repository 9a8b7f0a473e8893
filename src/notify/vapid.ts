import { createECDH } from 'node:crypto';
import path from 'node:path';
import webPush from 'web-push';
import { createOnce } from '../platform/durable-files.js';
import type { SecretBox } from '../platform/secret-box.js';

// The gateway's VAPID key pair (RFC 8292), made on first start and kept sealed in data_dir, and
// each push's request as web-push's generateRequestDetails makes it (RFC 8291 aes128gcm
// encryption); the request itself is sent by src/notify/sender.ts.

const KEY_FILE = 'push-vapid.key';
const KEY_LABEL = 'push-vapid';

export interface VapidKeys {
  /** base64url of the uncompressed P-256 point: what browsers take as applicationServerKey. */
  publicKey: string;
  /** base64url of the 32-byte private scalar. */
  privateKey: string;
}

/** data_dir/push-vapid.key, made on first use; its private key sealed with the data_dir's key. */
export function openVapidKeys(dataDir: string, secretBox: SecretBox): VapidKeys {
  const sealed = createOnce(path.join(dataDir, KEY_FILE), () =>
    secretBox.seal(Buffer.from(webPush.generateVAPIDKeys().privateKey, 'base64url'), KEY_LABEL),
  ).toString('utf8');
  const privateKey = secretBox.open(sealed, KEY_LABEL);
  const ecdh = createECDH('prime256v1');
  ecdh.setPrivateKey(privateKey);
  return { publicKey: ecdh.getPublicKey('base64url', 'uncompressed'), privateKey: privateKey.toString('base64url') };
}

/** One push's HTTP request, ready to send. */
export interface PushRequest {
  endpoint: string;
  headers: Record<string, string>;
  body: Buffer;
}

/** The JWT's life (RFC 8292 §2: at most 24 hours); one is signed per push service and reused for a while. */
const JWT_LIFE_S = 12 * 3600;
const JWT_REUSE_MS = 3600_000;

/**
 * Encrypts pushes and signs their VAPID header. A push service's origin gets one JWT an hour,
 * reused for every push to it meanwhile: an ES256 signature per push is CPU a Pi need not spend.
 */
export class PushEncoder {
  private readonly signed = new Map<string, { authorization: string; until: number }>();

  constructor(
    private readonly keys: VapidKeys,
    private readonly subject: string,
    private readonly now: () => number = Date.now,
  ) {}

  request(
    subscription: { endpoint: string; p256dh: string; auth: string },
    payload: string,
    headers: { ttlS: number; topic: string; urgency: 'high' | 'normal' },
  ): PushRequest {
    const details = webPush.generateRequestDetails(
      { endpoint: subscription.endpoint, keys: { p256dh: subscription.p256dh, auth: subscription.auth } },
      payload,
      {
        // No vapidDetails: the Authorization header is this class's own, signed once per push service.
        TTL: Math.max(0, Math.floor(headers.ttlS)),
        topic: headers.topic,
        urgency: headers.urgency,
        headers: { Authorization: this.authorization(new URL(subscription.endpoint).origin) },
      },
    );
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(details.headers)) out[k] = String(v);
    return { endpoint: subscription.endpoint, headers: out, body: details.body };
  }

  private authorization(audience: string): string {
    const now = this.now();
    const kept = this.signed.get(audience);
    if (kept && kept.until > now) return kept.authorization;
    const { Authorization } = webPush.getVapidHeaders(
      audience,
      this.subject,
      this.keys.publicKey,
      this.keys.privateKey,
      'aes128gcm',
      Math.floor(now / 1000) + JWT_LIFE_S,
    );
    if (this.signed.size >= 64) this.signed.clear();
    this.signed.set(audience, { authorization: Authorization, until: now + JWT_REUSE_MS });
    return Authorization;
  }
}
