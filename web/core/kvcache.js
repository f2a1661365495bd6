// kvcache.js - a key/value cache in wasm memory: keys and values appended
// token by token and read in place by attend (no copy of K and V per call),
// held as float32, float16 or int8 (c/attention.h, COMPACT KV CACHES).

import { MAX_ARENA_BYTES, formatBytes } from './instance.js';
import { describe } from './matrix.js';
import { KV_DTYPE } from './abi.js';
import { appendTokens, attendCall } from './calls.js';
import { checkCacheRope, checkKeys, checkRope } from './options.js';
import { ropeKeys } from './rope.js';

// Bytes per element of each dtype.
const ELEMENT_BYTES = Object.freeze({ float32: 4, float16: 2, int8: 1 });

/**
 * The buffers of a cache, in bytes: K, V and for int8 the scales of K's and
 * V's rows (a float32 per token and kv head).
 */
export function cacheSizes({ batch, kvHeads, dk, dv, capacity, dtype }) {
  const rows = batch * kvHeads * capacity, e = ELEMENT_BYTES[dtype];
  const sizes = [rows * dk * e, rows * dv * e];
  if (dtype === 'int8') sizes.push(rows * 4, rows * 4);
  return sizes;
}

/**
 * Throws truncate's TypeError (not a number) or RangeError (not an integer
 * in [0, held]) for `length`; a pool's cache checks with it too.
 */
export function checkTruncate(length, held) {
  const why = `kvCache.truncate: length must be an integer in [0, ${held}] (the tokens held), got ${describe(length)}`;
  if (typeof length !== 'number') throw new TypeError(why);
  if (!Number.isInteger(length) || length < 0 || length > held) throw new RangeError(why);
}

/**
 * Keys and values of a generation in wasm memory, (batch, kvHeads, capacity,
 * d) for layout 'bhsd' or (batch, capacity, kvHeads, d) for 'bshd', as
 * float32, float16 or int8 (with a float32 scale per token and kv head, in
 * the same layout without d). Made by Attention#kvCache; attend() reads
 * them in place.
 */
export class KVCache {
  #wasm;
  #kAt; // byte addresses of the K and V buffers
  #vAt;
  #kScalesAt = 0; // int8: byte addresses of the scales of K's and V's rows
  #vScalesAt = 0;
  #length = 0;
  #rope; // the rope the held keys were appended with (null: none); undefined while empty
  #disposed = false;

  /** @internal use Attention#kvCache(); the options are checked (checkCacheOptions) */
  constructor(wasm, { batch, kvHeads, dk, dv, capacity, layout, dtype }) {
    const sizes = cacheSizes({ batch, kvHeads, dk, dv, capacity, dtype });
    const bytes = sizes.reduce((a, b) => a + b, 0);
    const need = `kvCache: a capacity of ${capacity} needs ${formatBytes(bytes)} of wasm memory (${bytes} bytes: batch ${batch} x ${kvHeads} kv heads of dk = ${dk} and dv = ${dv} as ${dtype})`;
    if (bytes > MAX_ARENA_BYTES) throw new RangeError(`${need}; wasm32 holds at most 4 GiB`);
    const at = [];
    for (const size of sizes) {
      const ptr = wasm.malloc(size);
      if (ptr === 0) {
        for (const p of at) wasm.free(p);
        throw new RangeError(`${need}, and the memory could not grow that far`);
      }
      at.push(ptr);
    }
    this.#wasm = wasm;
    [this.#kAt, this.#vAt, this.#kScalesAt = 0, this.#vScalesAt = 0] = at;
    /** @readonly element type of the held keys and values */ this.dtype = dtype;
    /** @readonly bytes of wasm memory the cache holds (scales included) */ this.bytes = bytes;
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
    this.#wasm.live();
  }

  // Strides (batch, head, row) of the K (d = dk) or V (d = dv) buffer, in elements.
  #strides(d) {
    const { kvHeads, capacity } = this;
    return this.layout === 'bshd' ? [capacity * kvHeads * d, d, kvHeads * d] : [kvHeads * capacity * d, capacity * d, d];
  }

  // Strides (batch, head, row) of t tokens laid out as append's k and v.
  #flatStrides(d, t) {
    const { kvHeads } = this;
    return this.layout === 'bshd' ? [t * kvHeads * d, d, kvHeads * d] : [kvHeads * t * d, t * d, d];
  }

  /**
   * Appends t >= 1 tokens: k flat (batch, kvHeads, t, dk) and v (batch,
   * kvHeads, t, dv), or (batch, t, kvHeads, d) for layout 'bshd'. Past the
   * capacity it throws a RangeError and the cache is unchanged.
   * options.rope turns the keys at their positions (length ..) as they are
   * stored; attend then takes the same rope and turns only the queries.
   * Until the cache is empty again, appends and attends with another rope
   * (or none) are a RangeError: the held keys are turned one way.
   */
  append(k, v, options = {}) {
    this.#live('append');
    checkKeys(options, 'append', 'kvCache.append');
    const rope = checkRope(options.rope, 'kvCache.append: rope', this.dk);
    this.#live('append'); // a getter may have disposed the cache or its instance
    this.#append(k, v, rope, this.#length);
  }

  /**
   * @internal append with the keys turned (by a checked rope, or none) at
   * positions position .. position + t - 1 rather than at the held length:
   * a pool holder's one cache keeps runs of the whole cache's positions
   * back to back (web/pool/kvshard.js).
   */
  appendAt(k, v, rope, position) {
    this.#live('append');
    this.#append(k, v, rope, position);
  }

  #append(k, v, rope, position) {
    const { dk, dv } = this;
    const t = appendTokens(this, k, v, this.#length);
    checkCacheRope(this.#length === 0 ? undefined : this.#rope, rope, 'append');
    if (this.dtype === 'float32') {
      const f32 = this.#wasm.f32();
      this.#copy(f32, k, this.#kAt >>> 2, dk, t, true);
      this.#copy(f32, v, this.#vAt >>> 2, dv, t, true);
      if (rope) ropeKeys(this.#wasm, this.#kAt, this.#strides(dk), this, t, position, rope, this.#length);
    } else {
      // A compact cache's keys turn first, as float32 where kvWrite stages
      // them in wasm memory (laid out as k), then are written compact.
      const turn = rope ? (at) => ropeKeys(this.#wasm, at, this.#flatStrides(dk, t), this, t, position, rope, 0) : undefined;
      this.#wasm.kvWrite(KV_DTYPE[this.dtype], k, dk, this.#runs(dk, t, this.#kAt, this.#kScalesAt, this.#length), turn);
      this.#wasm.kvWrite(KV_DTYPE[this.dtype], v, dv, this.#runs(dv, t, this.#vAt, this.#vScalesAt, this.#length));
    }
    this.#length += t;
    this.#rope = rope;
  }

  // The runs of consecutive rows (of d values) that t tokens from position
  // `from` on occupy, in a flat (batch, kvHeads, t, d) or (batch, t,
  // kvHeads, d) array and in a compact buffer at byte address `at` (scales
  // at `scalesAt`): [first float of the flat array, rows, byte address of
  // the first row, byte address of its scale].
  #runs(d, t, at, scalesAt, from) {
    const { batch, kvHeads, capacity } = this, e = ELEMENT_BYTES[this.dtype], runs = [];
    if (this.layout === 'bshd') {
      for (let b = 0; b < batch; b++) {
        const row = (b * capacity + from) * kvHeads; // (t, kvHeads) rows of entry b are consecutive
        runs.push([b * t * kvHeads * d, t * kvHeads, at + row * d * e, scalesAt + row * 4]);
      }
    } else {
      for (let bh = 0; bh < batch * kvHeads; bh++) {
        const row = bh * capacity + from;
        runs.push([bh * t * d, t, at + row * d * e, scalesAt + row * 4]);
      }
    }
    return runs;
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

  /**
   * A copy of the held keys as float32, (batch, kvHeads, length, dk) in the
   * cache's layout (ONNX present_key): for float16 and int8 the values
   * attend computes with.
   */
  keys() {
    this.#live('keys');
    return this.#read(this.dk, this.#kAt, this.#kScalesAt);
  }

  /** A copy of the held values as float32, (batch, kvHeads, length, dv) in the cache's layout (ONNX present_value). */
  values() {
    this.#live('values');
    return this.#read(this.dv, this.#vAt, this.#vScalesAt);
  }

  #read(d, at, scalesAt) {
    const out = new Float32Array(this.batch * this.kvHeads * this.#length * d);
    if (this.#length === 0) return out;
    if (this.dtype === 'float32') this.#copy(this.#wasm.f32(), out, at >>> 2, d, this.#length, false);
    else this.#wasm.kvRead(KV_DTYPE[this.dtype], out, d, this.#runs(d, this.#length, at, scalesAt, 0));
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
    return this.#attend(q, options, 0, this.#length, true);
  }

  /**
   * @internal attend over the held positions [from, from + n) alone, as if
   * they were the whole cache (position from is position 0): a pool
   * holder's one cache keeps several runs of positions back to back
   * (web/pool/kvshard.js).
   */
  attendRange(q, options, from, n) {
    this.#range('attendRange', from, n);
    return this.#attend(q, options, from, n, false);
  }

  // Throws unless [from, from + n) is within the held tokens.
  #range(fn, from, n) {
    this.#live('attend');
    if (!Number.isInteger(from) || !Number.isInteger(n) || from < 0 || n < 0 || from + n > this.#length) {
      throw new RangeError(`kvCache.${fn}: [${from}, ${from} + ${n}) is not within the ${this.#length} held tokens`);
    }
  }

  /**
   * @internal attendRange's checked call, K and V read in place, made but
   * not run: a pool on shared memory lays it out for another thread
   * (web/pool/shared.js), which drops its arrays once it is written. With
   * g0 and g1, the call of kv heads [g0, g1) alone and of the query heads
   * that read them (q, output and lse hold those heads only); options
   * then have no mask or bias.
   */
  rangeCall(q, options, from, n, g0 = 0, g1 = this.kvHeads) {
    this.#range('rangeCall', from, n);
    const c = this.#call(q, options, from, n, false);
    return g0 === 0 && g1 === this.kvHeads ? c : kvHeadsOf(c, g0, g1, ELEMENT_BYTES[this.dtype]);
  }

  // ownRope: the call is the user's, so its rope must be the held keys'; a
  // pool holder's parts come with their queries turned already.
  #attend(q, options, from, n, ownRope) {
    return this.#wasm.sdpa(this.#call(q, options, from, n, ownRope));
  }

  // The checked call of #attend: K and V at their addresses in the memory.
  #call(q, options, from, n, ownRope) {
    const length = this.#length;
    const c = attendCall(q, options, this, n);
    // The options' getters may have disposed, refilled or cleared the cache:
    // its buffers and tokens are read only when they are as they were.
    this.#live('attend');
    if (this.#length !== length) throw new Error('kvCache.attend: the cache changed while the options were read (a getter appended, cleared or truncated it)');
    this.#wasm.refuseOwnMemory(c.out, 'kvCache.attend: out');
    if (ownRope) checkCacheRope(this.#rope, c.rope, 'attend');
    const e = ELEMENT_BYTES[this.dtype];
    c.kStrides = this.#strides(c.dk); c.vStrides = this.#strides(c.dv);
    // The row stride (the last) steps one position in either layout.
    c.kAt = this.#kAt + from * c.kStrides[2] * e; c.vAt = this.#vAt + from * c.vStrides[2] * e;
    c.kvDtype = KV_DTYPE[this.dtype];
    if (this.dtype === 'int8') {
      c.scaleStrides = this.#strides(1);
      c.kScalesAt = this.#kScalesAt + from * c.scaleStrides[2] * 4; c.vScalesAt = this.#vScalesAt + from * c.scaleStrides[2] * 4;
    }
    c.ropeQueries = c.rope !== null; // the keys were turned at append
    return c;
  }

  /** Forgets the held tokens (length 0); the memory stays reserved. */
  clear() {
    this.#live('clear');
    this.#length = 0;
  }

  /**
   * Keeps the first `length` tokens and forgets the rest, in constant time
   * (nothing is copied or cleared): speculative decoding's rejected draft
   * tokens. length is an integer in [0, this.length].
   */
  truncate(length) {
    this.#live('truncate');
    checkTruncate(length, this.#length);
    this.#length = length;
  }

  /** Returns the cache's memory to the instance; later calls throw. */
  dispose() {
    if (this.#disposed) return;
    this.#disposed = true;
    for (const at of [this.#kAt, this.#vAt, this.#kScalesAt, this.#vScalesAt]) if (at !== 0) this.#wasm.free(at);
    this.#length = 0;
  }

  /** dispose(), for `using cache = ...`. */
  [Symbol.dispose]() {
    this.dispose();
  }
}

// Call c of kv heads [g0, g1) and their query heads alone: a copy of those
// heads' queries, K, V and int8 scales from head g0 on (e bytes an element),
// their ALiBi slopes. Mask and bias name every head: such calls stay whole.
function kvHeadsOf(c, g0, g1, e) {
  if (c.mask || c.bias || c.sinks) throw new Error('kvCache.rangeCall: a call with a mask, bias or sinks covers every head');
  const { batch, heads, nq, dk } = c;
  const group = heads / c.kvHeads, h0 = g0 * group, hn = (g1 - g0) * group;
  const q = new Float32Array(batch * nq * hn * dk);
  // bhsd: each batch entry's heads h0 .. are one run; bshd: each row's are.
  const runs = c.layout === 'bshd' ? batch * nq : batch, inRun = c.layout === 'bshd' ? heads * dk : heads * nq * dk;
  const first = c.layout === 'bshd' ? h0 * dk : h0 * nq * dk, length = c.layout === 'bshd' ? hn * dk : hn * nq * dk;
  for (let r = 0; r < runs; r++) q.set(c.q.subarray(r * inRun + first, r * inRun + first + length), r * length);
  const sub = { ...c, q, heads: hn, kvHeads: g1 - g0 };
  sub.kAt = c.kAt + g0 * c.kStrides[1] * e;
  sub.vAt = c.vAt + g0 * c.vStrides[1] * e;
  if (c.scaleStrides) {
    sub.kScalesAt = c.kScalesAt + g0 * c.scaleStrides[1] * 4;
    sub.vScalesAt = c.vScalesAt + g0 * c.scaleStrides[1] * 4;
  }
  if (c.alibi) sub.alibi = c.alibi.slice(h0, h0 + hn);
  return sub;
}
