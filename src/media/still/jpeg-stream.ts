import { JpegStreamError } from './errors.js';

// ffmpeg's `-f image2pipe -c:v mjpeg` output is JPEGs back to back with nothing between them; this
// cuts it into pictures as the pipe's chunks come. Pure. A JPEG (ITU-T T.81 B.1–B.2): SOI, marker
// segments that each carry a two-byte length (so an FF D9 inside a table is not an end), and after
// each SOS segment entropy-coded data in which FF is followed only by 00 (stuffing) or D0–D7
// (restart markers): any other marker ends the scan (EOI, another SOS of a progressive picture, DNL).

const SOI = 0xd8;
const EOI = 0xd9;
const SOS = 0xda;

type Mode = 'start' | 'segments' | 'entropy';

export class JpegSplitter {
  private buf: Buffer = Buffer.alloc(0);
  /** Where parsing continues in buf. */
  private at = 0;
  private mode: Mode = 'start';

  /** maxBytes: a picture larger than this is an error (the stream is not what it should be). */
  constructor(private readonly maxBytes: number) {}

  /** Bytes held of a picture not yet whole. */
  get pending(): number {
    return this.buf.length;
  }

  /** Takes the next chunk; returns the pictures it completed, in order. Throws JpegStreamError. */
  push(chunk: Buffer): Buffer[] {
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
    const out: Buffer[] = [];
    for (;;) {
      const end = this.scan();
      if (end === null) break;
      out.push(Buffer.from(this.buf.subarray(0, end)));
      this.buf = this.buf.subarray(end);
      this.at = 0;
      this.mode = 'start';
    }
    if (this.buf.length > this.maxBytes) throw new JpegStreamError(`a picture larger than ${this.maxBytes} bytes`);
    return out;
  }

  /** Advances the parse; the end of a whole picture, or null when more bytes are needed. */
  private scan(): number | null {
    const b = this.buf;
    for (;;) {
      if (this.mode === 'start') {
        if (b.length < 2) return null;
        if (b[0] !== 0xff || b[1] !== SOI) throw new JpegStreamError('bytes that do not begin a JPEG (no SOI)');
        this.at = 2;
        this.mode = 'segments';
        continue;
      }
      if (this.mode === 'entropy') {
        // FF 00 and FF D0–D7 belong to the data; FF FF is fill before a marker.
        let i = this.at;
        for (;;) {
          i = b.indexOf(0xff, i);
          if (i < 0 || i + 1 >= b.length) {
            this.at = i < 0 ? b.length : i;
            return null;
          }
          const next = b[i + 1] ?? 0;
          if (next === 0 || (next >= 0xd0 && next <= 0xd7) || next === 0xff) i++;
          else break;
        }
        this.at = i;
        this.mode = 'segments';
        continue;
      }
      // segments: a marker at `at`, maybe after fill bytes (FF FF …).
      let i = this.at;
      while (i < b.length && b[i] === 0xff && b[i + 1] === 0xff) i++;
      if (i + 1 >= b.length) return null;
      if (b[i] !== 0xff) throw new JpegStreamError(`no marker where one must be (offset ${i})`);
      const marker = b[i + 1] ?? 0;
      if (marker === EOI) return i + 2;
      if (marker === SOI || marker === 0)
        throw new JpegStreamError(`an unexpected marker FF ${marker.toString(16).padStart(2, '0')} (offset ${i})`);
      if ((marker >= 0xd0 && marker <= 0xd7) || marker === 0x01) {
        this.at = i + 2; // markers without a length (RSTn, TEM)
        continue;
      }
      if (i + 4 > b.length) {
        this.at = i;
        return null;
      }
      const length = b.readUInt16BE(i + 2);
      if (length < 2) throw new JpegStreamError(`a segment length of ${length} (offset ${i})`);
      if (i + 2 + length > b.length) {
        this.at = i;
        return null;
      }
      this.at = i + 2 + length;
      if (marker === SOS) this.mode = 'entropy';
    }
  }
}
