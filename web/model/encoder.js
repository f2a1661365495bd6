// encoder.js - the forward and backward pass of a bidirectional transformer
// encoder (BERT's shape, pre-LayerNorm as GPT-2 and most encoders since) over
// the Attention API: every product is Attention#matmul (with its bias and
// transposeB), every norm Attention#layerNorm, the MLP's activation
// Attention#gelu (exact, erf form), the attention Attention#sdpa (no causal
// mask; padding masked by kvLengths) and each backward their *Backward twin.
//
// Shapes, for B sentences padded to n tokens (rows = B*n, d = dModel,
// H = heads, dk = dHead, m = mlp, V = vocabulary):
//   x_0 = embed[tokens] + position[0 .. n)                 (rows, d)
//   per layer l:
//     h   = LayerNorm(x_l; ln1)                             (rows, d)  what W_Q, W_K, W_V multiply
//     q, k, v = h wq, h wk, h wv                            (rows, H*dk) bshd
//     z   = sdpa(q, k, v, kvLengths, scale 1/sqrt(dk))      (rows, H*dk) heads side by side
//     y   = x_l + z wo                                      (rows, d)
//     u   = LayerNorm(y; ln2) w1 + b1                       (rows, m)
//     x_{l+1} = y + gelu(u) w2 + b2                         (rows, d)
//   f = LayerNorm(x_L; final)                               (rows, d)
//   logits = f[rows asked] embed^T + outBias                (R, V)   tied embeddings
//   loss = mean over the R rows of -log softmax(logits)[target]
// No biases on the attention's projections, so a head's queries are exactly
// h times its columns of wq, as the explorer shows them.

import { Matrix } from '../core/matrix.js';
import { crossEntropy } from './transformer.js';

export const LN_EPS = 1e-5;
const GELU = { approximate: 'none' };

/** Parameter names in a fixed order (serialisation, Adam). */
export function encoderParamNames(layers) {
  const names = ['embed', 'position'];
  for (let l = 0; l < layers; l++) {
    for (const w of ['ln1.gamma', 'ln1.beta', 'wq', 'wk', 'wv', 'wo', 'ln2.gamma', 'ln2.beta', 'w1', 'b1', 'w2', 'b2']) names.push(`layers.${l}.${w}`);
  }
  names.push('final.gamma', 'final.beta', 'outBias');
  return names;
}

/** The shape [rows, cols] of each parameter (vectors are [1, length]). */
export function encoderParamShapes({ layers, heads, dModel: d, dHead, mlp, context, vocabSize }) {
  const hk = heads * dHead;
  const shapes = { embed: [vocabSize, d], position: [context, d], 'final.gamma': [1, d], 'final.beta': [1, d], outBias: [1, vocabSize] };
  for (let l = 0; l < layers; l++) {
    const p = `layers.${l}.`;
    Object.assign(shapes, {
      [`${p}ln1.gamma`]: [1, d], [`${p}ln1.beta`]: [1, d],
      [`${p}wq`]: [d, hk], [`${p}wk`]: [d, hk], [`${p}wv`]: [d, hk], [`${p}wo`]: [hk, d],
      [`${p}ln2.gamma`]: [1, d], [`${p}ln2.beta`]: [1, d],
      [`${p}w1`]: [d, mlp], [`${p}b1`]: [1, mlp], [`${p}w2`]: [mlp, d], [`${p}b2`]: [1, d],
    });
  }
  return shapes;
}

const INIT_STD = 0.02;

/**
 * GPT-2's initialisation: weights normal with std 0.02, the two projections
 * that add to the residual stream (wo, w2) 0.02 / sqrt(2 layers) so the
 * stream's variance does not grow with depth; biases 0, gains 1.
 */
export function initEncoderParams(shape, rng) {
  const shapes = encoderParamShapes(shape);
  const params = {};
  for (const name of encoderParamNames(shape.layers)) {
    const [rows, cols] = shapes[name];
    const data = new Float32Array(rows * cols);
    if (name.endsWith('gamma')) data.fill(1);
    else if (!/beta$|\.b[12]$|outBias$/.test(name)) {
      const std = /\.(wo|w2)$/.test(name) ? INIT_STD / Math.sqrt(2 * shape.layers) : INIT_STD;
      const draw = rng.randn(rows * cols);
      for (let i = 0; i < data.length; i++) data[i] = draw[i] * std;
    }
    params[name] = data;
  }
  return params;
}

const mat = (rows, cols, data) => new Matrix(rows, cols, data);

/**
 * The forward pass of B sentences padded to n tokens.
 * @param {import('../attention.js').Attention} attn
 * @param {object} shape { layers, heads, dModel, dHead, mlp }
 * @param {Record<string, Float32Array>} params
 * @param {Int32Array} tokens (B * n) ids
 * @param {Int32Array} kvLengths (B) each sentence's length; keys past it are masked
 * @param {{ steps?: boolean }} [options] steps: keep each layer's attention scores, scaled and weights
 * @returns {object} { B, n, xs: x_0 .. x_L, layers: per layer { h, q, k, v, z, lse, y, hy, u, g, attnOut, mlpOut, steps? }, f }
 */
export function encoderForward(attn, shape, params, tokens, B, n, kvLengths, { steps = false } = {}) {
  const { layers, heads, dModel: d, dHead: dk, mlp } = shape;
  const rows = B * n, hk = heads * dk;
  const { embed, position } = params;
  let x = new Float32Array(rows * d);
  for (let r = 0; r < rows; r++) {
    const e = tokens[r] * d, p = (r % n) * d, o = r * d;
    for (let j = 0; j < d; j++) x[o + j] = embed[e + j] + position[p + j];
  }
  const xs = [x];
  const cache = [];
  const sdpaOptions = { batch: B, heads, nq: n, nk: n, dk, dv: dk, layout: 'bshd', kvLengths, stats: true, steps };
  for (let l = 0; l < layers; l++) {
    const p = (w) => params[`layers.${l}.${w}`];
    const X = mat(rows, d, x);
    const h = attn.layerNorm(X, { gamma: p('ln1.gamma'), beta: p('ln1.beta'), eps: LN_EPS });
    const q = attn.matmul(h, mat(d, hk, p('wq'))).data;
    const k = attn.matmul(h, mat(d, hk, p('wk'))).data;
    const v = attn.matmul(h, mat(d, hk, p('wv'))).data;
    const result = attn.sdpa(q, k, v, sdpaOptions);
    const z = result.output;
    const attnOut = attn.matmul(mat(rows, hk, z), mat(hk, d, p('wo'))).data;
    const y = new Float32Array(rows * d);
    for (let i = 0; i < y.length; i++) y[i] = x[i] + attnOut[i];
    const hy = attn.layerNorm(mat(rows, d, y), { gamma: p('ln2.gamma'), beta: p('ln2.beta'), eps: LN_EPS });
    const u = attn.matmul(hy, mat(d, mlp, p('w1')), { bias: p('b1') });
    const g = attn.gelu(u, GELU);
    const mlpOut = attn.matmul(g, mat(mlp, d, p('w2')), { bias: p('b2') }).data;
    const next = new Float32Array(rows * d);
    for (let i = 0; i < next.length; i++) next[i] = y[i] + mlpOut[i];
    const layer = { h, q, k, v, z, lse: result.lse, y, hy, u, g, attnOut, mlpOut };
    if (steps) layer.steps = { scores: result.scores, scaled: result.scaled, logits: result.logits, weights: result.weights };
    cache.push(layer);
    x = next;
    xs.push(x);
  }
  const f = attn.layerNorm(mat(rows, d, x), { gamma: params['final.gamma'], beta: params['final.beta'], eps: LN_EPS });
  return { B, n, xs, layers: cache, f };
}

/** Logits (R, V) at flat rows of the final LayerNorm'd stream (null: every row). */
export function encoderLogits(attn, shape, params, pass, rows) {
  const d = shape.dModel, V = shape.vocabSize;
  const picked = pickRows(pass.f.data, d, rows);
  return attn.matmul(mat(picked.length / d, d, picked), mat(V, d, params.embed), { transposeB: true, bias: params.outBias });
}

function pickRows(data, d, rows) {
  if (rows === null) return data;
  const out = new Float32Array(rows.length * d);
  for (let r = 0; r < rows.length; r++) out.set(data.subarray(rows[r] * d, rows[r] * d + d), r * d);
  return out;
}

function addInto(target, source) {
  for (let i = 0; i < target.length; i++) target[i] += source[i];
}

/**
 * The masked-LM loss at `rows` (flat positions, each predicting targets[r])
 * and the gradient of every parameter.
 * @returns {{ loss: number, grads: Record<string, Float32Array> }}
 */
export function encoderLossAndGradients(attn, shape, params, tokens, B, n, kvLengths, rows, targets) {
  const { layers, heads, dModel: d, dHead: dk, mlp, vocabSize: V } = shape;
  const total = B * n, hk = heads * dk;
  const pass = encoderForward(attn, shape, params, tokens, B, n, kvLengths);
  const logits = encoderLogits(attn, shape, params, pass, rows);
  const { loss, grad } = crossEntropy(attn, logits, targets, null, { inPlace: true });
  const grads = {};
  const R = rows.length;

  // logits = picked embed^T + outBias: the embedding's first share of its gradient.
  const picked = mat(R, d, pickRows(pass.f.data, d, rows));
  const out = attn.matmulBackward(picked, mat(V, d, params.embed), mat(R, V, grad), { transposeB: true, bias: true });
  const dEmbed = Float32Array.from(out.db.data);
  grads.outBias = Float32Array.from(out.dbias.data ?? out.dbias);
  const dF = new Float32Array(total * d);
  for (let r = 0; r < R; r++) dF.set(out.da.data.subarray(r * d, r * d + d), rows[r] * d);
  const fin = attn.layerNormBackward(mat(total, d, pass.xs[layers]), mat(total, d, dF), { gamma: params['final.gamma'], beta: params['final.beta'], eps: LN_EPS });
  grads['final.gamma'] = vec(fin.dgamma);
  grads['final.beta'] = vec(fin.dbeta);
  let dx = Float32Array.from(fin.dx.data);

  const backwardOptions = { batch: B, heads, nq: n, nk: n, dk, dv: dk, layout: 'bshd', kvLengths, lse: null };
  for (let l = layers - 1; l >= 0; l--) {
    const p = (w) => params[`layers.${l}.${w}`];
    const g = (w, value) => { grads[`layers.${l}.${w}`] = value; };
    const c = pass.layers[l];
    const DX = mat(total, d, dx);
    // x_{l+1} = y + gelu(u) w2 + b2
    const m2 = attn.matmulBackward(c.g, mat(mlp, d, p('w2')), DX, { bias: true });
    g('w2', m2.db.data); g('b2', vec(m2.dbias));
    const du = attn.geluBackward(c.u, m2.da, GELU);
    const m1 = attn.matmulBackward(c.hy, mat(d, mlp, p('w1')), du, { bias: true });
    g('w1', m1.db.data); g('b1', vec(m1.dbias));
    const ln2 = attn.layerNormBackward(mat(total, d, c.y), m1.da, { gamma: p('ln2.gamma'), beta: p('ln2.beta'), eps: LN_EPS });
    g('ln2.gamma', vec(ln2.dgamma)); g('ln2.beta', vec(ln2.dbeta));
    const dy = Float32Array.from(dx);
    addInto(dy, ln2.dx.data);
    // y = x_l + z wo
    const DY = mat(total, d, dy);
    const mo = attn.matmulBackward(mat(total, hk, c.z), mat(hk, d, p('wo')), DY);
    g('wo', mo.db.data);
    backwardOptions.lse = c.lse;
    const s = attn.sdpaBackward(c.q, c.k, c.v, c.z, mo.da.data, backwardOptions);
    const dh = new Float32Array(total * d);
    for (const [w, dw] of [['wq', s.dq], ['wk', s.dk], ['wv', s.dv]]) {
      const mw = attn.matmulBackward(c.h, mat(d, hk, p(w)), mat(total, hk, dw));
      g(w, mw.db.data);
      addInto(dh, mw.da.data);
    }
    const ln1 = attn.layerNormBackward(mat(total, d, pass.xs[l]), mat(total, d, dh), { gamma: p('ln1.gamma'), beta: p('ln1.beta'), eps: LN_EPS });
    g('ln1.gamma', vec(ln1.dgamma)); g('ln1.beta', vec(ln1.dbeta));
    addInto(dy, ln1.dx.data);
    dx = dy;
  }

  // Embeddings: scatter-add by token id (beside the output's share); positions sum over the batch.
  const dPosition = new Float32Array(params.position.length);
  for (let r = 0; r < total; r++) {
    const e = tokens[r] * d, p = (r % n) * d, o = r * d;
    for (let j = 0; j < d; j++) {
      dEmbed[e + j] += dx[o + j];
      dPosition[p + j] += dx[o + j];
    }
  }
  grads.embed = dEmbed;
  grads.position = dPosition;
  return { loss, grads };
}

// A gradient the ops return as a Matrix (1, n) or a Float32Array, as a Float32Array.
function vec(value) {
  return value instanceof Float32Array ? value : value.data;
}
