import { BitstreamEndError } from './errors.js';

// Exp-Golomb bit reading over an H.264/H.265 RBSP, for the parameter-set parsers (h26x.ts, h265-sps.ts).

export class BitReader {
  private bit = 0;
  constructor(private readonly bytes: Buffer) {}

  u1(): number {
    const byte = this.bytes[this.bit >> 3];
    if (byte === undefined) throw new BitstreamEndError('bitstream ends early');
    const v = (byte >> (7 - (this.bit & 7))) & 1;
    this.bit++;
    return v;
  }

  /** n ≤ 32 bits, most significant first. */
  u(n: number): number {
    let v = 0;
    for (let i = 0; i < n; i++) v = v * 2 + this.u1();
    return v;
  }

  skip(n: number): void {
    if (this.bit + n > this.bytes.length * 8) throw new BitstreamEndError('bitstream ends early');
    this.bit += n;
  }

  ue(): number {
    let zeros = 0;
    while (this.u1() === 0) {
      // 32 leading zeros would code a value beyond 2^32 - 2, which no parameter-set field takes.
      if (++zeros > 31) throw new BitstreamEndError('exp-Golomb code too long');
    }
    return 2 ** zeros - 1 + this.u(zeros);
  }

  se(): number {
    const k = this.ue();
    return k % 2 === 1 ? (k + 1) / 2 : -(k / 2);
  }
}

/** The RBSP of a NAL unit from byte `from`: without emulation-prevention bytes (00 00 03 → 00 00). */
export function unescapeRbsp(nal: Buffer, from: number): Buffer {
  const out = Buffer.alloc(Math.max(0, nal.length - from));
  let n = 0;
  let zeros = 0;
  for (let i = from; i < nal.length; i++) {
    const byte = nal.readUInt8(i);
    if (zeros >= 2 && byte === 3) {
      zeros = 0;
      continue;
    }
    zeros = byte === 0 ? zeros + 1 : 0;
    out[n++] = byte;
  }
  return out.subarray(0, n);
}
