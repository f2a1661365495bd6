// kvcache.js - a KV cache attended by every core of the pool at once
// ("split-KV" or flash decoding): each thread attends a part of one decode
// step's keys, and the partial results are merged as the online softmax
// merges blocks of keys (kvshard.js). Two ways to hold the keys:
//
// On the pool's shared memory (Node, a cross-origin isolated page), the
// calling thread keeps the whole cache there, in one ordinary cache of its
// threads-build instance, and each attend cuts the held keys into units
// (key ranges of some kv heads, attendUnits) that every thread claims
// (shared.js lays them out, the pool runs them as it runs a split sdpa
// call's blocks): no thread's part is fixed in advance, so a core another
// program slows takes fewer units. Only the
// calling thread writes the cache; while some unit of an attend may still
// be read, the later calls' work on the keys and values waits for it
// (#local).
//
// Elsewhere (no SharedArrayBuffer, or memory 'copy'), positions are cut
// into segments of SEGMENT_TOKENS consecutive positions, dealt round-robin
// to the holders: segment 0 to the calling thread's
// instance, the next to the first worker, and so on. Round-robin by blocks,
// not one contiguous range per holder: a cache fills from position 0, so
// ranges fixed by the capacity would leave every holder but the first idle
// until the cache is a capacity / threads full, whereas segments keep the
// holders within one segment of each other at every length. A holder keeps
// its segments back to back in one single-instance cache (kvshard.js), read
// in place. When no option depends on positions (a decode step: no mask,
// bias, kvLengths, ALiBi or steps, and causal or window cutting no held key)
// each holder attends all it keeps in one call. Otherwise each segment is
// attended alone, and every option translates exactly: a segment starting
// at position s sees queryOffset - s, kvLengths - s (clamped to what it
// holds) and the columns [s, s + n) of a mask or bias; causal, window and
// ALiBi are relative to the query's position and stay as they are (a
// shared cache's ranges translate the same way). Segments with no key any query may see (outside every window, past every
// kvLengths) are not asked. Sinks join the merge once, on the calling
// thread. With RoPE, keys turn at append at their positions in the whole
// cache (not the holder's), and q turns once on the calling thread at its
// own, so no part turns anything. An append costs one copy of its tokens and
// one message per worker it reaches (none while the cache is in segment 0).
//
// A cache of at most SEGMENT_TOKENS tokens lives in segment 0 alone: it is
// attended on the calling thread, with no message, and only longer caches
// involve the workers. That is the small-cache threshold: below it one
// decode step takes less time than waking a worker gains (bench/pool-kv.js).
//
// Every argument is checked here, by the rules and messages of the
// single-instance cache (web/core/kvcache.js), before any worker is asked.

import { MAX_ARENA_BYTES, formatBytes } from '../core/instance.js';
import { cacheSizes, checkTruncate } from '../core/kvcache.js';
import { describe } from '../core/matrix.js';
import { appendTokens, attendCall } from '../core/calls.js';
import { WINDOW_MAX, checkCacheOptions, checkCacheRope, checkKeys, checkRope, keySpan } from '../core/options.js';
import { Shard, SoftmaxMerge, placeTokens, sliceTokens, turnRows } from './kvshard.js';
import { newCall } from './workers.js';

/** Positions per segment, and the length up to which a cache stays on the calling thread. */
export const SEGMENT_TOKENS = 2048;
// On the shared memory, an attend's ranges: about this many a thread (so a
// thread another program slows takes fewer), none shorter than RANGE_TOKENS.
const RANGES_PER_THREAD = 8, RANGE_TOKENS = SEGMENT_TOKENS;
// Units a thread that whole kv heads must give before no head is split.
const WHOLE_HEAD_UNITS = 4;

/**
 * How an attend over `length` held keys is cut on the shared memory: at
 * most as many units as ranges of every head would be (about
 * RANGES_PER_THREAD a thread, none shorter than RANGE_TOKENS keys), each
 * over as few kv heads as that count allows when `byHead`, and whole kv
 * heads once they give WHOLE_HEAD_UNITS a thread: one unit then reads one
 * long run of a head's keys and values where a range of every head reads a
 * short run of each, and short runs cost more; a head no unit splits needs
 * no merge (one instance's bits) (bench/RESULTS.md, "Units of kv heads").
 * Returns the key ranges [start, n] (the last takes the rest) and the kv
 * heads a unit takes.
 */
export function attendUnits(length, kvHeads, threads, byHead) {
  const size = Math.max(RANGE_TOKENS, Math.ceil(length / (threads * RANGES_PER_THREAD) / 64) * 64);
  const count = Math.max(1, Math.floor(length / size));
  let parts = count, kvHeadsPer = kvHeads;
  if (byHead) {
    kvHeadsPer = count >= kvHeads ? 1 : Math.ceil(kvHeads / count);
    // Enough kv heads for WHOLE_HEAD_UNITS a thread: every unit whole heads (no merge of parts of a head).
    parts = kvHeads >= threads * WHOLE_HEAD_UNITS ? 1 : Math.max(1, Math.floor(count / Math.ceil(kvHeads / kvHeadsPer)));
  }
  const partSize = parts === count ? size : Math.floor(length / parts / 64) * 64;
  const ranges = [];
  for (let r = 0; r < parts; r++) ranges.push([r * partSize, r === parts - 1 ? length - r * partSize : partSize]);
  return { ranges, kvHeadsPer };
}

let nextId = 1;

/**
 * Makes a pool cache: pool is { local, workers, threads, callerShare, live,
 * shared } (AttentionPool's parts; shared, on the shared memory: {
 * attention(), layout(calls, slots, onDone), owns(x), claimed(call, n,
 * take, result) }, else null); options as Attention#kvCache takes them.
 */
export async function createPoolKVCache(pool, options) {
  pool.live();
  const checked = checkCacheOptions(options);
  checkPoolSize(pool, checked);
  const cache = new PoolKVCache(pool, checked);
  await cache._start();
  return cache;
}

// Sizes before any segment is planned: planning lists every segment, and a
// capacity such as 2 ** 40 would make hundreds of millions of them. Some
// thread holds at least an even share of the tokens (the calling thread
// keeps only segment 0 when it takes no share), so a share over wasm32's
// 4 GiB is refused here, with one instance's RangeError and that share; the
// exact check per thread follows the plan. An unknown dtype sizes as NaN and
// passes, for the first segment to refuse it as one instance does.
function checkPoolSize(pool, spec) {
  const { batch, kvHeads, dk, dv, capacity, dtype } = spec;
  const spread = pool.callerShare ? capacity : Math.max(0, capacity - SEGMENT_TOKENS);
  const share = cacheSizes({ ...spec, capacity: Math.ceil(spread / pool.threads) }).reduce((a, b) => a + b, 0);
  if (!(share > MAX_ARENA_BYTES)) return;
  const bytes = cacheSizes(spec).reduce((a, b) => a + b, 0);
  throw new RangeError(`kvCache: a capacity of ${capacity} needs ${formatBytes(bytes)} of wasm memory (${bytes} bytes: batch ${batch} x ${kvHeads} kv heads ` +
    `of dk = ${dk} and dv = ${dv} as ${dtype}), at least ${formatBytes(share)} in one thread of the pool; wasm32 holds at most 4 GiB`);
}

// queryOffset - start, kept within the int32 range C takes; it leaves that
// range only for offsets beyond any position a cache can hold.
const shift = (offset, start) => Math.max(offset - start, -WINDOW_MAX);

// The columns [start, start + n) of a checked mask or bias ({ data, strides,
// cols }, broadcast to dims (batch, heads, nq)) as { data, shape }, or a
// one-column `blocked` value when it has none of them (so no key is allowed).
function sliceColumns(m, Type, [batch, heads, nq], start, n, blocked) {
  const w = Math.min(m.cols - start, n);
  if (w <= 0) return { data: Type.of(blocked), shape: [1, 1] };
  const [sb, sh, sr] = m.strides;
  const db = sb ? batch : 1, dh = sh ? heads : 1, dr = sr ? nq : 1;
  const data = new Type(db * dh * dr * w);
  let o = 0;
  for (let b = 0; b < db; b++) {
    for (let h = 0; h < dh; h++) {
      for (let r = 0; r < dr; r++, o += w) {
        const at = b * sb + h * sh + r * sr + start;
        data.set(m.data.subarray(at, at + w), o);
      }
    }
  }
  return { data, shape: [db, dh, dr, w] };
}

/**
 * A KV cache attended by a pool's workers and the calling thread at once,
 * on the shared memory or split by position over their own memories. Made
 * by AttentionPool#kvCache; the calls of Attention#kvCache, as Promises.
 */
export class PoolKVCache {
  #pool;
  #id = nextId++;
  #options; // what each segment's cache is made with, capacity aside
  #holders; // [{ slot: null (the calling thread) | a worker slot, segments: how many it keeps }]
  #here = null; // the calling thread's Shard
  #length = 0;
  #rope; // the rope the held keys were appended with (null: none); undefined while empty
  #disposed = false;
  #lost = null; // why the cache's contents are gone, when a worker holding them stopped
  // On the shared memory: the calling thread holds every segment there, and
  // each attend's ranges are claimed by every thread (#attendShared).
  #shared = null;
  // On the shared memory, a Promise while an attend's parts may still read
  // the keys and values: the calls made since wait for it, in their order.
  #queue = null;
  #closing = false; // dispose() was called: later calls reject, the memory goes back once idle
  #readers = 0; // attends on the shared memory with a part that may still run
  #waiting = 0; // calls whose local part waits in #queue

  /** @internal use AttentionPool#kvCache() */
  constructor(pool, options) {
    this.#pool = pool;
    const { batch, kvHeads, dk, dv, capacity, layout } = options;
    /** @readonly */ this.batch = batch;
    /** @readonly */ this.kvHeads = kvHeads;
    /** @readonly */ this.dk = dk;
    /** @readonly */ this.dv = dv;
    /** @readonly */ this.capacity = capacity;
    /** @readonly */ this.layout = layout;
    /** @readonly element type of the held keys and values */ this.dtype = options.dtype ?? 'float32';
    /** @readonly bytes of wasm memory the cache holds over all holders (int8 scales included) */
    this.bytes = cacheSizes(this).reduce((a, b) => a + b, 0);
    const { capacity: _, ...rest } = options;
    this.#options = rest;
    // With callerShare the calling thread is one of `threads` holders; else
    // it keeps segment 0 (the small cache) and the workers the rest.
    const workers = pool.callerShare ? pool.threads - 1 : pool.threads;
    this.#holders = [{ slot: null, segments: 0 }, ...Array.from({ length: workers }, (_, i) => ({ slot: pool.workers.slot(i), segments: 0 }))];
  }

  /** Tokens held. */
  get length() {
    return this.#length;
  }

  /**
   * Where the keys and values are: 'shared', all in the pool's shared
   * memory, read in place by every thread; or 'copy', each segment in the
   * memory of the thread that holds it (docs/pool.md#split-kv-decoding).
   * @returns {'shared' | 'copy'}
   */
  get memory() {
    return this.#shared === null ? 'copy' : 'shared';
  }

  // Which holder keeps segment s.
  #owner(s) {
    const n = this.#holders.length;
    if (n === 1 || s === 0) return 0;
    return this.#pool.callerShare ? s % n : 1 + ((s - 1) % (n - 1));
  }

  /** @internal makes every holder's segments; createPoolKVCache awaits it. */
  async _start() {
    const shared = this.#pool.shared;
    if (shared) {
      // The whole cache on the calling thread's instance on the shared memory,
      // or, where that memory cannot hold it beside everything else there, shards.
      const all = [];
      for (let start = 0; start < this.capacity; start += SEGMENT_TOKENS) all.push([start, Math.min(SEGMENT_TOKENS, this.capacity - start)]);
      try {
        this.#here = new Shard(shared.attention(), { options: this.#options, shape: { batch: this.batch, dv: this.dv, layout: this.layout }, segments: all });
        this.#holders = [{ slot: null, segments: all.length }];
        this.#shared = shared;
        return;
      } catch (err) {
        if (!(err instanceof RangeError)) throw err;
      }
    }
    const segments = this.#holders.map(() => []);
    for (let s = 0; s * SEGMENT_TOKENS < this.capacity; s++) {
      const start = s * SEGMENT_TOKENS;
      segments[this.#owner(s)].push([start, Math.min(SEGMENT_TOKENS, this.capacity - start)]);
    }
    const { batch, dv, layout } = this;
    // The most one thread holds.
    const most = Math.max(...segments.map((list) => list.reduce((sum, [, n]) => sum + n, 0)));
    const bytes = cacheSizes({ ...this, capacity: most }).reduce((a, b) => a + b, 0);
    if (bytes > MAX_ARENA_BYTES) {
      throw new RangeError(`kvCache: a capacity of ${this.capacity} needs ${formatBytes(bytes)} of wasm memory in one thread of the pool; wasm32 holds at most 4 GiB`);
    }
    const shape = { batch, dv, layout };
    this.#holders.forEach((h, i) => {
      h.segments = segments[i].length;
    });
    this.#here = new Shard(this.#pool.local, { options: this.#options, shape, segments: segments[0] });
    // A worker that keeps no segment (a small capacity) is never asked.
    const made = await Promise.allSettled(this.#workerHolders().map((h) =>
      this.#send(h, { op: 'create', spec: { options: this.#options, shape, segments: segments[this.#holders.indexOf(h)] } })));
    const failed = made.find((r) => r.status === 'rejected');
    if (failed) {
      this.dispose();
      throw failed.reason;
    }
  }

  // The workers that keep segments of this cache.
  #workerHolders() {
    return this.#holders.filter((h) => h.slot !== null && h.segments > 0);
  }

  // One operation on a worker's part of this cache; resolves with its result.
  #send(holder, message, transfer = []) {
    return new Promise((resolve, reject) => {
      const call = newCall(reject);
      this.#pool.workers.submitTo(holder.slot, [{ call, message: { method: 'kv', cache: this.#id, ...message }, transfer, deliver: resolve }]);
    });
  }

  // Sends an operation that changes a worker's part: when it fails, the
  // parts no longer agree, so the cache is lost.
  #change(holder, message, transfer) {
    return this.#send(holder, message, transfer).catch((err) => {
      this.#lost ??= err;
      throw err;
    });
  }

  #live(fn) {
    if (this.#disposed || this.#closing) throw new Error(`kvCache.${fn}: this cache was disposed`);
    this.#pool.live();
    if (this.#lost === null && this.#workerHolders().some((h) => h.slot.dead)) this.#lost = new Error('a worker holding part of it stopped');
    if (this.#lost !== null) {
      throw new Error(`kvCache.${fn}: this cache's keys and values are lost (${this.#lost.message}); make a new cache`);
    }
  }

  // Held segments as [index, start, held tokens].
  *#segments(length = this.#length) {
    for (let s = 0; s * SEGMENT_TOKENS < length; s++) {
      const start = s * SEGMENT_TOKENS;
      yield [s, start, Math.min(SEGMENT_TOKENS, length - start)];
    }
  }

  /**
   * Appends t >= 1 tokens: k flat (batch, kvHeads, t, dk) and v (batch,
   * kvHeads, t, dv), or (batch, t, kvHeads, d) for layout 'bshd'. Past the
   * capacity it rejects with a RangeError and the cache is unchanged. With
   * options.rope the keys turn at their positions in the whole cache, as one
   * instance's cache turns them, wherever they are held.
   * Calls may follow without awaiting: each holder takes them in order.
   * @returns {Promise<void>}
   */
  async append(k, v, options = {}) {
    this.#live('append');
    checkKeys(options, 'append', 'kvCache.append');
    const { batch, kvHeads, dk, dv, layout } = this;
    const rope = checkRope(options.rope, 'kvCache.append: rope', dk);
    this.#live('append'); // a getter may have disposed the cache or its pool
    const t = appendTokens(this, k, v, this.#length);
    checkCacheRope(this.#length === 0 ? undefined : this.#rope, rope, 'append');
    const first = this.#length;
    this.#length += t;
    this.#rope = rope;
    const sent = [], here = [];
    const later = this.#queue !== null; // then the calling thread's part holds copies
    for (let s = Math.floor(first / SEGMENT_TOKENS); s * SEGMENT_TOKENS < first + t; s++) {
      const start = s * SEGMENT_TOKENS;
      const from = Math.max(first, start) - first, to = Math.min(first + t, start + SEGMENT_TOKENS) - first;
      const whole = from === 0 && to === t;
      const holder = this.#holders[this.#owner(s)];
      if (holder.slot === null) {
        // The calling thread's segment copies the tokens into its memory itself.
        const kp = whole ? (later ? k.slice() : k) : sliceTokens(k, layout, batch, kvHeads, t, dk, from, to);
        const vp = whole ? (later ? v.slice() : v) : sliceTokens(v, layout, batch, kvHeads, t, dv, from, to);
        here.push([start, kp, vp, first + from]);
      } else {
        const kp = whole ? k.slice() : sliceTokens(k, layout, batch, kvHeads, t, dk, from, to);
        const vp = whole ? v.slice() : sliceTokens(v, layout, batch, kvHeads, t, dv, from, to);
        sent.push(this.#change(holder, { op: 'append', start, k: kp, v: vp, rope, position: first + from }, [kp.buffer, vp.buffer]));
      }
    }
    if (here.length > 0) sent.push(this.#local(() => here.forEach(([start, kp, vp, at]) => this.#here.append(start, kp, vp, rope, at))));
    await Promise.all(sent);
  }

  // The options of segment `start` (holding n tokens) for call c, or null
  // when none of its keys is allowed for any query (skipped: it would weigh 0).
  #segmentOptions(c, start, n) {
    const { batch, heads, nq } = c;
    if (!c.steps) {
      let seen = false;
      for (let b = 0; b < batch && !seen; b++) {
        const offset = c.queryOffsets ? c.queryOffsets[b] : c.queryOffset;
        // The keys any of rows 0 .. nq - 1 may see: from row 0's first to row nq - 1's last.
        const rule = { causal: c.causal, window: c.window, queryOffset: offset };
        let hi = Math.min(start + n, keySpan(rule, nq - 1).hi);
        if (c.kvLengths) hi = Math.min(hi, c.kvLengths[b]);
        if (c.mask) hi = Math.min(hi, c.mask.cols);
        if (c.bias) hi = Math.min(hi, c.bias.cols);
        seen = Math.max(start, keySpan(rule, 0).lo) < hi;
      }
      if (!seen) return null;
    }
    const o = { heads, nq, scale: c.scale, stats: true };
    if (c.causal) o.causal = true;
    if (c.softcap) o.softcap = c.softcap;
    if (c.window) o.window = c.window;
    // ALiBi's bias -slope (p - j) is the same with both positions shifted by start.
    if (c.alibi) o.alibi = c.alibi;
    o.queryOffset = c.queryOffsets ? Int32Array.from(c.queryOffsets, (x) => shift(x, start)) : shift(c.queryOffset, start);
    if (c.kvLengths) o.kvLengths = Int32Array.from(c.kvLengths, (x) => Math.min(Math.max(x - start, 0), n));
    if (c.mask) o.mask = sliceColumns(c.mask, Uint8Array, [batch, heads, nq], start, n, 0);
    if (c.bias) o.bias = sliceColumns(c.bias, Float32Array, [batch, heads, nq], start, n, -Infinity);
    if (c.steps) o.steps = true;
    return o;
  }

  // Whether no key of the held ones is barred by a position in call c, so
  // every holder may attend all it keeps in one call: no option that names
  // columns or positions (mask, bias, kvLengths, ALiBi, steps), and causal
  // and window, if set, cut no held key for any row.
  #positionFree(c) {
    if (c.steps || c.mask || c.bias || c.kvLengths || c.alibi) return false;
    if (!c.causal && !c.window) return true;
    const length = this.#length;
    for (let b = 0; b < c.batch; b++) {
      const rule = { causal: c.causal, window: c.window, queryOffset: c.queryOffsets ? c.queryOffsets[b] : c.queryOffset };
      // Row 0 sees the fewest keys on the right, row nq - 1 on the left.
      if (keySpan(rule, 0, length).hi < length || keySpan(rule, c.nq - 1, length).lo > 0) return false;
    }
    return true;
  }

  /**
   * Attention of q over the held keys and values, as Attention#kvCache's
   * attend: the same options, defaults, errors and result, as a Promise.
   * Each holder attends its segments and the parts are merged (see
   * SoftmaxMerge): the result agrees with one instance's to float32
   * rounding, not to the bit (the sums run in another order).
   * @returns {Promise<Float32Array | { output: Float32Array, lse?: Float32Array, scores?: Float32Array, scaled?: Float32Array, logits?: Float32Array, weights?: Float32Array }>}
   */
  async attend(q, options = {}) {
    this.#live('attend');
    const length = this.#length;
    const c = attendCall(q, options, this, length);
    // The options' getters may have disposed, refilled or cleared the cache.
    this.#live('attend');
    if (this.#length !== length) throw new Error('kvCache.attend: the cache changed while the options were read (a getter appended, cleared or truncated it)');
    checkCacheRope(this.#rope, c.rope, 'attend');
    const { batch, heads, nq, nk, dv } = c;

    // Options that hold no position: each holder attends all it keeps in one
    // call. A cache in segment 0 alone takes the path below (the caller's own options).
    let whole = null;
    if (this.#length > SEGMENT_TOKENS && this.#positionFree(c)) {
      whole = { heads, nq, scale: c.scale, stats: true };
      if (c.softcap) whole.softcap = c.softcap;
    }
    if (this.#shared !== null && !c.steps && this.#length > SEGMENT_TOKENS) return this.#attendShared(q, c, whole);
    const calls = this.#holders.map(() => []);
    for (const [s, start, n] of this.#segments()) {
      const o = whole ?? this.#segmentOptions(c, start, n);
      if (o !== null) calls[this.#owner(s)].push({ start, n, options: o });
    }
    if (calls[0].length === 1 && calls.every((list, h) => h === 0 || list.length === 0)) {
      // One part, on the calling thread: it is the whole result (the others
      // would weigh 0), so it is asked for exactly what the caller asked.
      const { start, n, options: o } = calls[0][0];
      o.stats = c.stats;
      // An out in the shared memory (pool.array) is one the calling thread's
      // instance there refuses (its own memory): the result is copied into it.
      const into = c.out && this.#shared?.owns(c.out) ? c.out : null;
      if (c.out && into === null) o.out = c.out;
      if (c.sinks) o.sinks = c.sinks;
      // Segment 0's positions are the cache's, so it turns q itself (one
      // instance's bits); a later segment's are shifted, so q turns here.
      if (c.rope && start === 0) o.rope = c.rope;
      else if (c.rope) q = this.#turnQueries(q, c);
      if (this.#queue !== null) [q, o.sinks] = [q.slice(), o.sinks?.slice()];
      if (into === null) return this.#local(() => this.#here.attendOne(start, n, q, o));
      return this.#local(() => {
        const r = this.#here.attendOne(start, n, q, o);
        into.set(r.output ?? r);
        return r.output ? { ...r, output: into } : into;
      });
    }
    // The parts' positions are not the cache's: q turns here, once, at its
    // own, and the parts get no rope.
    if (c.rope) q = this.#turnQueries(q, c);
    const shape = { heads, nq, steps: c.steps };
    const asked = [];
    for (let h = 1; h < calls.length; h++) {
      if (calls[h].length === 0) continue;
      const qc = q.slice();
      asked.push(this.#send(this.#holders[h], { op: 'attend', q: qc, calls: whole ? { whole } : calls[h], shape }, [qc.buffer]));
    }
    // The calling thread attends its segments while the workers attend theirs.
    let here = null;
    try {
      if (this.#queue !== null) q = q.slice();
      if (calls[0].length > 0) here = this.#local(() => this.#here.attend(q, whole ? { whole } : calls[0], shape));
    } catch (err) {
      for (const p of asked) p.catch(() => {});
      throw err;
    }
    const parts = [...(here ? [await here] : []), ...(await Promise.all(asked))];
    const output = c.out ?? new Float32Array(batch * heads * nq * dv);
    const merge = new SoftmaxMerge(batch, heads, nq, dv, this.layout);
    // A sink joins each row's denominator once, so it joins the merge, not the parts.
    if (c.sinks) merge.addSinks(c.sinks);
    if (!c.steps) {
      for (const part of parts) merge.addState(part);
      const lse = merge.finish(output);
      return c.stats ? { output, lse } : output;
    }
    const pieces = parts.flatMap((p) => p.parts);
    for (const p of pieces) merge.addPart(p.output, p.lse);
    const lse = merge.finish(output);
    const result = { output, ...this.#steps(pieces, lse, batch * heads * nq, nk) };
    if (c.stats) result.lse = lse;
    return result;
  }

  // An attend on the shared memory: the held keys cut into units (about
  // RANGES_PER_THREAD a thread, attendUnits) that every thread claims, each
  // a range of keys of some kv heads attended as a segment is (whole's
  // options, or translated to its positions, with its log-sum-exp), merged
  // in unit order on the calling thread, so a call gives the same bits
  // every time.
  #attendShared(q, c, whole) {
    const { batch, heads, nq, dv } = c;
    // Copies of what the call reads, so a caller may reuse its arrays at once (q turns into a new one).
    q = c.rope ? this.#turnQueries(q, c) : this.#queue !== null ? q.slice() : q;
    const group = heads / this.kvHeads;
    // A mask or bias covers every head: its calls take every kv head.
    const { ranges: keyRanges, kvHeadsPer } = attendUnits(this.#length, this.kvHeads, this.#pool.threads, !c.mask && !c.bias);
    const spans = [];
    for (const [start, n] of keyRanges) {
      const o = whole ?? this.#segmentOptions(c, start, n);
      if (o === null) continue;
      if (o.alibi) o.alibi = o.alibi.slice();
      spans.push({ start, n, o });
    }
    // Head-major: the units of a head group one after another (a thread
    // claims neighbours, reading on where its last unit stopped).
    const units = [];
    for (let g0 = 0; g0 < this.kvHeads; g0 += kvHeadsPer) {
      const g1 = Math.min(this.kvHeads, g0 + kvHeadsPer);
      for (const span of spans) units.push({ ...span, g0, g1, h0: g0 * group, hn: (g1 - g0) * group });
    }
    const output = c.out ?? new Float32Array(batch * heads * nq * dv);
    const merge = new SoftmaxMerge(batch, heads, nq, dv, this.layout);
    if (c.sinks) merge.addSinks(c.sinks);
    const finish = (parts) => {
      for (const part of parts) merge.addPart(part.output, part.lse, part.h0, part.hn);
      const lse = merge.finish(output);
      return c.stats ? { output, lse } : output;
    };
    if (units.length === 0) return finish([]);
    return this.#local(() => {
      const shared = this.#shared, parts = [];
      const calls = units.map(({ start, n, o, g0, g1 }) => this.#here.rangeCall(q, o, start, n, g0, g1));
      // No thread reads the keys and values once every unit is computed, or,
      // after a failure, once no part runs (a worker that found nothing left
      // to claim may answer later: it reads only the call's control words).
      let reading = true;
      const readDone = () => {
        if (!reading) return;
        reading = false;
        this.#readerDone();
      };
      const call = shared.layout(calls, Math.min(this.#pool.threads, calls.length), readDone);
      this.#readers++;
      const done = shared.claimed(call, calls.length, (p) => {
        const part = call.part(p);
        parts[p] = { output: part.output.slice(), lse: part.lse.slice(), h0: units[p].h0, hn: units[p].hn };
      }, () => {
        readDone();
        return finish(parts);
      });
      // Parts still computing read the keys and values: later calls wait for them.
      if (call.reading()) this.#hold(call.released);
      return done;
    });
  }

  // One of the attends whose parts may read the shared memory has no part
  // running any more: a cache disposed meanwhile is freed once none has.
  #readerDone() {
    this.#readers--;
    this.#freeWhenIdle();
  }

  // Runs op, the part of a call that reads or writes the calling thread's
  // keys and values, now; or, while an attend's parts may still read them on
  // the shared memory, after those and after the calls made before (each
  // holder takes calls in order on the copy path; this keeps that order).
  // The call has checked its arguments and moved the length already, and
  // op holds copies of what it reads, so a caller may reuse its arrays.
  #local(op) {
    if (this.#queue === null) return op();
    this.#waiting++;
    const run = this.#queue.then(op).finally(() => {
      this.#waiting--;
      this.#freeWhenIdle();
    });
    this.#hold(run);
    return run;
  }

  // Later calls wait for promise too (settled either way).
  #hold(promise) {
    const tail = Promise.all([this.#queue, promise]).then(() => {}, () => {});
    this.#queue = tail;
    tail.then(() => {
      if (this.#queue === tail) this.#queue = null;
    });
  }

  // q turned by the call's rope at its positions in the whole cache, by
  // attn.rope (the kernels' own turn).
  #turnQueries(q, c) {
    return turnRows(this.#pool.local, q, this.layout, c.batch, c.heads, c.nq, c.dk, c.rope, (b) => (c.queryOffsets ? c.queryOffsets[b] : c.queryOffset));
  }

  // The step matrices (batch, heads, nq, nk) from each segment's: scores,
  // scaled and logits placed at the segment's columns, weights rescaled
  // from the segment's softmax to the whole row's by exp(lse_s - lse).
  #steps(pieces, lse, rows, nk) {
    const names = ['scores', 'scaled', 'logits', 'weights'];
    const full = Object.fromEntries(names.map((name) => [name, new Float32Array(rows * nk)]));
    for (const p of pieces) {
      const n = p.scores.length / rows;
      for (let r = 0; r < rows; r++) {
        const from = r * n, at = r * nk + p.start;
        for (const name of names.slice(0, 3)) full[name].set(p[name].subarray(from, from + n), at);
        const f = p.lse[r] === -Infinity ? 0 : Math.exp(p.lse[r] - lse[r]);
        for (let j = 0; j < n; j++) full.weights[at + j] = p.weights[from + j] * f;
      }
    }
    return full;
  }

  // The held keys or values, gathered from every holder into one array.
  async #read(which, d) {
    this.#live(which);
    const { batch, kvHeads, layout } = this;
    const length = this.#length;
    const out = new Float32Array(batch * kvHeads * length * d);
    const starts = this.#holders.map(() => []);
    for (const [s, start] of this.#segments()) starts[this.#owner(s)].push(start);
    const place = (list, pieces) => list.forEach((start, i) => placeTokens(out, pieces[i], layout, batch, kvHeads, length, d, start));
    const asked = [];
    for (let h = 1; h < starts.length; h++) {
      if (starts[h].length > 0) asked.push(this.#send(this.#holders[h], { op: 'read', which, starts: starts[h] }).then((pieces) => place(starts[h], pieces)));
    }
    asked.push(this.#local(() => place(starts[0], this.#here.read(which, starts[0]))));
    await Promise.all(asked);
    return out;
  }

  /**
   * A copy of the held keys, (batch, kvHeads, length, dk) in the cache's layout (ONNX present_key).
   * @returns {Promise<Float32Array>}
   */
  keys() {
    return this.#read('keys', this.dk);
  }

  /**
   * A copy of the held values, (batch, kvHeads, length, dv) in the cache's layout (ONNX present_value).
   * @returns {Promise<Float32Array>}
   */
  values() {
    return this.#read('values', this.dv);
  }

  /**
   * Keeps the first `length` tokens (0 <= length <= this.length), as for
   * rejected draft tokens: only the segments past the new end change.
   * @returns {Promise<void>}
   */
  async truncate(length) {
    this.#live('truncate');
    checkTruncate(length, this.#length);
    const old = this.#length;
    this.#length = length;
    const sent = [];
    for (const [s, start] of this.#segments(old)) {
      if (start + SEGMENT_TOKENS <= length) continue;
      const keep = Math.max(length - start, 0);
      const holder = this.#holders[this.#owner(s)];
      if (holder.slot === null) sent.push(this.#local(() => this.#here.truncate(start, keep)));
      else sent.push(this.#change(holder, { op: 'truncate', start, length: keep }));
    }
    await Promise.all(sent);
  }

  /**
   * Forgets the held tokens (length 0); the memory stays reserved.
   * @returns {Promise<void>}
   */
  async clear() {
    this.#live('clear');
    this.#length = 0;
    const here = this.#local(() => this.#here.clear());
    await Promise.all([here, ...this.#workerHolders().map((h) => this.#change(h, { op: 'clear' }))]);
  }

  /** Returns the cache's memory to the calling thread's instance and the workers'; later calls throw. */
  dispose() {
    if (this.#disposed || this.#closing) return;
    // Calls made before still run, and parts still reading the shared memory keep it until they stop.
    this.#closing = true;
    this.#freeWhenIdle();
  }

  // A disposed cache's memory goes back once no call of it is waiting and no attend's part reads it.
  #freeWhenIdle() {
    if (this.#closing && this.#readers === 0 && this.#waiting === 0) this.#free();
  }

  #free() {
    if (this.#disposed) return;
    this.#disposed = true;
    this.#length = 0;
    this.#here?.dispose();
    for (const h of this.#workerHolders()) {
      // Nothing to wait for: a stopped worker's memory is gone with it.
      if (!h.slot.dead) this.#send(h, { op: 'dispose' }).catch(() => {});
    }
  }

  /** dispose(), for `using cache = ...`. */
  [Symbol.dispose]() {
    this.dispose();
  }
}
