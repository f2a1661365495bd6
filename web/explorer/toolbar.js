// toolbar.js - the controls of <attention-explorer>: the sticky toolbar
// (tokens, scale slider, causal, heads and the head picker, "Mask pairs",
// the step buttons) and the settings panel (sizes, seed, embeddings, window,
// softcap, query offset, reset buttons, saving) with the weights switch
// beside it (random, or the English encoder). A control that mirrors a
// setting writes the host's attribute, and sync() writes the config in use
// back into the controls; what only the element can do (clear the mask,
// undo edits, step, play, save, a slider drag) goes through `actions`.

import { el } from './dom.js';
import { EMBEDDINGS, HANDBOOK } from '../worked/computation.js';
import { SCALE_SLIDER, SETTING, STEPS, scaleToSlider, sliderToScale } from '../worked/settings.js';
import { scaleText } from '../worked/text.js';

export class Toolbar {
  #ui = {};
  #headPicked = null; // the head the picker shows (-1: all), null until the reader picks one
  #shown = new Set(STEPS); // the parts the view shows (view.show of the last sync)
  // Inputs typed in since their value was last applied ('input' without its
  // 'change' or Enter yet): sync leaves those alone while they have focus.
  #typing = new WeakSet();

  /**
   * @param {HTMLElement} host the <attention-explorer> whose attributes the controls write
   * @param {{ clearMask: () => void, undoEdits: () => void, move: (delta: number) => void, togglePlay: () => void,
   *   save: (format: 'png' | 'svg') => void, dragStep: () => void, dragEnd: () => void, headPicked: () => void }} actions
   */
  constructor(host, actions) {
    const ui = this.#ui;
    const field = (label, input, cls = '') => el('label', { class: `field ${cls}` }, el('span', { text: label }), input);
    const number = (attr) => {
      const s = SETTING[attr];
      const input = el('input', { type: 'number', min: s.min, max: s.max, step: 1, inputmode: 'numeric' });
      input.addEventListener('change', () => host.setAttribute(attr, input.value.trim()));
      return input;
    };
    // A text setting: the attribute follows the field; an empty field removes it.
    const textSetting = (attr, props) => {
      const input = el('input', { spellcheck: 'false', autocomplete: 'off', ...props });
      input.addEventListener('change', () => {
        const value = input.value.trim();
        if (value === '') host.removeAttribute(attr);
        else host.setAttribute(attr, value);
      });
      return input;
    };
    ui.tokens = el('input', { type: 'text', spellcheck: 'false', autocomplete: 'off', title: 'Tokens separated by spaces; Enter to apply' });
    // A sentence typed in opens unmasked: the masked index belonged to the
    // words before, and would hide another word of the new ones unasked.
    const setTokens = () => {
      this.#typing.delete(ui.tokens);
      if (ui.tokens.value === host.getAttribute('tokens')) return;
      host.removeAttribute('model-mask');
      host.setAttribute('tokens', ui.tokens.value);
    };
    ui.tokens.addEventListener('change', setTokens);
    ui.tokens.addEventListener('keydown', (e) => {
      if (e.key === 'Enter') setTokens();
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
      const scale = sliderToScale(Number(ui.scale.value), host.config?.dk ?? HANDBOOK.dk);
      if (scale === null) host.removeAttribute('scale');
      else host.setAttribute('scale', String(scale));
      actions.dragStep();
    });
    ui.scale.addEventListener('change', () => actions.dragEnd());
    ui.scaleText = el('output', { class: 'scale-text' });
    ui.scaleReset = el('button', { type: 'button', class: 'full-only scale-reset', text: '↺ 1/√dₖ', 'aria-label': 'Reset the scale to 1/√d_k', title: 'Reset the scale to 1/sqrt(d_k)', onclick: () => host.removeAttribute('scale') });
    ui.causal = el('input', { type: 'checkbox' });
    ui.causal.addEventListener('change', () => host.toggleAttribute('causal', ui.causal.checked));
    ui.headPick = el('select', { 'aria-label': 'head shown in the tables' });
    ui.headPick.addEventListener('change', () => {
      this.#headPicked = Number(ui.headPick.value);
      actions.headPicked();
    });
    ui.headPickField = field('show', ui.headPick, 'head-pick');
    ui.masking = el('button', { type: 'button', class: 'full-only', 'aria-pressed': 'false', text: 'Mask pairs', title: 'When on, clicking a weight masks or unmasks that pair; when off, it explains the number',
      onclick: () => { host.masking = !host.masking; } });
    ui.window = textSetting('window', { type: 'text', class: 'short', placeholder: 'left right', title: SETTING.window.help });
    ui.softcap = textSetting('softcap', { type: 'number', min: 0, step: 'any', placeholder: 'none', title: SETTING.softcap.help });
    ui.queryOffset = textSetting('query-offset', { type: 'number', step: 1, title: SETTING['query-offset'].help });
    ui.embeddings = el('select', {}, ...EMBEDDINGS.map((e) => el('option', { value: e, text: e })));
    ui.embeddings.addEventListener('change', () => host.setAttribute('embeddings', ui.embeddings.value));
    ui.positions = el('input', { type: 'checkbox' });
    ui.positions.addEventListener('change', () => host.toggleAttribute('positions', ui.positions.checked));
    ui.resetMask = el('button', { type: 'button', class: 'reset-mask', text: 'Clear mask', onclick: actions.clearMask });
    ui.resetEdits = el('button', { type: 'button', text: 'Undo edits', onclick: actions.undoEdits });
    // Step mode opens on the first step shown (inputs on the full page).
    ui.mode = el('button', { type: 'button', 'aria-pressed': 'false',
      onclick: () => { host.step = host.step === 'all' ? STEPS.find((s) => this.#shown.has(s)) ?? STEPS[0] : 'all'; } });
    ui.prev = el('button', { type: 'button', text: '◀ Previous', onclick: () => actions.move(-1) });
    ui.next = el('button', { type: 'button', text: 'Next ▶', onclick: () => actions.move(1) });
    ui.play = el('button', { type: 'button', text: 'Play', onclick: actions.togglePlay });
    ui.stepNav = el('div', { class: 'step-nav full-only', role: 'group', 'aria-label': 'steps' }, ui.prev, ui.next, ui.play);
    // Random or trained weights on the same sentence: the handbook's draws, or the English encoder (fetched on the first press).
    ui.random = el('button', { type: 'button', 'aria-pressed': 'true', text: 'random', title: 'The handbook’s random X, W_Q, W_K, W_V',
      onclick: () => {
        // A masked word is the trained model's: random weights have no guesses to show.
        host.removeAttribute('model-mask');
        host.removeAttribute('model');
      } });
    ui.trained = el('button', { type: 'button', 'aria-pressed': 'false', text: 'trained on English', title: 'An encoder trained on English to fill in masked words',
      onclick: () => host.setAttribute('model', 'english') });
    ui.weights = el('div', { class: 'field weights-switch', role: 'group', 'aria-label': 'weights' }, el('span', { text: 'weights' }), ui.random, ui.trained);
    ui.savePNG = el('button', { type: 'button', text: 'Save PNG', onclick: () => actions.save('png') });
    ui.saveSVG = el('button', { type: 'button', text: 'Save SVG', onclick: () => actions.save('svg') });

    ui.toolbar = el('div', { class: 'toolbar', part: 'toolbar', role: 'group', 'aria-label': 'attention controls' },
      field('Tokens', ui.tokens, 'tokens full-only'),
      // The readout and its reset wrap together: a reset alone on a row would be a blank row at the default scale.
      el('span', { class: 'field scale' }, el('label', { class: 'field' }, el('span', { text: 'scale' }), ui.scale),
        el('span', { class: 'scale-readout' }, ui.scaleText, ui.scaleReset)),
      el('label', { class: 'field check' }, ui.causal, el('span', { text: 'causal' })),
      field('heads', ui.heads, 'heads'), ui.headPickField,
      ui.masking, ui.stepNav);
    ui.settings = el('details', { class: 'settings full-only', part: 'settings' },
      el('summary', { text: 'Settings, steps and export' }),
      el('div', { class: 'row draw' },
        field('seed', ui.seed), field('d_model', ui.dModel), field('d_k', ui.dk), field('d_v', ui.dv), field('kv-heads', ui.kvHeads),
        field('embeddings', ui.embeddings), el('label', { class: 'field check' }, ui.positions, el('span', { text: 'positions' }))),
      el('div', { class: 'row draw' }, field('window', ui.window), field('softcap', ui.softcap), field('query offset', ui.queryOffset)),
      // In their place while a model's numbers are shown (model-view.js's styles swap them).
      el('p', { class: 'model-settings-note', text: 'A model brings its own sizes and numbers: the seed, the sizes, the window, softcap and query offset belong to the handbook’s random weights.' }),
      el('div', { class: 'row' }, ui.resetMask, ui.resetEdits, ui.mode, el('span', { class: 'spacer' }), ui.savePNG, ui.saveSVG));
    // Beside the settings' summary, not in the toolbar: the toolbar keeps to one row at a laptop's width.
    ui.settingsRow = el('div', { class: 'settings-row full-only' }, ui.settings, ui.weights);
    for (const box of [ui.toolbar, ui.settings]) {
      box.addEventListener('input', (e) => this.#typing.add(e.target));
      box.addEventListener('change', (e) => this.#typing.delete(e.target));
    }
  }

  /** The sticky toolbar. */
  get toolbar() {
    return this.#ui.toolbar;
  }

  /** The settings panel (a details element under the toolbar) with the weights switch beside it. */
  get settings() {
    return this.#ui.settingsRow;
  }

  /**
   * A cell that takes focus scrolls clear of the sticky toolbar: `box` gets
   * the toolbar's height as --attn-toolbar-height, the cells' scroll margin.
   */
  watchHeight(box) {
    if (typeof ResizeObserver === 'undefined') return;
    new ResizeObserver(([entry]) => {
      box.style.setProperty('--attn-toolbar-height', `${Math.ceil(entry.borderBoxSize?.[0]?.blockSize ?? entry.contentRect.height)}px`);
    }).observe(this.#ui.toolbar);
  }

  /**
   * Writes the config in use into the controls (never into the one being
   * typed in). `masked` and `edited` enable the reset buttons.
   */
  sync({ config: c, view, scaleIsDefault, masked, edited, masking }) {
    const ui = this.#ui;
    const active = ui.toolbar.getRootNode().activeElement;
    // A focused input that was applied (Enter, change) follows the config
    // like any other, so Back or a script's change shows in it.
    const set = (input, value) => {
      if ((input !== active || !this.#typing.has(input)) && input.value !== String(value)) input.value = String(value);
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
    // The slider's range is fixed: only its thumb follows the scale.
    set(ui.scale, scaleToSlider(c.scale, c.dk));
    const text = scaleText(c, scaleIsDefault);
    ui.scaleText.textContent = text;
    ui.scale.setAttribute('aria-valuetext', text);
    ui.scaleReset.disabled = scaleIsDefault;
    ui.resetMask.disabled = !masked;
    ui.resetEdits.disabled = !edited;
    // The switch is for the handbook's draws and the English encoder; another model or outside attention hides it.
    const trained = view.model === 'english';
    ui.weights.hidden = Boolean(view.model && !trained) || Boolean(view.attentionsSrc);
    ui.random.setAttribute('aria-pressed', String(!trained));
    ui.trained.setAttribute('aria-pressed', String(trained));
    // The trained encoder's guesses come from its own forward pass, which a
    // pair masked in one head's table would not reach: no pair masking there.
    ui.masking.hidden = trained;
    this.#shown = view.show;
    const stepMode = view.step !== 'all';
    ui.mode.textContent = stepMode ? 'Show all steps' : 'Step by step';
    ui.mode.setAttribute('aria-pressed', String(stepMode));
    ui.stepNav.hidden = !stepMode;
    ui.prev.disabled = view.step === STEPS[0];
    ui.next.disabled = view.step === STEPS[STEPS.length - 1];
    this.syncMasking(masking);
  }

  syncMasking(masking) {
    this.#ui.masking.setAttribute('aria-pressed', String(masking));
  }

  /**
   * The head the tables show (-1: every head). With several heads the
   * picker offers every head or one; a compact embed (controls minimal or
   * none) with more than two heads opens on head 1 so it stays short.
   */
  pickHead(heads, controls) {
    const ui = this.#ui;
    ui.headPickField.hidden = heads === 1;
    if (ui.headPick.options.length !== heads + 1) {
      ui.headPick.replaceChildren(el('option', { value: -1, text: 'all heads' }),
        ...Array.from({ length: heads }, (_, h) => el('option', { value: h, text: `head ${h + 1}` })));
    }
    const fallback = controls !== 'full' && heads > 2 ? 0 : -1;
    const picked = this.#headPicked !== null && this.#headPicked < heads ? this.#headPicked : fallback;
    ui.headPick.value = String(picked);
    return heads === 1 ? -1 : picked;
  }

  /** The Play button says what a press does. */
  setPlaying(playing) {
    this.#ui.play.textContent = playing ? 'Pause' : 'Play';
  }
}
