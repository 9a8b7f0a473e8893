import { describe, expect, it } from 'vitest';

/**
 * A round-trip table for a parse/format pair, beside its fuzz test: each canonical text parses to
 * its value and that value formats back to the very text (parse ∘ format is the identity on the
 * values, format ∘ parse on canonical texts); each alias is a spelling a peer may send, which
 * formats back as the canonical one.
 */
export interface RoundTripTable<T> {
  canonical: ReadonlyArray<readonly [text: string, value: T]>;
  aliases: ReadonlyArray<readonly [sent: string, canonical: string]>;
}

export function describeRoundTrip<T>(
  name: string,
  parse: (text: string) => T,
  format: (value: T) => string,
  table: RoundTripTable<T>,
): void {
  describe(`${name} round trip`, () => {
    for (const [text, value] of table.canonical) {
      it(`${JSON.stringify(text)} is parsed and written back unchanged`, () => {
        expect(parse(text)).toEqual(value);
        expect(format(value)).toBe(text);
        expect(parse(format(value))).toEqual(value);
      });
    }
    for (const [sent, canonical] of table.aliases) {
      it(`${JSON.stringify(sent)} is written back as ${JSON.stringify(canonical)}`, () => {
        expect(format(parse(sent))).toBe(canonical);
        expect(format(parse(canonical))).toBe(canonical);
      });
    }
  });
}
