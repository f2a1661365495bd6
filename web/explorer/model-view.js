// model-view.js - the model part of <attention-explorer> (BertViz's model
// view): a grid of layers x heads thumbnails of each head's pattern on the
// tokens shown, each labelled with its kind and score; a keyboard grid
// (arrows move and choose, as in the tables), the choice announced. Below
// it the model's top 3 guesses for the next word at every position with a
// Repeat button, and the Train-from-scratch panel: seed, play/pause, step
// and the loss curve. ModelSource (model-source.js) says what to draw.

import { el, svg } from './dom.js';
import { fixed } from '../worked/format.js';
import { headName, modelViewText } from './attentions.js';
import { thumbnailOf } from './heatmap-layout.js';
import { encoderViewText } from './encoder-source.js';
import { MASK_STYLES, MaskPanel } from './mask-view.js';

const MOVES = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
// The loss curve's box in SVG units; it scales to its column.
const CURVE = { width: 320, height: 150, left: 40, right: 10, top: 10, bottom: 28 };

/** The model part's rules, added to the element's stylesheet (styles.js has the custom properties). */
export const MODEL_STYLES = `
.model-part { margin-top: 8px; contain: content; }
.root[data-model] .toolbar .field.heads, .root[data-model] .toolbar .field.check { display: none; }
/* A trained head's scale is the model's (fixedScaleText says why): no slider; weights from outside have none at all. */
.root[data-model] .toolbar .field.scale input[type="range"], .root[data-model] .toolbar .scale-reset { display: none; }
/* With no slider to keep still, the readout takes the width its words need. */
.root[data-model] .toolbar .scale-text { width: auto; white-space: normal; }
.root[data-model] .toolbar .scale-text::after { content: " · fixed by the model"; color: var(--attn-muted); font-family: var(--attn-font); }
.root[data-model="external"] .toolbar .field.scale { display: none; }
/* A model's numbers do not come from a seed or the sizes typed: those settings step aside, and so does pair masking. */
.settings .model-settings-note { display: none; margin: 4px 0; color: var(--attn-muted); }
.root[data-model] .settings .row.draw, .root[data-model] .settings .reset-mask { display: none; }
.root[data-model] .settings .model-settings-note { display: block; }
.model-part h3 { font-size: 1em; margin: 12px 0 4px; }
.model-body { display: flex; flex-wrap: wrap; gap: 8px 24px; align-items: flex-start; }
.model-heads { flex: 1 1 18em; max-width: 30em; min-width: 0; }
.predictions { flex: 1 1 18em; min-width: 0; }
.predictions h3 { margin-top: 0; }
.model-grid { display: grid; gap: 6px; }
.model-row { display: grid; grid-template-columns: 2em repeat(var(--heads), minmax(0, 1fr)); gap: 6px; align-items: start; }
.model-row .layer { align-self: center; color: var(--attn-muted); font-weight: 600; }
/* The thumbnails are ink on whatever is behind them: the text colour (drawPattern) on no background of their own. */
button.thumb { background: transparent; color: var(--attn-fg); display: flex; flex-direction: column; align-items: stretch; gap: 2px; padding: 4px; min-width: 0; border-radius: 6px; text-align: left; }
/* A figure's buttons here are the page's ink on the page, as its text is. */
.root[data-appearance="figure"] .model-part button { background: transparent; color: inherit; }
/* A figure has room to the right of each small pattern, not below it: the heads take the column's
   width (the guesses wrap under them), and where a head has room its label goes beside its pattern. */
.root[data-appearance="figure"] .model-heads { flex: 1 1 30em; max-width: 46em; }
.root[data-appearance="figure"] .model-grid { container-type: inline-size; }
.root[data-appearance="figure"] .guess-table { width: auto; }
@container (min-width: 32em) {
  button.thumb { display: grid; grid-template-columns: 3.5em minmax(0, 1fr); grid-template-areas: "which which" "canvas kind" "canvas base"; column-gap: 6px; align-content: start; }
  button.thumb .which { grid-area: which; }
  button.thumb canvas { grid-area: canvas; }
  button.thumb .kind { grid-area: kind; }
  button.thumb .base { grid-area: base; }
}
button.thumb canvas { width: 100%; aspect-ratio: 1; image-rendering: pixelated; border: 1px solid var(--attn-border); }
button.thumb .which { font-size: 0.8em; color: var(--attn-muted); }
button.thumb .kind { font-size: 0.78em; line-height: 1.2; overflow-wrap: anywhere; }
button.thumb .base { font-size: 0.72em; line-height: 1.2; color: var(--attn-muted); overflow-wrap: anywhere; }
button.thumb .base:empty { display: none; }
button.thumb.chosen { border: 2px solid var(--attn-select); padding: 3px; }
button.thumb.chosen .which { color: var(--attn-select); font-weight: 700; }
.predictions .row { justify-content: space-between; flex-wrap: nowrap; }
.scroll-y { max-height: 13em; overflow: auto; max-width: 100%; }
.predictions .scroll-y.fixed { contain: strict; }
/* More rows below the fold: the last lines fade, as a table cut on the right does. */
.scroll-y.more { mask-image: linear-gradient(to bottom, #000 calc(100% - 2.5em), rgb(0 0 0 / 0.2)); }
.scroll-y + .more-note { margin: 2px 0 0; font-size: 0.8em; color: var(--attn-muted); }
.scroll-y:not(.more) + .more-note { visibility: hidden; }
.guess-table { table-layout: auto; width: 100%; border-spacing: 0; font-size: 0.85em; }
.guess-table th, .guess-table td { width: auto; padding: 2px 6px; text-align: left; white-space: normal; }
.guess-table tbody th { color: var(--attn-fg); }
.guess-table .guesses span { display: inline-block; margin-right: 0.8em; color: var(--attn-muted); }
.guess-table .guesses span.top { color: var(--attn-fg); font-weight: 600; }
.guess-table tr.right .next { color: #1a7f37; }
.guess-table tr.wrong .next { color: var(--attn-muted); }
.guess-table tr[data-repeat="start"] > * { border-top: 2px solid var(--attn-accent); }
.model-status { margin: 6px 0; font-variant-numeric: tabular-nums; }
.loss-curve { display: block; width: 100%; max-width: 30em; height: auto; }
.loss-curve.empty { display: none; }
.loss-curve text { font-size: 10px; fill: var(--attn-muted); font-family: var(--attn-font); }
.loss-curve .axis { stroke: var(--attn-muted); stroke-width: 1; }
.loss-curve .loss { fill: none; stroke: var(--attn-accent); stroke-width: 1.5; }
.model-train [hidden] { display: none; }
/* A figure (a compact embed) writes no heading or text of its own: the article around it does. */
.root[data-appearance="figure"] .model-part > h2, .root[data-appearance="figure"] .model-part > .explanation,
.root[data-appearance="figure"] .predictions h3, .root[data-appearance="figure"] .predictions > .explanation { display: none; }
.root[data-appearance="figure"] .predictions .row { justify-content: flex-end; }
@media (prefers-color-scheme: dark) {
  .guess-table tr.right .next { color: #3fb950; }
}
${MASK_STYLES}`;

export class ModelView {
  element = el('div', { class: 'model-part', role: 'region', part: 'model', 'aria-label': 'Every head of the model', hidden: true });
  #intents;
  #text = el('p', { class: 'explanation' });
  #grid = el('div', { class: 'model-grid', role: 'grid', 'aria-label': 'heads by layer; arrow keys choose a head' });
  #live = el('p', { class: 'sr-only', 'aria-live': 'polite' });
  #about = el('div', { hidden: true }); // each head's full label, its button's description
  #cells = []; // [layer][head] { button, canvas, label }
  #shape = '';
  #announced = '';
  #predictions = el('div', { class: 'predictions' });
  #guesses = null; // { note, body, box } of the guesses table, built once
  #count = 0; // words shown
  #repeatFrom = -1; // where the repeat starts (the sentence's length when Repeat was pressed); -1: no repeat
  #scrollToRepeat = false; // the next render brings the repeat's first row into view
  // Training is a control: compact embeds (controls="minimal" or "none") leave it out.
  #train = el('div', { class: 'model-train full-only' });
  #trainParts = null;
  #last = null; // what render drew last
  #mask = null; // MaskPanel of an encoder (kind 'encoder')

  /**
   * @param {{ select: (layer: number, head: number) => void, mask: (index: number | null) => void, repeat: () => void,
   *   train: (seed: number) => void, play: () => void, step: () => void, stop: () => void }} intents
   */
  constructor(intents) {
    this.#intents = intents;
    this.element.append(el('h2', { text: 'Every head' }), this.#text,
      el('div', { class: 'model-body' }, el('div', { class: 'model-heads' }, this.#grid, this.#live, this.#about), this.#predictions), this.#train);
    this.#grid.addEventListener('keydown', (e) => this.#onKey(e));
    // The ink is the text colour, which the reader's scheme changes: draw again in the new one.
    globalThis.matchMedia?.('(prefers-color-scheme: dark)').addEventListener?.('change', () => {
      if (this.#last && !this.element.hidden) this.render(this.#last);
    });
  }

  hide() {
    this.element.hidden = true;
  }

  /**
   * @param {{ kind: 'model' | 'external', tokens: string[], attention: import('../core/matrix.js').Matrix[][],
   *   labels: { text: string, detail: string }[][], pick: { layer: number, head: number }, source?: string, steps?: number,
   *   scale?: { value: number, dk: number },
   *   predictions?: { word: string, probability: number }[][], truncated?: number, context?: number,
   *   training?: { step: number, losses: number[], accuracy: number | null, playing: boolean, finished?: boolean, total?: number, seed: number } | null }} s
   */
  render(s) {
    this.#last = s;
    this.element.hidden = false;
    const layers = s.attention.length, heads = s.attention[0].length;
    const text = s.kind === 'encoder' ? encoderViewText({ layers, heads, steps: s.steps }) : modelViewText({ kind: s.kind, layers, heads, source: s.source, steps: s.training ? 0 : s.steps });
    put(this.#text, 'textContent', text + (s.scale ? ` ${fixedScaleText(s.scale)}` : ''));
    const shape = `${layers}x${heads}`;
    if (shape !== this.#shape) this.#buildGrid(layers, heads);
    const ink = inkOf(this.#grid);
    for (let l = 0; l < layers; l++) {
      for (let h = 0; h < heads; h++) {
        const cell = this.#cells[l][h];
        const chosen = l === s.pick.layer && h === s.pick.head;
        drawPattern(cell.canvas, s.attention[l][h], ink);
        put(cell.label, 'textContent', s.labels[l][h].text);
        put(cell.base, 'textContent', s.labels[l][h].baseline ?? '');
        cell.button.setAttribute('aria-selected', String(chosen));
        // A roving tab stop: Tab into the grid lands on the chosen head, arrows move from there.
        cell.button.tabIndex = chosen ? 0 : -1;
        // Named by what it shows ("H2 previous token 0.82", as a speech user says it), described in full.
        put(cell.about, 'textContent', `${headName(l, h)}: ${s.labels[l][h].detail}`);
        // The full label on hover too, where the thumbnail's is cut short.
        put(cell.button, 'title', s.labels[l][h].detail);
        cell.button.classList.toggle('chosen', chosen);
      }
    }
    const said = `${headName(s.pick.layer, s.pick.head)}: ${s.labels[s.pick.layer][s.pick.head].detail}. The lines and tables show this head.`;
    if (said !== this.#announced) {
      this.#announced = said;
      this.#live.textContent = said;
    }
    this.#renderPredictions(s);
    this.#renderTraining(s);
  }

  #buildGrid(layers, heads) {
    this.#shape = `${layers}x${heads}`;
    this.#grid.style.setProperty('--heads', String(heads));
    this.#cells = [];
    this.#about.replaceChildren();
    const rows = [];
    for (let l = 0; l < layers; l++) {
      const row = el('div', { class: 'model-row', role: 'row' }, el('span', { class: 'layer', role: 'rowheader', text: `L${l + 1}`, title: `layer ${l + 1}` }));
      const cells = [];
      for (let h = 0; h < heads; h++) {
        const canvas = el('canvas', { width: 1, height: 1, 'aria-hidden': 'true' });
        const label = el('span', { class: 'kind' });
        const base = el('span', { class: 'base' });
        const button = el('button', { type: 'button', class: 'thumb', role: 'gridcell', tabindex: -1, 'data-layer': l, 'data-head': h,
          onclick: () => this.#intents.select(l, h) },
        el('span', { class: 'which', text: `H${h + 1}` }), canvas, label, base);
        const about = el('span', { id: `head-about-${l}-${h}` });
        button.setAttribute('aria-describedby', about.id);
        this.#about.append(about);
        cells.push({ button, canvas, label, base, about });
        row.append(button);
      }
      this.#cells.push(cells);
      rows.push(row);
    }
    this.#grid.replaceChildren(...rows);
  }

  #onKey(e) {
    const button = e.target.closest?.('button.thumb');
    if (!button) return;
    const l = Number(button.dataset.layer), h = Number(button.dataset.head);
    const layers = this.#cells.length, heads = this.#cells[0].length;
    let to = null;
    if (MOVES[e.key]) to = [Math.min(layers - 1, Math.max(0, l + MOVES[e.key][0])), Math.min(heads - 1, Math.max(0, h + MOVES[e.key][1]))];
    else if (e.key === 'Home') to = [e.ctrlKey ? 0 : l, 0];
    else if (e.key === 'End') to = [e.ctrlKey ? layers - 1 : l, heads - 1];
    if (!to) return;
    e.preventDefault();
    const next = this.#cells[to[0]][to[1]].button;
    for (const row of this.#cells) for (const c of row) c.button.tabIndex = -1;
    next.tabIndex = 0;
    // focus() leaves a head that is on screen but under the sticky toolbar
    // where it is; 'nearest' with the toolbar as scroll margin brings it out.
    next.focus({ preventScroll: true });
    next.scrollIntoView?.({ block: 'nearest' });
    // Choosing follows the focus: the tables change as the arrows move.
    this.#intents.select(to[0], to[1]);
  }

  #renderPredictions(s) {
    if (s.kind === 'encoder') {
      // An encoder fills in a masked word: the mask panel in place of next-word guesses.
      this.#guesses = null;
      this.#mask ??= new MaskPanel((i) => this.#intents.mask(i));
      if (this.#predictions.firstChild !== this.#mask.element) this.#predictions.replaceChildren(this.#mask.element);
      this.#mask.render(s.mask);
      return;
    }
    if (this.#predictions.firstChild === this.#mask?.element) this.#predictions.replaceChildren();
    if (s.kind !== 'model') {
      this.#predictions.replaceChildren();
      this.#guesses = null;
      return;
    }
    this.#guesses ??= this.#buildPredictions();
    const g = this.#guesses;
    const t = s.tokens;
    this.#count = t.length;
    // Repeat remembered where the sentence ended; the mark stays while the tokens are that sentence twice.
    const from = this.#repeatFrom;
    const repeated = from > 0 && t.length > from && t.slice(from).every((w, k) => w === t[k]);
    if (!repeated) this.#repeatFrom = -1;
    // The rows stay while their count does (training repaints them many times a
    // second): only the texts and classes that changed are written.
    if (g.rowParts.length !== t.length) {
      g.rowParts = t.map(() => {
        const spans = [0, 1, 2].map((k) => el('span', { class: k === 0 ? 'top' : '' }));
        const parts = { tr: el('tr'), th: el('th', { scope: 'row' }), spans, next: el('td', { class: 'next' }) };
        parts.tr.append(parts.th, el('td', { class: 'guesses' }, ...spans), parts.next);
        return parts;
      });
      g.body.replaceChildren(...g.rowParts.map((r) => r.tr));
    }
    const rows = g.rowParts.map((r) => r.tr);
    s.predictions.forEach((top, i) => {
      const r = g.rowParts[i], next = t[i + 1];
      const right = next !== undefined && top[0].word === next;
      put(r.tr, 'className', next === undefined ? '' : right ? 'right' : 'wrong');
      if (repeated && i === from) r.tr.dataset.repeat = 'start';
      else delete r.tr.dataset.repeat;
      put(r.th, 'textContent', t[i]);
      r.spans.forEach((span, k) => put(span, 'textContent', top[k] ? `${top[k].word} ${fixed(top[k].probability, 2)}` : ''));
      put(r.next, 'textContent', next === undefined ? '?' : `${next} ${right ? '✓' : '✗'}`);
      const said = next === undefined ? 'not yet written' : `${next}, ${right ? 'guessed right' : 'guessed wrong'}`;
      if (r.next.getAttribute('aria-label') !== said) r.next.setAttribute('aria-label', said);
    });
    const right = s.predictions.filter((top, i) => t[i + 1] !== undefined && top[0].word === t[i + 1]).length;
    const note = s.truncated > 0 ? ` The model reads at most ${s.context} words; ${s.truncated === 1 ? 'the last word is' : `the last ${s.truncated} are`} left out.` : '';
    const where = repeated ? ' The repeat starts at the marked row.' : '';
    const ambiguous = ambiguityText(t);
    put(g.note, 'textContent', `The top 3 for the word after each word; ${right} of ${t.length - 1} right. Before a repeat it is anyone's guess; on the repeat, induction copies what came next last time.${where}${ambiguous}${note}`);
    // Whether rows hide below the fold changes with their count (or a scroll):
    // reading the box's height forces a layout, so training's repaints skip it.
    const more = g.rows !== rows.length;
    g.rows = rows.length;
    if (repeated && this.#scrollToRepeat) {
      this.#scrollToRepeat = false;
      // The guesses the learner pressed Repeat to see are the repeat's, below
      // the misses before it: the box scrolls so the sentence's last word tops
      // it, the mark under it and the repeat's guesses after.
      const box = g.box;
      box.scrollTop += rows[from - 1].getBoundingClientRect().top - box.getBoundingClientRect().top;
    }
    if (more) {
      // A box of fixed height with size containment: the rows training
      // rewrites are laid out inside it, not the page around it.
      const box = g.box;
      box.classList.remove('fixed');
      box.style.height = '';
      const height = box.offsetHeight;
      // Not laid out yet (hidden): measured again on the next render.
      if (height > 0) {
        box.style.height = `${height}px`;
        box.classList.add('fixed');
      } else g.rows = -1;
      markMore(box);
    }
  }

  #buildPredictions() {
    const note = el('p', { class: 'explanation' });
    const head = el('thead', {}, el('tr', {}, el('th', { scope: 'col', text: 'word' }), el('th', { scope: 'col', text: 'top 3 guesses' }), el('th', { scope: 'col', text: 'next' })));
    const body = el('tbody');
    const box = el('div', { class: 'scroll-y', onscroll: () => markMore(box) }, el('table', { class: 'guess-table', 'aria-label': 'next-word guesses' }, head, body));
    const more = el('p', { class: 'more-note', 'aria-hidden': 'true', text: 'more below: scroll the list ↓' });
    this.#predictions.replaceChildren(
      el('div', { class: 'row' },
        el('h3', { text: 'Next-word guesses' }),
        el('button', { type: 'button', class: 'repeat', text: 'Repeat', title: 'Append the sentence to itself', onclick: () => {
          this.#repeatFrom = this.#count;
          this.#scrollToRepeat = true;
          this.#intents.repeat();
        } })),
      note, box, more);
    return { note, body, box, rows: -1, rowParts: [] };
  }

  #renderTraining(s) {
    // Training from scratch is offered for the induction model only.
    if (s.kind !== 'model') {
      this.#train.replaceChildren();
      this.#trainParts = null;
      return;
    }
    if (!this.#trainParts) this.#trainParts = this.#buildTraining();
    const p = this.#trainParts;
    const t = s.training;
    p.play.disabled = !t || t.finished;
    p.step.disabled = !t || t.playing || t.finished;
    p.stop.hidden = !t;
    p.play.textContent = t?.playing ? 'Pause' : 'Play';
    p.play.setAttribute('aria-pressed', String(Boolean(t?.playing)));
    if (!t) {
      p.status.textContent = `Showing a model trained for ${s.steps} steps. Train a fresh one and watch its heads form.`;
      p.curve.replaceChildren();
      p.curve.classList.add('empty');
      return;
    }
    p.curve.classList.remove('empty');
    const last = t.losses.length ? t.losses[t.losses.length - 1] : null;
    // The step size decays to zero over the run (model-worker.js): at its end more steps would not change the model.
    const done = t.finished ? ` · done: the step size has decayed to zero over ${t.total} steps, so more would not change the model` : '';
    put(p.status, 'textContent', `step ${t.step}${last === null ? '' : ` · loss ${fixed(last, 3)}`}${t.accuracy === null ? '' : ` · accuracy on repeats ${fixed(t.accuracy, 2)}`}${done}`);
    drawCurve(p.curve, t.losses);
  }

  #buildTraining() {
    const seed = el('input', { type: 'number', min: 0, max: 4294967295, step: 1, value: 1, class: 'tiny', 'aria-label': 'seed of the fresh model' });
    const fresh = el('button', { type: 'button', text: 'Train from scratch', onclick: () => {
      const v = Number(seed.value);
      this.#intents.train(Number.isInteger(v) && v >= 0 && v <= 0xffffffff ? v : 0);
    } });
    const play = el('button', { type: 'button', text: 'Play', onclick: () => this.#intents.play() });
    const step = el('button', { type: 'button', text: 'Step', title: 'Ten training steps', onclick: () => this.#intents.step() });
    const stop = el('button', { type: 'button', text: 'Back to the trained model', onclick: () => this.#intents.stop() });
    const status = el('p', { class: 'model-status', 'aria-live': 'polite' });
    const curve = svg('svg', { class: 'loss-curve', viewBox: `0 0 ${CURVE.width} ${CURVE.height}`, role: 'img', 'aria-label': 'training loss by step' });
    this.#train.replaceChildren(
      el('h3', { text: 'Train from scratch' }),
      el('div', { class: 'row' }, fresh, el('label', { class: 'field' }, el('span', { text: 'seed' }), seed), play, step, stop),
      status, curve);
    return { play, step, stop, status, curve };
  }
}

// Induction copies the word that followed the current word's earlier
// occurrence: a word that occurred more than once, followed by different
// words, leaves two to copy. Says which, for the guesses' note.
function ambiguityText(words) {
  const followers = new Map(); // word -> the words that followed it so far, in order
  const said = new Map();
  words.forEach((w, i) => {
    const seen = followers.get(w) ?? [];
    if (new Set(seen).size > 1 && !said.has(w)) said.set(w, [...new Set(seen)]);
    if (i + 1 < words.length) followers.set(w, [...seen, words[i + 1]]);
  });
  if (said.size === 0) return '';
  const quote = (x) => `“${x}”`;
  const list = (xs) => (xs.length === 2 ? `${xs[0]} and ${xs[1]}` : `${xs.slice(0, -1).join(', ')} and ${xs[xs.length - 1]}`);
  return ' ' + [...said].map(([w, next]) => `${quote(w)} occurred more than once, followed by ${list(next.map(quote))}: copying what came next is ambiguous there, so the model may guess either.`).join(' ');
}

// Writes a property only when it changes: every write of a text marks it
// for layout, and training repaints the view many times a second.
function put(node, key, value) {
  if (node[key] !== value) node[key] = value;
}

// Marks a scroll box that has rows below its fold (its fade and note show).
function markMore(box) {
  box.classList.toggle('more', box.scrollTop + box.clientHeight < box.scrollHeight - 1);
}

// Why a trained model's head has no scale slider, in the model view's text.
function fixedScaleText({ value, dk }) {
  return `Every head's scale is 1/√${dk} = ${fixed(value, 3)}, fixed: the model learned its weights at that scale, and its guesses are computed with it, so another scale would show a head the model does not have.`;
}

// The text colour as [r, g, b]: a figure takes the page's, so light and
// dark pages, and the element's own schemes, each get legible ink.
function inkOf(node) {
  const rgb = /rgba?\((\d+),\s*(\d+),\s*(\d+)/.exec(globalThis.getComputedStyle?.(node).color ?? '');
  return rgb ? [Number(rgb[1]), Number(rgb[2]), Number(rgb[3])] : [0, 0, 0];
}

// One pixel per weight (per block of weights, their largest, past
// THUMB_MAX tokens), scaled up by CSS: ink whose alpha is the weight, on
// the transparent canvas over what is behind the button.
function drawPattern(canvas, m, ink) {
  const { size, alpha } = thumbnailOf(m);
  if (canvas.width !== size) {
    canvas.width = size;
    canvas.height = size;
  }
  const ctx = canvas.getContext('2d');
  if (!ctx) return;
  const image = ctx.createImageData(size, size);
  const words = new Uint32Array(image.data.buffer);
  const rgb = ((ink[2] & 255) << 16) | ((ink[1] & 255) << 8) | (ink[0] & 255);
  for (let p = 0; p < alpha.length; p++) words[p] = ((alpha[p] << 24) | rgb) >>> 0;
  ctx.putImageData(image, 0, 0);
}

// The least of 1, 2, 5 times a power of ten that is at least x.
function niceAbove(x) {
  const p = 10 ** Math.floor(Math.log10(x));
  return [1, 2, 5, 10].map((m) => m * p).find((v) => v >= x);
}

// The loss by step with numbered axes; the drop as the induction heads form shows as a cliff.
function drawCurve(node, losses) {
  const { width, height, left, right, top, bottom } = CURVE;
  // The step axis ends at 100, 200, 500, 1000, ...: it stays put for a while as training goes on.
  const steps = niceAbove(Math.max(100, losses.length));
  const max = Math.max(1, Math.ceil(Math.max(...losses.slice(0, 50), 0)));
  const x = (i) => left + ((width - left - right) * i) / steps;
  const y = (v) => top + (height - top - bottom) * (1 - Math.min(v, max) / max);
  const parts = [
    svg('line', { class: 'axis', x1: left, y1: top, x2: left, y2: height - bottom }),
    svg('line', { class: 'axis', x1: left, y1: height - bottom, x2: width - right, y2: height - bottom }),
    svg('text', { x: (left + width) / 2, y: height - 2, 'text-anchor': 'middle', text: 'step' }),
    svg('text', { x: 4, y: top + 8, text: 'loss' }),
  ];
  for (const v of [0, max / 2, max]) parts.push(svg('text', { x: left - 4, y: y(v) + 4, 'text-anchor': 'end', text: fixed(v, v === max / 2 && max % 2 ? 1 : 0) }));
  for (const s of [0, Math.round(steps / 2), steps]) parts.push(svg('text', { x: x(s), y: height - bottom + 14, 'text-anchor': 'middle', text: String(s) }));
  // At most one point per SVG unit of width: a mean over each run of steps.
  const per = Math.max(1, Math.ceil(losses.length / (width - left - right)));
  const points = [];
  for (let i = 0; i < losses.length; i += per) {
    let sum = 0, count = 0;
    for (let k = i; k < Math.min(losses.length, i + per); k++, count++) sum += losses[k];
    points.push(`${x(i + count / 2).toFixed(1)},${y(sum / count).toFixed(1)}`);
  }
  // The axes stay while their numbers do; training moves the line alone.
  const axes = `${steps}:${max}`;
  let line = node.querySelector('polyline');
  if (node.dataset.axes !== axes || !line) {
    node.dataset.axes = axes;
    line = svg('polyline', { class: 'loss' });
    node.replaceChildren(...parts, line);
  }
  line.setAttribute('points', points.join(' '));
}
