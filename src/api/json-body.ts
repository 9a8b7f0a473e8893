import type { FastifyInstance } from 'fastify';
import { RepeatedJsonNameError } from './errors.js';
import { repeatedJsonName } from './forms.js';

// The one application/json parser of the API and the OAuth endpoints: Fastify's own safe parser
// (prototype poisoning refused), plus a refusal of repeated member names, which JSON.parse would
// silently resolve to the last one: `{"action":"sync_time","action":"reboot"}` must not reboot.

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
      const repeated =
        typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? repeatedJsonName(text) : null;
      if (repeated !== null) return done(new RepeatedJsonNameError(repeated), undefined);
      done(null, parsed);
    });
  });
}
