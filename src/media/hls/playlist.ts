// The playlists of one live camera profile as data, and their text (RFC 8216bis 4): a multivariant
// playlist naming the media playlist with its codecs, and a Low-Latency media playlist of fMP4
// (CMAF) segments and parts. Every URI must be relative: resolved against the playlist's own URL,
// it keeps the ticket path the playlist was fetched under.

export interface PlaylistPart {
  /** Seconds. */
  duration: number;
  uri: string;
  independent: boolean;
}

/** A complete segment; its media sequence number is its place after MediaPlaylist.mediaSequence. */
export interface PlaylistSegment {
  /** Seconds. */
  duration: number;
  uri: string;
  /** Wall-clock time of the segment's first sample, ms since the epoch; written when present. */
  programDateTime?: number;
  /** Listed for the segments near the live edge (empty for older ones). */
  parts: PlaylistPart[];
}

export interface MediaPlaylist {
  targetDuration: number;
  partTarget: number;
  partHoldBack: number;
  mediaSequence: number;
  mapUri: string;
  /** Complete segments, oldest first. */
  segments: PlaylistSegment[];
  /** Parts of the segment being filled (its msn follows the last complete one). */
  openParts: PlaylistPart[];
  openProgramDateTime?: number;
  /** The part the server is producing next. */
  preloadHintUri: string | null;
}

export interface VariantStream {
  uri: string;
  /** Peak bits per second. */
  bandwidth: number;
  /** RFC 6381 strings (fmp4/codecs.ts). */
  codecs: string[];
  resolution?: { width: number; height: number };
}

/** EXT-X-MAP of fMP4 in a playlist without EXT-X-I-FRAMES-ONLY needs version 6; nothing here needs more. */
export const PLAYLIST_VERSION = 6;

export function assertRelativeUri(uri: string): void {
  // No scheme, no authority, no absolute path, nothing a playlist line could break on.
  if (
    uri === '' ||
    /^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(uri) ||
    uri.startsWith('/') ||
    /[\s"]/.test(uri) ||
    uri.startsWith('#')
  ) {
    throw new RangeError(`playlist URI ${JSON.stringify(uri)} is not a plain relative reference`);
  }
}

/** Decimal seconds as playlists write them: at most 5 decimals, no exponent. */
export function formatSeconds(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) throw new RangeError(`duration ${seconds}`);
  return seconds.toFixed(5).replace(/\.?0+$/, '') || '0';
}

function partLine(p: PlaylistPart): string {
  assertRelativeUri(p.uri);
  return `#EXT-X-PART:DURATION=${formatSeconds(p.duration)},URI="${p.uri}"${p.independent ? ',INDEPENDENT=YES' : ''}`;
}

export function writeMediaPlaylist(p: MediaPlaylist): string {
  assertRelativeUri(p.mapUri);
  const lines = [
    '#EXTM3U',
    `#EXT-X-VERSION:${PLAYLIST_VERSION}`,
    `#EXT-X-TARGETDURATION:${p.targetDuration}`,
    `#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,PART-HOLD-BACK=${formatSeconds(p.partHoldBack)}`,
    `#EXT-X-PART-INF:PART-TARGET=${formatSeconds(p.partTarget)}`,
    `#EXT-X-MEDIA-SEQUENCE:${p.mediaSequence}`,
    `#EXT-X-MAP:URI="${p.mapUri}"`,
  ];
  for (const s of p.segments) {
    assertRelativeUri(s.uri);
    if (s.programDateTime !== undefined)
      lines.push(`#EXT-X-PROGRAM-DATE-TIME:${new Date(s.programDateTime).toISOString()}`);
    for (const part of s.parts) lines.push(partLine(part));
    lines.push(`#EXTINF:${formatSeconds(s.duration)},`, s.uri);
  }
  if (p.openProgramDateTime !== undefined && p.openParts.length > 0)
    lines.push(`#EXT-X-PROGRAM-DATE-TIME:${new Date(p.openProgramDateTime).toISOString()}`);
  for (const part of p.openParts) lines.push(partLine(part));
  if (p.preloadHintUri !== null) {
    assertRelativeUri(p.preloadHintUri);
    lines.push(`#EXT-X-PRELOAD-HINT:TYPE=PART,URI="${p.preloadHintUri}"`);
  }
  return lines.join('\n') + '\n';
}

export function writeMultivariantPlaylist(variants: readonly VariantStream[]): string {
  // No EXT-X-INDEPENDENT-SEGMENTS: a GOP longer than the target duration is cut mid-GOP (part-cutter.ts).
  const lines = ['#EXTM3U', `#EXT-X-VERSION:${PLAYLIST_VERSION}`];
  for (const v of variants) {
    assertRelativeUri(v.uri);
    if (!Number.isSafeInteger(v.bandwidth) || v.bandwidth <= 0) throw new RangeError(`bandwidth ${v.bandwidth}`);
    for (const c of v.codecs) if (!/^[A-Za-z0-9.]+$/.test(c)) throw new RangeError(`codec ${JSON.stringify(c)}`);
    const attrs = [`BANDWIDTH=${v.bandwidth}`, `CODECS="${v.codecs.join(',')}"`];
    if (v.resolution) attrs.push(`RESOLUTION=${v.resolution.width}x${v.resolution.height}`);
    lines.push(`#EXT-X-STREAM-INF:${attrs.join(',')}`, v.uri);
  }
  return lines.join('\n') + '\n';
}
