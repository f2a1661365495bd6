// train-view.js - the Train part of <attention-explorer>: choose a
// target for the weights of head 1 (paint it, or a preset), then step or
// play gradient descent on W_Q and W_K; every step runs the forward and the
// backward in wasm (train.js) and hands the new weights to the
// explorer through its public `inputs` property, so its lines view and
// tables repaint from them. Shows the loss (number and plot), the target
// and current weights, and dW_Q, dW_K as heatmaps whose cells explain
// themselves (a gradient entry as its sum over tokens).
//
// Its own settings live in the host's train-target, train-optimizer and
// train-lr attributes (so index.html keeps them in its URL): read in sync(),
// written when the learner changes them.
//
// It talks to its host only through the element's public API: `state`
// (tokens, X, W_Q, W_K), `config` (dk, causal, scale), `inputs`, and the
// `positions` and `embeddings` settings, which the presets turn on where a
// pattern needs them (previous token needs positions, same word needs one
// embedding per word). User text (tokens) enters the DOM only through
// textContent.

import { heatClass, maxAbs } from './colors.js';
import { headColumns } from '../worked/computation.js';
import { Matrix } from '../core/matrix.js';
import { LossPlot } from './loss-plot.js';
import { deriveGradient } from '../worked/derivation.js';
import { render as renderDerivation } from './derivation-view.js';
import {
  PRESETS, TRAIN_DEFAULTS, Trainer, formatTarget, gradientTerms, parseTarget, presetTarget, targetCells, targetFromCells,
} from '../worked/train.js';

/** Styles of the Train part (the host adds them to its shadow root). */
export { TRAIN_STYLES } from './train-styles.js';

const PAINT = 'paint';
// What train-target accepts, for the notice that refuses anything else.
const TARGET_FORMS = `${PRESETS.filter((p) => p !== 'attend-to').join(', ')}, attend-to:<word> or paint:<row>-<col>,...`;
const PLAY_RATE = 60; // steps a second while playing
const RESTART_ATTRIBUTES = ['seed', 'd-model', 'dk', 'heads', 'kv-heads'];
const LR = Object.freeze({ min: -3, max: 0, step: 0.05 }); // log10 of the learning rate

function h(doc, tag, attrs = {}, ...children) {
  const node = doc.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === 'text') node.textContent = value;
    else if (value === true) node.setAttribute(key, '');
    else if (value !== false && value != null) node.setAttribute(key, String(value));
  }
  for (const child of children) node.append(child);
  return node;
}

/** The Train part for one explorer element. */
export class TrainPanel {
  #host;
  #attn;
  #doc;
  #ui = {};
  #cells = []; // target columns per row
  #preset = 'previous-token';
  #word = null;
  #settings = { optimizer: TRAIN_DEFAULTS.optimizer, learningRate: TRAIN_DEFAULTS.learningRate, learn: [...TRAIN_DEFAULTS.learn] };
  #trainer = null;
  #start = null; // { inputs } of the host when training began, for reset
  #x = null; // the host's X the trainer learns on
  #setup = ''; // the host's sizes, causal, scale, window, softcap, offset and mask the trainer learns with
  #tokens = [];
  #last = null; // the last evaluate() result
  #losses = [];
  #timer = 0;
  #painting = false;
  #applied = { target: null, optimizer: null, lr: null }; // the attribute texts last read or written
  #observer = null;
  #plot = null; // LossPlot

  /**
   * @param {{ attn: import('../attention.js').Attention, host: HTMLElement, document?: Document }} options
   *   host: an <attention-explorer> (its state, config and inputs are used)
   */
  constructor({ attn, host, document = globalThis.document }) {
    this.#attn = attn;
    this.#host = host;
    this.#doc = document;
    this.#build();
    // New sizes or a new seed: the learnt W_Q and W_K no longer fit (or are
    // not what the learner asked for), so training starts over from the draw.
    if (typeof MutationObserver !== 'undefined') {
      this.#observer = new MutationObserver(() => this.reset());
      this.#observer.observe(host, { attributes: true, attributeFilter: RESTART_ATTRIBUTES });
    }
  }

  /** The part's root element, to be placed by the host. */
  get element() {
    return this.#ui.root;
  }

  /** Loss after each step since the last reset. */
  get losses() {
    return [...this.#losses];
  }

  /** The target as columns per row. */
  get cells() {
    return this.#cells.map((row) => [...row]);
  }

  get playing() {
    return this.#timer !== 0;
  }

  /** Re-reads the host after it changed (new tokens, X or sizes restart training). */
  sync() {
    const state = this.#host.state;
    if (!state) return;
    // Every update hands out a new X object: the trainer (and its optimizer's
    // state) stays while X holds the same numbers.
    if (this.#trainer && (!sameNumbers(state.X, this.#x) || this.#hostSetup() !== this.#setup)) {
      this.#trainer = null;
      // A preset's target keeps to the keys the rows may see (causal, window, offset).
      if (this.#preset !== PAINT && this.#hostSetup() !== this.#setup) this.#applyPreset();
      this.#ensureTrainer();
    }
    const tokens = state.tokens;
    if (tokens.join('\u0000') !== this.#tokens.join('\u0000')) {
      const first = this.#tokens.length === 0;
      this.#tokens = [...tokens];
      // The default target's needs (positions for previous token) on first show.
      if (first && this.#host.getAttribute('train-target') === null) this.#setPreset(this.#preset);
      this.#trainer = null;
      this.#start = null;
      this.#losses = [];
      if (this.#preset === PAINT) this.#cells = tokens.map(() => []);
      else this.#applyPreset();
      this.#fillWords();
      this.#buildTargetTable();
      this.#ensureTrainer();
    }
    this.#readAttributes();
    if (!this.#trainer) this.#ensureTrainer(); // the loss and gradients at the current weights
    this.#paint();
  }

  /** Sets or clears the target cell (i, j): row i then attends to j alone. Painting on a preset's
   * target changes that target. */
  paint(i, j) {
    this.#setPreset(PAINT);
    const row = this.#cells[i];
    this.#cells[i] = row.length === 1 && row[0] === j ? [] : [j];
    this.#retarget();
    this.#writeTarget();
  }

  /** Chooses a preset (one of PRESETS) and, for attend-to, the word; 'paint' clears the grid. */
  setPreset(name, word) {
    if (name !== PAINT && !PRESETS.includes(name)) throw new RangeError(`preset must be paint or one of ${PRESETS.join(', ')}, got ${JSON.stringify(name)}`);
    if (word !== undefined) this.#word = word;
    this.#setPreset(name);
    if (name === PAINT) this.#cells = this.#tokens.map(() => []); // a blank grid to paint on
    else this.#applyPreset();
    this.#retarget();
    this.#writeTarget();
  }

  #writeTarget() {
    const text = formatTarget({ preset: this.#preset, word: this.#word, cells: this.#cells });
    this.#write('target', 'train-target', text);
  }

  #write(key, attr, text) {
    this.#applied[key] = text;
    if (this.#host.getAttribute(attr) !== text) this.#host.setAttribute(attr, text);
  }

  // The host's train-* attributes, when they changed from outside (the URL,
  // a page script): applied without writing them back.
  #readAttributes() {
    const host = this.#host, ui = this.#ui;
    const target = host.getAttribute('train-target');
    if (target !== null && target !== this.#applied.target) {
      this.#applied.target = target;
      const t = parseTarget(target, this.#tokens.length);
      const good = t && (t.preset !== 'attend-to' || this.#tokens.includes(t.word));
      // A target the part cannot draw is refused aloud; the one shown stays.
      ui.notice.textContent = good ? '' : `train-target="${target}" is refused: it takes ${TARGET_FORMS}` +
        `${t?.preset === 'attend-to' ? ' (attend-to: one of the words shown)' : ''}; the target stays ${formatTarget({ preset: this.#preset, word: this.#word, cells: this.#cells })}.`;
      ui.notice.hidden = good;
      if (good) {
        if (t.word !== undefined) this.#word = t.word;
        this.#setPreset(t.preset);
        if (t.cells) this.#cells = t.cells;
        else this.#applyPreset();
        if (t.word !== undefined) ui.word.value = t.word;
        this.#retarget();
      }
    }
    const optimizer = host.getAttribute('train-optimizer');
    if (optimizer !== null && optimizer !== this.#applied.optimizer) {
      this.#applied.optimizer = optimizer;
      if (optimizer === 'adam' || optimizer === 'sgd') {
        ui.optimizer.value = optimizer;
        this.#change({ optimizer });
      }
    }
    const lr = host.getAttribute('train-lr');
    if (lr !== null && lr !== this.#applied.lr) {
      this.#applied.lr = lr;
      const x = Number(lr);
      if (x > 0 && Number.isFinite(x)) {
        ui.lr.value = String(Math.log10(x));
        ui.lrText.textContent = String(x);
        this.#change({ learningRate: x });
      }
    }
  }

  /** One step of gradient descent; returns the loss before it. */
  step() {
    const loss = this.#advance();
    if (Number.isNaN(loss)) return loss;
    this.#pushWeights();
    this.#paint();
    return loss;
  }

  // One optimizer step without telling the host or repainting.
  #advance() {
    const trainer = this.#ensureTrainer();
    if (!trainer) return NaN;
    const r = trainer.step();
    this.#losses.push(r.loss);
    this.#last = trainer.evaluate();
    return r.loss;
  }

  /**
   * Plays at PLAY_RATE steps a second until pause(): each animation frame
   * takes the steps that are due (at most 4, so a slow frame does not
   * snowball), then the host repaints once. The trajectory is the one
   * step() by step() gives.
   */
  play() {
    if (this.#timer) return;
    const raf = globalThis.requestAnimationFrame ?? ((f) => setTimeout(f, 16));
    const start = performance.now();
    let done = 0;
    const tick = () => {
      if (!this.#timer) return;
      const due = Math.floor(((performance.now() - start) * PLAY_RATE) / 1000) + 1 - done;
      let stepped = false;
      for (let k = 0; k < Math.min(due, 4); k++) {
        if (Number.isNaN(this.#advance())) break;
        stepped = true;
        done++;
      }
      if (stepped) {
        this.#pushWeights();
        this.#paint();
      }
      this.#timer = raf(tick);
    };
    this.#timer = raf(tick);
    this.#ui.play.textContent = 'Pause';
    this.#ui.play.setAttribute('aria-pressed', 'true');
  }

  pause() {
    if (!this.#timer) return;
    (globalThis.cancelAnimationFrame ?? clearTimeout)(this.#timer);
    this.#timer = 0;
    this.#ui.play.textContent = 'Play';
    this.#ui.play.setAttribute('aria-pressed', 'false');
  }

  /** Back to the weights before training (and the host's own inputs). */
  reset() {
    this.pause();
    if (this.#start) this.#host.inputs = this.#start.inputs;
    this.#trainer = null;
    this.#start = null;
    this.#last = null;
    this.#losses = [];
    this.#paint();
  }

  /** Stops playing and watching the host; the host calls it when the part goes. */
  dispose() {
    this.pause();
    this.#observer?.disconnect();
  }

  // ---- training ------------------------------------------------------------

  #setPreset(name) {
    this.#preset = name;
    this.#ui.preset.value = name;
    this.#ui.wordField.hidden = name !== 'attend-to';
    // The host recomputes X (a microtask later) and calls sync(), which
    // restarts the trainer on the new X.
    if (name === 'previous-token' && !this.#host.positions) this.#host.positions = true;
    // Same word needs one embedding per word and positions: without them the
    // two rows of a repeated word are equal and must split their weight evenly.
    if (name === 'same-word') {
      if (this.#host.embeddings !== 'word') this.#host.embeddings = 'word';
      if (!this.#host.positions) this.#host.positions = true;
    }
  }

  #applyPreset() {
    if (this.#preset === PAINT || this.#tokens.length === 0) return;
    if (this.#word === null || !this.#tokens.includes(this.#word)) this.#word = this.#tokens[0];
    const config = this.#host.config;
    this.#cells = targetCells(presetTarget(this.#preset, this.#tokens, {
      word: this.#word, causal: config?.causal === true, window: config?.window ?? null, queryOffset: config?.queryOffset ?? 0,
    }));
  }

  // A new target keeps the weights learnt so far: only the loss changes.
  #retarget() {
    this.#trainer = null;
    this.#losses = [];
    this.#ensureTrainer(); // the loss and gradients before the first step
    this.#paint();
  }

  #ensureTrainer() {
    if (this.#trainer) return this.#trainer;
    const state = this.#host.state, config = this.#host.config;
    if (!state || !config || this.#cells.every((row) => row.length === 0)) return null;
    const n = state.tokens.length, dk = config.dk, dv = config.dv;
    if (!this.#start) this.#start = { inputs: this.#host.inputs };
    // Head 1 learns: its columns of W_Q and W_K (kv head 1 of W_K and W_V).
    this.#x = state.X;
    this.#setup = this.#hostSetup();
    const target = targetFromCells(n, this.#cells);
    // W_V learns to copy: the output of token i should be the first d_v
    // columns of X of the tokens its target row points at.
    const copy = this.#settings.learn.includes('wv') && dv <= state.X.cols;
    this.#trainer = new Trainer(this.#attn, {
      x: state.X, wq: headColumns(state.WQ, 0, dk), wk: headColumns(state.WK, 0, dk), target,
      ...(copy ? { wv: headColumns(state.WV, 0, dv), targetOutput: copyTarget(target, state.X, dv) } : {}),
      learn: copy ? this.#settings.learn : this.#settings.learn.filter((m) => m !== 'wv'),
      causal: config.causal, scale: config.scale, mask: this.#host.mask,
      window: config.window, softcap: config.softcap, queryOffset: config.queryOffset, rope: config.rope,
      optimizer: this.#settings.optimizer, learningRate: this.#settings.learningRate,
    });
    this.#last = this.#trainer.evaluate();
    return this.#trainer;
  }

  #hostSetup() {
    const config = this.#host.config;
    return JSON.stringify([config?.dModel, config?.dk, config?.heads, config?.kvHeads, config?.causal, config?.scale, config?.window,
      config?.softcap, config?.queryOffset, config?.rope, this.#host.mask]);
  }

  // The trainer's head-1 weights into the host's W_Q, W_K (and W_V).
  #pushWeights() {
    const state = this.#host.state, p = this.#trainer.params;
    const wq = Matrix.from(state.WQ), wk = Matrix.from(state.WK);
    setColumns(wq, 0, p.wq);
    setColumns(wk, 0, p.wk);
    const next = { ...this.#host.inputs, WQ: wq, WK: wk };
    if (p.wv && this.#settings.learn.includes('wv')) {
      next.WV = Matrix.from(state.WV);
      setColumns(next.WV, 0, p.wv);
    }
    this.#host.inputs = next;
  }

  // ---- DOM -----------------------------------------------------------------

  #build() {
    const d = this.#doc, ui = this.#ui;
    const options = (values, labels = values) => values.map((v, i) => h(d, 'option', { value: v, text: labels[i] }));
    ui.preset = h(d, 'select', { 'aria-label': 'target' },
      ...options([PAINT, ...PRESETS], ['painted', 'previous token', 'first token', 'same word', 'attend to a word']));
    ui.preset.value = this.#preset;
    ui.preset.addEventListener('change', () => this.setPreset(ui.preset.value));
    ui.word = h(d, 'select', { 'aria-label': 'word to attend to' });
    ui.word.addEventListener('change', () => this.setPreset('attend-to', ui.word.value));
    ui.wordField = h(d, 'label', {}, h(d, 'span', { text: 'word' }), ui.word);
    ui.wordField.hidden = true;
    ui.optimizer = h(d, 'select', { 'aria-label': 'optimizer' }, ...options(['adam', 'sgd'], ['Adam', 'SGD + momentum']));
    ui.optimizer.value = this.#settings.optimizer;
    ui.optimizer.addEventListener('change', () => {
      this.#change({ optimizer: ui.optimizer.value });
      this.#write('optimizer', 'train-optimizer', ui.optimizer.value);
    });
    ui.lr = h(d, 'input', { type: 'range', min: LR.min, max: LR.max, step: LR.step, 'aria-label': 'learning rate' });
    ui.lr.value = String(Math.log10(this.#settings.learningRate));
    ui.lrText = h(d, 'output', { text: this.#settings.learningRate.toPrecision(2) });
    ui.lr.addEventListener('input', () => {
      const lr = Number((10 ** Number(ui.lr.value)).toPrecision(2));
      ui.lrText.textContent = String(lr);
      this.#change({ learningRate: lr });
      this.#write('lr', 'train-lr', String(lr));
    });
    const check = (label, on, apply) => {
      const box = h(d, 'input', { type: 'checkbox', checked: on });
      box.addEventListener('change', () => apply(box.checked));
      return h(d, 'label', {}, box, h(d, 'span', { text: label }));
    };
    const learn = (name) => (on) => this.#change({ learn: on ? [...new Set([...this.#settings.learn, name])] : this.#settings.learn.filter((x) => x !== name) });
    ui.step = h(d, 'button', { type: 'button', text: 'Step' });
    ui.step.addEventListener('click', () => this.step());
    ui.play = h(d, 'button', { type: 'button', text: 'Play', 'aria-pressed': 'false' });
    ui.play.addEventListener('click', () => (this.playing ? this.pause() : this.play()));
    ui.reset = h(d, 'button', { type: 'button', text: 'Reset' });
    ui.reset.addEventListener('click', () => this.reset());
    const field = (label, input) => h(d, 'label', {}, h(d, 'span', { text: label }), input);
    const controls = h(d, 'div', { class: 'train-controls', part: 'train-controls' },
      field('target', ui.preset), ui.wordField, field('optimizer', ui.optimizer),
      h(d, 'label', {}, h(d, 'span', { text: 'learning rate' }), ui.lr, ui.lrText),
      check('W_Q learns', true, learn('wq')), check('W_K learns', true, learn('wk')),
      check('W_V learns to copy the target\'s X', false, learn('wv')),
      h(d, 'span', { class: 'train-buttons' }, ui.step, ui.play, ui.reset));
    ui.steps = h(d, 'span', { text: '0' });
    ui.loss = h(d, 'span', { text: '-' });
    ui.matched = h(d, 'span', { class: 'matched' });
    const status = h(d, 'div', { class: 'train-status', part: 'train-status', role: 'status' }, 'step ', ui.steps, ' · loss ', ui.loss, ' ', ui.matched);
    this.#plot = new LossPlot(d);
    ui.target = h(d, 'table', { class: 'train-target' });
    ui.weights = h(d, 'table');
    ui.dwq = h(d, 'table');
    ui.dwk = h(d, 'table');
    ui.dwv = h(d, 'table');
    ui.dwvFigure = h(d, 'figure', { part: 'train-gradient' }, h(d, 'figcaption', { text: 'dW_V' }), ui.dwv);
    ui.dwvFigure.hidden = true;
    ui.derivation = h(d, 'p', { class: 'train-derivation', 'aria-live': 'polite' });
    ui.derivationFigure = h(d, 'div', { class: 'train-derivation-figure' });
    const figure = (caption, table, part) => h(d, 'figure', { part }, h(d, 'figcaption', { text: caption }), table);
    ui.notice = h(d, 'p', { class: 'train-notice', role: 'alert' });
    ui.notice.hidden = true;
    ui.root = h(d, 'section', { class: 'train', part: 'train', 'aria-label': 'Train' },
      h(d, 'h3', { text: 'Train: gradient descent on the weights of head 1' }), ui.notice, controls, status,
      h(d, 'div', { class: 'train-grids' },
        this.#plot.element,
        figure('target (click or drag to paint a row)', ui.target, 'train-target'), ui.weightsFigure = figure('weights now', ui.weights, 'train-weights'),
        h(d, 'div', { class: 'train-gradients' },
          figure('dW_Q (hover: its sum over tokens)', ui.dwq, 'train-gradient'), figure('dW_K', ui.dwk, 'train-gradient'), ui.dwvFigure)),
      h(d, 'div', { part: 'train-derivation' }, ui.derivation, ui.derivationFigure));
    ui.target.addEventListener('pointerdown', (e) => {
      const cell = e.target.closest?.('td[data-i]');
      if (!cell) return;
      this.#painting = true;
      this.paint(Number(cell.dataset.i), Number(cell.dataset.j));
    });
    ui.target.addEventListener('pointerover', (e) => {
      const cell = e.target.closest?.('td[data-i]');
      if (!this.#painting || !cell) return;
      const i = Number(cell.dataset.i), j = Number(cell.dataset.j);
      if (!(this.#cells[i].length === 1 && this.#cells[i][0] === j)) this.paint(i, j);
    });
    ui.target.addEventListener('keydown', (e) => {
      const cell = e.target.closest?.('td[data-i]');
      if (!cell || (e.key !== 'Enter' && e.key !== ' ')) return;
      e.preventDefault();
      this.paint(Number(cell.dataset.i), Number(cell.dataset.j));
    });
    this.#doc.addEventListener('pointerup', () => {
      this.#painting = false;
    });
    for (const [table, name] of [[ui.dwq, 'dW_Q'], [ui.dwk, 'dW_K']]) {
      const show = (e) => {
        const cell = e.target.closest?.('td[data-i]');
        if (cell) this.#derive(name, Number(cell.dataset.i), Number(cell.dataset.j));
      };
      table.addEventListener('pointerover', show);
      table.addEventListener('focusin', show);
    }
  }

  #change(settings) {
    Object.assign(this.#settings, settings);
    this.#trainer = null; // the next step starts a trainer (and optimizer) from the current weights
  }

  #fillWords() {
    const d = this.#doc;
    this.#ui.word.replaceChildren(...[...new Set(this.#tokens)].map((t) => h(d, 'option', { value: t, text: t })));
    if (this.#word !== null) this.#ui.word.value = this.#word;
  }

  #buildTargetTable() {
    const d = this.#doc, n = this.#tokens.length;
    const head = h(d, 'tr', {}, h(d, 'th'), ...this.#tokens.map((t) => h(d, 'th', { text: t, scope: 'col' })));
    const rows = this.#tokens.map((t, i) => h(d, 'tr', {}, h(d, 'th', { text: t, scope: 'row' }),
      ...Array.from({ length: n }, (_, j) => h(d, 'td', {
        class: 'goal', 'data-i': i, 'data-j': j, tabindex: 0, role: 'button',
        'aria-label': `${t} attends to ${this.#tokens[j]}`,
      }))));
    this.#ui.target.replaceChildren(h(d, 'tbody', {}, head, ...rows));
  }

  #paint() {
    const ui = this.#ui, n = this.#tokens.length;
    const target = targetFromCells(n, this.#cells);
    for (const td of ui.target.querySelectorAll('td[data-i]')) {
      const t = target.data[Number(td.dataset.i) * n + Number(td.dataset.j)];
      td.className = `goal ${heatClass(t, 'seq')}${t > 0 ? ' on' : ''}`;
      td.setAttribute('aria-pressed', String(t > 0));
    }
    ui.steps.textContent = String(this.#losses.length);
    const r = this.#last;
    ui.loss.textContent = r ? r.loss.toFixed(4) : '-';
    ui.matched.textContent = r?.matches ? 'matches the target' : '';
    this.#plot.update(this.#losses);
    // The explorer's own weights table shows them already when its weights part is on.
    const shown = (this.#host.getAttribute('show') ?? 'weights').split(/[\s,]+/).includes('weights');
    ui.weightsFigure.hidden = shown;
    this.#heatmap(ui.weights, r && !shown ? r.weights : null, this.#tokens, this.#tokens, 'weights');
    const dims = (m) => (m ? Array.from({ length: m.cols }, (_, c) => String(c)) : []);
    const rowsOf = (m) => (m ? Array.from({ length: m.rows }, (_, a) => String(a)) : []);
    this.#heatmap(ui.dwq, r?.grads.wq ?? null, rowsOf(r?.grads.wq), dims(r?.grads.wq), 'gradient');
    this.#heatmap(ui.dwk, r?.grads.wk ?? null, rowsOf(r?.grads.wk), dims(r?.grads.wk), 'gradient');
    ui.dwvFigure.hidden = !r?.grads.wv;
    this.#heatmap(ui.dwv, r?.grads.wv ?? null, rowsOf(r?.grads.wv), dims(r?.grads.wv), 'gradient');
  }

  #heatmap(table, m, rowLabels, colLabels, kind) {
    const d = this.#doc;
    if (!m) {
      table.replaceChildren();
      return;
    }
    // Colours follow the printed numbers: a gradient that prints as -0.000 is
    // drawn as zero, not as the largest of a row of tiny values.
    const digits = kind === 'weights' ? 2 : 3;
    const shown = Float32Array.from(m.data, (v) => Number(v.toFixed(digits)));
    const scale = kind === 'weights' ? 1 : maxAbs(shown);
    const head = h(d, 'tr', {}, h(d, 'th'), ...colLabels.map((c) => h(d, 'th', { text: c, scope: 'col' })));
    const rows = rowLabels.map((label, i) => h(d, 'tr', {}, h(d, 'th', { text: label, scope: 'row' }),
      ...colLabels.map((_, j) => {
        const v = m.data[i * m.cols + j], printed = shown[i * m.cols + j];
        return h(d, 'td', {
          class: kind === 'weights' ? heatClass(v, 'seq') : heatClass(printed / scale, 'div'),
          'data-i': i, 'data-j': j, tabindex: kind === 'weights' ? null : -1, text: v.toFixed(digits),
        });
      })));
    table.replaceChildren(h(d, 'tbody', {}, head, ...rows));
  }

  #derive(name, a, c) {
    const r = this.#last;
    if (!r || !this.#trainer) return;
    const dm = name === 'dW_Q' ? r.dq : r.dk;
    const t = gradientTerms(this.#x, dm, a, c, { name, tokens: this.#tokens });
    this.#ui.derivation.textContent = t.text;
    // The terms as signed bars: which tokens push this entry up, which down.
    this.#ui.derivationFigure.replaceChildren(renderDerivation(deriveGradient(this.#x, dm, a, c, { name, tokens: this.#tokens }), this.#doc));
  }
}

// (n, dv): row i = sum_j target[i][j] x[j][0..dv), what W_V learns to give.
function copyTarget(target, x, dv) {
  const y = new Matrix(target.rows, dv);
  for (let i = 0; i < target.rows; i++) {
    for (let j = 0; j < target.cols; j++) {
      const t = target.data[i * target.cols + j];
      if (t === 0) continue;
      for (let c = 0; c < dv; c++) y.data[i * dv + c] += t * x.data[j * x.cols + c];
    }
  }
  return y;
}

function sameNumbers(a, b) {
  if (!a || !b || a.rows !== b.rows || a.cols !== b.cols) return false;
  for (let k = 0; k < a.data.length; k++) if (!Object.is(a.data[k], b.data[k])) return false;
  return true;
}

function setColumns(m, start, part) {
  for (let i = 0; i < m.rows; i++) m.data.set(part.data.subarray(i * part.cols, (i + 1) * part.cols), i * m.cols + start);
}
