import type { AudioFrame, DepacketizerStats } from './access-unit.js';
import { MediaFormatError } from './errors.js';
import { packetsLostBefore, type RtpHeader } from './rtp.js';

// AAC in RTP as cameras send it: mpeg4-generic (RFC 3640) in AAC-hbr or AAC-lbr mode. A packet holds
// an AU-headers section (a 16-bit length in bits, then one header per access unit: its size and an
// index) and the access units back to back; one AU larger than a packet is fragmented over packets
// that share its RTP timestamp, the last with the marker bit. Frames within a packet are
// `samplesPerFrame` apart (1024 for AAC-LC). Interleaving (a non-zero index delta) is not supported:
// such packets are dropped and counted, as are malformed and lost ones; nothing throws on packet bytes.

export interface AacRtpParameters {
  sizeLength: number;
  indexLength: number;
  indexDeltaLength: number;
}

const MAX_FIELD_BITS = 32;

/** The AU header layout of an mpeg4-generic fmtp; a MediaFormatError when it is absent or absurd. */
export function aacRtpParameters(fmtp: ReadonlyMap<string, string>): AacRtpParameters {
  const field = (name: string, fallback: number | undefined): number => {
    const raw = fmtp.get(name);
    if (raw === undefined) {
      if (fallback === undefined) throw new MediaFormatError('bad_audio_config', `fmtp ${name} missing`);
      return fallback;
    }
    if (!/^\d{1,2}$/.test(raw) || Number(raw) > MAX_FIELD_BITS)
      throw new MediaFormatError('bad_audio_config', `fmtp ${name}=${raw}`);
    return Number(raw);
  };
  const mode = (fmtp.get('mode') ?? '').toLowerCase();
  // RFC 3640 3.3.5/3.3.6 fix these per mode; an fmtp may still spell them out.
  const defaults = mode === 'aac-lbr' ? [6, 2, 2] : mode === 'aac-hbr' ? [13, 3, 3] : [undefined, 0, 0];
  const sizeLength = field('sizelength', defaults[0]);
  if (sizeLength < 1) throw new MediaFormatError('bad_audio_config', 'fmtp sizelength=0');
  return {
    sizeLength,
    indexLength: field('indexlength', defaults[1]),
    indexDeltaLength: field('indexdeltalength', defaults[2]),
  };
}

export class AacDepacketizer {
  readonly stats: DepacketizerStats = { units: 0, dropped: 0, lostPackets: 0 };
  private lastSequence = -1;
  private lossSinceEmit = false;
  private fragments: Buffer[] = [];
  private fragmentBytes = 0;
  private fragmentSize = 0;
  private fragmentTime = 0;

  constructor(
    private readonly params: AacRtpParameters,
    private readonly emit: (frame: AudioFrame) => void,
    private readonly samplesPerFrame = 1024,
    private readonly maxFrameBytes = 1 << 16,
  ) {}

  push(packet: Buffer, header: RtpHeader): void {
    const lost = packetsLostBefore(header.sequence, this.lastSequence);
    if (lost < 0) return;
    this.lastSequence = header.sequence;
    if (lost > 0) {
      this.stats.lostPackets += lost;
      this.lossSinceEmit = true;
      this.dropFragment();
    }
    if (!this.read(packet, header.payloadOffset, header.payloadLength, header.timestamp, header.marker)) {
      // A broken fragment counts once, as the frame it was part of.
      if (this.fragments.length === 0) this.stats.dropped++;
      this.lossSinceEmit = true;
      this.dropFragment();
    }
  }

  private dropFragment(): void {
    if (this.fragments.length > 0) this.stats.dropped++;
    this.fragments = [];
    this.fragmentBytes = 0;
  }

  private read(p: Buffer, offset: number, length: number, rtpTime: number, marker: boolean): boolean {
    if (length < 2) return false;
    const end = offset + length;
    const headerBits = p.readUInt16BE(offset);
    const headerBytes = Math.ceil(headerBits / 8);
    let data = offset + 2 + headerBytes;
    if (data > end) return false;
    const { sizeLength, indexLength, indexDeltaLength } = this.params;
    let bit = (offset + 2) * 8;
    const headerEnd = bit + headerBits;
    const readBits = (n: number): number => {
      let v = 0;
      for (let i = 0; i < n; i++, bit++) v = v * 2 + ((p.readUInt8(bit >> 3) >> (7 - (bit & 7))) & 1);
      return v;
    };
    const sizes: number[] = [];
    while (bit < headerEnd) {
      const indexBits = sizes.length === 0 ? indexLength : indexDeltaLength;
      if (bit + sizeLength + indexBits > headerEnd) return false;
      const size = readBits(sizeLength);
      if (readBits(indexBits) !== 0) return false; // interleaved: not supported
      sizes.push(size);
    }
    if (sizes.length === 0) return false;
    const first = sizes[0] ?? 0;
    if (this.fragments.length > 0 || (sizes.length === 1 && first > end - data)) {
      // A fragment of one large access unit.
      if (sizes.length !== 1) return false;
      if (this.fragments.length > 0 && (rtpTime !== this.fragmentTime || first !== this.fragmentSize)) return false;
      if (first > this.maxFrameBytes) return false;
      this.fragmentTime = rtpTime;
      this.fragmentSize = first;
      this.fragments.push(p.subarray(data, end));
      this.fragmentBytes += end - data;
      if (this.fragmentBytes > first) return false;
      if (!marker) return true;
      if (this.fragmentBytes !== first) return false;
      const frame = Buffer.concat(this.fragments, first);
      this.fragments = [];
      this.fragmentBytes = 0;
      this.hand(rtpTime, frame);
      return true;
    }
    let total = 0;
    for (const size of sizes) total += size;
    if (data + total > end || sizes.some((s) => s === 0)) return false;
    sizes.forEach((size, i) => {
      this.hand((rtpTime + i * this.samplesPerFrame) >>> 0, p.subarray(data, data + size));
      data += size;
    });
    return true;
  }

  private hand(rtpTime: number, data: Buffer): void {
    this.stats.units++;
    const afterLoss = this.lossSinceEmit;
    this.lossSinceEmit = false;
    this.emit({ rtpTime, data, afterLoss });
  }
}
