import { describe, expect, it } from 'vitest';
import { STREAM_EVENT_TYPES } from '../../src/store/event-log.js';
import {
  EventHub,
  KNOWN_EVENTS,
  startFeed,
  type FeedApi,
  type FeedMode,
  type GatewayEvent,
} from '../../web/src/events.js';
import type { Alert, Device } from '../../web/src/types.js';
import { deviceJson } from '../support/camera-settings.js';

// The web app's feed of changes (web/src/events.ts) against a stand-in of the API client: what it
// does with GET /v1/events (frames split anywhere, Last-Event-ID on reconnection).

const alert = (id: string, read = false): Alert => ({
  id,
  device_id: 'dev_1',
  type: 'human',
  message: 'Person detected',
  created_at: '2026-11-25T10:00:00.000Z',
  read,
  read_at: null,
  recording_id: null,
  recording_status: 'pending',
  recording_status_reason: null,
  detections: [],
});
const device: Device = deviceJson();

/** A text/event-stream response sending `chunks`, then staying open until `close` resolves. */
function sse(chunks: string[], close: Promise<void> = Promise.resolve()): Response {
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      for (const c of chunks) controller.enqueue(new TextEncoder().encode(c));
      await close;
      controller.close();
    },
  });
  return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } });
}

it("reads every type of event the gateway's stream sends", () => {
  expect([...KNOWN_EVENTS].sort()).toEqual([...STREAM_EVENT_TYPES].sort());
});

describe('startFeed', () => {
  it('emits the stream events, and reconnects after the stream ends with the last id seen', async () => {
    const sentIds: Array<string | null> = [];
    let calls = 0;
    let hold: () => void = () => undefined;
    const api: FeedApi = {
      request: async (_path, init) => {
        sentIds.push(new Headers(init?.headers).get('last-event-id'));
        calls++;
        if (calls === 1) {
          const data = JSON.stringify(alert('alr_1'));
          // One frame cut in the middle of its data, then a heartbeat comment.
          return sse([
            `id: 41\nevent: alert.created\ndata: ${data.slice(0, 10)}`,
            `${data.slice(10)}\n\n: heartbeat\n\n`,
          ]);
        }
        return sse(
          [`id: 42\nevent: device.status\ndata: ${JSON.stringify(device)}\n\n`],
          new Promise((resolve) => (hold = resolve)),
        );
      },
    };
    const hub = new EventHub();
    const seen: GatewayEvent[] = [];
    hub.on((e) => seen.push(e));
    const modes: FeedMode[] = [];
    const stop = startFeed(api, hub, (m) => modes.push(m));
    await expect.poll(() => seen.length, { timeout: 10_000 }).toBe(2);
    stop();
    hold();
    expect(seen[0]).toEqual({ type: 'alert.created', data: alert('alr_1') });
    expect(seen[1]).toEqual({ type: 'device.status', data: device });
    expect(sentIds).toEqual([null, '41']);
    expect(modes).toContain('live');
    expect(modes).toContain('retrying');
  });
});
