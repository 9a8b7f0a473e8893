import { describe, expect, it } from 'vitest';
import { OAuthError, isAuthorizeError, isTokenError } from '../../../src/auth/oauth/errors.js';
import type { OAuthErrorCode } from '../../../src/domain/errors.js';
import {
  MAX_PARAM_LENGTH,
  checkClientGrant,
  checkScopeSubset,
  formatScope,
  parseAuthorizeRequest,
  parseBasicClientAuth,
  parseRevocationRequest,
  parseScopeParam,
  parseTokenRequest,
  type AuthorizeParseResult,
  type GrantType,
  type TokenParseResult,
} from '../../../src/auth/oauth/params.js';
import { makeRng, mutate } from '../../support/fuzz.js';

// The spec's section 5 list; src/auth does not export one, so the caller passes it in.
const SCOPES = [
  'devices:read',
  'devices:write',
  'alerts:read',
  'alerts:write',
  'recordings:read',
  'recordings:write',
  'users:read',
  'users:write',
];
const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';

const basic = (id: string, secret: string): string =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

describe('parseScopeParam', () => {
  const cases: Array<[string, string | undefined, string[] | null | 'invalid_scope']> = [
    ['absent', undefined, null],
    ['empty', '', null],
    ['one', 'devices:read', ['devices:read']],
    ['several', 'devices:read alerts:write users:read', ['alerts:write', 'devices:read', 'users:read']],
    ['repeated collapses', 'devices:read devices:read', ['devices:read']],
    ['unknown', 'devices:read admin', 'invalid_scope'],
    ['prefix of a known one', 'devices', 'invalid_scope'],
    ['case changed', 'Devices:read', 'invalid_scope'],
    ['two spaces', 'devices:read  alerts:read', 'invalid_scope'],
    ['leading space', ' devices:read', 'invalid_scope'],
    ['trailing space', 'devices:read ', 'invalid_scope'],
    ['tab', 'devices:read\talerts:read', 'invalid_scope'],
    ['plus (form encoding left undone)', 'devices:read+alerts:read', 'invalid_scope'],
    ['comma', 'devices:read,alerts:read', 'invalid_scope'],
    ['double quote', 'devices:read "x"', 'invalid_scope'],
    ['backslash', 'devices:read \\x', 'invalid_scope'],
    ['non-ASCII', 'devices:réad', 'invalid_scope'],
  ];
  it.each(cases)('%s', (_name, value, expected) => {
    const result = parseScopeParam(value, SCOPES);
    if (expected === 'invalid_scope') {
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.error.code).toBe('invalid_scope');
    } else {
      expect(result.ok).toBe(true);
      if (result.ok) expect(result.scopes === null ? null : [...result.scopes].sort()).toEqual(expected);
    }
  });

  it('takes the known scopes as a set too', () => {
    const result = parseScopeParam('alerts:read', new Set(SCOPES));
    expect(result.ok && [...(result.scopes ?? [])]).toEqual(['alerts:read']);
  });

  it('lists the known scopes, not the requested one, in the description', () => {
    const result = parseScopeParam('evil<script>', SCOPES);
    expect(!result.ok && result.error.description).toContain('devices:read');
    expect(!result.ok && result.error.description).not.toContain('evil');
  });
});

describe('checkScopeSubset and formatScope', () => {
  const granted = new Set(['devices:read', 'alerts:read']);
  it.each<[string, string[], boolean]>([
    ['same', ['devices:read', 'alerts:read'], true],
    ['fewer', ['alerts:read'], true],
    ['none', [], true],
    ['wider', ['devices:read', 'devices:write'], false],
    ['other', ['users:read'], false],
  ])('%s', (_name, requested, ok) => {
    const err = checkScopeSubset(new Set(requested), granted);
    if (ok) expect(err).toBeNull();
    else expect(err?.code).toBe('invalid_scope');
  });

  it('formats sorted, single spaces, no duplicates', () => {
    expect(formatScope(['users:read', 'alerts:read', 'users:read'])).toBe('alerts:read users:read');
    expect(formatScope(new Set<string>())).toBe('');
  });
});

describe('parseAuthorizeRequest', () => {
  const base = {
    client_id: 'app-1',
    redirect_uri: 'https://app.example/cb',
    response_type: 'code',
    scope: 'devices:read alerts:read',
    state: 'xyz',
    code_challenge: CHALLENGE,
    code_challenge_method: 'S256',
  };

  it('parses a complete request', () => {
    expect(parseAuthorizeRequest(base, SCOPES)).toEqual({
      kind: 'ok',
      request: {
        clientId: 'app-1',
        redirectUri: 'https://app.example/cb',
        state: 'xyz',
        responseType: 'code',
        scope: new Set(['devices:read', 'alerts:read']),
        codeChallenge: CHALLENGE,
        codeChallengeMethod: 'S256',
      },
    } satisfies AuthorizeParseResult);
  });

  it('leaves optional parameters undefined or null', () => {
    const result = parseAuthorizeRequest(
      { client_id: 'a', redirect_uri: 'https://app.example/cb', response_type: 'code' },
      SCOPES,
    );
    expect(result).toEqual({
      kind: 'ok',
      request: {
        clientId: 'a',
        redirectUri: 'https://app.example/cb',
        state: undefined,
        responseType: 'code',
        scope: null,
        codeChallenge: undefined,
        codeChallengeMethod: undefined,
      },
    });
  });

  it.each([[''], [null], [undefined]])('treats %j values as absent (RFC 6749 §3.1)', (empty) => {
    const result = parseAuthorizeRequest(
      { ...base, state: empty, scope: empty, code_challenge: empty, code_challenge_method: empty },
      SCOPES,
    );
    expect(result.kind).toBe('ok');
    if (result.kind !== 'ok') return;
    expect(result.request.state).toBeUndefined();
    expect(result.request.scope).toBeNull();
    expect(result.request.codeChallenge).toBeUndefined();
  });

  it('ignores unknown parameters, even repeated ones', () => {
    const result = parseAuthorizeRequest({ ...base, prompt: ['login', 'consent'], nonce: { x: 1 } }, SCOPES);
    expect(result.kind).toBe('ok');
  });

  it('keeps state exactly as sent', () => {
    const state = ' a+b%20c/~!*\'()"<>';
    const result = parseAuthorizeRequest({ ...base, state }, SCOPES);
    expect(result.kind === 'ok' && result.request.state).toBe(state);
  });

  it('accepts a single-element array as the value (some decoders always make arrays)', () => {
    const result = parseAuthorizeRequest({ ...base, client_id: ['app-1'] }, SCOPES);
    expect(result.kind === 'ok' && result.request.clientId).toBe('app-1');
  });

  // Page errors: never redirected (client_id, redirect_uri or state is in doubt).
  const pageErrors: Array<[string, unknown]> = [
    ['not an object', 'client_id=a'],
    ['null', null],
    ['an array', [base]],
    ['no client_id', { ...base, client_id: undefined }],
    ['empty client_id', { ...base, client_id: '' }],
    ['duplicate client_id', { ...base, client_id: ['a', 'b'] }],
    ['duplicate identical client_id', { ...base, client_id: ['app-1', 'app-1'] }],
    ['client_id not a string', { ...base, client_id: 42 }],
    ['client_id with a control character', { ...base, client_id: 'app\n1' }],
    ['client_id too long', { ...base, client_id: 'a'.repeat(MAX_PARAM_LENGTH + 1) }],
    ['no redirect_uri', { ...base, redirect_uri: undefined }],
    ['duplicate redirect_uri', { ...base, redirect_uri: ['https://app.example/cb', 'https://evil.example/cb'] }],
    ['redirect_uri an object', { ...base, redirect_uri: { href: 'https://app.example/cb' } }],
    ['duplicate state', { ...base, state: ['a', 'b'] }],
    ['state with non-ASCII', { ...base, state: 'é' }],
  ];
  it.each(pageErrors)('page error: %s', (_name, query) => {
    const result = parseAuthorizeRequest(query, SCOPES);
    expect(result.kind).toBe('page_error');
    if (result.kind === 'page_error') expect(result.error.code).toBe('invalid_request');
  });

  // Redirect errors: sent to redirect_uri with state, once the caller has checked both.
  const redirectErrors: Array<[string, Record<string, unknown>, OAuthErrorCode]> = [
    ['no response_type', { ...base, response_type: undefined }, 'invalid_request'],
    ['response_type token', { ...base, response_type: 'token' }, 'unsupported_response_type'],
    ['response_type code id_token', { ...base, response_type: 'code id_token' }, 'unsupported_response_type'],
    ['response_type CODE', { ...base, response_type: 'CODE' }, 'unsupported_response_type'],
    ['duplicate response_type', { ...base, response_type: ['code', 'code'] }, 'invalid_request'],
    ['duplicate scope', { ...base, scope: ['devices:read', 'users:write'] }, 'invalid_request'],
    ['unknown scope', { ...base, scope: 'devices:read admin' }, 'invalid_scope'],
    ['malformed scope', { ...base, scope: 'devices:read,alerts:read' }, 'invalid_scope'],
    ['duplicate code_challenge', { ...base, code_challenge: [CHALLENGE, CHALLENGE] }, 'invalid_request'],
    ['duplicate code_challenge_method', { ...base, code_challenge_method: ['S256', 'plain'] }, 'invalid_request'],
    ['code_challenge not a string', { ...base, code_challenge: 1 }, 'invalid_request'],
  ];
  it.each(redirectErrors)('redirect error: %s', (_name, query, code) => {
    const result = parseAuthorizeRequest(query, SCOPES);
    expect(result.kind).toBe('redirect_error');
    if (result.kind !== 'redirect_error') return;
    expect(result.error.code).toBe(code);
    expect(isAuthorizeError(result.error)).toBe(true);
    expect(result.clientId).toBe('app-1');
    expect(result.redirectUri).toBe('https://app.example/cb');
    expect(result.state).toBe('xyz');
  });

  it('PKCE parameters are passed through unjudged', () => {
    const result = parseAuthorizeRequest({ ...base, code_challenge: 'short', code_challenge_method: 'plain' }, SCOPES);
    expect(result.kind === 'ok' && [result.request.codeChallenge, result.request.codeChallengeMethod]).toEqual([
      'short',
      'plain',
    ]);
  });

  it('is not fooled by __proto__ or inherited properties', () => {
    const query = JSON.parse(
      '{"__proto__": {"client_id": "evil"}, "redirect_uri": "https://app.example/cb", "response_type": "code"}',
    ) as unknown;
    expect(parseAuthorizeRequest(query, SCOPES).kind).toBe('page_error');
    const inherited = Object.create({ client_id: 'evil' }) as Record<string, unknown>;
    inherited.redirect_uri = 'https://app.example/cb';
    inherited.response_type = 'code';
    expect(parseAuthorizeRequest(inherited, SCOPES).kind).toBe('page_error');
  });
});

describe('parseTokenRequest', () => {
  const opts = { knownScopes: SCOPES };
  const code = {
    grant_type: 'authorization_code',
    code: 'c0de',
    redirect_uri: 'https://app.example/cb',
    client_id: 'app-1',
    code_verifier: 'v'.repeat(43),
  };

  it('authorization_code for a public client', () => {
    expect(parseTokenRequest(code, opts)).toEqual({
      ok: true,
      request: {
        grantType: 'authorization_code',
        client: { method: 'none', clientId: 'app-1' },
        code: 'c0de',
        redirectUri: 'https://app.example/cb',
        codeVerifier: 'v'.repeat(43),
      },
    } satisfies TokenParseResult);
  });

  it('authorization_code with client_secret_post, as the spec shows it (JSON)', () => {
    const body = JSON.parse(
      '{"grant_type":"authorization_code","client_id":"app-1","client_secret":"s3cret","code":"c0de","redirect_uri":"https://app.example/cb"}',
    ) as unknown;
    const result = parseTokenRequest(body, opts);
    expect(result.ok && result.request).toEqual({
      grantType: 'authorization_code',
      client: { method: 'client_secret_post', clientId: 'app-1', clientSecret: 's3cret' },
      code: 'c0de',
      redirectUri: 'https://app.example/cb',
      codeVerifier: undefined,
    });
  });

  it('authorization_code with client_secret_basic (form body)', () => {
    const { client_id: _omitted, ...rest } = code;
    const result = parseTokenRequest(rest, { ...opts, authorization: basic('app-1', 's3:c r/et') });
    expect(result.ok && result.request.client).toEqual({
      method: 'client_secret_basic',
      clientId: 'app-1',
      clientSecret: 's3:c r/et',
    });
  });

  it('Basic with the same client_id in the body', () => {
    const result = parseTokenRequest(code, { ...opts, authorization: basic('app-1', 's') });
    expect(result.ok && result.request.client.method).toBe('client_secret_basic');
  });

  it('refresh_token, with and without scope', () => {
    const body = { grant_type: 'refresh_token', refresh_token: 'rt', client_id: 'app-1', client_secret: 's' };
    const without = parseTokenRequest(body, opts);
    expect(without.ok && without.request).toEqual({
      grantType: 'refresh_token',
      client: { method: 'client_secret_post', clientId: 'app-1', clientSecret: 's' },
      refreshToken: 'rt',
      scope: null,
    });
    const narrowed = parseTokenRequest({ ...body, scope: 'devices:read' }, opts);
    expect(
      narrowed.ok && narrowed.request.grantType === 'refresh_token' && [...(narrowed.request.scope ?? [])],
    ).toEqual(['devices:read']);
  });

  it('client_credentials', () => {
    const result = parseTokenRequest(
      { grant_type: 'client_credentials', scope: 'devices:read devices:write' },
      { ...opts, authorization: basic('svc', 'pw') },
    );
    expect(result.ok && result.request).toEqual({
      grantType: 'client_credentials',
      client: { method: 'client_secret_basic', clientId: 'svc', clientSecret: 'pw' },
      scope: new Set(['devices:read', 'devices:write']),
    });
  });

  it('ignores another Authorization scheme', () => {
    const result = parseTokenRequest(code, { ...opts, authorization: 'Bearer abc' });
    expect(result.ok && result.request.client.method).toBe('none');
  });

  const errors: Array<[string, unknown, string | undefined, OAuthErrorCode]> = [
    ['body not an object', 'grant_type=authorization_code', undefined, 'invalid_request'],
    ['body null', null, undefined, 'invalid_request'],
    ['body an array', [code], undefined, 'invalid_request'],
    ['no grant_type', { ...code, grant_type: undefined }, undefined, 'invalid_request'],
    ['unknown grant_type', { ...code, grant_type: 'password' }, undefined, 'unsupported_grant_type'],
    ['implicit grant_type', { ...code, grant_type: 'implicit' }, undefined, 'unsupported_grant_type'],
    ['grant_type case changed', { ...code, grant_type: 'Authorization_Code' }, undefined, 'unsupported_grant_type'],
    [
      'duplicate grant_type',
      { ...code, grant_type: ['authorization_code', 'client_credentials'] },
      undefined,
      'invalid_request',
    ],
    ['duplicate code', { ...code, code: ['a', 'b'] }, undefined, 'invalid_request'],
    [
      'duplicate code_verifier',
      { ...code, code_verifier: ['v'.repeat(43), 'w'.repeat(43)] },
      undefined,
      'invalid_request',
    ],
    [
      'duplicate redirect_uri',
      { ...code, redirect_uri: ['https://app.example/cb', 'https://app.example/cb'] },
      undefined,
      'invalid_request',
    ],
    ['duplicate client_id', { ...code, client_id: ['app-1', 'app-2'] }, undefined, 'invalid_request'],
    ['duplicate client_secret', { ...code, client_secret: ['a', 'b'] }, undefined, 'invalid_request'],
    ['duplicate scope', { grant_type: 'client_credentials', scope: ['a', 'b'] }, basic('svc', 'pw'), 'invalid_request'],
    ['code a number', { ...code, code: 1234 }, undefined, 'invalid_request'],
    ['code null (absent)', { ...code, code: null }, undefined, 'invalid_request'],
    ['code an object', { ...code, code: { $ne: '' } }, undefined, 'invalid_request'],
    ['code too long', { ...code, code: 'c'.repeat(MAX_PARAM_LENGTH + 1) }, undefined, 'invalid_request'],
    ['code with a newline', { ...code, code: 'c0de\n' }, undefined, 'invalid_request'],
    ['no code', { ...code, code: undefined }, undefined, 'invalid_request'],
    ['empty code', { ...code, code: '' }, undefined, 'invalid_request'],
    ['no redirect_uri', { ...code, redirect_uri: undefined }, undefined, 'invalid_request'],
    ['no refresh_token', { grant_type: 'refresh_token', client_id: 'app-1' }, undefined, 'invalid_request'],
    [
      'unknown scope on refresh',
      { grant_type: 'refresh_token', refresh_token: 'rt', client_id: 'a', scope: 'root' },
      undefined,
      'invalid_scope',
    ],
    [
      'unknown scope, client_credentials',
      { grant_type: 'client_credentials', scope: 'devices:read root' },
      basic('svc', 'pw'),
      'invalid_scope',
    ],
    ['no client at all', { ...code, client_id: undefined }, undefined, 'invalid_client'],
    ['secret without id', { ...code, client_id: undefined, client_secret: 's' }, undefined, 'invalid_client'],
    ['malformed Basic', code, 'Basic !!!', 'invalid_client'],
    ['Basic without colon', code, `Basic ${Buffer.from('app-1').toString('base64')}`, 'invalid_client'],
    ['Basic with empty secret', code, `Basic ${Buffer.from('app-1:').toString('base64')}`, 'invalid_client'],
    ['Basic and client_secret in the body', { ...code, client_secret: 's' }, basic('app-1', 's'), 'invalid_request'],
    ['Basic for another client than the body', code, basic('app-2', 's'), 'invalid_request'],
  ];
  it.each(errors)('%s', (_name, body, authorization, expected) => {
    const result = parseTokenRequest(body, { ...opts, authorization });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error).toBeInstanceOf(OAuthError);
    expect(result.error.code).toBe(expected);
    expect(isTokenError(result.error)).toBe(true);
  });

  it('never puts a secret or code into the description', () => {
    const result = parseTokenRequest(
      { ...code, code: ['secret-code-1', 'secret-code-2'], client_secret: 'hunter2' },
      opts,
    );
    expect(!result.ok && result.error.description).not.toMatch(/secret-code|hunter2/);
  });

  it('leaves code_verifier checks to PKCE (invalid_grant there), whatever its characters', () => {
    const result = parseTokenRequest({ ...code, code_verifier: 'é\n' }, opts);
    expect(result.ok && result.request.grantType === 'authorization_code' && result.request.codeVerifier).toBe('é\n');
  });
});

describe('parseRevocationRequest', () => {
  const cases: Array<[string, unknown, string | undefined, object | string]> = [
    [
      'a public client',
      { token: 't', client_id: 'gateway-web' },
      undefined,
      { client: { method: 'none', clientId: 'gateway-web' }, token: 't', tokenTypeHint: undefined },
    ],
    [
      'a hint',
      { token: 't', token_type_hint: 'refresh_token', client_id: 'c' },
      undefined,
      { token: 't', tokenTypeHint: 'refresh_token' },
    ],
    [
      'an unknown hint (kept; the server ignores it)',
      { token: 't', token_type_hint: 'id_token', client_id: 'c' },
      undefined,
      { tokenTypeHint: 'id_token' },
    ],
    [
      'HTTP Basic',
      { token: 't' },
      basic('c', 's'),
      { client: { method: 'client_secret_basic', clientId: 'c', clientSecret: 's' } },
    ],
    [
      'a secret in the body',
      { token: 't', client_id: 'c', client_secret: 's' },
      undefined,
      { client: { method: 'client_secret_post', clientId: 'c', clientSecret: 's' } },
    ],
    ['no token', { client_id: 'c' }, undefined, 'invalid_request'],
    ['an empty token', { client_id: 'c', token: '' }, undefined, 'invalid_request'],
    ['two tokens', { client_id: 'c', token: ['a', 'b'] }, undefined, 'invalid_request'],
    ['a token that is no string', { client_id: 'c', token: 5 }, undefined, 'invalid_request'],
    ['a token with a control character', { client_id: 'c', token: 'a\nb' }, undefined, 'invalid_request'],
    ['no client at all (checked before the token)', {}, undefined, 'invalid_client'],
    ['malformed Basic', { token: 't' }, 'Basic !!!', 'invalid_client'],
    ['Basic and a body secret', { token: 't', client_secret: 's' }, basic('c', 's'), 'invalid_request'],
    ['not an object', 'token=t', undefined, 'invalid_request'],
  ];
  it.each(cases)('%s', (_name, body, authorization, expected) => {
    const parsed = parseRevocationRequest(body, { authorization });
    if (typeof expected === 'string') {
      expect(parsed.ok ? 'ok' : parsed.error.code).toBe(expected);
    } else {
      expect(parsed.ok).toBe(true);
      if (parsed.ok) expect(parsed.request).toMatchObject(expected);
    }
  });
});

describe('parseBasicClientAuth', () => {
  const cases: Array<[string, string, ReturnType<typeof parseBasicClientAuth>]> = [
    ['simple', basic('id', 'secret'), { kind: 'credentials', clientId: 'id', clientSecret: 'secret' }],
    [
      'lower-case scheme, extra spaces',
      `basic   ${Buffer.from('id:secret').toString('base64')}  `,
      { kind: 'credentials', clientId: 'id', clientSecret: 'secret' },
    ],
    [
      'colon in the id survives encoding',
      basic('urn:app:1', 'pw'),
      { kind: 'credentials', clientId: 'urn:app:1', clientSecret: 'pw' },
    ],
    [
      'plus decodes to space',
      `Basic ${Buffer.from('id:a+b').toString('base64')}`,
      { kind: 'credentials', clientId: 'id', clientSecret: 'a b' },
    ],
    [
      'colon in the secret',
      `Basic ${Buffer.from('id:a:b').toString('base64')}`,
      { kind: 'credentials', clientId: 'id', clientSecret: 'a:b' },
    ],
    ['bearer', 'Bearer abc', { kind: 'none' }],
    ['other scheme starting with basic', 'Basically abc', { kind: 'none' }],
    ['empty', '', { kind: 'none' }],
    ['no credentials', 'Basic', { kind: 'malformed' }],
    ['two tokens', 'Basic abc def', { kind: 'malformed' }],
    ['bad base64', 'Basic ****', { kind: 'malformed' }],
    [
      'missing padding',
      `Basic ${Buffer.from('id:secret1').toString('base64').replace(/=+$/, '')}`,
      { kind: 'malformed' },
    ],
    ['non-canonical base64', 'Basic aWQ6c2VjcmV0=', { kind: 'malformed' }],
    ['invalid UTF-8', `Basic ${Buffer.from([0x69, 0x64, 0x3a, 0xff]).toString('base64')}`, { kind: 'malformed' }],
    ['bad percent-encoding', `Basic ${Buffer.from('id:%zz').toString('base64')}`, { kind: 'malformed' }],
    ['empty id', `Basic ${Buffer.from(':secret').toString('base64')}`, { kind: 'malformed' }],
    ['control character in the secret', `Basic ${Buffer.from('id:a%0Ab').toString('base64')}`, { kind: 'malformed' }],
  ];
  it.each(cases)('%s', (_name, header, expected) => {
    expect(parseBasicClientAuth(header)).toEqual(expected);
  });
});

describe('checkClientGrant', () => {
  const confidential = {
    public: false,
    grantTypes: ['authorization_code', 'refresh_token', 'client_credentials'] as GrantType[],
  };
  const publicClient = {
    public: true,
    grantTypes: ['authorization_code', 'refresh_token', 'client_credentials'] as GrantType[],
  };
  const codeOnly = { public: false, grantTypes: ['authorization_code'] as GrantType[] };
  it.each<[string, { public: boolean; grantTypes: GrantType[] }, GrantType, boolean]>([
    ['confidential, client_credentials', confidential, 'client_credentials', true],
    ['public, client_credentials even if registered', publicClient, 'client_credentials', false],
    ['public, authorization_code', publicClient, 'authorization_code', true],
    ['code-only client refreshing', codeOnly, 'refresh_token', false],
    ['code-only client, client_credentials', codeOnly, 'client_credentials', false],
  ])('%s', (_name, client, grant, allowed) => {
    const err = checkClientGrant(client, grant);
    if (allowed) expect(err).toBeNull();
    else expect(err?.code).toBe('unauthorized_client');
  });
});

describe('params fuzz', () => {
  const rng = makeRng();
  const alphabet = 'abc:_ \t\n"\\é\u0000%+=&?#[]{}';
  const names = [
    'grant_type',
    'client_id',
    'client_secret',
    'code',
    'redirect_uri',
    'code_verifier',
    'refresh_token',
    'scope',
    'state',
    'response_type',
    'code_challenge',
    'code_challenge_method',
    '__proto__',
    'constructor',
    'x',
  ];
  const randomValue = (): unknown => {
    switch (rng.int(8)) {
      case 0:
        return mutate(
          rng,
          rng.pick([
            'authorization_code',
            'refresh_token',
            'client_credentials',
            'code',
            'devices:read alerts:read',
            'https://app.example/cb',
          ]),
          alphabet,
        );
      case 1:
        return [rng.string(10), rng.string(10)];
      case 2:
        return [rng.string(10)];
      case 3:
        return rng.int(1000);
      case 4:
        return null;
      case 5:
        return { nested: rng.string(5) };
      case 6:
        return rng.bytes(40).toString('latin1');
      default:
        return rng.pick([
          'authorization_code',
          'refresh_token',
          'client_credentials',
          'code',
          'S256',
          'devices:read',
          'app-1',
          '',
        ]);
    }
  };
  it(`never throws; every outcome is well-formed (seed ${rng.seed})`, () => {
    for (let i = 0; i < 4000; i++) {
      const input: Record<string, unknown> = {};
      const n = rng.int(8);
      for (let j = 0; j < n; j++) input[rng.pick(names)] = randomValue();
      const body: unknown = rng.int(20) === 0 ? randomValue() : input;
      const authorization = rng.int(4) === 0 ? mutate(rng, basic('app-1', 'pw'), alphabet) : undefined;

      const token = parseTokenRequest(body, { knownScopes: SCOPES, authorization });
      if (token.ok) {
        expect(['authorization_code', 'refresh_token', 'client_credentials']).toContain(token.request.grantType);
        expect(typeof token.request.client.clientId).toBe('string');
        expect(token.request.client.clientId).not.toBe('');
        if (token.request.grantType !== 'authorization_code' && token.request.scope !== null) {
          for (const s of token.request.scope) expect(SCOPES).toContain(s);
        }
      } else {
        expect(isTokenError(token.error)).toBe(true);
      }

      const authorize = parseAuthorizeRequest(body, SCOPES);
      if (authorize.kind === 'ok') {
        expect(authorize.request.responseType).toBe('code');
        expect(typeof authorize.request.clientId).toBe('string');
        expect(typeof authorize.request.redirectUri).toBe('string');
      } else if (authorize.kind === 'redirect_error') {
        expect(isAuthorizeError(authorize.error)).toBe(true);
        expect(authorize.clientId).not.toBe('');
        expect(authorize.redirectUri).not.toBe('');
        if (authorize.state !== undefined) expect(authorize.state).toMatch(/^[\x20-\x7E]+$/);
      } else {
        expect(authorize.error.code).toBe('invalid_request');
      }
    }
  });
});
