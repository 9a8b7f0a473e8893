// What the depacketisers hand on: whole pictures and whole audio frames, timed by their RTP
// timestamps (the camera's clock for the track; rtp-clock.ts places it on a shared timeline).

/** One picture's NAL units (headers included, no start codes or length prefixes), in decoding order. */
export interface VideoAccessUnit {
  /** RTP timestamp: the picture's presentation time at the track's clock rate (90 kHz). */
  rtpTime: number;
  nalus: Buffer[];
  /** An IDR (H.264) or IRAP (H.265) picture: a decoder can start here. */
  keyframe: boolean;
  /** Packets were lost (or a broken access unit dropped) since the previous unit handed on. */
  afterLoss: boolean;
}

/** One coded audio frame (e.g. an AAC raw_data_block). */
export interface AudioFrame {
  rtpTime: number;
  data: Buffer;
  afterLoss: boolean;
}

/** Counters every depacketiser keeps, for /metrics once a muxer is served. */
export interface DepacketizerStats {
  /** Units handed on. */
  units: number;
  /** Units dropped whole: lost or malformed packets inside, or over the size bound. */
  dropped: number;
  /** Sequence numbers skipped by the camera's stream (lost on the way). */
  lostPackets: number;
}
