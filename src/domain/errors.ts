// Errors that cross part boundaries. The API maps each to a status and code in one place
// (src/api/errors.ts); other callers (MQTT commands) map them their own way.

export class NotFoundError extends Error {
  override readonly name = 'NotFoundError';
  constructor(
    readonly resource: 'device' | 'recording' | 'alert' | 'thumbnail',
    readonly id: string,
  ) {
    super(`${resource} ${id} not found`);
  }
}

/** The device cannot take requests now (offline, unauthorized, or the part that drives it is absent). */
export class DeviceUnavailableError extends Error {
  override readonly name = 'DeviceUnavailableError';
}

/** The device answered a command with an error. */
export class DeviceCommandError extends Error {
  override readonly name = 'DeviceCommandError';
}
