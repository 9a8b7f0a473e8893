import type { ChangedField } from './camera-settings.js';
import type { DeviceStatus, EventType } from './types.js';

// The gateway's internal event bus: parts announce what happened; others (recorder, sync) listen.
// Synchronous and in-process; a listener that throws is reported, never allowed to break the sender.

export interface GatewayEvents {
  'device.status': { deviceId: string; status: DeviceStatus; previous: DeviceStatus | null; at: number };
  'camera.event': { deviceId: string; kind: EventType; phase: 'start' | 'stop'; at: number };
  /** The owner changed a camera's settings through the API: `fields`, those whose value in effect changed. */
  'camera.settings': { deviceId: string; fields: readonly ChangedField[]; at: number };
  /** The owner removed the device through the API (its status went offline first). */
  'device.removed': { deviceId: string; at: number };
}

type Listener<K extends keyof GatewayEvents> = (event: GatewayEvents[K]) => void;

export class EventBus {
  // Keyed by event name; the typed on/emit pair is what keeps payloads and names matched.
  private readonly listeners = new Map<keyof GatewayEvents, Set<(event: never) => void>>();

  constructor(private readonly onListenerError: (err: unknown, name: keyof GatewayEvents) => void) {}

  /** Subscribes; returns the function that unsubscribes. */
  on<K extends keyof GatewayEvents>(name: K, listener: Listener<K>): () => void {
    let set = this.listeners.get(name);
    if (!set) {
      set = new Set();
      this.listeners.set(name, set);
    }
    set.add(listener);
    const registered = set;
    return () => registered.delete(listener);
  }

  emit<K extends keyof GatewayEvents>(name: K, event: GatewayEvents[K]): void {
    const set = this.listeners.get(name) as Set<Listener<K>> | undefined;
    if (!set) return;
    for (const listener of [...set]) {
      try {
        listener(event);
      } catch (err) {
        this.onListenerError(err, name);
      }
    }
  }
}
