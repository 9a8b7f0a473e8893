import { describe, expect, it } from 'vitest';
import { parseMediaPlaylist, parseMultivariantPlaylist } from '../../../src/media/hls/playlist-parse.js';
import {
  writeMediaPlaylist,
  writeMultivariantPlaylist,
  type MediaPlaylist,
  type VariantStream,
} from '../../../src/media/hls/playlist.js';

const T0 = Date.UTC(2026, 10, 25, 9, 0, 0, 120);

const LIVE: MediaPlaylist = {
  targetDuration: 2,
  partTarget: 0.5,
  partHoldBack: 1.5,
  mediaSequence: 7,
  mapUri: 'init.mp4',
  segments: [
    { duration: 2, uri: 'seg7.mp4', programDateTime: T0, parts: [] },
    {
      duration: 1.96,
      uri: 'seg8.mp4',
      programDateTime: T0 + 2000,
      parts: [
        { duration: 0.5, uri: 'part40.mp4', independent: true },
        { duration: 0.5, uri: 'part41.mp4', independent: false },
        { duration: 0.5, uri: 'part42.mp4', independent: false },
        { duration: 0.46, uri: 'part43.mp4', independent: false },
      ],
    },
  ],
  openParts: [{ duration: 0.5, uri: 'part44.mp4', independent: true }],
  openProgramDateTime: T0 + 3960,
  preloadHintUri: 'part45.mp4',
};

describe('writeMediaPlaylist', () => {
  it('writes an LL-HLS media playlist: server control, part target, map, dates, parts, the preload hint', () => {
    expect(writeMediaPlaylist(LIVE)).toBe(
      [
        '#EXTM3U',
        '#EXT-X-VERSION:6',
        '#EXT-X-TARGETDURATION:2',
        '#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,PART-HOLD-BACK=1.5',
        '#EXT-X-PART-INF:PART-TARGET=0.5',
        '#EXT-X-MEDIA-SEQUENCE:7',
        '#EXT-X-MAP:URI="init.mp4"',
        '#EXT-X-PROGRAM-DATE-TIME:2026-11-25T09:00:00.120Z',
        '#EXTINF:2,',
        'seg7.mp4',
        '#EXT-X-PROGRAM-DATE-TIME:2026-11-25T09:00:02.120Z',
        '#EXT-X-PART:DURATION=0.5,URI="part40.mp4",INDEPENDENT=YES',
        '#EXT-X-PART:DURATION=0.5,URI="part41.mp4"',
        '#EXT-X-PART:DURATION=0.5,URI="part42.mp4"',
        '#EXT-X-PART:DURATION=0.46,URI="part43.mp4"',
        '#EXTINF:1.96,',
        'seg8.mp4',
        '#EXT-X-PROGRAM-DATE-TIME:2026-11-25T09:00:04.080Z',
        '#EXT-X-PART:DURATION=0.5,URI="part44.mp4",INDEPENDENT=YES',
        '#EXT-X-PRELOAD-HINT:TYPE=PART,URI="part45.mp4"',
        '',
      ].join('\n'),
    );
  });

  it.each<[string, MediaPlaylist]>([
    ['a live playlist', LIVE],
    [
      'a first part only',
      {
        ...LIVE,
        mediaSequence: 0,
        segments: [],
        openParts: [{ duration: 0.2, uri: 'part0.mp4', independent: true }],
        openProgramDateTime: T0,
      },
    ],
    [
      'nothing yet',
      { ...LIVE, segments: [], openParts: [], openProgramDateTime: undefined, preloadHintUri: 'part0.mp4' },
    ],
    [
      'durations with five decimals',
      {
        ...LIVE,
        partTarget: 0.33334,
        segments: [
          { duration: 1.23456, uri: 'a/seg.mp4', parts: [{ duration: 0.33333, uri: 'p.mp4?x=1', independent: true }] },
        ],
      },
    ],
  ])('reads back what it wrote: %s', (_name, model) => {
    const clean = JSON.parse(JSON.stringify(model)) as MediaPlaylist;
    expect(parseMediaPlaylist(writeMediaPlaylist(model))).toEqual(clean);
  });

  it.each([
    'https://elsewhere/x.mp4',
    '/live/abs.mp4',
    'a b.mp4',
    'q"uote.mp4',
    '',
    '#tag',
    'data:xyz',
    '//host/x.mp4',
  ])('refuses the URI %j: every URI is relative', (uri) => {
    expect(() => writeMediaPlaylist({ ...LIVE, preloadHintUri: uri })).toThrow(RangeError);
    expect(() => writeMediaPlaylist({ ...LIVE, mapUri: uri })).toThrow(RangeError);
  });

  it.each([Number.NaN, -0.1, Infinity])('refuses a duration of %d', (d) => {
    expect(() =>
      writeMediaPlaylist({ ...LIVE, openParts: [{ duration: d, uri: 'p.mp4', independent: false }] }),
    ).toThrow(RangeError);
  });
});

describe('writeMultivariantPlaylist', () => {
  const variants: VariantStream[] = [
    {
      uri: 'main/stream.m3u8',
      bandwidth: 4_200_000,
      codecs: ['avc1.64001F', 'mp4a.40.2'],
      resolution: { width: 1920, height: 1080 },
    },
    { uri: 'sub/stream.m3u8', bandwidth: 600_000, codecs: ['hvc1.1.6.L93.B0'] },
  ];

  it('names each media playlist with its bandwidth, codecs and resolution', () => {
    expect(writeMultivariantPlaylist(variants)).toBe(
      '#EXTM3U\n#EXT-X-VERSION:6\n#EXT-X-STREAM-INF:BANDWIDTH=4200000,CODECS="avc1.64001F,mp4a.40.2",RESOLUTION=1920x1080\nmain/stream.m3u8\n#EXT-X-STREAM-INF:BANDWIDTH=600000,CODECS="hvc1.1.6.L93.B0"\nsub/stream.m3u8\n',
    );
    expect(parseMultivariantPlaylist(writeMultivariantPlaylist(variants))).toEqual(variants);
  });

  it.each<[string, VariantStream]>([
    ['an absolute URI', { uri: 'http://x/s.m3u8', bandwidth: 1, codecs: ['avc1.42E01E'] }],
    ['a zero bandwidth', { uri: 's.m3u8', bandwidth: 0, codecs: ['avc1.42E01E'] }],
    ['a codec with a quote', { uri: 's.m3u8', bandwidth: 1, codecs: ['avc1"'] }],
  ])('refuses %s', (_name, v) => {
    expect(() => writeMultivariantPlaylist([v])).toThrow(RangeError);
  });
});
