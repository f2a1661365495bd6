// heatmap-layout.js - the pure half of the canvas heatmaps (heatmap.js):
// when a view draws on a canvas instead of a table, where every cell,
// label and number goes for a box width and a zoom window, which cell a
// point is in, how the zoom window moves, and the colours as packed RGBA
// of the same quantized palettes the tables use (colors.js). No DOM:
// tested in Node (tests/explorer/heatmap-layout.test.js).

import { LEVELS, diverging, level, sequential } from './colors.js';

/**
 * Up to this many tokens the token-by-token steps (scores, logits,
 * weights) are tables with a number in every cell; past it they are
 * canvases: at 17 tokens a table of 4.6em cells is wider than a 1366 px
 * screen's column, and its cells are most of a repaint's cost.
 */
export const TABLE_MAX_TOKENS = 16;

/** Whether a step of n tokens draws its n x n matrices on a canvas. */
export const usesCanvas = (n) => n > TABLE_MAX_TOKENS;

/** px of a cell at its natural size: room for "-0.4659" in 11 px monospace and a margin. */
export const CELL_MAX = 54;
/** px of the row of column labels. */
export const HEADER = 18;
/** px per character of the 11 px monospace labels and numbers, rounded up. */
export const CHAR = 6.7;
/** Characters of a label drawn; longer ones end in an ellipsis. */
export const LABEL_CHARS = 10;
/** The fewest tokens a side of the zoom window shows. */
export const MIN_WINDOW = 4;
/** Smallest font (px) a number is written in; a smaller cell shows its colour only. */
export const MIN_FONT = 9;

/** A label cut to LABEL_CHARS (or `chars`) characters, with an ellipsis when cut. */
export function shortLabel(text, chars = LABEL_CHARS) {
  const list = [...text];
  return list.length > chars ? `${list.slice(0, Math.max(1, chars - 1)).join('')}…` : text;
}

/** px of the row-label column for these labels. */
export function labelWidth(labels) {
  let longest = 3;
  for (const t of labels) longest = Math.max(longest, Math.min(LABEL_CHARS, [...t].length));
  return Math.ceil(longest * CHAR + 10);
}

/** The whole matrix as a zoom window: { r0, c0, size } (size tokens a side, square). */
export const fullWindow = (n) => ({ r0: 0, c0: 0, size: n });

/**
 * Where everything goes in a box `width` px wide for an `rows` x `cols`
 * matrix seen through `win` (rows r0..r0+size, cols c0..c0+size, clipped to
 * the matrix): square cells of `cell` px, no larger than CELL_MAX, the plot
 * starting at (left, top); `font` is the numbers' size (0: no numbers, the
 * cell is too small to read one of `chars` characters).
 * @returns {{ left: number, top: number, cell: number, r0: number, r1: number, c0: number, c1: number,
 *   width: number, height: number, font: number, rowStride: number, colStride: number }}
 */
export function layoutHeatmap({ rows, cols, width, labels = 40, win = null, chars = 7 }) {
  const w = win ?? fullWindow(Math.max(rows, cols));
  const r0 = Math.max(0, Math.min(rows - 1, w.r0)), c0 = Math.max(0, Math.min(cols - 1, w.c0));
  const r1 = Math.min(rows, r0 + w.size), c1 = Math.min(cols, c0 + w.size);
  const across = Math.max(c1 - c0, 1), down = Math.max(r1 - r0, 1);
  const room = Math.max(1, width - labels);
  const cell = Math.min(CELL_MAX, room / across);
  const plotW = cell * across, plotH = cell * down;
  // The font that fits `chars` characters and a little padding in a cell.
  const fit = Math.min(11, (cell - 4) / (chars * 0.61), cell - 4);
  const font = fit >= MIN_FONT ? Math.floor(fit) : 0;
  // Labels too big for a cell name every k-th row or column instead of overlapping.
  const rowStride = Math.max(1, Math.ceil(13 / cell));
  const colStride = Math.max(1, Math.ceil((Math.min(LABEL_CHARS, 4) * CHAR + 4) / cell));
  return { left: labels, top: HEADER, cell, r0, r1, c0, c1, width: Math.ceil(labels + plotW), height: Math.ceil(HEADER + plotH), font, rowStride, colStride };
}

/**
 * What a point (x, y in css px from the canvas's corner) is over: a cell
 * { i, j }, a row label { i, j: -1 }, or null (a column label, outside).
 */
export function hitTest(L, x, y) {
  if (y < L.top || x < 0) return null;
  const i = L.r0 + Math.floor((y - L.top) / L.cell);
  if (i >= L.r1) return null;
  if (x < L.left) return { i, j: -1 };
  const j = L.c0 + Math.floor((x - L.left) / L.cell);
  return j < L.c1 ? { i, j } : null;
}

/** The css-px box of cell (i, j) (j = -1: its row label), or null when outside the window. */
export function cellBox(L, i, j) {
  if (i < L.r0 || i >= L.r1 || (j >= 0 && (j < L.c0 || j >= L.c1))) return null;
  const y = L.top + (i - L.r0) * L.cell;
  if (j < 0) return { x: 0, y, w: L.left, h: L.cell };
  return { x: L.left + (j - L.c0) * L.cell, y, w: L.cell, h: L.cell };
}

/**
 * The zoom window `factor` times closer (2: half as many tokens a side;
 * 0.5: twice as many) around the cell (ai, aj), which stays where it is on
 * screen; within MIN_WINDOW .. n tokens and inside the matrix.
 */
export function zoomWindow(win, factor, n, ai = win.r0 + win.size / 2, aj = win.c0 + win.size / 2) {
  const size = Math.max(Math.min(MIN_WINDOW, n), Math.min(n, Math.round(win.size / factor)));
  const fi = (ai - win.r0) / win.size, fj = (aj - win.c0) / win.size;
  return clampWindow({ r0: Math.round(ai - fi * size), c0: Math.round(aj - fj * size), size }, n);
}

/** The window moved by (di, dj) tokens, inside the matrix. */
export const panWindow = (win, di, dj, n) => clampWindow({ r0: win.r0 + di, c0: win.c0 + dj, size: win.size }, n);

/** The window moved the least that brings cell (i, j) inside it (j = -1: the row only). */
export function followCell(win, i, j, n) {
  let { r0, c0 } = win;
  if (i < r0) r0 = i;
  else if (i >= r0 + win.size) r0 = i - win.size + 1;
  if (j >= 0 && j < c0) c0 = j;
  else if (j >= c0 + win.size) c0 = j - win.size + 1;
  return clampWindow({ r0, c0, size: win.size }, n);
}

function clampWindow({ r0, c0, size }, n) {
  const s = Math.max(1, Math.min(n, size));
  return { r0: Math.max(0, Math.min(n - s, r0)), c0: Math.max(0, Math.min(n - s, c0)), size: s };
}

const pack = ([r, g, b], a = 255) => ((a << 24) | (b << 16) | (g << 8) | r) >>> 0;

/**
 * The palette of a kind ('seq' or 'div') in a theme as packed RGBA words
 * (little-endian: what a Uint32Array view of ImageData holds), one per
 * level of colors.js, and `nan` for NaN: the tables' colours exactly.
 */
export function paletteWords(kind, theme) {
  const count = kind === 'seq' ? LEVELS + 1 : 2 * LEVELS + 1;
  const words = new Uint32Array(count);
  const rgb = new Array(count);
  for (let l = 0; l < count; l++) {
    rgb[l] = kind === 'seq' ? sequential(l / LEVELS, theme) : diverging(l / LEVELS - 1, theme);
    words[l] = pack(rgb[l]);
  }
  return { words, rgb, nan: pack(sequential(NaN, theme)), nanRgb: sequential(NaN, theme) };
}

/**
 * The colour (packed) a blocked pair gets: between the masked hatch's two
 * stripes, nearer the pale one, so a causal half-square stays quiet.
 */
export const blockedWord = (theme) => pack(theme === 'dark' ? [36, 41, 48] : [222, 227, 232]);

/**
 * Fills `out` (Uint32Array of rows * cols pixels, one per cell) with the
 * colour of every cell: `kind` 'seq' for weights in [0, 1], 'div' for
 * values divided by `scale` (the largest magnitude); a pair for which
 * `blocked(i, j)` is true gets `blockedColour`. Returns `out`.
 */
export function fillCells(out, data, rows, cols, kind, scale, palette, blocked = null, blockedColour = 0) {
  const { words, nan } = palette;
  const inv = kind === 'seq' ? 1 : 1 / scale;
  for (let i = 0; i < rows; i++) {
    for (let j = 0, k = i * cols; j < cols; j++, k++) {
      if (blocked && blocked(i, j)) {
        out[k] = blockedColour;
        continue;
      }
      const l = level(data[k] * inv, kind);
      out[k] = l < 0 ? nan : words[l];
    }
  }
  return out;
}

/** The level index of a value for its palette, as fillCells picks it (-1: NaN). */
export const levelOf = (v, kind, scale) => level(kind === 'seq' ? v : v / scale, kind);

/** px a side of a thumbnail's picture at most: a thumbnail is drawn smaller than this in every layout. */
export const THUMB_MAX = 64;

/**
 * A pattern of n x n weights as a picture of at most THUMB_MAX pixels a
 * side: each pixel's alpha (0-255) is the largest weight of its block, so
 * a one-token-wide diagonal (a previous-token head) stays as dark at 512
 * tokens as at 8. Returns { size, alpha: Uint8ClampedArray (size * size) }.
 */
const thumbnails = new WeakMap();

/**
 * thumbnailAlpha of a Matrix of weights, kept with it: outside attention
 * computes each head's once, a layer at a time while it is checked, so
 * drawing 144 thumbnails is quick. The matrix must not change afterwards.
 */
export function thumbnailOf(m) {
  let t = thumbnails.get(m);
  if (!t) thumbnails.set(m, (t = thumbnailAlpha(m.data, m.rows)));
  return t;
}

export function thumbnailAlpha(data, n, max = THUMB_MAX) {
  const size = Math.min(n, max);
  const alpha = new Uint8ClampedArray(size * size);
  const block = new Float32Array(size * size);
  // The block column of every column, once: a division per weight is most of the cost.
  const col = new Int32Array(n);
  for (let j = 0; j < n; j++) col[j] = Math.floor((j * size) / n);
  for (let i = 0; i < n; i++) {
    const row = Math.floor((i * size) / n) * size;
    for (let j = 0, k = i * n; j < n; j++, k++) {
      const p = row + col[j];
      const w = data[k];
      if (w > block[p]) block[p] = w;
    }
  }
  for (let p = 0; p < block.length; p++) alpha[p] = Math.round(255 * Math.min(1, block[p]));
  return { size, alpha };
}
