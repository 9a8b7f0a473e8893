import type { ControlAction, ControlRequest } from '../domain/types.js';
import { DeviceUnavailableError } from '../domain/errors.js';

// What the API asks other parts to do. Implementations are passed in by main.ts.

export type StreamProfile = 'main' | 'sub';

export interface DeviceControl {
  /** Carries out the action on the camera and returns the finished, stored request. */
  run(deviceId: string, action: ControlAction): Promise<ControlRequest>;
}

export interface StreamAddresses {
  /** A time-limited rtsp:// address for the device's live stream through the gateway relay. */
  issue(deviceId: string, profile: StreamProfile): Promise<{ url: string; expiresAt: number }>;
}

/** Until camera control is wired in, every device answers "unavailable" (409). */
export const controlNotAvailable: DeviceControl = {
  run: () => Promise.reject(new DeviceUnavailableError('device control is not available on this gateway yet')),
};

/** Until the RTSP relay is wired in, no stream address can be given (409). */
export const streamsNotAvailable: StreamAddresses = {
  issue: () => Promise.reject(new DeviceUnavailableError('live streams are not available on this gateway yet')),
};
