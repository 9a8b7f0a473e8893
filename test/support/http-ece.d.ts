// The part of http_ece (no types of its own) the push tests use: RFC 8188 decryption of an
// aes128gcm body with the receiver's ECDH key and the subscription's auth secret (RFC 8291).
declare module 'http_ece' {
  import type { ECDH } from 'node:crypto';

  export function decrypt(
    buffer: Buffer,
    params: { version: 'aes128gcm'; privateKey: ECDH; authSecret: string },
  ): Buffer;
}
