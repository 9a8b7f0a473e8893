import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { NOTIFICATION_BADGE, NOTIFICATION_ICON } from '../../web/src/push.js';

// The web app manifest and its icons as committed (web/public, drawn by scripts/make-icons.mjs):
// the colours are the app's own (web/src/style.css, the theme-color of web/index.html), every
// file named exists, and each PNG is of the size it is declared at. Chromium's own reading of the
// manifest is test/web/pwa-browser.test.ts's.

const web = path.resolve(import.meta.dirname, '../../web');
const manifest = JSON.parse(readFileSync(path.join(web, 'public/manifest.webmanifest'), 'utf8')) as {
  name: string;
  short_name: string;
  theme_color: string;
  background_color: string;
  icons: Array<{ src: string; sizes: string; type: string; purpose: string }>;
};
const css = readFileSync(path.join(web, 'src/style.css'), 'utf8');
const html = readFileSync(path.join(web, 'index.html'), 'utf8');

/** A file of web/public by the path the app serves it at. */
const publicFile = (src: string) => path.join(web, 'public', src);

/** Width × height of a PNG, from its IHDR chunk; throws on anything that is not a PNG. */
function pngSize(file: string): string {
  const bytes = readFileSync(file);
  if (bytes.subarray(0, 8).toString('hex') !== '89504e470d0a1a0a' || bytes.subarray(12, 16).toString() !== 'IHDR')
    throw new Error(`${file} is not a PNG`);
  return `${bytes.readUInt32BE(16)}x${bytes.readUInt32BE(20)}`;
}

describe('the web app manifest', () => {
  it("is in the app's colours, as index.html's theme-color", () => {
    const bg = /--bg:\s*(#[0-9a-f]{6});/i.exec(css)?.[1];
    expect(bg).toBeDefined();
    expect(manifest.theme_color).toBe(bg);
    expect(manifest.background_color).toBe(bg);
    expect(html).toContain(`<meta name="theme-color" content="${bg}">`);
  });

  it('names icons that exist, of the sizes it says, at 192 and 512 px, plain and maskable', () => {
    for (const icon of manifest.icons) {
      expect(icon.type, icon.src).toBe('image/png');
      expect(pngSize(publicFile(icon.src)), icon.src).toBe(icon.sizes);
    }
    expect(manifest.icons.map((i) => `${i.sizes} ${i.purpose}`).sort()).toEqual([
      '192x192 any',
      '192x192 maskable',
      '512x512 any',
      '512x512 maskable',
    ]);
  });

  it('is linked from index.html, with the apple-touch-icon and the icons notifications use', () => {
    expect(html).toContain('<link rel="manifest" href="/manifest.webmanifest">');
    const touch = /<link rel="apple-touch-icon" href="([^"]+)">/.exec(html)?.[1] as string;
    expect(pngSize(publicFile(touch))).toBe('180x180');
    expect(pngSize(publicFile(NOTIFICATION_ICON))).toBe('192x192');
    expect(pngSize(publicFile(NOTIFICATION_BADGE))).toBe('96x96');
  });
});
