import { describe, expect, it } from 'vitest';
import { findBox, findBoxes, readBoxes, readTfdt, readTfhd, readTrun } from '../../../src/media/fmp4/reader.js';
import { FragmentMuxer, type FragmentMuxerOptions } from '../../../src/media/mux/fragment-muxer.js';
import { keepPart, type KeptPart } from '../../../src/media/mux/part-assembler.js';
import { rtp } from '../fmp4/rtp-packets.js';
import {
  AAC_SECTION,
  AUDIO_START,
  PACKET_SAMPLES,
  PCMA_SECTION,
  PCMU_SECTION,
  VIDEO_START,
  audioPayload,
  cameraSdp,
  cameraStream,
  type StreamPacket,
} from './synthetic-camera.js';

// FragmentMuxer on a hand-made camera stream (H.264 at 10 fps, G.711 in 20 ms packets): which
// tracks it makes, and where each part's audio lies beside its video.

const OPTIONS: FragmentMuxerOptions = { partTarget: 0.5, targetDuration: 0.5, wallClock: () => 0 };

function mux(sdp: string, packets: StreamPacket[], options: Partial<FragmentMuxerOptions> = {}) {
  const parts: KeptPart[] = [];
  const muxer = new FragmentMuxer(sdp, { ...OPTIONS, ...options }, { addPart: (p) => parts.push(keepPart(p)) });
  muxer.setStarts([
    { track: 0, rtpTime: VIDEO_START },
    { track: 1, rtpTime: AUDIO_START },
  ]);
  for (const { track, packet } of packets) muxer.deliver(track, packet);
  muxer.flush();
  expect(muxer.ended).toBeNull();
  return { muxer, parts };
}

interface Run {
  trackId: number;
  baseDecodeTime: number;
  durations: number[];
  samples: Buffer[];
}

/** Each track's run in the part, with its samples' bytes. */
function runsOf(part: KeptPart): Run[] {
  const boxes = readBoxes(part.bytes);
  const moof = boxes[0]!;
  return findBoxes(boxes, 'traf').map((traf) => {
    const trun = readTrun(findBox([traf], 'trun')!);
    let at = moof.start + trun.dataOffset!;
    const samples = trun.samples.map((s) => part.bytes.subarray(at, (at += s.size!)));
    return {
      trackId: readTfhd(findBox([traf], 'tfhd')!).trackId,
      baseDecodeTime: readTfdt(findBox([traf], 'tfdt')!).baseDecodeTime,
      durations: trun.samples.map((s) => s.duration!),
      samples,
    };
  });
}

const sum = (list: number[]) => list.reduce((a, b) => a + b, 0);

describe('FragmentMuxer with G.711', () => {
  it('g711: H.264 + PCMU make a ulaw track beside the video, each part with the audio of its time', () => {
    const { muxer, parts } = mux(cameraSdp(PCMU_SECTION), cameraStream(1.5, { payloadType: 0 }), { g711: true });
    expect(muxer.codecs).toEqual(['avc1.42C00A', 'ulaw']);
    const init = readBoxes(muxer.init!);
    expect(findBoxes(init, 'trak')).toHaveLength(2);
    expect(findBoxes(init, 'mdhd').map((m) => m.body.readUInt32BE(12))).toEqual([90_000, 8000]);
    expect(findBox(init, 'ulaw')).toBeDefined();
    // A part a group of five pictures; the end of the stream (flush) hands on the last ones too.
    expect(parts.map((p) => p.duration)).toEqual([0.5, 0.5, 0.5]);
    let audioEnd = 0;
    parts.forEach((part, i) => {
      const [video, audio] = runsOf(part);
      expect([video!.trackId, audio!.trackId]).toEqual([1, 2]);
      // The audio starts and ends with the part's pictures, in seconds, and follows the last part's audio.
      expect(audio!.baseDecodeTime / 8000).toBe(video!.baseDecodeTime / 90_000);
      expect((audio!.baseDecodeTime + sum(audio!.durations)) / 8000).toBeCloseTo(
        (video!.baseDecodeTime + sum(video!.durations)) / 90_000,
        9,
      );
      expect(audio!.baseDecodeTime).toBe(audioEnd);
      audioEnd = audio!.baseDecodeTime + sum(audio!.durations);
      // One sample a packet, its samples as sent.
      const first = i * 25;
      expect(audio!.durations).toEqual(audio!.samples.map(() => PACKET_SAMPLES));
      expect(audio!.samples).toEqual(audio!.samples.map((_, n) => audioPayload(first + n)));
    });
  });

  it('without g711 the same stream gives the parts of a camera without audio', () => {
    const packets = cameraStream(1.5, { payloadType: 0 });
    const { muxer, parts } = mux(cameraSdp(PCMU_SECTION), packets);
    const videoOnly = mux(
      cameraSdp(),
      packets.filter((p) => p.track === 0),
    );
    expect(muxer.codecs).toEqual(['avc1.42C00A']);
    expect(findBoxes(readBoxes(muxer.init!), 'trak')).toHaveLength(1);
    expect(muxer.init).toEqual(videoOnly.muxer.init);
    expect(parts.map((p) => p.bytes)).toEqual(videoOnly.parts.map((p) => p.bytes));
    expect(parts.every((p) => runsOf(p).length === 1)).toBe(true);
  });

  it.each<[string, string[], number, number]>([
    ['PCMU', PCMU_SECTION, 0, 0xff],
    ['PCMA', PCMA_SECTION, 8, 0xd5],
  ])('%s: the time of a lost packet is the law’s silence after the frame before it', (_law, section, pt, silence) => {
    const { parts } = mux(cameraSdp(section), cameraStream(1, { payloadType: pt, lostAudio: [7] }), {
      g711: true,
    });
    const audio = runsOf(parts[0]!)[1]!;
    expect(audio.durations.slice(5, 9)).toEqual([160, 320, 160, 160]);
    expect(audio.samples[6]).toEqual(Buffer.concat([audioPayload(6), Buffer.alloc(160, silence)]));
    expect(audio.samples[7]).toEqual(audioPayload(8));
    expect(audio.baseDecodeTime + sum(audio.durations)).toBe(4000);
  });

  it('keeps AAC when the camera offers it beside G.711', () => {
    // AAC-hbr frames of 1024 samples at 48 kHz, one a packet (AU headers: 16 bits, the frame's size), by time among
    // the pictures.
    const aac = Array.from({ length: 47 }, (_, k) => ({
      track: 1,
      packet: rtp(900 + k, AUDIO_START + k * 1024, true, [0, 16, 0, 4 << 3, 0x21, 0x10, 0x04, k], 97),
      at: (k * 1024) / 48_000,
    }));
    const video = cameraStream(1, null).map((p) => ({ ...p, at: (p.packet.readUInt32BE(4) - VIDEO_START) / 90_000 }));
    const packets = [...video, ...aac].sort((a, b) => a.at - b.at);
    const { muxer, parts } = mux(cameraSdp(AAC_SECTION, PCMU_SECTION), packets, { g711: true });
    expect(muxer.codecs).toEqual(['avc1.42C00A', 'mp4a.40.2']);
    expect(findBox(readBoxes(muxer.init!), 'ulaw')).toBeUndefined();
    const audio = runsOf(parts[0]!)[1]!;
    expect([audio.trackId, audio.baseDecodeTime]).toEqual([2, 0]);
    expect(audio.durations).toEqual(Array.from({ length: 24 }, () => 1024)); // the frames before 0.5 s
    expect(audio.samples[3]).toEqual(Buffer.of(0x21, 0x10, 0x04, 3));
  });
});
