// explorer-element.js - the <attention-explorer> custom element class.
// web/explorer.js defines it; this file only declares it.
//
// Data flow: attributes/properties -> one config (checked by normalizeConfig)
// -> the wasm library computes every matrix -> tables rendered into the
// shadow root. Changes are batched into one recompute per microtask. User
// text only ever enters the DOM through textContent or attribute values.

import { loadAttention } from './attention.js';
import { heatClass, maxAbs } from './colors.js';
import { HANDBOOK, LIMITS, computeExample, drawInputs, normalizeConfig } from './example.js';
import { DIGITS, fixed, toCSV, toMarkdown, toNumpy } from './format.js';
import { Matrix, toMatrix } from './matrix.js';
import { layout, paint, toSVG } from './snapshot.js';
import { STYLES } from './explorer-styles.js';

export const STEPS = Object.freeze(['inputs', 'projections', 'scores', 'scaled', 'weights', 'output']);

const STEP_TITLES = {
  inputs: 'Inputs: X and the projection weights',
  projections: 'Projections: Q, K, V',
  scores: 'Step 1: raw scores Q Kᵀ',
  scaled: 'Step 2: scaled scores',
  weights: 'Step 3: attention weights',
  output: 'Step 4: output = weights × V',
};

export const DEFAULT_EXPLANATIONS = Object.freeze({
  inputs: 'Each token is one row of X, its embedding. Here the rows are random draws (numpy seed below), exactly as in the handbook; W_Q, W_K and W_V are the projections a model would learn, random here and scaled by 0.5. Click any number and type to change it.',
  projections: 'Q = X W_Q, K = X W_K, V = X W_V. Every token gets a query (what it is looking for), a key (what it offers to others) and a value (what it passes on when attended to).',
  scores: 'Row i, column j is the dot product of token i’s query with token j’s key: how well they match. Hover a number to see the sum.',
  scaled: 'Scores divided by √d_k (multiplied by the scale). Without it, scores grow with d_k and the softmax saturates into a one-hot row. Drag the scale slider: larger sharpens the weights, smaller flattens them.',
  weights: 'Softmax of each row: every row is positive and sums to 1, the share of attention token i pays to each token j. Click a cell to mask that pair out (and again to allow it).',
  output: 'Each token’s output is the weighted average of the value vectors, with its row of weights: a blend of the tokens it attends to.',
});

const ATTRIBUTES = ['tokens', 'seed', 'd-model', 'dk', 'dv', 'heads', 'kv-heads', 'causal', 'scale', 'step'];
const EDITABLE = new Set(['X', 'WQ', 'WK', 'WV']);
const MAX_TERMS = 8; // terms of a sum spelled out in an explanation

// One wasm instance serves every explorer on the page: calls are synchronous
// and results are copies, so they cannot interfere.
let shared;
function sharedAttention() {
  const wasm = AttentionExplorer.wasm;
  shared ??= loadAttention(wasm == null ? {} : { wasm });
  shared.catch(() => {
    shared = undefined;
  });
  return shared;
}

function wholeNumber(text, name) {
  if (!/^\s*\d+\s*$/.test(text)) throw new RangeError(`${name} must be a whole number, got "${text}"`);
  return Number(text);
}

function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (key === 'class') node.className = value;
    else if (key === 'text') node.textContent = value;
    else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else if (value === true) node.setAttribute(key, '');
    else if (value !== false && value !== undefined && value !== null) node.setAttribute(key, String(value));
  }
  for (const child of children) if (child) node.append(child);
  return node;
}

// So the module can be imported where there is no DOM (server rendering, Node).
const Base = globalThis.HTMLElement ?? class {};

export class AttentionExplorer extends Base {
  static get observedAttributes() {
    return ATTRIBUTES;
  }

  /**
   * Where the explorers on this page get their WebAssembly when the default
   * (../dist/ next to this module) does not fit, e.g. after a bundler moved the
   * files: a URL, string, bytes, Response or WebAssembly.Module, as
   * loadAttention's `wasm` option. Set it before the first element connects.
   */
  static wasm = null;

  #root;
  #ui = {};
  #attn = null;
  #loadError = null;
  #config = null; // last good config
  #state = null; // last good state
  #example = null; // computeExample result of the last good state
  #inputs = {}; // matrices set through the inputs property
  #edits = new Map(); // "X:i:j" -> number, typed into cells
  #editKey = ''; // seed and shapes the edits belong to
  #mask = null; // Uint8Array (n, n), 1 = may attend; null = all allowed
  #selected = 0; // selected query row
  #focus = null; // { id, i, j } of the focused cell, restored after a render
  #scheduled = false;
  #playTimer = 0;
  #explanations = { ...DEFAULT_EXPLANATIONS };
  #lastStep = 'all';
  #structure = ''; // what the built tables show; see #render
  #tables = new Map(); // id -> the cells of one built table

  constructor() {
    super();
    this.#root = this.attachShadow({ mode: 'open' });
    this.#buildSkeleton();
  }

  // ---- properties mirroring attributes -------------------------------------

  get tokens() {
    return this.getAttribute('tokens') ?? HANDBOOK.tokens.join(' ');
  }
  set tokens(value) {
    this.setAttribute('tokens', Array.isArray(value) ? value.join(' ') : String(value));
  }
  get seed() {
    return this.#config?.seed ?? HANDBOOK.seed;
  }
  set seed(value) {
    this.setAttribute('seed', String(value));
  }
  get dModel() {
    return this.#config?.dModel ?? HANDBOOK.dModel;
  }
  set dModel(value) {
    this.setAttribute('d-model', String(value));
  }
  get dk() {
    return this.#config?.dk ?? HANDBOOK.dk;
  }
  set dk(value) {
    this.setAttribute('dk', String(value));
  }
  get dv() {
    return this.#config?.dv ?? this.dk;
  }
  set dv(value) {
    if (value === null || value === undefined) this.removeAttribute('dv');
    else this.setAttribute('dv', String(value));
  }
  get heads() {
    return this.#config?.heads ?? 1;
  }
  set heads(value) {
    this.setAttribute('heads', String(value));
  }
  get kvHeads() {
    return this.#config?.kvHeads ?? this.heads;
  }
  set kvHeads(value) {
    if (value === null || value === undefined) this.removeAttribute('kv-heads');
    else this.setAttribute('kv-heads', String(value));
  }
  get causal() {
    return this.hasAttribute('causal');
  }
  set causal(value) {
    this.toggleAttribute('causal', Boolean(value));
  }
  get scale() {
    return this.#config?.scale ?? 1 / Math.sqrt(this.dk);
  }
  set scale(value) {
    if (value === null || value === undefined) this.removeAttribute('scale');
    else this.setAttribute('scale', String(value));
  }
  get step() {
    const s = this.getAttribute('step');
    return s !== null && STEPS.includes(s) ? s : 'all';
  }
  set step(value) {
    if (value === null || value === undefined || value === 'all') this.removeAttribute('step');
    else this.setAttribute('step', String(value));
  }

  /** Every matrix of the current computation (read-only); null before the first. */
  get state() {
    return this.#state;
  }

  /** Replace the random draws: { X?, WQ?, WK?, WV? } (Matrix, { rows, cols, data } or number[][]). */
  get inputs() {
    return { ...this.#inputs };
  }
  set inputs(value) {
    const next = {};
    if (value !== null && value !== undefined) {
      if (typeof value !== 'object') {
        this.#showMessage('inputs must be an object { X?, WQ?, WK?, WV? }');
        return;
      }
      for (const [key, m] of Object.entries(value)) {
        if (!EDITABLE.has(key)) {
          this.#showMessage(`inputs: unknown matrix "${key}" (use X, WQ, WK, WV)`);
          return;
        }
        try {
          if (m !== undefined && m !== null) next[key] = Matrix.from(m);
        } catch (err) {
          this.#showMessage(`inputs.${key}: ${err.message}`);
          return;
        }
      }
    }
    this.#inputs = next;
    this.#edits.clear();
    this.#schedule();
  }

  /** The keep-mask as boolean[][] (n, n); set null to allow every pair. */
  get mask() {
    const n = this.#state?.tokens.length ?? 0;
    return Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => !this.#mask || this.#mask[i * n + j] === 1));
  }
  set mask(value) {
    if (value === null || value === undefined) {
      this.#mask = null;
    } else {
      const n = this.#state?.tokens.length ?? value.length;
      if (!Array.isArray(value) || value.length !== n || value.some((r) => !Array.isArray(r) || r.length !== n)) {
        this.#showMessage(`mask must be boolean[][] of shape (${n}, ${n})`);
        return;
      }
      this.#mask = Uint8Array.from(value.flat(), (x) => (x ? 1 : 0));
    }
    this.#schedule();
  }

  /** Per-step explanation texts { inputs?, projections?, scores?, scaled?, weights?, output? }. Slots win over these. */
  get explanations() {
    return { ...this.#explanations };
  }
  set explanations(value) {
    this.#explanations = { ...DEFAULT_EXPLANATIONS };
    for (const step of STEPS) if (typeof value?.[step] === 'string') this.#explanations[step] = value[step];
    this.#structure = ''; // the texts live in the built sections: rebuild them
    this.#schedule();
  }

  // ---- lifecycle -------------------------------------------------------------

  connectedCallback() {
    if (!this.#attn) {
      // A microtask later, so a page can set AttentionExplorer.wasm right after
      // importing the module (importing defines the element and connects it).
      Promise.resolve().then(sharedAttention).then(
        (attn) => {
          this.#attn = attn;
          this.#loadError = null;
          this.#schedule();
        },
        (err) => {
          this.#loadError = err;
          this.#showMessage(`Could not load the WebAssembly module: ${err.message}`);
        },
      );
    }
    this.#schedule();
  }

  disconnectedCallback() {
    this.#stopPlaying();
  }

  attributeChangedCallback() {
    this.#schedule();
  }

  #schedule() {
    if (this.#scheduled) return;
    this.#scheduled = true;
    queueMicrotask(() => {
      this.#scheduled = false;
      try {
        this.#update();
      } catch (err) {
        // Nothing escapes to the page: show it and keep the last good view.
        this.#showMessage(`Something went wrong: ${err.message}`);
      }
    });
  }

  // ---- configuration and computation ----------------------------------------

  #readConfig() {
    const config = {};
    const tokens = this.getAttribute('tokens');
    if (tokens !== null) {
      config.tokens = tokens.split(/\s+/).filter(Boolean);
      if (config.tokens.length === 0) throw new RangeError('tokens: give at least one token');
      if (config.tokens.length > LIMITS.tokens) throw new RangeError(`tokens: at most ${LIMITS.tokens} tokens, got ${config.tokens.length}`);
    }
    const ints = { seed: 'seed', 'd-model': 'dModel', dk: 'dk', dv: 'dv', heads: 'heads', 'kv-heads': 'kvHeads' };
    for (const [attr, key] of Object.entries(ints)) {
      const text = this.getAttribute(attr);
      if (text !== null) config[key] = wholeNumber(text, attr);
    }
    config.causal = this.hasAttribute('causal');
    const scale = this.getAttribute('scale');
    if (scale !== null && scale.trim() !== '') {
      const x = Number(scale);
      if (!Number.isFinite(x)) throw new RangeError(`scale must be a finite number, got "${scale}"`);
      config.scale = x;
    }
    const step = this.getAttribute('step');
    if (step !== null && step !== 'all' && !STEPS.includes(step)) {
      throw new RangeError(`step must be one of all, ${STEPS.join(', ')}; got "${step}"`);
    }
    return normalizeConfig(config);
  }

  #update() {
    let config;
    try {
      config = this.#readConfig();
    } catch (err) {
      this.#showMessage(err.message);
      return;
    }
    if (!this.#attn) {
      if (!this.#loadError) this.#showMessage('');
      return;
    }
    const n = config.tokens.length;
    const shapes = { X: [n, config.dModel], WQ: [config.dModel, config.heads * config.dk], WK: [config.dModel, config.kvHeads * config.dk], WV: [config.dModel, config.kvHeads * config.dv] };
    // Typed-in numbers belong to one draw; a new seed or new shapes start afresh.
    const editKey = JSON.stringify([config.seed, shapes]);
    if (editKey !== this.#editKey) {
      this.#edits.clear();
      this.#editKey = editKey;
    }
    const drawn = drawInputs(config);
    const inputs = {};
    try {
      for (const key of EDITABLE) {
        const base = this.#inputs[key] ? toMatrix(this.#inputs[key], `inputs.${key}`, ...shapes[key]) : drawn[key];
        inputs[key] = new Matrix(base.rows, base.cols, base.data.slice());
      }
    } catch (err) {
      this.#showMessage(err.message);
      return;
    }
    for (const [key, value] of this.#edits) {
      const [name, i, j] = key.split(':');
      inputs[name].data[Number(i) * inputs[name].cols + Number(j)] = value;
    }
    if (this.#mask && this.#mask.length !== n * n) this.#mask = null;
    const mask = this.#mask && this.#mask.includes(0) ? this.#mask : undefined;
    const ex = computeExample(this.#attn, config, inputs, mask);
    this.#config = config;
    this.#example = ex;
    if (this.#selected >= n) this.#selected = 0;
    const pick = (key) => (config.heads === 1 ? ex.heads[0][key] : ex.heads.map((h) => h[key]));
    this.#state = Object.freeze({
      tokens: [...ex.tokens], X: ex.X, WQ: ex.WQ, WK: ex.WK, WV: ex.WV, Q: ex.Q, K: ex.K, V: ex.V,
      scores: pick('scores'), scaled: pick('scaled'), weights: pick('weights'), output: pick('output'),
    });
    this.#showMessage('');
    this.#render();
    this.dispatchEvent(new CustomEvent('attention-change', {
      bubbles: true,
      composed: true,
      detail: {
        tokens: [...config.tokens], seed: config.seed, dModel: config.dModel, dk: config.dk, dv: config.dv,
        heads: config.heads, kvHeads: config.kvHeads, causal: config.causal, scale: config.scale, step: this.step,
        mask: this.#mask && this.#mask.includes(0) ? this.mask : null, edited: this.#edits.size > 0 || Object.keys(this.#inputs).length > 0,
      },
    }));
  }

  // ---- the skeleton: styles, controls, message, view --------------------------

  #buildSkeleton() {
    const style = el('style', { text: STYLES });
    const ui = this.#ui;
    const field = (label, input) => el('label', { class: 'field' }, el('span', { text: label }), input);
    const number = (attr, min, max) => {
      const input = el('input', { type: 'number', min, max, step: 1, inputmode: 'numeric' });
      input.addEventListener('change', () => this.setAttribute(attr, input.value.trim()));
      return input;
    };
    ui.tokens = el('input', { type: 'text', spellcheck: 'false', autocomplete: 'off', 'aria-describedby': 'tokens-help' });
    ui.tokens.addEventListener('change', () => this.setAttribute('tokens', ui.tokens.value));
    ui.tokens.addEventListener('keydown', (e) => {
      if (e.key === 'Enter') this.setAttribute('tokens', ui.tokens.value);
    });
    ui.seed = number('seed', 0, 4294967295);
    ui.dModel = number('d-model', 1, LIMITS.dModel);
    ui.dk = number('dk', 1, LIMITS.d);
    ui.dv = number('dv', 1, LIMITS.d);
    ui.heads = number('heads', 1, LIMITS.heads);
    ui.kvHeads = number('kv-heads', 1, LIMITS.heads);
    ui.scale = el('input', { type: 'range', min: 0, max: 2, step: 0.001, 'aria-label': 'scale' });
    ui.scale.addEventListener('input', () => this.setAttribute('scale', ui.scale.value));
    ui.scaleText = el('output', { class: 'scale-text' });
    ui.scaleReset = el('button', { type: 'button', text: '1/√dₖ', title: 'Reset the scale to 1/sqrt(d_k)', onclick: () => this.removeAttribute('scale') });
    ui.causal = el('input', { type: 'checkbox' });
    ui.causal.addEventListener('change', () => this.toggleAttribute('causal', ui.causal.checked));
    ui.resetMask = el('button', { type: 'button', text: 'Clear mask', onclick: () => { this.#mask = null; this.#schedule(); } });
    ui.resetEdits = el('button', { type: 'button', text: 'Undo edits', onclick: () => { this.#edits.clear(); this.#inputs = {}; this.#schedule(); } });
    ui.mode = el('button', { type: 'button', 'aria-pressed': 'false', onclick: () => { this.step = this.step === 'all' ? 'scores' : 'all'; } });
    ui.prev = el('button', { type: 'button', text: '◀ Previous', onclick: () => this.#move(-1) });
    ui.next = el('button', { type: 'button', text: 'Next ▶', onclick: () => this.#move(1) });
    ui.play = el('button', { type: 'button', text: 'Play', onclick: () => this.#togglePlay() });
    ui.stepNav = el('div', { class: 'step-nav', role: 'group', 'aria-label': 'steps' }, ui.prev, ui.next, ui.play);
    ui.savePNG = el('button', { type: 'button', text: 'Save PNG', onclick: () => this.#save('png') });
    ui.saveSVG = el('button', { type: 'button', text: 'Save SVG', onclick: () => this.#save('svg') });

    const controls = el('div', { class: 'controls', part: 'controls' },
      el('div', { class: 'row' },
        field('Tokens', ui.tokens),
        el('span', { id: 'tokens-help', class: 'help', text: 'separated by spaces; Enter to apply' })),
      el('div', { class: 'row' },
        field('seed', ui.seed), field('d_model', ui.dModel), field('d_k', ui.dk), field('d_v', ui.dv),
        field('heads', ui.heads), field('kv-heads', ui.kvHeads),
        el('label', { class: 'field check' }, ui.causal, el('span', { text: 'causal' }))),
      el('div', { class: 'row' },
        el('label', { class: 'field scale' }, el('span', { text: 'scale' }), ui.scale), ui.scaleText, ui.scaleReset,
        ui.resetMask, ui.resetEdits),
      el('div', { class: 'row' }, ui.mode, ui.stepNav, el('span', { class: 'spacer' }), ui.savePNG, ui.saveSVG));
    ui.message = el('p', { class: 'message', role: 'alert', hidden: true });
    ui.view = el('div', { class: 'view', part: 'view' });
    ui.explain = el('div', { class: 'explain', 'aria-live': 'polite', part: 'explain' });
    ui.copyArea = el('div', { class: 'copy-fallback', hidden: true });
    ui.view.addEventListener('keydown', (e) => this.#onKeyDown(e));
    ui.view.addEventListener('click', (e) => this.#onClick(e));
    ui.view.addEventListener('focusin', (e) => this.#onFocus(e));
    ui.view.addEventListener('pointerover', (e) => this.#onHover(e));
    this.#root.append(style, el('div', { class: 'root' }, controls, ui.message, ui.copyArea, ui.view, ui.explain));
  }

  #showMessage(text) {
    this.#ui.message.textContent = text;
    this.#ui.message.hidden = text === '';
  }

  #syncControls() {
    const c = this.#config, ui = this.#ui;
    const active = this.#root.activeElement;
    const set = (input, value) => {
      if (input !== active) input.value = String(value);
    };
    set(ui.tokens, c.tokens.join(' '));
    set(ui.seed, c.seed);
    set(ui.dModel, c.dModel);
    set(ui.dk, c.dk);
    set(ui.dv, c.dv);
    set(ui.heads, c.heads);
    set(ui.kvHeads, c.kvHeads);
    ui.kvHeads.max = String(c.heads);
    ui.causal.checked = c.causal;
    ui.scale.max = String(Math.max(2, Math.ceil(c.scale * 2)));
    set(ui.scale, c.scale);
    const isDefault = !this.hasAttribute('scale');
    ui.scaleText.textContent = `${c.scale.toFixed(3)}${isDefault ? ` = 1/√${c.dk}` : ''}`;
    ui.scaleReset.disabled = isDefault;
    ui.resetMask.disabled = !(this.#mask && this.#mask.includes(0));
    ui.resetEdits.disabled = this.#edits.size === 0 && Object.keys(this.#inputs).length === 0;
    const stepMode = this.step !== 'all';
    ui.mode.textContent = stepMode ? 'Show all steps' : 'Step by step';
    ui.mode.setAttribute('aria-pressed', String(stepMode));
    ui.stepNav.hidden = !stepMode;
    ui.prev.disabled = this.step === STEPS[0];
    ui.next.disabled = this.step === STEPS[STEPS.length - 1];
  }

  // ---- rendering ----------------------------------------------------------------

  // Rebuilds the tables when their structure (tokens, sizes, heads, step)
  // changed; otherwise repaints the existing cells in place, which keeps
  // focus, scroll and layout and costs a fraction of a rebuild.
  #render() {
    this.#syncControls();
    const c = this.#config;
    const structure = JSON.stringify([c.tokens, c.dModel, c.dk, c.dv, c.heads, c.kvHeads, this.step]);
    if (structure === this.#structure) {
      this.#repaint();
      return;
    }
    this.#structure = structure;
    const hadFocus = this.#root.activeElement?.closest?.('.view') != null;
    const ex = this.#example, t = ex.tokens;
    const step = this.step;
    const animate = step !== this.#lastStep && step !== 'all';
    this.#lastStep = step;
    this.#tables = new Map();
    const sections = [];
    const show = (s) => step === 'all' || step === s;
    const dims = (prefix, count) => Array.from({ length: count }, (_, j) => `${prefix}${j}`);
    const headCols = (letter, d, heads) => (heads === 1 ? dims(letter, d) : Array.from({ length: heads * d }, (_, j) => `${letter}${Math.floor(j / d) + 1}.${j % d}`));
    if (show('inputs')) {
      sections.push(this.#section('inputs', [
        this.#table({ id: 'X', title: 'X', rows: t, cols: dims('x', c.dModel), kind: 'div' }),
        this.#table({ id: 'WQ', title: 'W_Q', rows: dims('x', c.dModel), cols: headCols('q', c.dk, c.heads), kind: 'div' }),
        this.#table({ id: 'WK', title: 'W_K', rows: dims('x', c.dModel), cols: headCols('k', c.dk, c.kvHeads), kind: 'div' }),
        this.#table({ id: 'WV', title: 'W_V', rows: dims('x', c.dModel), cols: headCols('v', c.dv, c.kvHeads), kind: 'div' }),
      ]));
    }
    if (show('projections')) {
      sections.push(this.#section('projections', [
        this.#table({ id: 'Q', title: 'Q = X W_Q', rows: t, cols: headCols('q', c.dk, c.heads), kind: 'div' }),
        this.#table({ id: 'K', title: 'K = X W_K', rows: t, cols: headCols('k', c.dk, c.kvHeads), kind: 'div' }),
        this.#table({ id: 'V', title: 'V = X W_V', rows: t, cols: headCols('v', c.dv, c.kvHeads), kind: 'div' }),
      ]));
    }
    for (const key of ['scores', 'scaled', 'weights', 'output']) {
      if (!show(key)) continue;
      const cards = ex.heads.map((head, h) => {
        const title = c.heads === 1 ? '' : `Head ${h + 1}${c.kvHeads < c.heads ? ` (K, V of kv head ${head.kvHead + 1})` : ''}`;
        const cols = key === 'output' ? dims('v', c.dv) : t;
        const table = this.#table({ id: `${key}-${h}`, title: title || STEP_TITLES[key].replace(/^Step \d: /, ''), rows: t, cols, kind: key === 'weights' ? 'seq' : 'div', step: key });
        if (key !== 'weights') return table;
        const bars = el('div', { class: 'bars-box', 'data-head': h });
        return el('div', { class: 'with-bars' }, table, bars);
      });
      sections.push(this.#section(key, cards, c.heads > 1));
    }
    if (animate) for (const s of sections) s.classList.add('enter');
    this.#ui.view.replaceChildren(...sections);
    this.#repaint();
    if (hadFocus && this.#focus) this.#cell(this.#focus.id, this.#focus.i, this.#focus.j)?.focus({ preventScroll: true });
  }

  // Writes every number, colour, label, mask mark, selection and bar of the
  // current state into the tables built by #render.
  #repaint() {
    const n = this.#config.tokens.length;
    for (const entry of this.#tables.values()) {
      const { id, rows, cols, kind, step, tds, sums, trs, buttons } = entry;
      const matrix = this.#matrixOf(id);
      const digits = DIGITS[step ?? id] ?? 4;
      const editable = EDITABLE.has(id);
      const isWeights = step === 'weights';
      const scale = kind === 'seq' ? 1 : maxAbs(matrix.data);
      for (let i = 0; i < matrix.rows; i++) {
        for (let j = 0; j < matrix.cols; j++) {
          const td = tds[i * matrix.cols + j];
          if (td.firstElementChild) {
            entry.painted[i * matrix.cols + j] = ''; // being edited: repaint when done
            continue;
          }
          const v = matrix.data[i * matrix.cols + j];
          const text = fixed(v, digits);
          const masked = isWeights ? this.#isBlocked(i, j, n) : '';
          const edited = editable && this.#edits.has(`${id}:${i}:${j}`);
          // Colours are classes of a quantized palette (no CSS parsing per
          // cell), and only what changed is written: DOM writes are most of
          // a repaint's cost.
          const className = `${heatClass(kind === 'seq' ? v : v / scale, kind)}${masked ? ' masked' : ''}${edited ? ' edited' : ''}`;
          const k = i * matrix.cols + j;
          const key = `${text}|${className}`;
          if (entry.painted[k] === key) continue;
          entry.painted[k] = key;
          const node = td.firstChild;
          if (node?.nodeType === 3 && node.nextSibling === null) node.data = text;
          else td.textContent = text;
          if (td.className !== className) td.className = className;
          td.setAttribute('aria-label', `row ${rows[i]}, column ${cols[j]}: ${text}${masked ? ` (${masked})` : ''}${edited ? ' (edited)' : ''}`);
        }
        if (sums) {
          let total = 0;
          for (let j = 0; j < matrix.cols; j++) total += matrix.data[i * matrix.cols + j];
          sums[i].textContent = fixed(total, 4);
        }
        if (buttons) {
          const selected = i === this.#selected;
          trs[i].classList.toggle('selected', selected);
          buttons[i].setAttribute('aria-pressed', String(selected));
        }
      }
    }
    const scaled = this.#ui.view.querySelector('section.step-scaled');
    if (scaled) {
      const title = this.#sectionTitle('scaled');
      scaled.querySelector('h2').textContent = title;
      scaled.setAttribute('aria-label', title);
    }
    for (const box of this.#ui.view.querySelectorAll('.bars-box')) {
      const h = Number(box.dataset.head);
      box.replaceChildren(...this.#bars(this.#example.heads[h].weights, h));
    }
  }

  #sectionTitle(step) {
    if (step !== 'scaled') return STEP_TITLES[step];
    const c = this.#config;
    return `Step 2: scaled scores × ${c.scale.toFixed(3)}${this.hasAttribute('scale') ? '' : ` (÷ √${c.dk} = ${Math.sqrt(c.dk).toFixed(3)})`}`;
  }

  #section(step, children, heads = false) {
    const title = this.#sectionTitle(step);
    const slot = el('slot', { name: `explain-${step}` });
    slot.textContent = this.#explanations[step];
    return el('section', { class: `step step-${step}`, 'data-step': step, 'aria-label': title },
      el('h2', { text: title }),
      el('p', { class: 'explanation' }, slot),
      el('div', { class: heads ? 'matrices heads' : 'matrices' }, ...children));
  }

  // Builds an empty table for the matrix `id` (numbers come from #repaint).
  #table({ id, title, rows, cols, kind, step }) {
    const matrix = this.#matrixOf(id);
    const editable = EDITABLE.has(id);
    const isWeights = step === 'weights';
    const isStep = step !== undefined;
    const table = el('table', { role: 'grid', 'data-id': id, 'aria-label': `${title}, ${matrix.rows} by ${matrix.cols}${editable ? ', editable' : ''}` });
    // A fixed layout sizes columns from the first row instead of measuring
    // every cell: with 32 tokens that is most of a recompute's layout time.
    table.style.setProperty('--cols', String(matrix.cols + (isWeights ? 1 : 0)));
    const head = el('tr', {}, el('th', { scope: 'col', class: 'corner' }));
    for (const col of cols) head.append(el('th', { scope: 'col', text: col, title: col }));
    if (isWeights) head.append(el('th', { scope: 'col', class: 'sum', text: 'Σ row', title: 'Each row of weights sums to 1 (0 when every key is masked)' }));
    table.append(el('thead', {}, head));
    const body = el('tbody');
    const focus = this.#focus?.id === id ? this.#focus : { i: 0, j: 0 };
    const entry = { id, rows, cols, kind, step, tds: [], painted: [], sums: isWeights ? [] : null, trs: [], buttons: isStep ? [] : null };
    const cellTitle = isWeights ? 'Click or press Space to mask / unmask this pair' : editable ? 'Press Enter or type a number to edit' : undefined;
    for (let i = 0; i < matrix.rows; i++) {
      let rowHeader;
      if (isStep) {
        const button = el('button', { type: 'button', class: 'token', 'data-select': i, text: rows[i], title: `Select “${rows[i]}” as the query` });
        entry.buttons.push(button);
        rowHeader = el('th', { scope: 'row' }, button);
      } else {
        rowHeader = el('th', { scope: 'row', text: rows[i] });
      }
      const tr = el('tr', { style: `--row: ${i}` }, rowHeader);
      entry.trs.push(tr);
      for (let j = 0; j < matrix.cols; j++) {
        const td = el('td', { 'data-i': i, 'data-j': j, tabindex: focus.i === i && focus.j === j ? 0 : -1, title: cellTitle });
        entry.tds.push(td);
        tr.append(td);
      }
      if (isWeights) {
        const sum = el('td', { class: 'sum' });
        entry.sums.push(sum);
        tr.append(sum);
      }
      body.append(tr);
    }
    table.append(body);
    this.#tables.set(id, entry);
    const copy = el('details', { class: 'copy' },
      el('summary', { text: 'Copy' }),
      ...['numpy', 'CSV', 'Markdown'].map((format) => el('button', { type: 'button', text: format, 'data-copy': format, 'data-table': id })));
    return el('figure', { class: 'matrix', 'data-id': id },
      el('figcaption', {}, el('span', { class: 'name', text: title }), el('span', { class: 'shape', text: ` (${matrix.rows} × ${matrix.cols})` }), copy),
      el('div', { class: 'scroll' }, table));
  }

  // Why (i, j) is not allowed, or '' when it is.
  #isBlocked(i, j, n) {
    if (this.#config.causal && j > i) return 'causal: later token';
    if (this.#mask && this.#mask[i * n + j] === 0) return 'masked';
    return '';
  }

  #bars(weights, h) {
    const i = this.#selected, t = this.#config.tokens;
    const list = el('ul', { class: 'bars', 'aria-label': `Attention of “${t[i]}”${this.#config.heads > 1 ? ` in head ${h + 1}` : ''}` });
    for (let j = 0; j < weights.cols; j++) {
      const w = weights.get(i, j);
      const bar = el('span', { class: 'bar', 'aria-hidden': 'true' });
      bar.style.width = `${Math.max(0, Math.min(1, w)) * 100}%`;
      list.append(el('li', {}, el('span', { class: 'bar-label', text: t[j] }), el('span', { class: 'bar-track' }, bar), el('span', { class: 'bar-value', text: fixed(w, 4) })));
    }
    return [el('p', { class: 'bars-title', text: `“${t[i]}” attends to:` }), list];
  }

  #cell(id, i, j) {
    return this.#ui.view.querySelector(`table[data-id="${id}"] td[data-i="${i}"][data-j="${j}"]`);
  }

  #matrixOf(id) {
    const ex = this.#example;
    if (EDITABLE.has(id) || ['Q', 'K', 'V'].includes(id)) return ex[id];
    const [key, h] = id.split('-');
    return ex.heads[Number(h)][key];
  }

  // ---- interaction ----------------------------------------------------------------

  #onKeyDown(e) {
    const td = e.target.closest?.('td[data-i]');
    if (!td || e.target.tagName === 'INPUT') return;
    const table = td.closest('table');
    const id = table.dataset.id;
    const i = Number(td.dataset.i), j = Number(td.dataset.j);
    const m = this.#matrixOf(id);
    const moves = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
    let ni = i, nj = j;
    if (moves[e.key]) {
      ni = Math.min(m.rows - 1, Math.max(0, i + moves[e.key][0]));
      nj = Math.min(m.cols - 1, Math.max(0, j + moves[e.key][1]));
    } else if (e.key === 'Home') {
      nj = 0;
      if (e.ctrlKey) ni = 0;
    } else if (e.key === 'End') {
      nj = m.cols - 1;
      if (e.ctrlKey) ni = m.rows - 1;
    } else if (EDITABLE.has(id) && (e.key === 'Enter' || e.key === 'F2' || /^[-+.\d]$/.test(e.key))) {
      e.preventDefault();
      this.#startEdit(td, id, i, j, /^[-+.\d]$/.test(e.key) ? e.key : null);
      return;
    } else if (id.startsWith('weights-') && (e.key === ' ' || e.key === 'Enter')) {
      e.preventDefault();
      this.#toggleMask(i, j);
      return;
    } else {
      return;
    }
    e.preventDefault();
    const next = this.#cell(id, ni, nj);
    if (next) {
      td.tabIndex = -1;
      next.tabIndex = 0;
      next.focus();
    }
  }

  #onClick(e) {
    const copy = e.target.closest?.('[data-copy]');
    if (copy) {
      this.#copy(copy.dataset.table, copy.dataset.copy);
      return;
    }
    const select = e.target.closest?.('[data-select]');
    if (select) {
      this.#selected = Number(select.dataset.select);
      this.#render();
      return;
    }
    const td = e.target.closest?.('td[data-i]');
    if (!td) return;
    const id = td.closest('table').dataset.id;
    const i = Number(td.dataset.i), j = Number(td.dataset.j);
    if (id.startsWith('weights-')) {
      this.#focus = { id, i, j };
      this.#toggleMask(i, j);
    } else if (EDITABLE.has(id)) {
      this.#startEdit(td, id, i, j, null);
    }
  }

  #onFocus(e) {
    const td = e.target.closest?.('td[data-i]');
    if (!td || e.target.tagName === 'INPUT') return;
    const id = td.closest('table').dataset.id;
    this.#focus = { id, i: Number(td.dataset.i), j: Number(td.dataset.j) };
    this.#ui.explain.textContent = this.#explain(id, this.#focus.i, this.#focus.j);
  }

  #onHover(e) {
    const td = e.target.closest?.('td[data-i]');
    if (!td) return;
    this.#ui.explain.textContent = this.#explain(td.closest('table').dataset.id, Number(td.dataset.i), Number(td.dataset.j));
  }

  #toggleMask(i, j) {
    const n = this.#config.tokens.length;
    if (!this.#mask) this.#mask = new Uint8Array(n * n).fill(1);
    this.#mask[i * n + j] ^= 1;
    this.#schedule();
  }

  #startEdit(td, id, i, j, firstKey) {
    const m = this.#matrixOf(id);
    const old = m.get(i, j);
    const input = el('input', { type: 'text', inputmode: 'decimal', class: 'cell-edit', 'aria-label': `Edit ${td.getAttribute('aria-label')}` });
    input.value = firstKey ?? String(Number(old.toPrecision(6)));
    let done = false;
    const finish = (commit) => {
      if (done) return;
      done = true;
      if (commit) {
        const text = input.value.trim();
        const value = Number(text);
        if (text === '' || !Number.isFinite(value)) {
          this.#showMessage(`“${text}” is not a number; ${id}[${i}][${j}] keeps ${fixed(old, 4)}`);
        } else if (Math.abs(value) > 1e6) {
          this.#showMessage(`${id}[${i}][${j}]: keep values within ±1e6, got ${text}`);
        } else {
          this.#edits.set(`${id}:${i}:${j}`, Math.fround(value));
        }
      }
      this.#focus = { id, i, j };
      td.replaceChildren(); // drop the input; #render writes the number back
      this.#render();
      this.#cell(id, i, j)?.focus();
      if (commit) this.#schedule();
    };
    input.addEventListener('keydown', (e) => {
      e.stopPropagation();
      if (e.key === 'Enter') finish(true);
      else if (e.key === 'Escape') finish(false);
    });
    input.addEventListener('blur', () => finish(true));
    td.replaceChildren(input);
    input.focus();
    if (firstKey === null) input.select();
  }

  #move(delta) {
    const at = STEPS.indexOf(this.step);
    const next = STEPS[Math.min(STEPS.length - 1, Math.max(0, (at < 0 ? 0 : at) + delta))];
    this.step = next;
    if (next === STEPS[STEPS.length - 1]) this.#stopPlaying();
  }

  #togglePlay() {
    if (this.#playTimer) {
      this.#stopPlaying();
      return;
    }
    if (this.step === 'all' || this.step === STEPS[STEPS.length - 1]) this.step = STEPS[0];
    this.#ui.play.textContent = 'Pause';
    this.#playTimer = setInterval(() => this.#move(1), 2500);
  }

  #stopPlaying() {
    clearInterval(this.#playTimer);
    this.#playTimer = 0;
    if (this.#ui.play) this.#ui.play.textContent = 'Play';
  }

  // ---- explanations of single numbers ------------------------------------------------

  #explain(id, i, j) {
    const c = this.#config, ex = this.#example, t = c.tokens;
    const f = (x) => fixed(x, 4);
    const sum = (terms) => (terms.length > MAX_TERMS ? `${terms.slice(0, MAX_TERMS).join(' + ')} + … (${terms.length - MAX_TERMS} more terms)` : terms.join(' + '));
    const paren = (x) => (x < 0 ? `(${f(x)})` : f(x));
    if (EDITABLE.has(id)) {
      const m = ex[id];
      const where = id === 'X' ? `token “${t[i]}”, dimension ${j}` : `row x${i}, column ${j}`;
      if (this.#edits.has(`${id}:${i}:${j}`)) return `${id}[${where}] = ${f(m.get(i, j))}, typed in (press “Undo edits” to go back to the draw).`;
      if (this.#inputs[id]) return `${id}[${where}] = ${f(m.get(i, j))}, from the inputs property.`;
      return `${id}[${where}] = ${f(m.get(i, j))}: ${id === 'X' ? 'np.random.randn' : '0.5 × np.random.randn'} with seed ${c.seed}, drawn in the order X, W_Q, W_K, W_V.`;
    }
    if (['Q', 'K', 'V'].includes(id)) {
      const W = ex[`W${id}`];
      const terms = Array.from({ length: c.dModel }, (_, p) => `${paren(ex.X.get(i, p))}×${paren(W.get(p, j))}`);
      return `${id}[${t[i]}][${j}] = Σ_t X[${t[i]}][t] · W_${id}[t][${j}] = ${sum(terms)} = ${f(ex[id].get(i, j))}`;
    }
    const [key, hText] = id.split('-');
    const h = Number(hText);
    const head = ex.heads[h];
    const headText = c.heads > 1 ? ` (head ${h + 1})` : '';
    if (key === 'scores') {
      const terms = Array.from({ length: c.dk }, (_, p) => `${paren(head.q.get(i, p))}×${paren(head.k.get(j, p))}`);
      return `score(${t[i]} → ${t[j]})${headText} = q_${t[i]} · k_${t[j]} = ${sum(terms)} = ${fixed(head.scores.get(i, j), 3)}`;
    }
    if (key === 'scaled') {
      const how = this.hasAttribute('scale') ? `× ${c.scale}` : `/ √${c.dk} = ${fixed(head.scores.get(i, j), 3)} / ${Math.sqrt(c.dk).toFixed(3)}`;
      return `scaled(${t[i]} → ${t[j]})${headText} = score ${how} = ${fixed(head.scaled.get(i, j), 3)}`;
    }
    if (key === 'weights') {
      const n = t.length;
      const blocked = this.#isBlocked(i, j, n);
      if (blocked) return `weight(${t[i]} → ${t[j]})${headText} = 0: not allowed (${blocked}), so it is left out of the softmax.`;
      const allowed = Array.from({ length: n }, (_, k) => k).filter((k) => !this.#isBlocked(i, k, n));
      const zs = allowed.map((k) => head.scaled.get(i, k));
      const zmax = Math.max(...zs);
      const total = zs.reduce((a, z) => a + Math.exp(z - zmax), 0);
      const e = Math.exp(head.scaled.get(i, j) - zmax);
      return `weight(${t[i]} → ${t[j]})${headText} = exp(z − max) / Σ exp(z_k − max) = exp(${fixed(head.scaled.get(i, j), 3)} − ${fixed(zmax, 3)}) / ${f(total)} = ${f(e)} / ${f(total)} = ${f(head.weights.get(i, j))}`;
    }
    const terms = Array.from({ length: t.length }, (_, k) => `${f(head.weights.get(i, k))}×${paren(head.v.get(k, j))}`);
    return `output[${t[i]}][v${j}]${headText} = Σ_j weight(${t[i]} → j) · v_j[${j}] = ${sum(terms)} = ${f(head.output.get(i, j))}`;
  }

  // ---- copy and save ----------------------------------------------------------------

  #copy(id, format) {
    const m = this.#matrixOf(id);
    const t = this.#config.tokens;
    const rowLabels = ['WQ', 'WK', 'WV'].includes(id) ? Array.from({ length: m.rows }, (_, i) => `x${i}`) : t;
    const colLabels = id.startsWith('scores') || id.startsWith('scaled') || id.startsWith('weights') ? t : Array.from({ length: m.cols }, (_, j) => `c${j}`);
    const text = format === 'numpy' ? toNumpy(m) : format === 'CSV' ? toCSV(m, rowLabels, colLabels) : toMarkdown(m, rowLabels, colLabels);
    this.dispatchEvent(new CustomEvent('attention-copy', { bubbles: true, composed: true, detail: { matrix: id, format, text } }));
    const fallback = () => {
      const area = el('textarea', { readonly: true, rows: 6, 'aria-label': `${id} as ${format}` });
      area.value = text;
      this.#ui.copyArea.replaceChildren(el('p', { text: `Copy ${id} as ${format} from here:` }), area,
        el('button', { type: 'button', text: 'Close', onclick: () => { this.#ui.copyArea.hidden = true; } }));
      this.#ui.copyArea.hidden = false;
      area.select();
    };
    if (navigator.clipboard?.writeText) {
      navigator.clipboard.writeText(text).then(() => this.#flash(`Copied ${id} as ${format}`), fallback);
    } else {
      fallback();
    }
  }

  #flash(text) {
    this.#ui.explain.textContent = text;
  }

  /** The current view as an SVG document string. */
  toSVG() {
    return toSVG(this.#snapshotLayout());
  }

  #snapshotLayout() {
    const c = this.#config, ex = this.#example, t = c.tokens;
    const steps = this.step === 'all' ? ['scores', 'scaled', 'weights', 'output'] : [this.step];
    const tables = [];
    for (const s of steps) {
      if (s === 'inputs') {
        for (const id of ['X', 'WQ', 'WK', 'WV']) tables.push({ title: id, matrix: ex[id], rows: id === 'X' ? t : Array.from({ length: c.dModel }, (_, i) => `x${i}`), cols: Array.from({ length: ex[id].cols }, (_, j) => `${j}`), digits: 4, kind: 'div' });
      } else if (s === 'projections') {
        for (const id of ['Q', 'K', 'V']) tables.push({ title: id, matrix: ex[id], rows: t, cols: Array.from({ length: ex[id].cols }, (_, j) => `${j}`), digits: 4, kind: 'div' });
      } else {
        ex.heads.forEach((head, h) => tables.push({
          title: `${STEP_TITLES[s]}${c.heads > 1 ? ` — head ${h + 1}` : ''}`, matrix: head[s], rows: t,
          cols: s === 'output' ? Array.from({ length: c.dv }, (_, j) => `v${j}`) : t, digits: DIGITS[s], kind: s === 'weights' ? 'seq' : 'div',
        }));
      }
    }
    return layout({ title: `Scaled dot-product attention: “${t.join(' ')}” (seed ${c.seed}, d_k ${c.dk})`, tables });
  }

  async #save(format) {
    if (!this.#example) return;
    const view = this.#snapshotLayout();
    let blob;
    if (format === 'svg') {
      blob = new Blob([toSVG(view)], { type: 'image/svg+xml' });
    } else {
      const canvas = document.createElement('canvas');
      canvas.width = view.width;
      canvas.height = view.height;
      paint(canvas.getContext('2d'), view);
      blob = await new Promise((resolve) => canvas.toBlob(resolve, 'image/png'));
    }
    this.dispatchEvent(new CustomEvent('attention-save', { bubbles: true, composed: true, detail: { format, size: blob.size, type: blob.type } }));
    const url = URL.createObjectURL(blob);
    const a = el('a', { href: url, download: `attention.${format}` });
    this.#root.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10000);
  }
}
