// A seeded PRNG for fuzz tests: failures print their seed and replay exactly with FUZZ_SEED=<n>.

export interface Rng {
  seed: number;
  next(): number; // [0, 1)
  int(maxExclusive: number): number;
  pick<T>(items: readonly T[]): T;
  bytes(maxLen: number): Buffer;
  string(maxLen: number, alphabet?: string): string;
}

export function makeRng(seed = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31)): Rng {
  let state = seed >>> 0 || 1;
  const next = (): number => {
    // mulberry32
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (max: number): number => Math.floor(next() * max);
  return {
    seed,
    next,
    int,
    pick: (items) => items[int(items.length)] as (typeof items)[number],
    bytes: (maxLen) => {
      const out = Buffer.alloc(int(maxLen + 1));
      for (let i = 0; i < out.length; i++) out[i] = int(256);
      return out;
    },
    string: (maxLen, alphabet) => {
      const n = int(maxLen + 1);
      let s = '';
      for (let i = 0; i < n; i++) s += alphabet ? alphabet[int(alphabet.length)] : String.fromCharCode(int(0x80));
      return s;
    },
  };
}

/** Mutates a valid sample: flips, inserts, deletes and duplicates characters. */
export function mutate(rng: Rng, sample: string, alphabet: string): string {
  let s = sample;
  const edits = 1 + rng.int(4);
  for (let i = 0; i < edits; i++) {
    const at = rng.int(s.length + 1);
    switch (rng.int(4)) {
      case 0:
        s = s.slice(0, at) + rng.pick([...alphabet]) + s.slice(at);
        break;
      case 1:
        s = s.slice(0, at) + s.slice(at + 1);
        break;
      case 2:
        s = s.slice(0, at) + s.slice(at, at + 1 + rng.int(8)).repeat(2) + s.slice(at + 1 + rng.int(8));
        break;
      default:
        s = s.slice(0, at) + rng.pick([...alphabet]) + s.slice(at + 1);
    }
  }
  return s;
}
