import {
  fail,
  hasControlChar,
  parseUint,
  quote,
  readQuoted,
  splitOutsideQuotes,
  splitParam,
  trimLws,
} from './syntax.js';

// RTP-Info (RFC 2326 §12.33): per stream of a PLAY response, the sequence
// number and RTP timestamp the stream resumes at, which a client needs to map RTP time to
// the npt of the Range header.
//
// Stream URLs are written bare in RTSP 1.0 and may legally contain `,` and `;`, the very
// characters that separate entries and parameters. Parsing therefore treats:
// - a `,` as the start of a new entry only when `url=` follows it;
// - a `;` as the start of a parameter only when `seq=` or `rtptime=` follows it,
//   so `rtsp://cam/live;stream=1;seq=5` keeps its `;stream=1`;
// - a URL in double quotes (as RFC 7826 writes them) as whatever the quotes hold.
// RFC 7826's own layout (`url="…" ssrc=…:seq=…`) is RTSP 2.0 and not parsed here.
// Formatting quotes a URL only when it would otherwise be ambiguous.

export interface RtpInfoEntry {
  url: string;
  seq?: number;
  rtptime?: number;
}

const PARAMS: ReadonlySet<string> = new Set(['seq', 'rtptime']);

function startsWithUrl(part: string): boolean {
  return /^url[ \t]*=/i.test(part);
}

function isKnownParam(part: string): boolean {
  const eq = part.indexOf('=');
  return eq > 0 && PARAMS.has(trimLws(part.slice(0, eq)).toLowerCase());
}

function isBareUrl(url: string): boolean {
  return /^[^\s",;]+$/.test(url) && !hasControlChar(url);
}

function parseEntry(entry: string): RtpInfoEntry {
  const parts = splitOutsideQuotes(entry, ';');
  const head = parts[0] ?? '';
  let urlText = trimLws(head.slice(head.indexOf('=') + 1));
  let i = 1;
  let url: string;
  if (urlText.charCodeAt(0) === 0x22) {
    const { text, end } = readQuoted(urlText, 0);
    if (end !== urlText.length) fail('text after the quoted RTP-Info url');
    url = text;
  } else {
    for (; i < parts.length && !isKnownParam(parts[i] ?? ''); i++) urlText += `;${parts[i] ?? ''}`;
    url = urlText;
  }
  if (url === '' || /\s/.test(url) || hasControlChar(url)) fail('invalid RTP-Info url');
  const out: RtpInfoEntry = { url };
  for (; i < parts.length; i++) {
    const part = parts[i] ?? '';
    if (part === '') continue;
    const { name, value } = splitParam(part);
    if (!PARAMS.has(name)) continue; // extensions: ignored, as RFC 2326 §1.5 asks
    if (out[name as keyof RtpInfoEntry] !== undefined) fail(`duplicate RTP-Info ${name}`);
    if (value === null) fail(`RTP-Info ${name} needs a value`);
    if (name === 'seq') out.seq = parseUint(value, 0xffff, 'RTP-Info seq');
    else out.rtptime = parseUint(value, 0xffffffff, 'RTP-Info rtptime');
  }
  return out;
}

export function parseRtpInfo(value: string): RtpInfoEntry[] {
  if (hasControlChar(value)) fail('control character in RTP-Info');
  const pieces = splitOutsideQuotes(value, ',');
  while (pieces.length > 0 && pieces[pieces.length - 1] === '') pieces.pop();
  const entries: string[] = [];
  for (const piece of pieces) {
    if (startsWithUrl(piece)) entries.push(piece);
    else if (entries.length === 0) fail('RTP-Info entry without url');
    else entries[entries.length - 1] += `,${piece}`;
  }
  if (entries.length === 0) fail('empty RTP-Info');
  return entries.map(parseEntry);
}

function formatEntry(e: RtpInfoEntry): string {
  if (e.url === '' || /\s/.test(e.url) || hasControlChar(e.url)) throw new TypeError('invalid RTP-Info url');
  let out = `url=${isBareUrl(e.url) ? e.url : quote(e.url)}`;
  if (e.seq !== undefined) {
    if (!Number.isInteger(e.seq) || e.seq < 0 || e.seq > 0xffff) throw new TypeError('invalid RTP-Info seq');
    out += `;seq=${e.seq}`;
  }
  if (e.rtptime !== undefined) {
    if (!Number.isInteger(e.rtptime) || e.rtptime < 0 || e.rtptime > 0xffffffff)
      throw new TypeError('invalid RTP-Info rtptime');
    out += `;rtptime=${e.rtptime}`;
  }
  return out;
}

export function formatRtpInfo(entries: readonly RtpInfoEntry[]): string {
  if (entries.length === 0) throw new TypeError('RTP-Info needs at least one entry');
  return entries.map(formatEntry).join(',');
}
