// softmax-play.js - "Play softmax" on the weights step: row by row, the
// row's cells first show exp(z - max) (with the sum of the row's exps),
// then each is divided by that sum and becomes its weight. It plays the
// head the learner is looking at: the head picked, or every head shown, in
// step (a model's chosen head is the example's only head). With
// prefers-reduced-motion nothing moves on its own: each press shows the
// next phase. The phases write into the weights tables' cells; when the
// play ends (or anything repaints the tables) they show the weights.

import { el } from './dom.js';
import { heatClass } from './colors.js';
import { fixed } from '../worked/format.js';

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

/**
 * What a play plays on: the weights tables of the heads in view (`picked`,
 * or every head when it is -1) with their logits, −∞ where a pair may not
 * attend; null when there is none or the weights came from outside.
 * @param {Map<string, object>} tables the built tables by id ("weights-<h>")
 * @param {{ tokens: string[], heads: object[], external?: boolean }} example
 * @param {(i: number, j: number) => string} blocked why a pair may not attend, '' if it may
 */
export function playSources(tables, example, blocked, picked = -1) {
  if (example.external) return null;
  const heads = [];
  example.heads.forEach((head, h) => {
    const entry = tables.get(`weights-${h}`);
    // A canvas heatmap has no cells to write the phases into.
    if (!entry || entry.heatmap || (picked >= 0 && h !== picked)) return;
    const m = head.logits ?? head.scaled;
    const logits = { rows: m.rows, cols: m.cols, data: Float64Array.from(m.data, (z, k) => (blocked(Math.floor(k / m.cols), k % m.cols) ? -Infinity : z)) };
    heads.push({ entry, logits, head: h });
  });
  return heads.length ? { heads, tokens: example.tokens, several: example.heads.length > 1 } : null;
}

const headsOf = (src) => src.heads.map((h) => h.head).join(' ');

export class SoftmaxPlay {
  #button = el('button', { type: 'button', class: 'softmax-play-button', text: 'Play softmax', 'aria-pressed': 'false' });
  #status = el('span', { class: 'softmax-status', role: 'status' });
  #node = el('div', { class: 'softmax-play' }, this.#button, this.#status);
  #source; // () => playSources(...): the tables to play on, or null
  #done; // () => void: the table shows the weights again
  #phases = []; // per head played, its phases
  #heads = ''; // the heads played, as headsOf gives them
  #at = -1;
  #timer = 0;

  /**
   * @param {() => ({ heads: { entry: object, logits: { rows: number, cols: number, data: Float64Array }, head: number }[],
   *   tokens: string[], several: boolean } | null)} source what playSources gives
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
    // One list of phases per head, all the same length: the heads play in step.
    this.#phases = src.heads.map((h) => softmaxPhases(h.logits));
    this.#heads = headsOf(src);
    this.#at = -1;
    this.#button.setAttribute('aria-pressed', 'true');
    this.#advance();
  }

  #advance() {
    const src = this.#source();
    this.#at++;
    // Another head picked in the middle ends the play: its phases were another head's.
    if (!src || headsOf(src) !== this.#heads || this.#at >= this.#phases[0].length) {
      this.stop();
      return;
    }
    let p;
    src.heads.forEach(({ entry }, k) => {
      p = this.#phases[k][this.#at];
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
      // Six characters, as the 1.0000 it replaces: the column keeps its width on a phone.
      if (entry.sums) entry.sums[p.row].textContent = p.kind === 'exp' ? `Σ${fixed(p.sum, p.sum < 10 ? 3 : 2)}` : fixed(1, 4);
    });
    const word = src.tokens[p.row];
    const at = this.#at;
    // Which head's numbers: named when the example has several heads.
    const each = (f) => src.heads.map(({ head }, k) => `${f(this.#phases[k][at])}${src.several ? ` (head ${head + 1})` : ''}`).join(', ');
    this.#status.textContent = p.kind === 'exp'
      ? `${word}: exp(z − max) for each key (max ${each((q) => fixed(q.max, 3))}, so the largest is exp(0) = 1); they sum to ${each((q) => fixed(q.sum, 4))}`
      : `${word}: each exp ÷ ${each((q) => fixed(q.sum, 4))} = its weight; the row now sums to 1`;
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
    // Only a play marks rows: a stop with none playing has nothing to unmark.
    const src = was ? this.#source() : null;
    if (src) for (const { entry } of src.heads) for (const tr of entry.trs) tr.classList.remove('playing');
    if (was) this.#done();
  }
}
