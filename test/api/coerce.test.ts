import Type from 'typebox';
import { describe, expect, it } from 'vitest';
import Value from 'typebox/value';
import { coerceParams, paramsReader } from '../../src/api/coerce.js';

describe('query parameter coercion', () => {
  const schema = Type.Object({ n: Type.Integer(), f: Type.Number(), b: Type.Boolean(), s: Type.String() });
  it.each([
    [{ n: '10' }, { n: 10 }],
    [{ n: '-3' }, { n: -3 }],
    [{ n: '1.5' }, { n: '1.5' }],
    [{ n: '1e3' }, { n: '1e3' }],
    [{ n: ' 7' }, { n: ' 7' }],
    [{ n: '007' }, { n: '007' }],
    [{ f: '2.25' }, { f: 2.25 }],
    [{ f: 'NaN' }, { f: 'NaN' }],
    [{ b: 'true' }, { b: true }],
    [{ b: 'false' }, { b: false }],
    [{ b: 'yes' }, { b: 'yes' }],
    [{ s: '10' }, { s: '10' }],
    [{ n: ['1', '2'] }, { n: ['1', '2'] }],
    [{ other: '5' }, { other: '5' }],
  ])('%j → %j', (input, output) => {
    expect(coerceParams(schema, input)).toEqual(output);
  });
});

describe('parameter reader (coercion, then defaults)', () => {
  const schema = Type.Object(
    {
      limit: Type.Integer({ minimum: 1, default: 50 }),
      profile: Type.Enum(['main', 'sub'], { default: 'main' }),
      flag: Type.Optional(Type.Boolean()),
      cursor: Type.Optional(Type.String()),
    },
    { additionalProperties: false },
  );
  const read = paramsReader(schema);
  it.each([
    [{}, { limit: 50, profile: 'main' }],
    [{ limit: '7' }, { limit: 7, profile: 'main' }],
    [
      { limit: 'x', profile: 'sub' },
      { limit: 'x', profile: 'sub' },
    ],
    [
      { flag: 'true', cursor: 'c' },
      { limit: 50, profile: 'main', flag: true, cursor: 'c' },
    ],
    [{ limit: ['1', '2'] }, { limit: ['1', '2'], profile: 'main' }],
    [{ other: '5' }, { limit: 50, profile: 'main', other: '5' }],
  ])('%j → %j, as Value.Default gives it', (input, output) => {
    expect({ ...(read(input) as object) }).toEqual(output);
    expect({ ...(read(input) as object) }).toEqual({
      ...(Value.Default(schema, coerceParams(schema, input)) as object),
    });
  });

  it('keeps a __proto__ parameter as a key, to be refused', () => {
    const params = read(JSON.parse('{"__proto__": "x"}')) as Record<string, unknown>;
    expect(Object.keys(params)).toContain('__proto__');
  });

  it('leaves schemas it does not read flat to Value.Default (nested defaults)', () => {
    const nested = Type.Object({ page: Type.Object({ size: Type.Integer({ default: 5 }) }, { default: {} }) });
    expect(paramsReader(nested)({})).toEqual({ page: { size: 5 } });
  });
});
