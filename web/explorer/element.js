// element.js - the <attention-explorer> custom element class: its
// properties, lifecycle, one update per microtask and the events it fires.
// web/explorer.js defines it; this file only declares it.
//
// Data flow: attributes/properties -> readSettings (settings.js)
// -> the wasm library computes every matrix (computation.js) -> the shadow
// root: the toolbar and settings panel (toolbar.js), the view
// (steps-view.js: the lines view of lines.js and the tables of tables.js,
// keyboard and editing in grid.js), and the popover with a number's
// derivation (popover.js, its text from text.js). Saving goes through
// export.js. User text only enters the DOM through textContent or
// attribute values.
//
// A new view of the numbers (the lines view is the model) is a module of its
// own with a class holding an `element`, `build(...)` for a new structure and
// `update(...)` for new numbers: StepsView#render builds it when its part is
// in `show` (PARTS in settings.js) and repaints it, snapshotView (export.js)
// draws it for PNG/SVG.

import { loadAttention } from '../attention.js';
import { el } from './dom.js';
import { groundScheme } from './ground.js';
import { copyOut, save, snapshotView, toSVG } from './export.js';
import { parseCellValue, startEdit } from './grid.js';
import { Popover } from './popover.js';
import { derive } from '../worked/derivation.js';
import { render as renderDerivation } from './derivation-view.js';
import { installSet, resolveHighlight } from './highlight.js';
import { defineSettingProperties } from './properties.js';
import { PARTS, SETTINGS, STEPS, isFigure, readSettings, salvageSettings } from '../worked/settings.js';
import { StepsView } from './steps-view.js';
import { copyLabels, matrixOf } from './step-tables.js';
import { composeInputs, drawKey, readInputs, readMask, sameInputs, sameMask, stateOf } from './property-values.js';
import { STYLES } from './styles.js';
import { Toolbar } from './toolbar.js';
import { TRAIN_STYLES, TrainPanel } from './train-view.js';
import { DEFAULT_EXPLANATIONS, blockedReason, explain } from '../worked/text.js';
import { LIMITS, computeExample, drawInputs } from '../worked/computation.js';
import { fixed, toCSV, toMarkdown, toNumpy } from '../worked/format.js';
import { MODEL_STYLES, ModelSource } from './model-source.js';

export { STEPS, DEFAULT_EXPLANATIONS };

// Step mode's Play shows each step this long.
const PLAY_STEP_MS = 2500;

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

// The properties a page can set, settings first (the mask's shape follows the tokens).
const UPGRADED = [...SETTINGS.map((s) => s.key), 'inputs', 'explanations', 'mask', 'masking', 'attentions'];

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
  #ui = {}; // the shadow root's own nodes: root, message, copyArea
  #toolbar = null; // Toolbar: the toolbar and the settings panel
  #steps = null; // StepsView: the sections and their tables
  #popover = new Popover();
  #attn = null;
  #train = null; // the Train part (train-view.js) while the train attribute is on
  #loadError = null;
  #config = null; // last good config
  #salvaged = false; // whether #config was drawn from salvaged settings (salvageSettings)
  #settingsNote = ''; // what was wrong with the attributes a first view had to leave at defaults
  #view = { step: 'all', show: new Set(PARTS), controls: 'full' }; // last good view settings
  #state = null; // last good state
  #example = null; // computeExample result of the last good state
  #drawn = null; // { key, inputs } the random draws of the last config
  #inputs = {}; // matrices set through the inputs property
  #edits = new Map(); // "X:i:j" -> number, typed into cells
  #editKey = ''; // seed and shapes the edits belong to
  #mask = null; // Uint8Array (n, n), 1 = may attend; null = all allowed
  #masking = false; // clicks on weights mask pairs (else they inspect)
  #inspected = null; // { id, i, j } whose derivation the popover shows
  #scheduled = false;
  #playTimer = 0;
  #explanations = { ...DEFAULT_EXPLANATIONS };
  #models = null; // ModelSource: a model's or outside attention in place of the draws
  #source = null; // what #models.prepare gave for the numbers on screen
  #highlight = null; // the story's highlight spec (highlight())
  #sourceTexts = 'null'; // the model's section texts the view was built with
  #masked = null; // the word a model's view masks (model-mask), whose row the lines view selects

  constructor() {
    super();
    this.#root = this.attachShadow({ mode: 'open' });
    this.#buildSkeleton();
    // A figure's palette follows its page's ground, which may change with the scheme.
    globalThis.matchMedia?.('(prefers-color-scheme: dark)').addEventListener?.('change', () => this.#schedule());
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
    let next;
    try {
      next = readInputs(value);
    } catch (err) {
      this.#showMessage(err.message);
      return;
    }
    // Equal matrices and no typed-in edits: nothing changes, so nothing recomputes
    // (a framework that sets inputs={...} on every render would loop otherwise).
    if (this.#edits.size === 0 && sameInputs(next, this.#inputs)) return;
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
      if (this.#mask === null || !this.#mask.includes(0)) return;
      this.#mask = null;
    } else {
      let next;
      try {
        next = readMask(value, this.#state?.tokens.length ?? value.length);
      } catch (err) {
        this.#showMessage(err.message);
        return;
      }
      if (sameMask(next, this.#mask)) return;
      this.#mask = next;
    }
    this.#schedule();
  }

  /** Per-step explanation texts { inputs?, projections?, scores?, scaled?, weights?, output? }. Slots win over these. */
  get explanations() {
    return { ...this.#explanations };
  }
  set explanations(value) {
    const next = { ...DEFAULT_EXPLANATIONS };
    for (const step of STEPS) if (typeof value?.[step] === 'string') next[step] = value[step];
    if (STEPS.every((step) => next[step] === this.#explanations[step])) return;
    this.#explanations = next;
    this.#steps.invalidate(); // the texts live in the built sections: rebuild them
    this.#schedule();
  }

  /** Attention computed elsewhere, { tokens, attention, shape?, source? } (explorer.d.ts); null: the element's own numbers. */
  get attentions() {
    return this.#models.attentions;
  }
  set attentions(value) {
    try {
      this.#models.setAttentions(value);
      this.#schedule();
    } catch (err) {
      this.#showMessage(err.message);
    }
  }

  /** Whether clicking a weight masks the pair (true) or explains it (false). */
  get masking() {
    return this.#masking;
  }
  set masking(value) {
    this.#masking = Boolean(value);
    this.#syncMasking();
  }

  // ---- the story API: a page's prose drives the figure -------------------------

  /**
   * Lights part of the figure: { part, head?, row?, col? } (highlight.js;
   * rows and columns by index or token, absent for all), or null to clear.
   * Kept across recomputes; a bad spec throws TypeError or RangeError.
   */
  highlight(spec) {
    this.#highlight = spec ?? null;
    // Before the first view there is nothing to light: the first render applies the spec.
    if (this.#config) this.#steps.setStory(resolveHighlight(this.#highlight, this.#config));
  }

  // ---- lifecycle -------------------------------------------------------------

  connectedCallback() {
    this.#upgradeProperties();
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

  // A page may set properties on the element before this module defines it
  // (el.tokens = ... on an undefined element, then the import): they are own
  // properties that hide the accessors. Each goes through its accessor now,
  // as Google's and GitHub's custom element guides do.
  #upgradeProperties() {
    for (const key of UPGRADED) {
      if (!Object.prototype.hasOwnProperty.call(this, key)) continue;
      const value = this[key];
      delete this[key];
      this[key] = value;
    }
  }

  disconnectedCallback() {
    this.#stopPlaying();
    this.#steps.disconnect();
    this.#train?.pause();
    this.#models.dispose();
  }

  attributeChangedCallback(name, before, after) {
    // setAttribute with the value it already has (and a property set to its
    // current value, which sets the attribute) changes nothing.
    if (before === after) return;
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
    this.#settingsNote = '';
    try {
      settings = readSettings((attr) => this.getAttribute(attr));
    } catch (err) {
      // The last good view stays. With none yet, or when what is shown is
      // itself salvaged (drawn before a model it names had loaded), the good
      // settings and defaults for the rest, drawn again.
      if (this.#config && !this.#salvaged) {
        this.#showMessage(err.message);
        return;
      }
      settings = salvageSettings((attr) => this.getAttribute(attr));
      this.#settingsNote = `${err.message}; shown with its default instead`;
    }
    if (!this.#attn) {
      if (!this.#loadError) this.#showMessage(this.#settingsNote);
      return;
    }
    let { config, view } = settings;
    // A model or outside attention decides the tokens' numbers and the sizes.
    const source = this.#models.prepare(config, view);
    if (source?.error) {
      this.#showMessage(source.error);
      return;
    }
    if (source) ({ config, view } = source);
    if (source?.kind === 'external') {
      this.#showExternal(source);
      return;
    }
    const n = config.tokens.length;
    // Typed-in numbers belong to one draw; a new seed, shapes or embeddings start afresh.
    const key = drawKey(config, source?.key);
    if (key !== this.#editKey) {
      this.#edits.clear();
      this.#editKey = key;
    }
    // The draws change only with seed, shapes and embeddings: a slider drag reuses them.
    if (this.#drawn?.key !== key) this.#drawn = { key, inputs: drawInputs(config) };
    let inputs;
    try {
      inputs = composeInputs(config, this.#inputs, source ? source.inputs : this.#drawn.inputs, this.#edits);
    } catch (err) {
      this.#showMessage(err.message);
      return;
    }
    if (this.#mask && this.#mask.length !== n * n) this.#mask = null;
    const mask = this.#mask && this.#mask.includes(0) ? this.#mask : undefined;
    const ex = computeExample(this.#attn, config, inputs, mask);
    this.#source = source;
    this.#config = config;
    this.#salvaged = this.#settingsNote !== '';
    this.#view = view;
    this.#example = ex;
    this.#state = stateOf(ex, config.heads);
    this.#showMessage([this.#settingsNote, source?.note].filter(Boolean).join('. '), this.#settingsNote || source?.noteKind !== 'info' ? 'error' : 'info');
    this.#render();
    this.#syncTrain();
    const detail = { step: view.step, mask: this.#mask && this.#mask.includes(0) ? this.mask : null, edited: this.#edits.size > 0 || Object.keys(this.#inputs).length > 0 };
    for (const s of SETTINGS) if (s.compute) detail[s.key] = Array.isArray(config[s.key]) ? [...config[s.key]] : config[s.key];
    this.dispatchEvent(new CustomEvent('attention-change', { bubbles: true, composed: true, detail }));
  }

  // normalizeConfig decides it once, for the element and the command line alike.
  get #scaleIsDefault() {
    return this.#config?.scaleIsDefault ?? true;
  }

  #blocked = (i, j) => blockedReason(this.#config, this.#mask, this.#config.tokens.length, i, j);

  // ---- the parts: toolbar, settings, message, view, popover ---------------------

  #buildSkeleton() {
    const ui = this.#ui;
    this.#toolbar = new Toolbar(this, {
      clearMask: () => { this.#mask = null; this.#schedule(); },
      undoEdits: () => { this.#edits.clear(); this.#inputs = {}; this.#schedule(); },
      move: (delta) => this.#move(delta),
      togglePlay: () => this.#togglePlay(),
      save: (format) => this.#save(format),
      dragStep: () => this.#steps.dragStep(),
      dragEnd: () => this.#steps.dragEnd(),
      headPicked: () => this.#syncHeadPick(),
    });
    this.#steps = new StepsView(() => this.#context(), {
      inspect: (target) => this.#inspect(target),
      edit: (td, id, i, j, firstKey) => this.#startEdit(td, id, i, j, firstKey),
      toggleMask: (i, j) => this.#toggleMask(i, j),
      copy: (id, format) => this.#copy(id, format),
      masking: () => this.#masking,
      // The popover always shows the current value of what it explains.
      painted: () => {
        if (this.#inspected) this.#inspect(this.#inspected, { quiet: true });
      },
    });
    ui.message = el('p', { class: 'message', role: 'alert', hidden: true });
    ui.copyArea = el('div', { class: 'copy-fallback', hidden: true });
    this.#models = new ModelSource(this, () => this.#schedule());
    // A figure's caption is the author's: <p slot="caption"> under the view.
    ui.caption = el('div', { class: 'caption', part: 'caption' }, el('slot', { name: 'caption' }));
    ui.root = el('div', { class: 'root' }, this.#toolbar.toolbar, this.#toolbar.settings, ui.message, ui.copyArea, this.#models.element, this.#steps.element, ui.caption, this.#popover.element);
    this.#root.append(el('style', { text: STYLES + MODEL_STYLES }), ui.root);
    this.#toolbar.watchHeight(ui.root);
  }

  // What the view paints from: the state of the last good update. A model's
  // texts (the inputs are its own, not draws) stand in for the defaults.
  #context() {
    const own = this.#source?.explanations ?? {};
    const explanations = { ...this.#explanations };
    for (const step of Object.keys(own)) if (explanations[step] === DEFAULT_EXPLANATIONS[step]) explanations[step] = own[step];
    return {
      config: this.#config, view: this.#view, example: this.#example, explanations,
      scaleIsDefault: this.#scaleIsDefault, blocked: this.#blocked, edits: this.#edits, mask: this.#mask,
    };
  }

  #render() {
    if (this.#view.model === 'english' && this.#masking) this.masking = false; // see the toolbar's Mask pairs
    this.#toolbar.sync({
      config: this.#config, view: this.#view, scaleIsDefault: this.#scaleIsDefault, masking: this.#masking,
      masked: Boolean(this.#mask && this.#mask.includes(0)), edited: this.#edits.size > 0 || Object.keys(this.#inputs).length > 0,
    });
    // Written only when they change: a write re-matches every rule that reads them, down the whole view.
    const root = this.#ui.root, appearance = isFigure(this.#view) ? 'figure' : 'app';
    if (root.dataset.controls !== this.#view.controls) root.dataset.controls = this.#view.controls;
    if (root.dataset.appearance !== appearance) root.dataset.appearance = appearance;
    // On the host, so an author's custom properties on the element still win.
    const ground = appearance === 'figure' ? groundScheme(this) : undefined;
    if (this.dataset.attnGround !== ground) ground ? this.dataset.attnGround = ground : delete this.dataset.attnGround;
    this.#syncMasking();
    this.#syncHeadPick();
    this.#models.render(this.#source);
    // A model's texts in the sections follow its head and mask: the sections are built again when they change.
    const texts = JSON.stringify(this.#source?.explanations ?? null);
    if (texts !== this.#sourceTexts) {
      this.#sourceTexts = texts;
      this.#steps.invalidate();
    }
    // A highlight whose rows or columns left with the tokens is dropped.
    try {
      this.#steps.setStory(resolveHighlight(this.#highlight, this.#config), { quiet: true });
    } catch {
      this.#highlight = null;
      this.#steps.setStory(null, { quiet: true });
    }
    this.#steps.render();
    // A masked word's row is where it looks: the lines view shows that row alone.
    const masked = this.#source?.masked ?? null;
    if (masked !== this.#masked) {
      this.#masked = masked;
      this.#steps.selectQuery(masked ?? -1);
    }
  }

  // Weights computed elsewhere: the lines view and the weights table show
  // the chosen head; no other step has numbers.
  #showExternal(source) {
    ({ config: this.#config, view: this.#view, example: this.#example } = source);
    this.#source = source;
    this.#mask = null;
    this.#state = Object.freeze({ tokens: [...this.#config.tokens], weights: this.#example.heads[0].weights });
    this.#showMessage(this.#settingsNote);
    this.#render();
    this.#syncTrain();
  }

  // The Train part: made when the train attribute turns on, placed above the
  // view, told after every update; it changes this element only through
  // the public inputs, positions and embeddings.
  #syncTrain() {
    if (this.#view.train && !this.#train) {
      this.#train = new TrainPanel({ attn: this.#attn, host: this, document: this.ownerDocument });
      this.#ui.root.insertBefore(this.#train.element, this.#steps.element);
      if (!this.#root.querySelector('style[data-train]')) this.#root.append(el('style', { text: TRAIN_STYLES, 'data-train': '' }));
    } else if (!this.#view.train && this.#train) {
      this.#train.dispose();
      this.#train.element.remove();
      this.#train = null;
    }
    this.#train?.sync();
  }

  // An error (a bad attribute or input) is also a console warning, once per
  // new text, so a page's author sees it in the console; a note (kind 'info',
  // such as words the model does not know) is for the reader only.
  #showMessage(text, kind = 'error') {
    const m = this.#ui.message;
    if (kind === 'error' && text !== '' && (text !== m.textContent || m.dataset.kind !== 'error')) console.warn(`attention-explorer: ${text}`);
    m.textContent = text;
    m.dataset.kind = kind;
    m.hidden = text === '';
  }

  #syncMasking() {
    this.#toolbar.syncMasking(this.#masking);
    this.#steps.element.classList.toggle('masking', this.#masking);
  }

  // With several heads the tables show every head or the one picked; the
  // lines view always draws every head.
  #syncHeadPick() {
    const head = this.#toolbar.pickHead(this.#config.heads, this.#view.controls);
    const view = this.#steps.element;
    if (head < 0) delete view.dataset.head;
    else view.dataset.head = String(head);
    if (this.#example) this.#steps.syncHead();
  }

  // ---- inspection: the popover and the cells a number comes from -------------

  #inspect(target, { quiet = false } = {}) {
    if (!target || !this.#steps.has(target.id)) {
      this.#inspected = null;
      this.#popover.hide();
      this.#steps.highlight([]);
      return;
    }
    this.#inspected = target;
    // Weights computed elsewhere have no derivation: ModelSource says where they came from.
    const { text, sources } = this.#example.external ? this.#models.explain(this.#source, target) : explain({
      config: this.#config, example: this.#example, mask: this.#mask, edits: this.#edits, inputs: this.#inputs, scaleIsDefault: this.#scaleIsDefault, origin: this.#source?.origin,
    }, target.id, target.i, target.j);
    this.#steps.highlight(sources, target);
    const model = this.#example.external ? null : derive({ config: this.#config, example: this.#example, mask: this.#mask, scaleIsDefault: this.#scaleIsDefault }, target.id, target.i, target.j);
    this.#popover.show(text, this.#steps.cell(target), this.#ui.root, { quiet, figure: model ? renderDerivation(model, this.ownerDocument) : null });
  }

  // ---- the reader's changes: masks, edits, steps ----------------------------------

  #toggleMask(i, j) {
    const n = this.#config.tokens.length;
    if (!this.#mask) this.#mask = new Uint8Array(n * n).fill(1);
    this.#mask[i * n + j] ^= 1;
    this.#schedule();
  }

  #startEdit(td, id, i, j, firstKey) {
    const old = matrixOf(this.#example, id).get(i, j);
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
        this.#steps.editDone(id, i, j);
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
    this.#toolbar.setPlaying(true);
    this.#playTimer = setInterval(() => this.#move(1), PLAY_STEP_MS);
  }

  #stopPlaying() {
    clearInterval(this.#playTimer);
    this.#playTimer = 0;
    this.#toolbar?.setPlaying(false);
  }

  // ---- copy and save ----------------------------------------------------------------

  #copy(id, format) {
    const m = matrixOf(this.#example, id);
    const { rows, cols } = copyLabels(id, m, this.#config.tokens);
    const text = format === 'numpy' ? toNumpy(m) : format === 'CSV' ? toCSV(m, rows, cols) : toMarkdown(m, rows, cols);
    this.dispatchEvent(new CustomEvent('attention-copy', { bubbles: true, composed: true, detail: { matrix: id, format, text } }));
    copyOut(text, `${id} as ${format}`, this.#ui.copyArea, (said) => this.#popover.flash(said));
  }

  #snapshot() {
    const n = this.#config.tokens.length;
    let maskedPairs = 0;
    if (this.#mask) for (let k = 0; k < n * n; k++) maskedPairs += this.#mask[k] === 0 ? 1 : 0;
    return snapshotView({
      config: this.#config, example: this.#example, parts: this.#view.show, step: this.#view.step, blocked: this.#blocked,
      maskedPairs, scaleIsDefault: this.#scaleIsDefault, enabledHeads: this.#steps.enabledHeads, model: this.#models.titleOf(this.#source),
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


defineSettingProperties(AttentionExplorer.prototype);

/** The limits the explorer accepts, for pages that build their own controls. */
AttentionExplorer.LIMITS = LIMITS;
installSet(AttentionExplorer.prototype, UPGRADED);
