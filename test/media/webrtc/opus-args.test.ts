import { describe, expect, it } from 'vitest';
import { opusTranscodeArgs } from '../../../src/media/webrtc/opus-args.js';

// The transcoder's command line: the audio alone asked of the relay, Opus as browsers take it, RTP
// to our loopback socket with RTCP to the same port (not to one nobody owns).

describe('opusTranscodeArgs', () => {
  const args = opusTranscodeArgs({
    inputUrl: 'rtsp://127.0.0.1:8554/live/T',
    port: 40000,
    payloadType: 111,
    bitrate: 32000,
    readTimeoutS: 5,
  });
  const after = (flag: string) => args[args.indexOf(flag) + 1];

  it('reads only the audio of the relay URL over TCP, with a read timeout', () => {
    expect(after('-i')).toBe('rtsp://127.0.0.1:8554/live/T');
    expect(after('-allowed_media_types')).toBe('audio');
    expect(after('-rtsp_transport')).toBe('tcp');
    expect(after('-timeout')).toBe('5000000');
    expect(args.indexOf('-allowed_media_types')).toBeLessThan(args.indexOf('-i'));
    expect(after('-map')).toBe('0:a:0');
  });

  it('encodes opus/48000/2 and sends RTP with RTCP to the same loopback port', () => {
    expect(after('-c:a')).toBe('libopus');
    expect(after('-ar')).toBe('48000');
    expect(after('-ac')).toBe('2');
    expect(after('-b:a')).toBe('32000');
    expect(after('-payload_type')).toBe('111');
    expect(args.at(-1)).toBe('rtp://127.0.0.1:40000?rtcpport=40000&pkt_size=1200');
    expect(args).toContain('-nostdin');
  });
});
