// softmax-play.js - "Play softmax" on the weights step: row by row, the
// row's cells first show exp(z - max) (with the sum of the row's exps),
// then each is divided by that sum and becomes its weight. With
// prefers-reduced-motion nothing moves on its own: each press shows the
// next phase. The phases write into the weights table's cells; when the
// play ends (or anything repaints the table) the table shows the weights.

import { el } from './dom.js';
import { heatClass } from './colors.js';
import { fixed } from './format.js';

const PHASE_MS = 900; // each phase of a row stays this long while playing

/**
 * The phases of a softmax over the rows of `logits` (Matrix, -Infinity for
 * pairs that may not attend): for each row, { row, kind: 'exp', values, sum }
 * then { row, kind: 'divide', values, sum }.
 */
export function softmaxPhases(logits) {
  const phases = [];
  const n = logits.cols;
  for (let i = 0; i < logits.rows; i++) {
    const z = Array.from({ length: n }, (_, j) => logits.data[i * n + j]);
    const max = Math.max(...z);
    const exps = z.map((x) => (x === -Infinity || max === -Infinity ? 0 : Math.exp(x - max)));
    const sum = exps.reduce((a, b) => a + b, 0);
    phases.push({ row: i, kind: 'exp', values: exps, sum, max });
    phases.push({ row: i, kind: 'divide', values: exps.map((e) => (sum > 0 ? e / sum : 0)), sum, max });
  }
  return phases;
}

export class SoftmaxPlay {
  #button = el('button', { type: 'button', class: 'softmax-play-button', text: 'Play softmax', 'aria-pressed': 'false' });
  #status = el('span', { class: 'softmax-status', role: 'status' });
  #node = el('div', { class: 'softmax-play' }, this.#button, this.#status);
  #source; // () => { entry, logits, tokens } of the table to play on, or null
  #done; // () => void: the table shows the weights again
  #phases = [];
  #at = -1;
  #timer = 0;

  /**
   * @param {() => ({ entry: object, logits: import('../core/matrix.js').Matrix, tokens: string[] } | null)} source
   * @param {() => void} done called when the play ends, to repaint the table
   */
  constructor(source, done) {
    this.#source = source;
    this.#done = done;
    this.#button.addEventListener('click', () => this.#press());
  }

  get element() {
    return this.#node;
  }

  get playing() {
    return this.#at >= 0;
  }

  #reduced() {
    return globalThis.matchMedia?.('(prefers-reduced-motion: reduce)').matches ?? false;
  }

  #press() {
    if (this.#reduced()) {
      // No motion: each press is one phase.
      if (this.#at < 0) this.#begin();
      else this.#advance();
      return;
    }
    if (this.#timer) {
      this.stop();
      return;
    }
    if (this.#at < 0) this.#begin();
    this.#timer = setInterval(() => this.#advance(), PHASE_MS);
    this.#button.textContent = 'Stop';
  }

  #begin() {
    const src = this.#source();
    if (!src) return;
    this.#phases = softmaxPhases(src.logits);
    this.#at = -1;
    this.#button.setAttribute('aria-pressed', 'true');
    this.#advance();
  }

  #advance() {
    const src = this.#source();
    this.#at++;
    if (!src || this.#at >= this.#phases.length) {
      this.stop();
      return;
    }
    const p = this.#phases[this.#at];
    const { entry, tokens } = src;
    const nc = entry.cols.length;
    for (const tr of entry.trs) tr.classList.remove('playing');
    entry.trs[p.row].classList.add('playing');
    p.values.forEach((v, j) => {
      const td = entry.tds[p.row * nc + j];
      td.textContent = fixed(v, 4);
      td.className = heatClass(v, 'seq');
      entry.painted[p.row * nc + j] = ''; // the next repaint writes the weight back
    });
    entry.data = null;
    if (entry.sums) entry.sums[p.row].textContent = p.kind === 'exp' ? `Σ ${fixed(p.sum, 4)}` : fixed(1, 4);
    this.#status.textContent = p.kind === 'exp'
      ? `${tokens[p.row]}: exp(z − max) for each key (max ${fixed(p.max, 3)}, so the largest is exp(0) = 1); they sum to ${fixed(p.sum, 4)}`
      : `${tokens[p.row]}: each exp ÷ ${fixed(p.sum, 4)} = its weight; the row now sums to 1`;
  }

  /** Ends the play; the table shows the weights again. */
  stop() {
    clearInterval(this.#timer);
    this.#timer = 0;
    const was = this.#at >= 0;
    this.#at = -1;
    this.#button.textContent = 'Play softmax';
    this.#button.setAttribute('aria-pressed', 'false');
    this.#status.textContent = '';
    const src = this.#source();
    if (src) for (const tr of src.entry.trs) tr.classList.remove('playing');
    if (was) this.#done();
  }
}
