import type { BaseLogger } from 'pino';
import { DeviceCommandError, DeviceUnavailableError, NotSupportedError, UnknownPresetError } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import type { DevicePtz, PtzCommand } from '../domain/ptz.js';
import type { ControlRequest, Device } from '../domain/types.js';
import { CameraFaultError, CameraUnauthorizedError, CameraUnreachableError } from './errors.js';
import type { OnvifSession } from './library.js';

// Pan, tilt and zoom of online cameras (POST /v1/devices/{id}/control, the ptz_* actions). A
// request is checked against what the camera offers before anything is sent to it; the commands of
// one camera are sent one after the other, in the order they came (a release's Stop never overtakes
// the press's ContinuousMove); a move is stopped by the gateway after its timeout unless a newer
// command came first, so a phone that loses its connection mid-press never leaves a camera turning.

/** What PTZ reads and writes of the store: the presets a Device lists, kept up to date. */
export interface PtzStore {
  getDevice(id: string): Device | null;
  setCameraPtz(deviceId: string, ptz: DevicePtz | null): boolean;
}

export interface PtzControlOptions {
  /** The camera's session while the device is online; null otherwise. */
  sessionOf: (deviceId: string) => OnvifSession | null;
  store: PtzStore;
  logger: BaseLogger;
  /** Commands of one camera waiting behind the one being sent: more is a client gone astray. */
  maxWaiting?: number;
}

interface CameraLine {
  /** Settles when the last command queued so far is done. */
  tail: Promise<void>;
  waiting: number;
  /** The Stop that ends the current move, due at its timeout. */
  stopTimer: NodeJS.Timeout | null;
}

/** The stop at shutdown waits this long for a camera (one that does not answer must not hold it up). */
const SHUTDOWN_STOP_MS = 2000;

export class PtzControl {
  private readonly lines = new Map<string, CameraLine>();
  private stopped = false;

  constructor(private readonly opts: PtzControlOptions) {}

  /**
   * Carries out the command; `by` is who asked (the token's subject), for the log. Throws
   * DeviceUnavailableError (not online, too many waiting), NotSupportedError (a fixed camera, or
   * one without home or centring), UnknownPresetError, DeviceCommandError (the camera refused, did
   * not answer or dropped the connection). The result is for the answer only: it is not stored.
   */
  async run(deviceId: string, command: PtzCommand, by: string): Promise<ControlRequest> {
    const requestedAt = Date.now();
    this.check(deviceId, command);
    const line = this.lineOf(deviceId);
    if (line.waiting >= (this.opts.maxWaiting ?? 8))
      throw new DeviceUnavailableError(`too many PTZ commands waiting for device ${deviceId}`);
    const detail = details(command);
    try {
      await this.queue(line, () => this.send(deviceId, line, command));
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      this.opts.logger.warn({ deviceId, action: command.action, by, ...detail, err: message }, 'camera ptz failed');
      throw err;
    }
    this.opts.logger.info(
      { deviceId, action: command.action, by, ...detail, ms: Date.now() - requestedAt },
      'camera ptz',
    );
    return {
      id: newId('ctl'),
      deviceId,
      action: command.action,
      status: 'succeeded',
      requestedAt,
      completedAt: Date.now(),
      error: null,
    };
  }

  /** Sends the Stop of a move still running and forgets the camera (removed through the API). */
  async forget(deviceId: string): Promise<void> {
    await this.stopNow(deviceId);
    this.lines.delete(deviceId);
  }

  /** At shutdown: every camera still moving gets its Stop now (bounded), and no timer is left. */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all([...this.lines.keys()].map((id) => this.stopNow(id)));
  }

  private async stopNow(deviceId: string): Promise<void> {
    const line = this.lines.get(deviceId);
    if (!line?.stopTimer) return;
    clearTimeout(line.stopTimer);
    line.stopTimer = null;
    const session = this.opts.sessionOf(deviceId);
    if (!session) return;
    const timer = new Promise((r) => setTimeout(r, SHUTDOWN_STOP_MS).unref());
    await Promise.race([session.ptzStop(), timer]).catch(() => undefined);
  }

  /** What can be refused before anything is sent: the camera's state, what it offers, the preset. */
  private check(deviceId: string, command: PtzCommand): void {
    if (this.stopped) throw new DeviceUnavailableError('the gateway is stopping');
    const session = this.opts.sessionOf(deviceId);
    if (!session) {
      const status = this.opts.store.getDevice(deviceId)?.status ?? 'unknown';
      throw new DeviceUnavailableError(`device ${deviceId} is ${status}`);
    }
    const can = session.ptzAbilities;
    if (!can) throw new NotSupportedError(`device ${deviceId} has no pan, tilt or zoom (a fixed camera)`);
    if (command.action === 'ptz_home' && !can.homeSupported)
      throw new NotSupportedError(`device ${deviceId} has no home position`);
    if (command.action === 'ptz_center' && !can.canCenter)
      throw new NotSupportedError(`device ${deviceId} cannot centre on a point (no field-of-view translation space)`);
    if (command.action === 'ptz_goto_preset' || command.action === 'ptz_remove_preset') {
      const presets = this.opts.store.getDevice(deviceId)?.ptz?.presets ?? [];
      if (!presets.some((p) => p.token === command.preset)) throw new UnknownPresetError(command.preset);
    }
  }

  private lineOf(deviceId: string): CameraLine {
    let line = this.lines.get(deviceId);
    if (!line) {
      line = { tail: Promise.resolve(), waiting: 0, stopTimer: null };
      this.lines.set(deviceId, line);
    }
    return line;
  }

  /** Runs `task` after every command queued before it for the camera, whatever became of them. */
  private queue<T>(line: CameraLine, task: () => Promise<T>): Promise<T> {
    line.waiting++;
    const run = line.tail.then(() => {
      line.waiting--;
      return task();
    });
    line.tail = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  private async send(deviceId: string, line: CameraLine, command: PtzCommand): Promise<void> {
    // Whatever comes next replaces the pending Stop: a newer move renews it, anything else ends the move itself.
    if (line.stopTimer) clearTimeout(line.stopTimer);
    line.stopTimer = null;
    const session = this.opts.sessionOf(deviceId);
    if (!session) throw new DeviceUnavailableError(`device ${deviceId} went offline`);
    try {
      await this.sendTo(session, deviceId, command);
    } catch (err) {
      // A move the camera may have begun is stopped now rather than never.
      if (command.action === 'ptz_move') await session.ptzStop().catch(() => undefined);
      throw commandError(command.action, err);
    }
    if (command.action === 'ptz_move' && !this.stopped) {
      line.stopTimer = setTimeout(() => this.stopAfterTimeout(deviceId, line), command.timeoutMs);
      line.stopTimer.unref();
    }
  }

  private async sendTo(session: OnvifSession, deviceId: string, c: PtzCommand): Promise<void> {
    switch (c.action) {
      case 'ptz_move':
        return session.ptzMove({ pan: c.pan, tilt: c.tilt, zoom: c.zoom }, c.timeoutMs);
      case 'ptz_stop':
        return session.ptzStop();
      case 'ptz_goto_preset':
        return session.ptzGotoPreset(c.preset);
      case 'ptz_home':
        return session.ptzHome();
      case 'ptz_center':
        return session.ptzCenter({ x: c.x, y: c.y });
      case 'ptz_set_preset': {
        const token = await session.ptzSetPreset(c.name);
        return this.refreshPresets(session, deviceId, (presets) =>
          token === null ? presets : [...presets.filter((p) => p.token !== token), { token, name: c.name }],
        );
      }
      case 'ptz_remove_preset':
        await session.ptzRemovePreset(c.preset);
        return this.refreshPresets(session, deviceId, (presets) => presets.filter((p) => p.token !== c.preset));
    }
  }

  /**
   * The Device's presets after a change: read again from the camera, else (it refuses GetPresets or
   * does not answer it) the list as it was with the change made to it: the change itself was made.
   */
  private async refreshPresets(
    session: OnvifSession,
    deviceId: string,
    edit: (presets: DevicePtz['presets']) => DevicePtz['presets'],
  ): Promise<void> {
    const known = this.opts.store.getDevice(deviceId)?.ptz;
    if (!known) return;
    let presets: DevicePtz['presets'];
    try {
      presets = await session.ptzPresets();
    } catch {
      presets = edit(known.presets);
    }
    this.opts.store.setCameraPtz(deviceId, { ...known, presets });
  }

  private stopAfterTimeout(deviceId: string, line: CameraLine): void {
    line.stopTimer = null;
    void this.queue(line, async () => {
      // A newer move came meanwhile and has its own timer: this Stop would cut it short.
      if (line.stopTimer) return;
      const session = this.opts.sessionOf(deviceId);
      if (!session) return;
      try {
        await session.ptzStop();
        this.opts.logger.info({ deviceId, action: 'ptz_stop', by: 'gateway (move timed out)' }, 'camera ptz');
      } catch (err) {
        this.opts.logger.warn(
          { deviceId, err: err instanceof Error ? err.message : String(err) },
          'camera ptz stop after the move timed out failed',
        );
      }
    });
  }
}

/** The request's values for the log line (never anything secret: PTZ has nothing secret). */
function details(c: PtzCommand): Record<string, unknown> {
  const { action: _action, ...rest } = c;
  return rest;
}

/** A camera's refusal, silence or dropped connection: 502 either way, since a PTZ result is not kept. */
function commandError(action: string, err: unknown): Error {
  if (err instanceof DeviceUnavailableError) return err;
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof CameraFaultError || err instanceof CameraUnauthorizedError)
    return new DeviceCommandError(`camera refused ${action}: ${message}`);
  if (err instanceof CameraUnreachableError)
    return new DeviceCommandError(`camera did not answer ${action}: ${message}`);
  return err instanceof Error ? err : new Error(message);
}
