import path from 'node:path';

/**
 * The absolute path a recording's stored file name (or its thumbnail's) points at, when that lies
 * inside the storage directory `root` (absolute); null when it would lead outside it.
 */
export function storedFile(root: string, fileName: string): string | null {
  const file = path.resolve(root, fileName);
  return file.startsWith(root + path.sep) ? file : null;
}
