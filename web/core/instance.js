// instance.js - one wasm instance of the attention module and everything
// that touches its memory: the arena calls borrow, the structs of
// c/attention.h written at the offsets of core/abi.js, the copies in and
// out, and the statuses. Calls arrive checked (core/calls.js); results are
// always copies, never views, so they stay valid after later calls and
// after the memory grows.

import { BACKWARD, CONSTANTS, FORWARD, GRADS, KV, SHAPE, STEPS, perCallLength, writeOptions, writeStrides } from './abi.js';

const { ATTN_ERR_OVERFLOW } = CONSTANTS;

// The exports every call relies on; a module without one is refused when loaded.
const EXPORTS = [
  'memory', 'malloc', 'free', 'attn_isa', 'attn_simd_enabled', 'attn_status_string', 'attn_sdpa', 'attn_sdpa_kv',
  'attn_sdpa_call_scratch_size', 'attn_sdpa_call_scratch_size_with', 'attn_sdpa_backward', 'attn_sdpa_backward_scratch_size',
  'attn_sdpa_backward_scratch_size_with', 'attn_matmul', 'attn_softmax', 'attn_rope', 'attn_kv_write', 'attn_kv_read',
  'attn_matmul_ex', 'attn_matmul_backward', 'attn_layer_norm', 'attn_layer_norm_backward', 'attn_rms_norm', 'attn_rms_norm_backward',
  'attn_gelu', 'attn_gelu_backward',
];


// wasm32 addresses 4 GiB; leave room for the stack, statics and allocator.
export const MAX_ARENA_BYTES = 2 ** 32 - 2 ** 24;
// Arenas above this size are freed after the call that needed them, so one
// huge step call does not pin its memory inside malloc's free lists.
const KEEP_ARENA_BYTES = 2 ** 24;

// The value of attn_isa() for each build.
const ISA_NAMES = ['scalar', 'simd128', 'relaxed-simd'];

// Small copies by hand: a TypedArray set/subarray call costs more in V8
// than the whole attention of a few tokens.
const SMALL_COPY = 64;

function copyIn(heap, src, at) {
  const n = src.length;
  if (n <= SMALL_COPY) {
    for (let i = 0; i < n; i++) heap[at + i] = src[i];
  } else {
    heap.set(src, at);
  }
}

function copyOut(heap, at, dst, n) {
  if (n <= SMALL_COPY) {
    for (let i = 0; i < n; i++) dst[i] = heap[at + i];
  } else {
    dst.set(heap.subarray(at, at + n));
  }
  return dst;
}

/** The wasm side of an Attention: made by it, never by users. */
export class Instance {
  #exports;
  #memory;
  #simd;
  #isa;
  #arena = 0; // pointer into wasm memory
  #arenaBytes = 0;
  #addresses = new Array(10).fill(0);
  #scratchKey = [0, 0, 0, 0, 0, 0, 0, 0, 0]; // nq, nk, dk, dv, heads, kvHeads, K/V dtype, steps of the last call, and its scratch size
  #f32 = new Float32Array(0);
  #i32 = new Int32Array(0);
  #u8 = new Uint8Array(0);
  // A shared memory's growth detaches nothing: old views keep their length,
  // so a view's length says nothing and the buffer is compared each call.
  #shared;

  constructor(instance) {
    const missing = EXPORTS.filter((name) => !(name in instance.exports));
    if (missing.length > 0) {
      throw new TypeError(`attention-wasm: the module does not export ${missing.join(', ')}; build it from this package's c/ with ./build.sh`);
    }
    this.#exports = instance.exports;
    this.#memory = instance.exports.memory;
    this.#shared = typeof SharedArrayBuffer === 'function' && this.#memory.buffer instanceof SharedArrayBuffer;
    this.#exports._initialize?.(); // a WASI reactor's constructors, when the linker made one
    // Asked of the module itself, so a module passed as `wasm` reports truly.
    this.#simd = this.#exports.attn_simd_enabled() === 1;
    this.#isa = ISA_NAMES[this.#exports.attn_isa()];
  }

  /** True when a SIMD build is running (SIMD128 or relaxed SIMD). */
  get simd() {
    return this.#simd;
  }

  /**
   * The running build: 'relaxed-simd' (fused multiply-add where the CPU has
   * it: results may differ in the last bits between machines), 'simd128' or
   * 'scalar' (the same bits on every engine).
   * @returns {'relaxed-simd' | 'simd128' | 'scalar'}
   */
  get isa() {
    return this.#isa;
  }

  /** The instance's WebAssembly.Memory. */
  get memory() {
    this.live();
    return this.#memory;
  }

  /** Frees the instance's memory; every later call throws. */
  dispose() {
    if (this.#exports === null) return;
    if (this.#arena !== 0) this.#exports.free(this.#arena);
    this.#arena = 0;
    this.#arenaBytes = 0;
    this.#exports = null;
    this.#memory = null;
  }

  /** The exports, or throws when disposed. */
  live() {
    if (this.#exports === null) throw new Error('attention-wasm: this instance was disposed; call loadAttention() for a new one');
    return this.#exports;
  }

  /**
   * Throws a RangeError naming `what` when x is a view of this instance's
   * memory: a result written there would land on the arena or on a cache's
   * keys and values.
   */
  refuseOwnMemory(x, what) {
    if (x != null && this.#memory !== null && x.buffer === this.#memory.buffer) {
      throw new RangeError(`${what} is a view of this instance's wasm memory, where results and caches live; pass an array of its own`);
    }
  }

  // Lays out `sizes` (bytes, each rounded up to 16) in the arena and returns
  // their addresses (a reused array). Throws RangeError when wasm32 cannot
  // hold them, naming `what` (a string, or a function giving one: what
  // needs the memory). Afterwards #f32/#u8 view the current memory.
  #reserve(sizes, what) {
    if (typeof what === 'function') what = what();
    const ex = this.live();
    const at = this.#addresses;
    let total = 0;
    for (let i = 0; i < sizes.length; i++) {
      at[i] = total;
      total += Math.ceil(sizes[i] / 16) * 16; // not bitwise: sizes may pass 2^32
      if (total > MAX_ARENA_BYTES) break;
    }
    if (total > MAX_ARENA_BYTES) {
      throw new RangeError(`attention-wasm: ${what} needs ${formatBytes(sizes.reduce((a, b) => a + b, 0))} of wasm memory; wasm32 holds at most 4 GiB`);
    }
    if (total > this.#arenaBytes) {
      if (this.#arena !== 0) ex.free(this.#arena);
      this.#arena = 0;
      this.#arenaBytes = 0;
      const bytes = Math.max(total, Math.min(2 * total, 65536));
      const ptr = ex.malloc(bytes) >>> 0; // addresses past 2 GiB come back negative
      if (ptr === 0) {
        throw new RangeError(`attention-wasm: ${what} needs ${formatBytes(total)} of wasm memory, and the memory could not grow that far`);
      }
      this.#arena = ptr;
      this.#arenaBytes = bytes;
    }
    for (let i = 0; i < sizes.length; i++) at[i] += this.#arena;
    this.views();
    return at;
  }

  // Views of the whole memory, re-made only after it grew (a new buffer).
  /** The current float32 view of the memory (a KV cache copies through it). */
  f32() {
    this.views();
    return this.#f32;
  }

  /** Bytes from the module's allocator (a KV cache's buffers), or 0 when the memory cannot grow. */
  malloc(bytes) {
    return this.live().malloc(bytes) >>> 0; // addresses past 2 GiB come back negative
  }

  free(ptr) {
    this.#exports?.free(ptr);
  }

  views() {
    if (this.#f32.buffer !== this.#memory.buffer) {
      this.#f32 = new Float32Array(this.#memory.buffer);
      this.#i32 = new Int32Array(this.#memory.buffer);
      this.#u8 = new Uint8Array(this.#memory.buffer);
    }
  }

  #release() {
    if (this.#arenaBytes > KEEP_ARENA_BYTES) {
      this.#exports.free(this.#arena);
      this.#arena = 0;
      this.#arenaBytes = 0;
    }
  }

  #check(status, what) {
    if (status === 0) return;
    const message = this.#cString(this.#exports.attn_status_string(status));
    const E = status === ATTN_ERR_OVERFLOW ? RangeError : Error;
    throw new E(`attention-wasm: ${what}: ${message} (status ${status})`);
  }

  #cString(ptr) {
    const bytes = new Uint8Array(this.#memory.buffer, ptr);
    return new TextDecoder().decode(bytes.subarray(0, bytes.indexOf(0)));
  }

  /**
   * Stores rows of a flat Float32Array into a compact cache (attn_kv_write):
   * runs of [first float of src, rows, byte address of the first row, byte
   * address of its int8 scale], each rows x d values.
   */
  kvWrite(dtype, src, d, runs, prepare) {
    const ex = this.live();
    const [at] = this.#reserve([src.length * 4], 'kvCache.append');
    try {
      this.#f32.set(src, at >>> 2);
      if (prepare) prepare(at); // e.g. RoPE turns the staged keys in place
      for (const [from, rows, dst, scales] of runs) this.#check(ex.attn_kv_write(dtype, at + from * 4, rows, d, dst, scales), 'kvCache.append');
    } finally {
      this.#release();
    }
  }

  /** The float32 values of a compact cache's rows (attn_kv_read) into out; runs as kvWrite's, out in place of src. */
  kvRead(dtype, out, d, runs) {
    const ex = this.live();
    const [at] = this.#reserve([out.length * 4], 'kvCache.keys/values');
    try {
      for (const [to, rows, src, scales] of runs) this.#check(ex.attn_kv_read(dtype, src, scales, rows, d, at + to * 4), 'kvCache.keys/values');
      out.set(this.#f32.subarray(at >>> 2, (at >>> 2) + out.length));
    } finally {
      this.#release();
    }
  }

  // The one way into attn_sdpa, shared by attention, sdpa, multiHeadAttention
  // and the KV caches; `c` (made by newCall) is checked already. Written for
  // small calls: one arena check, the three structs of attention.h written
  // at core/abi.js's offsets, one copy in per input and one copy out. c.kAt / c.vAt, when
  // set, are byte addresses of K and V already in wasm memory (a cache), read
  // in place with c.kStrides / c.vStrides; c.kvDtype (attn_kv_dtype) says
  // their type, and an int8 cache's c.kScalesAt / c.vScalesAt / c.scaleStrides
  // its scales: a compact cache goes through attn_sdpa_kv.
  sdpa(c) {
    const ex = this.live();
    const { batch, heads, kvHeads, nq, nk, dk, dv } = c;
    const inPlace = c.kAt !== undefined;
    const dtype = inPlace ? c.kvDtype ?? 0 : 0;
    const qLen = batch * heads * nq * dk, kLen = inPlace ? 0 : batch * kvHeads * nk * dk;
    const vLen = inPlace ? 0 : batch * kvHeads * nk * dv;
    const oLen = batch * heads * nq * dv, bLen = c.bias ? c.bias.data.length : 0, mLen = c.mask ? c.mask.data.length : 0;
    const sLen = c.steps ? batch * heads * nq * nk : 0, lLen = c.stats ? batch * heads * nq : 0;
    const iLen = perCallLength(c);
    // Float offsets from the arena start, each region 16-byte aligned: the
    // structs, int32 per-batch arrays and float per-head ones, the tensors,
    // scratch; the mask (bytes) last.
    const { shape: SH, options: OPTS, steps: ST, kv: KVO, i32: I32 } = FORWARD;
    const qO = I32 + align(iLen), kO = qO + align(qLen), vO = kO + align(kLen), oO = vO + align(vLen);
    const bO = oO + align(oLen), sO = bO + align(bLen), zO = sO + align(sLen), gO = zO + align(sLen);
    const wO = gO + align(sLen), lO = wO + align(sLen), xO = lO + align(lLen);
    const need = (scratch) => callNeeds(c, { q: qLen, k: kLen, v: vLen, out: oLen, bias: bLen, mask: mLen / 4, steps: 4 * sLen, lse: lLen, scratch });
    if (xO * 4 + 256 > this.#arenaBytes) this.#reserve([xO * 4 + 256], () => need(0));
    // Growth detaches the old buffer, and a detached view has length 0: far
    // cheaper to check than the memory.buffer getter on every small call (a
    // shared memory detaches nothing, so there the views are checked each call).
    else if (this.#f32.length === 0 || this.#shared) this.views();
    let base = this.#arena, at = base >>> 2;
    this.#writeShape(at + SH, c);
    // The scratch size depends on the sizes only (not on strides or
    // options): asked of the C side once per new set of sizes.
    const sk = this.#scratchKey, steps = c.steps ? 1 : 0;
    if (sk[0] !== nq || sk[1] !== nk || sk[2] !== dk || sk[3] !== dv || sk[4] !== heads || sk[5] !== kvHeads || sk[6] !== dtype || sk[7] !== steps) {
      sk[8] = ex.attn_sdpa_call_scratch_size(base + SH * 4, dtype, steps) >>> 0;
      sk[0] = nq; sk[1] = nk; sk[2] = dk; sk[3] = dv; sk[4] = heads; sk[5] = kvHeads; sk[6] = dtype; sk[7] = steps;
    }
    // With RoPE the scratch depends on the options too (its tables and turned rows after the rest).
    const scratch = c.rope ? this.#scratchWith(at, base, c, FORWARD, false, dtype, steps) : sk[8];
    if (scratch === 0) throw new RangeError(`attention-wasm: sizes nq=${nq} nk=${nk} dk=${dk} dv=${dv} are too large for wasm32`);
    const mO = xO + scratch;
    const bytes = mO * 4 + mLen;
    if (bytes > this.#arenaBytes) {
      this.#reserve([bytes], () => need(scratch));
      base = this.#arena;
      at = base >>> 2;
      this.#writeShape(at + SH, c);
    } else if (this.#f32.length === 0 || this.#shared) this.views();
    const f32 = this.#f32, i32 = this.#i32;
    try {
      if (inPlace) {
        writeStrides(i32, at + SH + SHAPE.k, c.kStrides);
        writeStrides(i32, at + SH + SHAPE.v, c.vStrides);
      }
      writeOptions(f32, i32, at + OPTS, c, c.mask ? base + mO * 4 : 0, c.bias ? base + bO * 4 : 0, base + I32 * 4);
      const t = at + ST;
      i32[t + STEPS.scores] = c.steps ? base + sO * 4 : 0;
      i32[t + STEPS.scaled] = c.steps ? base + zO * 4 : 0;
      i32[t + STEPS.logits] = c.steps ? base + gO * 4 : 0;
      i32[t + STEPS.weights] = c.steps ? base + wO * 4 : 0;
      i32[t + STEPS.lse] = c.stats ? base + lO * 4 : 0;
      copyIn(f32, c.q, at + qO);
      if (!inPlace) {
        copyIn(f32, c.k, at + kO);
        copyIn(f32, c.v, at + vO);
      }
      if (c.bias) copyIn(f32, c.bias.data, at + bO);
      if (c.mask) this.#u8.set(c.mask.data, base + mO * 4);
      let status;
      if (dtype === 0) {
        status = ex.attn_sdpa(
          base + SH * 4, base + qO * 4, inPlace ? c.kAt : base + kO * 4, inPlace ? c.vAt : base + vO * 4, base + oO * 4,
          base + OPTS * 4, base + ST * 4, base + xO * 4, scratch,
        );
      } else {
        const o = at + KVO;
        i32[o + KV.dtype] = dtype; i32[o + KV.k] = c.kAt; i32[o + KV.v] = c.vAt;
        i32[o + KV.k_scales] = c.kScalesAt ?? 0; i32[o + KV.v_scales] = c.vScalesAt ?? 0;
        writeStrides(i32, o + KV.k_scale, c.scaleStrides ?? [0, 0, 0]);
        writeStrides(i32, o + KV.v_scale, c.scaleStrides ?? [0, 0, 0]);
        status = ex.attn_sdpa_kv(base + SH * 4, base + qO * 4, base + KVO * 4, base + oO * 4, base + OPTS * 4, base + ST * 4, base + xO * 4, scratch);
      }
      if (status !== 0) this.#check(status, 'attention');
      const output = c.out ?? new Float32Array(oLen);
      copyOut(f32, at + oO, output, oLen); // attn_sdpa does not allocate: the view is current
      if (!c.steps && !c.stats) return output;
      const result = { output };
      if (c.steps) {
        result.scores = f32.slice(at + sO, at + sO + sLen);
        result.scaled = f32.slice(at + zO, at + zO + sLen);
        result.logits = f32.slice(at + gO, at + gO + sLen);
        result.weights = f32.slice(at + wO, at + wO + sLen);
      }
      if (c.stats) result.lse = f32.slice(at + lO, at + lO + lLen);
      return result;
    } finally {
      // The reused call object must not keep the caller's arrays alive.
      c.q = c.k = c.v = c.out = c.mask = c.bias = c.kvLengths = c.queryOffsets = c.sinks = c.alibi = null;
      this.#release();
    }
  }

  // With RoPE the scratch depends on the options too: they are written
  // here first (the call writes them again with its addresses) and the C
  // side sizes it. The shape is at `base`; `r` is FORWARD or BACKWARD.
  #scratchWith(at, base, c, r, backward, dtype = 0, steps = 0) {
    writeOptions(this.#f32, this.#i32, at + r.options, c, 0, 0, base + r.i32 * 4);
    const ex = this.#exports, shape = base + r.shape * 4, options = base + r.options * 4;
    if (backward) return ex.attn_sdpa_backward_scratch_size_with(shape, options) >>> 0;
    return ex.attn_sdpa_call_scratch_size_with(shape, options, dtype, steps) >>> 0;
  }

  // attn_shape at float index `o`: sizes, then strides of q, k, v, out for
  // c.layout (all 0 = contiguous bhsd, which the C side fills in).
  #writeShape(o, c) {
    const i32 = this.#i32;
    i32[o + SHAPE.batch] = c.batch; i32[o + SHAPE.heads] = c.heads; i32[o + SHAPE.kv_heads] = c.kvHeads;
    i32[o + SHAPE.n_q] = c.nq; i32[o + SHAPE.n_k] = c.nk; i32[o + SHAPE.d_k] = c.dk; i32[o + SHAPE.d_v] = c.dv;
    if (c.layout === 'bshd') {
      writeStrides(i32, o + SHAPE.q, [c.nq * c.heads * c.dk, c.dk, c.heads * c.dk]);
      writeStrides(i32, o + SHAPE.k, [c.nk * c.kvHeads * c.dk, c.dk, c.kvHeads * c.dk]);
      writeStrides(i32, o + SHAPE.v, [c.nk * c.kvHeads * c.dv, c.dv, c.kvHeads * c.dv]);
      writeStrides(i32, o + SHAPE.out, [c.nq * c.heads * c.dv, c.dv, c.heads * c.dv]);
    } else {
      for (let i = SHAPE.q; i < SHAPE.WORDS; i++) i32[o + i] = 0;
    }
  }

  /**
   * A (m, k) times B (k, n), checked Matrix objects, into `out` (a checked
   * Float32Array of m * n values, which may be A's or B's data: both are
   * copied in before the product is copied out) or a new array.
   */
  matmul(A, B, out = null) {
    const ex = this.live();
    const m = A.rows, k = A.cols, n = B.cols;
    const [aP, bP, cP] = this.#reserve([m * k * 4, k * n * 4, m * n * 4], 'matmul');
    try {
      this.#f32.set(A.data, aP >>> 2);
      this.#f32.set(B.data, bP >>> 2);
      this.#check(ex.attn_matmul(aP, bP, cP, m, k, n), 'matmul');
      return copyOut(this.#f32, cP >>> 2, out ?? new Float32Array(m * n), m * n); // attn_matmul does not allocate: the view is current
    } finally {
      this.#release();
    }
  }

  /**
   * One call of a block op (core/block.js): `sizes` (bytes) laid out in the
   * arena, then body(addresses, f32, exports, check) copies in, calls and
   * copies out through the float32 view (the block's C calls do not
   * allocate, so the view stays current); check(status) throws as the
   * other calls do. The arena is the one every call reuses.
   */
  block(sizes, what, body) {
    const ex = this.live();
    const at = this.#reserve(sizes, what);
    try {
      return body(at, this.#f32, ex, (status) => this.#check(status, what));
    } finally {
      this.#release();
    }
  }

  /** The rows of a checked Matrix turned by RoPE (a checked rope), row i at position + i, in a new array. */
  rope(X, position, rope, heads = 1) {
    const ex = this.live();
    const n = X.rows / heads, count = X.rows * X.cols, table = n * rope.dims;
    const [xP, tP] = this.#reserve([count * 4, table * 4], 'rope');
    try {
      this.#f32.set(X.data, xP >>> 2);
      const status = ex.attn_rope(xP, heads, n * X.cols, n, X.cols, X.cols, position, rope.theta, rope.dims, rope.interleaved ? 1 : 0, tP, table);
      this.#check(status, 'rope');
      return this.#f32.slice(xP >>> 2, (xP >>> 2) + count);
    } finally {
      this.#release();
    }
  }

  /** Row-wise softmax of a checked Matrix, into `out` (as matmul's) or a new array. */
  softmax(X, out = null) {
    const ex = this.live();
    const count = X.rows * X.cols;
    const [xP] = this.#reserve([count * 4], 'softmax');
    try {
      this.#f32.set(X.data, xP >>> 2);
      this.#check(ex.attn_softmax(xP, xP, X.rows, X.cols), 'softmax');
      return copyOut(this.#f32, xP >>> 2, out ?? new Float32Array(count), count);
    } finally {
      this.#release();
    }
  }


  // The one way into attn_sdpa_backward; `c` is a call spec as #sdpa takes
  // (checked already) plus dout, out (or null), lse (or null), dbias
  // (whether to return the bias's gradient) and gradsOut (absent, null or
  // { dq?, dk?, dv? }: checked arrays to copy those gradients into). Lays
  // out the shape, options and attn_grads structs, the tensors and the
  // scratch in the arena.
  backward(c) {
    const ex = this.live();
    const { batch, heads, kvHeads, nq, nk, dk, dv } = c;
    const qLen = batch * heads * nq * dk, kLen = batch * kvHeads * nk * dk, vLen = batch * kvHeads * nk * dv;
    const oLen = batch * heads * nq * dv, lLen = c.lse ? batch * heads * nq : 0;
    const bLen = c.bias ? c.bias.data.length : 0, dbLen = c.dbias && c.bias ? bLen : 0, mLen = c.mask ? c.mask.data.length : 0;
    const iLen = perCallLength(c);
    // Float offsets from the arena start, each region 16-byte aligned: the
    // structs, int32 per-batch arrays and float per-head ones, the tensors,
    // scratch; the mask (bytes) last.
    const { shape: SH, options: OPTS, grads: GR, i32: I32 } = BACKWARD;
    const qO = I32 + align(iLen), kO = qO + align(qLen), vO = kO + align(kLen), oO = vO + align(vLen);
    const dO = oO + align(c.out ? oLen : 0), lO = dO + align(oLen), bO = lO + align(lLen);
    const dqO = bO + align(bLen), dkO = dqO + align(qLen), dvO = dkO + align(kLen), dbO = dvO + align(vLen);
    const dsO = dbO + align(dbLen), xO = dsO + align(c.sinks ? heads : 0);
    if (xO * 4 + 256 > this.#arenaBytes) this.#reserve([xO * 4 + 256], 'this backward call');
    else if (this.#f32.length === 0 || this.#shared) this.views();
    let base = this.#arena, at = base >>> 2;
    this.#writeShape(at + SH, c);
    const scratch = c.rope ? this.#scratchWith(at, base, c, BACKWARD, true) : ex.attn_sdpa_backward_scratch_size(base + SH * 4) >>> 0;
    if (scratch === 0) throw new RangeError(`attention-wasm: sizes nq=${nq} nk=${nk} dk=${dk} dv=${dv} are too large for wasm32`);
    const mO = xO + scratch;
    if (mO * 4 + mLen > this.#arenaBytes) {
      this.#reserve([mO * 4 + mLen], 'this backward call');
      base = this.#arena;
      at = base >>> 2;
      this.#writeShape(at + SH, c);
    } else if (this.#f32.length === 0 || this.#shared) this.views();
    const f32 = this.#f32, i32 = this.#i32, addr = (o) => base + o * 4;
    try {
      writeOptions(f32, i32, at + OPTS, c, c.mask ? addr(mO) : 0, c.bias ? addr(bO) : 0, addr(I32));
      i32[at + GR + GRADS.dq] = addr(dqO);
      i32[at + GR + GRADS.dk] = addr(dkO);
      i32[at + GR + GRADS.dv] = addr(dvO);
      i32[at + GR + GRADS.dbias] = dbLen ? addr(dbO) : 0;
      i32[at + GR + GRADS.dsinks] = c.sinks ? addr(dsO) : 0;
      copyIn(f32, c.q, at + qO);
      copyIn(f32, c.k, at + kO);
      copyIn(f32, c.v, at + vO);
      if (c.out) copyIn(f32, c.out, at + oO);
      copyIn(f32, c.dout, at + dO);
      if (c.lse) copyIn(f32, c.lse, at + lO);
      if (c.bias) copyIn(f32, c.bias.data, at + bO);
      if (c.mask) this.#u8.set(c.mask.data, addr(mO));
      this.#check(ex.attn_sdpa_backward(
        addr(SH), addr(qO), addr(kO), addr(vO), c.out ? addr(oO) : 0, addr(dO), c.lse ? addr(lO) : 0,
        addr(OPTS), addr(GR), addr(xO), scratch,
      ), 'backward');
      const into = c.gradsOut;
      const result = {
        dq: copyOut(f32, at + dqO, into?.dq ?? new Float32Array(qLen), qLen),
        dk: copyOut(f32, at + dkO, into?.dk ?? new Float32Array(kLen), kLen),
        dv: copyOut(f32, at + dvO, into?.dv ?? new Float32Array(vLen), vLen),
      };
      if (dbLen) result.dbias = f32.slice(at + dbO, at + dbO + dbLen);
      if (c.sinks) result.dsinks = f32.slice(at + dsO, at + dsO + heads);
      return result;
    } finally {
      this.#release();
    }
  }

}

// n rounded up to a multiple of 4 floats (16 bytes); not bitwise: counts may pass 2^31.
function align(n) {
  return Math.ceil(n / 4) * 4;
}

// What a call needs, for the RangeError when wasm32 cannot hold it: the
// total and its largest part, named with its shape. `floats` gives each
// part's count of floats (the mask's in bytes / 4).
function callNeeds(c, floats) {
  const { batch, heads, kvHeads, nq, nk, dk, dv } = c;
  const shapes = {
    q: `q (batch, heads, nq, dk) = (${batch}, ${heads}, ${nq}, ${dk})`,
    k: `k (batch, kvHeads, nk, dk) = (${batch}, ${kvHeads}, ${nk}, ${dk})`,
    v: `v (batch, kvHeads, nk, dv) = (${batch}, ${kvHeads}, ${nk}, ${dv})`,
    out: `the output (batch, heads, nq, dv) = (${batch}, ${heads}, ${nq}, ${dv})`,
    bias: 'bias', mask: 'mask',
    steps: `steps: scores, scaled, logits and weights, each (batch, heads, nq, nk) = (${batch}, ${heads}, ${nq}, ${nk})`,
    lse: 'stats (lse)', scratch: 'scratch',
  };
  const [name, most] = Object.entries(floats).reduce((a, b) => (b[1] > a[1] ? b : a));
  return `this call (${formatBytes(most * 4)} = ${most * 4} bytes of it for ${shapes[name]})`;
}

export function formatBytes(bytes) {
  return bytes >= 2 ** 30 ? `${(bytes / 2 ** 30).toFixed(1)} GiB` : `${(bytes / 2 ** 20).toFixed(1)} MiB`;
}
