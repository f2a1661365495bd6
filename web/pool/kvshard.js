// kvshard.js - one holder's part of a pool KV cache (kvcache.js), and the
// merge of partial attention results. A holder is a worker or the calling
// thread; it keeps its segments (runs of consecutive positions) as ordinary
// single-instance caches in its own wasm memory, so each segment is read in
// place by the same kernels as attn.kvCache, and a segment's positions are
// its own positions shifted by its start (queryOffset translates them).
// Pure apart from the instance it is given: web/pool-worker.js and the
// calling thread run the same code.

/**
 * Tokens [from, to) of a flat K or V array holding t tokens, (batch,
 * kvHeads, t, d) for layout 'bhsd' or (batch, t, kvHeads, d) for 'bshd', as
 * a new array of the same layout with to - from tokens.
 */
export function sliceTokens(flat, layout, batch, kvHeads, t, d, from, to) {
  const n = to - from;
  const out = new Float32Array(batch * kvHeads * n * d);
  if (layout === 'bshd') {
    const run = n * kvHeads * d;
    for (let b = 0; b < batch; b++) {
      const at = (b * t + from) * kvHeads * d;
      out.set(flat.subarray(at, at + run), b * run);
    }
  } else {
    const run = n * d;
    for (let bh = 0; bh < batch * kvHeads; bh++) {
      const at = (bh * t + from) * d;
      out.set(flat.subarray(at, at + run), bh * run);
    }
  }
  return out;
}

/** The inverse of sliceTokens: writes n tokens of `piece` into `flat` (t tokens) from token `from` on. */
export function placeTokens(flat, piece, layout, batch, kvHeads, t, d, from) {
  const n = piece.length / (batch * kvHeads * d);
  if (layout === 'bshd') {
    const run = n * kvHeads * d;
    for (let b = 0; b < batch; b++) flat.set(piece.subarray(b * run, (b + 1) * run), (b * t + from) * kvHeads * d);
  } else {
    const run = n * d;
    for (let bh = 0; bh < batch * kvHeads; bh++) flat.set(piece.subarray(bh * run, (bh + 1) * run), (bh * t + from) * d);
  }
}

/**
 * A copy of flat q or k rows, (batch, heads, n, d) for layout 'bhsd' or
 * (batch, n, heads, d) for 'bshd', turned by RoPE (checked settings `rope`)
 * with row i of batch entry b at position position(b) + i: attn.rope's
 * turn, which is the kernels' own, one call per batch entry.
 */
export function turnRows(attn, flat, layout, batch, heads, n, d, rope, position) {
  const out = new Float32Array(flat.length);
  const block = heads * n * d;
  const staged = layout === 'bshd' ? new Float32Array(block) : null;
  for (let b = 0; b < batch; b++) {
    const src = flat.subarray(b * block, (b + 1) * block);
    // bshd rows go through a (heads, n, d) copy and back.
    if (staged) for (let i = 0; i < n; i++) for (let h = 0; h < heads; h++) staged.set(src.subarray((i * heads + h) * d, (i * heads + h + 1) * d), (h * n + i) * d);
    const turned = attn.rope({ rows: heads * n, cols: d, data: staged ?? src }, { ...rope, heads, position: position(b) }).data;
    const dst = out.subarray(b * block, (b + 1) * block);
    if (!staged) dst.set(turned);
    else for (let i = 0; i < n; i++) for (let h = 0; h < heads; h++) dst.set(turned.subarray((h * n + i) * d, (h * n + i + 1) * d), (i * heads + h) * d);
  }
  return out;
}

/**
 * The online softmax across parts of the keys. Each part gives its output
 * o_s (a softmax-weighted mean of its values) and lse_s = log sum_j
 * exp(logit_j) over its keys; per row (b, h, i) this keeps
 *   m = max_s lse_s,  l = sum_s exp(lse_s - m),  acc = sum_s exp(lse_s - m) o_s,
 * so that acc / l is the output over all keys and m + log(l) their lse. A
 * part with no allowed key for a row has lse -Infinity and weighs 0; a row
 * with no allowed key in any part gets output 0 and lse -Infinity, as one
 * call gives. NaN in a part's lse or output reaches the row's result. Kept
 * in float64, so the merge adds no float32 rounding of its own.
 */
export class SoftmaxMerge {
  /** Rows are (batch, heads, nq) in that order (as lse); outputs are (.., dv) in `layout`. */
  constructor(batch, heads, nq, dv, layout) {
    this.batch = batch;
    this.heads = heads;
    this.nq = nq;
    this.dv = dv;
    this.layout = layout;
    const rows = batch * heads * nq;
    this.m = new Float64Array(rows).fill(-Infinity);
    this.l = new Float64Array(rows);
    this.acc = new Float64Array(rows * dv);
  }

  // Where row r's output starts in an output array of the layout.
  #at(r) {
    if (this.layout !== 'bshd') return r * this.dv;
    const { heads, nq } = this;
    const i = r % nq, h = ((r - i) / nq) % heads, b = Math.floor(r / (heads * nq));
    return ((b * nq + i) * heads + h) * this.dv;
  }

  // Adds weight-lse `lse`, weight sum `l` and accumulator (src at `from`, scaled by `scale`) to row r.
  #add(r, lse, l, src, from, scale) {
    if (lse === -Infinity) return;
    const { m, acc, dv } = this;
    const row = r * dv;
    if (lse > m[r]) {
      // A larger maximum: rescale what the row holds (exp(-Infinity) = 0 when it held nothing).
      const f = Math.exp(m[r] - lse);
      this.l[r] *= f;
      for (let c = 0; c < dv; c++) acc[row + c] *= f;
      m[r] = lse;
    }
    const w = Math.exp(lse - m[r]);
    this.l[r] += w * l;
    if (src === null) return;
    const ws = w * scale;
    for (let c = 0; c < dv; c++) acc[row + c] += ws * src[from + c];
  }

  /**
   * Adds attention sinks (a logit per head, c/attention.h): each joins its
   * head's rows' denominators once, with no value, as if a part held it alone.
   */
  addSinks(sinks) {
    const { heads, nq } = this;
    for (let r = 0; r < this.m.length; r++) this.#add(r, sinks[Math.floor(r / nq) % heads], 1, null, 0, 0);
  }

  /**
   * Adds a part's output (in the layout) and its lse (batch, heads, nq); a
   * part of heads [h0, h0 + hn) alone holds those heads only, in the same layout.
   */
  addPart(output, lse, h0 = 0, hn = this.heads) {
    const { batch, heads, nq, dv } = this;
    for (let b = 0; b < batch; b++) {
      for (let h = 0; h < hn; h++) {
        for (let i = 0; i < nq; i++) {
          const from = this.layout === 'bshd' ? ((b * nq + i) * hn + h) * dv : ((b * hn + h) * nq + i) * dv;
          this.#add((b * heads + h0 + h) * nq + i, lse[(b * hn + h) * nq + i], 1, output, from, 1);
        }
      }
    }
  }

  /** Adds another merge's state ({ m, l, acc }, as state() gives). */
  addState({ m, l, acc }) {
    const { dv } = this;
    for (let r = 0; r < m.length; r++) this.#add(r, m[r], l[r], acc, r * dv, 1);
  }

  /** The state, to send to another thread and add there. */
  state() {
    return { m: this.m, l: this.l, acc: this.acc };
  }

  /** Writes the merged output into `out` (in the layout); returns the merged lse as float32. */
  finish(out) {
    const { m, l, acc, dv } = this;
    const lse = new Float32Array(m.length);
    for (let r = 0; r < m.length; r++) {
      const at = this.#at(r), row = r * dv;
      if (l[r] === 0) {
        // No allowed key anywhere (also the -Infinity m of an untouched row).
        out.fill(0, at, at + dv);
        lse[r] = -Infinity;
        continue;
      }
      const inv = 1 / l[r];
      for (let c = 0; c < dv; c++) out[at + c] = acc[row + c] * inv;
      lse[r] = m[r] + Math.log(l[r]);
    }
    return lse;
  }
}

/**
 * A holder's segments of one pool cache, kept back to back in one cache of
 * `attn` (an Attention instance): segment i (in position order) starts at
 * the sum of the earlier ones' capacities. Segments fill in position order
 * and a holder's segments are in that order too, so every append lands at
 * that cache's end, and a decode step whose options do not depend on
 * positions attends everything the holder keeps in one call: one copy of q
 * into wasm memory and one pass of the kernel instead of one per segment.
 */
export class Shard {
  #cache = null; // null while the holder keeps no segment
  #segments = new Map(); // a segment's first position -> [where it starts in #cache, its capacity]
  #spec;

  /**
   * spec: { options, shape, segments: [[start, capacity], ...] } in
   * position order; options are what attn.kvCache takes, without capacity
   * (and anything else the instance's cache takes, passed through); shape
   * is { batch, dv, layout }.
   */
  constructor(attn, spec) {
    this.#spec = spec;
    let total = 0;
    for (const [start, capacity] of spec.segments) {
      this.#segments.set(start, [total, capacity]);
      total += capacity;
    }
    if (total > 0) this.#cache = attn.kvCache({ ...spec.options, capacity: total });
  }

  #offset(start) {
    return this.#segment(start)[0];
  }

  #segment(start) {
    const s = this.#segments.get(start);
    if (s === undefined) throw new Error(`attention-wasm pool: no segment of this cache starts at ${start}`);
    return s;
  }

  /**
   * Appends tokens (in the cache's layout) to the segment at `start`: the
   * end of what the holder keeps; with a rope the keys turn at their
   * positions in the whole cache, position ...
   */
  append(start, k, v, rope = null, position = 0) {
    this.#offset(start);
    if (rope) this.#cache.appendAt(k, v, rope, position);
    else this.#cache.append(k, v);
  }

  /**
   * The checked call of an attend over the held tokens [from, from + n) of
   * the holder's one cache (KVCache#rangeCall), made but not run: where the
   * holder keeps every segment, from is a position of the whole cache;
   * of kv heads [g0, g1) alone when given.
   */
  rangeCall(q, options, from, n, g0, g1) {
    return this.#cache.rangeCall(q, options, from, n, g0, g1);
  }

  /** attend over the `n` held tokens of the segment at `start` alone, with its options as given. */
  attendOne(start, n, q, options) {
    return this.#cache.attendRange(q, options, this.#offset(start), n);
  }

  /**
   * Attends q, then merges here: { m, l, acc } (SoftmaxMerge state) for
   * `heads` query heads of `nq` rows. `calls` is either { whole: options }:
   * everything the holder keeps in one call (options that no position
   * changes), or [{ start, n, options }]: each segment's held tokens alone,
   * options translated to its positions, with stats. With steps, each
   * segment's whole result comes back: { parts: [{ start, ...result }] }.
   */
  attend(q, calls, { heads, nq, steps }) {
    const cache = this.#cache;
    if (steps) return { parts: calls.map(({ start, n, options }) => ({ start, ...cache.attendRange(q, options, this.#offset(start), n) })) };
    const { batch, dv, layout } = this.#spec.shape;
    const merge = new SoftmaxMerge(batch, heads, nq, dv, layout);
    if (calls.whole) {
      const r = cache.attendRange(q, calls.whole, 0, cache.length);
      merge.addPart(r.output, r.lse);
    } else {
      for (const { start, n, options } of calls) {
        const r = cache.attendRange(q, options, this.#offset(start), n);
        merge.addPart(r.output, r.lse);
      }
    }
    return merge.state();
  }

  /** The held keys (which = 'keys') or values of the segments at `starts`, one array each. */
  read(which, starts) {
    const cache = this.#cache;
    if (cache === null) return [];
    const held = cache.length, all = cache[which]();
    const d = which === 'keys' ? cache.dk : cache.dv;
    return starts.map((start) => {
      const [at, capacity] = this.#segment(start);
      return sliceTokens(all, cache.layout, cache.batch, cache.kvHeads, held, d, at, Math.min(at + capacity, held));
    });
  }

  /**
   * Keeps the first `length` tokens of the segment at `start`, and so
   * nothing of the holder's later segments: truncations of several
   * segments may come in any order.
   */
  truncate(start, length) {
    const to = this.#offset(start) + length;
    if (to < this.#cache.length) this.#cache.truncate(to);
  }

  /** Forgets every segment's tokens. */
  clear() {
    this.#cache?.clear();
  }

  /** Frees every segment's memory. */
  dispose() {
    this.#cache?.dispose();
    this.#cache = null;
    this.#segments.clear();
  }
}
