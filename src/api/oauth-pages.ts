// The local authorization server's pages: login, consent and error, as plain server-rendered
// HTML with no script. Everything that came from a request or the database is escaped here; the
// routes pass raw values.

const ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] as string);
}

/**
 * Headers of every page. Framing is refused twice (old and new browsers: clickjacking a consent
 * button is the attack). No form-action directive on purpose: browsers apply it to the redirect
 * that follows a form POST, and ours goes to the client's redirect URI. Referrer only to this
 * origin: the page's URL carries state and the PKCE challenge; and not "no-referrer", which makes
 * browsers send `Origin: null` with the form, which the CSRF check then refuses.
 */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  pragma: 'no-cache',
  'x-frame-options': 'DENY',
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'",
  'referrer-policy': 'same-origin',
  'x-content-type-options': 'nosniff',
};

const STYLE = `body{font-family:system-ui,sans-serif;max-width:26rem;margin:3rem auto;padding:0 1rem;color:#222}
h1{font-size:1.3rem}label{display:block;margin:.8rem 0 .2rem}input[type=text],input[type=password]{width:100%;padding:.4rem;box-sizing:border-box}
button{margin:1rem .5rem 0 0;padding:.5rem 1.2rem}.error{color:#a00}.muted{color:#666;font-size:.9rem}code{word-break:break-all}`;

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body>
${body}
</body></html>
`;
}

function hiddenFields(fields: Readonly<Record<string, string>>): string {
  return Object.entries(fields)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join('\n');
}

export interface LoginPageInput {
  clientName: string;
  /** The authorization request's parameters, carried through the form unchanged. */
  request: Readonly<Record<string, string>>;
  csrf: string;
  username?: string;
  error?: string;
}

export function loginPage(p: LoginPageInput): string {
  return page(
    'Sign in to the gateway',
    `<h1>Sign in to this gateway</h1>
<p><strong>${escapeHtml(p.clientName)}</strong> asks to use your cameras.</p>
${p.error ? `<p class="error" role="alert">${escapeHtml(p.error)}</p>` : ''}
<form method="post" action="/oauth/authorize">
${hiddenFields(p.request)}
<input type="hidden" name="csrf" value="${escapeHtml(p.csrf)}">
<label for="username">Username</label>
<input type="text" id="username" name="username" autocomplete="username" required value="${escapeHtml(p.username ?? '')}">
<label for="password">Password</label>
<input type="password" id="password" name="password" autocomplete="current-password" required>
<button type="submit" name="action" value="login">Sign in</button>
</form>`,
  );
}

export interface ConsentPageInput {
  clientName: string;
  username: string;
  /** Where the answer goes (the redirect URI's origin, so the user sees who receives it). */
  destination: string;
  scopes: ReadonlyArray<{ name: string; meaning: string }>;
  request: Readonly<Record<string, string>>;
  csrf: string;
}

export function consentPage(p: ConsentPageInput): string {
  const items = p.scopes.map((s) => `<li>${escapeHtml(s.meaning)} <span class="muted">(${escapeHtml(s.name)})</span></li>`).join('\n');
  return page(
    'Allow access?',
    `<h1>Allow ${escapeHtml(p.clientName)} to use your cameras?</h1>
<p>Signed in as <strong>${escapeHtml(p.username)}</strong>. It asks to:</p>
<ul>
${items}
</ul>
<p class="muted">The answer goes to <code>${escapeHtml(p.destination)}</code>.</p>
<form method="post" action="/oauth/authorize">
${hiddenFields(p.request)}
<input type="hidden" name="csrf" value="${escapeHtml(p.csrf)}">
<button type="submit" name="action" value="allow">Allow</button>
<button type="submit" name="action" value="deny">Deny</button>
</form>`,
  );
}

export function errorPage(p: { title: string; error: string; description: string }): string {
  return page(
    p.title,
    `<h1>${escapeHtml(p.title)}</h1>
<p class="error">${escapeHtml(p.description)}</p>
<p class="muted">Error: <code>${escapeHtml(p.error)}</code>. Go back to the app and start again.</p>`,
  );
}
