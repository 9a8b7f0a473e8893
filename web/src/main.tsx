import { Api } from './api.js';
import { Session, type AuthState } from './auth.js';
import { Hub } from './hub.js';
import { registerServiceWorker } from './push-client.js';
import './style.css';

// The entry: what the first screen waits for starts here, in a small script, and the app itself
// (Preact, the screens) comes as a second file that index.html preloads beside this one. Back from
// the sign-in page, the code exchange and then the device list leave while that file is still
// being parsed and run, instead of after it (measured in `npm run bench -- web`, docs/web-app.md).
// The session and the API client are made once here and handed down, with what they tell as it
// happens (sign-in state, reachability) for the app to subscribe to.

const root = document.getElementById('app');
if (root) {
  const authChanges = new Hub<AuthState>();
  const reachability = new Hub<boolean>();
  const session = new Session({
    storage: sessionStorage,
    fetch: (input, init) => fetch(input, init),
    origin: location.origin,
    navigate: (url) => location.assign(url),
    onChange: (state) => authChanges.emit(state),
    onReachable: (ok) => reachability.emit(ok),
  });
  const api = new Api({
    session,
    fetch: (input, init) => fetch(input, init),
    onReachable: (ok) => reachability.emit(ok),
  });
  const started = session.start({ pathname: location.pathname, search: location.search });
  started
    .then(({ state }) => {
      if (state.kind === 'signed-in') api.prefetchFirstScreen();
    })
    .catch(() => undefined);
  import('./mount.js')
    .then(({ mount }) =>
      mount(root, { session, started, api, authChanges: authChanges.on, reachability: reachability.on }),
    )
    .catch(() => {
      // The app's own file did not arrive (the gateway restarted with a new build, or went away).
      const message = document.createElement('p');
      message.className = 'boot';
      message.setAttribute('role', 'alert');
      message.textContent = 'The app could not be loaded. Reload the page to try again.';
      root.replaceChildren(message);
    });
}
// Offline opening and notifications (docs/web-app.md); the app works the same without it.
registerServiceWorker();
