import { ByteQueue } from './byte-queue.js';
import { RtspParseError } from './errors.js';
import { hasControlChar, isToken, isTokenChar, trimLws } from './headers/syntax.js';

// RTSP/1.0 messages (RFC 2326 §4–§7) and the interleaved binary frames that share their TCP
// connection (§10.12), without any socket code: bytes in, parsed items out, and the reverse.

export type RtspHeadersInit =
  Iterable<readonly [string, string]> | Readonly<Record<string, string | readonly string[]>>;

function checkHeader(name: string, value: string): void {
  if (!isToken(name)) throw new TypeError(`invalid header name ${JSON.stringify(name)}`);
  // CR or LF would let a value smuggle in further headers or a second message.
  if (hasControlChar(value)) throw new TypeError(`control character in header ${name}`);
}

function sameName(a: string, b: string): boolean {
  return a.length === b.length && a.toLowerCase() === b.toLowerCase();
}

/**
 * Header fields in order, with names matched case-insensitively and spelled as first given.
 * A name may occur several times (WWW-Authenticate, for one); get() returns the first value.
 */
export class RtspHeaders implements Iterable<[string, string]> {
  readonly #list: Array<[string, string]> = [];

  constructor(init?: RtspHeadersInit) {
    if (init === undefined) return;
    if (Symbol.iterator in init) {
      for (const [name, value] of init as Iterable<readonly [string, string]>) this.append(name, value);
      return;
    }
    for (const [name, value] of Object.entries(init)) {
      if (typeof value === 'string') this.append(name, value);
      else for (const v of value) this.append(name, v);
    }
  }

  get size(): number {
    return this.#list.length;
  }

  get(name: string): string | undefined {
    for (const [n, v] of this.#list) if (sameName(n, name)) return v;
    return undefined;
  }

  getAll(name: string): string[] {
    const out: string[] = [];
    for (const [n, v] of this.#list) if (sameName(n, name)) out.push(v);
    return out;
  }

  has(name: string): boolean {
    return this.get(name) !== undefined;
  }

  /** Replaces every field of this name with one, at the place of the first. */
  set(name: string, value: string): this {
    checkHeader(name, value);
    const i = this.#list.findIndex(([n]) => sameName(n, name));
    if (i < 0) {
      this.#list.push([name, value]);
      return this;
    }
    this.#list[i] = [name, value];
    for (let j = this.#list.length - 1; j > i; j--)
      if (sameName(this.#list[j]?.[0] ?? '', name)) this.#list.splice(j, 1);
    return this;
  }

  append(name: string, value: string): this {
    checkHeader(name, value);
    this.#list.push([name, value]);
    return this;
  }

  delete(name: string): boolean {
    const before = this.#list.length;
    for (let j = this.#list.length - 1; j >= 0; j--)
      if (sameName(this.#list[j]?.[0] ?? '', name)) this.#list.splice(j, 1);
    return this.#list.length !== before;
  }

  /** Copies, so changing what this yields does not bypass the checks above. */
  *entries(): IterableIterator<[string, string]> {
    for (const [n, v] of this.#list) yield [n, v];
  }

  [Symbol.iterator](): IterableIterator<[string, string]> {
    return this.entries();
  }
}

export interface RtspRequest {
  method: string;
  /** As sent: usually an absolute rtsp:// URL, `*` for OPTIONS. */
  uri: string;
  version: 'RTSP/1.0';
  headers: RtspHeaders;
  body: Buffer;
}

export interface RtspResponse {
  status: number;
  reason: string;
  headers: RtspHeaders;
  body: Buffer;
}

export type ReadItem =
  | { kind: 'request'; msg: RtspRequest }
  | { kind: 'response'; msg: RtspResponse }
  | { kind: 'interleaved'; channel: number; payload: Buffer };

/** Reason phrases of RFC 2326 §7.1.1 (and 431 from RFC 6585), for answering with a status. */
const REASONS: ReadonlyMap<number, string> = new Map([
  [100, 'Continue'],
  [200, 'OK'],
  [201, 'Created'],
  [250, 'Low on Storage Space'],
  [300, 'Multiple Choices'],
  [301, 'Moved Permanently'],
  [302, 'Moved Temporarily'],
  [303, 'See Other'],
  [304, 'Not Modified'],
  [305, 'Use Proxy'],
  [400, 'Bad Request'],
  [401, 'Unauthorized'],
  [402, 'Payment Required'],
  [403, 'Forbidden'],
  [404, 'Not Found'],
  [405, 'Method Not Allowed'],
  [406, 'Not Acceptable'],
  [407, 'Proxy Authentication Required'],
  [408, 'Request Time-out'],
  [410, 'Gone'],
  [411, 'Length Required'],
  [412, 'Precondition Failed'],
  [413, 'Request Entity Too Large'],
  [414, 'Request-URI Too Large'],
  [415, 'Unsupported Media Type'],
  [431, 'Request Header Fields Too Large'],
  [451, 'Parameter Not Understood'],
  [452, 'Conference Not Found'],
  [453, 'Not Enough Bandwidth'],
  [454, 'Session Not Found'],
  [455, 'Method Not Valid in This State'],
  [456, 'Header Field Not Valid for Resource'],
  [457, 'Invalid Range'],
  [458, 'Parameter Is Read-Only'],
  [459, 'Aggregate operation not allowed'],
  [460, 'Only aggregate operation allowed'],
  [461, 'Unsupported transport'],
  [462, 'Destination unreachable'],
  [500, 'Internal Server Error'],
  [501, 'Not Implemented'],
  [502, 'Bad Gateway'],
  [503, 'Service Unavailable'],
  [504, 'Gateway Time-out'],
  [505, 'RTSP Version not supported'],
  [551, 'Option not supported'],
]);

export function reasonPhrase(status: number): string {
  return REASONS.get(status) ?? '';
}

// ---------------------------------------------------------------------------------------------
// Formatting

function formatMessage(startLine: string, headers: RtspHeaders, body: Buffer): Buffer {
  let head = `${startLine}\r\n`;
  for (const [name, value] of headers) if (!sameName(name, 'content-length')) head += `${name}: ${value}\r\n`;
  if (body.length > 0) head += `Content-Length: ${body.length}\r\n`;
  head += '\r\n';
  const bytes = Buffer.from(head, 'utf8');
  return body.length > 0 ? Buffer.concat([bytes, body]) : bytes;
}

function isRequestUri(uri: string): boolean {
  return uri.length > 0 && !/\s/.test(uri) && !hasControlChar(uri);
}

/** Content-Length comes from the body (omitted when it is empty); any given one is dropped. */
export function formatRequest(req: RtspRequest): Buffer {
  if (!isToken(req.method)) throw new TypeError(`invalid method ${JSON.stringify(req.method)}`);
  if (!isRequestUri(req.uri)) throw new TypeError('invalid request URI');
  if (req.version !== 'RTSP/1.0') throw new TypeError('only RTSP/1.0 is supported');
  return formatMessage(`${req.method} ${req.uri} RTSP/1.0`, req.headers, req.body);
}

export function formatResponse(res: RtspResponse): Buffer {
  if (!Number.isInteger(res.status) || res.status < 100 || res.status > 599)
    throw new TypeError(`invalid status ${res.status}`);
  if (hasControlChar(res.reason)) throw new TypeError('control character in reason phrase');
  return formatMessage(`RTSP/1.0 ${res.status} ${res.reason}`, res.headers, res.body);
}

/** Frames one interleaved packet: `$`, channel, 16-bit big-endian length, payload. */
export function formatInterleaved(channel: number, payload: Buffer): Buffer {
  if (!Number.isInteger(channel) || channel < 0 || channel > 255) throw new TypeError('channel must be 0..255');
  if (payload.length > 0xffff) throw new TypeError('an interleaved payload is at most 65535 bytes');
  const out = Buffer.alloc(4 + payload.length);
  out[0] = 0x24;
  out[1] = channel;
  out.writeUInt16BE(payload.length, 2);
  payload.copy(out, 4);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Parsing

export interface RtspStreamReaderOptions {
  /** Start line plus header fields plus the blank line. Default 8 KiB. */
  maxHeaderBytes?: number;
  /** Largest Content-Length accepted. Default 64 KiB (an SDP is a few KiB). */
  maxBodyBytes?: number;
  /** Largest interleaved frame including its 4-byte header. Default 64 KiB + 4, i.e. any frame. */
  maxInterleavedBytes?: number;
}

const CR = 0x0d;
const LF = 0x0a;
const SP = 0x20;
const HT = 0x09;
const DOLLAR = 0x24;
const RESPONSE_PREFIX = 'RTSP/';

interface HeadScan {
  /** Bytes of this message examined so far. */
  pos: number;
  firstLineDone: boolean;
  start: 'unknown' | 'request' | 'response';
  /** Still reading the method token of a request line. */
  inMethod: boolean;
  /** Non-CR bytes on the current header line: 0 at a line end means the blank line. */
  lineLen: number;
}

type State =
  | { phase: 'start' }
  | { phase: 'frame' }
  | { phase: 'head'; scan: HeadScan }
  | { phase: 'body'; item: Extract<ReadItem, { kind: 'request' | 'response' }>; length: number };

// The two states without data, made once: a camera's stream passes through them for every packet.
const START: State = { phase: 'start' };
const FRAME: State = { phase: 'frame' };

function positiveInt(value: number | undefined, fallback: number, min: number, what: string): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < min) throw new TypeError(`${what} must be an integer >= ${min}`);
  return value;
}

function fail(status: number, message: string): never {
  throw new RtspParseError(status, message);
}

/**
 * Splits one RTSP connection's byte stream into requests, responses and interleaved frames,
 * in any mix and however the bytes are chunked.
 *
 * Usage: after each push(), call next() until it returns null. Done that way, the bytes held
 * between pushes never exceed the largest limit: one incomplete header section, body or frame.
 *
 * A message body or frame payload is a view of the pushed chunk when it lies inside one (so
 * do not reuse a Buffer after pushing it) and a copy when it spans chunks; hold on to a view
 * and you hold on to its whole chunk.
 *
 * The first RtspParseError is final: the stream cannot be resynchronised (a frame length or a
 * body length may be what was wrong), so every later next() throws it again and push() drops
 * its input. Answer with its status, if a server, and close the connection.
 */
export class RtspStreamReader {
  readonly #maxHeader: number;
  readonly #maxBody: number;
  readonly #maxFrame: number;
  readonly #queue = new ByteQueue();
  #state: State = START;
  #failed: RtspParseError | null = null;

  constructor(opts: RtspStreamReaderOptions = {}) {
    this.#maxHeader = positiveInt(opts.maxHeaderBytes, 8 * 1024, 16, 'maxHeaderBytes');
    this.#maxBody = positiveInt(opts.maxBodyBytes, 64 * 1024, 0, 'maxBodyBytes');
    this.#maxFrame = positiveInt(opts.maxInterleavedBytes, 64 * 1024 + 4, 4, 'maxInterleavedBytes');
  }

  /** Bytes received and not yet returned by next(). */
  get bufferedBytes(): number {
    return this.#queue.length;
  }

  push(chunk: Buffer): void {
    if (this.#failed === null) this.#queue.push(chunk);
  }

  /** The next complete item, or null until more bytes arrive. Throws RtspParseError only. */
  next(): ReadItem | null {
    if (this.#failed !== null) throw this.#failed;
    try {
      return this.#next();
    } catch (err) {
      if (err instanceof RtspParseError) {
        this.#failed = err;
        this.#queue.clear();
      }
      throw err;
    }
  }

  #next(): ReadItem | null {
    const q = this.#queue;
    for (;;) {
      const state = this.#state;
      switch (state.phase) {
        case 'start': {
          // Empty lines between messages are tolerated (RFC 7826 §20.2.1 robustness; some
          // clients send a bare CRLF as a keep-alive).
          while (q.length > 0 && (q.byteAt(0) === CR || q.byteAt(0) === LF)) q.skip(1);
          if (q.length === 0) return null;
          this.#state =
            q.byteAt(0) === DOLLAR
              ? FRAME
              : { phase: 'head', scan: { pos: 0, firstLineDone: false, start: 'unknown', inMethod: true, lineLen: 0 } };
          break;
        }
        case 'frame': {
          if (q.length < 4) return null;
          const channel = q.byteAt(1);
          const size = (q.byteAt(2) << 8) | q.byteAt(3);
          if (4 + size > this.#maxFrame) fail(413, `interleaved frame of ${size} bytes exceeds the limit`);
          if (q.length < 4 + size) return null;
          q.skip(4);
          const payload = q.take(size);
          this.#state = START;
          return { kind: 'interleaved', channel, payload };
        }
        case 'head': {
          const s = state.scan;
          const end = q.scan(s.pos, this.#maxHeader, (b) => visitHeadByte(s, b));
          if (end < 0) {
            if (s.pos >= this.#maxHeader) this.#oversizedHead(s);
            return null;
          }
          const item = parseHead(q.take(end + 1).toString('utf8'));
          const length = contentLength(item.msg.headers, this.#maxBody);
          this.#state = { phase: 'body', item, length };
          break;
        }
        case 'body': {
          if (q.length < state.length) return null;
          state.item.msg.body = q.take(state.length);
          this.#state = START;
          return state.item;
        }
      }
    }
  }

  #oversizedHead(s: HeadScan): never {
    if (!s.firstLineDone) {
      if (s.start === 'request' && !s.inMethod) fail(414, 'request line too long');
      if (s.start !== 'response') fail(400, 'not an RTSP message');
    }
    return fail(431, 'header section too large');
  }
}

/**
 * One byte of a header section; true at the blank line that ends it. The start line is
 * checked as it arrives, so a stream that is not RTSP (or lost its framing) fails at once
 * rather than after filling the header limit.
 */
function visitHeadByte(s: HeadScan, b: number): boolean {
  const p = s.pos++;
  if (s.firstLineDone) {
    if (b === LF) {
      if (s.lineLen === 0) return true;
      s.lineLen = 0;
    } else if (b !== CR) {
      s.lineLen++;
    }
    return false;
  }
  if (b === LF) {
    if (s.start === 'unknown' || (s.start === 'request' && s.inMethod)) fail(400, 'malformed start line');
    s.firstLineDone = true;
    s.lineLen = 0;
    return false;
  }
  if (b === CR) return false;
  if ((b < 0x20 && b !== HT) || b === 0x7f) fail(400, 'control character in start line');
  if (s.start === 'unknown') {
    if (b === RESPONSE_PREFIX.charCodeAt(p)) {
      if (p === RESPONSE_PREFIX.length - 1) {
        s.start = 'response';
        s.inMethod = false;
      }
      return false;
    }
    s.start = 'request'; // the bytes so far were a prefix of "RTSP", all token characters
  }
  if (s.start === 'request' && s.inMethod) {
    if (b === SP || b === HT) {
      if (p === 0) fail(400, 'request line starts with white space');
      s.inMethod = false;
    } else if (!isTokenChar(b)) {
      fail(400, 'not an RTSP message');
    }
  }
  return false;
}

function parseVersion(version: string): void {
  if (version === 'RTSP/1.0') return;
  if (/^[A-Za-z]+\/\d+\.\d+$/.test(version)) fail(505, `unsupported version ${version}`);
  fail(400, 'malformed version');
}

function splitWs(line: string): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < line.length) {
    while (i < line.length && (line.charCodeAt(i) === SP || line.charCodeAt(i) === HT)) i++;
    const start = i;
    while (i < line.length && line.charCodeAt(i) !== SP && line.charCodeAt(i) !== HT) i++;
    if (i > start) out.push(line.slice(start, i));
  }
  return out;
}

function parseHead(text: string): Extract<ReadItem, { kind: 'request' | 'response' }> {
  const lines = text.split('\n');
  const clean = (line: string): string => {
    const l = line.endsWith('\r') ? line.slice(0, -1) : line;
    if (hasControlChar(l)) fail(400, 'control character in header section');
    return l;
  };
  const startLine = clean(lines[0] ?? '');
  const fields: Array<[string, string]> = [];
  for (let i = 1; i < lines.length; i++) {
    const line = clean(lines[i] ?? '');
    if (line === '') break;
    const c0 = line.charCodeAt(0);
    if (c0 === SP || c0 === HT) {
      // obs-fold: a continuation of the previous field's value (RFC 2326 §4.2 via HTTP/1.1).
      const last = fields[fields.length - 1];
      if (last === undefined) fail(400, 'continuation line before any header');
      const more = trimLws(line);
      if (more !== '') last[1] = last[1] === '' ? more : `${last[1]} ${more}`;
      continue;
    }
    const colon = line.indexOf(':');
    if (colon <= 0) fail(400, 'header line without a name');
    // White space before the colon is tolerated: cameras send `CSeq : 1`.
    const name = trimLws(line.slice(0, colon));
    if (!isToken(name)) fail(400, 'invalid header name');
    fields.push([name, trimLws(line.slice(colon + 1))]);
  }
  const headers = new RtspHeaders(fields);
  const empty = Buffer.alloc(0);

  if (startLine.startsWith(RESPONSE_PREFIX)) {
    const sp = startLine.search(/[ \t]/);
    parseVersion(sp < 0 ? startLine : startLine.slice(0, sp));
    const rest = sp < 0 ? '' : trimLws(startLine.slice(sp));
    const codeEnd = rest.search(/[ \t]|$/);
    const code = rest.slice(0, codeEnd);
    if (!/^[1-5]\d\d$/.test(code)) fail(400, 'malformed status code');
    return {
      kind: 'response',
      msg: { status: Number(code), reason: trimLws(rest.slice(codeEnd)), headers, body: empty },
    };
  }
  const parts = splitWs(startLine);
  if (parts.length !== 3) fail(400, 'malformed request line');
  const [method = '', uri = '', version = ''] = parts;
  parseVersion(version);
  return { kind: 'request', msg: { method, uri, version: 'RTSP/1.0', headers, body: empty } };
}

function contentLength(headers: RtspHeaders, max: number): number {
  const values = headers.getAll('content-length');
  if (values.length === 0) return 0; // RTSP has no chunked coding: no Content-Length, no body
  let length: number | null = null;
  for (const v of values) {
    if (!/^\d+$/.test(v)) fail(400, 'invalid Content-Length');
    // A long digit string is over any sane limit; converting it first would lose precision.
    const n = v.replace(/^0+(?=\d)/, '').length > 15 ? Infinity : Number(v);
    if (length !== null && n !== length) fail(400, 'conflicting Content-Length');
    length = n;
  }
  if (length === null) return 0;
  if (length > max) fail(413, `body of ${length} bytes exceeds the limit`);
  return length;
}
