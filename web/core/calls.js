// calls.js - a whole call assembled from checked options: the shapes of q,
// k, v and the output in either layout, masks and biases broadcast
// numpy-style, a multi-head layer's projections, a KV cache's append and
// attend, all into the one call object core/instance.js takes (newCall).
// Each option is checked by its rule in core/options.js. Pure: no wasm, no DOM.

import { Matrix, checkSize, describe, toMask, toMatrix } from './matrix.js';
import {
  WINDOW_MAX, checkAlibi, checkBool, checkCount, checkKeys, checkLayout, checkLengths, checkOffset, checkRope, checkScale,
  checkSinks, checkSoftcap, checkWindow, isCount,
} from './options.js';

// ---- shapes, masks and biases ------------------------------------------------

/** A flat Type array of exactly dims' product values; `shape` names the dims for messages. */
export function checkFlat(x, Type, name, dims, shape) {
  const length = dims.reduce((a, b) => a * b, 1);
  if (!(x instanceof Type)) {
    throw new TypeError(`${name} must be a ${Type.name} of ${length} values ${shape} = (${dims.join(', ')}), got ${describe(x)}`);
  }
  if (x.length !== length) {
    throw new RangeError(`${name} has ${x.length} values, expected ${length} for ${shape} = (${dims.join(', ')})`);
  }
}

/** A flat (nq, nk) mask or bias, broadcast over batch and heads. */
export function flatBcast(data, nk) {
  return { data, strides: [0, 0, nk], cols: nk };
}

/**
 * A mask (Uint8Array) or bias (Float32Array): flat (nq, nk), or
 * { data, shape } with 2 to 4 dims broadcast numpy-style (right aligned,
 * size-1 dims repeat) to dims = [batch, heads, nq, nk]; a last dim shorter
 * than nk leaves the keys past it not allowed. Returns { data, strides, cols }
 * with strides (batch, head, row) in elements, 0 where broadcast. The shape
 * is read once into a plain array, so what is checked is what is used.
 */
export function checkBcast(value, Type, name, dims) {
  const [, , nq, nk] = dims;
  if (value instanceof Type || !(value !== null && typeof value === 'object' && 'shape' in value)) {
    checkFlat(value, Type, name, [nq, nk], '(nq, nk) (or pass { data, shape } to broadcast)');
    return flatBcast(value, nk);
  }
  const { data } = value;
  const given = value.shape;
  if (!Array.isArray(given) || given.length < 2 || given.length > 4) {
    throw new TypeError(`${name}.shape must be an array of 2 to 4 dims broadcastable to (batch, heads, nq, nk) = (${dims.join(', ')}), got ${describe(given)}`);
  }
  const shape = Array.from(given);
  for (const d of shape) {
    if (typeof d !== 'number' || !Number.isInteger(d) || d < 1) throw new RangeError(`${name}.shape must hold positive integers, got [${shape.join(', ')}]`);
  }
  const full = [1, 1, 1, 1];
  for (let i = 0; i < shape.length; i++) full[4 - shape.length + i] = shape[i];
  for (let i = 0; i < 3; i++) {
    if (full[i] !== 1 && full[i] !== dims[i]) {
      throw new RangeError(`${name}.shape [${shape.join(', ')}] does not broadcast to (batch, heads, nq, nk) = (${dims.join(', ')}): each dim must be 1 or equal, the last at most nk`);
    }
  }
  if (full[3] > nk) {
    throw new RangeError(`${name}.shape [${shape.join(', ')}] does not broadcast to (batch, heads, nq, nk) = (${dims.join(', ')}): the last dim is longer than nk`);
  }
  const length = full[0] * full[1] * full[2] * full[3];
  if (!(data instanceof Type)) throw new TypeError(`${name}.data must be a ${Type.name} of ${length} values for shape [${shape.join(', ')}], got ${describe(data)}`);
  if (data.length !== length) throw new RangeError(`${name}.data has ${data.length} values, expected ${length} for shape [${shape.join(', ')}]`);
  const rowStride = full[3], headStride = full[2] * rowStride, batchStride = full[1] * headStride;
  return {
    data,
    strides: [full[0] === 1 ? 0 : batchStride, full[1] === 1 ? 0 : headStride, full[2] === 1 ? 0 : rowStride],
    cols: full[3],
  };
}


// ---- whole calls ---------------------------------------------------------------

/**
 * What the wasm side takes for one call (core/instance.js), always made
 * here so every call site gives it the same object shape (V8 then keeps its
 * property loads monomorphic).
 */
export function newCall() {
  return {
    q: null, k: null, v: null, batch: 1, heads: 1, kvHeads: 1, nq: 0, nk: 0, dk: 0, dv: 0, layout: 'bhsd',
    mask: null, bias: null, scale: 0, causal: false, softcap: 0, window: null, queryOffset: 0, queryOffsets: null,
    kvLengths: null, steps: false, stats: false, out: undefined, gradsOut: null,
    rope: null, ropeQueries: false, sinks: null, alibi: null, // ropeQueries: k holds turned keys (a cache)
    kAt: undefined, vAt: undefined, kStrides: null, vStrides: null, // a KV cache read in place
  };
}

/**
 * The shared options of a call into `c`: scale (default 1/sqrt(c.dk)),
 * causal, softcap, window, queryOffset, rope, sinks and alibi (sized by
 * c.dk and c.heads). `batch` sizes a per-batch offset.
 */
export function readShared(c, options, fn, batch = 1) {
  c.rope = options.rope == null ? null : checkRope(options.rope, `${fn}: rope`, c.dk);
  c.sinks = options.sinks == null ? null : checkSinks(options.sinks, `${fn}: sinks`, c.heads);
  c.alibi = options.alibi == null ? null : checkAlibi(options.alibi, `${fn}: alibi`, c.heads);
  c.scale = checkScale(options.scale, `${fn}: scale`, c.dk);
  c.causal = checkBool(options.causal, `${fn}: causal`);
  c.softcap = checkSoftcap(options.softcap, `${fn}: softcap`);
  c.window = checkWindow(options.window, `${fn}: window`);
  const offset = checkOffset(options.queryOffset, `${fn}: queryOffset`, batch);
  c.queryOffset = offset.queryOffset;
  c.queryOffsets = offset.queryOffsets;
  // RoPE turns row i at its position queryOffset + i, an int32 in C.
  const last = c.nq > 0 ? c.nq - 1 : 0;
  const most = c.queryOffsets ? Math.max(...c.queryOffsets) : c.queryOffset;
  if (c.rope !== null && most > WINDOW_MAX - last) {
    throw new RangeError(`${fn}: queryOffset: with rope, query row ${last} turns at position ${most} + ${last}, past the int32 range (at most ${WINDOW_MAX})`);
  }
}

/** A matrix call's mask and bias: (nq, nk) matrices, broadcast over batch and heads. */
export function readMatrixMasks(c, options, fn) {
  const { nq, nk } = c;
  c.mask = options.mask == null ? null : flatBcast(toMask(options.mask, `${fn}: mask`, nq, nk), nk);
  c.bias = options.bias == null ? null : flatBcast(toMatrix(options.bias, `${fn}: bias`, nq, nk).data, nk);
}

/** A flat call's mask and bias: (nq, nk) or broadcast { data, shape }. */
export function readFlatMasks(c, options, fn) {
  const dims = [c.batch, c.heads, c.nq, c.nk];
  c.mask = options.mask == null ? null : checkBcast(options.mask, Uint8Array, `${fn}: mask`, dims);
  c.bias = options.bias == null ? null : checkBcast(options.bias, Float32Array, `${fn}: bias`, dims);
}

/** The shapes of q, k, v and the output in words, for a layout. */
export function layoutShapes(layout) {
  return layout === 'bshd'
    ? { q: '(batch, nq, heads, dk)', k: '(batch, nk, kvHeads, dk)', v: '(batch, nk, kvHeads, dv)', out: '(batch, nq, heads, dv)' }
    : { q: '(batch, heads, nq, dk)', k: '(batch, kvHeads, nk, dk)', v: '(batch, kvHeads, nk, dv)', out: '(batch, heads, nq, dv)' };
}

function layoutDims(layout, batch, heads, n, d) {
  return layout === 'bshd' ? [batch, n, heads, d] : [batch, heads, n, d];
}

/**
 * Checks the sizes and tensors of an sdpa-style call (sdpa, sdpaBackward)
 * into `c`: batch, heads, kvHeads, nq, nk, dk, dv, layout, q, k, v.
 * Written for the hot path: the common case is a few comparisons.
 */
export function readSdpaShape(c, q, k, v, options, fn) {
  const { batch = 1, heads = 1, nq, nk, dk, dv } = options;
  const kvHeads = options.kvHeads ?? heads;
  if (!isCount(batch)) checkSize(batch, `${fn}: batch`);
  if (!isCount(heads)) checkSize(heads, `${fn}: heads`);
  if (!isCount(kvHeads)) checkSize(kvHeads, `${fn}: kvHeads`);
  if (!isCount(nq)) checkSize(nq, `${fn}: nq`);
  if (!isCount(nk)) checkSize(nk, `${fn}: nk`);
  if (!isCount(dk)) checkSize(dk, `${fn}: dk`);
  if (!isCount(dv)) checkSize(dv, `${fn}: dv`);
  if (heads % kvHeads !== 0) throw new RangeError(`${fn}: heads (${heads}) must be a multiple of kvHeads (${kvHeads})`);
  const layout = checkLayout(options.layout, `${fn}: layout`);
  if (!(q instanceof Float32Array) || q.length !== batch * heads * nq * dk) {
    checkFlat(q, Float32Array, `${fn}: q`, layoutDims(layout, batch, heads, nq, dk), layoutShapes(layout).q);
  }
  if (!(k instanceof Float32Array) || k.length !== batch * kvHeads * nk * dk) {
    checkFlat(k, Float32Array, `${fn}: k`, layoutDims(layout, batch, kvHeads, nk, dk), layoutShapes(layout).k);
  }
  if (!(v instanceof Float32Array) || v.length !== batch * kvHeads * nk * dv) {
    checkFlat(v, Float32Array, `${fn}: v`, layoutDims(layout, batch, kvHeads, nk, dv), layoutShapes(layout).v);
  }
  c.q = q; c.k = k; c.v = v;
  c.batch = batch; c.heads = heads; c.kvHeads = kvHeads; c.nq = nq; c.nk = nk; c.dk = dk; c.dv = dv; c.layout = layout;
}

/** An output-like flat array of (batch, heads, nq, dv) in c's layout. */
export function checkOutputLike(x, c, fn, what) {
  checkFlat(x, Float32Array, `${fn}: ${what}`, layoutDims(c.layout, c.batch, c.heads, c.nq, c.dv), layoutShapes(c.layout).out);
}

/** `out`: absent, or a Float32Array of at least the output's length. */
export function checkOut(out, c, fn) {
  if (out == null) return undefined;
  const oLen = c.batch * c.heads * c.nq * c.dv;
  const os = layoutShapes(c.layout).out;
  if (!(out instanceof Float32Array)) throw new TypeError(`${fn}: out must be a Float32Array of ${oLen} values ${os}, got ${describe(out)}`);
  if (out.length < oLen) throw new RangeError(`${fn}: out has ${out.length} values, needs ${oLen} for ${os}`);
  return out;
}

/**
 * The options of matmul and softmax, whose one option is `out`, checked:
 * null when out is absent, else the Matrix (rows, cols) to write into (the
 * caller's, or one over its Float32Array of exactly rows * cols values).
 */
export function checkMatrixOut(options, fn, rows, cols) {
  checkKeys(options, fn);
  const out = options.out;
  if (out == null) return null;
  if (out instanceof Matrix) {
    if (out.rows !== rows || out.cols !== cols) throw new RangeError(`${fn}: out must have shape (${rows}, ${cols}), got (${out.rows}, ${out.cols})`);
    return out;
  }
  if (!(out instanceof Float32Array)) {
    throw new TypeError(`${fn}: out must be a Matrix (${rows}, ${cols}) or a Float32Array of ${rows} x ${cols} = ${rows * cols} values, got ${describe(out)}`);
  }
  if (out.length !== rows * cols) throw new RangeError(`${fn}: out has ${out.length} values, needs ${rows} x ${cols} = ${rows * cols} for the result (${rows}, ${cols})`);
  return new Matrix(rows, cols, out);
}

/**
 * sdpaBackward's `out`: absent, or an object { dq?, dk?, dv? } of
 * Float32Arrays, each at least as long as that gradient (like q, k, v).
 * @returns {{ dq?: Float32Array, dk?: Float32Array, dv?: Float32Array } | null}
 */
export function checkGradsOut(out, c, fn) {
  if (out == null) return null;
  if (typeof out !== 'object' || ArrayBuffer.isView(out)) {
    throw new TypeError(`${fn}: out must be an object { dq, dk, dv } of Float32Arrays, got ${describe(out)}`);
  }
  const d = layoutShapes(c.layout);
  const lengths = {
    dq: [c.batch * c.heads * c.nq * c.dk, d.q], dk: [c.batch * c.kvHeads * c.nk * c.dk, d.k], dv: [c.batch * c.kvHeads * c.nk * c.dv, d.v],
  };
  const got = {}; // each read once, so what is checked is what is written
  for (const key in out) {
    if (!(key in lengths)) throw new TypeError(`${fn}: out has an unknown key ${JSON.stringify(key)} (known: dq, dk, dv)`);
    const x = out[key];
    if (x == null) continue;
    const [length, shape] = lengths[key];
    if (!(x instanceof Float32Array)) throw new TypeError(`${fn}: out.${key} must be a Float32Array of ${length} values ${shape}, got ${describe(x)}`);
    if (x.length < length) throw new RangeError(`${fn}: out.${key} has ${x.length} values, needs ${length} for ${shape}`);
    got[key] = x;
  }
  return got;
}

/**
 * A full sdpa call, checked: `options` as Attention#sdpa takes them, into
 * `c` (a newCall(); reused by the hot path). Throws TypeError/RangeError
 * naming the option; nothing is changed in the caller's objects.
 */
export function sdpaCall(c, q, k, v, options, fn = 'sdpa') {
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`${fn}: options must be an object with nq, nk, dk, dv, got ${describe(options)}`);
  }
  checkKeys(options, 'sdpa', fn);
  readSdpaShape(c, q, k, v, options, fn);
  readFlatMasks(c, options, fn);
  readShared(c, options, fn, c.batch);
  c.kvLengths = options.kvLengths == null ? null : checkLengths(options.kvLengths, `${fn}: kvLengths`, c.batch, c.nk);
  c.steps = checkBool(options.steps, `${fn}: steps`);
  c.stats = checkBool(options.stats, `${fn}: stats`);
  c.out = checkOut(options.out, c, fn);
  return c;
}

/**
 * The matrices and sizes of a multi-head layer (multiHeadAttention and its
 * backward), checked in one order so both calls name the same errors.
 */
export function projections(x, options, name) {
  const X = toMatrix(x, `${name}: x`);
  const C = options.context == null ? X : toMatrix(options.context, `${name}: context`);
  const heads = checkCount(options.heads, `${name}: heads`);
  const kvHeads = checkCount(options.kvHeads, `${name}: kvHeads`, heads);
  if (heads % kvHeads !== 0) throw new RangeError(`${name}: heads (${heads}) must be a multiple of kvHeads (${kvHeads})`);
  const WQ = toMatrix(options.wq, `${name}: wq`, X.cols);
  if (WQ.cols % heads !== 0) throw new RangeError(`${name}: wq has ${WQ.cols} columns, which must be heads * dk (a multiple of heads = ${heads})`);
  const dk = WQ.cols / heads;
  const WK = toMatrix(options.wk, `${name}: wk`, C.cols, kvHeads * dk);
  const WV = toMatrix(options.wv, `${name}: wv`, C.cols);
  if (WV.cols % kvHeads !== 0) throw new RangeError(`${name}: wv has ${WV.cols} columns, which must be kvHeads * dv (a multiple of kvHeads = ${kvHeads})`);
  const dv = WV.cols / kvHeads;
  const WO = options.wo == null ? null : toMatrix(options.wo, `${name}: wo`, heads * dv);
  return { X, C, heads, kvHeads, WQ, WK, WV, WO, dk, dv };
}

/**
 * The number of tokens t in an append's k and v to a cache ({ batch,
 * kvHeads, dk, dv, capacity, layout }) holding `held` tokens, checked:
 * Float32Arrays of whole tokens in the cache's layout, within the capacity.
 * The one rule of attn.kvCache's and the pool cache's append.
 */
export function appendTokens(cache, k, v, held) {
  const { batch, kvHeads, dk, dv, capacity, layout } = cache;
  const shape = (d, label) => (layout === 'bshd' ? `(batch, t, kvHeads, ${label}) = (${batch}, t, ${kvHeads}, ${d})` : `(batch, kvHeads, t, ${label}) = (${batch}, ${kvHeads}, t, ${d})`);
  if (!(k instanceof Float32Array)) throw new TypeError(`kvCache.append: k must be a Float32Array ${shape(dk, 'dk')}, got ${describe(k)}`);
  if (!(v instanceof Float32Array)) throw new TypeError(`kvCache.append: v must be a Float32Array ${shape(dv, 'dv')}, got ${describe(v)}`);
  const t = k.length / (batch * kvHeads * dk);
  if (!Number.isInteger(t) || t < 1) throw new RangeError(`kvCache.append: k has ${k.length} values, not a positive multiple of batch * kvHeads * dk = ${batch * kvHeads * dk} for ${shape(dk, 'dk')}`);
  if (v.length !== t * batch * kvHeads * dv) throw new RangeError(`kvCache.append: v has ${v.length} values, expected ${t * batch * kvHeads * dv} for ${shape(dv, 'dv')} with t = ${t} (from k)`);
  if (held + t > capacity) {
    throw new RangeError(`kvCache.append: ${t} more tokens would pass the capacity of ${capacity} (it holds ${held}); the cache is unchanged`);
  }
  return t;
}

/**
 * A KV cache's attend call, checked (the single-instance cache and the
 * pool's): `cache` gives batch, kvHeads, dk, dv and layout, nk is the tokens
 * held. The queries default to the newest tokens: of the cache, or of each
 * batch entry's own keys when kvLengths says how many it holds.
 */
export function attendCall(q, options, cache, nk, fn = 'kvCache.attend') {
  checkKeys(options, 'attend', fn);
  const { batch, kvHeads, dk, dv } = cache;
  if (nk === 0) throw new RangeError(`${fn}: the cache is empty; append keys and values first`);
  const heads = checkCount(options.heads, `${fn}: heads`, kvHeads);
  if (heads % kvHeads !== 0) throw new RangeError(`${fn}: heads (${heads}) must be a multiple of kvHeads (${kvHeads})`);
  const qs = layoutShapes(cache.layout).q;
  if (!(q instanceof Float32Array)) throw new TypeError(`${fn}: q must be a Float32Array ${qs}, got ${describe(q)}`);
  const nq = options.nq == null ? q.length / (batch * heads * dk) : checkCount(options.nq, `${fn}: nq`);
  if (!Number.isInteger(nq) || nq < 1 || q.length !== batch * heads * nq * dk) {
    const expected = options.nq == null ? `a positive multiple of batch * heads * dk = ${batch * heads * dk}` : `batch * heads * nq * dk = ${batch * heads * nq * dk} (nq = ${nq})`;
    throw new RangeError(`${fn}: q has ${q.length} values, expected ${expected} for ${qs}`);
  }
  const c = newCall();
  c.q = q; c.batch = batch; c.heads = heads; c.kvHeads = kvHeads; c.nq = nq; c.nk = nk; c.dk = dk; c.dv = dv;
  c.layout = cache.layout;
  c.out = checkOut(options.out, c, fn);
  readFlatMasks(c, options, fn);
  readShared(c, options, fn, batch);
  c.kvLengths = options.kvLengths == null ? null : checkLengths(options.kvLengths, `${fn}: kvLengths`, batch, nk);
  if (options.queryOffset == null) {
    if (c.kvLengths) c.queryOffsets = Int32Array.from(c.kvLengths, (n) => n - nq);
    else c.queryOffset = nk - nq;
  }
  c.steps = checkBool(options.steps, `${fn}: steps`);
  c.stats = checkBool(options.stats, `${fn}: stats`);
  return c;
}
