import { readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { API_ERROR_CODES, API_ERRORS } from '../../src/domain/api-errors.js';
import {
  CLASS_ERROR_CODES,
  CODEC_MISMATCH_CODES,
  COMMAND_ERROR_CODES,
  DeviceUnavailableError,
  FOOTAGE_DISK_CODES,
  GatewayError,
  MEDIA_FORMAT_CODES,
  NotFoundError,
  OAUTH_ERROR_CODES,
  OFFER_ERROR_CODES,
} from '../../src/domain/errors.js';

// The error layout (src/domain/errors.ts, docs/architecture.md): every errors.ts of src is loaded
// and its classes checked against the conventions, so that a new class keeps them.

const SRC = path.resolve(import.meta.dirname, '../../src');

interface ErrorClass {
  file: string;
  name: string;
  cls: abstract new (...args: never[]) => Error;
}

function errorFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return errorFiles(full);
    return entry.name === 'errors.ts' ? [full] : [];
  });
}

async function errorClasses(): Promise<ErrorClass[]> {
  const found: ErrorClass[] = [];
  for (const file of errorFiles(SRC)) {
    const mod = (await import(file)) as Record<string, unknown>;
    for (const [name, value] of Object.entries(mod)) {
      if (typeof value === 'function' && value !== GatewayError && value.prototype instanceof Error)
        found.push({ file: path.relative(SRC, file), name, cls: value as ErrorClass['cls'] });
    }
  }
  return found;
}

/** NotFoundError → not_found. */
const codeOf = (name: string): string =>
  name
    .replace(/Error$/, '')
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase();

/** A class's static `code`: GatewayError.of gives it. */
const staticCode = (cls: ErrorClass['cls']): unknown => (cls as unknown as { code?: unknown }).code;

describe('GatewayError', () => {
  it('is named after its class and carries its class code', () => {
    const err = new NotFoundError('device', 'cam-1');
    expect(err).toBeInstanceOf(GatewayError);
    expect(err).toMatchObject({ name: 'NotFoundError', code: 'not_found', resource: 'device', id: 'cam-1' });
    expect(NotFoundError.code).toBe(err.code);
    expect(String(err)).toBe('NotFoundError: device cam-1 not found');
  });

  it("passes Error's options on", () => {
    const cause = new Error('offline since 10:02');
    expect(new DeviceUnavailableError('cam-1 is offline', { cause }).cause).toBe(cause);
  });
});

describe('the error classes of src', () => {
  it('of every errors.ts are all GatewayErrors, all named …Error', async () => {
    const classes = await errorClasses();
    expect(classes.length).toBeGreaterThan(40);
    for (const { file, name, cls } of classes) {
      expect(cls.prototype, `${file}: ${name}`).toBeInstanceOf(GatewayError);
      expect(name, file).toMatch(/^[A-Z][A-Za-z]*Error$/);
      expect(cls.name, file).toBe(name);
    }
  });

  it("name their code after themselves (a subclass shares its parent's), or take one from a list of the union's", async () => {
    const classes = await errorClasses();
    const variable = classes.filter(({ cls }) => staticCode(cls) === undefined).map(({ name }) => name);
    expect(variable.sort()).toEqual([
      'ApiError',
      'CodecMismatchError',
      'CommandError',
      'FootageDiskError',
      'MediaFormatError',
      'OAuthError',
      'OfferError',
    ]);
    for (const { file, name, cls } of classes) {
      const code = staticCode(cls);
      if (code === undefined || code === codeOf(name)) continue;
      const parent = classes.find((other) => cls.prototype instanceof other.cls);
      expect(parent && staticCode(parent.cls), `${file}: ${name}`).toBe(code);
    }
  });

  it('use every code of CLASS_ERROR_CODES once (UsageError, in cli.ts, the one outside an errors.ts)', async () => {
    const codes = (await errorClasses())
      .filter(({ name, cls }) => staticCode(cls) === codeOf(name))
      .map(({ cls }) => staticCode(cls));
    expect([...codes, 'usage'].sort()).toEqual([...CLASS_ERROR_CODES].sort());
  });
});

describe('the codes', () => {
  it('are snake_case, each list without repeats', () => {
    for (const list of [
      CLASS_ERROR_CODES,
      OAUTH_ERROR_CODES,
      COMMAND_ERROR_CODES,
      OFFER_ERROR_CODES,
      CODEC_MISMATCH_CODES,
      MEDIA_FORMAT_CODES,
      FOOTAGE_DISK_CODES,
      API_ERROR_CODES,
    ]) {
      for (const code of list) expect(code).toMatch(/^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$/);
      expect(new Set(list).size).toBe(list.length);
    }
  });

  it("of the API's catalogue each have an error status and a meaning", () => {
    for (const code of API_ERROR_CODES) {
      expect(API_ERRORS[code].status, code).toBeGreaterThanOrEqual(400);
      expect(API_ERRORS[code].status, code).toBeLessThan(600);
      expect(API_ERRORS[code].description, code).not.toBe('');
    }
  });
});
