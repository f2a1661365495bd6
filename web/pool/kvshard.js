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
    const ws = w * scale;
    for (let c = 0; c < dv; c++) acc[row + c] += ws * src[from + c];
  }

  /**
   * Adds each head's sink (Float32Array(heads)) to its rows: a logit in the
   * denominator with no value, as one call's softmax has it.
   */
  addSinks(sinks) {
    const { heads, nq, m, l, acc, dv } = this;
    for (let r = 0; r < m.length; r++) {
      const s = sinks[Math.floor(r / nq) % heads];
      if (s > m[r]) {
        const f = Math.exp(m[r] - s);
        l[r] *= f;
        for (let c = 0; c < dv; c++) acc[r * dv + c] *= f;
        m[r] = s;
      }
      l[r] += Math.exp(s - m[r]);
    }
  }

  /** Adds a part's output (in the layout) and its lse (batch, heads, nq). */
  addPart(output, lse) {
    for (let r = 0; r < lse.length; r++) this.#add(r, lse[r], 1, output, this.#at(r), 1);
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
 * A holder's segments of one pool cache: each a cache of `attn` (an
 * Attention instance) of its own capacity, keyed by its first position.
 */
export class Shard {
  #segments = new Map();
  #spec;

  /**
   * spec: { options, shape, segments: [[start, capacity], ...] }; options
   * are what attn.kvCache takes, without capacity (and anything else the
   * instance's cache takes, passed through); shape is { batch, dv, layout }.
   */
  constructor(attn, spec) {
    this.#spec = spec;
    try {
      for (const [start, capacity] of spec.segments) this.#segments.set(start, attn.kvCache({ ...spec.options, capacity }));
    } catch (err) {
      this.dispose();
      throw err;
    }
  }

  #segment(start) {
    const s = this.#segments.get(start);
    if (s === undefined) throw new Error(`attention-wasm pool: no segment of this cache starts at ${start}`);
    return s;
  }

  /** Appends tokens (in the cache's layout) to the segment at `start`. */
  append(start, k, v) {
    this.#segment(start).append(k, v);
  }

  /** attend of the segment at `start` alone, with its options as given. */
  attendOne(start, q, options) {
    return this.#segment(start).attend(q, options);
  }

  /**
   * Attends q over the segments named by `calls` ([{ start, options }],
   * options already translated to the segment's positions, with stats).
   * Without steps the parts are merged here: { m, l, acc } (SoftmaxMerge
   * state) for `heads` query heads of `nq` rows. With steps, each segment's
   * whole result comes back: { parts: [{ start, ...result }] }.
   */
  attend(q, calls, { heads, nq, steps }) {
    if (steps) return { parts: calls.map(({ start, options }) => ({ start, ...this.#segment(start).attend(q, options) })) };
    const { batch, dv, layout } = this.#spec.shape;
    const merge = new SoftmaxMerge(batch, heads, nq, dv, layout);
    for (const { start, options } of calls) {
      const r = this.#segment(start).attend(q, options);
      merge.addPart(r.output, r.lse);
    }
    return merge.state();
  }

  /** The held keys (which = 'keys') or values of the segments at `starts`, one array each. */
  read(which, starts) {
    return starts.map((start) => this.#segment(start)[which]());
  }

  /**
   * Keeps the first `length` tokens of the segment at `start`: its own
   * truncate when the cache has one; else (length 0) clear, or a copy of the
   * kept tokens appended again (bounded by a segment's capacity).
   */
  truncate(start, length) {
    const s = this.#segment(start);
    if (typeof s.truncate === 'function') return s.truncate(length);
    if (length === 0) return s.clear();
    const held = s.length;
    if (length >= held) return;
    const k = sliceTokens(s.keys(), s.layout, s.batch, s.kvHeads, held, s.dk, 0, length);
    const v = sliceTokens(s.values(), s.layout, s.batch, s.kvHeads, held, s.dv, 0, length);
    s.clear();
    s.append(k, v);
  }

  /** Forgets every segment's tokens. */
  clear() {
    for (const s of this.#segments.values()) s.clear();
  }

  /** Frees every segment's memory. */
  dispose() {
    for (const s of this.#segments.values()) s.dispose();
    this.#segments.clear();
  }
}
