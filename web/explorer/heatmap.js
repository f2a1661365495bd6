// heatmap.js - a token-by-token step (scores, logits, weights) drawn on a
// canvas when a table of it would be too big (heatmap-layout.js decides
// where: past TABLE_MAX_TOKENS). Colours always, from the tables' palettes;
// a number only where a cell is big enough to read it; zoom to a region
// (buttons, + and − keys, Ctrl+wheel or pinch, drag to pan). It stands in
// for a table in StepsView: the same entry fields (id, rows, cols, kind,
// step, table), one keyboard cell in a virtual ARIA grid (arrow keys move it
// as they move a table's focus, each move announced), the cells a number
// comes from outlined, a story's cells lit. The canvas is sized for the
// device's pixels (devicePixelRatio) and its backing store exists only
// while it is on screen. Labels and numbers are drawn, never markup.

import { textOn } from './colors.js';
import { el } from './dom.js';
import { fixed } from '../worked/format.js';
import { CELL_MAX, blockedWord, cellBox, fillCells, followCell, fullWindow, hitTest, labelWidth, layoutHeatmap, levelOf, paletteWords, panWindow, shortLabel, zoomWindow } from './heatmap-layout.js';
import { MINUS_INFINITY, cellLabel } from './tables.js';
import { maxAbs } from './colors.js';

const ZOOM_STEP = 2; // each zoom halves or doubles the tokens a side
const DRAG_PX = 4; // a pointer moved this far is a pan, not a click

/** The heatmap's rules, added to the element's stylesheet. */
export const HEATMAP_STYLES = `
/* Hundreds of rows in the n x d tables are most of a long text's layout: off screen, a section waits. */
.view.long > section.step { content-visibility: auto; contain-intrinsic-size: auto 1400px; }
figure.heatmap { width: 100%; max-width: var(--heat-max); }
.matrices.heat, .attention-row > .matrices.heat { flex: 3 1 22em; min-width: 0; }
.matrices.heat > figure.heatmap { flex: 1 1 100%; }
.heat-box { position: relative; touch-action: pan-x pan-y; }
.heat-sizer { height: 0; }
.heat-box canvas { display: block; cursor: pointer; }
.view.masking .heat-box canvas[data-id^="weights-"] { cursor: crosshair; }
.heat-box.zoomed canvas { cursor: grab; }
.heat-cursor, .heat-mark { position: absolute; pointer-events: none; }
.heat-cursor:focus { outline: none; }
.heat-cursor:focus-visible { outline: 3px solid var(--attn-focus); outline-offset: -3px; box-shadow: inset 0 0 0 5px var(--attn-bg); }
.heat-mark.src { box-shadow: inset 0 0 0 2px var(--attn-source); }
.heat-mark.target { box-shadow: inset 0 0 0 3px var(--attn-source), 0 0 0 1px var(--attn-bg); }
.zoom { display: inline-flex; gap: 2px; align-items: baseline; }
.zoom button { padding: 0 7px; min-width: 2em; }
.zoom .where { color: var(--attn-muted); font-size: 0.85em; font-variant-numeric: tabular-nums; margin-left: 4px; }
`;

// The colours a draw needs, read from the figure's custom properties (styles.js).
function themeOf(node) {
  const s = getComputedStyle(node);
  const get = (name, fallback) => s.getPropertyValue(name).trim() || fallback;
  return { theme: get('--attn-heat', 'light') === 'dark' ? 'dark' : 'light', fg: s.color, select: get('--attn-select', '#bf3989'), bg: get('--attn-bg', '#fff'), mono: get('--attn-mono', 'monospace') };
}

export class Heatmap {
  #canvas;
  #box;
  #sizer; // as wide as the box and no taller than nothing: its width is the canvas's room, which drawing cannot change
  #cursor;
  #row;
  #live;
  #where;
  #marks;
  #cells = null; // Uint32Array (rows * cols): each cell's colour, packed RGBA
  #source = null; // a canvas of one pixel per cell, for cells smaller than a device pixel
  #plot = null; // ImageData of the plot at device pixels
  #marked = ''; // what the marks show (#placeMarks)
  #win;
  #width = 0; // px the box gives the canvas (ResizeObserver)
  #layout = null;
  #matrix = null;
  #how = null;
  #drawn = ''; // what #cells holds
  #visible = true;
  #pending = false;
  #rects = []; // sources outlined: { rows: [a, b), cols: [a, b) }
  #target = null;
  #story = null; // { rows: Set | null, cols: Set | null }
  #resize = null;
  #seen = null; // IntersectionObserver: drawn only while on screen
  #drag = null;
  #pinch = new Map();
  #dims = [];

  /**
   * @param {{ id: string, title: string, rows: string[], cols: string[], kind: 'seq' | 'div', step: string, head?: number | null,
   *   focus?: { i: number, j: number } | null }} spec
   * @param {{ zoomed?: () => void }} [hooks]
   */
  constructor({ id, title, rows, cols, kind, step, head = null, focus = null }, hooks = {}) {
    this.id = id;
    this.rows = rows;
    this.cols = cols;
    this.kind = kind;
    this.step = step;
    this.heatmap = this;
    this.buttons = []; // row labels are focusable (column -1), as a table's buttons are
    this.hooks = hooks;
    const n = rows.length, m = cols.length;
    this.#win = fullWindow(Math.max(n, m));
    this.#dims = [labelWidth(rows), kind === 'seq' ? 6 : 7];
    const at = focus ?? { i: 0, j: 0 };
    this.#canvas = el('canvas', { 'aria-hidden': 'true', 'data-id': id });
    this.#sizer = el('div', { class: 'heat-sizer' });
    this.#cursor = el('div', { class: 'heat-cursor', role: 'gridcell', tabindex: 0, 'data-i': at.i, 'data-j': at.j });
    this.#row = el('div', { role: 'row' }, this.#cursor);
    this.#marks = el('div', { 'aria-hidden': 'true' });
    this.#box = el('div', { class: 'heat-box', part: 'table', role: 'grid', 'data-id': id, 'aria-rowcount': n + 1, 'aria-colcount': m + 1,
      'aria-label': `${title}, ${n} by ${m}; arrow keys move, plus and minus zoom` }, this.#sizer, this.#canvas, this.#row, this.#marks);
    this.table = this.#box;
    this.#live = el('p', { class: 'sr-only', 'aria-live': 'polite' });
    this.#where = el('span', { class: 'where' });
    const zoom = el('span', { class: 'zoom', role: 'group', 'aria-label': `Zoom ${title}` },
      el('button', { type: 'button', text: '−', 'aria-label': 'Zoom out', onclick: () => this.zoom(1 / ZOOM_STEP) }),
      el('button', { type: 'button', text: '+', 'aria-label': 'Zoom in', onclick: () => this.zoom(ZOOM_STEP) }),
      el('button', { type: 'button', text: 'All', 'aria-label': 'All tokens', onclick: () => this.zoom(0) }),
      this.#where);
    const copy = el('details', { class: 'copy' },
      el('summary', { text: 'Copy', 'aria-label': `Copy ${title}` }),
      ...['numpy', 'CSV', 'Markdown'].map((format) => el('button', { type: 'button', text: format, 'data-copy': format, 'data-table': id })));
    this.figure = el('figure', { class: 'matrix heatmap', 'data-id': id, 'data-head': head },
      el('figcaption', {}, el('span', { class: 'name', text: title }), el('span', { class: 'shape', text: ` (${n} × ${m})` }), zoom, copy),
      this.#box, this.#live);
    // The widest the figure needs: every cell at its natural size.
    this.figure.style.setProperty('--heat-max', `${this.#dims[0] + m * CELL_MAX + 2}px`);
    this.#place(at.i, at.j);
    this.#listen();
  }

  /** The keyboard cell, moved to (i, j) (j = -1: the row label), the zoom window following it. */
  cursorAt(i, j) {
    const next = followCell(this.#win, i, j, Math.max(this.rows.length, this.cols.length));
    if (next.r0 !== this.#win.r0 || next.c0 !== this.#win.c0) this.#setWindow(next);
    this.#place(i, j);
    return this.#cursor;
  }

  /** The keyboard cell's position, { i, j }. */
  get focus() {
    return { i: Number(this.#cursor.dataset.i), j: Number(this.#cursor.dataset.j) };
  }

  /** An element over cell (i, j) for the popover to place itself by (the target's mark). */
  cellElement(i, j) {
    const f = this.focus;
    if (f.i === i && f.j === j) return this.#cursor;
    return this.#marks.querySelector('.target') ?? this.#cursor;
  }

  /** The cell under a pointer event, { i, j } (j = -1: a row label), or null. */
  hit(e) {
    if (e.target !== this.#canvas || !this.#layout) return null;
    const r = this.#canvas.getBoundingClientRect();
    return hitTest(this.#layout, e.clientX - r.left, e.clientY - r.top);
  }

  /** Says `text` through the figure's live region (a move of the keyboard cell). */
  announce(text) {
    this.#live.textContent = text;
  }

  /** The spoken label of (i, j) for the numbers painted. */
  label(i, j, blocked = '') {
    if (j < 0) return `${this.rows[i]}: row label; Enter shows what “${this.rows[i]}” attends to`;
    if (!this.#matrix) return `row ${this.rows[i]}, column ${this.cols[j]}`;
    const v = this.#matrix.data[i * this.cols.length + j];
    const text = blocked && this.#how.minusInfinity ? MINUS_INFINITY : fixed(v, this.#how.digits);
    return cellLabel(this, i, j, text, blocked);
  }

  /**
   * New numbers (a Matrix) and how to mark them (tables.js paintTable's
   * `how`); drawn now when on screen, else when it comes on screen.
   */
  paint(matrix, how) {
    // A scale change leaves the raw scores as they are: nothing to draw.
    if (this.#matrix && this.#how?.key === how.key && sameData(this.#matrix.data, matrix.data) && !this.#pending) return;
    this.#matrix = { rows: matrix.rows, cols: matrix.cols, data: matrix.data.slice() };
    this.#how = how;
    this.#drawn = '';
    if (this.#visible) this.#draw();
    else this.#pending = true;
  }

  /** On screen or not (its IntersectionObserver's verdict): off it, the canvas gives its memory back. */
  setVisible(visible) {
    if (visible === this.#visible) return;
    this.#visible = visible;
    if (!visible) {
      this.#canvas.width = 0;
      this.#canvas.height = 0;
      this.#pending = true;
    } else if (this.#pending) {
      this.#draw();
    }
  }

  /** Outlines `rects` ({ rows: [a, b), cols: [a, b) } of this matrix) and rings `target` ({ i, j } or null). */
  highlight(rects, target = null) {
    this.#rects = rects;
    this.#target = target;
    this.#placeMarks();
  }

  /** Lights a story's cells (rows, cols: Sets or null for all) and dims the rest; null clears it. */
  setStory(story) {
    const key = (s) => (s ? `${s.rows ? [...s.rows] : '*'}|${s.cols ? [...s.cols] : '*'}` : '');
    if (key(story) === key(this.#story)) return;
    this.#story = story;
    this.#drawn = '';
    if (this.#visible && this.#matrix) this.#draw();
  }

  /**
   * Zooms `factor` times closer around (i, j) (default: the keyboard cell);
   * 0 shows every token.
   */
  zoom(factor, i = this.focus.i, j = Math.max(0, this.focus.j)) {
    const n = Math.max(this.rows.length, this.cols.length);
    this.#setWindow(factor === 0 ? fullWindow(n) : zoomWindow(this.#win, factor, n, i + 0.5, j + 0.5));
    // The keyboard cell stays inside what is shown.
    const f = this.focus, w = this.#win;
    const ci = Math.min(w.r0 + w.size - 1, Math.max(w.r0, f.i));
    const cj = f.j < 0 ? -1 : Math.min(w.c0 + w.size - 1, Math.max(w.c0, f.j));
    this.#place(ci, cj);
    this.hooks.zoomed?.();
  }

  /** The zoom window: { r0, c0, size } in tokens. */
  get window() {
    return { ...this.#win };
  }

  /** Stops following the box's width and whether it is on screen. */
  disconnect() {
    this.#resize?.disconnect();
    this.#seen?.disconnect();
  }

  #setWindow(win) {
    this.#win = win;
    const n = Math.max(this.rows.length, this.cols.length);
    this.#box.classList.toggle('zoomed', win.size < n);
    this.#where.textContent = win.size < n ? `rows ${win.r0 + 1}–${Math.min(this.rows.length, win.r0 + win.size)}, columns ${win.c0 + 1}–${Math.min(this.cols.length, win.c0 + win.size)}` : '';
    if (this.#matrix && this.#visible) this.#draw();
  }

  #listen() {
    if (typeof ResizeObserver !== 'undefined') {
      this.#resize = new ResizeObserver(([entry]) => {
        const w = Math.floor(entry.contentRect.width);
        if (w === this.#width || w <= 0) return;
        this.#width = w;
        if (this.#matrix && this.#visible) this.#draw();
        this.hooks.drawn?.();
      });
      this.#resize.observe(this.#sizer);
    }
    // On screen, not near it: a canvas just above the one being looked at
    // would otherwise be redrawn every frame of a slider drag.
    if (typeof IntersectionObserver !== 'undefined') {
      this.#seen = new IntersectionObserver((records) => this.setVisible(records[records.length - 1].isIntersecting));
      this.#seen.observe(this.#box);
    }
    const canvas = this.#canvas;
    // Ctrl+wheel (a trackpad's pinch arrives as one) zooms around the cell under the pointer; a plain wheel scrolls the page.
    canvas.addEventListener('wheel', (e) => {
      if (!e.ctrlKey && !e.metaKey) return;
      e.preventDefault();
      const at = this.hit(e);
      if (at && at.j >= 0) this.zoom(e.deltaY < 0 ? ZOOM_STEP : 1 / ZOOM_STEP, at.i, at.j);
    }, { passive: false });
    canvas.addEventListener('pointerdown', (e) => {
      this.#pinch.set(e.pointerId, { x: e.clientX, y: e.clientY });
      if (this.#pinch.size === 2) {
        const [a, b] = [...this.#pinch.values()];
        this.#drag = { pinch: Math.hypot(a.x - b.x, a.y - b.y) };
        return;
      }
      this.#drag = { x: e.clientX, y: e.clientY, win: this.#win, moved: false, id: e.pointerId };
    });
    canvas.addEventListener('pointermove', (e) => {
      const d = this.#drag;
      if (!d || !this.#pinch.has(e.pointerId)) return;
      this.#pinch.set(e.pointerId, { x: e.clientX, y: e.clientY });
      if (d.pinch !== undefined) {
        const [a, b] = [...this.#pinch.values()];
        const span = Math.hypot(a.x - b.x, a.y - b.y);
        if (span > d.pinch * 1.5 || span < d.pinch / 1.5) {
          this.zoom(span > d.pinch ? ZOOM_STEP : 1 / ZOOM_STEP);
          d.pinch = span;
        }
        return;
      }
      const n = Math.max(this.rows.length, this.cols.length);
      if (d.win.size >= n || !this.#layout) return;
      const dx = e.clientX - d.x, dy = e.clientY - d.y;
      if (!d.moved && Math.hypot(dx, dy) < DRAG_PX) return;
      if (!d.moved) canvas.setPointerCapture?.(e.pointerId);
      d.moved = true;
      const cell = this.#layout.cell;
      const next = panWindow(d.win, -Math.round(dy / cell), -Math.round(dx / cell), n);
      if (next.r0 !== this.#win.r0 || next.c0 !== this.#win.c0) this.#setWindow(next);
    });
    const end = (e) => {
      this.#pinch.delete(e.pointerId);
      if (this.#drag?.moved) {
        // The click that ends a pan is not a choice of cell.
        canvas.addEventListener('click', (c) => c.stopPropagation(), { once: true, capture: true });
      }
      if (this.#pinch.size === 0) this.#drag = null;
    };
    canvas.addEventListener('pointerup', end);
    canvas.addEventListener('pointercancel', end);
  }

  #place(i, j) {
    const c = this.#cursor;
    c.dataset.i = String(i);
    c.dataset.j = String(j);
    this.#row.setAttribute('aria-rowindex', String(i + 2));
    c.setAttribute('aria-colindex', String(j + 2));
    this.#position(c, i, j);
  }

  #position(node, i, j, rows = [i, i + 1], cols = [j, j + 1]) {
    const L = this.#layout;
    if (!L) return false;
    const a = cellBox(L, Math.max(rows[0], L.r0), cols[0] < 0 ? -1 : Math.max(cols[0], L.c0));
    if (!a || rows[1] <= L.r0 || (cols[0] >= 0 && cols[1] <= L.c0)) {
      node.hidden = true;
      return false;
    }
    const h = (Math.min(rows[1], L.r1) - Math.max(rows[0], L.r0)) * L.cell;
    const w = cols[0] < 0 ? L.left : (Math.min(cols[1], L.c1) - Math.max(cols[0], L.c0)) * L.cell;
    node.hidden = false;
    // Written only when it moves: each write is a layout.
    const box = `${a.x} ${a.y} ${w} ${h}`;
    if (node.dataset.box === box) return true;
    node.dataset.box = box;
    node.style.left = `${a.x}px`;
    node.style.top = `${a.y}px`;
    node.style.width = `${Math.max(2, w)}px`;
    node.style.height = `${Math.max(2, h)}px`;
    return true;
  }

  #placeMarks() {
    const L = this.#layout;
    const key = JSON.stringify([this.#rects, this.#target, L && [L.r0, L.c0, L.r1, L.c1, L.cell]]);
    if (key === this.#marked) return;
    this.#marked = key;
    const nodes = [];
    for (const r of this.#rects) {
      const node = el('div', { class: 'heat-mark src' });
      if (this.#position(node, 0, 0, r.rows, r.cols)) nodes.push(node);
    }
    if (this.#target) {
      const node = el('div', { class: 'heat-mark target' });
      this.#position(node, this.#target.i, this.#target.j);
      nodes.push(node);
    }
    this.#marks.replaceChildren(...nodes);
  }

  // The colour of every cell, in the palette of the theme.
  #fillCells(theme) {
    const m = this.#matrix, how = this.#how;
    const nr = m.rows, nc = m.cols;
    const key = `${theme}|${how.key}`;
    if (this.#drawn === key && this.#cells) return;
    this.#drawn = key;
    if (this.#source) this.#source.stale = true;
    if (this.#cells?.length !== nr * nc) this.#cells = new Uint32Array(nr * nc);
    const words = this.#cells;
    this.scale = this.kind === 'seq' ? 1 : maxAbs(m.data);
    this.palette = paletteWords(this.kind, theme);
    const blocked = how.blocked === null ? null : (i, j) => how.blocked(i, j) !== '';
    fillCells(words, m.data, nr, nc, this.kind, this.scale, this.palette, blocked, blockedWord(theme));
    const story = this.#story;
    if (story) {
      // The cells a story does not name are dimmed: mostly see-through over the ground.
      for (let i = 0; i < nr; i++) {
        const rowLit = story.rows === null || story.rows.has(i);
        for (let j = 0; j < nc; j++) {
          if (rowLit && (story.cols === null || story.cols.has(j))) continue;
          const k = i * nc + j;
          words[k] = (words[k] & 0x00ffffff) | (70 << 24);
        }
      }
    }
  }

  /**
   * The cells at device pixels, written as ImageData (a scaled drawImage
   * is rasterized at paint time, most of a frame without a GPU), with the tables' gap
   * of ground between cells big enough for one; cells under a device pixel
   * are averaged down from one pixel per cell, so no row or column drops out.
   */
  #paintPlot(ctx, L, dpr) {
    const across = L.c1 - L.c0, down = L.r1 - L.r0, nc = this.#matrix.cols;
    const step = L.cell * dpr;
    if (step < 1) {
      if (!this.#source || this.#source.stale) {
        this.#source ??= document.createElement('canvas');
        this.#source.width = nc;
        this.#source.height = this.#matrix.rows;
        const image = new ImageData(new Uint8ClampedArray(this.#cells.buffer.slice(0)), nc, this.#matrix.rows);
        this.#source.getContext('2d').putImageData(image, 0, 0);
        this.#source.stale = false;
      }
      ctx.imageSmoothingEnabled = true;
      ctx.imageSmoothingQuality = 'high';
      ctx.drawImage(this.#source, L.c0, L.r0, across, down, L.left, L.top, across * L.cell, down * L.cell);
      return;
    }
    const pw = Math.round(across * step), ph = Math.round(down * step);
    const gap = L.cell >= 20 ? 2 * dpr : L.cell >= 8 ? dpr : 0;
    if (this.#plot?.width !== pw || this.#plot?.height !== ph) this.#plot = ctx.createImageData(pw, ph);
    const out = new Uint32Array(this.#plot.data.buffer);
    const cols = new Int32Array(pw);
    for (let x = 0; x < pw; x++) {
      const c = Math.floor(x / step);
      cols[x] = x - c * step >= step - gap ? -1 : L.c0 + c;
    }
    const cells = this.#cells;
    let last = -1; // the cell row (-2: a gap) the pixel row above holds: the same one is copied
    for (let y = 0; y < ph; y++) {
      const r = Math.floor(y / step);
      const key = y - r * step >= step - gap ? -2 : r;
      const at = y * pw;
      if (key === last) {
        out.copyWithin(at, at - pw, at);
        continue;
      }
      last = key;
      if (key === -2) {
        out.fill(0, at, at + pw);
        continue;
      }
      const base = (L.r0 + r) * nc;
      for (let x = 0; x < pw; x++) out[at + x] = cols[x] < 0 ? 0 : cells[base + cols[x]];
    }
    ctx.putImageData(this.#plot, Math.round(L.left * dpr), Math.round(L.top * dpr));
  }

  #draw() {
    this.#pending = false;
    // Before the first layout there is no width: the observer draws once it has one (reading it now would force a layout).
    if (!this.#width) {
      if (typeof ResizeObserver !== 'undefined') {
        this.#pending = true;
        return;
      }
      this.#width = Math.floor(this.#box.clientWidth) || 300;
    }
    const [labels, chars] = this.#dims;
    const L = layoutHeatmap({ rows: this.rows.length, cols: this.cols.length, width: this.#width, labels, win: this.#win, chars });
    this.#layout = L;
    const look = themeOf(this.figure);
    this.#fillCells(look.theme);
    const dpr = globalThis.devicePixelRatio || 1;
    const canvas = this.#canvas;
    const pw = Math.round(L.width * dpr), ph = Math.round(L.height * dpr);
    if (canvas.width !== pw || canvas.height !== ph) {
      canvas.width = pw;
      canvas.height = ph;
      canvas.style.width = `${L.width}px`;
      canvas.style.height = `${L.height}px`;
    }
    const ctx = canvas.getContext('2d');
    if (!ctx) return;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, L.width, L.height);
    this.#paintPlot(ctx, L, dpr);
    if (L.font > 0) this.#drawNumbers(ctx, L, look);
    this.#drawLabels(ctx, L, look);
    this.#place(Number(this.#cursor.dataset.i), Number(this.#cursor.dataset.j));
    this.#placeMarks();
  }

  #drawNumbers(ctx, L, look) {
    const m = this.#matrix, how = this.#how, nc = m.cols;
    const { rgb, nanRgb } = this.palette;
    const ink = rgb.map((c) => textOn(c));
    ctx.font = `${L.font}px ${look.mono}`;
    ctx.textAlign = 'right';
    ctx.textBaseline = 'middle';
    for (let i = L.r0; i < L.r1; i++) {
      const y = L.top + (i - L.r0 + 0.5) * L.cell;
      for (let j = L.c0; j < L.c1; j++) {
        const v = m.data[i * nc + j];
        const blocked = how.blocked !== null && how.blocked(i, j) !== '';
        const l = levelOf(v, this.kind, this.scale);
        ctx.fillStyle = blocked ? look.fg : l < 0 ? textOn(nanRgb) : ink[l];
        // A story's unlit cells are quieter, their numbers too (a table's are at opacity 0.35).
        const st = this.#story;
        ctx.globalAlpha = !st || ((st.rows === null || st.rows.has(i)) && (st.cols === null || st.cols.has(j))) ? 1 : 0.35;
        ctx.fillText(blocked && how.minusInfinity ? MINUS_INFINITY : fixed(v, how.digits), L.left + (j - L.c0 + 1) * L.cell - 3, y);
      }
    }
  }

  #drawLabels(ctx, L, look) {
    ctx.globalAlpha = 1;
    const selected = this.#how.selected;
    ctx.textBaseline = 'middle';
    const size = Math.max(8, Math.min(11, Math.floor(L.cell * L.rowStride) - 2));
    const chars = Math.floor((L.left - 8) / (size * 0.62));
    for (let i = L.r0; i < L.r1; i++) {
      const on = i === selected;
      // Every k-th label, and the selected row's, whose neighbours give it room.
      if (!on && ((i - L.r0) % L.rowStride !== 0 || (selected >= L.r0 && Math.abs(i - selected) < L.rowStride))) continue;
      ctx.font = `${on ? 'bold ' : ''}${size}px ${look.mono}`;
      ctx.fillStyle = on ? look.select : look.fg;
      ctx.textAlign = 'right';
      ctx.fillText(shortLabel(this.rows[i], chars), L.left - 4, L.top + (i - L.r0 + 0.5) * L.cell);
      if (on) {
        // The selected query's row is underlined across the plot, as a table's is.
        ctx.fillRect(L.left, L.top + (i - L.r0 + 1) * L.cell - 2, (L.c1 - L.c0) * L.cell, 2);
      }
    }
    ctx.font = `${Math.min(11, size)}px ${look.mono}`;
    ctx.fillStyle = look.fg;
    ctx.textAlign = 'left';
    const room = L.cell * L.colStride;
    const colChars = Math.max(1, Math.floor((room - 3) / (Math.min(11, size) * 0.62)));
    for (let j = L.c0; j < L.c1; j += L.colStride) {
      ctx.fillText(shortLabel(this.cols[j], colChars), L.left + (j - L.c0) * L.cell + 1, L.top / 2);
    }
  }
}

function sameData(a, b) {
  if (a.length !== b.length) return false;
  for (let k = 0; k < a.length; k++) if (!Object.is(a[k], b[k])) return false;
  return true;
}
