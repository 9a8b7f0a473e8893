import { gbText } from './format.js';
import type { SystemDisk, SystemStatus } from './types.js';

// What the System screen says of GET /v1/system's figures: the warnings in plain words, and each
// disk's name and share used. Pure, so tests run it without a browser.

/** At this temperature a Raspberry Pi starts slowing itself down (its soft limit is 80 °C to 85 °C). */
export const HOT_C = 80;
/** Less memory available than this share of it, and the kernel soon swaps or stops processes. */
export const LOW_MEMORY_SHARE = 0.1;

export const DISK_LABELS: Record<SystemDisk['name'], string> = {
  data: 'Gateway data',
  clips: 'Event clips',
  footage: 'Continuous footage',
};

/** The disk's share in use, 0–1, from its size and free space; null while it is missing. */
export function usedShare(disk: SystemDisk): number | null {
  if (disk.total_bytes === null || disk.free_bytes === null || disk.total_bytes <= 0) return null;
  return Math.min(1, Math.max(0, (disk.total_bytes - disk.free_bytes) / disk.total_bytes));
}

function diskWarning(disk: SystemDisk): string | null {
  const label = `${DISK_LABELS[disk.name]} (${disk.path})`;
  switch (disk.state) {
    case 'ok':
      return null;
    case 'low':
      return `${label} is nearly full${disk.free_bytes === null ? '' : `: ${gbText(disk.free_bytes)} free`}. Old recordings are removed to make room; if it stays full, use a larger disk or keep recordings for fewer days.`;
    case 'read_only':
      return `${label} takes no writes (it is read-only): nothing new is saved there. Check the disk; it may be failing.`;
    case 'missing':
      return `${label} is missing: is the disk plugged in and mounted?`;
    case 'failed':
      return `${label} refuses writes: nothing new is saved there. Check the disk and the gateway's log.`;
  }
}

/** What the owner should know at once, in plain words; empty when all is well. */
export function systemWarnings(status: SystemStatus): string[] {
  const warnings: string[] = [];
  const { host } = status;
  if (host.temperature_c !== null && host.temperature_c >= HOT_C)
    warnings.push(
      `The gateway is hot (${host.temperature_c.toFixed(0)} °C): it slows itself down from about ${HOT_C} °C. Give it air, shade or a fan.`,
    );
  if (host.memory_available_bytes < host.memory_total_bytes * LOW_MEMORY_SHARE)
    warnings.push(
      `Memory is nearly used up (${Math.floor((host.memory_available_bytes / host.memory_total_bytes) * 100)} % available): the gateway may slow down or be stopped. Fewer cameras, or detection on fewer of them, lighten it.`,
    );
  for (const disk of status.storage) {
    const warning = diskWarning(disk);
    if (warning) warnings.push(warning);
  }
  return warnings;
}
