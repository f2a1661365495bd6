// tokens-view.js - the text view of a long input: the tokens as running
// text, each shaded by how much the chosen word attends to it (as
// CircuitsVis's coloured tokens do), for inputs too long for the lines
// view to show at once. A token is chosen by click, or by the arrow keys
// and Enter (one tab stop); what the chosen word attends to most, and the
// weight of a token reached by the keys, are announced. Tokens go in as
// text, never markup.

import { heatClass } from './colors.js';
import { el } from './dom.js';
import { fixed } from '../worked/format.js';
import { attendsMost } from '../worked/text.js';

/** Past this many tokens the weights' section opens with the text view. */
export const TEXT_VIEW_MIN_TOKENS = 32;

/**
 * The shading of each token for the weights of one query row: the weight
 * over the row's largest (the largest is the darkest; 512 weights of about
 * 1/512 would all look blank on an absolute scale). Returns
 * { t: Float64Array (n) in [0, 1], max }.
 */
export function shades(data, n, row) {
  let max = 0;
  for (let j = 0; j < n; j++) max = Math.max(max, data[row * n + j]);
  const t = new Float64Array(n);
  if (max > 0) for (let j = 0; j < n; j++) t[j] = data[row * n + j] / max;
  return { t, max };
}

export const TOKENS_STYLES = `
figure.tokens { margin: 0 0 12px; max-width: 60em; }
.tokens-text { font-family: var(--attn-mono); font-size: 0.85em; line-height: 1.9; max-height: 24em; overflow-y: auto; padding: 2px; }
.tokens-text .tok { padding: 1px 2px; border-radius: 3px; cursor: pointer; }
.tokens-text .tok.chosen { box-shadow: 0 0 0 2px var(--attn-select); font-weight: 700; }
.tokens-text .tok:focus { outline: none; }
.tokens-text .tok:focus-visible { outline: 3px solid var(--attn-focus); outline-offset: 1px; }
.tokens-text .tok:not([class*=" hs"]) { background: none; }
`;

export class TokensView {
  element = el('figure', { class: 'tokens', part: 'tokens', 'data-id': 'tokens' });
  #text = el('div', { class: 'tokens-text', role: 'group', 'aria-label': 'The tokens as text; arrow keys move, Enter chooses the word whose attention shades the others' });
  #note = el('span', { class: 'shape' });
  #live = el('p', { class: 'sr-only', 'aria-live': 'polite' });
  #spans = [];
  #tokens = [];
  #weights = null;
  #chosen = -2;

  /** @param {{ onSelect: (i: number) => void }} callbacks onSelect when a token is clicked or chosen by key */
  constructor({ onSelect }) {
    this.onSelect = onSelect;
    this.#text.addEventListener('click', (e) => {
      const i = Number(e.target.dataset?.t ?? -1);
      if (i >= 0) this.onSelect(i);
    });
    this.#text.addEventListener('keydown', (e) => this.#onKey(e));
    this.element.append(el('figcaption', {}, el('span', { class: 'name', text: 'The text' }), this.#note), this.#text, this.#live);
  }

  /** Builds the text for these tokens (unshaded until update). */
  build(tokens, focus = 0) {
    this.#tokens = tokens;
    this.#chosen = -2;
    this.#spans = tokens.map((t, i) => el('span', { class: 'tok', role: 'button', tabindex: i === Math.max(0, focus) ? 0 : -1, 'data-t': i, text: t }));
    // A space between tokens, as text: the words wrap where the line ends.
    const nodes = [];
    this.#spans.forEach((s, i) => nodes.push(...(i ? [' ', s] : [s])));
    this.#text.replaceChildren(...nodes);
  }

  /** Shades the tokens by the weights (Matrix) of the chosen query `row` (-1: none chosen). */
  update(weights, row) {
    const n = this.#tokens.length;
    if (weights.cols !== n) return; // numbers of other tokens: a rebuild follows
    this.#weights = weights;
    const set = (node, name, value) => {
      if (node.getAttribute(name) !== value) node.setAttribute(name, value);
    };
    if (row < 0) {
      for (const s of this.#spans) {
        if (s.className !== 'tok') s.className = 'tok';
        set(s, 'aria-pressed', 'false');
        s.removeAttribute('title');
      }
      this.#note.textContent = ' choose a word: every word is shaded by how much it attends to it';
      if (this.#chosen >= 0) this.#live.textContent = '';
      this.#chosen = row;
      return;
    }
    const { t, max } = shades(weights.data, n, row);
    this.#spans.forEach((s, j) => {
      const name = `tok ${heatClass(t[j], 'seq')}${j === row ? ' chosen' : ''}`;
      if (s.className !== name) s.className = name;
      set(s, 'aria-pressed', String(j === row));
      set(s, 'title', `weight from “${this.#tokens[row]}”: ${fixed(weights.data[row * n + j], 4)}`);
    });
    this.#note.textContent = ` shaded by the weight from “${this.#tokens[row]}”, darkest ${fixed(max, 4)}`;
    // Said when the word is chosen, not on every frame of a slider drag.
    if (row !== this.#chosen) this.#live.textContent = attendsMost(this.#tokens, weights, row);
    this.#chosen = row;
  }

  #onKey(e) {
    const i = Number(e.target.dataset?.t ?? -1);
    if (i < 0) return;
    const n = this.#tokens.length;
    const moves = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 };
    let next = i;
    if (moves[e.key]) next = Math.min(n - 1, Math.max(0, i + moves[e.key]));
    else if (e.key === 'Home') next = 0;
    else if (e.key === 'End') next = n - 1;
    else if (e.key === 'Enter' || e.key === ' ') {
      e.preventDefault();
      this.onSelect(i);
      return;
    } else return;
    e.preventDefault();
    this.#spans[i].tabIndex = -1;
    this.#spans[next].tabIndex = 0;
    this.#spans[next].focus();
    const row = this.#chosen;
    const w = row >= 0 && this.#weights ? `, weight from “${this.#tokens[row]}” ${fixed(this.#weights.data[row * n + next], 4)}` : '';
    this.#live.textContent = `${this.#tokens[next]}, word ${next + 1} of ${n}${w}`;
  }
}
