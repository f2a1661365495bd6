// attentions.js - attention patterns the explorer shows as layers x heads:
// a model's own (the tiny transformer of web/model.js) or any model's, given
// as { tokens, attention } the way transformers.js (output_attentions) and
// BertViz hand them over. Checks that input with errors naming the field,
// labels each head with its kind ("previous token 0.93") and writes the
// texts about numbers the explorer did not compute. Pure: no DOM, no wasm.

import { Matrix } from '../core/matrix.js';
import { LIMITS } from '../worked/computation.js';
import { fixed } from '../worked/format.js';

/**
 * What the model view's grid of thumbnails can show: layers and heads of a
 * side (a 390 px column gives 64 heads 5 px each), layers x heads in all
 * (Llama-2 7B has 32 x 32), and the weights in all (512 tokens x 12 x 12,
 * BERT-base, is 38 million; these take 4 bytes each).
 */
export const ATTENTION_LIMITS = Object.freeze({ tokens: LIMITS.tokens, layers: 64, heads: 64, grid: 1024, weights: 2 ** 26 });
/** How far a row of weights may be from summing to 1 and still be attention (float16 exports round). */
const ROW_SUM_TOLERANCE = 0.02;

/** Below this score a head's strongest kind does not describe it: it is labelled "mixed". */
const CLEAR_SCORE = 0.25;

/** The kinds of head the labels name, in the order scores list them. */
export const HEAD_KINDS = Object.freeze({ previousToken: 'previous token', induction: 'induction', firstToken: 'first token', self: 'self' });

const typeName = (x) => (x === null ? 'null' : Array.isArray(x) ? `an array of ${x.length}` : ArrayBuffer.isView(x) ? `a ${x.constructor.name} of ${x.length}` : typeof x);

/**
 * Checks attention computed elsewhere and returns
 * { tokens: string[], layers, heads, attention: Matrix[][] (layer, head) each (n, n), source: string }.
 * `attention` is attention[layer][head] as (n, n) nested arrays or Matrix-likes
 * ({ rows, cols, data }), or one flat Float32Array (or number[]) with
 * `shape` [layers, heads, n, n] (a batch of one, [layers, 1, heads, n, n], is
 * also taken). `source` (optional) says where the numbers come from.
 * Throws TypeError/RangeError naming the field.
 */
export function normalizeAttentions(value, name = 'attentions', { deferChecks = false } = {}) {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new TypeError(`${name} must be an object { tokens, attention } (attention[layer][head] an (n, n) array), got ${typeName(value)}`);
  }
  const { tokens, attention, shape, source = '' } = value;
  if (!Array.isArray(tokens) || tokens.length === 0 || tokens.some((t) => typeof t !== 'string')) {
    throw new TypeError(`${name}.tokens must be a non-empty array of strings, got ${typeName(tokens)}`);
  }
  const n = tokens.length;
  if (n > ATTENTION_LIMITS.tokens) throw new RangeError(`${name}.tokens: at most ${ATTENTION_LIMITS.tokens} tokens, got ${n}`);
  if (typeof source !== 'string') throw new TypeError(`${name}.source must be a string, got ${typeName(source)}`);
  let layers;
  if (shape !== undefined) layers = fromFlat(attention, shape, n, name, deferChecks);
  else layers = fromNested(attention, n, name);
  const out = { tokens: [...tokens], layers: layers.length, heads: layers[0].length, attention: layers, source };
  if (!deferChecks) checkAttentionLayers(out, 0, out.layers, name);
  // Views of the page's own array until checked: checkAttentionLayers copies them.
  else if (shape !== undefined && attention instanceof Float32Array) out.views = true;
  return out;
}

/**
 * The weights' check normalizeAttentions skips with `deferChecks`: layers
 * `from` to `to` of what it returned, each weight in [0, 1] and each row
 * summing to 1; throws RangeError naming the first bad number. A caller
 * with millions of weights checks a head per task (checkAttentionHead), so
 * the page stays responsive.
 */
export function checkAttentionLayers(data, from, to, name = 'attentions') {
  for (let l = from; l < to; l++) for (let h = 0; h < data.heads; h++) checkAttentionHead(data, l, h, name);
}

/** checkAttentionLayers for one head of one layer (a task's worth of a BERT-sized input). */
export function checkAttentionHead(data, l, h, name = 'attentions') {
  const row = data.attention[l];
  let m = row[h];
  // A view of the page's array becomes the explorer's own copy as it is checked.
  if (data.views) row[h] = m = new Matrix(m.rows, m.cols, m.data.slice());
  checkWeights(m, `${name}.attention[${l}][${h}]`);
  if (data.views && l === data.layers - 1 && h === data.heads - 1) delete data.views;
}

// With `late`, a Float32Array's heads are views of it until checkAttentionLayers copies them.
function fromFlat(data, shape, n, name, late) {
  if (!Array.isArray(shape) || !shape.every((d) => Number.isInteger(d) && d > 0)) {
    throw new TypeError(`${name}.shape must be [layers, heads, n, n] of positive integers, got ${JSON.stringify(shape)}`);
  }
  let dims = shape;
  if (dims.length === 5 && dims[1] === 1) dims = [dims[0], dims[2], dims[3], dims[4]]; // a batch of one
  if (dims.length !== 4) throw new RangeError(`${name}.shape must be [layers, heads, n, n] (or [layers, 1, heads, n, n]), got ${JSON.stringify(shape)}`);
  const [L, H, rows, cols] = dims;
  checkGrid(L, H, n, name);
  if (rows !== n || cols !== n) throw new RangeError(`${name}.shape ends in (${rows}, ${cols}) but there are ${n} tokens: expected (${n}, ${n})`);
  if (!(ArrayBuffer.isView(data) || Array.isArray(data))) throw new TypeError(`${name}.attention must be a Float32Array (or number[]) when shape is given, got ${typeName(data)}`);
  if (data.length !== L * H * n * n) throw new RangeError(`${name}.attention has ${data.length} numbers; shape ${JSON.stringify(shape)} needs ${L * H * n * n}`);
  // One copy of the numbers; each head's matrix is a view of its part.
  const all = data instanceof Float32Array ? (late ? data : data.slice()) : Float32Array.from(data);
  return Array.from({ length: L }, (_, l) => Array.from({ length: H }, (_, h) => {
    const at = (l * H + h) * n * n;
    return new Matrix(n, n, all.subarray(at, at + n * n));
  }));
}

// Refuses a grid of layers x heads the model view cannot show, before anything is copied.
function checkGrid(layers, heads, n, name) {
  const lim = ATTENTION_LIMITS;
  const what = `${layers} layers x ${heads} heads`;
  if (layers > lim.layers) throw new RangeError(`${name}: ${what}; the model view's grid shows at most ${lim.layers} layers`);
  if (heads > lim.heads) throw new RangeError(`${name}: ${what}; the model view's grid shows at most ${lim.heads} heads a layer`);
  if (layers * heads > lim.grid) throw new RangeError(`${name}: ${what} = ${layers * heads} heads; the model view's grid shows at most ${lim.grid} in all`);
  if (layers * heads * n * n > lim.weights) throw new RangeError(`${name}: ${what} of ${n} x ${n} weights is ${layers * heads * n * n} numbers; the explorer holds at most ${lim.weights} (${lim.weights / 2 ** 20} Mi)`);
}

function fromNested(attention, n, name) {
  if (!Array.isArray(attention) || attention.length === 0) {
    throw new TypeError(`${name}.attention must be a non-empty array of layers, each an array of heads' (${n}, ${n}) weights, got ${typeName(attention)}`);
  }
  const first = Array.isArray(attention[0]) ? attention[0].length : 1;
  checkGrid(attention.length, first, n, name);
  let heads = -1;
  return attention.map((layer, l) => {
    if (!Array.isArray(layer) || layer.length === 0) throw new TypeError(`${name}.attention[${l}] must be a non-empty array of heads, got ${typeName(layer)}`);
    if (heads >= 0 && layer.length !== heads) throw new RangeError(`${name}.attention[${l}] has ${layer.length} heads, layer 0 has ${heads}: every layer needs the same`);
    heads = layer.length;
    return layer.map((m, h) => toSquare(m, n, `${name}.attention[${l}][${h}]`));
  });
}

function toSquare(m, n, where) {
  if (m && !Array.isArray(m) && typeof m === 'object' && 'rows' in m) {
    if (m.rows !== n || m.cols !== n) throw new RangeError(`${where} is (${m.rows}, ${m.cols}); expected (${n}, ${n}), one row and column per token`);
    if (!m.data || m.data.length !== n * n) throw new RangeError(`${where}.data must hold ${n * n} numbers`);
    return new Matrix(n, n, Float32Array.from(m.data));
  }
  if (!Array.isArray(m) || m.length !== n) throw new RangeError(`${where} must be an (${n}, ${n}) array, one row per token; got ${typeName(m)}`);
  const out = new Matrix(n, n);
  m.forEach((row, i) => {
    if (!(Array.isArray(row) || ArrayBuffer.isView(row)) || row.length !== n) throw new RangeError(`${where}[${i}] must be a row of ${n} numbers, got ${typeName(row)}`);
    for (let j = 0; j < n; j++) out.data[i * n + j] = row[j];
  });
  return out;
}

// Attention weights: finite, in [0, 1], each row summing to 1 (or 0 when fully masked).
function checkWeights(m, where) {
  const n = m.rows, data = m.data;
  for (let i = 0; i < n; i++) {
    let sum = 0;
    for (let k = i * n, end = k + n; k < end; k++) {
      const w = data[k];
      if (!(w >= -1e-6 && w <= 1 + 1e-6)) throw new RangeError(`${where}[${i}][${k - i * n}] is ${w}: attention weights are in [0, 1] (pass the softmax's output, not the scores)`);
      sum += w;
    }
    if (Math.abs(sum - 1) > ROW_SUM_TOLERANCE && sum > ROW_SUM_TOLERANCE) {
      throw new RangeError(`${where}[${i}] sums to ${fixed(sum, 4)}: each row of attention weights sums to 1`);
    }
  }
}

/**
 * Scores of one pattern on the tokens shown: mean weight from i to i - 1
 * (previous token), to position 0 (first token, from i >= 1), to itself (self).
 */
export function patternScores(m) {
  const n = m.rows;
  let prev = 0, first = 0, self = 0;
  for (let i = 0; i < n; i++) {
    self += m.data[i * n + i];
    if (i >= 1) {
      prev += m.data[i * n + i - 1];
      first += m.data[i * n];
    }
  }
  return { previousToken: n > 1 ? prev / (n - 1) : 0, firstToken: n > 1 ? first / (n - 1) : 0, self: self / n };
}

/** The strongest kind of a head's scores: { kind, score, text: "previous token 0.93", detail }; "mixed" when none is clear. */
export function headLabel(scores) {
  let kind = 'previousToken';
  for (const k of Object.keys(HEAD_KINDS)) if ((scores[k] ?? -1) > (scores[kind] ?? -1)) kind = k;
  const score = scores[kind];
  const detail = `${HEAD_KINDS[kind]} ${fixed(score, 2)}`;
  // A thumbnail's label stays short; the spoken label says the strongest kind too.
  return score < CLEAR_SCORE ? { kind: 'mixed', score, text: 'mixed', detail: `mixed (strongest: ${detail})` } : { kind, score, text: detail, detail };
}

/** "layer 2, head 1" from indices counted from 0. */
export const headName = (layer, head) => `layer ${layer + 1}, head ${head + 1}`;

/**
 * The popover's text for a weight the explorer did not compute: there is
 * no derivation, only where it came from.
 */
export function externalWeightText(data, layer, head, i, j) {
  const t = data.tokens;
  const w = data.attention[layer][head].get(i, j);
  const from = data.source ? ` of ${data.source}` : '';
  return `weight(${t[i]} → ${t[j]}), ${headName(layer, head)}${from} = ${fixed(w, 4)}. These numbers were computed outside the explorer and handed to it (the attentions property or attentions-src), so there is no derivation to show: only the weights, not the queries and keys behind them.`;
}

/** The sentence under the model view saying what the learner is looking at. */
export function modelViewText({ kind, layers, heads, source = '', steps = 0 }) {
  if (kind === 'external') {
    return `Every head of ${source || 'a model'} (${layers} layers × ${heads} heads) on these tokens: row i of a thumbnail is where token i looks. The numbers come from outside the explorer, so only the weights are shown; choose a head to see its lines and weights. Labels name the strongest pattern on these tokens.`;
  }
  return `A tiny transformer${steps ? ` trained for ${steps} steps` : ''}: each thumbnail is one head's pattern on these words (row i: where word i looks), labelled with its score on repeated random words. Choose a head to see its numbers below; press Repeat to watch induction.`;
}
