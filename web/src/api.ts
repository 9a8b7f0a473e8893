import { UnreachableError, type Session } from './auth.js';
import type { PushSubscriptionData } from './push.js';
import type {
  Alert,
  ControlAction,
  ControlResult,
  Device,
  DevicePatch,
  EventType,
  FootageSpan,
  FootageStatus,
  NewDevice,
  PtzRequest,
  PushInfo,
  PushPreferences,
  PushSubscriptionRecord,
  PushTestResult,
  Page,
  Recording,
  StreamAddress,
  SystemStatus,
  TicketedUrl,
} from './types.js';

// The /v1 API as the app uses it: the bearer token on every request, one retry with a fresh token
// after a 401 (the token expired or the gateway restarted with new keys), and the gateway's
// reachability reported as it is seen.

/** An answer of the API that is not a success, with its error code (docs/api.md, Errors). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

interface ApiDeps {
  session: Pick<Session, 'accessToken' | 'refresh'>;
  fetch: typeof fetch;
  onReachable: (reachable: boolean) => void;
}

type AlertFilter = { device_id?: string; type?: Alert['type']; unread?: boolean; limit?: number; cursor?: string };
type RecordingFilter = {
  start_date?: string;
  end_date?: string;
  event_type?: EventType;
  limit?: number;
  cursor?: string;
};

/** The unread alerts every signed-in screen counts (the badge). */
export const UNREAD_FILTER: Readonly<AlertFilter> = Object.freeze({ unread: true, limit: 200 });

/** How long an answer fetched ahead (prefetchFirstScreen) may wait for the screen that asked for it. */
const PREFETCH_KEEP_MS = 5_000;

export class Api {
  /** Answers fetched ahead, by path, each taken once by the next json() of that path. */
  private readonly ahead = new Map<string, { at: number; answer: Promise<unknown> }>();

  constructor(private readonly deps: ApiDeps) {}

  /**
   * Starts the GETs every signed-in screen begins with (the device list, the unread count) as
   * soon as there is a token, so that they do not wait for the app's first render. The screens'
   * own calls take these answers once; after PREFETCH_KEEP_MS they ask again instead.
   */
  prefetchFirstScreen(): void {
    for (const path of [DEVICES_PATH, alertsPath(UNREAD_FILTER)]) {
      const answer = this.fetchJson(path);
      answer.catch(() => undefined);
      this.ahead.set(path, { at: Date.now(), answer });
    }
  }

  /** A response of the API (any status but 401 after one retry); network failures are UnreachableError. */
  async request(path: string, init: RequestInit = {}): Promise<Response> {
    const send = async (token: string): Promise<Response> => {
      const headers = new Headers(init.headers);
      headers.set('authorization', `Bearer ${token}`);
      try {
        const res = await this.deps.fetch(path, { ...init, headers, cache: 'no-store' });
        this.deps.onReachable(res.status !== 502 && res.status !== 503 && res.status !== 504);
        return res;
      } catch (err) {
        if (err instanceof DOMException && err.name === 'AbortError') throw err;
        this.deps.onReachable(false);
        throw new UnreachableError('The gateway cannot be reached.');
      }
    };
    const res = await send(await this.deps.session.accessToken());
    if (res.status !== 401) return res;
    return send(await this.deps.session.refresh());
  }

  async json<T>(path: string, init?: RequestInit): Promise<T> {
    const early = init === undefined ? this.ahead.get(path) : undefined;
    if (early) {
      this.ahead.delete(path);
      if (Date.now() - early.at < PREFETCH_KEEP_MS) return early.answer as Promise<T>;
    }
    return this.fetchJson(path, init);
  }

  private async fetchJson<T>(path: string, init?: RequestInit): Promise<T> {
    const res = await this.request(path, init);
    if (!res.ok) throw await apiError(res);
    return (await res.json()) as T;
  }

  /** An image or video of the API as a blob: URL (an <img> cannot send the token). null on 404. Revoke it when done. */
  async objectUrl(path: string, signal?: AbortSignal): Promise<string | null> {
    const res = await this.request(path, signal ? { signal } : {});
    if (res.status === 404) return null;
    if (!res.ok) throw await apiError(res);
    return URL.createObjectURL(await res.blob());
  }

  devices(): Promise<Page<Device>> {
    return this.json(DEVICES_PATH);
  }

  device(id: string): Promise<Device> {
    return this.json(`/v1/devices/${encodeURIComponent(id)}`);
  }

  /** Adds an ONVIF camera by its address (devices:write); it is offline until the gateway reaches it. */
  addDevice(camera: NewDevice): Promise<Device> {
    return this.json('/v1/devices', jsonBody('POST', camera));
  }

  /** Changes what the patch names, all or nothing (devices:write). */
  updateDevice(id: string, patch: DevicePatch): Promise<Device> {
    return this.json(`/v1/devices/${encodeURIComponent(id)}`, jsonBody('PATCH', patch));
  }

  /** The gateway stops using the camera; its recordings and alerts stay until their retention. */
  async removeDevice(id: string): Promise<void> {
    const res = await this.request(`/v1/devices/${encodeURIComponent(id)}`, { method: 'DELETE' });
    if (!res.ok) throw await apiError(res);
  }

  alerts(filter: AlertFilter = {}): Promise<Page<Alert>> {
    return this.json(alertsPath(filter));
  }

  alert(id: string): Promise<Alert> {
    return this.json(`/v1/alerts/${encodeURIComponent(id)}`);
  }

  markRead(id: string): Promise<Alert> {
    return this.json(`/v1/alerts/${encodeURIComponent(id)}/read`, { method: 'POST' });
  }

  recordings(deviceId: string, filter: RecordingFilter = {}): Promise<Page<Recording>> {
    return this.json(`/v1/devices/${encodeURIComponent(deviceId)}/recordings${query(filter)}`);
  }

  recording(id: string): Promise<Recording> {
    return this.json(`/v1/recordings/${encodeURIComponent(id)}`);
  }

  stream(deviceId: string, protocol: 'webrtc' | 'hls', profile: 'main' | 'sub'): Promise<StreamAddress> {
    return this.json(`/v1/devices/${encodeURIComponent(deviceId)}/stream${query({ protocol, profile })}`);
  }

  control(deviceId: string, action: ControlAction): Promise<ControlResult> {
    return this.json(`/v1/devices/${encodeURIComponent(deviceId)}/control`, jsonBody('POST', { action }));
  }

  /** The gateway's VAPID key and whether it pushes at all. */
  pushInfo(): Promise<PushInfo> {
    return this.json('/v1/push');
  }

  /** The signed-in user's own push subscriptions (every browser they turned notifications on in). */
  pushSubscriptions(): Promise<Page<PushSubscriptionRecord>> {
    return this.json('/v1/push/subscriptions');
  }

  /** Gives the gateway this browser's subscription; the same endpoint again replaces its preferences. */
  subscribePush(body: PushSubscriptionData & Partial<PushPreferences>): Promise<PushSubscriptionRecord> {
    return this.json('/v1/push/subscriptions', jsonBody('POST', body));
  }

  updatePushSubscription(id: string, prefs: Partial<PushPreferences>): Promise<PushSubscriptionRecord> {
    return this.json(`/v1/push/subscriptions/${encodeURIComponent(id)}`, jsonBody('PATCH', prefs));
  }

  async deletePushSubscription(id: string): Promise<void> {
    const res = await this.request(`/v1/push/subscriptions/${encodeURIComponent(id)}`, { method: 'DELETE' });
    if (!res.ok && res.status !== 404) throw await apiError(res);
  }

  /** Sends a test notification to a subscription; answers once the push service has. */
  testPush(id: string): Promise<PushTestResult> {
    return this.json(`/v1/push/subscriptions/${encodeURIComponent(id)}/test`, { method: 'POST' });
  }

  /** Pan, tilt and zoom: answered once the camera has done it (devices:write). */
  ptz(deviceId: string, request: PtzRequest): Promise<ControlResult> {
    return this.json(`/v1/devices/${encodeURIComponent(deviceId)}/control`, jsonBody('POST', request));
  }

  snapshotPath(deviceId: string, width?: number): string {
    return `/v1/devices/${encodeURIComponent(deviceId)}/snapshot${width ? `?width=${width}` : ''}`;
  }

  thumbnailPath(recordingId: string): string {
    return `/v1/recordings/${encodeURIComponent(recordingId)}/thumbnail`;
  }

  /** The gateway, its machine, disks and cameras' streams as they are now (devices:write). */
  system(signal?: AbortSignal): Promise<SystemStatus> {
    return this.json('/v1/system', signal ? { signal } : undefined);
  }

  footageStatus(): Promise<FootageStatus> {
    return this.json('/v1/footage');
  }

  /** The spans of a camera's continuous footage in [startMs, endMs) (at most 24 hours). */
  async footageSpans(deviceId: string, startMs: number, endMs: number, signal?: AbortSignal): Promise<FootageSpan[]> {
    const page = await this.json<{ data: FootageSpan[] }>(
      `${footagePath(deviceId)}${windowQuery(startMs, endMs)}`,
      signal ? { signal } : undefined,
    );
    return page.data;
  }

  /** A ticketed HLS playlist that plays the camera's footage from startMs (the keyframe at or before it). */
  async footagePlayback(deviceId: string, startMs: number, endMs: number): Promise<TicketedUrl> {
    const answer = await this.json<{ playback_url: string; expires_at: string }>(
      `${footagePath(deviceId)}/playback${windowQuery(startMs, endMs)}`,
    );
    return { url: answer.playback_url, expires_at: answer.expires_at };
  }

  /** A ticketed address that downloads [startMs, endMs) of the camera's footage as one MP4 (recordings:write). */
  async footageExport(deviceId: string, startMs: number, endMs: number): Promise<TicketedUrl> {
    const answer = await this.json<{ download_url: string; expires_at: string }>(
      `${footagePath(deviceId)}/export${windowQuery(startMs, endMs)}`,
    );
    return { url: answer.download_url, expires_at: answer.expires_at };
  }

  /** The picture of the footage at a moment, `width` pixels wide. */
  footageFramePath(deviceId: string, atMs: number, width: number): string {
    return `${footagePath(deviceId)}/frame${query({ at: new Date(atMs).toISOString(), width })}`;
  }
}

function footagePath(deviceId: string): string {
  return `/v1/devices/${encodeURIComponent(deviceId)}/footage`;
}

function windowQuery(startMs: number, endMs: number): string {
  return query({ start: new Date(startMs).toISOString(), end: new Date(endMs).toISOString() });
}

const DEVICES_PATH = '/v1/devices?limit=200';

function jsonBody(method: string, body: object): RequestInit {
  return { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
}

function alertsPath(filter: AlertFilter): string {
  return `/v1/alerts${query(filter)}`;
}

function query(params: Record<string, string | number | boolean | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') q.set(k, String(v));
  const text = q.toString();
  return text ? `?${text}` : '';
}

async function apiError(res: Response): Promise<ApiError> {
  const body: unknown = await res.json().catch(() => null);
  const fields = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  const code = typeof fields.error === 'string' ? fields.error : `http_${res.status}`;
  const description =
    typeof fields.error_description === 'string' ? fields.error_description : `The gateway answered ${res.status}.`;
  return new ApiError(res.status, code, description);
}
