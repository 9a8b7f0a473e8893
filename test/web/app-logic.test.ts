import { describe, expect, it } from 'vitest';
import { isReservedPath } from '../../src/api/web-app.js';
import { GATEWAY_PREFIXES, isGatewayPath } from '../../web/src/paths.js';
import { parseRoute } from '../../web/src/routes.js';
import { parseSse } from '../../web/src/sse.js';

// The web app's pure parts: the event-stream parser, its routes, and the paths the app never takes.

describe('parseSse', () => {
  it('reads complete frames with event, id and data, and keeps an unfinished one for later', () => {
    const { frames, rest } = parseSse(
      'id: 7\nevent: alert.created\ndata: {"id":"a1"}\n\nevent: device.status\ndata: {"id"',
    );
    expect(frames).toEqual([{ event: 'alert.created', data: '{"id":"a1"}', id: '7' }]);
    expect(rest).toBe('event: device.status\ndata: {"id"');
    const next = parseSse(`${rest}:"d1"}\n\n`);
    expect(next.frames).toEqual([{ event: 'device.status', data: '{"id":"d1"}', id: null }]);
    expect(next.rest).toBe('');
  });

  it('skips heartbeats (comments) and frames without data; joins data lines; reads CRLF', () => {
    const { frames } = parseSse(': heartbeat\n\nevent: nothing\n\r\nevent: x\r\ndata: a\r\ndata: b\r\n\r\n');
    expect(frames).toEqual([{ event: 'x', data: 'a\nb', id: null }]);
  });

  it('takes a value without the space after the colon, and "message" as the default event', () => {
    expect(parseSse('data:plain\n\n').frames).toEqual([{ event: 'message', data: 'plain', id: null }]);
  });
});

describe('parseRoute', () => {
  it('maps the app paths to screens', () => {
    expect(parseRoute('/', '')).toEqual({ screen: 'cameras' });
    expect(parseRoute('/cameras/dev%201', '')).toEqual({ screen: 'live', deviceId: 'dev 1' });
    expect(parseRoute('/cameras/dev_1/settings', '')).toEqual({ screen: 'settings', deviceId: 'dev_1' });
    expect(parseRoute('/cameras/new', '?camera=dev_1')).toMatchObject({ screen: 'add-camera' });
    expect(parseRoute('/cameras/dev_1/other', '')).toEqual({ screen: 'missing' });
    expect(parseRoute('/events', '?unread=1')).toMatchObject({ screen: 'events' });
    expect(parseRoute('/clips', '?camera=a')).toMatchObject({ screen: 'clips' });
    expect(parseRoute('/system', '')).toEqual({ screen: 'system' });
    expect(parseRoute('/nowhere', '')).toEqual({ screen: 'missing' });
    expect(parseRoute('/cameras/%E0%A4%A', '')).toEqual({ screen: 'missing' });
  });

  it('has no screen under a path the gateway keeps for the API, and the app (and its service worker) knows them', () => {
    for (const path of [
      '/cameras/x',
      '/cameras/x/settings',
      '/cameras/new',
      '/events',
      '/clips',
      '/signin/callback',
      '/',
      '/v10',
    ]) {
      expect(isReservedPath(path), path).toBe(false);
      expect(isGatewayPath(path), path).toBe(false);
    }
    for (const path of [
      '/v1',
      '/v1/devices',
      '/oauth/token',
      '/live/t/whep',
      '/.well-known/jwks.json',
      '/metrics',
      '/healthz',
    ]) {
      expect(isReservedPath(path), path).toBe(true);
      expect(isGatewayPath(path), path).toBe(true);
    }
    for (const prefix of GATEWAY_PREFIXES) expect(isReservedPath(prefix), prefix).toBe(true);
  });
});
