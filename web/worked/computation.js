// computation.js - the computation the explorer shows: the handbook's worked example
// (seed 7, four tokens, d_model 6, d_k 3) and its generalisation: tokens, seed,
// sizes and heads in; every matrix out.
// Shared by the command line and the explorer. No DOM here.

import { Matrix } from '../core/matrix.js';
import { NumpyRandom } from '../core/numpy-random.js';
import { ROPE_THETA, WINDOW_MAX, checkOffset, checkRope, checkScale, checkSoftcap, checkWindow, defaultScale } from '../core/options.js';

export const HANDBOOK = Object.freeze({
  tokens: Object.freeze(['the', 'cat', 'sat', 'there']),
  seed: 7,
  dModel: 6,
  dk: 3,
  dv: 3,
  heads: 1,
  kvHeads: 1,
  causal: false,
  embeddings: 'position',
  positions: false,
  window: null,
  softcap: 0,
  queryOffset: 0,
  rope: null,
});

/** Where the rows of X come from: row i = draw i, or one draw per distinct word. */
export const EMBEDDINGS = Object.freeze(['position', 'word']);

/** The scale used when none is given: 1/sqrt(d_k) (the options module's rule). */
export { defaultScale };

/** The limits the explorer and command line accept. */
export const LIMITS = Object.freeze({ tokens: 512, dModel: 512, d: 256, heads: 16, window: WINDOW_MAX });

/**
 * Checks and completes a configuration; throws RangeError/TypeError naming
 * the setting. dv defaults to dk, kvHeads to heads, scale to 1/sqrt(dk)
 * (then scaleIsDefault is true).
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
  if (!EMBEDDINGS.includes(c.embeddings)) throw new RangeError(`embeddings must be one of ${EMBEDDINGS.join(', ')}, got ${String(c.embeddings)}`);
  if (typeof c.positions !== 'boolean') throw new TypeError('positions must be true or false');
  // The attention options follow the library's rules (web/core/options.js),
  // named as the settings are.
  c.window = checkWindow(c.window, 'window');
  c.softcap = checkSoftcap(c.softcap, 'softcap');
  c.queryOffset = checkOffset(c.queryOffset ?? 0, 'query-offset').queryOffset;
  c.rope = ropeOption(c.rope, c.dk);
  // Decided here once: the explorer's titles and the command line both ask config.scaleIsDefault.
  c.scaleIsDefault = c.scale == null;
  c.scale = checkScale(c.scale, 'scale', c.dk);
  c.tokens = [...c.tokens];
  return c;
}

/**
 * The rope setting as the library's option: null (off), or { theta, dims,
 * interleaved: false } (Llama's rotate_half pairs) from true (theta 10000),
 * a theta, or such an object. RoPE turns pairs of dimensions, so with an odd
 * d_k it turns the first d_k - 1 and the last stays as it is (partial
 * rotary, as the library's `dims`); d_k = 1 has no pair to turn.
 */
export function ropeOption(value, dk) {
  if (value == null || value === false) return null;
  const theta = value === true ? ROPE_THETA : typeof value === 'object' ? value.theta ?? ROPE_THETA : value;
  if (dk < 2) throw new RangeError(`rope turns pairs of dimensions: it needs dk of 2 or more, got ${dk}`);
  return checkRope({ theta, dims: dk - (dk % 2) }, 'rope', dk);
}

/**
 * The numpy seed of a word's embedding with embeddings="word": 32-bit FNV-1a
 * over the UTF-16 code units of `${seed} ${word}`, so a word keeps its row
 * within a seed and the rows change with the seed.
 */
export function wordSeed(seed, word) {
  const text = `${seed} ${word}`;
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/**
 * Sinusoidal position p in d dimensions ("Attention Is All You Need", 3.5):
 * column 2k is sin(p / 10000^(2k/d)), column 2k+1 is cos of the same angle.
 */
export function sinusoid(p, d) {
  const out = new Float64Array(d);
  for (let c = 0; c < d; c++) {
    const angle = p / 10000 ** ((2 * Math.floor(c / 2)) / d);
    out[c] = c % 2 === 0 ? Math.sin(angle) : Math.cos(angle);
  }
  return out;
}

/**
 * X (n, dModel), then W_Q, W_K, W_V drawn as the handbook does:
 * np.random.seed(seed); X = randn(n, d_model); W = randn(d_model, cols) * 0.5.
 * With embeddings "word", row i of X is instead randn(d_model) under the
 * numpy seed wordSeed(seed, token i) (W_Q, W_K, W_V stay the handbook's
 * draws); with positions, sinusoid(i, d_model) is added to row i.
 */
export function drawInputs(config) {
  const { tokens, seed, dModel, dk, dv, heads, kvHeads } = config;
  const rng = new NumpyRandom(seed);
  const draw = (rows, cols, factor) => new Matrix(rows, cols, Float32Array.from(rng.randn(rows, cols), (x) => x * factor));
  const X = draw(tokens.length, dModel, 1);
  const WQ = draw(dModel, heads * dk, 0.5);
  const WK = draw(dModel, kvHeads * dk, 0.5);
  const WV = draw(dModel, kvHeads * dv, 0.5);
  if (config.embeddings === 'word' || config.positions) {
    const rows = new Map();
    tokens.forEach((word, i) => {
      let row = Float64Array.from(X.data.subarray(i * dModel, (i + 1) * dModel));
      if (config.embeddings === 'word') {
        if (!rows.has(word)) rows.set(word, new NumpyRandom(wordSeed(seed, word)).randn(dModel));
        row = rows.get(word).slice();
      }
      if (config.positions) {
        const pe = sinusoid(i, dModel);
        for (let c = 0; c < dModel; c++) row[c] += pe[c];
      }
      X.data.set(row, i * dModel);
    });
  }
  return { X, WQ, WK, WV };
}

/** Head h's columns of a (rows, heads * d) matrix: a new (rows, d) Matrix. */
export function headColumns(m, h, d) {
  const out = new Matrix(m.rows, d);
  for (let i = 0; i < m.rows; i++) out.data.set(m.data.subarray(i * m.cols + h * d, i * m.cols + (h + 1) * d), i * d);
  return out;
}

// Writes m (rows, d) into head h's columns of out (rows, heads * d).
function setColumns(out, m, h) {
  const d = m.cols;
  for (let i = 0; i < m.rows; i++) out.data.set(m.data.subarray(i * d, (i + 1) * d), i * out.cols + h * d);
}

/**
 * Runs the example: projections (turned by RoPE with config.rope), then
 * the four steps for every head.
 * @param {import('../attention.js').Attention} attn
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
  const { dk, rope } = config;
  // With RoPE, QR and KR hold Q and K turned at their positions (what the
  // scores are dot products of) and each head's q and k are those.
  const QR = rope ? new Matrix(n, config.heads * dk) : null;
  const KR = rope ? new Matrix(n, config.kvHeads * dk) : null;
  const heads = [];
  for (let h = 0; h < config.heads; h++) {
    const g = Math.floor(h / group);
    const q = headColumns(Q, h, dk);
    const k = headColumns(K, g, dk);
    const v = headColumns(V, g, config.dv);
    const options = { steps: true, causal: config.causal, scale: config.scale };
    if (config.window) options.window = config.window;
    if (config.softcap > 0) options.softcap = config.softcap;
    if (config.queryOffset !== 0) options.queryOffset = config.queryOffset;
    if (rope) options.rope = rope;
    if (mask) options.mask = { rows: n, cols: n, data: mask };
    const r = attn.attention(q, k, v, options);
    // The rows the kernel attends with (attn.rope is its turn, bit for bit).
    const qr = rope ? attn.rope(q, { ...rope, position: config.queryOffset }) : q;
    const kr = rope ? attn.rope(k, rope) : k;
    if (rope) {
      setColumns(QR, qr, h);
      setColumns(KR, kr, g);
    }
    heads.push({ kvHead: g, q: qr, k: kr, v, scores: r.scores, scaled: r.scaled, logits: r.logits, weights: r.weights, output: r.output });
  }
  return { tokens: config.tokens, X, WQ, WK, WV, Q, K, V, ...(rope ? { QR, KR } : {}), heads };
}
