import { PlaylistParseError } from './errors.js';
import type { MediaPlaylist, PlaylistPart, PlaylistSegment, VariantStream } from './playlist.js';

// Reading back the playlists playlist.ts writes: the tests' round trip (parse ∘ write = identity)
// and a check on what a player will see. It reads the tags we write and refuses what it cannot
// place; it is no general HLS parser.

/** An attribute list (RFC 8216bis 4.2): NAME=value pairs, quoted strings may hold commas. */
export function parseAttributes(text: string): Map<string, string> {
  const attrs = new Map<string, string>();
  const re = /([A-Z0-9-]+)=("[^"\r\n]*"|[^",\s]*)(?:,|$)/gy;
  let at = 0;
  while (at < text.length) {
    re.lastIndex = at;
    const m = re.exec(text);
    if (!m) throw new PlaylistParseError(`bad attribute list at ${JSON.stringify(text.slice(at))}`);
    const [, name = '', raw = ''] = m;
    attrs.set(name, raw.startsWith('"') ? raw.slice(1, -1) : raw);
    at = re.lastIndex;
  }
  return attrs;
}

function num(value: string | undefined, what: string): number {
  if (value === undefined || !/^\d+(\.\d+)?$/.test(value)) throw new PlaylistParseError(`${what}: ${value}`);
  return Number(value);
}

function need(attrs: Map<string, string>, name: string): string {
  const v = attrs.get(name);
  if (v === undefined) throw new PlaylistParseError(`${name} missing`);
  return v;
}

export function parseMediaPlaylist(text: string): MediaPlaylist {
  const lines = text.split('\n').filter((l) => l !== '');
  if (lines[0] !== '#EXTM3U') throw new PlaylistParseError('not a playlist');
  const out: MediaPlaylist = {
    targetDuration: 0,
    partTarget: 0,
    partHoldBack: 0,
    mediaSequence: 0,
    mapUri: '',
    segments: [],
    openParts: [],
    preloadHintUri: null,
  };
  let parts: PlaylistPart[] = [];
  let pdt: number | undefined;
  let extinf: number | null = null;
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    const tag = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1);
    if (!line.startsWith('#')) {
      if (extinf === null) throw new PlaylistParseError(`URI ${line} without EXTINF`);
      const segment: PlaylistSegment = { duration: extinf, uri: line, parts };
      if (pdt !== undefined) segment.programDateTime = pdt;
      out.segments.push(segment);
      parts = [];
      pdt = undefined;
      extinf = null;
      continue;
    }
    switch (tag) {
      case '#EXT-X-VERSION':
      case '#EXT-X-INDEPENDENT-SEGMENTS':
        break;
      case '#EXT-X-TARGETDURATION':
        out.targetDuration = num(value, tag);
        break;
      case '#EXT-X-MEDIA-SEQUENCE':
        out.mediaSequence = num(value, tag);
        break;
      case '#EXT-X-SERVER-CONTROL': {
        const a = parseAttributes(value);
        if (a.get('CAN-BLOCK-RELOAD') !== 'YES') throw new PlaylistParseError('no CAN-BLOCK-RELOAD=YES');
        out.partHoldBack = num(need(a, 'PART-HOLD-BACK'), 'PART-HOLD-BACK');
        break;
      }
      case '#EXT-X-PART-INF':
        out.partTarget = num(need(parseAttributes(value), 'PART-TARGET'), 'PART-TARGET');
        break;
      case '#EXT-X-MAP':
        out.mapUri = need(parseAttributes(value), 'URI');
        break;
      case '#EXT-X-PROGRAM-DATE-TIME': {
        const ms = Date.parse(value);
        if (Number.isNaN(ms)) throw new PlaylistParseError(`date ${value}`);
        pdt = ms;
        break;
      }
      case '#EXT-X-PART': {
        const a = parseAttributes(value);
        parts.push({
          duration: num(need(a, 'DURATION'), 'DURATION'),
          uri: need(a, 'URI'),
          independent: a.get('INDEPENDENT') === 'YES',
        });
        break;
      }
      case '#EXTINF':
        extinf = num(value.replace(/,.*$/, ''), tag);
        break;
      case '#EXT-X-PRELOAD-HINT': {
        const a = parseAttributes(value);
        if (a.get('TYPE') !== 'PART') throw new PlaylistParseError('preload hint of another type');
        out.preloadHintUri = need(a, 'URI');
        break;
      }
      default:
        throw new PlaylistParseError(`unexpected ${tag}`);
    }
  }
  out.openParts = parts;
  if (pdt !== undefined) out.openProgramDateTime = pdt;
  return out;
}

export function parseMultivariantPlaylist(text: string): VariantStream[] {
  const lines = text.split('\n').filter((l) => l !== '');
  if (lines[0] !== '#EXTM3U') throw new PlaylistParseError('not a playlist');
  const variants: VariantStream[] = [];
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i] as string;
    if (!line.startsWith('#EXT-X-STREAM-INF:')) continue;
    const a = parseAttributes(line.slice('#EXT-X-STREAM-INF:'.length));
    const uri = lines[++i];
    if (uri === undefined || uri.startsWith('#')) throw new PlaylistParseError('EXT-X-STREAM-INF without URI');
    const variant: VariantStream = {
      uri,
      bandwidth: num(need(a, 'BANDWIDTH'), 'BANDWIDTH'),
      codecs: need(a, 'CODECS').split(','),
    };
    const res = a.get('RESOLUTION');
    if (res !== undefined) {
      const m = /^(\d+)x(\d+)$/.exec(res);
      if (!m) throw new PlaylistParseError(`RESOLUTION ${res}`);
      variant.resolution = { width: Number(m[1]), height: Number(m[2]) };
    }
    variants.push(variant);
  }
  return variants;
}
