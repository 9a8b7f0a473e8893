import { render } from 'preact';
import { App, type AppProps } from './app.js';
import { EventHub } from './events.js';
import { onLinkClick } from './router.js';

/** Draws the app into `root` with what main.tsx started; links inside it go through the router. */
export function mount(root: HTMLElement, parts: Omit<AppProps, 'hub'>): void {
  document.addEventListener('click', onLinkClick);
  render(<App {...parts} hub={new EventHub()} />, root);
}
