import { parse } from 'fast-querystring';
import { describe, expect, it } from 'vitest';
import { MAX_MEMOIZED_QUERIES, MAX_MEMOIZED_QUERY_LENGTH, memoizedQueryParser, memoizedValidation, type ValidationResult } from '../../src/api/query-memo.js';

describe('memoizedQueryParser', () => {
  it.each([
    ['', {}],
    ['limit=50', { limit: '50' }],
    ['limit=50&status=online', { limit: '50', status: 'online' }],
    ['a=1&a=2', { a: ['1', '2'] }],
    ['name=front%20door&x=a+b', { name: 'front door', x: 'a b' }],
    ['__proto__=x', { ['__proto__']: 'x' }],
    ['flag', { flag: '' }],
  ])('parses %j as fast-querystring does, frozen', (query, expected) => {
    const parameters = memoizedQueryParser()(query);
    expect({ ...parameters }).toEqual(expected);
    if (query !== '') expect({ ...parameters }).toEqual({ ...parse(query) });
    expect(Object.isFrozen(parameters)).toBe(true);
    for (const value of Object.values(parameters)) if (Array.isArray(value)) expect(Object.isFrozen(value)).toBe(true);
  });

  it('gives the same object for the same query string, another for another', () => {
    const parseQuery = memoizedQueryParser();
    const first = parseQuery('limit=50');
    expect(parseQuery('limit=50')).toBe(first);
    expect(parseQuery('limit=51')).not.toBe(first);
  });

  it('parses a long query string every time, and keeps none of it', () => {
    const parseQuery = memoizedQueryParser();
    const long = `cursor=${'x'.repeat(MAX_MEMOIZED_QUERY_LENGTH)}`;
    const first = parseQuery(long);
    expect(first.cursor).toBe('x'.repeat(MAX_MEMOIZED_QUERY_LENGTH));
    expect(Object.isFrozen(first)).toBe(true);
    expect(parseQuery(long)).not.toBe(first);
  });

  it('keeps a bounded number of query strings, the oldest giving way', () => {
    const parseQuery = memoizedQueryParser();
    const first = parseQuery('n=0');
    const second = parseQuery('n=1');
    for (let i = 2; i <= MAX_MEMOIZED_QUERIES; i++) parseQuery(`n=${i}`);
    expect(parseQuery('n=1')).toBe(second);
    expect(parseQuery('n=0')).not.toBe(first);
  });
});

describe('memoizedValidation', () => {
  /** A validator that accepts {limit: "<digits>"} as a number and counts its calls. */
  const counting = () => {
    let calls = 0;
    const validate = (value: unknown): ValidationResult => {
      calls++;
      const limit = (value as { limit?: unknown }).limit;
      return typeof limit === 'string' && /^\d+$/.test(limit) ? { value: { limit: Number(limit) } } : { error: new Error('limit must be an integer') };
    };
    return { validate: memoizedValidation(validate), calls: () => calls };
  };

  it('checks a frozen input once, and hands out the same frozen value', () => {
    const v = counting();
    const input = Object.freeze({ limit: '50' });
    const first = v.validate(input);
    expect(first).toEqual({ value: { limit: 50 } });
    expect(v.validate(input)).toBe(first);
    expect(v.calls()).toBe(1);
    expect(Object.isFrozen((first as { value: unknown }).value)).toBe(true);
  });

  it('works out a refusal every time', () => {
    const v = counting();
    const input = Object.freeze({ limit: 'many' });
    expect(v.validate(input)).toHaveProperty('error');
    expect(v.validate(input)).toHaveProperty('error');
    expect(v.calls()).toBe(2);
  });

  it('remembers nothing about an input that could still change', () => {
    const v = counting();
    const input: { limit: string } = { limit: '50' };
    expect(v.validate(input)).toEqual({ value: { limit: 50 } });
    input.limit = 'many';
    expect(v.validate(input)).toHaveProperty('error');
    expect(v.calls()).toBe(2);
  });
});
