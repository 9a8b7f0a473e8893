import type { FastifyInstance } from 'fastify';
import { repeatedJsonName } from './forms.js';

// The one application/json parser of the API and the OAuth endpoints: Fastify's own safe parser
// (prototype poisoning refused), plus a refusal of repeated member names, which JSON.parse would
// silently resolve to the last one: `{"action":"sync_time","action":"reboot"}` must not reboot.

/** A JSON object body naming a member twice: the client's malformed request (400). */
export class RepeatedJsonNameError extends Error {
  override readonly name = 'RepeatedJsonNameError';
  readonly statusCode = 400;

  /** The repeated name, or null when it is not one to echo back. */
  readonly member: string | null;

  constructor(name: string) {
    // Only names of at most 64 plain characters are echoed: the description is not an echo chamber.
    const member = /^[\w:-]{1,64}$/.test(name) ? name : null;
    super(member === null ? 'a name is given more than once' : `${member} is given more than once`);
    this.member = member;
  }
}

/**
 * Replaces the instance's application/json parser (in its encapsulation context). `emptyBody`
 * 'absent': an empty body reads as no body, as many clients send for "nothing"; 'error': Fastify's
 * own empty-body error.
 */
export function useStrictJsonParser(app: FastifyInstance, opts: { emptyBody: 'absent' | 'error' }): void {
  const json = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    const text = body as string;
    if (text === '' && opts.emptyBody === 'absent') return done(null, undefined);
    void json(req, text, (err, parsed) => {
      if (err) return done(err, undefined);
      const repeated = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? repeatedJsonName(text) : null;
      if (repeated !== null) return done(new RepeatedJsonNameError(repeated), undefined);
      done(null, parsed);
    });
  });
}
