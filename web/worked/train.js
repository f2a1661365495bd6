// train.js - the explorer's Train mode without the DOM: target
// patterns (painted or preset), the loss, the optimizers and one training
// step of a single attention head through the Attention API (forward and
// backward in wasm). Node tests import it directly.
//
// The head: x (n, dModel) = token embeddings + sinusoidal positions,
// Q = x W_Q, K = x W_K (n, dk), weights P = softmax(Q K^T scale) (causal
// optional). The weights get their gradient through the backward pass with
// V = I (n, n): then the output is P itself, and dL/dOutput = dL/dP.
// W_V, when it learns, is trained against a target output Y (n, dv) with the
// mean squared error of O = P (x W_V).
//
// Loss: cross-entropy between each targeted row of P and its target row
// (a probability row), averaged over targeted rows:
//   L = -(1 / R) sum_i sum_j T_ij log P_ij,   dL/dP_ij = -T_ij / (R P_ij)
// which the backward turns into dL/dlogits = (P - T) / R. A P_ij that
// underflowed to 0 where T_ij > 0 is taken as TINY, so the gradient stays
// finite (that cell then pushes with -T / (R TINY) times P = 0: the row
// relies on its other cells, which rarely matters at sane learning rates).
//
// Deterministic: the same inputs, target and settings give the same bits
// (float32 wasm kernels, fixed order of every JS loop).

import { drawInputs, normalizeConfig } from './computation.js';
import { Matrix } from '../core/matrix.js';
import { defaultScale, keySpan } from '../core/options.js';

/** The preset tasks; 'same-word' wants repeated words, 'attend-to' a chosen word. */
export const PRESETS = Object.freeze(['previous-token', 'first-token', 'same-word', 'attend-to']);

/** Default training settings (the Node test checks "previous token" reaches its pattern with these). */
export const TRAIN_DEFAULTS = Object.freeze({
  optimizer: 'adam',
  learningRate: 0.02,
  momentum: 0.9, // SGD
  beta1: 0.9, // Adam
  beta2: 0.999,
  epsilon: 1e-8,
  learn: Object.freeze(['wq', 'wk']),
});

const OPTIMIZERS = ['sgd', 'adam'];
const LEARNABLE = ['wq', 'wk', 'wv'];
// The smallest weight the loss takes the log of (float32 underflow of exp).
const TINY = 1e-30;

/**
 * The target (n, n) of a preset, each row a probability row or all 0 (no
 * target for that row).
 *   previous-token: row i -> i - 1 (row 0 -> itself, it has no predecessor)
 *   first-token:    every row -> 0
 *   same-word:      row i -> every j with tokens[j] === tokens[i], j != i when
 *                   there is such a j, else itself
 *   attend-to:      every row -> the first occurrence of options.word
 * A target cell the row may not see (keySpan: causal, window and query
 * offset, as the Trainer is given them) is not reachable: it is dropped,
 * and a row left with none (attend-to a later word under causal) gets no
 * target.
 * @param {string} preset one of PRESETS
 * @param {string[]} tokens
 * @param {{ word?: string, causal?: boolean, window?: number[] | null, queryOffset?: number }} [options]
 * @returns {Matrix}
 */
export function presetTarget(preset, tokens, options = {}) {
  if (!PRESETS.includes(preset)) throw new RangeError(`presetTarget: preset must be one of ${PRESETS.join(', ')}, got ${JSON.stringify(preset)}`);
  if (!Array.isArray(tokens) || tokens.length < 1) throw new TypeError('presetTarget: tokens must be a non-empty list of words');
  const n = tokens.length;
  const rule = { causal: options.causal === true, window: options.window ?? null, queryOffset: options.queryOffset ?? 0 };
  const cells = [];
  for (let i = 0; i < n; i++) {
    const { lo, hi } = keySpan(rule, i, n);
    const seen = (j) => j >= lo && j < hi;
    let js;
    if (preset === 'previous-token') js = [Math.max(i - 1, 0)];
    else if (preset === 'first-token') js = [0];
    else if (preset === 'same-word') {
      const others = [];
      for (let j = 0; j < n; j++) if (j !== i && tokens[j] === tokens[i] && seen(j)) others.push(j);
      js = others.length > 0 ? others : [i];
    } else {
      const at = tokens.indexOf(options.word);
      if (at < 0) throw new RangeError(`presetTarget: attend-to needs a word of the tokens, got ${JSON.stringify(options.word)}`);
      js = [at];
    }
    cells.push(js.filter(seen));
  }
  return targetFromCells(n, cells);
}

/**
 * A target (n, n) from painted cells: cells[i] is the list of columns row i
 * should attend to (shared equally), or empty for no target.
 * @param {number} n
 * @param {number[][]} cells
 * @returns {Matrix}
 */
export function targetFromCells(n, cells) {
  if (!Array.isArray(cells) || cells.length !== n) throw new TypeError(`targetFromCells: cells must be a list of ${n} rows`);
  const t = new Matrix(n, n);
  cells.forEach((row, i) => {
    const unique = [...new Set(row)];
    for (const j of unique) {
      if (!Number.isInteger(j) || j < 0 || j >= n) throw new RangeError(`targetFromCells: row ${i} has column ${j}, outside 0..${n - 1}`);
      t.data[i * n + j] = 1 / unique.length;
    }
  });
  return t;
}

/** For each row of a target, the columns it puts weight on (empty: no target). */
export function targetCells(target) {
  const cells = [];
  for (let i = 0; i < target.rows; i++) {
    const row = [];
    for (let j = 0; j < target.cols; j++) if (target.data[i * target.cols + j] > 0) row.push(j);
    cells.push(row);
  }
  return cells;
}

/**
 * Cross-entropy of the weights against the target, averaged over targeted
 * rows, and its gradient with respect to the weights.
 * @param {Matrix} weights (n, n)
 * @param {Matrix} target (n, n)
 * @returns {{ loss: number, rows: number, dWeights: Matrix }}
 */
export function crossEntropy(weights, target) {
  const n = target.rows, m = target.cols;
  let rows = 0;
  for (let i = 0; i < n; i++) if (rowHasTarget(target, i)) rows++;
  const dWeights = new Matrix(n, m);
  let loss = 0;
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < m; j++) {
      const t = target.data[i * m + j];
      if (t === 0) continue;
      const p = Math.max(weights.data[i * m + j], TINY);
      loss -= (t * Math.log(p)) / rows;
      dWeights.data[i * m + j] = -t / (rows * p);
    }
  }
  return { loss: rows === 0 ? 0 : loss, rows, dWeights };
}

function rowHasTarget(target, i) {
  for (let j = 0; j < target.cols; j++) if (target.data[i * target.cols + j] > 0) return true;
  return false;
}

// A row matches when most of its attention sits on its target cells: the largest weight alone
// can win by a hair (0.378 against 0.377), which a learner would not call the pattern learnt.
const MATCH_SHARE = 0.5;

/** True when every targeted row puts more than half its weight on its target cells. */
export function matchesTarget(weights, target) {
  const n = target.rows, m = target.cols;
  for (let i = 0; i < n; i++) {
    if (!rowHasTarget(target, i)) continue;
    let share = 0;
    for (let j = 0; j < m; j++) if (target.data[i * m + j] > 0) share += weights.data[i * m + j];
    if (!(share > MATCH_SHARE)) return false;
  }
  return true;
}

/**
 * Deterministic optimizer state for named float32 parameters.
 * SGD with momentum: u = momentum u + g; w -= lr u.
 * Adam (Kingma & Ba): m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2;
 *   w -= lr (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + epsilon).
 */
export class Optimizer {
  #settings;
  #state = new Map();
  #t = 0;

  constructor(settings = {}) {
    const s = { ...TRAIN_DEFAULTS, ...settings };
    if (!OPTIMIZERS.includes(s.optimizer)) throw new RangeError(`optimizer must be one of ${OPTIMIZERS.join(', ')}, got ${JSON.stringify(s.optimizer)}`);
    for (const key of ['learningRate', 'momentum', 'beta1', 'beta2', 'epsilon']) {
      if (typeof s[key] !== 'number' || !Number.isFinite(s[key]) || s[key] < 0) throw new RangeError(`${key} must be a finite number >= 0, got ${String(s[key])}`);
    }
    this.#settings = s;
  }

  /** Steps taken so far. */
  get steps() {
    return this.#t;
  }

  /**
   * Updates each params[name] (a Float32Array, in place) by grads[name].
   * @param {Record<string, Float32Array>} params
   * @param {Record<string, Float32Array>} grads
   */
  step(params, grads) {
    const s = this.#settings;
    this.#t++;
    for (const name of Object.keys(grads)) {
      const w = params[name], g = grads[name];
      if (!this.#state.has(name)) this.#state.set(name, { m: new Float64Array(w.length), v: new Float64Array(w.length) });
      const { m, v } = this.#state.get(name);
      if (s.optimizer === 'sgd') {
        for (let i = 0; i < w.length; i++) {
          m[i] = s.momentum * m[i] + g[i];
          w[i] -= s.learningRate * m[i];
        }
      } else {
        const c1 = 1 - s.beta1 ** this.#t, c2 = 1 - s.beta2 ** this.#t;
        for (let i = 0; i < w.length; i++) {
          m[i] = s.beta1 * m[i] + (1 - s.beta1) * g[i];
          v[i] = s.beta2 * v[i] + (1 - s.beta2) * g[i] * g[i];
          w[i] -= (s.learningRate * (m[i] / c1)) / (Math.sqrt(v[i] / c2) + s.epsilon);
        }
      }
    }
  }
}

function transpose(a) {
  const t = new Matrix(a.cols, a.rows);
  for (let i = 0; i < a.rows; i++) for (let j = 0; j < a.cols; j++) t.data[j * a.rows + i] = a.data[i * a.cols + j];
  return t;
}

function identity(n) {
  const m = new Matrix(n, n);
  for (let i = 0; i < n; i++) m.data[i * n + i] = 1;
  return m;
}

/**
 * The inputs of a training run as the explorer draws them (computation.js) with
 * embeddings "word" (the same word gets the same row of X, so same-word can
 * be learnt) and sinusoidal positions added (so previous-token can be):
 * { x, wq, wk, wv } for head 1.
 * @param {string[]} tokens
 * @param {{ seed?: number, dModel?: number, dk?: number, dv?: number }} [options]
 */
export function drawTrainingInputs(tokens, { seed = 7, dModel = 6, dk = 3, dv = 3 } = {}) {
  const config = normalizeConfig({ tokens, seed, dModel, dk, dv, embeddings: 'word', positions: true });
  const { X, WQ, WK, WV } = drawInputs(config);
  return { x: X, wq: WQ, wk: WK, wv: WV };
}

/**
 * One attention head being trained. Owns copies of its weights; step()
 * runs forward and backward through the Attention API and updates them.
 */
export class Trainer {
  #attn;
  #x;
  #params;
  #target;
  #targetOutput;
  #learn;
  #causal;
  #scale;
  #mask;
  #positions; // { window?, softcap?, queryOffset? } as attention() takes them
  #optimizer;
  #identity;
  #history = [];

  /**
   * @param {import('../attention.js').Attention} attn
   * @param {{ x: Matrix, wq: Matrix, wk: Matrix, wv?: Matrix, target: Matrix, targetOutput?: Matrix,
   *   learn?: string[], causal?: boolean, scale?: number, mask?: boolean[][] | null,
   *   window?: [number, number] | null, softcap?: number, queryOffset?: number, rope?: object | null, optimizer?: string, learningRate?: number,
   *   momentum?: number, beta1?: number, beta2?: number, epsilon?: number }} options
   */
  constructor(attn, options) {
    const { x, wq, wk, wv, target, targetOutput } = options;
    const n = x.rows;
    if (target.rows !== n || target.cols !== n) throw new RangeError(`Trainer: target must be (${n}, ${n}), got (${target.rows}, ${target.cols})`);
    if (wq.rows !== x.cols || wk.rows !== x.cols || wq.cols !== wk.cols) throw new RangeError(`Trainer: wq and wk must be (${x.cols}, dk)`);
    const learn = options.learn ?? TRAIN_DEFAULTS.learn;
    for (const name of learn) if (!LEARNABLE.includes(name)) throw new RangeError(`Trainer: learn holds ${JSON.stringify(name)}; it may hold ${LEARNABLE.join(', ')}`);
    if (learn.includes('wv') && (!wv || !targetOutput)) throw new RangeError('Trainer: learning wv needs wv and a targetOutput (n, dv)');
    if (targetOutput && wv && (targetOutput.rows !== n || targetOutput.cols !== wv.cols)) throw new RangeError(`Trainer: targetOutput must be (${n}, ${wv.cols})`);
    this.#attn = attn;
    this.#x = x;
    this.#params = { wq: Matrix.from(wq), wk: Matrix.from(wk), ...(wv ? { wv: Matrix.from(wv) } : {}) };
    this.#target = target;
    this.#targetOutput = targetOutput ?? null;
    this.#learn = [...learn];
    this.#causal = options.causal === true;
    this.#scale = options.scale ?? defaultScale(wq.cols);
    this.#mask = options.mask ?? null;
    this.#positions = {
      ...(options.window ? { window: options.window } : {}),
      ...(options.softcap > 0 ? { softcap: options.softcap } : {}),
      ...(options.queryOffset ? { queryOffset: options.queryOffset } : {}),
      ...(options.rope ? { rope: options.rope } : {}),
    };
    this.#optimizer = new Optimizer(options);
    this.#identity = identity(n);
  }

  /** The current weight matrices (copies). */
  get params() {
    const out = {};
    for (const [name, m] of Object.entries(this.#params)) out[name] = Matrix.from(m);
    return out;
  }

  /** Loss after each step so far. */
  get history() {
    return [...this.#history];
  }

  /**
   * Forward and backward at the current weights, without updating them.
   * @returns {{ loss: number, weights: Matrix, output?: Matrix, grads: { wq: Matrix, wk: Matrix, wv?: Matrix },
   *   dq: Matrix, dk: Matrix, matches: boolean }}
   */
  evaluate() {
    const attn = this.#attn, x = this.#x, { wq, wk, wv } = this.#params;
    const opts = { causal: this.#causal, scale: this.#scale, ...this.#positions, ...(this.#mask ? { mask: this.#mask } : {}) };
    const q = attn.matmul(x, wq), k = attn.matmul(x, wk);
    const weights = attn.attention(q, k, this.#identity, opts).output;
    const ce = crossEntropy(weights, this.#target);
    const g = attn.attentionBackward(q, k, this.#identity, ce.dWeights, opts);
    let loss = ce.loss, dq = g.dq, dk = g.dk, dvMatrix = null, output;
    if (this.#targetOutput && wv) {
      const v = attn.matmul(x, wv);
      output = attn.attention(q, k, v, opts).output;
      const y = this.#targetOutput, count = y.data.length;
      const dOut = new Matrix(y.rows, y.cols);
      let mse = 0;
      for (let i = 0; i < count; i++) {
        const e = output.data[i] - y.data[i];
        mse += (e * e) / count;
        dOut.data[i] = (2 * e) / count;
      }
      loss += mse;
      const g2 = attn.attentionBackward(q, k, v, dOut, opts);
      dq = addMatrices(dq, g2.dq);
      dk = addMatrices(dk, g2.dk);
      dvMatrix = g2.dv;
    }
    const xt = transpose(x);
    const grads = { wq: attn.matmul(xt, dq), wk: attn.matmul(xt, dk) };
    if (dvMatrix) grads.wv = attn.matmul(xt, dvMatrix);
    return { loss, weights, ...(output ? { output } : {}), grads, dq, dk, matches: matchesTarget(weights, this.#target) };
  }

  /** One step: evaluate, then the optimizer moves the learned matrices. Returns what evaluate() gave. */
  step() {
    const r = this.evaluate();
    const params = {}, grads = {};
    for (const name of this.#learn) {
      params[name] = this.#params[name].data;
      grads[name] = r.grads[name].data;
    }
    this.#optimizer.step(params, grads);
    this.#history.push(r.loss);
    return r;
  }
}

function addMatrices(a, b) {
  const out = Matrix.from(a);
  for (let i = 0; i < out.data.length; i++) out.data[i] += b.data[i];
  return out;
}

/**
 * One entry of dW = x^T dM (dM = dQ or dK) as its sum of terms, for the
 * hover text: dW[a][c] = sum_i x[i][a] dM[i][c].
 * @param {Matrix} x (n, dModel)
 * @param {Matrix} dm (n, dk)
 * @param {number} a row of dW (an embedding dimension)
 * @param {number} c column of dW
 * @param {{ name?: string, tokens?: string[], digits?: number }} [options]
 * @returns {{ value: number, terms: { token: string, x: number, g: number, product: number }[], text: string }}
 */
export function gradientTerms(x, dm, a, c, { name = 'dW_Q', tokens = [], digits = 4 } = {}) {
  const terms = [];
  let value = 0;
  for (let i = 0; i < x.rows; i++) {
    const xi = x.data[i * x.cols + a], gi = dm.data[i * dm.cols + c];
    terms.push({ token: tokens[i] ?? String(i), x: xi, g: gi, product: xi * gi });
    value += xi * gi;
  }
  const d = name.replace(/^dW_/, 'd');
  const f = (v) => (v < 0 ? `(${v.toFixed(digits)})` : v.toFixed(digits));
  const text = `${name}[${a}, ${c}] = Σ over tokens of X[token, ${a}] · ${d}[token, ${c}] = ` +
    `${terms.map((t) => `${f(t.x)}·${f(t.g)}`).join(' + ')} = ${value.toFixed(digits)}`;
  return { value, terms, text };
}

/**
 * The text of a training target for the `train-target` setting (and so the
 * URL): a preset name, "attend-to:<word>", or "paint:i-j,i-j,..." (row i
 * attends to column j).
 * @param {{ preset: string, word?: string, cells?: number[][] }} target
 */
export function formatTarget({ preset, word, cells }) {
  if (preset === 'attend-to') return `attend-to:${word}`;
  if (preset !== 'paint') return preset;
  const pairs = [];
  (cells ?? []).forEach((row, i) => row.forEach((j) => pairs.push(`${i}-${j}`)));
  return `paint:${pairs.join(',')}`;
}

/**
 * The target named by a `train-target` text for n tokens, or null when the
 * text does not name one (unknown preset, cells outside n x n).
 * @returns {{ preset: string, word?: string, cells?: number[][] } | null}
 */
export function parseTarget(text, n) {
  if (typeof text !== 'string') return null;
  if (text.startsWith('attend-to:')) return { preset: 'attend-to', word: text.slice('attend-to:'.length) };
  if (text.startsWith('paint:')) {
    const cells = Array.from({ length: n }, () => []);
    for (const pair of text.slice('paint:'.length).split(',').filter(Boolean)) {
      const m = /^(\d+)-(\d+)$/.exec(pair);
      if (!m || Number(m[1]) >= n || Number(m[2]) >= n) return null;
      const row = cells[Number(m[1])];
      if (!row.includes(Number(m[2]))) row.push(Number(m[2]));
    }
    return { preset: 'paint', cells };
  }
  return PRESETS.includes(text) ? { preset: text } : null;
}
