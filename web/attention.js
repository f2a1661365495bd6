// attention.js - the loader and the API of attention-wasm.
//
// This module owns every view into the wasm memory: it checks arguments in JS
// (errors name the argument and the expected shape), copies inputs into one
// reusable arena in wasm memory, calls the C core (c/attention.h), checks the
// status and copies results out. Results are always copies, never views, so
// they stay valid after later calls and after the memory grows.

import { Matrix, toMatrix, toMask, checkSize, describe } from './core/matrix.js';

export { Matrix } from './core/matrix.js';
export { NumpyRandom } from './core/numpy-random.js';

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
const ATTN_WINDOW = 2;
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

// for-in, not Object.keys: no array per call (that array cost a noticeable
// part of a small call, bench/RESULTS.md), and inherited keys are checked
// too, as they are read.
function checkKeys(options, allowed, fn) {
  for (const key in options) {
    if (!allowed.includes(key)) {
      throw new TypeError(`${fn}: unknown option ${JSON.stringify(key)} (known: ${allowed.join(', ')})`);
    }
  }
}

// Small copies by hand: a TypedArray set/subarray call costs more in V8
// than the whole attention of a few tokens (bench/RESULTS.md).
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
  #call = newCall(); // reused by sdpa(), the hot path: no object per call
  #scratchKey = [0, 0, 0, 0, 0, 0, 0]; // nq, nk, dk, dv, heads, kvHeads of the last call, and its scratch size
  #f32 = new Float32Array(0);
  #i32 = new Int32Array(0);
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

  // The one way into attn_sdpa, shared by attention, sdpa, multiHeadAttention
  // and the KV caches; `c` (made by newCall) is checked already. Written for
  // small calls: one arena check, the three structs of attention.h written
  // by offset, one copy in per input and one copy out. c.kAt / c.vAt, when
  // set, are byte addresses of K and V already in wasm memory (a cache), read
  // in place with c.kStrides / c.vStrides.
  #sdpa(c) {
    const ex = this.#live();
    const { batch, heads, kvHeads, nq, nk, dk, dv } = c;
    const inPlace = c.kAt !== undefined;
    const qLen = batch * heads * nq * dk, kLen = inPlace ? 0 : batch * kvHeads * nk * dk;
    const vLen = inPlace ? 0 : batch * kvHeads * nk * dv;
    const oLen = batch * heads * nq * dv, bLen = c.bias ? c.bias.data.length : 0, mLen = c.mask ? c.mask.data.length : 0;
    const sLen = c.steps ? batch * heads * nq * nk : 0, lLen = c.stats ? batch * heads * nq : 0;
    const iLen = (c.queryOffsets ? batch : 0) + (c.kvLengths ? batch : 0);
    // Float offsets from the arena start, each region 16-byte aligned: the
    // structs (shape 76 bytes, options 72, steps 20), int32 per-batch
    // arrays, the tensors, scratch; the mask (bytes) last.
    const SHAPE = 0, OPTS = 20, STEPS = 40, I32 = 48;
    const qO = I32 + align(iLen), kO = qO + align(qLen), vO = kO + align(kLen), oO = vO + align(vLen);
    const bO = oO + align(oLen), sO = bO + align(bLen), zO = sO + align(sLen), gO = zO + align(sLen);
    const wO = gO + align(sLen), lO = wO + align(sLen), xO = lO + align(lLen);
    if (xO * 4 + 256 > this.#arenaBytes) this.#reserve([xO * 4 + 256], 'this call');
    // Growth detaches the old buffer, and a detached view has length 0: far
    // cheaper to check than the memory.buffer getter on every small call.
    else if (this.#f32.length === 0) this.#views();
    let base = this.#arena, at = base >>> 2;
    this.#writeShape(at + SHAPE, c);
    // The scratch size depends on the sizes only (not on strides or
    // options): asked of the C side once per new set of sizes.
    const sk = this.#scratchKey;
    if (sk[0] !== nq || sk[1] !== nk || sk[2] !== dk || sk[3] !== dv || sk[4] !== heads || sk[5] !== kvHeads) {
      sk[6] = ex.attn_sdpa_scratch_size(base + SHAPE * 4) >>> 0;
      sk[0] = nq; sk[1] = nk; sk[2] = dk; sk[3] = dv; sk[4] = heads; sk[5] = kvHeads;
    }
    const scratch = sk[6];
    if (scratch === 0) throw new RangeError(`attention-wasm: sizes nq=${nq} nk=${nk} dk=${dk} dv=${dv} are too large for wasm32`);
    const mO = xO + scratch;
    const bytes = mO * 4 + mLen;
    if (bytes > this.#arenaBytes) {
      this.#reserve([bytes], 'this call');
      base = this.#arena;
      at = base >>> 2;
      this.#writeShape(at + SHAPE, c);
    } else if (this.#f32.length === 0) this.#views();
    const f32 = this.#f32, i32 = this.#i32;
    try {
      if (inPlace) {
        writeStrides(i32, at + SHAPE + 10, c.kStrides);
        writeStrides(i32, at + SHAPE + 13, c.vStrides);
      }
      writeOptions(f32, i32, at + OPTS, c, c.mask ? base + mO * 4 : 0, c.bias ? base + bO * 4 : 0, base + I32 * 4);
      // attn_steps
      const t = at + STEPS;
      i32[t] = c.steps ? base + sO * 4 : 0;
      i32[t + 1] = c.steps ? base + zO * 4 : 0;
      i32[t + 2] = c.steps ? base + gO * 4 : 0;
      i32[t + 3] = c.steps ? base + wO * 4 : 0;
      i32[t + 4] = c.stats ? base + lO * 4 : 0;
      copyIn(f32, c.q, at + qO);
      if (!inPlace) {
        copyIn(f32, c.k, at + kO);
        copyIn(f32, c.v, at + vO);
      }
      if (c.bias) copyIn(f32, c.bias.data, at + bO);
      if (c.mask) this.#u8.set(c.mask.data, base + mO * 4);
      const status = ex.attn_sdpa(
        base + SHAPE * 4, base + qO * 4, inPlace ? c.kAt : base + kO * 4, inPlace ? c.vAt : base + vO * 4, base + oO * 4,
        base + OPTS * 4, base + STEPS * 4, base + xO * 4, scratch,
      );
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
      c.q = c.k = c.v = c.out = c.mask = c.bias = c.kvLengths = c.queryOffsets = null;
      this.#release();
    }
  }

  // attn_shape at float index `o`: sizes, then strides of q, k, v, out for
  // c.layout (all 0 = contiguous bhsd, which the C side fills in).
  #writeShape(o, c) {
    const i32 = this.#i32;
    i32[o] = c.batch; i32[o + 1] = c.heads; i32[o + 2] = c.kvHeads;
    i32[o + 3] = c.nq; i32[o + 4] = c.nk; i32[o + 5] = c.dk; i32[o + 6] = c.dv;
    if (c.layout === 'bshd') {
      writeStrides(i32, o + 7, [c.nq * c.heads * c.dk, c.dk, c.heads * c.dk]);
      writeStrides(i32, o + 10, [c.nk * c.kvHeads * c.dk, c.dk, c.kvHeads * c.dk]);
      writeStrides(i32, o + 13, [c.nk * c.kvHeads * c.dv, c.dv, c.kvHeads * c.dv]);
      writeStrides(i32, o + 16, [c.nq * c.heads * c.dv, c.dv, c.heads * c.dv]);
    } else {
      for (let i = 7; i < 19; i++) i32[o + i] = 0;
    }
  }

  /**
   * Scaled dot-product attention of one head.
   * q (nq, dk), k (nk, dk), v (nk, dv); mask and bias (nq, nk).
   */
  attention(q, k, v, options = {}) {
    this.#live();
    checkOptions(options, ['causal', 'mask', 'bias', 'scale', 'steps', 'softcap', 'window', 'queryOffset'], 'attention');
    const Q = toMatrix(q, 'attention: q');
    const K = toMatrix(k, 'attention: k', undefined, Q.cols);
    const V = toMatrix(v, 'attention: v', K.rows);
    const nq = Q.rows, nk = K.rows, dk = Q.cols, dv = V.cols;
    const mask = options.mask == null ? null : flatBcast(toMask(options.mask, 'attention: mask', nq, nk), nk);
    const bias = options.bias == null ? null : flatBcast(toMatrix(options.bias, 'attention: bias', nq, nk).data, nk);
    const steps = checkBool(options.steps, 'attention: steps');
    const c = newCall();
    c.q = Q.data; c.k = K.data; c.v = V.data;
    c.nq = nq; c.nk = nk; c.dk = dk; c.dv = dv; c.mask = mask; c.bias = bias;
    c.scale = checkScale(options.scale, 'attention: scale', dk);
    c.causal = checkBool(options.causal, 'attention: causal');
    c.softcap = checkSoftcap(options.softcap, 'attention: softcap');
    c.window = checkWindow(options.window, 'attention: window');
    setOffset(c, options.queryOffset, 'attention: queryOffset');
    c.steps = steps;
    const r = this.#sdpa(c);
    if (!steps) return { output: new Matrix(nq, dv, r) };
    return {
      output: new Matrix(nq, dv, r.output), scores: new Matrix(nq, nk, r.scores), scaled: new Matrix(nq, nk, r.scaled),
      logits: new Matrix(nq, nk, r.logits), weights: new Matrix(nq, nk, r.weights),
    };
  }

  /**
   * The fast path over flat Float32Arrays, layout 'bhsd' (PyTorch, default)
   * or 'bshd': q (batch, heads, nq, dk), k (batch, kvHeads, nk, dk),
   * v (batch, kvHeads, nk, dv).
   * @returns {Float32Array | object} (batch, heads, nq, dv); with steps or
   *   stats an object { output, scores?, scaled?, logits?, weights?, lse? }
   */
  sdpa(q, k, v, options) {
    this.#live();
    if (options === null || typeof options !== 'object') {
      throw new TypeError(`sdpa: options must be an object with nq, nk, dk, dv, got ${describe(options)}`);
    }
    for (const key in options) if (!isSdpaOption(key)) checkKeys(options, SDPA_OPTIONS, 'sdpa');
    const { batch = 1, heads = 1, nq, nk, dk, dv, out } = options;
    const kvHeads = options.kvHeads ?? heads;
    if (!isCount(batch)) checkSize(batch, 'sdpa: batch');
    if (!isCount(heads)) checkSize(heads, 'sdpa: heads');
    if (!isCount(kvHeads)) checkSize(kvHeads, 'sdpa: kvHeads');
    if (!isCount(nq)) checkSize(nq, 'sdpa: nq');
    if (!isCount(nk)) checkSize(nk, 'sdpa: nk');
    if (!isCount(dk)) checkSize(dk, 'sdpa: dk');
    if (!isCount(dv)) checkSize(dv, 'sdpa: dv');
    if (heads % kvHeads !== 0) throw new RangeError(`sdpa: heads (${heads}) must be a multiple of kvHeads (${kvHeads})`);
    const layout = checkLayout(options.layout, 'sdpa: layout');
    const [qs, ks, vs] = layout === 'bshd'
      ? ['(batch, nq, heads, dk)', '(batch, nk, kvHeads, dk)', '(batch, nk, kvHeads, dv)']
      : ['(batch, heads, nq, dk)', '(batch, kvHeads, nk, dk)', '(batch, kvHeads, nk, dv)'];
    const bshd = layout === 'bshd';
    if (!(q instanceof Float32Array) || q.length !== batch * heads * nq * dk) checkFlat(q, Float32Array, 'sdpa: q', bshd ? [batch, nq, heads, dk] : [batch, heads, nq, dk], qs);
    if (!(k instanceof Float32Array) || k.length !== batch * kvHeads * nk * dk) checkFlat(k, Float32Array, 'sdpa: k', bshd ? [batch, nk, kvHeads, dk] : [batch, kvHeads, nk, dk], ks);
    if (!(v instanceof Float32Array) || v.length !== batch * kvHeads * nk * dv) checkFlat(v, Float32Array, 'sdpa: v', bshd ? [batch, nk, kvHeads, dv] : [batch, kvHeads, nk, dv], vs);
    const dims = [batch, heads, nq, nk];
    const mask = options.mask == null ? null : checkBcast(options.mask, Uint8Array, 'sdpa: mask', dims);
    const bias = options.bias == null ? null : checkBcast(options.bias, Float32Array, 'sdpa: bias', dims);
    const oLen = batch * heads * nq * dv;
    const os = bshd ? '(batch, nq, heads, dv)' : '(batch, heads, nq, dv)';
    if (out != null) {
      if (!(out instanceof Float32Array)) throw new TypeError(`sdpa: out must be a Float32Array of ${oLen} values ${os}, got ${describe(out)}`);
      if (out.length < oLen) throw new RangeError(`sdpa: out has ${out.length} values, needs ${oLen} for ${os}`);
    }
    const c = this.#call;
    c.q = q; c.k = k; c.v = v; c.batch = batch; c.heads = heads; c.kvHeads = kvHeads;
    c.nq = nq; c.nk = nk; c.dk = dk; c.dv = dv; c.layout = layout; c.mask = mask; c.bias = bias;
    c.scale = options.scale == null ? 1 / Math.sqrt(dk) : checkScale(options.scale, 'sdpa: scale', dk);
    c.causal = options.causal == null ? false : checkBool(options.causal, 'sdpa: causal');
    c.softcap = options.softcap == null ? 0 : checkSoftcap(options.softcap, 'sdpa: softcap');
    c.window = options.window == null ? null : checkWindow(options.window, 'sdpa: window');
    c.queryOffset = 0;
    c.queryOffsets = null;
    if (options.queryOffset != null) setOffset(c, options.queryOffset, 'sdpa: queryOffset', batch);
    c.kvLengths = options.kvLengths == null ? null : checkLengths(options.kvLengths, 'sdpa: kvLengths', batch, nk);
    c.steps = options.steps == null ? false : checkBool(options.steps, 'sdpa: steps');
    c.stats = options.stats == null ? false : checkBool(options.stats, 'sdpa: stats');
    c.out = out ?? undefined;
    return this.#sdpa(c);
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
    checkOptions(options, ['wq', 'wk', 'wv', 'wo', 'heads', 'kvHeads', 'context', 'causal', 'mask', 'bias', 'steps', 'scale',
      'softcap', 'window', 'queryOffset'], 'multiHeadAttention');
    const name = 'multiHeadAttention';
    const { X, C, heads, kvHeads, WQ, WK, WV, WO, dk, dv } = projections(x, options, name);
    const n = X.rows, m = C.rows;
    const mask = options.mask == null ? null : flatBcast(toMask(options.mask, `${name}: mask`, n, m), m);
    const bias = options.bias == null ? null : flatBcast(toMatrix(options.bias, `${name}: bias`, n, m).data, m);
    const steps = checkBool(options.steps, `${name}: steps`);
    const c = newCall();
    c.heads = heads; c.kvHeads = kvHeads; c.nq = n; c.nk = m; c.dk = dk; c.dv = dv; c.layout = 'bshd';
    c.mask = mask; c.bias = bias;
    c.causal = checkBool(options.causal, `${name}: causal`);
    c.scale = checkScale(options.scale, `${name}: scale`, dk);
    c.softcap = checkSoftcap(options.softcap, `${name}: softcap`);
    c.window = checkWindow(options.window, `${name}: window`);
    setOffset(c, options.queryOffset, `${name}: queryOffset`);
    c.steps = steps;
    // The projections are (n, heads * d): the bshd layout, read in place.
    const Q = this.matmul(X, WQ), K = this.matmul(C, WK), V = this.matmul(C, WV);
    c.q = Q.data;
    c.k = K.data;
    c.v = V.data;
    const r = this.#sdpa(c);
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

  /**
   * A key/value cache in wasm memory: append keys and values token by token,
   * attend over them in place (no copy of K and V per call).
   * @param {{ batch?: number, kvHeads?: number, dk: number, dv?: number, capacity: number, layout?: 'bhsd' | 'bshd' }} options
   * @returns {KVCache}
   */
  kvCache(options) {
    const ex = this.#live();
    checkOptions(options, ['batch', 'kvHeads', 'dk', 'dv', 'capacity', 'layout'], 'kvCache');
    const batch = checkCount(options.batch, 'kvCache: batch', 1);
    const kvHeads = checkCount(options.kvHeads, 'kvCache: kvHeads', 1);
    const dk = checkCount(options.dk, 'kvCache: dk');
    const dv = checkCount(options.dv, 'kvCache: dv', dk);
    const capacity = checkCount(options.capacity, 'kvCache: capacity');
    const layout = checkLayout(options.layout, 'kvCache: layout');
    const kBytes = batch * kvHeads * capacity * dk * 4, vBytes = batch * kvHeads * capacity * dv * 4;
    if (kBytes + vBytes > MAX_ARENA_BYTES) {
      throw new RangeError(`kvCache: a capacity of ${capacity} needs ${formatBytes(kBytes + vBytes)} of wasm memory; wasm32 holds at most 4 GiB`);
    }
    const kAt = ex.malloc(kBytes) >>> 0;
    const vAt = kAt === 0 ? 0 : ex.malloc(vBytes) >>> 0;
    if (vAt === 0) {
      if (kAt !== 0) ex.free(kAt);
      throw new RangeError(`kvCache: a capacity of ${capacity} needs ${formatBytes(kBytes + vBytes)} of wasm memory, and the memory could not grow that far`);
    }
    const host = {
      live: () => this.#live(),
      f32: () => {
        this.#views();
        return this.#f32;
      },
      sdpa: (c) => this.#sdpa(c),
      free: (ptr) => this.#exports?.free(ptr),
    };
    return new KVCache(host, { batch, kvHeads, dk, dv, capacity, layout, kAt, vAt });
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

  // --- Backward pass (gradients). Appended: the forward above is untouched.

  // The one way into attn_sdpa_backward; `c` is a call spec as #sdpa takes
  // (checked already) plus dout, out (or null), lse (or null) and dbias
  // (whether to return the bias's gradient). Lays out the shape, options and
  // attn_grads structs, the tensors and the scratch in the arena.
  #backward(c) {
    const ex = this.#live();
    const { batch, heads, kvHeads, nq, nk, dk, dv } = c;
    const qLen = batch * heads * nq * dk, kLen = batch * kvHeads * nk * dk, vLen = batch * kvHeads * nk * dv;
    const oLen = batch * heads * nq * dv, lLen = c.lse ? batch * heads * nq : 0;
    const bLen = c.bias ? c.bias.data.length : 0, dbLen = c.dbias && c.bias ? bLen : 0, mLen = c.mask ? c.mask.data.length : 0;
    const iLen = (c.queryOffsets ? batch : 0) + (c.kvLengths ? batch : 0);
    // Float offsets from the arena start, each region 16-byte aligned: the
    // structs (shape 76 bytes, options 72, grads 16), int32 per-batch
    // arrays, the tensors, scratch; the mask (bytes) last.
    const SHAPE = 0, OPTS = 20, GRADS = 40, I32 = 44;
    const qO = I32 + align(iLen), kO = qO + align(qLen), vO = kO + align(kLen), oO = vO + align(vLen);
    const dO = oO + align(c.out ? oLen : 0), lO = dO + align(oLen), bO = lO + align(lLen);
    const dqO = bO + align(bLen), dkO = dqO + align(qLen), dvO = dkO + align(kLen), dbO = dvO + align(vLen);
    const xO = dbO + align(dbLen);
    if (xO * 4 + 256 > this.#arenaBytes) this.#reserve([xO * 4 + 256], 'this backward call');
    else if (this.#f32.length === 0) this.#views();
    let base = this.#arena, at = base >>> 2;
    this.#writeShape(at + SHAPE, c);
    const scratch = ex.attn_sdpa_backward_scratch_size(base + SHAPE * 4) >>> 0;
    if (scratch === 0) throw new RangeError(`attention-wasm: sizes nq=${nq} nk=${nk} dk=${dk} dv=${dv} are too large for wasm32`);
    const mO = xO + scratch;
    if (mO * 4 + mLen > this.#arenaBytes) {
      this.#reserve([mO * 4 + mLen], 'this backward call');
      base = this.#arena;
      at = base >>> 2;
      this.#writeShape(at + SHAPE, c);
    } else if (this.#f32.length === 0) this.#views();
    const f32 = this.#f32, i32 = this.#i32, addr = (o) => base + o * 4;
    try {
      writeOptions(f32, i32, at + OPTS, c, c.mask ? addr(mO) : 0, c.bias ? addr(bO) : 0, addr(I32));
      i32[at + GRADS] = addr(dqO);
      i32[at + GRADS + 1] = addr(dkO);
      i32[at + GRADS + 2] = addr(dvO);
      i32[at + GRADS + 3] = dbLen ? addr(dbO) : 0;
      copyIn(f32, c.q, at + qO);
      copyIn(f32, c.k, at + kO);
      copyIn(f32, c.v, at + vO);
      if (c.out) copyIn(f32, c.out, at + oO);
      copyIn(f32, c.dout, at + dO);
      if (c.lse) copyIn(f32, c.lse, at + lO);
      if (c.bias) copyIn(f32, c.bias.data, at + bO);
      if (c.mask) this.#u8.set(c.mask.data, addr(mO));
      this.#check(ex.attn_sdpa_backward(
        addr(SHAPE), addr(qO), addr(kO), addr(vO), c.out ? addr(oO) : 0, addr(dO), c.lse ? addr(lO) : 0,
        addr(OPTS), addr(GRADS), addr(xO), scratch,
      ), 'backward');
      const result = {
        dq: f32.slice(at + dqO, at + dqO + qLen),
        dk: f32.slice(at + dkO, at + dkO + kLen),
        dv: f32.slice(at + dvO, at + dvO + vLen),
      };
      if (dbLen) result.dbias = f32.slice(at + dbO, at + dbO + dbLen);
      return result;
    } finally {
      this.#release();
    }
  }

  /**
   * Gradients of attention() for one head, given dOutput = dL/d(output)
   * (nq, dv): { dq, dk, dv } as Matrix objects, and dbias (nq, nk) when a
   * bias was given. PyTorch: autograd of scaled_dot_product_attention.
   */
  attentionBackward(q, k, v, dOutput, options = {}) {
    this.#live();
    const name = 'attentionBackward';
    checkOptions(options, ['causal', 'mask', 'bias', 'scale', 'softcap', 'window', 'queryOffset'], name);
    const Q = toMatrix(q, `${name}: q`);
    const K = toMatrix(k, `${name}: k`, undefined, Q.cols);
    const V = toMatrix(v, `${name}: v`, K.rows);
    const nq = Q.rows, nk = K.rows, dk = Q.cols, dv = V.cols;
    const dO = toMatrix(dOutput, `${name}: dOutput`, nq, dv);
    const mask = options.mask == null ? null : flatBcast(toMask(options.mask, `${name}: mask`, nq, nk), nk);
    const bias = options.bias == null ? null : flatBcast(toMatrix(options.bias, `${name}: bias`, nq, nk).data, nk);
    const g = this.#backward({
      q: Q.data, k: K.data, v: V.data, batch: 1, heads: 1, kvHeads: 1, nq, nk, dk, dv, layout: 'bhsd', mask, bias,
      scale: checkScale(options.scale, `${name}: scale`, dk), causal: checkBool(options.causal, `${name}: causal`),
      softcap: checkSoftcap(options.softcap, `${name}: softcap`), window: checkWindow(options.window, `${name}: window`),
      ...checkOffset(options.queryOffset, `${name}: queryOffset`, 1), kvLengths: null,
      out: null, dout: dO.data, lse: null, dbias: bias !== null,
    });
    const result = { dq: new Matrix(nq, dk, g.dq), dk: new Matrix(nk, dk, g.dk), dv: new Matrix(nk, dv, g.dv) };
    if (bias) result.dbias = new Matrix(nq, nk, g.dbias);
    return result;
  }

  /**
   * Gradients of sdpa() over flat arrays in its layout, given the forward's
   * output (or null) and dOutput (like the output): { dq, dk, dv } like q, k,
   * v (a kv head sums the gradients of its query heads), and dbias (like the
   * bias, summed over its broadcast dims) when a bias was given.
   * options.lse (batch, heads, nq), from sdpa({ stats: true }), saves a pass.
   */
  sdpaBackward(q, k, v, output, dOutput, options) {
    this.#live();
    const name = 'sdpaBackward';
    if (options === null || typeof options !== 'object') {
      throw new TypeError(`${name}: options must be an object with nq, nk, dk, dv, got ${describe(options)}`);
    }
    checkKeys(options, SDPA_BACKWARD_OPTIONS, name);
    const { batch = 1, heads = 1, nq, nk, dk, dv, lse } = options;
    const kvHeads = options.kvHeads ?? heads;
    checkSize(batch, `${name}: batch`);
    checkSize(heads, `${name}: heads`);
    checkSize(kvHeads, `${name}: kvHeads`);
    checkSize(nq, `${name}: nq`);
    checkSize(nk, `${name}: nk`);
    checkSize(dk, `${name}: dk`);
    checkSize(dv, `${name}: dv`);
    if (heads % kvHeads !== 0) throw new RangeError(`${name}: heads (${heads}) must be a multiple of kvHeads (${kvHeads})`);
    const layout = checkLayout(options.layout, `${name}: layout`);
    const bshd = layout === 'bshd';
    const qDims = bshd ? [batch, nq, heads, dk] : [batch, heads, nq, dk];
    const kDims = bshd ? [batch, nk, kvHeads, dk] : [batch, kvHeads, nk, dk];
    const vDims = bshd ? [batch, nk, kvHeads, dv] : [batch, kvHeads, nk, dv];
    const oDims = bshd ? [batch, nq, heads, dv] : [batch, heads, nq, dv];
    const [qs, ks, vs, os] = bshd
      ? ['(batch, nq, heads, dk)', '(batch, nk, kvHeads, dk)', '(batch, nk, kvHeads, dv)', '(batch, nq, heads, dv)']
      : ['(batch, heads, nq, dk)', '(batch, kvHeads, nk, dk)', '(batch, kvHeads, nk, dv)', '(batch, heads, nq, dv)'];
    checkFlat(q, Float32Array, `${name}: q`, qDims, qs);
    checkFlat(k, Float32Array, `${name}: k`, kDims, ks);
    checkFlat(v, Float32Array, `${name}: v`, vDims, vs);
    if (output != null) checkFlat(output, Float32Array, `${name}: output`, oDims, os);
    checkFlat(dOutput, Float32Array, `${name}: dOutput`, oDims, os);
    if (lse != null) checkFlat(lse, Float32Array, `${name}: lse`, [batch, heads, nq], '(batch, heads, nq)');
    const dims = [batch, heads, nq, nk];
    const mask = options.mask == null ? null : checkBcast(options.mask, Uint8Array, `${name}: mask`, dims);
    const bias = options.bias == null ? null : checkBcast(options.bias, Float32Array, `${name}: bias`, dims);
    return this.#backward({
      q, k, v, batch, heads, kvHeads, nq, nk, dk, dv, layout, mask, bias,
      scale: checkScale(options.scale, `${name}: scale`, dk),
      causal: checkBool(options.causal, `${name}: causal`),
      softcap: checkSoftcap(options.softcap, `${name}: softcap`),
      window: checkWindow(options.window, `${name}: window`),
      ...checkOffset(options.queryOffset, `${name}: queryOffset`, batch),
      kvLengths: options.kvLengths == null ? null : checkLengths(options.kvLengths, `${name}: kvLengths`, batch, nk),
      out: output ?? null, dout: dOutput, lse: lse ?? null, dbias: bias !== null,
    });
  }

  /**
   * Gradients of multiHeadAttention(x, options) given dOutput (like its
   * output): { dx, dwq, dwk, dwv } as Matrix objects, dwo when options.wo was
   * given, and dcontext (the paths through K and V) for cross-attention.
   */
  multiHeadAttentionBackward(x, dOutput, options) {
    this.#live();
    const name = 'multiHeadAttentionBackward';
    if (options === null || typeof options !== 'object') {
      throw new TypeError(`${name}: options must be an object with wq, wk, wv, heads, got ${describe(options)}`);
    }
    checkOptions(options, ['wq', 'wk', 'wv', 'wo', 'heads', 'kvHeads', 'context', 'causal', 'mask', 'bias', 'scale',
      'softcap', 'window', 'queryOffset'], name);
    const { X, C, heads, kvHeads, WQ, WK, WV, WO, dk, dv } = projections(x, options, name);
    const n = X.rows, m = C.rows;
    const dO = toMatrix(dOutput, `${name}: dOutput`, n, WO ? WO.cols : heads * dv);
    const mask = options.mask == null ? null : flatBcast(toMask(options.mask, `${name}: mask`, n, m), m);
    const bias = options.bias == null ? null : flatBcast(toMatrix(options.bias, `${name}: bias`, n, m).data, m);
    const c = {
      batch: 1, heads, kvHeads, nq: n, nk: m, dk, dv, layout: 'bshd', mask, bias,
      causal: checkBool(options.causal, `${name}: causal`), scale: checkScale(options.scale, `${name}: scale`, dk),
      softcap: checkSoftcap(options.softcap, `${name}: softcap`), window: checkWindow(options.window, `${name}: window`),
      ...checkOffset(options.queryOffset, `${name}: queryOffset`, 1), kvLengths: null, steps: false, stats: true,
    };
    // The projections are (n, heads * d): the bshd layout, read in place,
    // and the gradients come back in it: dq is dL/dQ as a (n, heads * dk) matrix.
    const Q = this.matmul(X, WQ), K = this.matmul(C, WK), V = this.matmul(C, WV);
    c.q = Q.data;
    c.k = K.data;
    c.v = V.data;
    const spec = { ...c }; // #sdpa lets go of the call's arrays when it returns
    const forward = this.#sdpa(c);
    const concat = new Matrix(n, heads * dv, forward.output);
    const dConcat = WO ? this.matmul(dO, transpose(WO)) : dO;
    const g = this.#backward({ ...spec, out: forward.output, dout: dConcat.data, lse: forward.lse, dbias: false });
    const dQ = new Matrix(n, heads * dk, g.dq), dK = new Matrix(m, kvHeads * dk, g.dk), dV = new Matrix(m, kvHeads * dv, g.dv);
    const Xt = transpose(X), Ct = options.context == null ? Xt : transpose(C);
    const result = { dx: this.matmul(dQ, transpose(WQ)), dwq: this.matmul(Xt, dQ), dwk: this.matmul(Ct, dK), dwv: this.matmul(Ct, dV) };
    if (WO) result.dwo = this.matmul(transpose(concat), dO);
    const dc = addInto(this.matmul(dK, transpose(WK)), this.matmul(dV, transpose(WV)));
    if (options.context == null) addInto(result.dx, dc);
    else result.dcontext = dc;
    return result;
  }
}

/**
 * Keys and values of a generation in wasm memory, (batch, kvHeads, capacity,
 * d) for layout 'bhsd' or (batch, capacity, kvHeads, d) for 'bshd'. Made by
 * Attention#kvCache; attend() reads them in place.
 */
export class KVCache {
  #host;
  #kAt; // byte addresses of the K and V buffers
  #vAt;
  #length = 0;
  #disposed = false;

  /** @internal use Attention#kvCache() */
  constructor(host, { batch, kvHeads, dk, dv, capacity, layout, kAt, vAt }) {
    this.#host = host;
    this.#kAt = kAt;
    this.#vAt = vAt;
    /** @readonly */ this.batch = batch;
    /** @readonly */ this.kvHeads = kvHeads;
    /** @readonly */ this.dk = dk;
    /** @readonly */ this.dv = dv;
    /** @readonly */ this.capacity = capacity;
    /** @readonly */ this.layout = layout;
  }

  /** Tokens held. */
  get length() {
    return this.#length;
  }

  #live(fn) {
    if (this.#disposed) throw new Error(`kvCache.${fn}: this cache was disposed`);
    this.#host.live();
  }

  // Strides (batch, head, row) of the K (d = dk) or V (d = dv) buffer, in elements.
  #strides(d) {
    const { kvHeads, capacity } = this;
    return this.layout === 'bshd' ? [capacity * kvHeads * d, d, kvHeads * d] : [kvHeads * capacity * d, capacity * d, d];
  }

  /**
   * Appends t >= 1 tokens: k flat (batch, kvHeads, t, dk) and v (batch,
   * kvHeads, t, dv), or (batch, t, kvHeads, d) for layout 'bshd'. Past the
   * capacity it throws a RangeError and the cache is unchanged.
   */
  append(k, v) {
    this.#live('append');
    const { batch, kvHeads, dk, dv, capacity } = this;
    const shape = (d, label) => (this.layout === 'bshd' ? `(batch, t, kvHeads, ${label}) = (${batch}, t, ${kvHeads}, ${d})` : `(batch, kvHeads, t, ${label}) = (${batch}, ${kvHeads}, t, ${d})`);
    if (!(k instanceof Float32Array)) throw new TypeError(`kvCache.append: k must be a Float32Array ${shape(dk, 'dk')}, got ${describe(k)}`);
    if (!(v instanceof Float32Array)) throw new TypeError(`kvCache.append: v must be a Float32Array ${shape(dv, 'dv')}, got ${describe(v)}`);
    const t = k.length / (batch * kvHeads * dk);
    if (!Number.isInteger(t) || t < 1) throw new RangeError(`kvCache.append: k has ${k.length} values, not a positive multiple of batch * kvHeads * dk = ${batch * kvHeads * dk} for ${shape(dk, 'dk')}`);
    if (v.length !== t * batch * kvHeads * dv) throw new RangeError(`kvCache.append: v has ${v.length} values, expected ${t * batch * kvHeads * dv} for ${shape(dv, 'dv')} with t = ${t} (from k)`);
    if (this.#length + t > capacity) {
      throw new RangeError(`kvCache.append: ${t} more tokens would pass the capacity of ${capacity} (it holds ${this.#length}); the cache is unchanged`);
    }
    const f32 = this.#host.f32();
    this.#copy(f32, k, this.#kAt >>> 2, dk, t, true);
    this.#copy(f32, v, this.#vAt >>> 2, dv, t, true);
    this.#length += t;
  }

  // Copies t tokens between a flat user array and the buffer at float index
  // `at`, from token position #length on (into) or the held tokens (out).
  #copy(f32, flat, at, d, t, into) {
    const { batch, kvHeads, capacity } = this;
    if (this.layout === 'bshd') {
      const run = t * kvHeads * d; // (t, kvHeads, d) of one batch entry is contiguous
      for (let b = 0; b < batch; b++) {
        const mem = at + b * capacity * kvHeads * d + (into ? this.#length * kvHeads * d : 0);
        if (into) f32.set(flat.subarray(b * run, (b + 1) * run), mem);
        else flat.set(f32.subarray(mem, mem + run), b * run);
      }
    } else {
      const run = t * d;
      for (let bh = 0; bh < batch * kvHeads; bh++) {
        const mem = at + bh * capacity * d + (into ? this.#length * d : 0);
        if (into) f32.set(flat.subarray(bh * run, (bh + 1) * run), mem);
        else flat.set(f32.subarray(mem, mem + run), bh * run);
      }
    }
  }

  /** A copy of the held keys, (batch, kvHeads, length, dk) in the cache's layout (ONNX present_key). */
  keys() {
    this.#live('keys');
    const out = new Float32Array(this.batch * this.kvHeads * this.#length * this.dk);
    this.#copy(this.#host.f32(), out, this.#kAt >>> 2, this.dk, this.#length, false);
    return out;
  }

  /** A copy of the held values, (batch, kvHeads, length, dv) in the cache's layout (ONNX present_value). */
  values() {
    this.#live('values');
    const out = new Float32Array(this.batch * this.kvHeads * this.#length * this.dv);
    this.#copy(this.#host.f32(), out, this.#vAt >>> 2, this.dv, this.#length, false);
    return out;
  }

  /**
   * Attention of q over the held keys and values, read in place. q and the
   * output are in the cache's layout: (batch, heads, nq, dk) or (batch, nq,
   * heads, dk). queryOffset defaults to length - nq (the queries are the
   * newest tokens), or with kvLengths to kvLengths[b] - nq for batch entry b
   * (the newest tokens of that entry). Other options as Attention#sdpa, with nk = length.
   */
  attend(q, options = {}) {
    this.#live('attend');
    checkOptions(options, ['heads', 'nq', 'causal', 'mask', 'bias', 'softcap', 'window', 'queryOffset', 'kvLengths', 'scale', 'steps', 'stats', 'out'], 'kvCache.attend');
    const { batch, kvHeads, dk, dv } = this;
    const nk = this.#length;
    if (nk === 0) throw new RangeError('kvCache.attend: the cache is empty; append keys and values first');
    const heads = checkCount(options.heads, 'kvCache.attend: heads', kvHeads);
    if (heads % kvHeads !== 0) throw new RangeError(`kvCache.attend: heads (${heads}) must be a multiple of kvHeads (${kvHeads})`);
    if (!(q instanceof Float32Array)) throw new TypeError(`kvCache.attend: q must be a Float32Array (batch, heads, nq, dk), got ${describe(q)}`);
    const qs = this.layout === 'bshd' ? '(batch, nq, heads, dk)' : '(batch, heads, nq, dk)';
    const nq = options.nq == null ? q.length / (batch * heads * dk) : checkCount(options.nq, 'kvCache.attend: nq');
    if (!Number.isInteger(nq) || nq < 1 || q.length !== batch * heads * nq * dk) throw new RangeError(`kvCache.attend: q has ${q.length} values, expected a positive multiple of batch * heads * dk = ${batch * heads * dk} for ${qs}${options.nq == null ? '' : ` with nq = ${nq}`}`);
    const dims = [batch, heads, nq, nk];
    const oLen = batch * heads * nq * dv, out = options.out;
    if (out != null) {
      if (!(out instanceof Float32Array)) throw new TypeError(`kvCache.attend: out must be a Float32Array of ${oLen} values, got ${describe(out)}`);
      if (out.length < oLen) throw new RangeError(`kvCache.attend: out has ${out.length} values, needs ${oLen}`);
    }
    const c = newCall();
    c.q = q; c.batch = batch; c.heads = heads; c.kvHeads = kvHeads; c.nq = nq; c.nk = nk; c.dk = dk; c.dv = dv;
    c.layout = this.layout;
    c.kAt = this.#kAt; c.vAt = this.#vAt; c.kStrides = this.#strides(dk); c.vStrides = this.#strides(dv);
    c.mask = options.mask == null ? null : checkBcast(options.mask, Uint8Array, 'kvCache.attend: mask', dims);
    c.bias = options.bias == null ? null : checkBcast(options.bias, Float32Array, 'kvCache.attend: bias', dims);
    c.scale = checkScale(options.scale, 'kvCache.attend: scale', dk);
    c.causal = checkBool(options.causal, 'kvCache.attend: causal');
    c.softcap = checkSoftcap(options.softcap, 'kvCache.attend: softcap');
    c.window = checkWindow(options.window, 'kvCache.attend: window');
    c.kvLengths = options.kvLengths == null ? null : checkLengths(options.kvLengths, 'kvCache.attend: kvLengths', batch, nk);
    // The queries are the newest tokens: of the cache, or of each batch
    // entry's own keys when kvLengths says how many it holds.
    c.queryOffset = nk - nq;
    if (options.queryOffset != null) setOffset(c, options.queryOffset, 'kvCache.attend: queryOffset', batch);
    else if (c.kvLengths) c.queryOffsets = Int32Array.from(c.kvLengths, (n) => n - nq);
    c.steps = checkBool(options.steps, 'kvCache.attend: steps');
    c.stats = checkBool(options.stats, 'kvCache.attend: stats');
    c.out = out ?? undefined;
    return this.#host.sdpa(c);
  }

  /** Forgets the held tokens (length 0); the memory stays reserved. */
  clear() {
    this.#live('clear');
    this.#length = 0;
  }

  /** Returns the cache's memory to the instance; later calls throw. */
  dispose() {
    if (this.#disposed) return;
    this.#disposed = true;
    this.#host.free(this.#kAt);
    this.#host.free(this.#vAt);
    this.#length = 0;
  }
}

const SDPA_OPTIONS = ['batch', 'heads', 'kvHeads', 'nq', 'nk', 'dk', 'dv', 'causal', 'mask', 'bias', 'scale', 'out',
  'layout', 'softcap', 'window', 'queryOffset', 'kvLengths', 'steps', 'stats'];

// SDPA_OPTIONS as a switch, for the check on every sdpa call: a switch beats
// allowed.includes() by about 2x, and a call of a few tokens is short
// (bench/RESULTS.md).
function isSdpaOption(key) {
  switch (key) {
    case 'batch': case 'heads': case 'kvHeads': case 'nq': case 'nk': case 'dk': case 'dv':
    case 'causal': case 'mask': case 'bias': case 'scale': case 'out':
    case 'layout': case 'softcap': case 'window': case 'queryOffset': case 'kvLengths': case 'steps': case 'stats':
      return true;
    default:
      return false;
  }
}

// What #sdpa takes, always made here so every call site gives it the same
// object shape (V8 then keeps its property loads monomorphic).
function newCall() {
  return {
    q: null, k: null, v: null, batch: 1, heads: 1, kvHeads: 1, nq: 0, nk: 0, dk: 0, dv: 0, layout: 'bhsd',
    mask: null, bias: null, scale: 0, causal: false, softcap: 0, window: null, queryOffset: 0, queryOffsets: null,
    kvLengths: null, steps: false, stats: false, out: undefined,
    kAt: undefined, vAt: undefined, kStrides: null, vStrides: null, // a KV cache read in place
  };
}

// c.queryOffset / c.queryOffsets from a checked queryOffset option.
function setOffset(c, value, name, batch = 1) {
  if (value == null) return;
  const offset = checkOffset(value, name, batch);
  c.queryOffset = offset.queryOffset;
  c.queryOffsets = offset.queryOffsets;
}

const NO_OFFSET = Object.freeze({ queryOffset: 0, queryOffsets: null });
const INT32_MAX = 2 ** 31 - 1;

// n rounded up to a multiple of 4 floats (16 bytes); not bitwise: counts may pass 2^31.
function align(n) {
  return Math.ceil(n / 4) * 4;
}

function checkLayout(value, name) {
  if (value == null) return 'bhsd';
  if (typeof value !== 'string') throw new TypeError(`${name} must be 'bhsd' or 'bshd', got ${describe(value)}`);
  if (value !== 'bhsd' && value !== 'bshd') throw new RangeError(`${name} must be 'bhsd' or 'bshd', got ${describe(value)}`);
  return value;
}

// softcap: absent -> 0 (none), else a finite number > 0.
function checkSoftcap(value, name) {
  if (value == null) return 0;
  if (typeof value !== 'number') throw new TypeError(`${name} must be a finite number > 0, got ${describe(value)}`);
  if (!(value > 0) || !Number.isFinite(value)) throw new RangeError(`${name} must be a finite number > 0, got ${value}`);
  return value;
}

// window: absent -> null, else [left, right], integers >= -1 (-1 unbounded).
function checkWindow(value, name) {
  if (value == null) return null;
  if (!(Array.isArray(value) || ArrayBuffer.isView(value)) || value.length !== 2) {
    throw new TypeError(`${name} must be [left, right] (integers, -1 for unbounded), got ${describe(value)}`);
  }
  for (const side of [0, 1]) {
    const x = value[side];
    if (typeof x !== 'number') throw new TypeError(`${name}[${side}] must be an integer >= -1, got ${describe(x)}`);
    if (!Number.isInteger(x) || x < -1 || x > INT32_MAX) throw new RangeError(`${name}[${side}] must be an integer >= -1, got ${x}`);
  }
  return value[0] === -1 && value[1] === -1 ? null : [value[0], value[1]];
}

// queryOffset: absent -> 0, an int32, or an Int32Array(batch).
function checkOffset(value, name, batch) {
  if (value == null) return NO_OFFSET;
  if (typeof value === 'number') {
    if (!Number.isInteger(value) || value < -INT32_MAX || value > INT32_MAX) {
      throw new RangeError(`${name} must be an integer (or an Int32Array of batch = ${batch} integers), got ${value}`);
    }
    return { queryOffset: value, queryOffsets: null };
  }
  if (!(value instanceof Int32Array)) {
    throw new TypeError(`${name} must be an integer or an Int32Array of batch = ${batch} integers, got ${describe(value)}`);
  }
  if (value.length !== batch) throw new RangeError(`${name} has ${value.length} values, expected batch = ${batch}`);
  return { queryOffset: 0, queryOffsets: value };
}

// kvLengths: an Int32Array(batch), each in [0, nk].
function checkLengths(value, name, batch, nk) {
  if (!(value instanceof Int32Array)) throw new TypeError(`${name} must be an Int32Array of batch = ${batch} lengths, got ${describe(value)}`);
  if (value.length !== batch) throw new RangeError(`${name} has ${value.length} values, expected batch = ${batch}`);
  for (let b = 0; b < batch; b++) {
    if (value[b] < 0 || value[b] > nk) throw new RangeError(`${name}[${b}] is ${value[b]}, must be in [0, nk = ${nk}]`);
  }
  return value;
}

// A flat (nq, nk) mask or bias, broadcast over batch and heads.
function flatBcast(data, nk) {
  return { data, strides: [0, 0, nk], cols: nk };
}

// A mask (Uint8Array) or bias (Float32Array): flat (nq, nk), or
// { data, shape } with 2 to 4 dims broadcast numpy-style (right aligned,
// size-1 dims repeat) to dims = [batch, heads, nq, nk]; a last dim shorter
// than nk leaves the keys past it not allowed. Returns { data, strides, cols }
// with strides (batch, head, row) in elements, 0 where broadcast.
function checkBcast(value, Type, name, dims) {
  const [, , nq, nk] = dims;
  if (value instanceof Type || !(value !== null && typeof value === 'object' && 'shape' in value)) {
    checkFlat(value, Type, name, [nq, nk], '(nq, nk) (or pass { data, shape } to broadcast)');
    return flatBcast(value, nk);
  }
  const { data, shape } = value;
  if (!Array.isArray(shape) || shape.length < 2 || shape.length > 4) {
    throw new TypeError(`${name}.shape must be an array of 2 to 4 dims broadcastable to (batch, heads, nq, nk) = (${dims.join(', ')}), got ${describe(shape)}`);
  }
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

// The matrices and sizes of a multi-head layer (multiHeadAttention and its
// backward), checked in one order so both calls name the same errors.
function projections(x, options, name) {
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

// attn_strides (batch, head, row) at int index o; addresses and strides are
// below 2^32 and written as int32 bit patterns.
function writeStrides(i32, o, s) {
  i32[o] = s[0]; i32[o + 1] = s[1]; i32[o + 2] = s[2];
}

// attn_bcast at int index o for a checked mask or bias ({ data, strides, cols }).
function writeBcast(i32, o, m) {
  if (!m) {
    i32[o] = 0; i32[o + 1] = 0; i32[o + 2] = 0; i32[o + 3] = 0;
    return;
  }
  i32[o] = m.strides[0]; i32[o + 1] = m.strides[1]; i32[o + 2] = m.strides[2]; i32[o + 3] = m.cols;
}

// attn_options at int index o for a checked call c, the one place its layout
// is written (forward and backward): mask and bias at the given byte
// addresses, and the per-batch int32 arrays copied to byte address intsAt
// (16-byte aligned, room for both): queryOffsets first, then kvLengths.
function writeOptions(f32, i32, o, c, maskAt, biasAt, intsAt) {
  f32[o] = c.scale;
  i32[o + 1] = (c.causal ? ATTN_CAUSAL : 0) | (c.window ? ATTN_WINDOW : 0);
  i32[o + 2] = maskAt;
  writeBcast(i32, o + 3, c.mask);
  i32[o + 7] = biasAt;
  writeBcast(i32, o + 8, c.bias);
  f32[o + 12] = c.softcap;
  i32[o + 13] = c.window ? c.window[0] : -1;
  i32[o + 14] = c.window ? c.window[1] : -1;
  i32[o + 15] = c.queryOffsets ? 0 : c.queryOffset;
  let ip = intsAt;
  i32[o + 16] = c.queryOffsets ? ip : 0;
  if (c.queryOffsets) { i32.set(c.queryOffsets, ip >>> 2); ip += 4 * c.queryOffsets.length; }
  i32[o + 17] = c.kvLengths ? ip : 0;
  if (c.kvLengths) i32.set(c.kvLengths, ip >>> 2);
}

function formatBytes(bytes) {
  return bytes >= 2 ** 30 ? `${(bytes / 2 ** 30).toFixed(1)} GiB` : `${(bytes / 2 ** 20).toFixed(1)} MiB`;
}

// --- Backward pass helpers.

const SDPA_BACKWARD_OPTIONS = ['batch', 'heads', 'kvHeads', 'nq', 'nk', 'dk', 'dv', 'causal', 'mask', 'bias', 'scale',
  'layout', 'softcap', 'window', 'queryOffset', 'kvLengths', 'lse'];

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
