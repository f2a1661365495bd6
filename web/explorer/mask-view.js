// mask-view.js - the masked-word panel of the model view for an encoder
// trained to fill in masked words (model="english"): the sentence's words
// as buttons (a press masks that word, a second press unmasks it), the
// model's top guesses for the masked word with their probabilities, and
// where the masked position looks in the chosen head. A figure (a compact
// embed) keeps the buttons and the guesses and writes no sentence of its own.
// ModelView (model-view.js) places it; ModelSource says what to draw.

import { el } from './dom.js';
import { fixed } from '../worked/format.js';
import { headName } from './attentions.js';
import { MASK_TOKEN } from './encoder-source.js';

/** The panel's rules, added to the element's stylesheet with the model view's. */
export const MASK_STYLES = `
.mask-panel { flex: 1 1 18em; min-width: 0; }
.mask-panel h3 { margin-top: 0; }
.mask-words { display: flex; flex-wrap: wrap; gap: 4px; margin: 4px 0 8px; }
.mask-words button { min-width: 2.75em; min-height: 2.75em; font-family: var(--attn-mono); }
/* A figure has no heading over the words: a word of its own says what pressing one does. */
.mask-label { align-self: center; margin-right: 4px; color: var(--attn-muted); font-size: 0.85em; }
.root:not([data-appearance="figure"]) .mask-label { display: none; }
.mask-words button[aria-pressed="true"] { outline: 2px solid var(--attn-select); outline-offset: 1px; font-weight: 700; text-decoration: line-through; }
.mask-guesses { table-layout: auto; border-spacing: 0; font-size: 0.9em; }
.mask-guesses th, .mask-guesses td { width: auto; padding: 2px 8px 2px 0; text-align: left; }
.mask-guesses td.p { font-variant-numeric: tabular-nums; text-align: right; }
.mask-guesses tr.same th { color: var(--attn-select); }
.mask-guesses .bar { display: inline-block; height: 0.6em; background: var(--attn-accent); border-radius: 2px; vertical-align: middle; }
.mask-panel[data-masked="false"] .mask-guesses { display: none; }
.root[data-appearance="figure"] .mask-panel h3, .root[data-appearance="figure"] .mask-panel .explanation { display: none; }
`;

// Width of the longest bar beside a guess, in em (the probability scales it).
const BAR_EM = 6;

/**
 * What the panel says about the masked word, pure for Node's tests: the
 * guesses' caption and where the masked position looks in the chosen head,
 * its two most attended other words.
 * @param {{ words: string[], masked: number, guesses: { word: string, p: number }[], row: ArrayLike<number>, pick: { layer: number, head: number } }} s
 */
export function maskTexts({ words, masked, guesses, row, pick }) {
  const hidden = words[masked];
  const order = Array.from(row, (w, j) => [w, j]).filter(([, j]) => j !== masked).sort((a, b) => b[0] - a[0] || a[1] - b[1]);
  const looks = order.slice(0, 2).map(([w, j]) => `“${words[j]}” (${fixed(w, 2)})`);
  // The heads are scored on the most attended other word, so the sentence
  // names those, and says what the position keeps for itself beside them.
  const self = masked < row.length ? ` (itself ${fixed(row[masked], 2)})` : '';
  const right = guesses.findIndex((g) => g.word === hidden);
  const rank = right < 0 ? `“${hidden}” is not among its top ${guesses.length}` : right === 0 ? `its first guess is the word itself, “${hidden}”` : `“${hidden}” is its guess number ${right + 1}`;
  return {
    caption: `“${hidden}” (word ${masked + 1}) is masked: the model reads ${MASK_TOKEN} there. Its top ${guesses.length} guesses; ${rank}. Press “${hidden}” again to unmask it.`,
    looks: looks.length === 0 ? '' : `In ${headName(pick.layer, pick.head)} the masked position${self} looks most, of the other words, at ${looks.join(', then ')}; its row is the one selected in the lines view.`,
  };
}

export class MaskPanel {
  element = el('div', { class: 'mask-panel', 'data-masked': 'false' });
  #words = el('div', { class: 'mask-words', role: 'group', 'aria-label': 'mask a word' });
  #note = el('p', { class: 'explanation' });
  #body = el('tbody');
  #looks = el('p', { class: 'explanation looks', 'aria-live': 'polite' });
  #buttons = [];
  #mask;

  /** @param {(index: number | null) => void} mask masks word `index`, or unmasks (null) */
  constructor(mask) {
    this.#mask = mask;
    const table = el('table', { class: 'mask-guesses', 'aria-label': 'the model’s guesses for the masked word' },
      el('thead', {}, el('tr', {}, el('th', { scope: 'col', text: 'guess' }), el('th', { scope: 'col', text: 'p' }), el('th', { scope: 'col', text: '', 'aria-hidden': 'true' }))),
      this.#body);
    this.element.append(el('h3', { text: 'Mask a word' }), this.#note, this.#words, table, this.#looks);
  }

  /**
   * @param {{ words: string[], masked: number, guesses: { word: string, p: number }[] | null, row: ArrayLike<number> | null,
   *   pick: { layer: number, head: number } }} s masked -1: none
   */
  render(s) {
    if (this.#buttons.length !== s.words.length || this.#buttons.some((b, i) => b.dataset.word !== s.words[i])) {
      this.#buttons = s.words.map((w, i) => el('button', { type: 'button', 'data-word': w, 'data-index': i, text: w,
        onclick: () => this.#mask(i === this.#masked() ? null : i) }));
      this.#words.replaceChildren(el('span', { class: 'mask-label', text: 'mask', 'aria-hidden': 'true' }), ...this.#buttons);
    }
    this.#buttons.forEach((b, i) => {
      b.setAttribute('aria-pressed', String(i === s.masked));
      b.setAttribute('aria-label', i === s.masked ? `${s.words[i]}, masked: press to unmask` : `mask ${s.words[i]}`);
    });
    const masked = s.masked >= 0 && s.guesses;
    this.element.dataset.masked = String(Boolean(masked));
    if (!masked) {
      this.#note.textContent = 'Press a word to hide it: the model guesses it from the words around it, from both sides, as it was trained to do.';
      this.#body.replaceChildren();
      this.#looks.textContent = '';
      return;
    }
    const texts = maskTexts(s);
    this.#note.textContent = texts.caption;
    const top = Math.max(...s.guesses.map((g) => g.p), 1e-9);
    this.#body.replaceChildren(...s.guesses.map((g) => {
      const bar = el('span', { class: 'bar' });
      bar.style.width = `${((BAR_EM * g.p) / top).toFixed(2)}em`;
      return el('tr', { class: g.word === s.words[s.masked] ? 'same' : '' },
        el('th', { scope: 'row', text: g.word }), el('td', { class: 'p', text: fixed(g.p, 3) }), el('td', { 'aria-hidden': 'true' }, bar));
    }));
    this.#looks.textContent = texts.looks;
  }

  #masked() {
    return this.#buttons.findIndex((b) => b.getAttribute('aria-pressed') === 'true');
  }
}
