// attention.js (core) - the Attention class: the public calls. Each checks
// its arguments by the rules of core/options.js, assembled by core/calls.js
// (errors name the argument and the expected shape), hands one checked call to the wasm instance
// (core/instance.js) and wraps what comes back.

import * as block from './block.js';
import { float16ToFloat32, float32ToFloat16, isFloat16 } from './float16.js';
import { KVCache } from './kvcache.js';
import { Instance } from './instance.js';
import { Matrix, describe, toMatrix } from './matrix.js';
import { isTensor, tensorCall, tensorResult } from './tensor.js';
import {
  checkFlat, checkGradsOut, checkMatrixOut, checkOutputLike, newCall, projections, readFlatMasks, readMatrixMasks, readSdpaShape, readShared,
  sdpaCall,
} from './calls.js';
import { WINDOW_MAX, checkBool, checkCacheOptions, checkDtype, checkFinite, checkKeys, checkLengths, checkRope } from './options.js';

/** The attention API over one wasm instance. Make one with loadAttention(). */
export class Attention {
  #wasm;
  #call = newCall(); // reused by sdpa(), the hot path: no object per call
  #callBusy = false; // while an sdpa() reads its options (a getter may call sdpa() again)

  /** @internal use loadAttention() */
  constructor(instance) {
    this.#wasm = new Instance(instance);
  }

  /** True when a SIMD build is running (SIMD128 or relaxed SIMD). */
  get simd() {
    return this.#wasm.simd;
  }

  /**
   * The running build: 'relaxed-simd' (fused multiply-add where the CPU has
   * it: results may differ in the last bits between machines), 'simd128' or
   * 'scalar' (the same bits on every engine).
   * @returns {'relaxed-simd' | 'simd128' | 'scalar'}
   */
  get isa() {
    return this.#wasm.isa;
  }

  /** The instance's WebAssembly.Memory. */
  get memory() {
    return this.#wasm.memory;
  }

  /** Frees the instance's memory; every later call throws. */
  dispose() {
    this.#wasm.dispose();
  }

  /** dispose(), for `using attn = await loadAttention()`. */
  [Symbol.dispose]() {
    this.dispose();
  }

  /**
   * Scaled dot-product attention of one head.
   * q (nq, dk), k (nk, dk), v (nk, dv); mask and bias (nq, nk).
   */
  attention(q, k, v, options = {}) {
    this.#wasm.live();
    const half = halfMatrices(q, k, v, options);
    if (half !== null) return this.#attentionHalf(half, options);
    const c = matrixCall(q, k, v, options, 'attention');
    c.steps = checkBool(options.steps, 'attention: steps');
    const { nq, nk, dv } = c;
    const r = this.#wasm.sdpa(c);
    if (!c.steps) return { output: new Matrix(nq, dv, r) };
    return {
      output: new Matrix(nq, dv, r.output), scores: new Matrix(nq, nk, r.scores), scaled: new Matrix(nq, nk, r.scaled),
      logits: new Matrix(nq, nk, r.logits), weights: new Matrix(nq, nk, r.weights),
    };
  }

  // attention over float16 matrices, as sdpa over float16 tensors: the
  // values widened to float32, computed in float32, the output rounded to
  // float16 in q's array type; steps stay float32.
  #attentionHalf({ q, k, v, bias, like }, options) {
    const r = this.attention(q, k, v, { ...options, dtype: undefined, bias });
    const { rows, cols, data } = r.output;
    return { ...r, output: { rows, cols, data: float32ToFloat16(data, like) } };
  }

  /**
   * The fast path over flat Float32Arrays, layout 'bhsd' (PyTorch, default)
   * or 'bshd': q (batch, heads, nq, dk), k (batch, kvHeads, nk, dk),
   * v (batch, kvHeads, nk, dv).
   * @returns {Float32Array | object} (batch, heads, nq, dv); with steps or
   *   stats an object { output, scores?, scaled?, logits?, weights?, lse? }
   */
  sdpa(q, k, v, options) {
    this.#wasm.live();
    if (isTensor(q)) {
      const t = tensorCall(q, k, v, options ?? {});
      return tensorResult(this.sdpa(t.q, t.k, t.v, t.options), t.dims, t.options);
    }
    if (!(q instanceof Float32Array) && options != null && isFloat16(q, options.dtype)) return this.#sdpaHalf(q, k, v, options);
    if (options != null && options.dtype != null && checkDtype(options.dtype, 'sdpa: dtype') === 'float16') {
      throw new TypeError(`sdpa: with dtype 'float16', q must be a Float16Array or a Uint16Array of float16 bits, got ${describe(q)}`);
    }
    if (q instanceof Uint16Array) {
      throw new TypeError('sdpa: q must be a Float32Array, got a Uint16Array; for float16 bits pass dtype: \'float16\' (float32ToFloat16 converts)');
    }
    // The shared call object is filled while the options are read; a getter
    // that calls sdpa() again gets a call object of its own.
    const reentered = this.#callBusy;
    this.#callBusy = true;
    let c;
    try {
      c = sdpaCall(reentered ? newCall() : this.#call, q, k, v, options);
    } finally {
      this.#callBusy = reentered;
    }
    if (c.out !== undefined) this.#wasm.refuseOwnMemory(c.out, 'sdpa: out');
    return this.#wasm.sdpa(c);
  }

  // sdpa over float16 tensors: converted to float32 on the way in, computed
  // in float32, the output rounded back to float16 (nearest, ties to even).
  #sdpaHalf(q, k, v, options) {
    const dtype = checkDtype(options.dtype, 'sdpa: dtype');
    const half = (x, what) => {
      if (!isFloat16(x, dtype)) {
        throw new TypeError(`sdpa: ${what} must be float16 like q (a ${q.constructor.name}${dtype === 'float16' ? ' with dtype \'float16\'' : ''}), got ${describe(x)}`);
      }
      return float16ToFloat32(x);
    };
    const o = { ...options, dtype: undefined, out: undefined };
    if (options.bias != null) {
      o.bias = options.bias.shape !== undefined && !ArrayBuffer.isView(options.bias)
        ? { data: half(options.bias.data, 'bias.data'), shape: options.bias.shape }
        : half(options.bias, 'bias');
    }
    const c = sdpaCall(newCall(), half(q, 'q'), half(k, 'k'), half(v, 'v'), o);
    const out = options.out, oLen = c.batch * c.heads * c.nq * c.dv;
    if (out != null) {
      if (!isFloat16(out, dtype)) throw new TypeError(`sdpa: out must be float16 like q, got ${describe(out)}`);
      if (out.length < oLen) throw new RangeError(`sdpa: out has ${out.length} values, needs ${oLen}`);
      this.#wasm.refuseOwnMemory(out, 'sdpa: out');
    }
    const r = this.#wasm.sdpa(c);
    const output = float32ToFloat16(r instanceof Float32Array ? r : r.output, q);
    if (out != null) out.set(output);
    if (r instanceof Float32Array) return out ?? output;
    return { ...r, output: out ?? output };
  }

  /**
   * Multi-head attention with projections, as torch.nn.MultiheadAttention does
   * it: Q = x wq (n, heads*dk), K = c wk, V = c wv (m, kvHeads*dk / kvHeads*dv),
   * c = context ?? x; heads concatenated in order, then times wo when given.
   */
  multiHeadAttention(x, options) {
    this.#wasm.live();
    const name = 'multiHeadAttention';
    if (options?.cache != null) return this.#multiHeadCached(x, options, name);
    const { c, X, C, WQ, WK, WV, WO } = layerCall(x, options, name);
    c.steps = checkBool(options.steps, `${name}: steps`);
    const { heads, nq: n, nk: m, dv, steps } = c;
    // The projections are (n, heads * d): the bshd layout, read in place.
    c.q = this.matmul(X, WQ).data;
    c.k = this.matmul(C, WK).data;
    c.v = this.matmul(C, WV).data;
    const r = this.#wasm.sdpa(c);
    const concat = new Matrix(n, heads * dv, steps ? r.output : r);
    const result = { output: WO ? this.matmul(concat, WO) : concat };
    if (steps) {
      const perHead = (flat) => Array.from({ length: heads }, (_, h) => new Matrix(n, m, flat.slice(h * n * m, (h + 1) * n * m)));
      result.scores = perHead(r.scores);
      result.scaled = perHead(r.scaled);
      result.logits = perHead(r.logits);
      result.weights = perHead(r.weights);
    }
    return result;
  }

  // multiHeadAttention with a KV cache: this step's keys and values (x wk,
  // x wv) are appended, then the queries (x wq) attend every held key at
  // their positions, the cache's last n (RoPE turns keys at append and
  // queries at attend, the cache's rule). The projections are (n, heads * d):
  // the bshd layout, handed over as they are to a 'bshd' cache and
  // transposed for a 'bhsd' one.
  #multiHeadCached(x, options, name) {
    const { cache, ...rest } = options;
    if (!(cache instanceof KVCache)) {
      throw new TypeError(`${name}: cache must be a KVCache from this instance's kvCache(), got ${describe(cache)}`);
    }
    for (const key of ['context', 'mask', 'bias', 'queryOffset', 'kvLengths']) {
      if (rest[key] != null) throw new TypeError(`${name}: ${key} cannot be given with cache (the cache holds the keys, and its length places the queries)`);
    }
    if (cache.batch !== 1) throw new RangeError(`${name}: cache must have batch 1 (x is one sequence), got batch ${cache.batch}`);
    const kvHeads = rest.kvHeads ?? cache.kvHeads;
    if (kvHeads !== cache.kvHeads) throw new RangeError(`${name}: kvHeads is ${kvHeads} but the cache holds ${cache.kvHeads} kv heads`);
    const { c, X, WQ, WK, WV, WO } = layerCall(x, { ...rest, kvHeads }, name);
    if (c.dk !== cache.dk || c.dv !== cache.dv) {
      throw new RangeError(`${name}: the projections give dk ${c.dk} and dv ${c.dv}, the cache holds dk ${cache.dk} and dv ${cache.dv}`);
    }
    const { heads, nq: n } = c;
    const steps = checkBool(rest.steps, `${name}: steps`);
    const bshd = cache.layout === 'bshd';
    const heads1st = (m, h, d) => (bshd ? m.data : toHeads(m.data, n, h, d));
    const rope = rest.rope ?? null;
    cache.append(heads1st(this.matmul(X, WK), kvHeads, c.dk), heads1st(this.matmul(X, WV), kvHeads, c.dv), { rope });
    const attend = { heads, rope, steps };
    for (const key of ['causal', 'scale', 'window', 'softcap', 'sinks', 'alibi']) if (rest[key] != null) attend[key] = rest[key];
    const r = cache.attend(heads1st(this.matmul(X, WQ), heads, c.dk), attend);
    const flat = steps ? r.output : r;
    const concat = new Matrix(n, heads * c.dv, bshd ? flat : fromHeads(flat, n, heads, c.dv));
    const result = { output: WO ? this.matmul(concat, WO) : concat };
    if (steps) {
      const m = cache.length;
      const perHead = (all) => Array.from({ length: heads }, (_, h) => new Matrix(n, m, all.slice(h * n * m, (h + 1) * n * m)));
      for (const key of ['scores', 'scaled', 'logits', 'weights']) result[key] = perHead(r[key]);
    }
    return result;
  }

  /**
   * A key/value cache in wasm memory: append keys and values token by token,
   * attend over them in place (no copy of K and V per call).
   * @param {{ batch?: number, kvHeads?: number, dk: number, dv?: number, capacity: number, layout?: 'bhsd' | 'bshd', dtype?: 'float32' | 'float16' | 'int8' }} options
   * @returns {KVCache}
   */
  kvCache(options) {
    this.#wasm.live();
    return new KVCache(this.#wasm, checkCacheOptions(options));
  }

  /**
   * a (m, k) times b (k, n), float32; with transposeB, b is (n, k) and a
   * times its transpose is computed. bias (n values) is added to every
   * row. options.out: a Matrix (m, n) or a Float32Array of m * n values to
   * write the product into (it may hold a's or b's data); then the result
   * is that Matrix, or a Matrix over that array.
   */
  matmul(a, b, options) {
    this.#wasm.live();
    return block.matmul(this.#wasm, a, b, options);
  }

  /**
   * Gradients of matmul(a, b, { transposeB, bias }) from dOut (m, n): da
   * (a's shape), db (b's shape) and, with bias: true, dbias (n values),
   * else null.
   */
  matmulBackward(a, b, dOut, options) {
    this.#wasm.live();
    return block.matmulBackward(this.#wasm, a, b, dOut, options);
  }

  /**
   * Each row of x normalized over its cols, as PyTorch's layer_norm (biased
   * variance): (x - mean) / sqrt(var + eps) * gamma + beta; gamma and beta
   * (cols values each) default to 1 and 0, eps to 1e-5. options.out as
   * matmul's (it may be x's data).
   */
  layerNorm(x, options) {
    this.#wasm.live();
    return block.layerNorm(this.#wasm, x, options);
  }

  /** Gradients of layerNorm from dOut (x's shape): { dx, dgamma, dbeta } (the last two Float32Arrays of cols values). */
  layerNormBackward(x, dOut, options) {
    this.#wasm.live();
    return block.layerNormBackward(this.#wasm, x, dOut, options);
  }

  /** Each row of x over its cols as PyTorch's rms_norm: x / sqrt(mean(x^2) + eps) * gamma; eps defaults to 1e-6. */
  rmsNorm(x, options) {
    this.#wasm.live();
    return block.rmsNorm(this.#wasm, x, options);
  }

  /** Gradients of rmsNorm from dOut (x's shape): { dx, dgamma }. */
  rmsNormBackward(x, dOut, options) {
    this.#wasm.live();
    return block.rmsNormBackward(this.#wasm, x, dOut, options);
  }

  /**
   * GELU elementwise, as PyTorch names its forms: approximate 'none' (the
   * default) is x Phi(x) with the exact normal CDF, 'tanh' the tanh form.
   * options.out as matmul's (it may be x's data).
   */
  gelu(x, options) {
    this.#wasm.live();
    return block.gelu(this.#wasm, x, options);
  }

  /** dOut times GELU's derivative at x (x's shape). */
  geluBackward(x, dOut, options) {
    this.#wasm.live();
    return block.geluBackward(this.#wasm, x, dOut, options);
  }

  /**
   * Row-wise softmax; -Infinity entries weigh 0, a row of only -Infinity
   * gives 0. options.out: a Matrix of x's shape or a Float32Array of as many
   * values to write it into (it may be x's data), as matmul's out.
   */
  softmax(x, options) {
    this.#wasm.live();
    const X = toMatrix(x, 'softmax: x');
    const out = options == null ? null : checkMatrixOut(options, 'softmax', X.rows, X.cols);
    if (out === null) return new Matrix(X.rows, X.cols, this.#wasm.softmax(X));
    this.#wasm.refuseOwnMemory(out.data, 'softmax: out');
    this.#wasm.softmax(X, out.data);
    return out;
  }

  /**
   * x (n, d) with its rows turned by RoPE as the kernels turn q and k: row i
   * at position `position` + i (default 0). With `heads`, x holds that many
   * heads of n / heads rows each ((heads, n / heads, d), as q or k of one
   * batch entry), and row i of every head is at position + i. A new Matrix;
   * the same bits the attention calls use.
   */
  rope(x, options = {}) {
    this.#wasm.live();
    const X = toMatrix(x, 'rope: x');
    checkKeys(options, 'rope');
    const { position = 0, heads = 1, ...settings } = options;
    if (typeof heads !== 'number') throw new TypeError(`rope: heads must be a positive integer dividing x's ${X.rows} rows, got ${describe(heads)}`);
    if (!Number.isInteger(heads) || heads < 1 || X.rows % heads !== 0) {
      throw new RangeError(`rope: heads must be a positive integer dividing x's ${X.rows} rows, got ${heads}`);
    }
    const n = X.rows / heads;
    if (typeof position !== 'number') throw new TypeError(`rope: position must be an integer, got ${describe(position)}`);
    const last = WINDOW_MAX - Math.max(n - 1, 0);
    if (!Number.isInteger(position) || position < -WINDOW_MAX || position > last) {
      throw new RangeError(`rope: position must be an integer from ${-WINDOW_MAX} to ${last} (row ${Math.max(n - 1, 0)}'s position must fit int32), got ${position}`);
    }
    return new Matrix(X.rows, X.cols, this.#wasm.rope(X, position, checkRope(settings, 'rope', X.cols), heads));
  }

  /**
   * Gradients of attention() for one head, given dOutput = dL/d(output)
   * (nq, dv): { dq, dk, dv } as Matrix objects, and dbias (nq, nk) when a
   * bias was given. PyTorch: autograd of scaled_dot_product_attention.
   */
  attentionBackward(q, k, v, dOutput, options = {}) {
    this.#wasm.live();
    const name = 'attentionBackward';
    const c = matrixCall(q, k, v, options, name);
    const { nq, nk, dk, dv } = c;
    c.dout = toMatrix(dOutput, `${name}: dOutput`, nq, dv).data;
    c.out = null; c.lse = null; c.dbias = c.bias !== null;
    const g = this.#wasm.backward(c);
    const result = { dq: new Matrix(nq, dk, g.dq), dk: new Matrix(nk, dk, g.dk), dv: new Matrix(nk, dv, g.dv) };
    if (c.bias) result.dbias = new Matrix(nq, nk, g.dbias);
    if (c.sinks) result.dsinks = g.dsinks;
    return result;
  }

  /**
   * Gradients of sdpa() over flat arrays in its layout, given the forward's
   * output (or null) and dOutput (like the output): { dq, dk, dv } like q, k,
   * v (a kv head sums the gradients of its query heads), and dbias (like the
   * bias, summed over its broadcast dims) when a bias was given.
   * options.lse (batch, heads, nq), from sdpa({ stats: true }), saves a pass;
   * options.out { dq?, dk?, dv? }: Float32Arrays (at least as long as q, k, v)
   * the gradients are written into and returned as, instead of new arrays.
   */
  sdpaBackward(q, k, v, output, dOutput, options) {
    this.#wasm.live();
    const name = 'sdpaBackward';
    if (options === null || typeof options !== 'object') {
      throw new TypeError(`${name}: options must be an object with nq, nk, dk, dv, got ${describe(options)}`);
    }
    checkKeys(options, name);
    const c = newCall();
    readSdpaShape(c, q, k, v, options, name);
    if (output != null) checkOutputLike(output, c, name, 'output');
    checkOutputLike(dOutput, c, name, 'dOutput');
    const { lse } = options;
    if (lse != null) {
      checkFlat(lse, Float32Array, `${name}: lse`, [c.batch, c.heads, c.nq], '(batch, heads, nq)');
      checkFinite(lse, `${name}: lse`, true);
    }
    readFlatMasks(c, options, name);
    readShared(c, options, name, c.batch);
    c.kvLengths = options.kvLengths == null ? null : checkLengths(options.kvLengths, `${name}: kvLengths`, c.batch, c.nk);
    c.gradsOut = checkGradsOut(options.out, c, name);
    for (const key of ['dq', 'dk', 'dv']) this.#wasm.refuseOwnMemory(c.gradsOut?.[key], `${name}: out.${key}`);
    c.out = output ?? null; c.dout = dOutput; c.lse = lse ?? null; c.dbias = c.bias !== null;
    return this.#wasm.backward(c);
  }

  /**
   * Gradients of multiHeadAttention(x, options) given dOutput (like its
   * output): { dx, dwq, dwk, dwv } as Matrix objects, dwo when options.wo was
   * given, and dcontext (the paths through K and V) for cross-attention.
   */
  multiHeadAttentionBackward(x, dOutput, options) {
    this.#wasm.live();
    const name = 'multiHeadAttentionBackward';
    const { c, X, C, WQ, WK, WV, WO } = layerCall(x, options, name);
    const { heads, kvHeads, nq: n, nk: m, dk, dv } = c;
    const dO = toMatrix(dOutput, `${name}: dOutput`, n, WO ? WO.cols : heads * dv);
    c.stats = true;
    // The projections are (n, heads * d): the bshd layout, read in place,
    // and the gradients come back in it: dq is dL/dQ as a (n, heads * dk) matrix.
    c.q = this.matmul(X, WQ).data;
    c.k = this.matmul(C, WK).data;
    c.v = this.matmul(C, WV).data;
    const spec = { ...c }; // the instance lets go of the call's arrays when it returns
    const forward = this.#wasm.sdpa(c);
    const concat = new Matrix(n, heads * dv, forward.output);
    const dConcat = WO ? this.matmul(dO, transpose(WO)) : dO;
    const g = this.#wasm.backward({ ...spec, out: forward.output, dout: dConcat.data, lse: forward.lse, dbias: false });
    const dQ = new Matrix(n, heads * dk, g.dq), dK = new Matrix(m, kvHeads * dk, g.dk), dV = new Matrix(m, kvHeads * dv, g.dv);
    const Xt = transpose(X), Ct = options.context == null ? Xt : transpose(C);
    const result = { dx: this.matmul(dQ, transpose(WQ)), dwq: this.matmul(Xt, dQ), dwk: this.matmul(Ct, dK), dwv: this.matmul(Ct, dV) };
    if (WO) result.dwo = this.matmul(transpose(concat), dO);
    if (spec.sinks) result.dsinks = g.dsinks;
    const dc = addInto(this.matmul(dK, transpose(WK)), this.matmul(dV, transpose(WV)));
    if (options.context == null) addInto(result.dx, dc);
    else result.dcontext = dc;
    return result;
  }
}

// A one-head call over matrices (attention, attentionBackward), checked.
// attention()'s float16 operands: null when the call is float32 (no dtype
// and no Float16Array data); else q, k, v and bias as float32 matrices, and
// q's data to give the output its type. float16 operands are
// { rows, cols, data } with data a Float16Array, or a Uint16Array of float16
// bits with dtype: 'float16'.
function halfMatrices(q, k, v, options) {
  if (options === null || typeof options !== 'object') return null; // matrixCall says what is wrong
  const dtype = checkDtype(options.dtype, 'attention: dtype');
  const qData = q?.data;
  if (!isFloat16(qData, dtype)) {
    if (dtype === 'float16') {
      throw new TypeError(`attention: with dtype 'float16', q must be { rows, cols, data } with data a Uint16Array of float16 bits or a Float16Array, got ${describe(q)}`);
    }
    if (qData instanceof Uint16Array) {
      throw new TypeError('attention: q.data is a Uint16Array; for float16 bits pass dtype: \'float16\' (float32ToFloat16 converts), else use a Float32Array');
    }
    return null;
  }
  const widen = (x, what) => {
    if (x === null || typeof x !== 'object' || !isFloat16(x.data, dtype)) {
      throw new TypeError(`attention: ${what} must be float16 like q ({ rows, cols, data } with data a ${qData.constructor.name}), got ${describe(x?.data ?? x)}`);
    }
    return { rows: x.rows, cols: x.cols, data: float16ToFloat32(x.data) };
  };
  return {
    q: widen(q, 'q'), k: widen(k, 'k'), v: widen(v, 'v'),
    bias: options.bias == null ? options.bias : widen(options.bias, 'bias'),
    like: qData,
  };
}

function matrixCall(q, k, v, options, name) {
  checkKeys(options, name);
  const Q = toMatrix(q, `${name}: q`);
  const K = toMatrix(k, `${name}: k`, undefined, Q.cols);
  const V = toMatrix(v, `${name}: v`, K.rows);
  const c = newCall();
  c.q = Q.data; c.k = K.data; c.v = V.data;
  c.nq = Q.rows; c.nk = K.rows; c.dk = Q.cols; c.dv = V.cols;
  readMatrixMasks(c, options, name);
  readShared(c, options, name);
  return c;
}

// A multi-head layer's call (multiHeadAttention and its backward), checked,
// with its matrices; q, k and v are the projections, made by the caller.
function layerCall(x, options, name) {
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`${name}: options must be an object with wq, wk, wv, heads, got ${describe(options)}`);
  }
  checkKeys(options, name);
  const p = projections(x, options, name);
  const c = newCall();
  c.heads = p.heads; c.kvHeads = p.kvHeads; c.nq = p.X.rows; c.nk = p.C.rows; c.dk = p.dk; c.dv = p.dv;
  c.layout = 'bshd';
  readMatrixMasks(c, options, name);
  readShared(c, options, name);
  return { c, ...p };
}

// (n, heads, d) -> (heads, n, d), and back.
function toHeads(data, n, heads, d) {
  const out = new Float32Array(data.length);
  for (let i = 0; i < n; i++) for (let h = 0; h < heads; h++) out.set(data.subarray((i * heads + h) * d, (i * heads + h + 1) * d), (h * n + i) * d);
  return out;
}
function fromHeads(data, n, heads, d) {
  const out = new Float32Array(data.length);
  for (let h = 0; h < heads; h++) for (let i = 0; i < n; i++) out.set(data.subarray((h * n + i) * d, (h * n + i + 1) * d), (i * heads + h) * d);
  return out;
}

function transpose(a) {
  const t = new Float32Array(a.rows * a.cols);
  for (let i = 0; i < a.rows; i++) for (let j = 0; j < a.cols; j++) t[j * a.rows + i] = a.data[i * a.cols + j];
  return new Matrix(a.cols, a.rows, t);
}

// a += b, elementwise, for Matrix objects of the same shape; returns a.
function addInto(a, b) {
  for (let i = 0; i < a.data.length; i++) a.data[i] += b.data[i];
  return a;
}
