import { render } from 'preact';
import { Api } from './api.js';
import { App } from './app.js';
import { Session, type AuthState } from './auth.js';
import { EventHub } from './events.js';
import { onLinkClick } from './router.js';
import './style.css';

// Wires the parts once: the session (tokens), the API client and the event hub are made here and
// handed down; the components keep their own state and nothing else is shared.

const root = document.getElementById('app');
if (root) {
  const listeners = { auth: (_state: AuthState) => {}, reachable: (_ok: boolean) => {} };
  const session = new Session({
    storage: sessionStorage,
    fetch: (input, init) => fetch(input, init),
    origin: location.origin,
    navigate: (url) => location.assign(url),
    onChange: (state) => listeners.auth(state),
    onReachable: (ok) => listeners.reachable(ok),
  });
  const api = new Api({ session, fetch: (input, init) => fetch(input, init), onReachable: (ok) => listeners.reachable(ok) });
  document.addEventListener('click', onLinkClick);
  // Started before the first render, not from an effect (those run after a frame is painted): back
  // from the sign-in page, the code exchange is the first thing the page does.
  const started = session.start({ pathname: location.pathname, search: location.search });
  render(<App session={session} started={started} api={api} hub={new EventHub()} listeners={listeners} />, root);
}
