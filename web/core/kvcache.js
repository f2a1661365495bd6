// kvcache.js - a key/value cache in wasm memory: keys and values appended
// token by token and read in place by attend (no copy of K and V per call).

import { MAX_ARENA_BYTES, formatBytes } from './instance.js';
import { describe } from './matrix.js';
import { checkBool, checkCount, checkKeys, checkLengths, checkOut, checkRope, layoutShapes, newCall, readFlatMasks, readShared } from './options.js';
import { ropeKeys } from './rope.js';

/**
 * Keys and values of a generation in wasm memory, (batch, kvHeads, capacity,
 * d) for layout 'bhsd' or (batch, capacity, kvHeads, d) for 'bshd'. Made by
 * Attention#kvCache; attend() reads them in place.
 */
export class KVCache {
  #wasm;
  #kAt; // byte addresses of the K and V buffers
  #vAt;
  #length = 0;
  #disposed = false;

  /** @internal use Attention#kvCache() */
  constructor(wasm, { batch, kvHeads, dk, dv, capacity, layout }) {
    const kBytes = batch * kvHeads * capacity * dk * 4, vBytes = batch * kvHeads * capacity * dv * 4;
    if (kBytes + vBytes > MAX_ARENA_BYTES) {
      throw new RangeError(`kvCache: a capacity of ${capacity} needs ${formatBytes(kBytes + vBytes)} of wasm memory; wasm32 holds at most 4 GiB`);
    }
    const kAt = wasm.malloc(kBytes);
    const vAt = kAt === 0 ? 0 : wasm.malloc(vBytes);
    if (vAt === 0) {
      if (kAt !== 0) wasm.free(kAt);
      throw new RangeError(`kvCache: a capacity of ${capacity} needs ${formatBytes(kBytes + vBytes)} of wasm memory, and the memory could not grow that far`);
    }
    this.#wasm = wasm;
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
    this.#wasm.live();
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
   * options.rope turns the keys at their positions (length ..) as they are
   * stored; attend then takes the same rope and turns only the queries.
   */
  append(k, v, options = {}) {
    this.#live('append');
    checkKeys(options, 'append', 'kvCache.append');
    const rope = checkRope(options.rope, 'kvCache.append: rope', this.dk);
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
    const f32 = this.#wasm.f32();
    this.#copy(f32, k, this.#kAt >>> 2, dk, t, true);
    this.#copy(f32, v, this.#vAt >>> 2, dv, t, true);
    if (rope) ropeKeys(this.#wasm, this.#kAt, this.#strides(dk), this, t, this.#length, rope);
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
    this.#copy(this.#wasm.f32(), out, this.#kAt >>> 2, this.dk, this.#length, false);
    return out;
  }

  /** A copy of the held values, (batch, kvHeads, length, dv) in the cache's layout (ONNX present_value). */
  values() {
    this.#live('values');
    const out = new Float32Array(this.batch * this.kvHeads * this.#length * this.dv);
    this.#copy(this.#wasm.f32(), out, this.#vAt >>> 2, this.dv, this.#length, false);
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
    const fn = 'kvCache.attend';
    checkKeys(options, 'attend', fn);
    const { batch, kvHeads, dk, dv } = this;
    const nk = this.#length;
    if (nk === 0) throw new RangeError(`${fn}: the cache is empty; append keys and values first`);
    const heads = checkCount(options.heads, `${fn}: heads`, kvHeads);
    if (heads % kvHeads !== 0) throw new RangeError(`${fn}: heads (${heads}) must be a multiple of kvHeads (${kvHeads})`);
    const qs = layoutShapes(this.layout).q;
    if (!(q instanceof Float32Array)) throw new TypeError(`${fn}: q must be a Float32Array ${qs}, got ${describe(q)}`);
    const nq = options.nq == null ? q.length / (batch * heads * dk) : checkCount(options.nq, `${fn}: nq`);
    if (!Number.isInteger(nq) || nq < 1 || q.length !== batch * heads * nq * dk) throw new RangeError(`${fn}: q has ${q.length} values, expected a positive multiple of batch * heads * dk = ${batch * heads * dk} for ${qs}${options.nq == null ? '' : ` with nq = ${nq}`}`);
    const c = newCall();
    c.q = q; c.batch = batch; c.heads = heads; c.kvHeads = kvHeads; c.nq = nq; c.nk = nk; c.dk = dk; c.dv = dv;
    c.layout = this.layout;
    c.kAt = this.#kAt; c.vAt = this.#vAt; c.kStrides = this.#strides(dk); c.vStrides = this.#strides(dv);
    c.out = checkOut(options.out, c, fn);
    readFlatMasks(c, options, fn);
    readShared(c, options, fn, batch);
    c.ropeQueries = c.rope !== null; // the keys were turned at append
    c.kvLengths = options.kvLengths == null ? null : checkLengths(options.kvLengths, `${fn}: kvLengths`, batch, nk);
    // The queries are the newest tokens: of the cache, or of each batch
    // entry's own keys when kvLengths says how many it holds.
    if (options.queryOffset == null) {
      if (c.kvLengths) c.queryOffsets = Int32Array.from(c.kvLengths, (n) => n - nq);
      else c.queryOffset = nk - nq;
    }
    c.steps = checkBool(options.steps, `${fn}: steps`);
    c.stats = checkBool(options.stats, `${fn}: stats`);
    return this.#wasm.sdpa(c);
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
    this.#wasm.free(this.#kAt);
    this.#wasm.free(this.#vAt);
    this.#length = 0;
  }
}
