import type { TSchema } from 'typebox';

// Query strings and path parameters arrive as text. Only exact spellings become numbers and
// booleans ("10", "true"); "1.5" for an integer, "1e3", " 7" or "yes" stay text and fail validation
// with a message naming the parameter, instead of being rounded or guessed.

const INTEGER = /^-?(0|[1-9]\d{0,15})$/;
const NUMBER = /^-?(0|[1-9]\d{0,15})(\.\d{1,15})?$/;

function coerceOne(schema: unknown, text: string): unknown {
  if (typeof schema !== 'object' || schema === null) return text;
  const type = (schema as { type?: unknown }).type;
  if (type === 'integer' && INTEGER.test(text)) return Number(text);
  if (type === 'number' && NUMBER.test(text)) return Number(text);
  if (type === 'boolean' && (text === 'true' || text === 'false')) return text === 'true';
  return text;
}

/** A copy of a flat parameter object with its textual values converted as the schema's properties say. */
export function coerceParams(schema: TSchema, value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  const properties = (schema as { properties?: Record<string, unknown> }).properties ?? {};
  // Null prototype: on a plain object, out['__proto__'] = 'x' would be swallowed by the prototype
  // setter and the parameter would pass validation unseen; here it stays a key and is refused.
  const out = Object.create(null) as Record<string, unknown>;
  for (const [key, v] of Object.entries(value)) {
    // A repeated parameter (?limit=1&limit=2) stays an array and fails validation as ambiguous.
    out[key] = typeof v === 'string' ? coerceOne(properties[key], v) : v;
  }
  return out;
}
