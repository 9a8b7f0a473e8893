import type { CommandErrorCode } from '../domain/errors.js';
import { ID_PATTERN } from '../domain/ids.js';
import { CONTROL_ACTIONS, type ControlAction } from '../domain/types.js';
import { CommandError } from './errors.js';

// Commands from the cloud on `{prefix}/{gw}/devices/{id}/control`: `{ "id": string, "action": … }`.
// Pure: bytes in, a command or a typed refusal out. The payload comes from the network, so nothing
// here may throw; every refusal names what was wrong so the cloud can fix its side from the result.

export interface ControlCommand {
  /** The cloud's id for this command: the result carries it, and a repeated id is not run twice. */
  id: string;
  action: ControlAction;
}

export type CommandParseResult = { ok: true; command: ControlCommand } | { ok: false; error: CommandError };

const ID_RE = new RegExp(ID_PATTERN);
const FIELDS: ReadonlySet<string> = new Set(['id', 'action']);
// Fatal: a payload that is not UTF-8 is refused rather than read with U+FFFD in place of bytes.
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** A value from the payload, quoted and cut short for an error message. */
function quote(value: string): string {
  return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const isAction = (value: string): value is ControlAction => (CONTROL_ACTIONS as readonly string[]).includes(value);

/**
 * Parses a command payload of at most `maxBytes` bytes. Never throws: a payload that is not a
 * command gives `{ ok: false, error }` with the error's code and a message naming the field.
 * Checks run in a fixed order (size, UTF-8 and JSON, shape, id, fields, action) so one payload
 * always gets the same answer; the id is read first so later refusals can carry it.
 */
export function parseControlCommand(payload: Uint8Array, maxBytes: number): CommandParseResult {
  const fail = (code: CommandErrorCode, message: string, commandId: string | null = null): CommandParseResult => ({
    ok: false,
    error: new CommandError(code, message, commandId),
  });
  // Before decoding: an oversized payload costs nothing more than its length check.
  if (payload.byteLength > maxBytes)
    return fail('payload_too_large', `command is ${payload.byteLength} bytes, more than the limit of ${maxBytes}`);

  let text: string;
  try {
    text = UTF8.decode(payload);
  } catch {
    return fail('invalid_json', 'command is not UTF-8 text');
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // The parser's own message quotes the payload; a fixed one keeps foreign bytes out of logs.
    return fail('invalid_json', 'command is not valid JSON');
  }
  if (!isObject(value))
    return fail('invalid_command', 'command must be a JSON object { "id": string, "action": string }');

  const id = value.id;
  if (id === undefined) return fail('invalid_command', 'id is required');
  if (typeof id !== 'string') return fail('invalid_command', `id must be a string, not ${typeName(id)}`);
  if (!ID_RE.test(id))
    return fail('invalid_command', `id ${quote(id)} must be 1 to 128 characters of A-Z, a-z, 0-9, "_" and "-"`);

  // Unknown fields are refused, as by the API: a field the gateway ignores silently could be one
  // the sender relies on.
  for (const key of Object.keys(value)) {
    if (!FIELDS.has(key))
      return fail('invalid_command', `unknown field ${quote(key)}: a command has only "id" and "action"`, id);
  }

  const action = value.action;
  if (action === undefined) return fail('invalid_command', 'action is required', id);
  if (typeof action !== 'string')
    return fail('invalid_command', `action must be a string, not ${typeName(action)}`, id);
  if (!isAction(action))
    return fail(
      'unknown_action',
      `unknown action ${quote(action)}: action must be one of ${CONTROL_ACTIONS.join(', ')}`,
      id,
    );

  return { ok: true, command: { id, action } };
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  const t = typeof value;
  return t === 'object' ? 'an object' : `a ${t}`;
}
