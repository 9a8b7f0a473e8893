import { render } from 'preact';
import type { Api } from './api.js';
import { App, type AppProps } from './app.js';
import type { Session } from './auth.js';
import { EventHub } from './events.js';
import { onLinkClick } from './router.js';

/** Draws the app into `root` with what main.tsx started; links inside it go through the router. */
export function mount(root: HTMLElement, parts: { session: Session; started: AppProps['started']; api: Api; listeners: AppProps['listeners'] }): void {
  document.addEventListener('click', onLinkClick);
  render(<App session={parts.session} started={parts.started} api={parts.api} hub={new EventHub()} listeners={parts.listeners} />, root);
}
