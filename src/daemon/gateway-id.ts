import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { Config } from '../config/schema.js';
import { createOnce } from '../platform/durable-files.js';

/** The gateway's stable id: from config, else generated once and kept in data_dir. */
export function gatewayId(config: Config): string {
  if (config.gateway.id) return config.gateway.id;
  return createOnce(
    path.join(config.gateway.data_dir, 'gateway-id'),
    () => `gw_${randomBytes(9).toString('base64url')}`,
    0o644,
  )
    .toString('utf8')
    .trim();
}
