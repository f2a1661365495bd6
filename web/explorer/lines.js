// lines.js - the lines view: the tokens twice, queries on the left
// and keys on the right, and a line from query i to key j whose opacity and
// width are the attention weight, one colour per head (as BertViz draws it).
// linesLayout is pure and shared with the export; LinesView is its SVG in
// the page: heads toggle on and off, hovering or focusing a query shows only
// its lines, and each query is announced ("cat attends most to there, 0.2808").

import { el, svg } from './dom.js';
import { attendsMost } from '../worked/text.js';

const PAD = 14; // px above the first token
const CHAR = 8; // px per character of a 13 px monospace label, rounded up
const MAX_LABEL = 12; // characters of a token shown
const PHONE_WIDTH = 350; // px of a 390 px phone's column the view fits unscaled when it can
const MIN_SPAN = 100; // px between the token columns when the view gives up width beside a table
/**
 * Up to this many tokens the lines view draws every query's lines when none
 * is chosen; past it (n² lines are a tangle, and a path of a quarter of a
 * million segments a long paint) it draws the chosen or hovered query's only.
 */
export const LINES_ALL_MAX = 48;

const short = (t) => (t.length > MAX_LABEL ? `${t.slice(0, MAX_LABEL - 1)}…` : t);

/**
 * Lines are drawn in LEVELS steps of weight: one SVG path per head and level
 * holds every line of that weight, so a repaint rewrites a few paths instead
 * of n² elements (the steps are finer than the eye tells line widths apart).
 */
export const LEVELS = 16;

/** The level of a weight: -1 when it is too small to draw (below 0.005). */
export function lineLevel(w) {
  if (!(w >= 0.005)) return -1;
  return Math.min(LEVELS - 1, Math.floor(Math.min(1, w) * LEVELS));
}

/** Stroke width and opacity of a line of weight w in [0, 1] (drawn at its level's middle). */
export function lineStyle(w) {
  const level = lineLevel(w);
  if (level < 0) return { width: 0.5, opacity: 0 };
  const x = (level + 0.5) / LEVELS;
  return { width: 0.5 + 4.5 * x, opacity: 0.15 + 0.85 * x };
}

const labelWidth = (tokens) => 12 + CHAR * Math.max(3, ...tokens.map((t) => Math.min(t.length, MAX_LABEL)));
// px between the two columns of tokens: narrower for long labels, down to 150.
const naturalSpan = (label) => Math.max(150, Math.min(230, PHONE_WIDTH - 2 * label));

/**
 * The narrowest and widest the lines view of these tokens is drawn, in px:
 * narrower than `min` only by scaling (its labels shrink), never wider than
 * `max` (its natural size, the size of the exported picture).
 */
export function linesWidths(tokens) {
  const label = labelWidth(tokens);
  return { min: 2 * label + Math.min(MIN_SPAN, naturalSpan(label)), max: 2 * label + naturalSpan(label) };
}

/**
 * Positions of the two token columns and of every line, for n tokens:
 * { width, height, left: [{ x, y, text }], right: [...], line(i, j) -> { x1, y1, x2, y2 } }.
 * A few tokens get tall rows and a wide span, so the lines of a short
 * sentence are long enough to tell their widths apart; the label columns are
 * as wide as the longest token, so the view still fits a 350 px phone column.
 * With `fit` (px) the span between the columns narrows to fit that width,
 * within linesWidths: beside a table the lines get shorter, not the labels smaller.
 */
export function linesLayout(tokens, { fit } = {}) {
  const n = tokens.length;
  const row = n <= 8 ? 32 : n <= 16 ? 26 : n <= LINES_ALL_MAX ? 22 : 16; // px per token
  const label = labelWidth(tokens);
  const { min, max } = linesWidths(tokens);
  const width = fit === undefined ? max : Math.floor(Math.max(min, Math.min(max, fit)));
  const span = width - 2 * label;
  const height = PAD * 2 + n * row;
  const y = (i) => PAD + i * row + row / 2;
  return {
    width,
    height,
    left: tokens.map((t, i) => ({ x: label - 6, y: y(i), text: short(t) })),
    right: tokens.map((t, j) => ({ x: label + span + 6, y: y(j), text: short(t) })),
    line: (i, j) => ({ x1: label, y1: y(i), x2: label + span, y2: y(j) }),
  };
}

export class LinesView {
  #svg;
  #layout;
  #heads = []; // per head: { group, paths: [one per level], levels: Int8Array (n, n) as drawn, query: the query drawn }
  #tokens = [];
  #labels = [];
  #keys = [];
  #fit; // px the view's box gives it (undefined until measured)
  #resize = null; // ResizeObserver of the view's box
  #toggles;
  #summary;
  #live;
  #enabled = [];
  #focus = -1; // the selected query (-1: all)
  #shown = -1; // the query whose lines are drawn now (hover or focus win over the selection)
  #weights = [];
  #speakTimer = 0;

  /**
   * @param {{ onSelect: (i: number) => void }} callbacks onSelect when a query token is clicked or activated
   */
  constructor({ onSelect }) {
    this.onSelect = onSelect;
    this.element = el('figure', { class: 'lines', part: 'lines', 'data-id': 'lines' });
  }

  /** Stops following the box's width (build starts again). */
  disconnect() {
    this.#resize?.disconnect();
  }

  // The box's width comes from the row it sits in (styles.js: between
  // linesWidths' min and max, from --lines-min and --lines-max), never from
  // the picture, so fitting the picture to it cannot feed back.
  #watchWidth() {
    if (typeof ResizeObserver === 'undefined') return;
    this.#resize ??= new ResizeObserver(([entry]) => {
      this.#fit = entry.contentRect.width;
      const L = linesLayout(this.#tokens, { fit: this.#fit });
      if (L.width !== this.#layout.width) this.#place(L);
    });
    this.#resize.observe(this.element);
  }

  // Moves the keys and redraws every line for a new layout of the same tokens.
  #place(L) {
    this.#layout = L;
    for (const [k, v] of [['width', L.width], ['height', L.height], ['viewBox', `0 0 ${L.width} ${L.height}`]]) this.#svg.setAttribute(k, v);
    this.#keys.forEach((key, j) => key.setAttribute('x', L.right[j].x));
    for (const head of this.#heads) head.query = -2;
    this.#draw();
  }

  /** Builds the view for these tokens and this many heads (lines stay blank until update). */
  build(tokens, heads, focus = -1) {
    this.#tokens = tokens;
    this.#focus = focus;
    this.#shown = focus;
    this.#weights = [];
    if (this.#enabled.length !== heads) this.#enabled = Array.from({ length: heads }, () => true);
    const L = linesLayout(tokens, { fit: this.#fit });
    this.#layout = L;
    const widths = linesWidths(tokens);
    this.element.style.setProperty('--lines-min', `${widths.min}px`);
    this.element.style.setProperty('--lines-max', `${widths.max}px`);
    const n = tokens.length;
    this.#svg = svg('svg', { width: L.width, height: L.height, viewBox: `0 0 ${L.width} ${L.height}`, role: 'group',
      // One tab stop, the query tokens': Chromium would stop on the svg itself too.
      tabindex: -1,
      'aria-label': 'Lines from each query token (left) to the keys it attends to (right); arrow keys move between queries' });
    this.#heads = [];
    for (let h = 0; h < heads; h++) {
      const paths = Array.from({ length: LEVELS }, (_, level) => {
        const s = lineStyle((level + 0.5) / LEVELS);
        return svg('path', { 'data-level': level, 'stroke-width': s.width.toFixed(2), 'stroke-opacity': s.opacity.toFixed(2), fill: 'none', d: '' });
      });
      const group = svg('g', { class: `head head-${h}`, 'data-head': h }, ...paths);
      if (!this.#enabled[h]) group.setAttribute('display', 'none');
      this.#heads.push({ group, paths, levels: new Int8Array(n * n).fill(-2), query: -2 });
      this.#svg.append(group);
    }
    this.#labels = L.left.map((p, i) => {
      const label = svg('text', { x: p.x, y: p.y, 'text-anchor': 'end', 'dominant-baseline': 'middle', class: 'query', role: 'button',
        tabindex: i === Math.max(0, focus) ? 0 : -1, 'data-q': i, text: p.text });
      label.addEventListener('click', () => this.onSelect(i));
      this.#svg.append(label);
      return label;
    });
    this.#keys = L.right.map((p, j) => svg('text', { x: p.x, y: p.y, 'dominant-baseline': 'middle', class: 'key', 'aria-hidden': 'true', 'data-k': j, text: p.text }));
    this.#svg.append(...this.#keys);
    this.#svg.addEventListener('keydown', (e) => this.#onKey(e));
    this.#svg.addEventListener('focusin', (e) => this.#show(Number(e.target.dataset?.q ?? -1)));
    this.#svg.addEventListener('focusout', () => this.#show(this.#focus));
    this.#svg.addEventListener('pointerover', (e) => {
      const q = e.target.dataset?.q;
      if (q !== undefined) this.#show(Number(q));
    });
    this.#svg.addEventListener('pointerleave', () => this.#show(this.#focus));
    this.#toggles = heads > 1
      ? el('div', { class: 'head-toggles', role: 'group', 'aria-label': 'heads shown in the lines view' },
        ...this.#enabled.map((on, h) => el('button', { type: 'button', class: `head-toggle head-${h}`, 'aria-pressed': String(on), text: `head ${h + 1}`,
          onclick: (e) => this.#toggleHead(h, e.currentTarget) })))
      : null;
    this.#summary = el('ul', { class: 'sr-only', 'aria-label': 'what each token attends to most' });
    this.#live = el('p', { class: 'sr-only', 'aria-live': 'polite' });
    this.element.replaceChildren(
      el('figcaption', {}, el('span', { class: 'name', text: 'Who attends to whom' }),
        el('span', { class: 'shape', text: n > LINES_ALL_MAX ? ' query → key; choose or hover a query on the left to draw its lines' : ' query → key' })),
      ...(this.#toggles ? [this.#toggles] : []), this.#svg, this.#summary, this.#live);
    this.#watchWidth();
  }

  /**
   * Draws the lines from the weights of each head (Matrix[]) and, unless
   * `spoken` is false (during a slider drag), updates the spoken summaries.
   */
  update(weights, { spoken = true } = {}) {
    this.#weights = weights;
    this.#draw();
    if (!spoken) return;
    // A long text's 512 summaries wait for a task of their own: the view paints first.
    if (this.#tokens.length <= LINES_ALL_MAX) this.speak();
    else {
      clearTimeout(this.#speakTimer);
      this.#speakTimer = setTimeout(() => this.speak(), 0);
    }
  }

  /** Updates the spoken summaries to the weights drawn. */
  speak() {
    const weights = this.#weights;
    const n = this.#tokens.length;
    const items = [];
    for (let i = 0; i < n; i++) {
      const text = weights.map((m, h) => `${weights.length > 1 ? `head ${h + 1}: ` : ''}${attendsMost(this.#tokens, m, i)}`).join('; ');
      items.push(text);
      if (this.#labels[i].getAttribute('aria-label') !== text) this.#labels[i].setAttribute('aria-label', text);
    }
    if (this.#summary.childElementCount !== n) this.#summary.replaceChildren(...items.map((t) => el('li', { text: t })));
    else items.forEach((t, i) => { if (this.#summary.children[i].textContent !== t) this.#summary.children[i].textContent = t; });
  }

  /** The query whose lines alone are shown when nothing is hovered (-1: all). */
  select(i) {
    this.#focus = i;
    this.#show(i);
  }

  /** Which heads are drawn. */
  get enabled() {
    return [...this.#enabled];
  }

  // Rewrites the paths of a head whose levels (or shown query) changed.
  #draw() {
    const n = this.#tokens.length, L = this.#layout, q = this.#shown;
    const [from, to] = q >= 0 ? [q, q + 1] : n <= LINES_ALL_MAX ? [0, n] : [0, 0];
    for (let h = 0; h < this.#heads.length && h < this.#weights.length; h++) {
      const head = this.#heads[h];
      const data = this.#weights[h].data;
      let changed = head.query !== q;
      // Only the rows drawn: past LINES_ALL_MAX that is one query's, not n² weights a frame.
      const [k0, k1] = n <= LINES_ALL_MAX ? [0, n * n] : [from * n, to * n];
      if (n > LINES_ALL_MAX && changed) head.levels.fill(-2);
      for (let k = k0; k < k1; k++) {
        const level = lineLevel(data[k]);
        if (head.levels[k] !== level) {
          head.levels[k] = level;
          changed = true;
        }
      }
      if (!changed) continue;
      head.query = q;
      const d = Array.from({ length: LEVELS }, () => []);
      for (let i = from; i < to; i++) {
        for (let j = 0; j < n; j++) {
          const level = head.levels[i * n + j];
          if (level < 0) continue;
          const p = L.line(i, j);
          d[level].push(`M${p.x1} ${p.y1}L${p.x2} ${p.y2}`);
        }
      }
      head.paths.forEach((path, level) => path.setAttribute('d', d[level].join('')));
    }
  }

  #toggleHead(h, button) {
    this.#enabled[h] = !this.#enabled[h];
    button.setAttribute('aria-pressed', String(this.#enabled[h]));
    if (this.#enabled[h]) this.#heads[h].group.removeAttribute('display');
    else this.#heads[h].group.setAttribute('display', 'none');
  }

  #show(q) {
    this.#shown = q;
    this.#draw();
    this.#labels.forEach((label, i) => label.classList.toggle('on', i === q));
  }

  #onKey(e) {
    const q = Number(e.target.dataset?.q ?? -1);
    if (q < 0) return;
    const n = this.#tokens.length;
    let next = q;
    if (e.key === 'ArrowDown') next = Math.min(n - 1, q + 1);
    else if (e.key === 'ArrowUp') next = Math.max(0, q - 1);
    else if (e.key === 'Home') next = 0;
    else if (e.key === 'End') next = n - 1;
    else if (e.key === 'Enter' || e.key === ' ') {
      e.preventDefault();
      this.onSelect(q);
      return;
    } else return;
    e.preventDefault();
    this.#labels[q].tabIndex = -1;
    this.#labels[next].tabIndex = 0;
    this.#labels[next].focus();
    this.#live.textContent = this.#labels[next].getAttribute('aria-label');
  }
}
