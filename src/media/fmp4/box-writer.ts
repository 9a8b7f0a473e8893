import { MediaFormatError } from '../errors.js';

// ISO BMFF boxes written into one buffer: start() reserves a box's size field, end() fills it in
// once its contents are written, so nested boxes need no size arithmetic and no intermediate
// buffers. Callers that know the exact size up front (fragments) pass it as the capacity and the
// box bytes take one allocation; otherwise the buffer doubles when full.

const MAX_BOX_SIZE = 0xffffffff;

export class BoxWriter {
  private buf: Buffer;
  private at = 0;
  private readonly open: number[] = [];

  constructor(capacity = 1024) {
    this.buf = Buffer.allocUnsafe(capacity);
  }

  get length(): number {
    return this.at;
  }

  /** Opens a box: its size is written by the matching end(). */
  start(type: string): this {
    this.open.push(this.at);
    this.u32(0);
    return this.fourcc(type);
  }

  /** Opens a full box (a version byte and 24 bits of flags after the type). */
  startFull(type: string, version: number, flags: number): this {
    return this.start(type).u8(version).u24(flags);
  }

  end(): this {
    const start = this.open.pop();
    if (start === undefined) throw new Error('BoxWriter.end() without start()');
    const size = this.at - start;
    if (size > MAX_BOX_SIZE) throw new MediaFormatError('bad_box', `box of ${size} bytes`);
    this.buf.writeUInt32BE(size, start);
    return this;
  }

  fourcc(code: string): this {
    if (code.length !== 4) throw new Error(`box type ${JSON.stringify(code)} is not four characters`);
    this.reserve(4);
    this.buf.write(code, this.at, 'latin1');
    this.at += 4;
    return this;
  }

  u8(v: number): this {
    this.reserve(1);
    this.buf.writeUInt8(v, this.at);
    this.at += 1;
    return this;
  }

  u16(v: number): this {
    this.reserve(2);
    this.buf.writeUInt16BE(v, this.at);
    this.at += 2;
    return this;
  }

  i16(v: number): this {
    this.reserve(2);
    this.buf.writeInt16BE(v, this.at);
    this.at += 2;
    return this;
  }

  u24(v: number): this {
    this.reserve(3);
    this.buf.writeUIntBE(v, this.at, 3);
    this.at += 3;
    return this;
  }

  u32(v: number): this {
    this.reserve(4);
    this.buf.writeUInt32BE(v, this.at);
    this.at += 4;
    return this;
  }

  i32(v: number): this {
    this.reserve(4);
    this.buf.writeInt32BE(v, this.at);
    this.at += 4;
    return this;
  }

  /** An integer up to 2^53 as 64 bits. */
  u64(v: number): this {
    return this.u32(Math.floor(v / 2 ** 32)).u32(v >>> 0);
  }

  bytes(data: Uint8Array): this {
    this.reserve(data.length);
    this.buf.set(data, this.at);
    this.at += data.length;
    return this;
  }

  zeros(n: number): this {
    this.reserve(n);
    this.buf.fill(0, this.at, this.at + n);
    this.at += n;
    return this;
  }

  /** The bytes written; every box must be closed. */
  finish(): Buffer {
    if (this.open.length > 0) throw new Error(`BoxWriter.finish() with ${this.open.length} box(es) open`);
    return this.buf.subarray(0, this.at);
  }

  private reserve(n: number): void {
    if (this.at + n <= this.buf.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.at + n));
    this.buf.copy(grown, 0, 0, this.at);
    this.buf = grown;
  }
}

/** The 3×3 unity matrix of tkhd and mvhd (16.16 and 2.30 fixed point). */
export function writeUnityMatrix(w: BoxWriter): void {
  for (const v of [0x00010000, 0, 0, 0, 0x00010000, 0, 0, 0, 0x40000000]) w.u32(v);
}
