// Draws the web app's icons (web/public/icons/*.png): a camera lens on the app's accent colour,
// in the colours of web/src/style.css. Run by hand when the design changes; the PNGs are committed
// and copied as they are by scripts/build-web.mjs, so the build needs neither this script nor an
// image tool. Plain Node (zlib for the PNG's deflate and CRC), shapes sampled 4 × 4 per pixel for
// smooth edges.
//   node scripts/make-icons.mjs
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { crc32, deflateSync } from 'node:zlib';

const out = path.resolve(import.meta.dirname, '../web/public/icons');

// web/src/style.css: --accent, --bg, --panel, --text.
const ACCENT = [0x6c, 0xb6, 0xff, 255];
const BG = [0x11, 0x14, 0x18, 255];
const PANEL = [0x1b, 0x20, 0x27, 255];
const TEXT = [0xe8, 0xec, 0xf1, 255];
const WHITE = [255, 255, 255, 255];
const PUPIL = [0x0b, 0x0d, 0x10, 255];

// Shapes in a unit square (0..1 both ways, centre 0.5), drawn in order: the first that covers a
// point gives its colour.
const disc = (cx, cy, r, color) => ({ covers: (x, y) => (x - cx) ** 2 + (y - cy) ** 2 <= r * r, color });
const ring = (cx, cy, r0, r1, color) => ({
  covers: (x, y) => {
    const d = (x - cx) ** 2 + (y - cy) ** 2;
    return d >= r0 * r0 && d <= r1 * r1;
  },
  color,
});
const roundedSquare = (radius, color) => ({
  covers: (x, y) => {
    const dx = Math.max(radius - x, x - (1 - radius), 0);
    const dy = Math.max(radius - y, y - (1 - radius), 0);
    return dx * dx + dy * dy <= radius * radius;
  },
  color,
});
const full = (color) => ({ covers: () => true, color });

/** The lens, `r` its outer radius: a dark barrel, an accent rim, dark glass, a pupil and two glints. */
function lens(r) {
  return [
    disc(0.5 - r * 0.3, 0.5 - r * 0.3, r * 0.12, TEXT),
    disc(0.5 + r * 0.22, 0.5 + r * 0.22, r * 0.05, TEXT),
    disc(0.5, 0.5, r * 0.3, PUPIL),
    disc(0.5, 0.5, r * 0.62, PANEL),
    ring(0.5, 0.5, r * 0.62, r * 0.74, ACCENT),
    disc(0.5, 0.5, r, BG),
  ];
}

const ICONS = [
  // "any": a rounded tile, its corners transparent (tab icons, desktop installs).
  { name: 'icon-192.png', size: 192, shapes: [...lens(0.36), roundedSquare(0.2, ACCENT)] },
  { name: 'icon-512.png', size: 512, shapes: [...lens(0.36), roundedSquare(0.2, ACCENT)] },
  // "maskable": full bleed, the lens inside the safe circle (radius 0.4) that every mask keeps.
  { name: 'icon-maskable-192.png', size: 192, shapes: [...lens(0.3), full(ACCENT)] },
  { name: 'icon-maskable-512.png', size: 512, shapes: [...lens(0.3), full(ACCENT)] },
  // iOS rounds the corners itself and shows transparency as black.
  { name: 'apple-touch-icon.png', size: 180, shapes: [...lens(0.34), full(ACCENT)] },
  // A notification's badge: Android keeps only its alpha, so a white lens on nothing.
  {
    name: 'badge-96.png',
    size: 96,
    shapes: [disc(0.5, 0.5, 0.14, WHITE), ring(0.5, 0.5, 0.27, 0.44, WHITE)],
  },
];

const SAMPLES = 4;

function draw(size, shapes) {
  const rgba = Buffer.alloc(size * size * 4);
  for (let py = 0; py < size; py++) {
    for (let px = 0; px < size; px++) {
      // Averaged premultiplied, so a transparent sample does not darken an edge.
      const sum = [0, 0, 0, 0];
      for (let sy = 0; sy < SAMPLES; sy++) {
        for (let sx = 0; sx < SAMPLES; sx++) {
          const x = (px + (sx + 0.5) / SAMPLES) / size;
          const y = (py + (sy + 0.5) / SAMPLES) / size;
          const shape = shapes.find((s) => s.covers(x, y));
          if (!shape) continue;
          const a = shape.color[3] / 255;
          sum[0] += shape.color[0] * a;
          sum[1] += shape.color[1] * a;
          sum[2] += shape.color[2] * a;
          sum[3] += a;
        }
      }
      const n = SAMPLES * SAMPLES;
      const alpha = sum[3] / n;
      const i = (py * size + px) * 4;
      for (let c = 0; c < 3; c++) rgba[i + c] = alpha > 0 ? Math.round(sum[c] / n / alpha) : 0;
      rgba[i + 3] = Math.round(alpha * 255);
    }
  }
  return rgba;
}

function png(size, rgba) {
  // Each row: filter type 0 (none), then its pixels.
  const raw = Buffer.alloc(size * (size * 4 + 1));
  for (let y = 0; y < size; y++) rgba.copy(raw, y * (size * 4 + 1) + 1, y * size * 4, (y + 1) * size * 4);
  const chunk = (type, data) => {
    const head = Buffer.alloc(8);
    head.writeUInt32BE(data.length, 0);
    head.write(type, 4, 'ascii');
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
    return Buffer.concat([head, data, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(size, 0);
  ihdr.writeUInt32BE(size, 4);
  ihdr[8] = 8; // bits per channel
  ihdr[9] = 6; // RGBA
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw, { level: 9 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

mkdirSync(out, { recursive: true });
for (const icon of ICONS) {
  const file = path.join(out, icon.name);
  writeFileSync(file, png(icon.size, draw(icon.size, icon.shapes)));
  console.log(path.relative(process.cwd(), file));
}
