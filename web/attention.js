// attention.js - the loader and the API of attention-wasm.
//
// This module owns every view into the wasm memory: it checks arguments in JS
// (errors name the argument and the expected shape), copies inputs into one
// reusable arena in wasm memory, calls the C core (c/attention.h), checks the
// status and copies results out. Results are always copies, never views, so
// they stay valid after later calls and after the memory grows.

import { Matrix, toMatrix, toMask, checkSize, describe } from './matrix.js';

export { Matrix } from './matrix.js';
export { NumpyRandom } from './numpy-random.js';

// The smallest module that uses a SIMD128 instruction (v128 result of
// i8x16.splat + i8x16.popcnt), the probe wasm-feature-detect uses.
const SIMD_PROBE = new Uint8Array([
  0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 10, 1, 8, 0, 65, 0, 253, 15, 253, 98, 11,
]);

// The smallest module that uses f32x4.relaxed_madd (opcode 0xfd 0x85 0x02):
// (func (param v128 v128 v128) (result v128) local.get 0..2 f32x4.relaxed_madd).
const RELAXED_PROBE = new Uint8Array([
  0, 97, 115, 109, 1, 0, 0, 0, 1, 8, 1, 96, 3, 123, 123, 123, 1, 123, 3, 2, 1, 0,
  10, 13, 1, 11, 0, 32, 0, 32, 1, 32, 2, 253, 133, 2, 11,
]);

/** True when this engine accepts WebAssembly SIMD128. */
export function simdSupported() {
  return WebAssembly.validate(SIMD_PROBE);
}

/** True when this engine accepts relaxed SIMD (f32x4.relaxed_madd). */
export function relaxedSimdSupported() {
  return WebAssembly.validate(RELAXED_PROBE);
}

const ATTN_CAUSAL = 1;
const ATTN_ERR_OVERFLOW = 7;
// wasm32 addresses 4 GiB; leave room for the stack, statics and allocator.
const MAX_ARENA_BYTES = 2 ** 32 - 2 ** 24;
// Arenas above this size are freed after the call that needed them, so one
// huge step call does not pin its memory inside malloc's free lists.
const KEEP_ARENA_BYTES = 2 ** 24;

// The value of attn_isa() for each build.
const ISA_NAMES = ['scalar', 'simd128', 'relaxed-simd'];

// Compiled modules by build, so a second instance skips compilation.
const compiled = new Map();

function defaultModule(isa) {
  if (!compiled.has(isa)) {
    // Literal URLs so bundlers see and copy the files.
    const url = isa === 'relaxed-simd'
      ? new URL('../dist/attention-relaxed.wasm', import.meta.url)
      : isa === 'simd128'
        ? new URL('../dist/attention-simd.wasm', import.meta.url)
        : new URL('../dist/attention-scalar.wasm', import.meta.url);
    const promise = compileSource(url);
    promise.catch(() => compiled.delete(isa));
    compiled.set(isa, promise);
  }
  return compiled.get(isa);
}

/**
 * The build loadAttention picks for these options on this engine:
 * 'relaxed-simd' when the engine has relaxed SIMD and neither `simd: false`
 * nor `deterministic: true` is asked, else 'simd128' when it has SIMD128 and
 * `simd` is not false, else 'scalar'.
 * @param {{ simd?: boolean, deterministic?: boolean }} [options]
 * @returns {'relaxed-simd' | 'simd128' | 'scalar'}
 */
export function chooseIsa({ simd, deterministic } = {}) {
  if (simd === false || !simdSupported()) return 'scalar';
  if (deterministic !== true && relaxedSimdSupported()) return 'relaxed-simd';
  return 'simd128';
}

async function compileSource(src, fn = 'loadAttention') {
  if (src instanceof WebAssembly.Module) return src;
  if (src instanceof ArrayBuffer || ArrayBuffer.isView(src)) return WebAssembly.compile(src);
  if (typeof Response !== 'undefined' && src instanceof Response) return compileResponse(src);
  let url;
  if (src instanceof URL) {
    url = src;
  } else if (typeof src === 'string') {
    const base = globalThis.location?.href ?? `file://${globalThis.process?.cwd?.() ?? ''}/`;
    url = new URL(src, base);
  } else {
    throw new TypeError(`${fn}: wasm must be a URL, string, BufferSource, Response or WebAssembly.Module, got ${describe(src)}`);
  }
  if (url.protocol === 'file:') {
    // A specifier in a variable, so browser bundlers do not try to resolve it.
    const fsName = 'node:fs/promises';
    const fs = await import(/* webpackIgnore: true */ /* @vite-ignore */ fsName);
    return WebAssembly.compile(await fs.readFile(url));
  }
  return compileResponse(await fetch(url));
}

async function compileResponse(response) {
  if (!response.ok) throw new Error(`attention-wasm: fetching ${response.url} failed with HTTP ${response.status}`);
  const type = response.headers.get('content-type') ?? '';
  // compileStreaming insists on application/wasm; other servers get the slow path.
  if (typeof WebAssembly.compileStreaming === 'function' && type.split(';')[0].trim() === 'application/wasm') {
    return WebAssembly.compileStreaming(response);
  }
  return WebAssembly.compile(await response.arrayBuffer());
}

/**
 * Loads the attention module: the fastest build the engine validates
 * (relaxed SIMD, else SIMD128, else scalar; see chooseIsa), or `wasm`.
 * @param {{ simd?: boolean, deterministic?: boolean, wasm?: URL | string | BufferSource | Response | WebAssembly.Module }} [options]
 * @returns {Promise<Attention>}
 */
export async function loadAttention(options = {}) {
  const module = await compileModule(options, 'loadAttention');
  const imports = {};
  for (const imp of WebAssembly.Module.imports(module)) {
    if (imp.module === 'env' && imp.name === 'emscripten_notify_memory_growth') {
      // Views are re-created from memory.buffer after every call that can grow it.
      imports.env = { ...imports.env, emscripten_notify_memory_growth() {} };
    } else {
      throw new Error(`loadAttention: the wasm module imports ${imp.module}.${imp.name}, which this loader does not provide`);
    }
  }
  const instance = await WebAssembly.instantiate(module, imports);
  return new Attention(instance);
}

/**
 * The compiled WebAssembly.Module that loadAttention(options) instantiates
 * (cached per build). web/pool.js compiles once and hands it to its workers.
 * @param {{ simd?: boolean, deterministic?: boolean, wasm?: URL | string | BufferSource | Response | WebAssembly.Module }} [options]
 * @returns {Promise<WebAssembly.Module>}
 */
export function compileAttention(options = {}) {
  return compileModule(options, 'compileAttention');
}

// Checks the load options (messages name `fn`) and compiles the module.
async function compileModule(options, fn) {
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`${fn}: options must be an object, got ${describe(options)}`);
  }
  checkKeys(options, ['simd', 'deterministic', 'wasm'], fn);
  const { simd: wantSimd, deterministic, wasm } = options;
  if (wantSimd !== undefined && typeof wantSimd !== 'boolean') {
    throw new TypeError(`${fn}: simd must be a boolean, got ${describe(wantSimd)}`);
  }
  if (deterministic !== undefined && typeof deterministic !== 'boolean') {
    throw new TypeError(`${fn}: deterministic must be a boolean, got ${describe(deterministic)}`);
  }
  if (wantSimd === true && wasm === undefined && !simdSupported()) {
    throw new Error(`${fn}: simd: true was asked for, but this engine does not support WebAssembly SIMD128`);
  }
  if (wasm !== undefined) return compileSource(wasm, fn);
  const isa = chooseIsa({ simd: wantSimd, deterministic });
  // A checkout built without a relaxed-SIMD toolchain has no relaxed module
  // (build.sh says so): SIMD128 then, as on an engine without relaxed SIMD.
  return isa === 'relaxed-simd'
    ? defaultModule(isa).catch(() => defaultModule('simd128'))
    : defaultModule(isa);
}

// for-in, not Object.keys: no array per call (a tenth of a small call's
// time went there), and inherited keys are checked too, as they are read.
function checkKeys(options, allowed, fn) {
  for (const key in options) {
    if (!allowed.includes(key)) {
      throw new TypeError(`${fn}: unknown option ${JSON.stringify(key)} (known: ${allowed.join(', ')})`);
    }
  }
}

// Small copies by hand: TypedArray set/subarray cost ~50-150 ns a call in V8,
// more than the whole attention of a few tokens.
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
}

// null and undefined both mean "not given" for optional options.
function checkBool(value, name) {
  if (value != null && typeof value !== 'boolean') throw new TypeError(`${name} must be a boolean, got ${describe(value)}`);
  return value === true;
}

function checkScale(value, name, dk) {
  if (value == null) return 1 / Math.sqrt(dk);
  if (typeof value !== 'number') throw new TypeError(`${name} must be a number, got ${describe(value)}`);
  if (!Number.isFinite(value)) throw new RangeError(`${name} must be finite, got ${value}`);
  return value;
}

function checkCount(value, name, fallback) {
  if (value == null && fallback !== undefined) return fallback;
  checkSize(value, name);
  return value;
}

/** The attention API over one wasm instance. Make one with loadAttention(). */
export class Attention {
  #exports;
  #memory;
  #simd;
  #isa;
  #arena = 0; // pointer into wasm memory
  #arenaBytes = 0;
  #addresses = new Array(10).fill(0);
  #f32 = new Float32Array(0);
  #u8 = new Uint8Array(0);

  /** @internal use loadAttention() */
  constructor(instance) {
    this.#exports = instance.exports;
    this.#memory = instance.exports.memory;
    this.#exports._initialize?.();
    // Asked of the module itself, so a module passed as `wasm` reports truly.
    this.#simd = this.#exports.attn_simd_enabled() === 1;
    // Modules built before attn_isa existed are SIMD128 or scalar.
    this.#isa = this.#exports.attn_isa ? ISA_NAMES[this.#exports.attn_isa()] : this.#simd ? 'simd128' : 'scalar';
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
    this.#live();
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

  #live() {
    if (this.#exports === null) throw new Error('attention-wasm: this instance was disposed; call loadAttention() for a new one');
    return this.#exports;
  }

  // Lays out `sizes` (bytes, each rounded up to 16) in the arena and returns
  // their addresses (a reused array). Throws RangeError when wasm32 cannot
  // hold them. Afterwards #f32/#u8 view the current memory.
  #reserve(sizes, what) {
    const ex = this.#live();
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
    this.#views();
    return at;
  }

  // Views of the whole memory, re-made only after it grew (growth detaches
  // the old buffer).
  #views() {
    if (this.#f32.buffer !== this.#memory.buffer) {
      this.#f32 = new Float32Array(this.#memory.buffer);
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

  // The one way into attn_sdpa, shared by attention, sdpa and
  // multiHeadAttention; shapes are already checked. Written for small calls:
  // no intermediate objects on the output path, one arena check, one copy in
  // per input and one copy out. With `steps` (an object), the step path runs
  // and steps.scores, .scaled and .weights receive copies.
  #sdpa(q, k, v, batch, heads, kvHeads, nq, nk, dk, dv, mask, bias, scale, causal, out, steps) {
    const ex = this.#live();
    const qLen = batch * heads * nq * dk, kLen = batch * kvHeads * nk * dk, vLen = batch * kvHeads * nk * dv;
    const oLen = batch * heads * nq * dv, mLen = mask ? nq * nk : 0, bLen = bias ? nq * nk : 0;
    const sLen = steps ? batch * heads * nq * nk : 0;
    const scratch = ex.attn_sdpa_scratch_size(nq, nk, dk, dv) >>> 0;
    if (scratch === 0) throw new RangeError(`attention-wasm: sizes nq=${nq} nk=${nk} dk=${dk} dv=${dv} are too large for wasm32`);
    // Float offsets, each region 16-byte aligned; the mask (bytes) goes last.
    const align = (n) => Math.ceil(n / 4) * 4; // not bitwise: counts may pass 2^31
    const kO = align(qLen), vO = kO + align(kLen), oO = vO + align(vLen), bO = oO + align(oLen);
    const sO = bO + align(bLen), zO = sO + align(sLen), wO = zO + align(sLen), xO = wO + align(sLen);
    const mO = xO + scratch;
    const bytes = mO * 4 + mLen;
    if (bytes > this.#arenaBytes) this.#reserve([bytes], 'this call');
    // Growth detaches the old buffer, and a detached view has length 0: far
    // cheaper to check than the memory.buffer getter on every small call.
    else if (this.#f32.length === 0) this.#views();
    const base = this.#arena, at = base >>> 2, f32 = this.#f32;
    try {
      copyIn(f32, q, at);
      copyIn(f32, k, at + kO);
      copyIn(f32, v, at + vO);
      if (bias) copyIn(f32, bias, at + bO);
      if (mask) this.#u8.set(mask, base + mO * 4);
      const status = ex.attn_sdpa(
        base, base + kO * 4, base + vO * 4, base + oO * 4, batch, heads, kvHeads, nq, nk, dk, dv,
        mask ? base + mO * 4 : 0, bias ? base + bO * 4 : 0, scale, causal ? ATTN_CAUSAL : 0,
        steps ? base + sO * 4 : 0, steps ? base + zO * 4 : 0, steps ? base + wO * 4 : 0, base + xO * 4, scratch,
      );
      if (status !== 0) this.#check(status, 'attention');
      const output = out ?? new Float32Array(oLen);
      copyOut(f32, at + oO, output, oLen); // attn_sdpa does not allocate: the view is current
      if (steps) {
        steps.scores = f32.slice(at + sO, at + sO + sLen);
        steps.scaled = f32.slice(at + zO, at + zO + sLen);
        steps.weights = f32.slice(at + wO, at + wO + sLen);
      }
      return output;
    } finally {
      this.#release();
    }
  }

  /**
   * Scaled dot-product attention of one head.
   * q (nq, dk), k (nk, dk), v (nk, dv); mask and bias (nq, nk).
   */
  attention(q, k, v, options = {}) {
    this.#live();
    checkOptions(options, ['causal', 'mask', 'bias', 'scale', 'steps'], 'attention');
    const Q = toMatrix(q, 'attention: q');
    const K = toMatrix(k, 'attention: k', undefined, Q.cols);
    const V = toMatrix(v, 'attention: v', K.rows);
    const nq = Q.rows, nk = K.rows, dk = Q.cols, dv = V.cols;
    const mask = options.mask == null ? null : toMask(options.mask, 'attention: mask', nq, nk);
    const bias = options.bias == null ? null : toMatrix(options.bias, 'attention: bias', nq, nk).data;
    const steps = checkBool(options.steps, 'attention: steps');
    const scale = checkScale(options.scale, 'attention: scale', dk), causal = checkBool(options.causal, 'attention: causal');
    const r = steps ? {} : null;
    const result = { output: new Matrix(nq, dv, this.#sdpa(Q.data, K.data, V.data, 1, 1, 1, nq, nk, dk, dv, mask, bias, scale, causal, undefined, r)) };
    if (steps) {
      result.scores = new Matrix(nq, nk, r.scores);
      result.scaled = new Matrix(nq, nk, r.scaled);
      result.weights = new Matrix(nq, nk, r.weights);
    }
    return result;
  }

  /**
   * The fast path over flat Float32Arrays in PyTorch layout:
   * q (batch, heads, nq, dk), k (batch, kvHeads, nk, dk), v (batch, kvHeads, nk, dv).
   * @returns {Float32Array} (batch, heads, nq, dv)
   */
  sdpa(q, k, v, options) {
    this.#live();
    if (options === null || typeof options !== 'object') {
      throw new TypeError(`sdpa: options must be an object with nq, nk, dk, dv, got ${describe(options)}`);
    }
    for (const key in options) if (!isSdpaOption(key)) checkKeys(options, SDPA_OPTIONS, 'sdpa');
    const { batch = 1, heads = 1, nq, nk, dk, dv, mask, bias, out } = options;
    const kvHeads = options.kvHeads ?? heads;
    if (!isCount(batch)) checkSize(batch, 'sdpa: batch');
    if (!isCount(heads)) checkSize(heads, 'sdpa: heads');
    if (!isCount(kvHeads)) checkSize(kvHeads, 'sdpa: kvHeads');
    if (!isCount(nq)) checkSize(nq, 'sdpa: nq');
    if (!isCount(nk)) checkSize(nk, 'sdpa: nk');
    if (!isCount(dk)) checkSize(dk, 'sdpa: dk');
    if (!isCount(dv)) checkSize(dv, 'sdpa: dv');
    if (heads % kvHeads !== 0) throw new RangeError(`sdpa: heads (${heads}) must be a multiple of kvHeads (${kvHeads})`);
    if (!(q instanceof Float32Array) || q.length !== batch * heads * nq * dk) checkFlat(q, Float32Array, 'sdpa: q', [batch, heads, nq, dk], '(batch, heads, nq, dk)');
    if (!(k instanceof Float32Array) || k.length !== batch * kvHeads * nk * dk) checkFlat(k, Float32Array, 'sdpa: k', [batch, kvHeads, nk, dk], '(batch, kvHeads, nk, dk)');
    if (!(v instanceof Float32Array) || v.length !== batch * kvHeads * nk * dv) checkFlat(v, Float32Array, 'sdpa: v', [batch, kvHeads, nk, dv], '(batch, kvHeads, nk, dv)');
    if (mask != null) checkFlat(mask, Uint8Array, 'sdpa: mask', [nq, nk], '(nq, nk)');
    if (bias != null) checkFlat(bias, Float32Array, 'sdpa: bias', [nq, nk], '(nq, nk)');
    const oLen = batch * heads * nq * dv;
    if (out != null) {
      if (!(out instanceof Float32Array)) throw new TypeError(`sdpa: out must be a Float32Array of ${oLen} values (batch, heads, nq, dv), got ${describe(out)}`);
      if (out.length < oLen) throw new RangeError(`sdpa: out has ${out.length} values, needs ${oLen} for (batch, heads, nq, dv) = (${batch}, ${heads}, ${nq}, ${dv})`);
    }
    const scale = options.scale == null ? 1 / Math.sqrt(dk) : checkScale(options.scale, 'sdpa: scale', dk);
    const causal = options.causal == null ? false : checkBool(options.causal, 'sdpa: causal');
    return this.#sdpa(q, k, v, batch, heads, kvHeads, nq, nk, dk, dv, mask ?? null, bias ?? null, scale, causal, out ?? undefined, null);
  }

  /**
   * Multi-head attention with projections, as torch.nn.MultiheadAttention does
   * it: Q = x wq (n, heads*dk), K = c wk, V = c wv (m, kvHeads*dk / kvHeads*dv),
   * c = context ?? x; heads concatenated in order, then times wo when given.
   */
  multiHeadAttention(x, options) {
    this.#live();
    if (options === null || typeof options !== 'object') {
      throw new TypeError(`multiHeadAttention: options must be an object with wq, wk, wv, heads, got ${describe(options)}`);
    }
    checkOptions(options, ['wq', 'wk', 'wv', 'wo', 'heads', 'kvHeads', 'context', 'causal', 'mask', 'bias', 'steps', 'scale'], 'multiHeadAttention');
    const name = 'multiHeadAttention';
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
    const n = X.rows, m = C.rows;
    const mask = options.mask == null ? null : toMask(options.mask, `${name}: mask`, n, m);
    const bias = options.bias == null ? null : toMatrix(options.bias, `${name}: bias`, n, m).data;
    const steps = checkBool(options.steps, `${name}: steps`);
    const causal = checkBool(options.causal, `${name}: causal`);
    const scale = checkScale(options.scale, `${name}: scale`, dk);

    const Q = this.matmul(X, WQ), K = this.matmul(C, WK), V = this.matmul(C, WV);
    const r = steps ? {} : null;
    const output = this.#sdpa(splitHeads(Q.data, n, heads, dk), splitHeads(K.data, m, kvHeads, dk), splitHeads(V.data, m, kvHeads, dv),
      1, heads, kvHeads, n, m, dk, dv, mask, bias, scale, causal, undefined, r);
    const concat = new Matrix(n, heads * dv, mergeHeads(output, n, heads, dv));
    const result = { output: WO ? this.matmul(concat, WO) : concat };
    if (steps) {
      const perHead = (flat) => Array.from({ length: heads }, (_, h) => new Matrix(n, m, flat.slice(h * n * m, (h + 1) * n * m)));
      result.scores = perHead(r.scores);
      result.scaled = perHead(r.scaled);
      result.weights = perHead(r.weights);
    }
    return result;
  }

  /** a (m, k) times b (k, n), float32. */
  matmul(a, b) {
    const ex = this.#live();
    const A = toMatrix(a, 'matmul: a');
    const B = toMatrix(b, 'matmul: b', A.cols);
    const m = A.rows, k = A.cols, n = B.cols;
    const [aP, bP, cP] = this.#reserve([m * k * 4, k * n * 4, m * n * 4], 'matmul');
    try {
      this.#f32.set(A.data, aP >>> 2);
      this.#f32.set(B.data, bP >>> 2);
      this.#check(ex.attn_matmul(aP, bP, cP, m, k, n), 'matmul');
      return new Matrix(m, n, this.#f32.slice(cP >>> 2, (cP >>> 2) + m * n));
    } finally {
      this.#release();
    }
  }

  /** Row-wise softmax; -Infinity entries weigh 0, a row of only -Infinity gives 0. */
  softmax(x) {
    const ex = this.#live();
    const X = toMatrix(x, 'softmax: x');
    const count = X.rows * X.cols;
    const [xP] = this.#reserve([count * 4], 'softmax');
    try {
      this.#f32.set(X.data, xP >>> 2);
      this.#check(ex.attn_softmax(xP, xP, X.rows, X.cols), 'softmax');
      return new Matrix(X.rows, X.cols, this.#f32.slice(xP >>> 2, (xP >>> 2) + count));
    } finally {
      this.#release();
    }
  }
}

const SDPA_OPTIONS = ['batch', 'heads', 'kvHeads', 'nq', 'nk', 'dk', 'dv', 'causal', 'mask', 'bias', 'scale', 'out'];

// SDPA_OPTIONS as a switch, for the check on every sdpa call: 50 ns for
// seven keys, where allowed.includes() took 110-170 ns (a call of a few
// tokens takes about 1 us in all).
function isSdpaOption(key) {
  switch (key) {
    case 'batch': case 'heads': case 'kvHeads': case 'nq': case 'nk': case 'dk': case 'dv':
    case 'causal': case 'mask': case 'bias': case 'scale': case 'out':
      return true;
    default:
      return false;
  }
}

function isCount(n) {
  return typeof n === 'number' && Number.isInteger(n) && n >= 1;
}

function checkOptions(options, allowed, fn) {
  if (options === null || typeof options !== 'object') throw new TypeError(`${fn}: options must be an object, got ${describe(options)}`);
  checkKeys(options, allowed, fn);
}

function checkFlat(x, Type, name, dims, shape) {
  const length = dims.reduce((a, b) => a * b, 1);
  if (!(x instanceof Type)) {
    throw new TypeError(`${name} must be a ${Type.name} of ${length} values ${shape} = (${dims.join(', ')}), got ${describe(x)}`);
  }
  if (x.length !== length) {
    throw new RangeError(`${name} has ${x.length} values, expected ${length} for ${shape} = (${dims.join(', ')})`);
  }
}

// (n, heads * d) -> (heads, n, d)
function splitHeads(data, n, heads, d) {
  const out = new Float32Array(n * heads * d);
  for (let h = 0; h < heads; h++) {
    for (let i = 0; i < n; i++) out.set(data.subarray(i * heads * d + h * d, i * heads * d + (h + 1) * d), (h * n + i) * d);
  }
  return out;
}

// (heads, n, d) -> (n, heads * d)
function mergeHeads(data, n, heads, d) {
  const out = new Float32Array(n * heads * d);
  for (let h = 0; h < heads; h++) {
    for (let i = 0; i < n; i++) out.set(data.subarray((h * n + i) * d, (h * n + i + 1) * d), i * heads * d + h * d);
  }
  return out;
}

function formatBytes(bytes) {
  return bytes >= 2 ** 30 ? `${(bytes / 2 ** 30).toFixed(1)} GiB` : `${(bytes / 2 ** 20).toFixed(1)} MiB`;
}
