import { describe, expect, it } from 'vitest';
import { COMMAND_ERROR_CODES } from '../../src/domain/errors.js';
import { parseControlCommand, type CommandParseResult } from '../../src/sync/commands.js';
import { CommandError } from '../../src/sync/errors.js';
import { makeRng, mutate } from '../support/fuzz.js';

const MAX = 4096;
const parse = (payload: string | Buffer, max = MAX): CommandParseResult =>
  parseControlCommand(Buffer.isBuffer(payload) ? payload : Buffer.from(payload, 'utf8'), max);

describe('parseControlCommand: valid commands', () => {
  it.each([
    ['{"id":"cmd-1","action":"reboot"}', { id: 'cmd-1', action: 'reboot' }],
    ['{"action":"sync_time","id":"A_b-9"}', { id: 'A_b-9', action: 'sync_time' }],
    [' \n{ "id" : "x" , "action" : "reboot" }\t', { id: 'x', action: 'reboot' }],
    ['\ufeff{"id":"bom","action":"reboot"}', { id: 'bom', action: 'reboot' }],
    [`{"id":"${'z'.repeat(128)}","action":"reboot"}`, { id: 'z'.repeat(128), action: 'reboot' }],
    // JSON escapes are JSON: "\u0072eboot" is "reboot".
    ['{"id":"e","action":"\\u0072eboot"}', { id: 'e', action: 'reboot' }],
  ])('%s', (payload, command) => {
    expect(parse(payload)).toEqual({ ok: true, command });
  });

  it('takes a payload exactly at the limit', () => {
    const payload = '{"id":"a","action":"reboot"}';
    expect(parse(payload, Buffer.byteLength(payload)).ok).toBe(true);
  });
});

describe('parseControlCommand: refusals', () => {
  it.each([
    // size, before anything else
    ['{"id":"a","action":"reboot"}', 10, 'payload_too_large', 'command is 28 bytes, more than the limit of 10', null],
    // not JSON
    ['', MAX, 'invalid_json', 'command is not valid JSON', null],
    ['{', MAX, 'invalid_json', 'command is not valid JSON', null],
    ["{'id':'a','action':'reboot'}", MAX, 'invalid_json', 'command is not valid JSON', null],
    ['{"id":"a","action":"reboot"} trailing', MAX, 'invalid_json', 'command is not valid JSON', null],
    ['{"id":"a","action":"reboot",}', MAX, 'invalid_json', 'command is not valid JSON', null],
    ['reboot', MAX, 'invalid_json', 'command is not valid JSON', null],
    // JSON but not an object
    ['null', MAX, 'invalid_command', 'command must be a JSON object { "id": string, "action": string }', null],
    ['[]', MAX, 'invalid_command', 'command must be a JSON object { "id": string, "action": string }', null],
    ['"reboot"', MAX, 'invalid_command', 'command must be a JSON object { "id": string, "action": string }', null],
    ['42', MAX, 'invalid_command', 'command must be a JSON object { "id": string, "action": string }', null],
    // id
    ['{"action":"reboot"}', MAX, 'invalid_command', 'id is required', null],
    ['{"id":7,"action":"reboot"}', MAX, 'invalid_command', 'id must be a string, not a number', null],
    ['{"id":null,"action":"reboot"}', MAX, 'invalid_command', 'id must be a string, not null', null],
    ['{"id":["a"],"action":"reboot"}', MAX, 'invalid_command', 'id must be a string, not an array', null],
    ['{"id":{},"action":"reboot"}', MAX, 'invalid_command', 'id must be a string, not an object', null],
    ['{"id":true,"action":"reboot"}', MAX, 'invalid_command', 'id must be a string, not a boolean', null],
    [
      '{"id":"","action":"reboot"}',
      MAX,
      'invalid_command',
      'id "" must be 1 to 128 characters of A-Z, a-z, 0-9, "_" and "-"',
      null,
    ],
    [
      '{"id":"a b","action":"reboot"}',
      MAX,
      'invalid_command',
      'id "a b" must be 1 to 128 characters of A-Z, a-z, 0-9, "_" and "-"',
      null,
    ],
    [
      '{"id":"a\\nb","action":"reboot"}',
      MAX,
      'invalid_command',
      'id "a\\nb" must be 1 to 128 characters of A-Z, a-z, 0-9, "_" and "-"',
      null,
    ],
    [
      `{"id":"${'z'.repeat(129)}","action":"reboot"}`,
      MAX,
      'invalid_command',
      `id "${'z'.repeat(40)}…" must be 1 to 128 characters of A-Z, a-z, 0-9, "_" and "-"`,
      null,
    ],
    // unknown fields (the id was valid: the refusal carries it)
    [
      '{"id":"c1","action":"reboot","force":true}',
      MAX,
      'invalid_command',
      'unknown field "force": a command has only "id" and "action"',
      'c1',
    ],
    [
      '{"id":"c1","action":"reboot","__proto__":{}}',
      MAX,
      'invalid_command',
      'unknown field "__proto__": a command has only "id" and "action"',
      'c1',
    ],
    // action
    ['{"id":"c1"}', MAX, 'invalid_command', 'action is required', 'c1'],
    ['{"id":"c1","action":1}', MAX, 'invalid_command', 'action must be a string, not a number', 'c1'],
    ['{"id":"c1","action":null}', MAX, 'invalid_command', 'action must be a string, not null', 'c1'],
    [
      '{"id":"c1","action":"format_disk"}',
      MAX,
      'unknown_action',
      'unknown action "format_disk": action must be one of reboot, sync_time',
      'c1',
    ],
    [
      '{"id":"c1","action":"REBOOT"}',
      MAX,
      'unknown_action',
      'unknown action "REBOOT": action must be one of reboot, sync_time',
      'c1',
    ],
    [
      '{"id":"c1","action":""}',
      MAX,
      'unknown_action',
      'unknown action "": action must be one of reboot, sync_time',
      'c1',
    ],
  ] as const)('%s (limit %d) → %s', (payload, max, code, message, commandId) => {
    const result = parse(payload, max);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error).toBeInstanceOf(CommandError);
    expect(result.error.name).toBe('CommandError');
    expect(result.error.code).toBe(code);
    expect(result.error.message).toBe(message);
    expect(result.error.commandId).toBe(commandId);
  });

  it('refuses bytes that are not UTF-8', () => {
    const result = parse(Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]));
    expect(result).toMatchObject({ ok: false, error: { code: 'invalid_json', message: 'command is not UTF-8 text' } });
  });

  it('checks the size before reading the payload', () => {
    const result = parse(Buffer.alloc(MAX + 1, 0xff));
    expect(result).toMatchObject({ ok: false, error: { code: 'payload_too_large' } });
  });

  it('survives deeply nested JSON within the limit', () => {
    const depth = 100_000;
    const result = parse('['.repeat(depth) + ']'.repeat(depth), 2 * depth);
    expect(result.ok).toBe(false);
  });

  it('a repeated key: the last one counts, as JSON.parse reads it', () => {
    expect(parse('{"id":"a","action":"format","action":"reboot"}')).toEqual({
      ok: true,
      command: { id: 'a', action: 'reboot' },
    });
  });
});

describe('fuzz', () => {
  const SAMPLE = '{"id":"cmd_1-A","action":"sync_time"}';
  const ALPHABET = '{}[]":,\\ \n0123456789abcdefghijklmnopqrstuvwxyz_-Ééu\u0000nulltrue';

  const check = (rng: ReturnType<typeof makeRng>, payload: Buffer, max: number) => {
    let result: CommandParseResult;
    try {
      result = parseControlCommand(payload, max);
    } catch (err) {
      throw new Error(`seed ${rng.seed}: threw for ${JSON.stringify(payload.toString('latin1'))}: ${String(err)}`, {
        cause: err,
      });
    }
    if (result.ok) {
      // Only a real command gets through, and it is exactly what the JSON said.
      expect(['reboot', 'sync_time'], `seed ${rng.seed}`).toContain(result.command.action);
      expect(result.command.id, `seed ${rng.seed}`).toMatch(/^[A-Za-z0-9_-]{1,128}$/);
      expect(JSON.parse(payload.toString('utf8')), `seed ${rng.seed}`).toEqual(result.command);
    } else {
      expect(result.error, `seed ${rng.seed}`).toBeInstanceOf(CommandError);
      expect(COMMAND_ERROR_CODES, `seed ${rng.seed}`).toContain(result.error.code);
      expect(result.error.message.length, `seed ${rng.seed}`).toBeGreaterThan(0);
      // Messages quote at most a short piece of the payload.
      expect(result.error.message.length, `seed ${rng.seed}`).toBeLessThan(200);
      if (result.error.commandId !== null)
        expect(result.error.commandId, `seed ${rng.seed}`).toMatch(/^[A-Za-z0-9_-]{1,128}$/);
    }
  };

  it('mutated commands give a command or a CommandError, never a throw', () => {
    const rng = makeRng();
    for (let i = 0; i < 3_000; i++)
      check(rng, Buffer.from(mutate(rng, SAMPLE, ALPHABET), 'utf8'), rng.next() < 0.1 ? rng.int(64) : MAX);
  });

  it('random bytes give a CommandError, never a throw', () => {
    const rng = makeRng();
    for (let i = 0; i < 3_000; i++) check(rng, rng.bytes(64), rng.next() < 0.1 ? rng.int(64) : MAX);
  });

  it('random JSON values give a command or a CommandError', () => {
    const rng = makeRng();
    const value = (depth: number): unknown => {
      switch (rng.int(depth > 3 ? 5 : 7)) {
        case 0:
          return null;
        case 1:
          return rng.next() < 0.5;
        case 2:
          return rng.int(1000) - 500;
        case 3:
          return rng.pick(['reboot', 'sync_time', 'id', 'action', '', 'cmd-1', 'a b', 'x'.repeat(130)]);
        case 4:
          return rng.string(10);
        case 5:
          return Array.from({ length: rng.int(3) }, () => value(depth + 1));
        default: {
          const o: Record<string, unknown> = {};
          for (let k = rng.int(4); k > 0; k--)
            o[rng.pick(['id', 'action', 'extra', '__proto__', 'constructor'])] = value(depth + 1);
          return o;
        }
      }
    };
    for (let i = 0; i < 3_000; i++) check(rng, Buffer.from(JSON.stringify(value(0)) ?? 'undefined', 'utf8'), MAX);
  });
});
