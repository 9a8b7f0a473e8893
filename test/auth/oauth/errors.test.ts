import { describe, expect, it } from 'vitest';
import {
  AUTHORIZE_ERROR_CODES,
  OAuthError,
  TOKEN_ERROR_CODES,
  errorRedirect,
  isAuthorizeError,
  isOAuthErrorCode,
  isTokenError,
  oauthErrorBody,
  oauthErrorStatus,
  tokenErrorHeaders,
  type AuthorizeErrorCode,
} from '../../../src/auth/oauth/errors.js';
import { OAUTH_ERROR_CODES, type OAuthErrorCode } from '../../../src/domain/errors.js';

describe('OAuthError', () => {
  it('carries code and description', () => {
    const err = new OAuthError('invalid_grant', 'authorization code is invalid');
    expect(err).toBeInstanceOf(Error);
    expect(err).toBeInstanceOf(OAuthError);
    expect(err.name).toBe('OAuthError');
    expect(err.code).toBe('invalid_grant');
    expect(err.description).toBe('authorization code is invalid');
    expect(err.message).toBe('invalid_grant: authorization code is invalid');
  });

  // RFC 6749 §5.2: error_description is %x20-21 / %x23-5B / %x5D-7E only.
  const descriptions: Array<[string, string, string]> = [
    ['plain text stays', 'scope is malformed', 'scope is malformed'],
    ['double quote becomes single', 'parameter "scope"', "parameter 'scope'"],
    ['backslash becomes slash', 'a\\b', 'a/b'],
    ['newline replaced', 'a\nb', 'a?b'],
    ['non-ASCII replaced', 'caméra', 'cam?ra'],
    ['empty stays empty', '', ''],
  ];
  it.each(descriptions)('description: %s', (_name, given, expected) => {
    expect(new OAuthError('invalid_request', given).description).toBe(expected);
  });

  it('caps the description length', () => {
    expect(new OAuthError('invalid_request', 'x'.repeat(10_000)).description.length).toBeLessThanOrEqual(300);
  });
});

describe('code sets', () => {
  it('has exactly the ten codes', () => {
    expect([...OAUTH_ERROR_CODES].sort()).toEqual(
      [
        'access_denied',
        'invalid_client',
        'invalid_grant',
        'invalid_request',
        'invalid_scope',
        'server_error',
        'temporarily_unavailable',
        'unauthorized_client',
        'unsupported_grant_type',
        'unsupported_response_type',
      ].sort(),
    );
  });

  it('isOAuthErrorCode', () => {
    for (const code of OAUTH_ERROR_CODES) expect(isOAuthErrorCode(code)).toBe(true);
    for (const other of ['invalid_token', 'INVALID_REQUEST', '', null, 1, undefined])
      expect(isOAuthErrorCode(other)).toBe(false);
  });

  // RFC 6749 §4.1.2.1 vs §5.2.
  const placement: Array<[OAuthErrorCode, boolean, boolean]> = [
    ['invalid_request', true, true],
    ['invalid_client', false, true],
    ['invalid_grant', false, true],
    ['unauthorized_client', true, true],
    ['unsupported_grant_type', false, true],
    ['invalid_scope', true, true],
    ['access_denied', true, false],
    ['unsupported_response_type', true, false],
    ['server_error', true, true],
    ['temporarily_unavailable', true, true],
  ];
  it.each(placement)('%s: in redirect %s, at token endpoint %s', (code, inRedirect, atToken) => {
    const err = new OAuthError(code, 'x');
    expect(isAuthorizeError(err)).toBe(inRedirect);
    expect(isTokenError(err)).toBe(atToken);
    expect((AUTHORIZE_ERROR_CODES as readonly string[]).includes(code)).toBe(inRedirect);
    expect((TOKEN_ERROR_CODES as readonly string[]).includes(code)).toBe(atToken);
  });
});

describe('oauthErrorStatus', () => {
  const cases: Array<[OAuthErrorCode, number]> = [
    ['invalid_request', 400],
    ['invalid_client', 401],
    ['invalid_grant', 400],
    ['unauthorized_client', 400],
    ['unsupported_grant_type', 400],
    ['invalid_scope', 400],
    ['access_denied', 400],
    ['unsupported_response_type', 400],
    ['server_error', 500],
    ['temporarily_unavailable', 503],
  ];
  it.each(cases)('%s → %d', (code, status) => {
    expect(oauthErrorStatus(code)).toBe(status);
  });
});

describe('oauthErrorBody', () => {
  it('is { error, error_description } and nothing else', () => {
    const body = oauthErrorBody(new OAuthError('invalid_scope', 'unknown scope requested'));
    expect(body).toEqual({ error: 'invalid_scope', error_description: 'unknown scope requested' });
    expect(Object.keys(body).sort()).toEqual(['error', 'error_description']);
    expect(JSON.parse(JSON.stringify(body))).toEqual(body);
  });
});

describe('tokenErrorHeaders', () => {
  const cases: Array<[string, OAuthErrorCode, string | undefined, boolean]> = [
    ['invalid_client after Basic', 'invalid_client', 'Basic Zm9vOmJhcg==', true],
    ['invalid_client after basic (any case)', 'invalid_client', 'bAsIc Zm9vOmJhcg==', true],
    ['invalid_client after a bare Basic', 'invalid_client', 'Basic', true],
    ['invalid_client with credentials in the body', 'invalid_client', undefined, false],
    ['invalid_client after Bearer', 'invalid_client', 'Bearer abc', false],
    ['invalid_client after BasicX', 'invalid_client', 'BasicX abc', false],
    ['invalid_grant after Basic', 'invalid_grant', 'Basic Zm9vOmJhcg==', false],
  ];
  it.each(cases)('%s', (_name, code, authorization, challenge) => {
    const headers = tokenErrorHeaders(new OAuthError(code, 'x'), authorization);
    expect(headers['cache-control']).toBe('no-store');
    expect(headers.pragma).toBe('no-cache');
    if (challenge) expect(headers['www-authenticate']).toMatch(/^Basic realm="edge-gateway"/);
    else expect(headers['www-authenticate']).toBeUndefined();
  });

  it('keeps quotes out of the realm', () => {
    const headers = tokenErrorHeaders(new OAuthError('invalid_client', 'x'), 'Basic x', 'a"b\\c');
    expect(headers['www-authenticate']).toBe('Basic realm="abc", charset="UTF-8"');
  });
});

describe('errorRedirect', () => {
  it('adds error, error_description and state to the query', () => {
    const location = errorRedirect(
      'https://app.example/cb',
      new OAuthError('access_denied', 'the user denied access'),
      'xyz',
    );
    expect(location).toBe(
      'https://app.example/cb?error=access_denied&error_description=the+user+denied+access&state=xyz',
    );
  });

  it('keeps an existing query and returns state unchanged', () => {
    const state = 'a b+c&d=e%41/é~';
    const location = errorRedirect(
      'https://app.example/cb?tenant=a%20b',
      new OAuthError('invalid_scope', 'unknown scope'),
      state,
    );
    expect(location.startsWith('https://app.example/cb?tenant=a%20b&error=invalid_scope&')).toBe(true);
    const url = new URL(location);
    expect(url.searchParams.get('state')).toBe(state);
    expect(url.searchParams.get('tenant')).toBe('a b');
    expect(url.searchParams.get('error_description')).toBe('unknown scope');
    expect(url.hash).toBe('');
  });

  it('leaves state out when the request had none', () => {
    const location = errorRedirect('http://127.0.0.1:5000/cb', new OAuthError('invalid_request', 'x'), undefined);
    expect(new URL(location).searchParams.has('state')).toBe(false);
  });

  it('adds iss when given (RFC 9207)', () => {
    const location = errorRedirect(
      'com.example.app:/cb',
      new OAuthError('server_error', 'x'),
      's',
      'https://gw.example',
    );
    expect(location).toBe(
      'com.example.app:/cb?error=server_error&error_description=x&state=s&iss=https%3A%2F%2Fgw.example',
    );
  });

  it.each(AUTHORIZE_ERROR_CODES)('redirects %s', (code: AuthorizeErrorCode) => {
    expect(
      new URL(errorRedirect('https://app.example/cb', new OAuthError(code, 'x'), 's')).searchParams.get('error'),
    ).toBe(code);
  });

  it.each(['invalid_client', 'invalid_grant', 'unsupported_grant_type'] as const)('never redirects %s', (code) => {
    const widened = new OAuthError(code, 'x') as unknown as OAuthError<AuthorizeErrorCode>;
    expect(() => errorRedirect('https://app.example/cb', widened, 's')).toThrow(TypeError);
  });

  it('refuses a redirect URI with a fragment', () => {
    expect(() => errorRedirect('https://app.example/cb#x', new OAuthError('access_denied', 'x'), 's')).toThrow(
      TypeError,
    );
  });
});
