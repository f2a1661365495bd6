// model.js - the Model class: a tiny decoder-only, attention-only transformer
// (transformer.js) with its vocabulary, a forward pass that keeps every step
// for display, training on the repeat task (task.js, adam.js), scores
// (scores.js) and JSON (serialize.js). Made by createModel / loadModel in
// web/model.js, which check the options.

import { Matrix, describe } from '../core/matrix.js';
import { NumpyRandom } from '../core/numpy-random.js';
import { Adam } from './adam.js';
import { SCORE_DEFAULTS, evaluateRepeats, scoreHeads } from './scores.js';
import { checkDtype, toJSONObject } from './serialize.js';
import { MIN_SEGMENT, drawBatch } from './task.js';
import { forwardPass, logitsAt, lossAndGradients } from './transformer.js';
import { Workspace } from './workspace.js';
import { checkTokens, encodeWords } from './tokens.js';

export class Model {
  #attn;
  #shape;
  #params;
  #index;
  #training;
  #rng;
  #adam = null;
  #work = null; // the training step's arrays, made at the first step
  #scoreWork = null; // headScores' and evaluate's, kept for the next call of the same size
  // Steps taken before the parameters were saved.
  #baseSteps;

  /**
   * @param {import('../attention.js').Attention} attn
   * @param {{ config: object, vocab: string[], params: Record<string, Float32Array>, training: object, rng: NumpyRandom, steps?: number }} parts
   */
  constructor(attn, { config, vocab, params, training, rng, steps = 0 }) {
    this.#attn = attn;
    this.#shape = { ...config, vocabSize: vocab.length };
    this.#params = params;
    this.#index = new Map(vocab.map((w, i) => [w, i]));
    this.#training = Object.freeze({ ...training });
    this.#rng = rng;
    this.#baseSteps = steps;
    /** @readonly */ this.vocab = Object.freeze([...vocab]);
    /** @readonly */ this.layers = config.layers;
    /** @readonly */ this.heads = config.heads;
    /** @readonly */ this.dModel = config.dModel;
    /** @readonly */ this.dHead = config.dHead;
    /** @readonly */ this.context = config.context;
  }

  /** 'decoder': a causal model that predicts the next word (an EncoderModel's is 'encoder'). */
  get kind() {
    return 'decoder';
  }

  /** The architecture: { layers, heads, dModel, dHead, context }. */
  get config() {
    const { layers, heads, dModel, dHead, context } = this.#shape;
    return { layers, heads, dModel, dHead, context };
  }

  /** The settings trainStep() uses. */
  get training() {
    return this.#training;
  }

  /** Training steps this model has taken (including those before it was saved). */
  get steps() {
    return this.#baseSteps + (this.#adam?.steps ?? 0);
  }

  /** Ids of words (lower-cased, trimmed); a word not in the vocabulary is 0. */
  encode(words) {
    return encodeWords(this.#index, words);
  }

  /** The words of ids. */
  decode(ids) {
    return Array.from(this.#tokens(ids, 'decode'), (id) => this.vocab[id]);
  }

  #tokens(tokens, name) {
    return checkTokens(this, tokens, name);
  }

  /**
   * Runs the model on one sequence and keeps every step.
   * @param {string[] | Int32Array | number[]} tokens at most `context` words or ids
   */
  forward(tokens) {
    const ids = this.#tokens(tokens, 'forward');
    const n = ids.length;
    const { heads, dModel: d, dHead: dk } = this.#shape;
    const pass = forwardPass(this.#attn, this.#shape, this.#params, ids, 1, n, { steps: true });
    // Column block h of a (n, heads * dk) bshd array: head h's (n, dk) matrix.
    const column = (data, h) => {
      const out = new Float32Array(n * dk);
      for (let i = 0; i < n; i++) out.set(data.subarray(i * heads * dk + h * dk, i * heads * dk + (h + 1) * dk), i * dk);
      return new Matrix(n, dk, out);
    };
    const square = (data, h) => new Matrix(n, n, data.slice(h * n * n, (h + 1) * n * n));
    const layers = pass.layers.map((layer, l) => ({
      x: new Matrix(n, d, pass.xs[l].slice()),
      heads: Array.from({ length: heads }, (_, h) => ({
        q: column(layer.q, h),
        k: column(layer.k, h),
        v: column(layer.v, h),
        scores: square(layer.steps.scores, h),
        scaled: square(layer.steps.scaled, h),
        logits: square(layer.steps.logits, h),
        weights: square(layer.steps.weights, h),
        output: column(layer.z, h),
      })),
      output: new Matrix(n, d, layer.out.slice()),
    }));
    return {
      tokens: ids,
      words: Array.from(ids, (id) => this.vocab[id]),
      layers,
      attentions: layers.map((layer) => layer.heads.map((head) => head.weights)),
      residual: new Matrix(n, d, pass.xs[pass.xs.length - 1].slice()),
      logits: logitsAt(this.#attn, this.#shape, this.#params, pass, null),
    };
  }

  /**
   * The k most likely next words at every position, most likely first.
   * @returns {{ word: string, id: number, probability: number }[][]}
   */
  predict(tokens, k = 3) {
    if (!Number.isInteger(k) || k < 1 || k > this.vocab.length) {
      throw new RangeError(`predict: k must be an integer in [1, ${this.vocab.length}], got ${describe(k)}`);
    }
    const { rows, cols, data } = this.forward(tokens).logits;
    const out = [];
    for (let i = 0; i < rows; i++) {
      const row = data.subarray(i * cols, (i + 1) * cols);
      let max = -Infinity, sum = 0;
      for (const z of row) if (z > max) max = z;
      for (const z of row) sum += Math.exp(z - max);
      const order = Array.from(row.keys()).sort((a, b) => row[b] - row[a] || a - b).slice(0, k);
      out.push(order.map((id) => ({ word: this.vocab[id], id, probability: Math.exp(row[id] - max) / sum })));
    }
    return out;
  }

  /**
   * Copies of one head's weights: wq, wk, wv (dModel, dHead) and wo (dHead, dModel),
   * its rows of the output projection.
   */
  head(layer, head) {
    if (!Number.isInteger(layer) || layer < 0 || layer >= this.layers) {
      throw new RangeError(`head: layer must be an integer in [0, ${this.layers}), got ${describe(layer)}`);
    }
    if (!Number.isInteger(head) || head < 0 || head >= this.heads) {
      throw new RangeError(`head: head must be an integer in [0, ${this.heads}), got ${describe(head)}`);
    }
    const { heads, dModel: d, dHead: dk } = this.#shape;
    const cols = (w) => {
      const out = new Float32Array(d * dk);
      for (let i = 0; i < d; i++) out.set(w.subarray(i * heads * dk + head * dk, i * heads * dk + (head + 1) * dk), i * dk);
      return new Matrix(d, dk, out);
    };
    const p = (w) => this.#params[`layers.${layer}.${w}`];
    return {
      wq: cols(p('wq')),
      wk: cols(p('wk')),
      wv: cols(p('wv')),
      wo: new Matrix(dk, d, p('wo').slice(head * dk * d, (head + 1) * dk * d)),
    };
  }

  /** One Adam step on a batch of the repeat task drawn from the model's seeded generator; returns the batch's loss. */
  trainStep() {
    const { batch, otherWeight } = this.#training;
    const { context, vocabSize } = this.#shape;
    if (context < 2 * MIN_SEGMENT) {
      throw new RangeError(`trainStep: the task needs a context of at least ${2 * MIN_SEGMENT} tokens, this model has ${context}`);
    }
    this.#adam ??= new Adam(this.#params, this.#training);
    this.#work ??= new Workspace(this.#shape, batch, context, this.#params);
    const { tokens, rows, targets, weights } = drawBatch(this.#rng, batch, context, vocabSize, otherWeight);
    const { loss, grads } = lossAndGradients(this.#attn, this.#shape, this.#params, tokens, batch, context, rows, targets, weights, this.#work);
    this.#adam.step(grads);
    return loss;
  }

  #scoreOptions(options, name) {
    if (options === null || typeof options !== 'object') throw new TypeError(`${name}: options must be an object, got ${describe(options)}`);
    const { sequences = SCORE_DEFAULTS.sequences, seed = SCORE_DEFAULTS.seed } = options;
    if (!Number.isInteger(sequences) || sequences < 1) throw new RangeError(`${name}: sequences must be a positive integer, got ${describe(sequences)}`);
    if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) throw new RangeError(`${name}: seed must be an integer in [0, 4294967295], got ${describe(seed)}`);
    const half = Math.min(16, Math.floor(this.context / 2));
    if (half > this.vocab.length - 1) throw new RangeError(`${name}: the vocabulary is too small for ${half} distinct words`);
    return { sequences, seed, half };
  }

  // A workspace for scoring `sequences` sequences of 2 half words; the last one when it fits.
  #scoreWorkspace({ sequences, half }) {
    if (!this.#scoreWork?.fits(sequences, 2 * half, false)) this.#scoreWork = new Workspace(this.#shape, sequences, 2 * half);
    return this.#scoreWork;
  }

  /** Head scores on repeated random sequences: [layer][head] { previousToken, induction, firstToken }. */
  headScores(options = {}) {
    const o = this.#scoreOptions(options, 'headScores');
    return scoreHeads(this.#attn, this.#shape, this.#params, o, this.#scoreWorkspace(o));
  }

  /** Next-word accuracy and loss on the repeat of repeated random sequences (2 x 16 words), after its first word. */
  evaluate(options = {}) {
    const o = this.#scoreOptions(options, 'evaluate');
    return evaluateRepeats(this.#attn, this.#shape, this.#params, o, this.#scoreWorkspace(o));
  }

  /** The model as a JSON object (see serialize.js); dtype 'float32' (exact, default), 'float16' or 'int8'. */
  toJSON({ dtype = 'float32' } = {}) {
    checkDtype(dtype, 'toJSON: dtype');
    return toJSONObject({ config: this.config, vocab: this.vocab, params: this.#params, steps: this.steps }, dtype);
  }
}
