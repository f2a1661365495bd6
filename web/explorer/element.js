// element.js - the <attention-explorer> custom element class: its
// properties, lifecycle, one update per microtask and the events it fires.
// web/explorer.js defines it; this file only declares it.
//
// Data flow: attributes/properties -> readSettings (settings.js)
// -> the wasm library computes every matrix (example.js) -> the shadow root:
// the toolbar, the lines view (lines.js), the tables
// (tables.js, keyboard and editing in grid.js), and the
// popover with a number's derivation (text.js). Saving goes through
// export.js. User text only enters the DOM through textContent or
// attribute values.
//
// A new view of the numbers (the lines view is the model) is a module of its
// own with a class holding an `element`, `build(...)` for a new structure and
// `update(...)` for new numbers: #render builds it when its part is in `show`
// (PARTS in settings.js), #repaint updates it, snapshotView
// (export.js) draws it for PNG/SVG.

import { loadAttention } from '../attention.js';
import { el } from './dom.js';
import { save, snapshotView, toSVG } from './export.js';
import { cellAt, moveTabStop, nextCell, parseCellValue, startEdit } from './grid.js';
import { LinesView } from './lines.js';
import { CONTROLS, PARTS, SCALE_SLIDER, SETTING, SETTINGS, STEPS, readSettings, scaleToSlider, sliderToScale } from './settings.js';
import { STYLES } from './styles.js';
import { TRAIN_STYLES, TrainPanel } from './train-view.js';
import { buildTable, cellLabel, highlight, paintTable } from './tables.js';
import { DEFAULT_EXPLANATIONS, STEP_TITLES, blockedReason, defaultExplanation, explain, leadTitle, scaleText, sectionTitle } from './text.js';
import { EMBEDDINGS, HANDBOOK, LIMITS, computeExample, defaultScale, drawInputs } from './computation.js';
import { DIGITS, fixed, toCSV, toMarkdown, toNumpy } from './format.js';
import { Matrix, toMatrix } from '../core/matrix.js';

export { STEPS, DEFAULT_EXPLANATIONS };

const EDITABLE = new Set(['X', 'WQ', 'WK', 'WV']);
// A pause this long in slider input ends a drag.
const DRAG_PAUSE_MS = 200;

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

// So the module can be imported where there is no DOM (server rendering, Node).
const Base = globalThis.HTMLElement ?? class {};

export class AttentionExplorer extends Base {
  static get observedAttributes() {
    return SETTINGS.map((s) => s.attr);
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
  #train = null; // the Train part (train-view.js) while the train attribute is on
  #loadError = null;
  #config = null; // last good config
  #view = { step: 'all', show: new Set(PARTS), controls: 'full' }; // last good view settings
  #state = null; // last good state
  #example = null; // computeExample result of the last good state
  #drawn = null; // { key, inputs } the random draws of the last config
  #inputs = {}; // matrices set through the inputs property
  #edits = new Map(); // "X:i:j" -> number, typed into cells
  #editKey = ''; // seed and shapes the edits belong to
  #mask = null; // Uint8Array (n, n), 1 = may attend; null = all allowed
  #masking = false; // clicks on weights mask pairs (else they inspect)
  #selected = -1; // the query whose lines alone are drawn; -1: all
  #focus = null; // { id, i, j } of the table's tab stop, kept across rebuilds
  #inspected = null; // { id, i, j } whose derivation the popover shows
  #scheduled = false;
  #playTimer = 0;
  #explanations = { ...DEFAULT_EXPLANATIONS };
  #lastStep = 'all';
  #structure = ''; // what the built view shows; see #render
  #tables = new Map(); // id -> the entry of one built table
  #lines = null; // LinesView when the lines part is shown
  #overflow = null; // ResizeObserver marking tables wider than their box
  #headPicked = null; // the head the picker shows (-1: all), null until the reader picks one
  #paintKey = ''; // what the marks of the last repaint depended on (see #repaint)
  #skipped = new Set(); // containers the browser skips rendering (off screen)
  #dragTimer = 0; // nonzero while the scale slider is dragged

  constructor() {
    super();
    this.#root = this.attachShadow({ mode: 'open' });
    this.#buildSkeleton();
  }

  // ---- properties mirroring attributes (see the accessors defined after the class) --

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

  /** Whether clicking a weight masks the pair (true) or explains it (false). */
  get masking() {
    return this.#masking;
  }
  set masking(value) {
    this.#masking = Boolean(value);
    this.#syncMasking();
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
    this.#overflow?.disconnect();
    this.#dragEnd();
    this.#train?.pause();
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

  /** The config behind the numbers on screen (after normalizeConfig); null before the first. */
  get config() {
    return this.#config ? { ...this.#config, tokens: [...this.#config.tokens] } : null;
  }

  #update() {
    let settings;
    try {
      settings = readSettings((attr) => this.getAttribute(attr));
    } catch (err) {
      this.#showMessage(err.message);
      return;
    }
    if (!this.#attn) {
      if (!this.#loadError) this.#showMessage('');
      return;
    }
    const { config, view } = settings;
    const n = config.tokens.length;
    const shapes = { X: [n, config.dModel], WQ: [config.dModel, config.heads * config.dk], WK: [config.dModel, config.kvHeads * config.dk], WV: [config.dModel, config.kvHeads * config.dv] };
    // Typed-in numbers belong to one draw; a new seed, shapes or embeddings start afresh.
    const drawKey = JSON.stringify([config.seed, shapes, config.embeddings, config.positions, config.embeddings === 'word' || config.positions ? config.tokens : null]);
    if (drawKey !== this.#editKey) {
      this.#edits.clear();
      this.#editKey = drawKey;
    }
    // The draws change only with seed, shapes and embeddings: a slider drag reuses them.
    if (this.#drawn?.key !== drawKey) this.#drawn = { key: drawKey, inputs: drawInputs(config) };
    const inputs = {};
    try {
      for (const key of EDITABLE) {
        const base = this.#inputs[key] ? toMatrix(this.#inputs[key], `inputs.${key}`, ...shapes[key]) : this.#drawn.inputs[key];
        // A copy: state hands these out, and the cached draws must stay as drawn.
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
    this.#view = view;
    this.#example = ex;
    if (this.#selected >= n) this.#selected = -1;
    const pick = (key) => (config.heads === 1 ? ex.heads[0][key] : ex.heads.map((h) => h[key]));
    this.#state = Object.freeze({
      tokens: [...ex.tokens], X: ex.X, WQ: ex.WQ, WK: ex.WK, WV: ex.WV, Q: ex.Q, K: ex.K, V: ex.V,
      scores: pick('scores'), scaled: pick('scaled'), weights: pick('weights'), output: pick('output'),
      ...(ex.heads[0].logits ? { logits: pick('logits') } : {}),
    });
    this.#showMessage('');
    this.#render();
    this.#syncTrain();
    const detail = { step: view.step, mask: this.#mask && this.#mask.includes(0) ? this.mask : null, edited: this.#edits.size > 0 || Object.keys(this.#inputs).length > 0 };
    for (const s of SETTINGS) if (s.compute) detail[s.key] = Array.isArray(config[s.key]) ? [...config[s.key]] : config[s.key];
    this.dispatchEvent(new CustomEvent('attention-change', { bubbles: true, composed: true, detail }));
  }

  get #scaleIsDefault() {
    const text = this.getAttribute('scale');
    return text === null || text.trim() === '';
  }

  #blocked = (i, j) => blockedReason(this.#config, this.#mask, this.#config.tokens.length, i, j);

  // ---- the skeleton: styles, toolbar, settings, message, view, popover --------

  #buildSkeleton() {
    const ui = this.#ui;
    const field = (label, input, cls = '') => el('label', { class: `field ${cls}` }, el('span', { text: label }), input);
    const number = (attr) => {
      const s = SETTING[attr];
      const input = el('input', { type: 'number', min: s.min, max: s.max, step: 1, inputmode: 'numeric' });
      input.addEventListener('change', () => this.setAttribute(attr, input.value.trim()));
      return input;
    };
    ui.tokens = el('input', { type: 'text', spellcheck: 'false', autocomplete: 'off', title: 'Tokens separated by spaces; Enter to apply' });
    ui.tokens.addEventListener('change', () => this.setAttribute('tokens', ui.tokens.value));
    ui.tokens.addEventListener('keydown', (e) => {
      if (e.key === 'Enter') this.setAttribute('tokens', ui.tokens.value);
    });
    ui.seed = number('seed');
    ui.dModel = number('d-model');
    ui.dk = number('dk');
    ui.dv = number('dv');
    ui.heads = number('heads');
    ui.heads.classList.add('tiny');
    ui.kvHeads = number('kv-heads');
    ui.scale = el('input', { type: 'range', min: SCALE_SLIDER.min, max: SCALE_SLIDER.max, step: SCALE_SLIDER.step, 'aria-label': 'scale' });
    ui.scale.addEventListener('input', () => {
      const scale = sliderToScale(Number(ui.scale.value), this.#config?.dk ?? HANDBOOK.dk);
      if (scale === null) this.removeAttribute('scale');
      else this.setAttribute('scale', String(scale));
      this.#dragStep();
    });
    ui.scale.addEventListener('change', () => this.#dragEnd());
    ui.scaleText = el('output', { class: 'scale-text' });
    ui.scaleReset = el('button', { type: 'button', class: 'full-only scale-reset', text: '↺ 1/√dₖ', 'aria-label': 'Reset the scale to 1/√d_k', title: 'Reset the scale to 1/sqrt(d_k)', onclick: () => this.removeAttribute('scale') });
    ui.causal = el('input', { type: 'checkbox' });
    ui.causal.addEventListener('change', () => this.toggleAttribute('causal', ui.causal.checked));
    ui.headPick = el('select', { 'aria-label': 'head shown in the tables' });
    ui.headPick.addEventListener('change', () => {
      this.#headPicked = Number(ui.headPick.value);
      this.#syncHeadPick();
    });
    ui.headPickField = field('show', ui.headPick, 'head-pick');
    ui.masking = el('button', { type: 'button', class: 'full-only', 'aria-pressed': 'false', text: 'Mask pairs', title: 'When on, clicking a weight masks or unmasks that pair; when off, it explains the number',
      onclick: () => { this.masking = !this.#masking; } });
    // A text setting: the attribute follows the field; an empty field removes it.
    const textSetting = (attr, props) => {
      const input = el('input', { spellcheck: 'false', autocomplete: 'off', ...props });
      input.addEventListener('change', () => {
        const value = input.value.trim();
        if (value === '') this.removeAttribute(attr);
        else this.setAttribute(attr, value);
      });
      return input;
    };
    ui.window = textSetting('window', { type: 'text', class: 'short', placeholder: 'left right', title: SETTING.window.help });
    ui.softcap = textSetting('softcap', { type: 'number', min: 0, step: 'any', placeholder: 'none', title: SETTING.softcap.help });
    ui.queryOffset = textSetting('query-offset', { type: 'number', step: 1, title: SETTING['query-offset'].help });
    ui.embeddings = el('select', {}, ...EMBEDDINGS.map((e) => el('option', { value: e, text: e })));
    ui.embeddings.addEventListener('change', () => this.setAttribute('embeddings', ui.embeddings.value));
    ui.positions = el('input', { type: 'checkbox' });
    ui.positions.addEventListener('change', () => this.toggleAttribute('positions', ui.positions.checked));
    ui.resetMask = el('button', { type: 'button', text: 'Clear mask', onclick: () => { this.#mask = null; this.#schedule(); } });
    ui.resetEdits = el('button', { type: 'button', text: 'Undo edits', onclick: () => { this.#edits.clear(); this.#inputs = {}; this.#schedule(); } });
    ui.mode = el('button', { type: 'button', 'aria-pressed': 'false', onclick: () => { this.step = this.step === 'all' ? 'scores' : 'all'; } });
    ui.prev = el('button', { type: 'button', text: '◀ Previous', onclick: () => this.#move(-1) });
    ui.next = el('button', { type: 'button', text: 'Next ▶', onclick: () => this.#move(1) });
    ui.play = el('button', { type: 'button', text: 'Play', onclick: () => this.#togglePlay() });
    ui.stepNav = el('div', { class: 'step-nav full-only', role: 'group', 'aria-label': 'steps' }, ui.prev, ui.next, ui.play);
    ui.savePNG = el('button', { type: 'button', text: 'Save PNG', onclick: () => this.#save('png') });
    ui.saveSVG = el('button', { type: 'button', text: 'Save SVG', onclick: () => this.#save('svg') });

    ui.toolbar = el('div', { class: 'toolbar', part: 'toolbar', role: 'group', 'aria-label': 'attention controls' },
      field('Tokens', ui.tokens, 'tokens full-only'),
      el('span', { class: 'field scale' }, el('label', { class: 'field' }, el('span', { text: 'scale' }), ui.scale), ui.scaleText, ui.scaleReset),
      el('label', { class: 'field check' }, ui.causal, el('span', { text: 'causal' })),
      field('heads', ui.heads, 'heads'), ui.headPickField,
      ui.masking, ui.stepNav);
    ui.settings = el('details', { class: 'settings full-only', part: 'settings' },
      el('summary', { text: 'Settings, steps and export' }),
      el('div', { class: 'row' },
        field('seed', ui.seed), field('d_model', ui.dModel), field('d_k', ui.dk), field('d_v', ui.dv), field('kv-heads', ui.kvHeads),
        field('embeddings', ui.embeddings), el('label', { class: 'field check' }, ui.positions, el('span', { text: 'positions' }))),
      el('div', { class: 'row' }, field('window', ui.window), field('softcap', ui.softcap), field('query offset', ui.queryOffset)),
      el('div', { class: 'row' }, ui.resetMask, ui.resetEdits, ui.mode, el('span', { class: 'spacer' }), ui.savePNG, ui.saveSVG));
    ui.message = el('p', { class: 'message', role: 'alert', hidden: true });
    ui.view = el('div', { class: 'view', part: 'view' });
    ui.popover = el('div', { class: 'popover', part: 'popover', role: 'status', hidden: true });
    ui.copyArea = el('div', { class: 'copy-fallback', hidden: true });
    ui.view.addEventListener('keydown', (e) => this.#onKeyDown(e));
    ui.view.addEventListener('click', (e) => this.#onClick(e));
    ui.view.addEventListener('focusin', (e) => this.#onFocus(e));
    ui.view.addEventListener('pointerover', (e) => this.#onHover(e));
    ui.view.addEventListener('pointerleave', () => {
      if (!this.#root.activeElement?.matches?.('td[data-i]')) this.#inspect(null);
    });
    ui.root = el('div', { class: 'root' }, ui.toolbar, ui.settings, ui.message, ui.copyArea, ui.view, ui.popover);
    this.#root.append(el('style', { text: STYLES }), ui.root);
    // A cell that takes focus scrolls clear of the sticky toolbar (its scroll
    // margin is the toolbar's height), never behind it.
    if (typeof ResizeObserver !== 'undefined') {
      new ResizeObserver(([entry]) => {
        ui.root.style.setProperty('--attn-toolbar-height', `${Math.ceil(entry.borderBoxSize?.[0]?.blockSize ?? entry.contentRect.height)}px`);
      }).observe(ui.toolbar);
    }
  }

  // The Train part: made when the train attribute turns on, placed above the
  // view, told after every update; it changes this element only through
  // the public inputs, positions and embeddings.
  #syncTrain() {
    if (this.#view.train && !this.#train) {
      this.#train = new TrainPanel({ attn: this.#attn, host: this, document: this.ownerDocument });
      this.#ui.root.insertBefore(this.#train.element, this.#ui.view);
      if (!this.#root.querySelector('style[data-train]')) this.#root.append(el('style', { text: TRAIN_STYLES, 'data-train': '' }));
    } else if (!this.#view.train && this.#train) {
      this.#train.dispose();
      this.#train.element.remove();
      this.#train = null;
    }
    this.#train?.sync();
  }

  #showMessage(text) {
    this.#ui.message.textContent = text;
    this.#ui.message.hidden = text === '';
  }

  #syncMasking() {
    this.#ui.masking.setAttribute('aria-pressed', String(this.#masking));
    this.#ui.view.classList.toggle('masking', this.#masking);
  }

  #syncControls() {
    const c = this.#config, ui = this.#ui;
    const active = this.#root.activeElement;
    const set = (input, value) => {
      if (input !== active && input.value !== String(value)) input.value = String(value);
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
    ui.embeddings.value = c.embeddings;
    set(ui.window, c.window ? `${c.window[0]} ${c.window[1]}` : '');
    set(ui.softcap, c.softcap > 0 ? c.softcap : '');
    set(ui.queryOffset, c.queryOffset);
    ui.positions.checked = c.positions;
    const isDefault = this.#scaleIsDefault;
    // The slider's range is fixed: only its thumb follows the scale.
    set(ui.scale, scaleToSlider(c.scale, c.dk));
    const text = scaleText(c, isDefault);
    ui.scaleText.textContent = text;
    ui.scale.setAttribute('aria-valuetext', text);
    ui.scaleReset.disabled = isDefault;
    ui.resetMask.disabled = !(this.#mask && this.#mask.includes(0));
    ui.resetEdits.disabled = this.#edits.size === 0 && Object.keys(this.#inputs).length === 0;
    const stepMode = this.#view.step !== 'all';
    ui.mode.textContent = stepMode ? 'Show all steps' : 'Step by step';
    ui.mode.setAttribute('aria-pressed', String(stepMode));
    ui.stepNav.hidden = !stepMode;
    ui.prev.disabled = this.#view.step === STEPS[0];
    ui.next.disabled = this.#view.step === STEPS[STEPS.length - 1];
    ui.root.dataset.controls = this.#view.controls;
    this.#syncMasking();
    this.#syncHeadPick();
  }

  // With several heads the tables show every head, or one picked head. A
  // compact embed (controls minimal or none) with more than two heads opens
  // on head 1 so it stays short; the lines view always draws every head.
  #syncHeadPick() {
    const ui = this.#ui, heads = this.#config.heads;
    ui.headPickField.hidden = heads === 1;
    if (ui.headPick.options.length !== heads + 1) {
      ui.headPick.replaceChildren(el('option', { value: -1, text: 'all heads' }),
        ...Array.from({ length: heads }, (_, h) => el('option', { value: h, text: `head ${h + 1}` })));
    }
    const fallback = this.#view.controls !== 'full' && heads > 2 ? 0 : -1;
    const picked = this.#headPicked !== null && this.#headPicked < heads ? this.#headPicked : fallback;
    ui.headPick.value = String(picked);
    if (picked < 0 || heads === 1) delete ui.view.dataset.head;
    else ui.view.dataset.head = String(picked);
  }

  // ---- rendering ----------------------------------------------------------------

  // Rebuilds the view when its structure (tokens, sizes, heads, parts, step)
  // changed; otherwise repaints the existing cells and lines in place, which
  // keeps focus, scroll and layout and costs a fraction of a rebuild.
  #render() {
    this.#syncControls();
    const c = this.#config, view = this.#view;
    const structure = JSON.stringify([c.tokens, c.dModel, c.dk, c.dv, c.heads, c.kvHeads, view.step, [...view.show], view.controls]);
    if (structure === this.#structure) {
      this.#repaint();
      return;
    }
    this.#structure = structure;
    const hadFocus = this.#root.activeElement?.closest?.('.view') != null;
    const ex = this.#example, t = ex.tokens;
    const step = view.step;
    const animate = step !== this.#lastStep && step !== 'all';
    this.#lastStep = step;
    this.#tables = new Map();
    const sections = [];
    const show = (s) => view.show.has(s) && (step === 'all' || step === s);
    const dims = (prefix, count) => Array.from({ length: count }, (_, j) => `${prefix}${j}`);
    const headCols = (letter, d, heads) => (heads === 1 ? dims(letter, d) : Array.from({ length: heads * d }, (_, j) => `${letter}${Math.floor(j / d) + 1}.${j % d}`));
    const table = (spec) => {
      const { figure, entry } = buildTable({ ...spec, focus: this.#focus?.id === spec.id ? this.#focus : null });
      this.#tables.set(spec.id, entry);
      return figure;
    };
    const headTables = (key) => ex.heads.map((head, h) => table({
      id: `${key}-${h}`,
      title: c.heads === 1 ? STEP_TITLES[key].replace(/^Step \d: /, '') : `Head ${h + 1}${c.kvHeads < c.heads ? ` (K, V of kv head ${head.kvHead + 1})` : ''}`,
      rows: t, cols: key === 'output' ? dims('v', c.dv) : t, kind: key === 'weights' ? 'seq' : 'div', step: key,
      selectable: true, withSums: key === 'weights', head: h,
    }));
    // Attention first: the lines view and the weights open the view.
    const lines = view.show.has('lines') && (step === 'all' || step === 'weights');
    if (show('weights') || lines) {
      const parts = [];
      if (lines) {
        this.#lines ??= new LinesView({ onSelect: (i) => this.#select(i) });
        this.#lines.build(t, c.heads, this.#selected);
        parts.push(this.#lines.element);
      } else {
        this.#lines = null;
      }
      if (show('weights')) parts.push(el('div', { class: 'matrices heads' }, ...headTables('weights')));
      sections.push(this.#section('weights', [el('div', { class: 'attention-row' }, ...parts)], { lead: true }));
    } else {
      this.#lines = null;
    }
    if (show('inputs')) {
      sections.push(this.#section('inputs', [
        table({ id: 'X', title: 'X', rows: t, cols: dims('x', c.dModel), kind: 'div', editable: true }),
        table({ id: 'WQ', title: 'W_Q', rows: dims('x', c.dModel), cols: headCols('q', c.dk, c.heads), kind: 'div', editable: true }),
        table({ id: 'WK', title: 'W_K', rows: dims('x', c.dModel), cols: headCols('k', c.dk, c.kvHeads), kind: 'div', editable: true }),
        table({ id: 'WV', title: 'W_V', rows: dims('x', c.dModel), cols: headCols('v', c.dv, c.kvHeads), kind: 'div', editable: true }),
      ]));
    }
    if (show('projections')) {
      sections.push(this.#section('projections', [
        table({ id: 'Q', title: 'Q = X W_Q', rows: t, cols: headCols('q', c.dk, c.heads), kind: 'div' }),
        table({ id: 'K', title: 'K = X W_K', rows: t, cols: headCols('k', c.dk, c.kvHeads), kind: 'div' }),
        table({ id: 'V', title: 'V = X W_V', rows: t, cols: headCols('v', c.dv, c.kvHeads), kind: 'div' }),
      ]));
    }
    for (const key of ['scores', 'scaled', 'output']) {
      if (show(key)) sections.push(this.#section(key, [el('div', { class: 'matrices heads' }, ...headTables(key))]));
    }
    if (animate) for (const s of sections) s.classList.add('enter');
    this.#ui.view.replaceChildren(...sections);
    this.#watchOverflow();
    this.#watchSkipped();
    this.#repaint();
    if (hadFocus && this.#focus) this.#focusable(this.#focus)?.focus({ preventScroll: true });
  }

  // A table wider than its box scrolls; its figure is marked so the caption
  // says so and the cut edge fades (nothing is cut off without a sign).
  #watchOverflow() {
    this.#overflow?.disconnect();
    if (typeof ResizeObserver === 'undefined') return;
    const mark = (box) => {
      const figure = box.closest('figure');
      const over = box.scrollWidth > box.clientWidth + 1;
      figure.classList.toggle('overflowing', over);
      figure.classList.toggle('scrolled-end', over && box.scrollLeft + box.clientWidth >= box.scrollWidth - 1);
    };
    this.#overflow = new ResizeObserver((entries) => {
      for (const e of entries) mark(e.target);
    });
    for (const box of this.#ui.view.querySelectorAll('figure.matrix > .scroll')) {
      this.#overflow.observe(box);
      box.addEventListener('scroll', () => mark(box), { passive: true });
    }
  }

  // Writes every number, colour, mask mark, selection and line of the
  // current state into the view built by #render, then refreshes the
  // popover so it always shows the current value.
  #repaint() {
    // Everything the blocked, edited and selected marks depend on besides the numbers.
    const c = this.#config;
    this.#paintKey = JSON.stringify([c.causal, c.window, c.queryOffset, this.#selected, this.#mask ? this.#mask.join('') : '', [...this.#edits.keys()]]);
    for (const entry of this.#tables.values()) {
      // While the slider is dragged, a table the browser skips (off screen)
      // waits: it is painted when it comes on screen or the drag ends.
      entry.stale = Boolean(entry.skipped && this.#dragTimer);
      if (!entry.stale) this.#paintEntry(entry);
    }
    const scaled = this.#ui.view.querySelector('section.step-scaled');
    if (scaled) {
      const title = sectionTitle('scaled', this.#config, this.#scaleIsDefault);
      const h2 = scaled.querySelector('h2');
      if (h2.textContent !== title) {
        h2.textContent = title;
        scaled.setAttribute('aria-label', title);
      }
    }
    // During a drag the lines follow every frame; what they say follows when it ends.
    this.#lines?.update(this.#example.heads.map((h) => h.weights), { spoken: !this.#dragTimer });
    if (this.#inspected) this.#inspect(this.#inspected, { quiet: true });
  }

  #paintEntry(entry) {
    const { id, step } = entry;
    const blocks = step === 'weights' || step === 'scaled';
    const edited = EDITABLE.has(id) && this.#edits.size > 0 ? (i, j) => this.#edits.has(`${id}:${i}:${j}`) : () => false;
    entry.stale = false;
    paintTable(entry, this.#matrixOf(id), {
      key: this.#paintKey,
      digits: DIGITS[step ?? id] ?? 4,
      blocked: blocks ? this.#blocked : () => '',
      edited,
      selected: this.#selected,
      minusInfinity: step === 'scaled',
    });
  }

  // The containers with content-visibility: auto (the steps below the lead,
  // heads after the first) tell when the browser skips them; the tables
  // inside are marked so a drag can leave them for later.
  #watchSkipped() {
    this.#skipped.clear();
    for (const box of this.#ui.view.querySelectorAll('section.step:not(.lead), .matrices.heads > figure.matrix + figure.matrix')) {
      box.addEventListener('contentvisibilityautostatechange', (e) => {
        if (e.skipped) this.#skipped.add(box);
        else this.#skipped.delete(box);
        for (const entry of this.#tables.values()) {
          entry.skipped = [...this.#skipped].some((b) => b.contains(entry.table));
          if (!entry.skipped && entry.stale) this.#paintEntry(entry);
        }
      });
    }
  }

  // A drag is a run of slider input events; it ends on change (pointer
  // released, or a key) or after a pause, and then the waiting tables are painted.
  #dragStep() {
    clearTimeout(this.#dragTimer);
    this.#dragTimer = setTimeout(() => this.#dragEnd(), DRAG_PAUSE_MS);
  }

  #dragEnd() {
    clearTimeout(this.#dragTimer);
    this.#dragTimer = 0;
    for (const entry of this.#tables.values()) if (entry.stale) this.#paintEntry(entry);
    this.#lines?.speak();
  }

  #section(step, children, { lead = false } = {}) {
    const title = lead ? leadTitle(this.#view.show, this.#config, this.#scaleIsDefault) : sectionTitle(step, this.#config, this.#scaleIsDefault);
    const slot = el('slot', { name: `explain-${step}` });
    // Texts set through `explanations` are the page's own; the defaults fit the controls shown.
    const own = this.#explanations[step] !== DEFAULT_EXPLANATIONS[step];
    slot.textContent = own ? this.#explanations[step] : defaultExplanation(step, this.#view.controls);
    return el('section', { class: `step step-${step}${lead ? ' lead' : ''}`, 'data-step': step, 'aria-label': title, part: lead ? 'attention' : `step-${step}` },
      el('h2', { text: title }),
      el('p', { class: 'explanation' }, slot),
      ...children);
  }

  #matrixOf(id) {
    const ex = this.#example;
    if (EDITABLE.has(id) || id === 'Q' || id === 'K' || id === 'V') return ex[id];
    const [key, h] = id.split('-');
    const head = ex.heads[Number(h)];
    return key === 'scaled' && head.logits ? head.logits : head[key];
  }

  #focusable({ id, i, j }) {
    const entry = this.#tables.get(id);
    return entry ? cellAt(entry, i, j) : null;
  }

  // ---- inspection: the popover and the cells a number comes from -------------

  #inspect(target, { quiet = false } = {}) {
    const ui = this.#ui;
    if (!target || !this.#tables.has(target.id)) {
      this.#inspected = null;
      ui.popover.hidden = true;
      highlight(this.#tables, []);
      return;
    }
    this.#inspected = target;
    const { text, sources } = explain({
      config: this.#config, example: this.#example, mask: this.#mask, edits: this.#edits, inputs: this.#inputs, scaleIsDefault: this.#scaleIsDefault,
    }, target.id, target.i, target.j);
    highlight(this.#tables, sources, target);
    if (ui.popover.textContent !== text) ui.popover.textContent = text;
    if (quiet && ui.popover.hidden) return;
    ui.popover.hidden = false;
    // Beside the cell when there is room on its right, else under it.
    const cell = this.#focusable(target);
    if (!cell) return;
    const root = ui.root.getBoundingClientRect();
    const r = cell.getBoundingClientRect();
    const width = Math.min(420, root.width - 16);
    ui.popover.style.width = `${width}px`;
    let left = r.right - root.left + 8;
    let top = r.top - root.top;
    const under = left + width > root.width;
    if (under) {
      left = Math.max(8, Math.min(r.left - root.left, root.width - width - 8));
      top = r.bottom - root.top + 6;
    }
    ui.popover.style.left = `${left}px`;
    ui.popover.style.top = `${top}px`;
    // It never ends below the window: under a cell it moves above it, beside
    // a cell it moves up (its bottom stays level with the cell's or lower).
    const height = ui.popover.offsetHeight;
    const bottom = window.innerHeight - 8 - root.top;
    if (top + height > bottom) {
      top = under ? r.top - root.top - 6 - height : Math.max(r.bottom - root.top - height, bottom - height);
      ui.popover.style.top = `${top}px`;
    }
  }

  #targetOf(node) {
    const td = node.closest?.('td[data-i]');
    if (!td) return null;
    return { id: td.closest('table').dataset.id, i: Number(td.dataset.i), j: Number(td.dataset.j), td };
  }

  // ---- interaction ----------------------------------------------------------------

  #onKeyDown(e) {
    if (e.target.tagName === 'INPUT') return;
    if (e.key === 'Escape') {
      this.#inspect(null);
      return;
    }
    const node = e.target.closest?.('[data-i]');
    const table = node?.closest('table');
    if (!table) return;
    const id = table.dataset.id;
    const entry = this.#tables.get(id);
    const i = Number(node.dataset.i), j = Number(node.dataset.j);
    const to = nextCell(e.key, e.ctrlKey, i, j, entry.rows.length, entry.cols.length, entry.buttons !== null);
    if (to) {
      e.preventDefault();
      const next = cellAt(entry, to[0], to[1]);
      if (next) {
        this.#focus = { id, i: to[0], j: to[1] };
        moveTabStop(entry, next);
      }
      return;
    }
    if (j < 0) return; // a row label: Enter and Space press the button
    if (EDITABLE.has(id) && (e.key === 'Enter' || e.key === 'F2' || /^[-+.\d]$/.test(e.key))) {
      e.preventDefault();
      this.#startEdit(node, id, i, j, /^[-+.\d]$/.test(e.key) ? e.key : null);
    } else if (id.startsWith('weights-') && (e.key === ' ' || e.key === 'Enter')) {
      // Space on a weight masks the pair: a key of its own, never a side effect of inspecting.
      e.preventDefault();
      this.#toggleMask(i, j);
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
      this.#select(Number(select.dataset.select));
      return;
    }
    const target = this.#targetOf(e.target);
    if (!target) {
      // A tap beside the tables closes the popover (touch has no pointer leaving).
      if (!e.target.closest?.('figure.lines, details, button, input')) this.#inspect(null);
      return;
    }
    const { id, i, j, td } = target;
    this.#focus = { id, i, j };
    const entry = this.#tables.get(id);
    if (entry) moveTabStop(entry, td);
    if (id.startsWith('weights-') && this.#masking) {
      this.#toggleMask(i, j);
    } else if (EDITABLE.has(id)) {
      this.#startEdit(td, id, i, j, null);
    } else {
      // A tap on a touch screen lands here: it inspects, as hover does.
      this.#inspect({ id, i, j });
    }
  }

  #onFocus(e) {
    const target = this.#targetOf(e.target);
    // Focus on something that is not a number (a row label, a query token, a
    // Copy menu) closes the popover: it would explain a cell no longer focused.
    if (!target) {
      if (!this.#root.activeElement?.matches?.('td[data-i] input')) this.#inspect(null);
      return;
    }
    if (e.target.tagName === 'INPUT') return;
    const { id, i, j, td } = target;
    const entry = this.#tables.get(id);
    if (entry) {
      const blocked = entry.step === 'weights' || entry.step === 'scaled' ? this.#blocked(i, j) : '';
      td.setAttribute('aria-label', cellLabel(entry, i, j, td.textContent, blocked, EDITABLE.has(id) && this.#edits.has(`${id}:${i}:${j}`)));
    }
    this.#focus = { id, i, j };
    this.#inspect(this.#focus);
  }

  #onHover(e) {
    if (e.pointerType === 'touch') return; // a tap inspects through click
    const target = this.#targetOf(e.target);
    if (target) this.#inspect({ id: target.id, i: target.i, j: target.j });
  }

  #select(i) {
    this.#selected = this.#selected === i ? -1 : i;
    this.#lines?.select(this.#selected);
    this.#repaint();
  }

  #toggleMask(i, j) {
    const n = this.#config.tokens.length;
    if (!this.#mask) this.#mask = new Uint8Array(n * n).fill(1);
    this.#mask[i * n + j] ^= 1;
    this.#schedule();
  }

  #startEdit(td, id, i, j, firstKey) {
    const old = this.#matrixOf(id).get(i, j);
    startEdit(td, {
      label: td.getAttribute('aria-label'),
      value: String(Number(old.toPrecision(6))),
      firstKey,
      done: (text) => {
        let changed = false;
        if (text !== null) {
          const r = parseCellValue(text, `${id}[${i}][${j}]`, fixed(old, 4));
          if (r.error) this.#showMessage(r.error);
          else {
            this.#edits.set(`${id}:${i}:${j}`, r.value);
            changed = true;
          }
        }
        this.#focus = { id, i, j };
        const entry = this.#tables.get(id);
        if (entry) {
          entry.painted[i * entry.cols.length + j] = '';
          entry.data = null;
        }
        this.#repaint();
        this.#focusable(this.#focus)?.focus();
        if (changed) this.#schedule();
      },
    });
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

  // ---- copy and save ----------------------------------------------------------------

  #copy(id, format) {
    const m = this.#matrixOf(id);
    const t = this.#config.tokens;
    const rowLabels = ['WQ', 'WK', 'WV'].includes(id) ? Array.from({ length: m.rows }, (_, i) => `x${i}`) : t;
    const colLabels = /^(scores|scaled|weights)-/.test(id) ? t : Array.from({ length: m.cols }, (_, j) => `c${j}`);
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
    this.#ui.popover.textContent = text;
    this.#ui.popover.hidden = false;
  }

  #snapshot() {
    const n = this.#config.tokens.length;
    let maskedPairs = 0;
    if (this.#mask) for (let k = 0; k < n * n; k++) maskedPairs += this.#mask[k] === 0 ? 1 : 0;
    return snapshotView({
      config: this.#config, example: this.#example, parts: this.#view.show, step: this.#view.step, blocked: this.#blocked,
      maskedPairs, scaleIsDefault: this.#scaleIsDefault, enabledHeads: this.#lines?.enabled ?? [],
    });
  }

  /** The current view as an SVG document string. */
  toSVG() {
    return this.#example ? toSVG(this.#snapshot()) : '';
  }

  async #save(format) {
    if (!this.#example) return;
    const blob = await save(format, this.#snapshot(), this.#root);
    this.dispatchEvent(new CustomEvent('attention-save', { bubbles: true, composed: true, detail: { format, size: blob.size, type: blob.type } }));
  }
}

// Properties mirroring the attributes, one per row of the settings table:
// numbers read back the value in use (defaults filled in), booleans the
// attribute's presence; null or undefined removes the attribute.
const DEFAULTS = {
  tokens: (self) => self.getAttribute('tokens') ?? HANDBOOK.tokens.join(' '),
  dv: (self) => self.config?.dv ?? self.dk,
  kvHeads: (self) => self.config?.kvHeads ?? self.heads,
  scale: (self) => self.config?.scale ?? defaultScale(self.dk),
};
for (const s of SETTINGS) {
  const get = s.kind === 'bool'
    ? function () { return this.hasAttribute(s.attr) && this.getAttribute(s.attr) !== 'false' && this.getAttribute(s.attr) !== '0'; }
    : s.key === 'step'
      ? function () { const v = this.getAttribute('step'); return v !== null && STEPS.includes(v) ? v : 'all'; }
      : s.key === 'show'
        ? function () { const v = this.getAttribute('show'); return v === null ? PARTS.join(' ') : v; }
        : s.key === 'controls'
          ? function () { const v = this.getAttribute('controls'); return CONTROLS.includes(v) ? v : 'full'; }
          : DEFAULTS[s.key]
            ? function () { return DEFAULTS[s.key](this); }
            : function () { return this.config?.[s.key] ?? HANDBOOK[s.key]; };
  const set = s.kind === 'bool'
    ? function (value) { this.toggleAttribute(s.attr, Boolean(value)); }
    : function (value) {
      if (value === null || value === undefined || (s.key === 'step' && value === 'all')) this.removeAttribute(s.attr);
      else this.setAttribute(s.attr, Array.isArray(value) ? value.join(' ') : String(value));
    };
  Object.defineProperty(AttentionExplorer.prototype, s.key, { get, set, configurable: true, enumerable: false });
}

/** The limits the explorer accepts, for pages that build their own controls. */
AttentionExplorer.LIMITS = LIMITS;
