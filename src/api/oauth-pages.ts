import { createHash } from 'node:crypto';

// The local authorization server's pages: login, consent and error, as plain server-rendered
// HTML with no script. Everything that came from a request or the database is escaped here; the
// routes pass raw values.

const ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] as string);
}

// One style sheet for every page, in a <style> block the CSP names by its hash: no script, no
// inline style attributes, nothing loaded from elsewhere. Light or dark as the system prefers;
// one column that fits a 360 px phone; inputs 16 px and up (phones zoom into smaller ones) and
// 44 px tall (touch targets); a visible focus ring for keyboard users.
const STYLE = `:root{color-scheme:light dark;--bg:#f3f4f6;--card:#fff;--text:#1f2328;--muted:#59636e;--line:#d1d9e0;--accent:#0b5cad;--accent-text:#fff;--error:#b42318;--error-bg:#fdecea}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--card:#161b22;--text:#e6edf3;--muted:#9198a1;--line:#3d444d;--accent:#4493f8;--accent-text:#0d1117;--error:#ff8182;--error-bg:#3c1618}}
*{box-sizing:border-box}
html{background:var(--bg)}
body{margin:0;min-height:100vh;display:flex;align-items:flex-start;justify-content:center;padding:max(1rem,8vh) 1rem 2rem;font:1rem/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--text);background:var(--bg)}
main{width:100%;max-width:26rem;background:var(--card);border:1px solid var(--line);border-radius:12px;padding:1.5rem 1.25rem}
.brand{margin:0 0 1rem;font-size:.85rem;font-weight:600;letter-spacing:.06em;text-transform:uppercase;color:var(--muted)}
h1{margin:0 0 .5rem;font-size:1.5rem;line-height:1.25}
p{margin:.5rem 0}
label{display:block;margin:1rem 0 .3rem;font-weight:600}
input[type=text],input[type=password]{display:block;width:100%;min-height:2.75rem;padding:.5rem .75rem;font:inherit;font-size:max(1rem,16px);color:var(--text);background:var(--bg);border:1px solid var(--line);border-radius:8px}
button{min-height:2.75rem;padding:.5rem 1.25rem;font:inherit;font-weight:600;border-radius:8px;border:1px solid var(--accent);background:var(--accent);color:var(--accent-text);cursor:pointer}
button.secondary{background:transparent;color:var(--text);border-color:var(--line)}
.actions{display:flex;flex-wrap:wrap;gap:.75rem;margin-top:1.5rem}
.actions button{flex:1 1 8rem}
:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
.error{margin:1rem 0 0;padding:.6rem .75rem;border-radius:8px;color:var(--error);background:var(--error-bg)}
.muted{color:var(--muted);font-size:.9rem}
ul{padding-left:1.25rem}li{margin:.3rem 0}
code{word-break:break-all}
@media (min-width:40rem){main{padding:2rem 2.25rem}}`;

/** CSP source of the style block above (CSP Level 2 hash source). */
const STYLE_HASH = `'sha256-${createHash('sha256').update(STYLE, 'utf8').digest('base64')}'`;

/**
 * Headers of every page. Framing is refused twice (old and new browsers: clickjacking a consent
 * button is the attack). No form-action directive on purpose: browsers apply it to the redirect
 * that follows a form POST, and ours goes to the client's redirect URI. Referrer only to this
 * origin: the page's URL carries state and the PKCE challenge; and not "no-referrer", which makes
 * browsers send `Origin: null` with the form, which the CSRF check then refuses.
 * Origin-Agent-Cluster as the web app sends it (helmet): when the two differ, chromium gives the
 * app's document a new renderer process on the way back from signing in (measured: 150–300 ms
 * more before the app's first request, docs/web-app.md). No Cross-Origin-Opener-Policy: a client
 * of another origin may open this page in a popup and must keep its window.opener.
 */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  pragma: 'no-cache',
  'x-frame-options': 'DENY',
  'content-security-policy': `default-src 'none'; style-src ${STYLE_HASH}; frame-ancestors 'none'; base-uri 'none'`,
  'referrer-policy': 'same-origin',
  'x-content-type-options': 'nosniff',
  'origin-agent-cluster': '?1',
};

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body>
<main>
<p class="brand">edge-gateway</p>
${body}
</main>
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
  /** The gateway's own web app: a plain sign-in, no app asking for anything. */
  firstParty?: boolean;
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
${p.firstParty ? '<p class="muted">With your gateway account, to see your cameras.</p>' : `<p><strong>${escapeHtml(p.clientName)}</strong> asks to use your cameras.</p>`}
${p.error ? `<p class="error" role="alert">${escapeHtml(p.error)}</p>` : ''}
<form method="post" action="/oauth/authorize">
${hiddenFields(p.request)}
<input type="hidden" name="csrf" value="${escapeHtml(p.csrf)}">
<label for="username">Username</label>
<input type="text" id="username" name="username" autocomplete="username" autocapitalize="none" spellcheck="false" required value="${escapeHtml(p.username ?? '')}"${p.username ? '' : ' autofocus'}>
<label for="password">Password</label>
<input type="password" id="password" name="password" autocomplete="current-password" required${p.username ? ' autofocus' : ''}>
<div class="actions"><button type="submit" name="action" value="login">Sign in</button></div>
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
  const items = p.scopes
    .map((s) => `<li>${escapeHtml(s.meaning)} <span class="muted">(${escapeHtml(s.name)})</span></li>`)
    .join('\n');
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
<div class="actions"><button type="submit" name="action" value="allow">Allow</button>
<button type="submit" name="action" value="deny" class="secondary">Deny</button></div>
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
