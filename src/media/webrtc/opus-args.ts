// The ffmpeg command line of the AAC → Opus transcoder (spawned without a shell by
// audio-transcoders.ts), as a pure function. Only the camera's audio is asked of the relay
// (`-allowed_media_types audio`: the video track is never set up, so nothing of it is decoded or
// even carried); the one decode and encode on the box is this small audio stream.

export interface OpusArgs {
  /** The relay's loopback URL with a recorder ticket (the camera keeps one session). */
  inputUrl: string;
  /** Where the Opus RTP goes: our UDP socket on loopback. */
  port: number;
  /** Opus payload type inside ffmpeg's packets (rewritten per peer anyway). */
  payloadType: number;
  /** Opus bit rate, bit/s. */
  bitrate: number;
  /** Seconds without a byte from the relay before ffmpeg gives up (then it is restarted). */
  readTimeoutS: number;
}

export function opusTranscodeArgs(o: OpusArgs): string[] {
  return [
    '-hide_banner',
    '-nostdin',
    '-loglevel',
    'warning',
    // Start at once: the SDP's config says all there is to know about AAC.
    '-fflags',
    'nobuffer',
    '-probesize',
    '32768',
    '-analyzeduration',
    '0',
    '-rtsp_transport',
    'tcp',
    '-allowed_media_types',
    'audio',
    '-timeout',
    String(Math.round(o.readTimeoutS * 1_000_000)),
    '-i',
    o.inputUrl,
    '-map',
    '0:a:0',
    '-vn',
    // Browsers take opus/48000/2 only (RFC 7587); 20 ms frames, tuned for low delay.
    '-c:a',
    'libopus',
    '-application',
    'lowdelay',
    '-frame_duration',
    '20',
    '-b:a',
    String(o.bitrate),
    '-ar',
    '48000',
    '-ac',
    '2',
    '-payload_type',
    String(o.payloadType),
    // RTCP goes to the same socket (and is dropped there), not to a port nobody owns.
    '-f',
    'rtp',
    `rtp://127.0.0.1:${o.port}?rtcpport=${o.port}&pkt_size=1200`,
  ];
}
