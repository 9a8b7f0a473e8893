import type { Fmp4Track } from './track.js';

// RFC 6381 codecs strings for a track, as HLS's CODECS attribute and MSE's isTypeSupported take
// them: avc1.PPCCLL from the SPS, hvc1.<profile>.<compat>.<tier><level>.<constraints>
// (ISO/IEC 14496-15 E.3), mp4a.40.<object type>. G.711 has no RFC 6381 name and no browser's MSE
// takes it: its sample entry's fourcc ('ulaw', 'alaw') names it for the recorder, its only user.

const hex2 = (n: number): string => n.toString(16).toUpperCase().padStart(2, '0');

export function codecsString(track: Fmp4Track): string {
  if (track.codec === 'H264') {
    const { profileIdc, constraintFlags, levelIdc } = track.info;
    return `avc1.${hex2(profileIdc)}${hex2(constraintFlags)}${hex2(levelIdc)}`;
  }
  if (track.codec === 'H265') {
    const i = track.info;
    const space = ['', 'A', 'B', 'C'][i.generalProfileSpace] ?? '';
    // The compatibility flags in reverse bit order, in hex without leading zeros.
    let reversed = 0;
    for (let b = 0; b < 32; b++) if (i.generalProfileCompatibility & (1 << b)) reversed |= 1 << (31 - b);
    const compat = (reversed >>> 0).toString(16).toUpperCase();
    const constraints = [...i.generalConstraintIndicator];
    while (constraints.length > 0 && constraints[constraints.length - 1] === 0) constraints.pop();
    const parts = [
      `hvc1`,
      `${space}${i.generalProfileIdc}`,
      compat,
      `${i.generalTierFlag ? 'H' : 'L'}${i.generalLevelIdc}`,
    ];
    for (const c of constraints) parts.push(c.toString(16).toUpperCase());
    return parts.join('.');
  }
  if (track.codec === 'G711') return track.law === 'mu' ? 'ulaw' : 'alaw';
  return `mp4a.40.${track.config.objectType}`;
}
