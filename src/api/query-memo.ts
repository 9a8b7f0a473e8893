import { parse } from 'fast-querystring';

// Apps poll the same lists with the same few query strings (?limit=50). Each distinct string is
// parsed once, and each route converts and checks the parameters of one once, instead of on every
// request (~3 µs of a 50-device list's ~60 in a CPU profile; docs/performance.md). Both memos are
// bounded, and what they hand out is frozen, since every request with that query string shares it.

/** Query strings whose parse is kept; the oldest gives way. */
export const MAX_MEMOIZED_QUERIES = 256;
/** Longer query strings are parsed every time (a request can carry kilobytes; memory stays small). */
export const MAX_MEMOIZED_QUERY_LENGTH = 256;

export type QueryParameters = Readonly<Record<string, string | readonly string[]>>;

/**
 * Fastify's query string parser (the one find-my-way uses, fast-querystring), remembering the last
 * MAX_MEMOIZED_QUERIES short query strings: the same string gives the same frozen object.
 */
export function memoizedQueryParser(): (query: string) => QueryParameters {
  const parsed = new Map<string, QueryParameters>();
  return (query) => {
    let parameters = parsed.get(query);
    if (parameters !== undefined) return parameters;
    parameters = freezeParameters(query.length === 0 ? {} : (parse(query) as Record<string, string | string[]>));
    if (query.length <= MAX_MEMOIZED_QUERY_LENGTH) {
      if (parsed.size >= MAX_MEMOIZED_QUERIES) {
        const oldest = parsed.keys().next();
        if (!oldest.done) parsed.delete(oldest.value);
      }
      parsed.set(query, parameters);
    }
    return parameters;
  };
}

function freezeParameters(parameters: Record<string, string | string[]>): QueryParameters {
  // A repeated parameter (?a=1&a=2) is an array: frozen too.
  for (const key in parameters) {
    const value = parameters[key];
    if (Array.isArray(value)) Object.freeze(value);
  }
  return Object.freeze(parameters);
}

export type ValidationResult = { value: unknown } | { error: Error };

/**
 * A route's query validator that answers a frozen input it has accepted before from memory. Only
 * frozen inputs (memoizedQueryParser's) are remembered, by identity, so nothing a caller could
 * still change is; refusals are worked out each time. The accepted value is frozen as well.
 */
export function memoizedValidation(validate: (value: unknown) => ValidationResult): (value: unknown) => ValidationResult {
  const accepted = new WeakMap<object, ValidationResult>();
  return (value) => {
    if (typeof value !== 'object' || value === null || !Object.isFrozen(value)) return validate(value);
    const known = accepted.get(value);
    if (known !== undefined) return known;
    const result = validate(value);
    if ('value' in result) {
      if (typeof result.value === 'object' && result.value !== null) Object.freeze(result.value);
      accepted.set(value, result);
    }
    return result;
  };
}
