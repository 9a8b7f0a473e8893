// Bytes from a camera that cannot become a playable track: a parameter set or an audio config that
// does not parse, an access unit the muxer cannot place. One error class so that callers (the HLS
// server later) map it to one answer; `code` says which input was wrong.

export type MediaFormatCode = 'bad_sps' | 'bad_pps' | 'bad_vps' | 'bad_audio_config' | 'bad_sample' | 'bad_box' | 'bad_timestamp';

export class MediaFormatError extends Error {
  override readonly name = 'MediaFormatError';
  constructor(
    readonly code: MediaFormatCode,
    message: string,
  ) {
    super(message);
  }
}
