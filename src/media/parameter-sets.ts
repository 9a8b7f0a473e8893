import type { H264ParameterSets, H265ParameterSets } from './h26x.js';

// Parameter sets sent in band, in a keyframe's access unit: what an init segment is built from when
// the camera's SDP has no sprop-* (ffmpeg's RTP muxer without global headers, many cameras).
// Repeats of one set (same bytes) are kept once.

function pushUnique(list: Buffer[], nal: Buffer): void {
  if (!list.some((n) => n.equals(nal))) list.push(nal);
}

export function h264ParameterSetsIn(nalus: readonly Buffer[]): H264ParameterSets {
  const sets: H264ParameterSets = { sps: [], pps: [] };
  for (const nal of nalus) {
    const type = (nal[0] ?? 0) & 0x1f;
    if (type === 7) pushUnique(sets.sps, nal);
    else if (type === 8) pushUnique(sets.pps, nal);
  }
  return sets;
}

export function h265ParameterSetsIn(nalus: readonly Buffer[]): H265ParameterSets {
  const sets: H265ParameterSets = { vps: [], sps: [], pps: [] };
  for (const nal of nalus) {
    if (nal.length < 2) continue;
    const type = ((nal[0] ?? 0) >> 1) & 0x3f;
    if (type === 32) pushUnique(sets.vps, nal);
    else if (type === 33) pushUnique(sets.sps, nal);
    else if (type === 34) pushUnique(sets.pps, nal);
  }
  return sets;
}
