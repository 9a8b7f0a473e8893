import { MediaFormatError } from './errors.js';

// MPEG-4 AudioSpecificConfig (ISO/IEC 14496-3 1.6.2.1) as an RTSP camera gives it: the hex `config`
// of an mpeg4-generic fmtp (RFC 3640) or of MP4A-LATM's StreamMuxConfig payload. The esds box
// carries the bytes as they are; the fields here are for the mp4a sample entry and CODECS.

export interface AacConfig {
  /** 2 = AAC-LC, 5 = SBR (HE-AAC), 29 = PS, … */
  objectType: number;
  sampleRate: number;
  channels: number;
  /** The config bytes as given, for the esds DecoderSpecificInfo. */
  bytes: Buffer;
}

const SAMPLE_RATES = [96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350];

/** Parses an AudioSpecificConfig; a MediaFormatError('bad_audio_config') when it is not one we can carry. */
export function parseAacConfig(bytes: Buffer): AacConfig {
  if (bytes.length < 2 || bytes.length > 64)
    throw new MediaFormatError('bad_audio_config', `AudioSpecificConfig of ${bytes.length} bytes`);
  let bit = 0;
  const read = (n: number): number => {
    let v = 0;
    for (let i = 0; i < n; i++, bit++) {
      const byte = bytes[bit >> 3];
      if (byte === undefined) throw new MediaFormatError('bad_audio_config', 'AudioSpecificConfig ends early');
      v = v * 2 + ((byte >> (7 - (bit & 7))) & 1);
    }
    return v;
  };
  let objectType = read(5);
  if (objectType === 31) objectType = 32 + read(6);
  const rateIndex = read(4);
  const sampleRate = rateIndex === 15 ? read(24) : SAMPLE_RATES[rateIndex];
  if (sampleRate === undefined || sampleRate < 1000 || sampleRate > 192000)
    throw new MediaFormatError('bad_audio_config', `sampling frequency index ${rateIndex}`);
  const channelConfig = read(4);
  // 0 means a program_config_element says it; cameras send mono or stereo, 7 is 7.1.
  if (channelConfig < 1 || channelConfig > 7)
    throw new MediaFormatError('bad_audio_config', `channel configuration ${channelConfig}`);
  if (objectType === 0) throw new MediaFormatError('bad_audio_config', 'audio object type 0');
  return { objectType, sampleRate, channels: channelConfig === 7 ? 8 : channelConfig, bytes: Buffer.from(bytes) };
}

/** The hex `config` of an fmtp, parsed; a MediaFormatError when it is absent or not hex. */
export function aacConfigFromFmtp(fmtp: ReadonlyMap<string, string>): AacConfig {
  const hex = fmtp.get('config');
  if (hex === undefined || !/^(?:[0-9a-fA-F]{2}){2,64}$/.test(hex))
    throw new MediaFormatError('bad_audio_config', 'fmtp config missing or not hex');
  return parseAacConfig(Buffer.from(hex, 'hex'));
}
