// Figures over samples, as the benches report them.

/** The sorted numbers of `xs`, nulls (a trial that did not measure) left out. */
const sortedNumbers = (xs: readonly (number | null | undefined)[]): number[] =>
  xs.filter((x): x is number => x !== null && x !== undefined).sort((a, b) => a - b);

/** The median (the mean of the middle two for an even count); `xs` is left as it was. */
export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

/** The upper of the middle two (the middle one for an odd count); NaN for none. */
export const upperMedian = (xs: readonly number[]): number =>
  [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

/** The value `q` (0–1) of the way through the sorted numbers of `xs` (nulls left out), rounded down; null for none. */
export function quantile(xs: readonly (number | null | undefined)[], q: number): number | null {
  const s = sortedNumbers(xs);
  return s.length ? s[Math.floor((s.length - 1) * q)]! : null;
}

/** The p-th percentile (0–100) as the sample at index p% of the count; NaN for none. */
export function percentile(xs: readonly number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
}

/** The smallest and largest of `xs` (nulls left out); null for none. */
export function range(xs: readonly (number | null | undefined)[]): { min: number | null; max: number | null } {
  const s = sortedNumbers(xs);
  return { min: s[0] ?? null, max: s.at(-1) ?? null };
}

/** `x` rounded to `digits` decimals; null stays null. */
export function round(x: number, digits?: number): number;
export function round(x: number | null, digits?: number): number | null;
export function round(x: number | null, digits = 0): number | null {
  return x === null ? null : Math.round(x * 10 ** digits) / 10 ** digits;
}
