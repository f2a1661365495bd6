// property-values.js - the element's object-valued properties, `inputs` and
// `mask`: what a page may set, read into the form the element keeps, and
// whether a new value equals the one in force (a framework that sets the same
// value on every render must not make the element recompute). Pure: no DOM.

import { Matrix, toMatrix } from '../core/matrix.js';
import { EDITABLE } from './step-tables.js';

/**
 * The `inputs` a page set, { X?, WQ?, WK?, WV? } of Matrix, { rows, cols,
 * data } or number[][], as Matrix copies; null or undefined is {}. Shapes are
 * checked against the config later, when the element computes.
 * @throws {TypeError | RangeError} naming the property or the matrix
 */
export function readInputs(value) {
  const next = {};
  if (value === null || value === undefined) return next;
  if (typeof value !== 'object') throw new TypeError('inputs must be an object { X?, WQ?, WK?, WV? }');
  for (const [key, m] of Object.entries(value)) {
    if (!EDITABLE.has(key)) throw new RangeError(`inputs: unknown matrix "${key}" (use X, WQ, WK, WV)`);
    if (m === undefined || m === null) continue;
    try {
      next[key] = Matrix.from(m);
    } catch (err) {
      throw new err.constructor(`inputs.${key}: ${err.message}`);
    }
  }
  return next;
}

/** Two { X?, WQ?, WK?, WV? } with the same keys, shapes and values (b's matrices in any form Matrix.from takes). */
export function sameInputs(a, b) {
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((key) => {
    const x = a[key], y = b[key];
    if (y === undefined) return false;
    const yd = Matrix.from(y);
    return x.rows === yd.rows && x.cols === yd.cols && x.data.every((v, i) => Object.is(v, yd.data[i]));
  });
}

/**
 * A keep-mask from boolean[][] (n, n) as Uint8Array (n * n), 1 = may attend.
 * @throws {RangeError} when it is not an array of n arrays of n
 */
export function readMask(value, n) {
  if (!Array.isArray(value) || value.length !== n || value.some((r) => !Array.isArray(r) || r.length !== n)) {
    throw new RangeError(`mask must be boolean[][] of shape (${n}, ${n})`);
  }
  return Uint8Array.from(value.flat(), (x) => (x ? 1 : 0));
}

/** A keep-mask equal to the one in force (null allows every pair, as an all-true mask does). */
export function sameMask(next, current) {
  if (current === null) return !next.includes(0);
  return next.length === current.length && next.every((x, i) => x === current[i]);
}

/** The shapes of X, W_Q, W_K and W_V a config computes with, [rows, cols] each. */
export function inputShapes(config) {
  const { dModel, dk, dv, heads, kvHeads } = config;
  return { X: [config.tokens.length, dModel], WQ: [dModel, heads * dk], WK: [dModel, kvHeads * dk], WV: [dModel, kvHeads * dv] };
}

/**
 * What the random draws and the typed-in numbers belong to: the source of
 * the numbers (a model's key, or null), the seed, the shapes and the
 * embeddings (the tokens when they shape X). A new key draws afresh and
 * drops the edits; a slider drag keeps the key.
 */
export function drawKey(config, sourceKey = null) {
  const byWord = config.embeddings === 'word' || config.positions;
  return JSON.stringify([sourceKey, config.seed, inputShapes(config), config.embeddings, config.positions, byWord ? config.tokens : null]);
}

/**
 * The matrices to compute with, as copies (state hands them out; the cached
 * draws stay as drawn): each a page's own (checked against its shape), else
 * the base's (a model's or the draws), then the typed-in edits, "X:i:j" ->
 * value, written over them.
 * @throws {TypeError | RangeError} when a page's matrix has the wrong shape
 */
export function composeInputs(config, own, base, edits) {
  const shapes = inputShapes(config);
  const inputs = {};
  for (const key of EDITABLE) {
    const m = own[key] ? toMatrix(own[key], `inputs.${key}`, ...shapes[key]) : base[key];
    inputs[key] = new Matrix(m.rows, m.cols, m.data.slice());
  }
  for (const [key, value] of edits) {
    const [name, i, j] = key.split(':');
    inputs[name].data[Number(i) * inputs[name].cols + Number(j)] = value;
  }
  return inputs;
}

/** The element's `state`: every matrix of a computation, one per step (an array of heads when there are several). */
export function stateOf(example, heads) {
  const ex = example;
  const pick = (key) => (heads === 1 ? ex.heads[0][key] : ex.heads.map((h) => h[key]));
  return Object.freeze({
    tokens: [...ex.tokens], X: ex.X, WQ: ex.WQ, WK: ex.WK, WV: ex.WV, Q: ex.Q, K: ex.K, V: ex.V, ...(ex.QR ? { QR: ex.QR, KR: ex.KR } : {}),
    scores: pick('scores'), scaled: pick('scaled'), weights: pick('weights'), output: pick('output'),
    ...(ex.heads[0].logits ? { logits: pick('logits') } : {}),
  });
}
