// transformer.js - the forward and backward pass of a decoder-only,
// attention-only transformer over the Attention API: every matrix product is
// Attention#matmul, every attention layer Attention#sdpa (causal, 'bshd') and
// its gradient Attention#sdpaBackward. No MLPs, no layer norm.
//
// Shapes, for a batch of B sequences of n tokens (d = dModel, H = heads,
// dk = dHead, V = vocabulary size):
//   x_0 = embed[tokens] + position[0 .. n)                  (B*n, d) residual stream
//   per layer l:
//     q = x_l wq, k = x_l wk, v = x_l wv                    (B*n, H*dk): bshd
//     z = sdpa(q, k, v, causal, scale 1/sqrt(dk))           (B*n, H*dk) heads side by side
//     x_{l+1} = x_l + z wo                                   (B*n, d)
//   logits = x_L unembed                                     (rows, V), only at the rows asked
//   loss = mean over rows of -log softmax(logits)[target]
//
// Parameters are Float32Arrays in a plain object keyed by PARAM names;
// gradients come back in one keyed the same way.

import { Matrix } from '../core/matrix.js';
import { Workspace, view } from './workspace.js';

/** The parameter names of a model with `layers` layers, in a fixed order (serialisation, Adam). */
export function paramNames(layers) {
  const names = ['embed', 'position'];
  for (let l = 0; l < layers; l++) for (const w of ['wq', 'wk', 'wv', 'wo']) names.push(`layers.${l}.${w}`);
  names.push('unembed');
  return names;
}

/** The shape [rows, cols] of each parameter. */
export function paramShapes({ layers, heads, dModel, dHead, context, vocabSize }) {
  const shapes = { embed: [vocabSize, dModel], position: [context, dModel], unembed: [dModel, vocabSize] };
  for (let l = 0; l < layers; l++) {
    shapes[`layers.${l}.wq`] = [dModel, heads * dHead];
    shapes[`layers.${l}.wk`] = [dModel, heads * dHead];
    shapes[`layers.${l}.wv`] = [dModel, heads * dHead];
    shapes[`layers.${l}.wo`] = [heads * dHead, dModel];
  }
  return shapes;
}

/**
 * Parameters drawn from rng (a NumpyRandom): normal, each scaled so that
 * the residual stream starts with entries of size about 1 and each layer's
 * first output and the first logits are about as large (1 / sqrt(fan in)).
 */
export function initParams(shape, rng) {
  const shapes = paramShapes(shape);
  const params = {};
  for (const name of paramNames(shape.layers)) {
    const [rows, cols] = shapes[name];
    const std = name === 'embed' || name === 'position' ? INIT_EMBED_STD : 1 / Math.sqrt(rows);
    const draw = rng.randn(rows * cols);
    const data = new Float32Array(rows * cols);
    for (let i = 0; i < data.length; i++) data[i] = draw[i] * std;
    params[name] = data;
  }
  return params;
}

const SMALLEST_FLOAT32 = 2 ** -149;

// Token and position embeddings each contribute half the residual's variance.
const INIT_EMBED_STD = Math.SQRT1_2;

// out (cols, rows) = data (rows, cols) transposed.
function transposeInto(out, data, rows, cols) {
  for (let i = 0; i < rows; i++) for (let j = 0; j < cols; j++) out[j * rows + i] = data[i * cols + j];
  return out;
}

// target[t + i] += source[s + i] for i < length: rows of flat arrays, added
// in place without a view object per row.
function addRow(target, t, source, s, length) {
  for (let i = 0; i < length; i++) target[t + i] += source[s + i];
}

/**
 * The forward pass of `batch` sequences of n tokens each.
 * @param {import('../attention.js').Attention} attn
 * @param {object} shape { layers, heads, dModel, dHead }
 * @param {Record<string, Float32Array>} params
 * @param {Int32Array} tokens (batch * n) ids
 * @param {{ steps?: boolean, work?: Workspace }} [options] steps: keep each layer's attention
 *   scores, scaled, logits and weights, (batch, heads, n, n) each; work: the
 *   arrays to write into (a new Workspace when absent), which the result views
 * @returns {object} { batch, n, xs: x_0 .. x_L, layers: per layer { q, k, v, z, out, lse, steps? }, work }
 */
export function forwardPass(attn, shape, params, tokens, batch, n, { steps = false, work = new Workspace(shape, batch, n) } = {}) {
  const { layers, heads, dModel: d, dHead: dk } = shape;
  const rows = batch * n;
  const embed = params.embed, position = params.position;
  const xs = work.xs;
  let x = xs[0];
  for (let r = 0; r < rows; r++) {
    const e = tokens[r] * d, p = (r % n) * d, o = r * d;
    for (let j = 0; j < d; j++) x[o + j] = embed[e + j] + position[p + j];
  }
  const cache = [];
  const sdpaOptions = { batch, heads, nq: n, nk: n, dk, dv: dk, causal: true, layout: 'bshd', stats: true, steps, out: null };
  for (let l = 0; l < layers; l++) {
    const { q, k, v, z, out } = work.layers[l];
    const X = new Matrix(rows, d, x);
    attn.matmul(X, new Matrix(d, heads * dk, params[`layers.${l}.wq`]), { out: q });
    attn.matmul(X, new Matrix(d, heads * dk, params[`layers.${l}.wk`]), { out: k });
    attn.matmul(X, new Matrix(d, heads * dk, params[`layers.${l}.wv`]), { out: v });
    sdpaOptions.out = z;
    const result = attn.sdpa(q, k, v, sdpaOptions);
    attn.matmul(new Matrix(rows, heads * dk, z), new Matrix(heads * dk, d, params[`layers.${l}.wo`]), { out });
    const layer = { q, k, v, z, out, lse: result.lse };
    if (steps) layer.steps = { scores: result.scores, scaled: result.scaled, logits: result.logits, weights: result.weights };
    cache.push(layer);
    // x_{l+1} = out + x_l
    const next = xs[l + 1];
    for (let i = 0; i < next.length; i++) next[i] = out[i] + x[i];
    x = next;
  }
  return { batch, n, xs, layers: cache, work };
}

/**
 * Logits (rows.length, V) at the given flat rows of the final residual stream,
 * in the pass's workspace.
 * @param {Int32Array | null} rows flat positions; null for all
 */
export function logitsAt(attn, shape, params, pass, rows) {
  const d = shape.dModel, V = shape.vocabSize;
  const x = pass.xs[pass.xs.length - 1];
  const count = rows === null ? x.length / d : rows.length;
  const picked = rows === null ? x : view(pass.work.picked, count * d);
  if (rows !== null) {
    for (let r = 0; r < count; r++) for (let j = 0, from = rows[r] * d, to = r * d; j < d; j++) picked[to + j] = x[from + j];
  }
  return attn.matmul(new Matrix(count, d, picked), new Matrix(d, V, params.unembed), { out: view(pass.work.logits, count * V) });
}

/**
 * Cross-entropy of the logits (R, V) against targets (R), averaged with
 * weights (R) (null: all 1), and its gradient w_r (softmax - onehot) / sum(w).
 * The softmax is the library's (wasm), so the gradient has the same bits in
 * every engine; only the reported loss goes through Math.log, whose last bit
 * engines may round differently. A probability that underflowed to 0 counts
 * as the smallest float32, so the loss stays finite (at most 103.3).
 * inPlace: the gradient overwrites the logits instead of taking a new array.
 */
export function crossEntropy(attn, logits, targets, weights = null, { inPlace = false } = {}) {
  const { rows: R, cols: V } = logits;
  const grad = attn.softmax(logits, inPlace ? { out: logits } : undefined).data;
  let total = 0, loss = 0;
  for (let r = 0; r < R; r++) total += weights === null ? 1 : weights[r];
  for (let r = 0; r < R; r++) {
    const w = (weights === null ? 1 : weights[r]) / total;
    loss -= w * Math.log(Math.max(grad[r * V + targets[r]], SMALLEST_FLOAT32));
    grad[r * V + targets[r]] -= 1;
    for (let j = r * V; j < (r + 1) * V; j++) grad[j] *= w;
  }
  return { loss, grad };
}

/**
 * The loss at `rows` (flat positions, each predicting targets[r], weighted
 * by weights[r] or all alike) and the gradient of every parameter.
 * @param {Workspace} [work] the arrays to write into, made with the
 *   parameters (a new one when absent); the gradients are its arrays,
 *   overwritten by the next call with it
 * @returns {{ loss: number, grads: Record<string, Float32Array> }}
 */
export function lossAndGradients(attn, shape, params, tokens, batch, n, rows, targets, weights = null, work = new Workspace(shape, batch, n, params)) {
  const { layers, heads, dModel: d, dHead: dk, vocabSize: V } = shape;
  const hk = heads * dk;
  const total = batch * n;
  const pass = forwardPass(attn, shape, params, tokens, batch, n, { work });
  const logits = logitsAt(attn, shape, params, pass, rows);
  const { loss, grad } = crossEntropy(attn, logits, targets, weights, { inPlace: true });
  const R = rows.length;
  const grads = work.grads;

  // Unembedding: d unembed = x_L[rows]^T dlogits; d x_L[rows] = dlogits unembed^T.
  // logitsAt left x_L[rows] in work.picked.
  const picked = view(work.picked, R * d);
  const dLogits = new Matrix(R, V, grad);
  attn.matmul(new Matrix(d, R, transposeInto(view(work.pickedT, d * R), picked, R, d)), dLogits, { out: grads.unembed });
  const dPicked = attn.matmul(dLogits, new Matrix(V, d, transposeInto(work.unembedT, params.unembed, d, V)), { out: view(work.dPicked, R * d) }).data;
  let dx = work.dx.fill(0);
  for (let r = 0; r < R; r++) addRow(dx, rows[r] * d, dPicked, r * d, d);

  const backwardOptions = { batch, heads, nq: n, nk: n, dk, dv: dk, causal: true, layout: 'bshd', lse: null, out: work.dqkv };
  let next = work.next;
  const wT = new Matrix(hk, d, work.wT);
  for (let l = layers - 1; l >= 0; l--) {
    const { q, k, v, z, lse } = pass.layers[l];
    const x = pass.xs[l];
    const DX = new Matrix(total, d, dx);
    // x_{l+1} = x_l + z wo: the residual passes dx straight through.
    attn.matmul(new Matrix(hk, total, transposeInto(work.zT, z, total, hk)), DX, { out: grads[`layers.${l}.wo`] });
    const dz = attn.matmul(DX, new Matrix(d, hk, transposeInto(work.wT, params[`layers.${l}.wo`], hk, d)), { out: work.dz }).data;
    backwardOptions.lse = lse;
    const g = attn.sdpaBackward(q, k, v, z, dz, backwardOptions);
    const XT = new Matrix(d, total, transposeInto(work.xT, x, total, d));
    next.set(dx);
    for (const [w, dw] of [['wq', g.dq], ['wk', g.dk], ['wv', g.dv]]) {
      const name = `layers.${l}.${w}`;
      const D = new Matrix(total, hk, dw);
      attn.matmul(XT, D, { out: grads[name] });
      addRow(next, 0, attn.matmul(D, new Matrix(hk, d, transposeInto(wT.data, params[name], d, hk)), { out: work.product }).data, 0, next.length);
    }
    [dx, next] = [next, dx];
  }

  // Embeddings: scatter-add by token id; positions sum over the batch.
  const dEmbed = grads.embed.fill(0);
  const dPosition = grads.position.fill(0);
  for (let r = 0; r < total; r++) {
    addRow(dEmbed, tokens[r] * d, dx, r * d, d);
    addRow(dPosition, (r % n) * d, dx, r * d, d);
  }
  return { loss, grads };
}
