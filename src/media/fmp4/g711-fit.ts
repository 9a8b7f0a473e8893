import type { AudioFrame } from '../access-unit.js';
import type { TimedUnit } from './decode-timeline.js';
import type { G711Track } from './track.js';

// A G.711 sample's bytes are its samples: a reader plays as many as it holds, whatever duration the
// trun gives it. The decode timeline gives each frame the distance to the next one's RTP time
// (decode-timeline.ts), which keeps the audio where the camera's clock put it beside the video; here
// the bytes are made to agree with that duration. A frame followed by a gap (a lost packet, comfort
// noise, a pause) is followed by the law's silence up to the next frame, and one that overlaps the
// next is cut where the next begins. Without this a decoder (ffmpeg turning the recorder's clips
// into AAC) would close each gap up and play the rest of the audio early.

/** The quietest code: µ-law 0xFF decodes to 0; A-law has no 0, and 0xD5 decodes to +8 (of ±32768). */
const SILENCE = { mu: 0xff, a: 0xd5 } as const;

/** The frame with exactly `duration` samples a channel; one with no duration (0) keeps its own. */
export function fitG711Frame(timed: TimedUnit<AudioFrame>, track: G711Track): TimedUnit<AudioFrame> {
  const data = timed.unit.data;
  if (timed.duration < 1) return { ...timed, duration: data.length / track.channels };
  const bytes = timed.duration * track.channels;
  if (data.length === bytes) return timed;
  const fitted =
    data.length > bytes
      ? data.subarray(0, bytes)
      : Buffer.concat([data, Buffer.alloc(bytes - data.length, SILENCE[track.law])], bytes);
  return { ...timed, unit: { ...timed.unit, data: fitted } };
}
