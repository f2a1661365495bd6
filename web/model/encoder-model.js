// encoder-model.js - the EncoderModel class: a bidirectional transformer
// encoder (encoder.js) trained to fill in masked words of English grammar
// sentences (english/), with a forward pass that keeps every step for
// display, fill-in guesses, head scores against positional baselines
// (english/scores.js) and JSON. Made by createEncoder / loadModel in
// web/model.js, which check the options.

import { Matrix, describe } from '../core/matrix.js';
import { Adam } from './adam.js';
import { encoderForward, encoderLogits, encoderLossAndGradients, encoderParamNames, encoderParamShapes } from './encoder.js';
import { MASK_DEFAULTS, drawBatch } from './english/batch.js';
import { HELD_OUT_SEED, SCORE_SENTENCES, agreement, heldOut, maskedLoss, scoreEncoderHeads } from './english/scores.js';
import { MASK, UNKNOWN } from './english/vocab.js';
import { FORMAT, VERSION, checkDtype, decode, encode } from './serialize.js';
import { checkFinite } from '../core/options.js';
import { checkTokens, encodeWords } from './tokens.js';

export const ENCODER_KIND = 'encoder';

export class EncoderModel {
  #attn;
  #shape;
  #params;
  #index;
  #training;
  #rng;
  #adam = null;
  #baseSteps;
  #card;
  #maskId;
  #firstWord;

  /**
   * @param {import('../attention.js').Attention} attn
   * @param {{ config: object, vocab: string[], params: Record<string, Float32Array>, training: object, rng: import('../core/numpy-random.js').NumpyRandom, steps?: number, card?: object | null }} parts
   */
  constructor(attn, { config, vocab, params, training, rng, steps = 0, card = null }) {
    this.#attn = attn;
    this.#shape = { ...config, vocabSize: vocab.length };
    this.#params = params;
    this.#index = new Map(vocab.map((w, i) => [w, i]));
    this.#training = Object.freeze({ ...training });
    this.#rng = rng;
    this.#baseSteps = steps;
    this.#card = card;
    this.#maskId = this.#index.get(MASK);
    // Random replacements are words: ids after the special tokens and punctuation.
    this.#firstWord = vocab.findIndex((w, i) => i > 0 && /^[\p{L}\p{N}]/u.test(w));
    /** @readonly */ this.kind = ENCODER_KIND;
    /** @readonly */ this.vocab = Object.freeze([...vocab]);
    /** @readonly */ this.layers = config.layers;
    /** @readonly */ this.heads = config.heads;
    /** @readonly */ this.dModel = config.dModel;
    /** @readonly */ this.dHead = config.dHead;
    /** @readonly */ this.mlp = config.mlp;
    /** @readonly */ this.context = config.context;
  }

  /** The architecture: { layers, heads, dModel, dHead, mlp, context }. */
  get config() {
    const { layers, heads, dModel, dHead, mlp, context } = this.#shape;
    return { layers, heads, dModel, dHead, mlp, context };
  }

  get training() {
    return this.#training;
  }

  /** Training steps taken, including those before the model was saved. */
  get steps() {
    return this.#baseSteps + (this.#adam?.steps ?? 0);
  }

  /** The model card the JSON carried (data, size, steps, loss, head scores), or null. */
  get card() {
    return this.#card;
  }

  /** Ids of words (lower-cased, trimmed); a word not in the vocabulary is 0 ('<unk>'). */
  encode(words) {
    return encodeWords(this.#index, words);
  }

  /** The words the vocabulary lacks, with their positions: [{ index, word }] (empty when it knows them all). */
  unknownWords(words) {
    const ids = this.encode(words);
    return words.flatMap((word, index) => (ids[index] === 0 ? [{ index, word }] : []));
  }

  decode(ids) {
    return Array.from(this.#tokens(ids, 'decode'), (id) => this.vocab[id]);
  }

  #tokens(tokens, name) {
    return checkTokens(this, tokens, name);
  }

  /**
   * One sentence through the encoder, every step kept (copies).
   * @param {string[] | Int32Array | number[]} tokens 1 .. context words or ids
   */
  forward(tokens) {
    const ids = this.#tokens(tokens, 'forward');
    const n = ids.length;
    const { heads, dModel: d, dHead: dk } = this.#shape;
    const pass = encoderForward(this.#attn, this.#shape, this.#params, ids, 1, n, Int32Array.of(n), { steps: true });
    const column = (data, h) => {
      const out = new Float32Array(n * dk);
      for (let i = 0; i < n; i++) out.set(data.subarray((i * heads + h) * dk, (i * heads + h + 1) * dk), i * dk);
      return new Matrix(n, dk, out);
    };
    const square = (data, h) => new Matrix(n, n, data.slice(h * n * n, (h + 1) * n * n));
    const layers = pass.layers.map((layer, l) => ({
      x: new Matrix(n, d, pass.xs[l].slice()),
      xNorm: new Matrix(n, d, layer.h.data.slice()),
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
      output: new Matrix(n, d, layer.attnOut.slice()),
      mlp: new Matrix(n, d, layer.mlpOut.slice()),
    }));
    return {
      tokens: ids,
      words: Array.from(ids, (id) => this.vocab[id]),
      unknown: Array.from(ids.keys()).filter((i) => ids[i] === 0),
      layers,
      attentions: layers.map((layer) => layer.heads.map((head) => head.weights)),
      residual: new Matrix(n, d, pass.xs[pass.xs.length - 1].slice()),
      logits: encoderLogits(this.#attn, this.#shape, this.#params, pass, null),
    };
  }

  /**
   * The model's guesses for word i were it masked: the k (default 5) most
   * likely words (never '<unk>' or '<mask>'), [{ word, id, p }], p the softmax probability.
   */
  fill(tokens, i, k = 5) {
    const ids = this.#tokens(tokens, 'fill');
    if (!Number.isInteger(i) || i < 0 || i >= ids.length) throw new RangeError(`fill: i must be an integer in [0, ${ids.length}), got ${describe(i)}`);
    if (!Number.isInteger(k) || k < 1) throw new RangeError(`fill: k must be a positive integer, got ${describe(k)}`);
    ids[i] = this.#maskId;
    const pass = encoderForward(this.#attn, this.#shape, this.#params, ids, 1, ids.length, Int32Array.of(ids.length));
    const p = this.#attn.softmax(encoderLogits(this.#attn, this.#shape, this.#params, pass, Int32Array.of(i))).data;
    const order = Array.from(p.keys()).filter((id) => id !== 0 && id !== this.#maskId).sort((a, b) => p[b] - p[a] || a - b);
    return order.slice(0, k).map((id) => ({ word: this.vocab[id], id, p: p[id] }));
  }

  /**
   * Copies of one head's weights: wq, wk, wv (dModel, dHead), the columns
   * xNorm (forward().layers[layer].xNorm) multiplies into its q, k, v; and wo
   * (dHead, dModel), its rows of the output projection.
   */
  head(layer, head) {
    if (!Number.isInteger(layer) || layer < 0 || layer >= this.layers) throw new RangeError(`head: layer must be an integer in [0, ${this.layers}), got ${describe(layer)}`);
    if (!Number.isInteger(head) || head < 0 || head >= this.heads) throw new RangeError(`head: head must be an integer in [0, ${this.heads}), got ${describe(head)}`);
    const { heads, dModel: d, dHead: dk } = this.#shape;
    const cols = (w) => {
      const out = new Float32Array(d * dk);
      for (let i = 0; i < d; i++) out.set(w.subarray((i * heads + head) * dk, (i * heads + head + 1) * dk), i * dk);
      return new Matrix(d, dk, out);
    };
    const p = (w) => this.#params[`layers.${layer}.${w}`];
    return { wq: cols(p('wq')), wk: cols(p('wk')), wv: cols(p('wv')), wo: new Matrix(dk, d, p('wo').slice(head * dk * d, (head + 1) * dk * d)) };
  }

  #batchOptions(batch) {
    return { batch, context: this.context, index: this.#index, maskId: this.#maskId, firstWord: this.#firstWord, vocabSize: this.vocab.length, rates: MASK_DEFAULTS };
  }

  /** One Adam step on a masked-LM batch of grammar sentences from the model's seeded generator; returns its loss. */
  trainStep() {
    if (this.#maskId === undefined) throw new RangeError(`trainStep: the vocabulary has no '${MASK}' token to mask words with`);
    this.#adam ??= new Adam(this.#params, this.#training);
    const { batch } = this.#training;
    const b = drawBatch(this.#rng, this.#batchOptions(batch));
    const { loss, grads } = encoderLossAndGradients(this.#attn, this.#shape, this.#params, b.tokens, batch, b.n, b.kvLengths, b.rows, b.targets);
    this.#adam.step(grads);
    return loss;
  }

  #heldOut(options, name) {
    if (options === null || typeof options !== 'object') throw new TypeError(`${name}: options must be an object, got ${describe(options)}`);
    const { sentences = SCORE_SENTENCES, seed = HELD_OUT_SEED } = options;
    if (!Number.isInteger(sentences) || sentences < 1) throw new RangeError(`${name}: sentences must be a positive integer, got ${describe(sentences)}`);
    if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) throw new RangeError(`${name}: seed must be an integer in [0, 4294967295], got ${describe(seed)}`);
    return { list: heldOut(sentences, seed, this.context), seed };
  }

  /** Every head's scores on held-out grammar sentences: [layer][head] { relations, positional, label }. */
  headScores(options = {}) {
    const { list } = this.#heldOut(options, 'headScores');
    return scoreEncoderHeads(this.#attn, this.#shape, this.#params, this.#index, list);
  }

  /** Masked-LM loss and accuracy, and agreement, on held-out sentences. */
  evaluate(options = {}) {
    const { list, seed } = this.#heldOut(options, 'evaluate');
    const agree = agreement(this.#attn, this.#shape, this.#params, this.#index, this.#maskId, list);
    return { ...maskedLoss(this.#attn, this.#shape, this.#params, this.#batchOptions(64), { seed }), agreement: agree };
  }

  /** The model as JSON (format 'attention-wasm-model', kind 'encoder'); dtype 'float32' (exact, default), 'float16' or 'int8'. */
  toJSON({ dtype = 'float32', card = this.#card } = {}) {
    checkDtype(dtype, 'toJSON: dtype');
    const shapes = encoderParamShapes(this.#shape);
    const params = {};
    for (const name of encoderParamNames(this.layers)) params[name] = encode(this.#params[name], dtype, ...shapes[name]);
    const json = { format: FORMAT, version: VERSION, kind: ENCODER_KIND, config: this.config, vocab: [...this.vocab], dtype, params, steps: this.steps };
    if (card !== null) json.card = card;
    return json;
  }
}

/** An encoder's parameters from its JSON, checked against the config, every value finite. */
export function encoderParamsFromJSON(json, shape, name) {
  checkDtype(json.dtype, `${name}: dtype`);
  if (json.params === null || typeof json.params !== 'object') throw new TypeError(`${name}: params must be an object of base64 strings, got ${describe(json.params)}`);
  const shapes = encoderParamShapes(shape);
  const params = {};
  for (const key of encoderParamNames(shape.layers)) {
    params[key] = checkFinite(decode(json.params[key], json.dtype, ...shapes[key], `${name}: params.${key}`), `${name}: params.${key}`);
  }
  return params;
}

export { UNKNOWN, MASK };
