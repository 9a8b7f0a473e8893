// What the benches read from outside (HTTP bodies, the gateway's log lines and IPC messages, a page's
// state, a tool's JSON) is `unknown` until a schema says what it is. The gateway's own API schemas
// (dist/api/schemas.js) check what it answers; the others are declared beside their use.
import Type, { type Static, type TSchema } from 'typebox';
import Value from 'typebox/value';
import { AlertSchema, DeviceSchema, Envelope, RecordingSchema } from '../../dist/api/schemas.js';

/** `value` as `schema` has it, or an error that names `what` and the first mismatches. */
export function narrow<T extends TSchema>(schema: T, value: unknown, what: string): Static<T> {
  if (Value.Check(schema, value)) return value;
  const errors = Value.Errors(schema, value)
    .slice(0, 3)
    .map((e) => `${e.instancePath || '/'} ${e.message}`);
  throw new Error(`${what}: not what was expected (${errors.join('; ')}): ${JSON.stringify(value)?.slice(0, 200)}`);
}

/** JSON text as `schema` has it. */
export const parseAs = <T extends TSchema>(schema: T, text: string, what: string): Static<T> =>
  narrow(schema, JSON.parse(text), what);

/** A page of GET /v1/devices, /v1/alerts, /v1/devices/{id}/recordings. */
export const DevicePage = Envelope(DeviceSchema);
export const AlertPage = Envelope(AlertSchema);
export const RecordingPage = Envelope(RecordingSchema);
export type Device = Static<typeof DeviceSchema>;
export type Recording = Static<typeof RecordingSchema>;

/** GET /healthz: the detector's state ('loading' while its model loads; absent without one). */
export const Health = Type.Object({ detector: Type.Optional(Type.String()) });
