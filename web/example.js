// example.js - the handbook's worked example (../shared/seed-example.md) and
// its generalisation: tokens, seed, sizes and heads in; every matrix out.
// Shared by the command line and the explorer. No DOM here.

import { Matrix } from './matrix.js';
import { NumpyRandom } from './numpy-random.js';

export const HANDBOOK = Object.freeze({
  tokens: Object.freeze(['the', 'cat', 'sat', 'there']),
  seed: 7,
  dModel: 6,
  dk: 3,
  dv: 3,
  heads: 1,
  kvHeads: 1,
  causal: false,
});

/** The limits the explorer and command line accept. */
export const LIMITS = Object.freeze({ tokens: 64, dModel: 512, d: 256, heads: 16 });

/**
 * Checks and completes a configuration; throws RangeError/TypeError naming
 * the setting. dv defaults to dk, kvHeads to heads, scale to 1/sqrt(dk).
 */
export function normalizeConfig(config = {}) {
  const c = { ...HANDBOOK, ...config };
  if (config.dv === undefined) c.dv = c.dk;
  if (config.kvHeads === undefined) c.kvHeads = c.heads;
  if (!Array.isArray(c.tokens) || c.tokens.some((t) => typeof t !== 'string')) {
    throw new TypeError('tokens must be a list of words');
  }
  if (c.tokens.length < 1 || c.tokens.length > LIMITS.tokens) {
    throw new RangeError(`tokens: between 1 and ${LIMITS.tokens} tokens, got ${c.tokens.length}`);
  }
  const int = (name, value, lo, hi) => {
    if (typeof value !== 'number' || !Number.isInteger(value) || value < lo || value > hi) {
      throw new RangeError(`${name} must be an integer from ${lo} to ${hi}, got ${String(value)}`);
    }
  };
  int('seed', c.seed, 0, 0xffffffff);
  int('d-model', c.dModel, 1, LIMITS.dModel);
  int('dk', c.dk, 1, LIMITS.d);
  int('dv', c.dv, 1, LIMITS.d);
  int('heads', c.heads, 1, LIMITS.heads);
  int('kv-heads', c.kvHeads, 1, c.heads);
  if (c.heads % c.kvHeads !== 0) throw new RangeError(`heads (${c.heads}) must be a multiple of kv-heads (${c.kvHeads})`);
  if (typeof c.causal !== 'boolean') throw new TypeError('causal must be true or false');
  if (c.scale === undefined || c.scale === null) {
    c.scale = 1 / Math.sqrt(c.dk);
  } else if (typeof c.scale !== 'number' || !Number.isFinite(c.scale)) {
    throw new RangeError(`scale must be a finite number, got ${String(c.scale)}`);
  }
  c.tokens = [...c.tokens];
  return c;
}

/**
 * X (n, dModel), then W_Q, W_K, W_V drawn as the handbook does:
 * np.random.seed(seed); X = randn(n, d_model); W = randn(d_model, cols) * 0.5.
 */
export function drawInputs(config) {
  const { tokens, seed, dModel, dk, dv, heads, kvHeads } = config;
  const rng = new NumpyRandom(seed);
  const draw = (rows, cols, factor) => new Matrix(rows, cols, Float32Array.from(rng.randn(rows, cols), (x) => x * factor));
  const X = draw(tokens.length, dModel, 1);
  const WQ = draw(dModel, heads * dk, 0.5);
  const WK = draw(dModel, kvHeads * dk, 0.5);
  const WV = draw(dModel, kvHeads * dv, 0.5);
  return { X, WQ, WK, WV };
}

function columns(m, start, count) {
  const out = new Matrix(m.rows, count);
  for (let i = 0; i < m.rows; i++) out.data.set(m.data.subarray(i * m.cols + start, i * m.cols + start + count), i * count);
  return out;
}

/**
 * Runs the example: projections, then the four steps for every head.
 * @param {import('./attention.js').Attention} attn
 * @param {object} config normalized by normalizeConfig
 * @param {{ X?, WQ?, WK?, WV? }} [inputs] replace the random draws
 * @param {Uint8Array} [mask] keep-mask (n, n), 1 = may attend
 */
export function computeExample(attn, config, inputs = {}, mask) {
  // Draw only when something is missing (the explorer passes all four).
  const complete = inputs.X && inputs.WQ && inputs.WK && inputs.WV;
  const { X, WQ, WK, WV } = complete ? inputs : { ...drawInputs(config), ...inputs };
  const Q = attn.matmul(X, WQ), K = attn.matmul(X, WK), V = attn.matmul(X, WV);
  const n = config.tokens.length;
  const group = config.heads / config.kvHeads;
  const heads = [];
  for (let h = 0; h < config.heads; h++) {
    const g = Math.floor(h / group);
    const q = columns(Q, h * config.dk, config.dk);
    const k = columns(K, g * config.dk, config.dk);
    const v = columns(V, g * config.dv, config.dv);
    const options = { steps: true, causal: config.causal, scale: config.scale };
    if (mask) options.mask = { rows: n, cols: n, data: mask };
    const r = attn.attention(q, k, v, options);
    heads.push({ kvHead: g, q, k, v, scores: r.scores, scaled: r.scaled, weights: r.weights, output: r.output });
  }
  return { tokens: config.tokens, X, WQ, WK, WV, Q, K, V, heads };
}
