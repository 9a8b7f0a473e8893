// RTP packets built by hand for the depacketiser tables.

export function rtp(
  sequence: number,
  timestamp: number,
  marker: boolean,
  payload: Buffer | number[],
  payloadType = 96,
): Buffer {
  const p = Buffer.alloc(12);
  p[0] = 0x80;
  p[1] = (marker ? 0x80 : 0) | payloadType;
  p.writeUInt16BE(sequence & 0xffff, 2);
  p.writeUInt32BE(timestamp >>> 0, 4);
  p.writeUInt32BE(0x1234, 8);
  return Buffer.concat([p, Buffer.from(payload)]);
}

/** STAP-A (H.264) or AP (H.265, two-byte header) of the given NAL units. */
export function aggregate(header: number[], nalus: Buffer[]): Buffer {
  return Buffer.concat([Buffer.from(header), ...nalus.flatMap((n) => [Buffer.of(n.length >> 8, n.length & 0xff), n])]);
}
