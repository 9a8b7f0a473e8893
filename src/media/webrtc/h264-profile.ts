// H.264 profile-level-id (RFC 6184 8.1): which profile a stream is, and which offered decoder
// profile can take it without a decode/encode.
//
// profile-level-id is three bytes in hex: profile_idc, the constraint flags byte (profile-iop)
// and level_idc. WebRTC peers negotiate H.264 by profile (level asymmetry allowed), so the
// answer names the camera's own profile-level-id on the payload type of a compatible offered one.

export type H264Profile =
  | 'constrained-baseline'
  | 'baseline'
  | 'main'
  | 'extended'
  | 'high'
  | 'constrained-high'
  | 'high-10'
  | 'high-422'
  | 'high-444'
  | 'other';

export interface H264ProfileLevel {
  readonly profileIdc: number;
  readonly constraintFlags: number;
  readonly levelIdc: number;
  readonly profile: H264Profile;
  /** Six lower-case hex digits, as it goes back into an fmtp. */
  readonly hex: string;
}

// constraint_set flags as they sit in the profile-iop byte (H.264 7.4.2.1.1): set0 is the top bit.
const SET0 = 0x80;
const SET1 = 0x40;
const SET4 = 0x08;
const SET5 = 0x04;

/** Reads a profile-level-id value; null when it is not six hex digits. */
export function parseProfileLevelId(value: string): H264ProfileLevel | null {
  if (!/^[0-9A-Fa-f]{6}$/.test(value)) return null;
  const n = Number.parseInt(value, 16);
  return profileLevel(n >> 16, (n >> 8) & 0xff, n & 0xff);
}

export function profileLevel(profileIdc: number, constraintFlags: number, levelIdc: number): H264ProfileLevel {
  const hex = [profileIdc, constraintFlags, levelIdc].map((b) => b.toString(16).padStart(2, '0')).join('');
  return { profileIdc, constraintFlags, levelIdc, profile: classify(profileIdc, constraintFlags), hex };
}

function classify(idc: number, flags: number): H264Profile {
  switch (idc) {
    case 66:
      // A.2.1.1: Baseline with constraint_set1 obeys Main too: the constrained baseline subset.
      return flags & SET1 ? 'constrained-baseline' : 'baseline';
    case 77:
      // A.2.2 with constraint_set0: also Baseline-conformant, i.e. constrained baseline.
      return flags & SET0 ? 'constrained-baseline' : 'main';
    case 88:
      return (flags & (SET0 | SET1)) === (SET0 | SET1)
        ? 'constrained-baseline'
        : flags & SET0
          ? 'baseline'
          : 'extended';
    case 100:
      // A.2.4.2: High with constraint_set4 and set5 is Constrained High (no B slices, progressive).
      return (flags & (SET4 | SET5)) === (SET4 | SET5) ? 'constrained-high' : 'high';
    case 110:
      return 'high-10';
    case 122:
      return 'high-422';
    case 244:
      return 'high-444';
    default:
      return 'other';
  }
}

// Which profiles' streams a decoder of each profile takes (A.2): every profile's decoder takes
// constrained baseline, High takes Main and Constrained High, the 10-bit and 4:x:x High profiles
// take the lower High ones. Baseline proper (FMO/ASO) and Extended only by their own decoders.
const DECODES: Readonly<Record<H264Profile, readonly H264Profile[]>> = {
  'constrained-baseline': ['constrained-baseline'],
  baseline: ['constrained-baseline', 'baseline'],
  main: ['constrained-baseline', 'main'],
  extended: ['constrained-baseline', 'baseline', 'extended'],
  'constrained-high': ['constrained-baseline', 'constrained-high'],
  high: ['constrained-baseline', 'main', 'constrained-high', 'high'],
  'high-10': ['constrained-baseline', 'main', 'constrained-high', 'high', 'high-10'],
  'high-422': ['constrained-baseline', 'main', 'constrained-high', 'high', 'high-10', 'high-422'],
  'high-444': ['constrained-baseline', 'main', 'constrained-high', 'high', 'high-10', 'high-422', 'high-444'],
  other: [],
};

/** Whether a peer that offers `decoder` can decode a stream of `stream`'s profile. */
export function decodes(decoder: H264Profile, stream: H264Profile): boolean {
  return DECODES[decoder].includes(stream);
}
