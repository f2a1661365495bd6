// snapshot.js - the explorer's view as a flat list of shapes, written out as
// SVG text or painted on a 2D canvas (PNG). Pure: no DOM here; the canvas
// context is passed in. Used by "Save SVG" and "Save PNG".

import { css, diverging, maxAbs, sequential, textOn } from './colors.js';
import { fixed } from './format.js';

const CELL_W = 64;
const CELL_H = 24;
const LABEL_W = 72;
const GAP = 28;
const FONT = '12px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace';

/**
 * Lays out titled heatmap tables side by side in rows.
 * @param {{ title: string, tables: { title: string, matrix, rows: string[], cols: string[], digits: number, kind: 'seq'|'div' }[] }} view
 */
export function layout(view) {
  const shapes = [{ type: 'text', x: 12, y: 24, text: view.title, bold: true, size: 16 }];
  let x = 12;
  let y = 48;
  let rowHeight = 0;
  const maxWidth = 1400;
  for (const t of view.tables) {
    const w = LABEL_W + t.matrix.cols * CELL_W;
    const h = 22 + CELL_H * (t.matrix.rows + 1);
    if (x > 12 && x + w > maxWidth) {
      x = 12;
      y += rowHeight + GAP;
      rowHeight = 0;
    }
    shapes.push({ type: 'text', x, y: y + 14, text: t.title, bold: true, size: 13 });
    t.cols.forEach((c, j) => shapes.push({ type: 'text', x: x + LABEL_W + j * CELL_W + CELL_W / 2, y: y + 22 + 16, text: c, anchor: 'middle' }));
    const scale = t.kind === 'seq' ? 1 : maxAbs(t.matrix.data);
    for (let i = 0; i < t.matrix.rows; i++) {
      const cy = y + 22 + CELL_H * (i + 1);
      shapes.push({ type: 'text', x, y: cy + 16, text: t.rows[i] });
      for (let j = 0; j < t.matrix.cols; j++) {
        const v = t.matrix.data[i * t.matrix.cols + j];
        const rgb = t.kind === 'seq' ? sequential(v) : diverging(v / scale);
        const cx = x + LABEL_W + j * CELL_W;
        shapes.push({ type: 'rect', x: cx, y: cy, w: CELL_W - 2, h: CELL_H - 2, fill: css(rgb) });
        shapes.push({ type: 'text', x: cx + CELL_W / 2 - 1, y: cy + 16, text: fixed(v, t.digits), anchor: 'middle', fill: textOn(rgb) });
      }
    }
    x += w + GAP;
    rowHeight = Math.max(rowHeight, h);
  }
  const width = Math.max(...shapes.map((s) => (s.type === 'rect' ? s.x + s.w : s.x + 80))) + 12;
  const height = y + rowHeight + 12;
  return { width, height, shapes };
}

const escapeXML = (s) => String(s).replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The laid-out view as a standalone SVG document. */
export function toSVG({ width, height, shapes }) {
  const out = [`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="ui-monospace, Menlo, Consolas, monospace" font-size="12">`,
    `<rect width="100%" height="100%" fill="#fff"/>`];
  for (const s of shapes) {
    if (s.type === 'rect') out.push(`<rect x="${s.x}" y="${s.y}" width="${s.w}" height="${s.h}" fill="${s.fill}"/>`);
    else {
      out.push(`<text x="${s.x}" y="${s.y}"${s.anchor ? ` text-anchor="${s.anchor}"` : ''}${s.bold ? ' font-weight="bold"' : ''}${s.size ? ` font-size="${s.size}"` : ''} fill="${s.fill ?? '#000'}">${escapeXML(s.text)}</text>`);
    }
  }
  out.push('</svg>');
  return out.join('\n');
}

/** Paints the laid-out view on a CanvasRenderingContext2D of the given size. */
export function paint(ctx, { width, height, shapes }) {
  ctx.fillStyle = '#fff';
  ctx.fillRect(0, 0, width, height);
  for (const s of shapes) {
    if (s.type === 'rect') {
      ctx.fillStyle = s.fill;
      ctx.fillRect(s.x, s.y, s.w, s.h);
    } else {
      ctx.font = `${s.bold ? 'bold ' : ''}${s.size ? `${s.size}px ui-monospace, Menlo, Consolas, monospace` : FONT}`;
      ctx.textAlign = s.anchor === 'middle' ? 'center' : 'left';
      ctx.fillStyle = s.fill ?? '#000';
      ctx.fillText(s.text, s.x, s.y);
    }
  }
}
