import type { Config } from './schema.js';

export type CameraConfig = Config['cameras'][number];

/**
 * The cameras[] entry of an adopted device, matched by its device service URL (the one key both
 * the file and the adopted camera have); null for a camera found by discovery and not configured.
 */
export function cameraConfigLookup(
  cameras: readonly CameraConfig[],
  onvifUrlOf: (deviceId: string) => string | null,
): (deviceId: string) => CameraConfig | null {
  return (deviceId) => {
    const url = onvifUrlOf(deviceId);
    return url === null ? null : (cameras.find((c) => c.onvif_url === url) ?? null);
  };
}
