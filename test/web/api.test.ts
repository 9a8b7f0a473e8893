import { afterEach, describe, expect, it, vi } from 'vitest';
import { Api, ApiError, UNREAD_FILTER } from '../../web/src/api.js';

// web/src/api.ts: the answers fetched ahead for the first screen (prefetchFirstScreen), with a
// fetch that records what the app sends and answers from a table.

function harness(answer: (path: string) => Response = () => json({ data: [], next_cursor: null })) {
  const sent: { path: string; authorization: string | null }[] = [];
  const api = new Api({
    session: { accessToken: () => Promise.resolve('tok'), refresh: () => Promise.resolve('tok2') },
    fetch: (input, init) => {
      const path = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
      sent.push({ path, authorization: new Headers(init?.headers).get('authorization') });
      return Promise.resolve(answer(path));
    },
    onReachable: () => undefined,
  });
  return { api, sent };
}

function json(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
}

afterEach(() => {
  vi.useRealTimers();
});

describe('Api.prefetchFirstScreen', () => {
  it('sends the device list and the unread count with the token at once, and the screens take those answers once', async () => {
    let n = 0;
    const { api, sent } = harness((path) => json({ data: [{ path, n: ++n }], next_cursor: null }));
    api.prefetchFirstScreen();
    await vi.waitFor(() => expect(sent).toHaveLength(2));
    expect(sent.map((s) => s.path).sort()).toEqual(['/v1/alerts?unread=true&limit=200', '/v1/devices?limit=200']);
    expect(sent.every((s) => s.authorization === 'Bearer tok')).toBe(true);
    const devices = await api.devices();
    const unread = await api.alerts(UNREAD_FILTER);
    expect(sent).toHaveLength(2);
    expect(devices.data[0]).toMatchObject({ path: '/v1/devices?limit=200' });
    expect(unread.data[0]).toMatchObject({ path: '/v1/alerts?unread=true&limit=200' });
    // Taken once: the next call asks the gateway again (a reload must not see the first answer).
    const again = await api.devices();
    expect(sent).toHaveLength(3);
    expect(again.data[0]).toMatchObject({ n: 3 });
  });

  it('does not hand out an answer that waited longer than a few seconds', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    let n = 0;
    const { api, sent } = harness(() => json({ data: [{ n: ++n }], next_cursor: null }));
    api.prefetchFirstScreen();
    await vi.waitFor(() => expect(sent).toHaveLength(2));
    vi.setSystemTime(Date.now() + 6_000);
    const devices = await api.devices();
    expect(sent).toHaveLength(3);
    expect(devices.data[0]).toMatchObject({ n: 3 });
  });

  it('gives the screen the error of a refused prefetch, as its own request would have', async () => {
    const { api } = harness(() => json({ error: 'forbidden', error_description: 'no devices:read' }, 403));
    api.prefetchFirstScreen();
    const err = await api.devices().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ status: 403, code: 'forbidden' });
  });

  it('leaves other requests alone: a different path, or any request with options, is sent as asked', async () => {
    const { api, sent } = harness();
    api.prefetchFirstScreen();
    await api.alerts({ unread: true, limit: 10 });
    await api.json('/v1/devices?limit=200', { method: 'GET' });
    expect(sent.map((s) => s.path)).toEqual([
      '/v1/devices?limit=200',
      '/v1/alerts?unread=true&limit=200',
      '/v1/alerts?unread=true&limit=10',
      '/v1/devices?limit=200',
    ]);
  });
});
