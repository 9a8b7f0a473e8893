import Type from 'typebox';
import { describe, expect, it } from 'vitest';
import { coerceParams } from '../../src/api/coerce.js';

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
