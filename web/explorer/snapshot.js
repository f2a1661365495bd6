// snapshot.js - the explorer's view as a flat list of shapes, written out as
// SVG text or painted on a 2D canvas (PNG). Pure: no DOM here; the canvas
// context is passed in. Used by "Save SVG" and "Save PNG". Pairs that may
// not attend are hatched (and their logits written −∞), as on the page.

import { css, diverging, maxAbs, sequential, textOn } from './colors.js';
import { fixed } from '../worked/format.js';

const CELL_W = 64;
const CELL_H = 24;
const LABEL_W = 72;
const GAP = 28;
const FONT = '12px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace';
const HATCH_BG = '#d0d7de';
const HATCH_FG = '#8c959f';
const MINUS_INFINITY = '−∞';
const TITLE_WIDTH = 1000;
const TITLE_CHAR_W = 8.2; // px: a bold 13 px monospace character is about 7.8 px wide

function wrap(text, chars) {
  const lines = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && line.length + 1 + word.length > chars) {
      lines.push(line);
      line = word;
    } else {
      line = line ? `${line} ${word}` : word;
    }
  }
  if (line) lines.push(line);
  return lines;
}

/**
 * Lays out an optional lines view, then titled heatmap tables side by side
 * in rows. A table's `blocked(i, j)` (optional) says which pairs may not
 * attend: hatched, and written −∞ when the table has `minusInfinity`.
 * `lines`: { layout: linesLayout(tokens), weights: Matrix[], colors: string[], style: lineStyle } or absent.
 * @param {{ title: string, lines?: object, tables: { title: string, matrix, rows: string[], cols: string[], digits: number, kind: 'seq'|'div', blocked?: (i: number, j: number) => string, minusInfinity?: boolean }[] }} view
 */
export function layout(view) {
  // The title wraps at word boundaries to the picture's width (a 16 px
  // monospace character is about 9.7 px wide).
  const titleLines = wrap(view.title, Math.floor((TITLE_WIDTH - 24) / 9.7));
  const shapes = titleLines.map((text, k) => ({ type: 'text', x: 12, y: 24 + k * 20, text, bold: true, size: 16 }));
  let x = 12;
  let y = 28 + titleLines.length * 20;
  let rowHeight = 0;
  const maxWidth = 1400;
  if (view.lines) {
    const { layout: L, weights, colors, style } = view.lines;
    shapes.push({ type: 'text', x, y: y + 14, text: 'Who attends to whom (query → key)', bold: true, size: 13 });
    const top = y + 22;
    const n = L.left.length;
    weights.forEach((m, h) => {
      for (let i = 0; i < n; i++) {
        for (let j = 0; j < n; j++) {
          const s = style(m.data[i * n + j]);
          if (s.opacity === 0) continue;
          const p = L.line(i, j);
          shapes.push({ type: 'line', x1: x + p.x1, y1: top + p.y1, x2: x + p.x2, y2: top + p.y2, stroke: colors[h % colors.length], width: s.width, opacity: s.opacity });
        }
      }
    });
    for (const p of L.left) shapes.push({ type: 'text', x: x + p.x, y: top + p.y + 4, text: p.text, anchor: 'end' });
    for (const p of L.right) shapes.push({ type: 'text', x: x + p.x, y: top + p.y + 4, text: p.text });
    if (weights.length > 1) {
      weights.forEach((_, h) => shapes.push({ type: 'text', x: x + 4 + h * 64, y: top + L.height + 12, text: `head ${h + 1}`, fill: colors[h % colors.length], bold: true }));
    }
    x += L.width + GAP;
    rowHeight = L.height + 22 + (weights.length > 1 ? 20 : 0);
  }
  for (const t of view.tables) {
    // A title longer than its table widens the table's place, so two titles never run together.
    const w = Math.max(LABEL_W + t.matrix.cols * CELL_W, Math.ceil(t.title.length * TITLE_CHAR_W));
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
        const cx = x + LABEL_W + j * CELL_W;
        if (t.blocked?.(i, j)) {
          shapes.push({ type: 'rect', x: cx, y: cy, w: CELL_W - 2, h: CELL_H - 2, fill: HATCH_BG, hatch: true });
          shapes.push({ type: 'text', x: cx + CELL_W / 2 - 1, y: cy + 16, text: t.minusInfinity ? MINUS_INFINITY : fixed(v, t.digits), anchor: 'middle', fill: '#000' });
          continue;
        }
        const rgb = t.kind === 'seq' ? sequential(v) : diverging(v / scale);
        shapes.push({ type: 'rect', x: cx, y: cy, w: CELL_W - 2, h: CELL_H - 2, fill: css(rgb) });
        shapes.push({ type: 'text', x: cx + CELL_W / 2 - 1, y: cy + 16, text: fixed(v, t.digits), anchor: 'middle', fill: textOn(rgb) });
      }
    }
    x += w + GAP;
    rowHeight = Math.max(rowHeight, h);
  }
  const right = (s) => (s.type === 'rect' ? s.x + s.w : s.type === 'line' ? Math.max(s.x1, s.x2) : s.x + 80);
  const width = Math.max(...shapes.slice(titleLines.length).map(right), Math.min(TITLE_WIDTH, 24 + view.title.length * 9.7)) + 12;
  const height = y + rowHeight + 12;
  return { width, height, shapes };
}

const escapeXML = (s) => String(s).replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The laid-out view as a standalone SVG document. */
export function toSVG({ width, height, shapes }) {
  const out = [`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="ui-monospace, Menlo, Consolas, monospace" font-size="12">`,
    `<defs><pattern id="hatch" patternUnits="userSpaceOnUse" width="6" height="6" patternTransform="rotate(45)"><rect width="6" height="6" fill="${HATCH_BG}"/><line x1="1.5" y1="0" x2="1.5" y2="6" stroke="${HATCH_FG}" stroke-width="3"/></pattern></defs>`,
    `<rect width="100%" height="100%" fill="#fff"/>`];
  for (const s of shapes) {
    if (s.type === 'rect') out.push(`<rect x="${s.x}" y="${s.y}" width="${s.w}" height="${s.h}" fill="${s.hatch ? 'url(#hatch)' : s.fill}"${s.hatch ? ' class="blocked"' : ''}/>`);
    else if (s.type === 'line') out.push(`<line x1="${s.x1}" y1="${s.y1}" x2="${s.x2}" y2="${s.y2}" stroke="${s.stroke}" stroke-width="${s.width.toFixed(2)}" stroke-opacity="${s.opacity.toFixed(2)}"/>`);
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
      if (s.hatch) hatch(ctx, s);
    } else if (s.type === 'line') {
      ctx.save();
      ctx.globalAlpha = s.opacity;
      ctx.strokeStyle = s.stroke;
      ctx.lineWidth = s.width;
      ctx.beginPath();
      ctx.moveTo(s.x1, s.y1);
      ctx.lineTo(s.x2, s.y2);
      ctx.stroke();
      ctx.restore();
    } else {
      ctx.font = `${s.bold ? 'bold ' : ''}${s.size ? `${s.size}px ui-monospace, Menlo, Consolas, monospace` : FONT}`;
      // The SVG's text-anchor: start, middle or end.
      ctx.textAlign = s.anchor === 'middle' ? 'center' : s.anchor === 'end' ? 'right' : 'left';
      ctx.fillStyle = s.fill ?? '#000';
      ctx.fillText(s.text, s.x, s.y);
    }
  }
}

// Diagonal stripes inside a rectangle, as the SVG pattern draws them.
function hatch(ctx, { x, y, w, h }) {
  ctx.save();
  ctx.beginPath();
  ctx.rect(x, y, w, h);
  ctx.clip();
  ctx.strokeStyle = HATCH_FG;
  ctx.lineWidth = 3;
  ctx.beginPath();
  for (let d = -h; d < w; d += 6 * Math.SQRT2) {
    ctx.moveTo(x + d, y + h);
    ctx.lineTo(x + d + h, y);
  }
  ctx.stroke();
  ctx.restore();
}
