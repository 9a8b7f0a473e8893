import type { FileHandle } from 'node:fs/promises';

/**
 * `length` bytes at `offset` of an open file, fewer only where the file ends first: a positional
 * read of a regular file comes back short only at its end, so one read is enough.
 */
export async function readBytes(handle: FileHandle, offset: number, length: number): Promise<Buffer> {
  // Unzeroed: only the bytes read are handed out (export reads the media in 256 kB chunks).
  const buf = Buffer.allocUnsafe(length);
  const { bytesRead } = await handle.read(buf, 0, length, offset);
  return buf.subarray(0, bytesRead);
}
