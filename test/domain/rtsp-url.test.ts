import { describe, expect, it } from 'vitest';
import { isRtspUrl, parseRtspUrl, RTSP_URL_LIMITS, rtspUrlForDisplay } from '../../src/domain/rtsp-url.js';
import { makeRng } from '../support/fuzz.js';

// A plain RTSP camera's URL as its owner types it: what the gateway keeps and opens, the account
// taken out of it, and what may be shown.

describe('parseRtspUrl', () => {
  it.each([
    ['rtsp://192.168.1.20/stream1', 'rtsp://192.168.1.20/stream1', '192.168.1.20', 554],
    ['RTSP://Cam.LAN:554/Stream1?channel=1', 'rtsp://cam.lan/Stream1?channel=1', 'cam.lan', 554],
    ['rtsp://cam.lan:8554/live', 'rtsp://cam.lan:8554/live', 'cam.lan', 8554],
    ['rtsps://cam.lan/live', 'rtsps://cam.lan/live', 'cam.lan', 322],
    ['rtsps://cam.lan:322/live', 'rtsps://cam.lan/live', 'cam.lan', 322],
    ['rtsp://[FE80::1]:8554/a', 'rtsp://[fe80::1]:8554/a', 'fe80::1', 8554],
    // One spelling per host, as http has it: the relay's own address cannot hide behind another.
    ['rtsp://127.1:8554/x', 'rtsp://127.0.0.1:8554/x', '127.0.0.1', 8554],
    ['rtsp://0x7f.0.0.1/x', 'rtsp://127.0.0.1/x', '127.0.0.1', 554],
    ['rtsp://cam.lan', 'rtsp://cam.lan', 'cam.lan', 554],
  ])('keeps %s as %s', (text, url, host, port) => {
    expect(parseRtspUrl(text)).toEqual({ url, host, port, account: null });
  });

  it('takes the account out of the URL, percent-decoded', () => {
    expect(parseRtspUrl('rtsp://admin:p%40ss%3Aw0rd@10.0.0.5:554/h264')).toEqual({
      url: 'rtsp://10.0.0.5/h264',
      host: '10.0.0.5',
      port: 554,
      account: { username: 'admin', password: 'p@ss:w0rd' },
    });
    expect(parseRtspUrl('rtsp://viewer@10.0.0.5/h264')).toMatchObject({
      url: 'rtsp://10.0.0.5/h264',
      account: { username: 'viewer', password: '' },
    });
  });

  it.each([
    ['http://10.0.0.5/stream', /must start with rtsp:\/\/ or rtsps:\/\//],
    ['10.0.0.5/stream', /must start with rtsp/],
    ['rtmp://10.0.0.5/live', /must start with rtsp/],
    ['rtsp:10.0.0.5/live', /must start with rtsp/],
    ['rtsp:///live', /names no host/],
    ['rtsp://10.0.0.5:0/live', /port out of 1–65535/],
    ['rtsp://10.0.0.5:70000/live', /not a URL/],
    ['rtsp://10.0.0.5/a b', /blanks or control characters/],
    ['rtsp://10.0.0.5/a\nb', /blanks or control characters/],
    ['rtsp://10.0.0.5/live#main', /fragment/],
    ['rtsp://h%20x/live', /not a name or an IP address/],
    ['rtsp://:secret@10.0.0.5/live', /password without a username/],
    ['rtsp://a%ZZ:b@10.0.0.5/live', /not percent-encoded properly/],
    ['rtsp://a%3Ab:c@10.0.0.5/live', /username that is not one/],
    [`rtsp://${'u'.repeat(129)}:c@10.0.0.5/live`, /username that is not one/],
    [`rtsp://u:${'p'.repeat(257)}@10.0.0.5/live`, /password longer than 256/],
    [`rtsp://10.0.0.5/${'a'.repeat(RTSP_URL_LIMITS.length)}`, /longer than 2048 characters/],
  ])('refuses %s', (text, problem) => {
    const parsed = parseRtspUrl(text);
    expect(parsed).toEqual({ problem: expect.stringMatching(problem) });
  });

  it('takes a URL of exactly the limit', () => {
    const base = 'rtsp://10.0.0.5/';
    expect(parseRtspUrl(base + 'a'.repeat(RTSP_URL_LIMITS.length - base.length))).toHaveProperty('url');
  });

  it('never throws, and what it keeps parses again as itself without an account (seeded)', () => {
    const rng = makeRng();
    const pieces = ['rtsp://', 'rtsps://', 'a', ':', '@', '/', '%', '[', ']', '1', '.', '?', '#', ' ', 'é', '554'];
    for (let i = 0; i < 5000; i++) {
      let text = rng.pick(['rtsp://', 'rtsps://', '']);
      for (let k = rng.int(12); k >= 0; k--) text += rng.pick(pieces);
      const parsed = parseRtspUrl(text);
      if ('problem' in parsed) continue;
      expect(isRtspUrl(parsed.url), `seed ${rng.seed}: ${text}`).toBe(true);
      expect(parseRtspUrl(parsed.url), `seed ${rng.seed}: ${text}`).toEqual({ ...parsed, account: null });
    }
  });
});

describe('rtspUrlForDisplay', () => {
  it.each([
    ['rtsp://10.0.0.5/live', 'rtsp://10.0.0.5/live'],
    ['rtsp://10.0.0.5/cam/realmonitor?channel=1&subtype=0', 'rtsp://10.0.0.5/cam/realmonitor?channel=1&subtype=0'],
    ['rtsp://10.0.0.5/live?user=admin&password=hunter2&ch=1', 'rtsp://10.0.0.5/live?user=admin&password=***&ch=1'],
    [
      'rtsp://10.0.0.5/user=admin_password=tlJwpbo6_channel=1_stream=0.sdp',
      'rtsp://10.0.0.5/user=admin_password=***_channel=1_stream=0.sdp',
    ],
    ['rtsp://10.0.0.5/videoMain?PWD=abc;token=xyz', 'rtsp://10.0.0.5/videoMain?PWD=***;token=***'],
  ])('shows %s as %s', (url, shown) => {
    expect(rtspUrlForDisplay(url)).toBe(shown);
  });
});
