import { describe, expect, it } from 'vitest';
import { issuerProblem, readIssuerMetadata } from '../../web/src/issuer.js';

// RFC 9207's check of the authorization response's `iss` (web/src/issuer.ts), and the metadata it reads.

const ISSUER = 'https://gateway.local:8443';
const sends = { issuer: ISSUER, authorization_response_iss_parameter_supported: true };
const silent = { issuer: ISSUER };

describe('issuerProblem', () => {
  it.each([
    ['the issuer, from a server that sends it', ISSUER, sends],
    ['the issuer, from a server that does not say', ISSUER, silent],
    ['none, from a server that does not send it', null, silent],
    [
      'none, from a server that says it does not send it',
      null,
      { issuer: ISSUER, authorization_response_iss_parameter_supported: false },
    ],
  ] as const)('accepts %s', (_name, iss, metadata) => {
    expect(issuerProblem(iss, metadata)).toBeNull();
  });

  it.each([
    ['another server', 'https://evil.example', sends, /another server \(https:\/\/evil\.example\)/],
    ['another server, even when the metadata does not promise iss', 'https://evil.example', silent, /another server/],
    ['a trailing slash (compared as strings, not as URLs)', `${ISSUER}/`, sends, /another server/],
    ['other case', ISSUER.toUpperCase(), sends, /another server/],
    ['an empty iss', '', sends, /another server/],
    ['none, when the server says it always sends one', null, sends, /did not say which server/],
  ] as const)('refuses %s, saying why', (_name, iss, metadata, why) => {
    const problem = issuerProblem(iss, metadata);
    expect(problem).toMatch(why);
    expect(problem).toMatch(/refused\. Sign in again\.$/);
  });
});

describe('readIssuerMetadata', () => {
  it('keeps the issuer and the iss promise of a metadata document', () => {
    expect(readIssuerMetadata({ ...sends, token_endpoint: 'x' })).toEqual(sends);
    expect(readIssuerMetadata(silent)).toEqual(silent);
  });

  it.each([
    null,
    'text',
    7,
    [],
    {},
    { issuer: '' },
    { issuer: 3 },
    { issuer: ISSUER, authorization_response_iss_parameter_supported: 'yes' },
  ])('refuses %j', (body) => {
    expect(readIssuerMetadata(body)).toBeNull();
  });
});
