// model-source.js - where the explorer's numbers come from when it shows a
// model instead of its own random draws: the tiny transformer (attribute
// `model`, loaded by loadModel), a fresh one training in a Worker
// (model-worker.js), or attention computed elsewhere (the `attentions`
// property or attribute `attentions-src`). The element asks `prepare` on
// every update and gets the config and inputs of the chosen head (X = that
// layer's input, W_Q/W_K/W_V of that head) or, for outside attention, the
// weights alone; it draws the model view (model-view.js) through `render`.

import { Matrix } from '../core/matrix.js';
import { normalizeConfig } from '../worked/computation.js';
import { checkAttentionHead, checkAttentionLayers, externalWeightText, headLabel, headName, normalizeAttentions, patternScores } from './attentions.js';
import { ModelView } from './model-view.js';
import { thumbnailOf } from './heatmap-layout.js';
import { bestHead, cardScores, encoderLabel, prepareEncoder, relationNames } from './encoder-source.js';

export { MODEL_STYLES } from './model-view.js';

// Head scores of a loaded model on this many repeated random sequences.
const SCORE_SEQUENCES = 32;
// Up to this many weights are checked as they are set; more (BERT-base on
// 512 tokens has 38 million) a head per task, so no task blocks the page.
const CHECK_AT_ONCE = 2 ** 20;

// A new task soon: a message, which nested timeouts' 4 ms clamp does not slow.
const nextTask = () => new Promise((resolve) => {
  const channel = new MessageChannel();
  channel.port1.onmessage = () => resolve();
  channel.port2.postMessage(0);
});

// Checks every head's weights, a head per task when there are many; rejects with the first bad number's RangeError.
async function checkWeights(data, name) {
  const n = data.tokens.length;
  if (data.layers * data.heads * n * n <= CHECK_AT_ONCE) {
    checkAttentionLayers(data, 0, data.layers, name);
    return;
  }
  for (let l = 0; l < data.layers; l++) {
    for (let h = 0; h < data.heads; h++) {
      await nextTask();
      checkAttentionHead(data, l, h, name);
      // The head's thumbnail too, while its numbers are at hand.
      thumbnailOf(data.attention[l][h]);
    }
  }
}

// The model module (its transformer, encoder and English lexicon) is loaded
// when a page first shows a model, so an embed without one never downloads it.
const loadModel = async (source) => (await import('../model.js')).loadModel(source);

// Steps the Step button takes.
const STEP_COUNT = 10;

/** Reads `model-head` ("layer head", counted from 1) against the model's size; throws RangeError naming it. */
export function parseModelHead(text, layers, heads) {
  const parts = text.trim().split(/[\s,.]+/).map(Number);
  const [l, h] = parts;
  if (parts.length !== 2 || !Number.isInteger(l) || !Number.isInteger(h) || l < 1 || l > layers || h < 1 || h > heads) {
    throw new RangeError(`model-head expects "layer head", layer 1 to ${layers} and head 1 to ${heads}; got "${text}"`);
  }
  return { layer: l - 1, head: h - 1 };
}

export class ModelSource {
  #host;
  #changed;
  #view;
  #wanted = null; // the `model` attribute the current model came from
  #loaded = null; // { model, scores } of the attribute's model
  #error = '';
  #external = null; // normalized attentions (property or attentions-src)
  #checking = null; // the attentions being checked a head per task (set last wins)
  #failed = ''; // why attentions set last were refused, shown once
  #externalFrom = ''; // 'property' | the attentions-src URL
  #fetching = '';
  #training = null; // the fresh model training in a Worker (#startTraining)
  #rendered = null; // the source render drew last
  #visible = true; // the model view is on screen
  #observer = null; // IntersectionObserver of the model view

  /**
   * @param {HTMLElement} host the element (its model-head and tokens attributes are the state)
   * @param {() => void} changed asks the element for an update
   */
  constructor(host, changed) {
    this.#host = host;
    this.#changed = changed;
    this.#view = new ModelView({
      select: (layer, head) => host.setAttribute('model-head', `${layer + 1} ${head + 1}`),
      mask: (i) => (i === null ? host.removeAttribute('model-mask') : host.setAttribute('model-mask', String(i))),
      repeat: () => this.#repeat(),
      train: (seed) => this.#startTraining(seed),
      play: () => this.#play(),
      step: () => this.#training?.worker.postMessage({ type: 'step', count: STEP_COUNT }),
      stop: () => this.stopTraining(),
    });
  }

  get element() {
    return this.#view.element;
  }

  /** The attentions property: what was set, or null. */
  get attentions() {
    return this.#externalFrom === 'property' ? this.#external : null;
  }

  /** Sets outside attention (normalizeAttentions throws naming the field); null clears it. */
  setAttentions(value) {
    this.#checking = null;
    if (value === null || value === undefined) {
      if (this.#externalFrom === 'property') this.#external = null;
      this.#externalFrom = '';
      return;
    }
    const data = normalizeAttentions(value, 'attentions', { deferChecks: true });
    const n = data.tokens.length;
    if (data.layers * data.heads * n * n <= CHECK_AT_ONCE) {
      checkAttentionLayers(data, 0, data.layers);
      this.#external = data;
      this.#externalFrom = 'property';
      return;
    }
    // Many weights: the last good view stays while they are checked, then they are shown (or refused).
    const checking = this.#checking = {};
    checkWeights(data, 'attentions').then(() => {
      if (this.#checking !== checking) return;
      this.#external = data;
      this.#externalFrom = 'property';
      this.#changed();
    }, (err) => {
      if (this.#checking !== checking) return;
      this.#failed = err.message;
      this.#changed();
    });
  }

  /**
   * Starts what the attributes ask for (a model, a file of attention) and
   * says what the element shows: null (its own draws), or a source with
   * { config, view, inputs | example, key } for the head chosen. `error` is
   * a message for the element to show.
   */
  prepare(config, view) {
    this.#follow(view);
    if (this.#error) return { error: this.#error };
    if (this.#failed) {
      const error = this.#failed;
      this.#failed = '';
      return { error };
    }
    try {
      return this.#prepare(config, view);
    } catch (err) {
      return { error: err.message };
    }
  }

  #prepare(config, view) {
    const external = this.#external;
    const trained = this.#training?.model ? { model: this.#training.model, scores: this.#training.scores } : this.#loaded;
    if (!external && !trained) return null;
    const shown = new Set([...view.show].filter((p) => (external ? ['model', 'lines', 'weights'].includes(p) : true)));
    if (external) {
      const pick = this.#pick(view, external.layers, external.heads, [0, 0]);
      const weights = external.attention[pick.layer][pick.head];
      return {
        kind: 'external', pick, data: external,
        config: normalizeConfig({ tokens: external.tokens }),
        view: { ...view, show: shown.size ? shown : new Set(['model', 'lines', 'weights']) },
        example: { tokens: external.tokens, external: true, pick, heads: [{ kvHead: 0, weights }] },
        key: `external:${pick.layer}:${pick.head}`,
      };
    }
    const { model, scores } = trained;
    if (model.kind === 'encoder') return this.#prepareEncoder(trained, config, view);
    const tokens = config.tokens.slice(0, model.context);
    const t = this.#training;
    if (t?.model && tokens.join(' ') !== t.sent) {
      t.sent = tokens.join(' ');
      t.worker.postMessage({ type: 'view', tokens });
    }
    const pick = this.#pick(view, model.layers, model.heads, bestInduction(scores));
    const r = model.forward(tokens);
    const w = model.head(pick.layer, pick.head);
    return {
      kind: 'model', pick, model, scores, forward: r,
      config: normalizeConfig({
        // The model decides the scale too: it was trained with 1/sqrt(d_head) (the view says so).
        tokens, seed: config.seed, dModel: model.dModel, dk: model.dHead, dv: model.dHead, heads: 1, kvHeads: 1, causal: true,
      }),
      view,
      inputs: { X: r.layers[pick.layer].x, WQ: w.wq, WK: w.wk, WV: w.wv },
      origin: originTexts(pick, this.#training ? 'so far' : ''),
      truncated: config.tokens.length - tokens.length,
      key: `model:${model.steps}:${this.#training ? 'training' : this.#wanted}:${pick.layer}:${pick.head}`,
    };
  }

  // An encoder's source (encoder-source.js). A model-head outside the model
  // is said and the default head shown: the view stays.
  #prepareEncoder(trained, config, view) {
    let pick, note = '';
    try {
      pick = this.#pick(view, trained.model.layers, trained.model.heads, bestHead(trained.scores));
    } catch (err) {
      const [layer, head] = bestHead(trained.scores);
      pick = { layer, head };
      note = `${err.message}; shown with the best det → noun head instead`;
    }
    const source = prepareEncoder({ ...trained, name: this.#wanted }, config, view, pick);
    if (note) Object.assign(source, { note: [note, source.note].filter(Boolean).join('. '), noteKind: 'error' });
    return source;
  }

  /** Draws the model view for a prepared source (hidden when there is none or `model` is not shown). */
  render(source) {
    // The model decides the sizes, the heads and causal: the toolbar hides those fields.
    const root = this.#view.element.parentElement;
    if (root) {
      if (source && !source.error) root.dataset.model = source.kind;
      else delete root.dataset.model;
    }
    this.#rendered = source;
    if (!source || source.error || !source.view.show.has('model')) {
      this.#view.hide();
      return;
    }
    const t = this.#training;
    if (source.kind === 'external') {
      const { data } = source;
      this.#view.render({
        kind: 'external', tokens: data.tokens, attention: data.attention, source: data.source, pick: source.pick,
        labels: data.attention.map((row) => row.map((m) => headLabel(patternScores(m)))),
      });
      return;
    }
    this.#view.render(this.#modelState(source, t?.model ? t : null));
  }

  /**
   * What a saved picture's title says of a model's head (null for the
   * handbook's draws and outside attention): the model, the head, the masked word.
   */
  titleOf(source) {
    if (source?.kind !== 'model') return null;
    const name = source.encoder
      ? (this.#wanted === 'english' ? 'the trained English encoder' : 'a trained encoder')
      : this.#training ? 'a model training in this page' : this.#wanted === 'induction' ? 'the induction model' : 'a trained transformer';
    const masked = source.masked ?? null;
    return { name, head: headName(source.pick.layer, source.pick.head), masked: masked === null ? null : source.config.tokens[masked] };
  }

  /** The popover's text for a weight of outside attention: where it came from, no derivation. */
  explain(source, { i, j }) {
    const { pick, data } = source;
    return { text: externalWeightText(data, pick.layer, pick.head, i, j), sources: [] };
  }

  // The attributes: start loading a model or a file when they change.
  #follow(view) {
    const wanted = view.model ?? null;
    if (wanted !== this.#wanted) {
      this.#wanted = wanted;
      this.#loaded = null;
      this.#error = '';
      if (wanted) this.#loadModel(wanted);
    }
    const src = view.attentionsSrc ?? '';
    if (this.#externalFrom !== 'property' && src !== this.#externalFrom) {
      this.#externalFrom = src;
      this.#external = null;
      this.#error = '';
      if (src) this.#fetchAttentions(src);
    }
  }

  async #loadModel(wanted) {
    try {
      const model = await loadModel(wanted);
      if (this.#wanted !== wanted) return;
      // An encoder's heads are scored on its held-out sentences (the shipped card holds those scores); the induction model's on repeated random words.
      this.#loaded = { model, scores: model.kind === 'encoder' ? cardScores(model.card) ?? model.headScores() : model.headScores({ sequences: SCORE_SEQUENCES }) };
    } catch (err) {
      // The loader's reason, after what the attribute takes: a reader of the page sees the first part.
      if (this.#wanted === wanted) this.#error = `model="${wanted}" could not be loaded (model takes "english", "induction" or the address of a saved model): ${err.message}`;
    }
    this.#changed();
  }

  async #fetchAttentions(src) {
    this.#fetching = src;
    let data;
    try {
      const url = new URL(src, this.#host.ownerDocument?.baseURI ?? globalThis.location?.href);
      const response = await fetch(url);
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      const json = await response.json();
      data = normalizeAttentions(json, 'attentions-src', { deferChecks: true });
      await checkWeights(data, 'attentions-src');
      if (!data.source) data.source = src.split('/').pop();
    } catch (err) {
      if (this.#fetching === src) this.#error = `attentions-src="${src}": ${err.message}`;
    }
    if (this.#fetching !== src || this.#externalFrom !== src) return;
    if (data) this.#external = data;
    this.#changed();
  }

  #pick(view, layers, heads, fallback) {
    if (view.modelHead) return parseModelHead(view.modelHead, layers, heads);
    return { layer: fallback[0], head: fallback[1] };
  }

  #repeat() {
    const model = this.#training?.model ?? this.#loaded?.model;
    const tokens = this.#host.config?.tokens ?? [];
    const twice = [...tokens, ...tokens];
    this.#host.setAttribute('tokens', (model ? twice.slice(0, model.context) : twice).join(' '));
  }

  // ---- training from scratch in a Worker -----------------------------------------
  //
  // The worker reports what the model view draws (model-worker.js says how);
  // a report repaints the model view alone, in the next animation frame, and
  // is acknowledged once painted. The lines and tables below come from the
  // full weights, which arrive only at start, pause, after Step and at the
  // end: a report never rebuilds a model or recomputes the explorer.

  #startTraining(seed) {
    this.stopTraining();
    const worker = new Worker(new URL('./model-worker.js', import.meta.url), { type: 'module' });
    const t = {
      worker, seed, meta: null, model: null, live: null, scores: null, allLosses: [], step: 0, accuracy: null,
      playing: false, finished: false, sent: '', frame: 0, unpainted: false,
    };
    this.#training = t;
    this.#watchVisibility();
    worker.onmessage = ({ data }) => this.#onMessage(t, data);
    worker.onerror = (e) => {
      this.#error = `Training stopped: ${e.message ?? 'the worker failed'}`;
      this.#changed();
    };
    const tokens = this.#host.config?.tokens ?? [];
    t.sent = tokens.join(' ');
    worker.postMessage({ type: 'start', seed, tokens });
  }

  #play() {
    const t = this.#training;
    if (!t || t.finished) return;
    t.playing = !t.playing;
    t.worker.postMessage({ type: t.playing ? 'play' : 'pause' });
    this.#paintLive(t);
  }

  #onMessage(t, data) {
    if (this.#training !== t) return;
    if (data.type === 'error') {
      this.#error = `Training stopped: ${data.message}`;
      this.#changed();
    } else if (data.type === 'ready') {
      t.meta = data;
    } else if (data.type === 'report') {
      this.#onReport(t, data);
    } else if (data.type === 'model') {
      // The full weights, for the lines and tables of the chosen head.
      loadModel(data.json).then((model) => {
        if (this.#training !== t) return;
        t.model = model;
        this.#changed();
      }, (err) => {
        this.#error = `Training stopped: ${err.message}`;
        this.#changed();
      });
    }
  }

  #onReport(t, data) {
    for (const loss of data.losses) t.allLosses.push(loss);
    t.step = data.step;
    t.finished = data.finished;
    // The worker pauses itself at the end; a Pause on its way there is moot.
    if (!data.playing && (data.finished || !t.playing)) t.playing = false;
    if (data.scores) t.scores = unpackScores(data.scores, t.meta.layers, t.meta.heads);
    if (data.accuracy !== undefined) t.accuracy = data.accuracy;
    const { n } = data;
    const attention = Array.from({ length: t.meta.layers }, (_, l) => Array.from({ length: t.meta.heads }, (_, h) => {
      const at = (l * t.meta.heads + h) * n * n;
      return new Matrix(n, n, data.attention.subarray(at, at + n * n));
    }));
    const k = data.guesses.length / n;
    const predictions = Array.from({ length: n }, (_, i) => Array.from({ length: k }, (_, r) => {
      const id = data.guesses[i * k + r];
      return { word: t.meta.vocab[id], id, probability: data.probabilities[i * k + r] };
    }));
    t.live = { words: Array.from(data.tokens, (id) => t.meta.vocab[id]), attention, predictions };
    t.unpainted = true;
    if (!t.frame) {
      const raf = globalThis.requestAnimationFrame ?? ((f) => setTimeout(f, 16));
      t.frame = raf(() => {
        t.frame = 0;
        if (this.#training !== t) return;
        if (this.#visible) this.#paintLive(t);
        // Acked even when nothing was painted: the next report then holds the newest numbers for when the view shows.
        t.worker.postMessage({ type: 'ack' });
      });
    }
  }

  // The model view from the newest report, when the element shows the training model.
  #paintLive(t) {
    const source = this.#rendered;
    if (!source || source.kind !== 'model' || !source.view.show.has('model') || !t.live || !t.scores) return;
    t.unpainted = false;
    this.#view.render(this.#modelState(source, t));
  }

  // What the model view draws for a model source: the live report's words,
  // patterns and guesses while training, else the source's own forward pass.
  #modelState(source, t) {
    const { model, forward, pick } = source;
    if (source.encoder) {
      const words = source.config.tokens;
      return {
        kind: 'encoder', tokens: words, attention: forward.attentions, pick, steps: model.steps, scale: { value: source.config.scale, dk: model.dHead },
        labels: source.scores.map((row) => row.map((s) => encoderLabel(s, relationNames(model.card)))),
        mask: { words, masked: source.masked ?? -1, guesses: source.guesses, pick, row: source.masked === null ? null : forward.attentions[pick.layer][pick.head].data.subarray(source.masked * words.length, (source.masked + 1) * words.length) },
      };
    }
    const live = t?.live && t.live.words.join(' ') === forward.words.join(' ') ? t.live : null;
    const scores = t?.scores ?? source.scores;
    return {
      kind: 'model', tokens: live ? live.words : forward.words, attention: live ? live.attention : forward.attentions, pick,
      steps: model.steps, scale: { value: source.config.scale, dk: model.dHead },
      labels: scores.map((row) => row.map((s) => headLabel(s))),
      predictions: live ? live.predictions : model.predict(forward.tokens, 3), truncated: source.truncated, context: model.context,
      training: t ? { step: t.step, losses: t.allLosses, accuracy: t.accuracy, playing: t.playing, finished: t.finished, total: t.meta?.total, seed: t.seed } : null,
    };
  }

  // Reports painted only while the model view is on screen; one waiting paints when it scrolls back.
  #watchVisibility() {
    if (this.#observer || typeof IntersectionObserver === 'undefined') return;
    this.#observer = new IntersectionObserver((entries) => {
      this.#visible = entries[entries.length - 1].isIntersecting;
      const t = this.#training;
      if (this.#visible && t?.unpainted) this.#paintLive(t);
    });
    this.#observer.observe(this.#view.element);
  }

  /** Whether a fresh model is training (or trained) in place of the attribute's. */
  get training() {
    return this.#training !== null;
  }

  /** Ends training and goes back to the `model` attribute's model. */
  stopTraining() {
    if (!this.#training) return;
    this.#training.worker.terminate();
    this.#training = null;
    this.#changed();
  }

  /** The element left the page. */
  dispose() {
    if (this.#training?.playing) this.#play();
  }
}

// Head scores from a report's (layers * heads * 3) array: previous token, induction, first token.
function unpackScores(data, layers, heads) {
  return Array.from({ length: layers }, (_, l) => Array.from({ length: heads }, (_, h) => {
    const at = 3 * (l * heads + h);
    return { previousToken: data[at], induction: data[at + 1], firstToken: data[at + 2] };
  }));
}

// The layer-2 head (or the last layer's) with the highest induction score: the one Repeat shows best.
function bestInduction(scores) {
  const layer = scores.length - 1;
  let head = 0;
  scores[layer].forEach((s, h) => {
    if (s.induction > scores[layer][head].induction) head = h;
  });
  return [layer, head];
}

// Where the inputs of the chosen head come from, for the derivations.
function originTexts({ layer, head }, when) {
  const learned = (w) => `${w} of ${headName(layer, head)}, learned in training${when ? ` ${when}` : ''}`;
  return {
    X: layer === 0
      ? 'the model’s input here: the word’s embedding plus the position’s, both learned'
      : `the residual stream entering layer ${layer + 1}: the word and position embeddings plus what the heads of the layer${layer > 1 ? 's' : ''} before wrote into it`,
    WQ: learned('W_Q'), WK: learned('W_K'), WV: learned('W_V'),
  };
}
