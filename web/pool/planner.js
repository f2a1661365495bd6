// planner.js - the pool's split planner: given a call's arguments, whether
// it can be split, and which blocks of (batch, kv head) groups and query rows
// each part computes. Pure: no workers, no wasm (tests/pool-planner.test.js
// runs it alone).
//
// A part is an ordinary sdpa call on sliced inputs, and the result has the
// bits of one instance's call only when every part runs the kernel the whole
// call runs, on the same 4-row tiles: parts are whole (batch, kv head)
// groups (a kv head with all of its query heads), or blocks of query rows
// whose bounds are multiples of the fused kernel's tile and whose kernel
// sdpaKernel() says is the whole call's.

import { toMask, toMatrix } from '../core/matrix.js';
import { newCall, projections, readShared, sdpaCall } from '../core/calls.js';
import { CALL_OPTIONS, WINDOW_MAX, defaultScale, keySpan } from '../core/options.js';

// Work (FLOPs, 2 (dk + dv) per query-key pair) below which a call runs on
// the calling thread: waking a sleeping worker, slow on a busy machine,
// costs more than the threads could win back below it (bench/pool.js times
// a call just above it).
export const SPLIT_MIN_FLOPS = 2 ** 25;
// The fewest query rows a block is meant to have: far more than one tile, so
// a block's packing of K and V pays for itself.
const MIN_BLOCK_ROWS = 64;
// The shared-memory path's pieces (sdpaUnits): how many per thread, and the
// fewest rows of a piece cut from one group's rows.
const UNITS_PER_THREAD = 8;
const UNIT_ROWS = 256;
// K and V of one group up to this size (512 keys of d 64) are cut into runs of rows.
const UNIT_PACK_BYTES = 256 * 1024;
// The fused kernel's tile of query rows (ATTN__MR in c/kernels/kernels.h):
// row blocks start on a tile so every tile holds the rows it holds in the
// whole call.
const TILE_ROWS = 4;
// attn__use_decode's bound on n_q n_k d_k (the C side's choice of kernel).
const DECODE_MAX_WORK = 2048;

/**
 * The kernel attn_sdpa (c/attention.c) runs for a call of these sizes
 * without steps. This mirrors attn__use_decode (the decode kernel for fewer
 * than 4 query rows, or n_q n_k d_k <= 2048; the fused kernel otherwise) and
 * attn_sdpa's branch that gives one decode call all the heads of a group when
 * n_q is 1 and several query heads share a kv head. The kernels round
 * differently, so every part of a split call must get the whole call's answer.
 * @returns {'fused' | 'decode' | 'grouped decode'}
 */
export function sdpaKernel(nq, nk, dk, group) {
  // Floats: the product only meets a small bound, so its rounding cannot flip the test.
  if (nq >= TILE_ROWS && nq * nk * dk > DECODE_MAX_WORK) return 'fused';
  return nq === 1 && group > 1 ? 'grouped decode' : 'decode';
}

// What the calls accept is decided by web/core/calls.js and options.js, the
// rules the instance itself applies: a call that fails them runs on the calling
// thread's instance, which throws the call's own error. On top, typed arrays
// must be real ones (ArrayBuffer.isView), not Proxies, which cannot be
// posted to a worker.

const real = (x) => x == null || ArrayBuffer.isView(x);

// Options of sdpa and multiHeadAttention, as the options module lists them.
const SDPA_OPTIONS = new Set(CALL_OPTIONS.sdpa);
const MHA_OPTIONS = new Set(CALL_OPTIONS.multiHeadAttention);

// ---------------------------------------------------------------------------
// Options as data a worker can receive.

const CANNOT = Symbol('cannot be posted');

// A copy of an option value that postMessage can clone, made of what the
// calls read: primitives, typed arrays (cloned by postMessage itself),
// arrays of primitives (copied, so a Proxy or an array with extra
// properties becomes a plain array), and for a mask or bias { data, shape }.
// Anything else (a function, a symbol, a Proxy of a typed array, another
// object) is CANNOT: the calls reject such values, or read them in ways a
// copy could not repeat.
function plainValue(x, broadcast) {
  if (x == null || typeof x === 'number' || typeof x === 'boolean' || typeof x === 'string') return x;
  if (ArrayBuffer.isView(x)) return x;
  if (Array.isArray(x)) {
    const copy = Array.from(x);
    return copy.every((e) => e == null || typeof e === 'number' || typeof e === 'boolean' || typeof e === 'string') ? copy : CANNOT;
  }
  if (broadcast && typeof x === 'object' && 'shape' in x) {
    const data = plainValue(x.data, false), shape = plainValue(x.shape, false);
    return data === CANNOT || shape === CANNOT ? CANNOT : { data, shape };
  }
  return CANNOT;
}

/**
 * sdpa options as a worker can receive them, without out (the pool fills
 * it), or null when one cannot be posted (an unknown option, a function, a
 * Proxy of a typed array; sdpa rejects all but the last, which the calling
 * thread's instance then runs). Reads each option once, as sdpa does.
 */
export function plainSdpaOptions(o) {
  const copy = {};
  try {
    for (const key in o) {
      if (!SDPA_OPTIONS.has(key)) return null;
      if (key === 'out') continue;
      const value = plainValue(o[key], key === 'mask' || key === 'bias');
      if (value === CANNOT) return null;
      copy[key] = value;
    }
  } catch {
    return null; // a getter or Proxy that throws: sdpa meets it too
  }
  return copy;
}

// ---------------------------------------------------------------------------
// sdpa

/**
 * The shapes of a plainly valid sdpa call, or null (the calling thread's
 * instance then runs it and throws what attn.sdpa throws). split: false when
 * it has options the planner does not split (layout 'bshd', per-batch
 * offsets, kvLengths, broadcast masks, steps, stats); such a call runs whole
 * on one worker, which checks it as attn.sdpa does. parts: the options every
 * part of a split call shares, as plain values.
 */
export function sdpaPlan(q, k, v, o) {
  let c;
  try {
    c = sdpaCall(newCall(), q, k, v, o);
  } catch {
    return null;
  }
  const { batch, heads, kvHeads, nq, nk, dk, dv, mask, bias } = c;
  if (!real(q) || !real(k) || !real(v) || !real(c.out) || !real(mask?.data) || !real(bias?.data)) return null;
  const flatMask = (m) => m === null || (m.cols === nk && m.strides[0] === 0 && m.strides[1] === 0);
  // What the planner splits: the bhsd layout, one query offset, flat masks,
  // no per-batch lengths, no step matrices or statistics.
  const split = c.layout === 'bhsd' && c.queryOffsets === null && c.kvLengths === null && !c.steps && !c.stats &&
    flatMask(mask) && flatMask(bias) && o.dtype == null;
  const shared = {};
  if (c.scale !== defaultScale(dk)) shared.scale = c.scale;
  if (c.causal) shared.causal = true;
  if (c.softcap !== 0) shared.softcap = c.softcap;
  if (c.window !== null) shared.window = [c.window[0], c.window[1]];
  if (c.rope !== null) shared.rope = { ...c.rope };
  return {
    batch, heads, kvHeads, group: heads / kvHeads, nq, nk, dk, dv, split, shared,
    sinks: c.sinks, alibi: c.alibi,
    causal: c.causal, window: c.window, queryOffset: split ? c.queryOffset : 0,
    mask: mask?.data ?? null, bias: bias?.data ?? null,
    work: 2 * batch * heads * nq * nk * (dk + dv),
  };
}

/**
 * The blocks of a split call for `threads` parts: { u0, u1, i0, i1 }, the
 * (batch, kv head) groups [u0, u1) (u = b kvHeads + g) and their query rows
 * [i0, i1). Whole groups when there are at least as many as threads, or
 * when the rows cannot be cut (too few rows, or a block's queryOffset would
 * pass int32);
 * else blocks of rows of each group, every one running the whole call's kernel.
 */
export function sdpaBlocks(plan, threads) {
  const { batch, kvHeads, nq, nk, dk, group, causal, window = null, queryOffset } = plan;
  const units = batch * kvHeads;
  const blocks = units >= threads || queryOffset + nq - 1 > WINDOW_MAX ? 1
    : Math.min(threads / gcd(units, threads), Math.floor(nq / MIN_BLOCK_ROWS));
  // A row costs the keys it may see.
  const rule = { causal, window, queryOffset };
  const cost = (i) => {
    const { lo, hi } = keySpan(rule, i, nk);
    return hi - lo;
  };
  const bounds = blocks > 1 ? rowBounds(nq, blocks, cost,
    (rows) => sdpaKernel(rows, nk, dk, group) === sdpaKernel(nq, nk, dk, group)) : [0, nq];
  if (bounds.length <= 2) {
    const count = Math.min(threads, units);
    return Array.from({ length: count }, (_, p) => ({
      u0: Math.floor(units * p / count), u1: Math.floor(units * (p + 1) / count), i0: 0, i1: nq,
    }));
  }
  const out = [];
  for (let u = 0; u < units; u++) {
    for (let r = 0; r + 1 < bounds.length; r++) out.push({ u0: u, u1: u + 1, i0: bounds[r], i1: bounds[r + 1] });
  }
  return out;
}

/**
 * The pieces of a split call on the shared memory, where every thread that
 * takes part claims the next piece from one counter until none are left
 * (web/pool/shared.js), so a thread that another program slows takes fewer
 * of them instead of holding the call up. With at least as many (batch, kv
 * head) groups as threads: about UNITS_PER_THREAD pieces per thread, whole
 * groups or, when a group's K and V are small enough to pack again cheaply
 * (UNIT_PACK_BYTES: every piece packs its group's K and V), runs of at
 * least UNIT_ROWS of each group's rows where rows see every key (causal
 * runs are balanced by the keys their rows see), every one running the
 * whole call's kernel. With fewer groups, sdpaBlocks' blocks: cutting one
 * group's rows finer packs its long K and V once more per piece, which
 * costs more than the balance wins. Never fewer pieces than sdpaBlocks.
 */
export function sdpaUnits(plan, threads) {
  const { batch, kvHeads, nq, nk, dk, dv, group, causal, window = null, queryOffset } = plan;
  const fixed = sdpaBlocks(plan, threads);
  const units = batch * kvHeads, target = threads * UNITS_PER_THREAD;
  if (units < threads) return fixed;
  const perUnit = queryOffset + nq - 1 > WINDOW_MAX || nk * (dk + dv) * 4 > UNIT_PACK_BYTES ? 1
    : Math.min(Math.ceil(target / units), Math.floor(nq / UNIT_ROWS));
  let out;
  if (perUnit <= 1) {
    const count = Math.min(target, units);
    out = Array.from({ length: count }, (_, p) => ({
      u0: Math.floor(units * p / count), u1: Math.floor(units * (p + 1) / count), i0: 0, i1: nq,
    }));
  } else {
    const rule = { causal, window, queryOffset };
    const cost = (i) => {
      const { lo, hi } = keySpan(rule, i, nk);
      return hi - lo;
    };
    const bounds = rowBounds(nq, perUnit, cost, (rows) => sdpaKernel(rows, nk, dk, group) === sdpaKernel(nq, nk, dk, group));
    out = [];
    for (let u = 0; u < units; u++) {
      for (let r = 0; r + 1 < bounds.length; r++) out.push({ u0: u, u1: u + 1, i0: bounds[r], i1: bounds[r + 1] });
    }
  }
  return out.length >= fixed.length ? out : fixed;
}

// Bounds of at most `blocks` blocks of query rows, [0, ..., nq], inner
// bounds multiples of the tile, with about equal work each (a row costs
// cost(i)), every block's row count passing sameKernel: a bound that would
// leave too few rows before or after it moves down a tile at a time, and is
// dropped if no place between its neighbours fits.
function rowBounds(nq, blocks, cost, sameKernel) {
  let total = 0;
  for (let i = 0; i < nq; i++) total += cost(i);
  const bounds = [0];
  let acc = 0;
  for (let i = 0; i < nq && bounds.length < blocks; i++) {
    acc += cost(i);
    if (acc < total * bounds.length / blocks) continue;
    const last = bounds.at(-1);
    // The nearest tile bound, below nq.
    let at = Math.min(Math.round((i + 1) / TILE_ROWS) * TILE_ROWS, Math.ceil(nq / TILE_ROWS) * TILE_ROWS - TILE_ROWS);
    while (at > last && !(sameKernel(at - last) && sameKernel(nq - at))) at -= TILE_ROWS;
    if (at > last) bounds.push(at);
  }
  bounds.push(nq);
  return bounds;
}

// The per-head values (sinks, ALiBi slopes: Float32Array(heads)) of the
// query heads of units [u0, u1), u = b kvHeads + g, in the block's head order.
function unitHeads(values, kvHeads, group, u0, u1) {
  const out = new Float32Array((u1 - u0) * group);
  for (let u = u0; u < u1; u++) {
    const g = u % kvHeads;
    out.set(values.subarray(g * group, (g + 1) * group), (u - u0) * group);
  }
  return out;
}

/**
 * The options of one block's sdpa call: plain values, mask and bias rows
 * as views, sinks and ALiBi slopes those of the block's heads (the standard
 * slopes as the numbers they are for the whole call's head count).
 */
export function blockOptions(plan, { u0, u1, i0, i1 }) {
  const { nq, nk, dk, dv, group, kvHeads, mask, bias } = plan;
  const opts = { ...plan.shared, heads: (u1 - u0) * group, kvHeads: u1 - u0, nq: i1 - i0, nk, dk, dv };
  if (plan.sinks !== null) opts.sinks = unitHeads(plan.sinks, kvHeads, group, u0, u1);
  if (plan.alibi !== null) opts.alibi = unitHeads(plan.alibi, kvHeads, group, u0, u1);
  if (plan.queryOffset !== 0 || i0 > 0) opts.queryOffset = plan.queryOffset + i0;
  // Views of the caller's mask and bias (a row block's rows of them): the
  // caller's own share reads them in place, a worker's part stages a copy.
  const whole = i0 === 0 && i1 === nq;
  if (mask !== null) opts.mask = whole ? mask : mask.subarray(i0 * nk, i1 * nk);
  if (bias !== null) opts.bias = whole ? bias : bias.subarray(i0 * nk, i1 * nk);
  return opts;
}

// ---------------------------------------------------------------------------
// multiHeadAttention

/**
 * The matrices and sizes of a multiHeadAttention call the planner can split,
 * or null (the calling thread's instance then runs it). Split only without
 * steps and with dk, dv multiples of 4, so each part's projection columns
 * take the same gemm paths (no scalar column tail) as the whole projection.
 * shared: the options every part gets, as plain values.
 */
export function mhaPlan(x, o) {
  if (o === null || typeof o !== 'object' || o.steps) return null;
  for (const key in o) if (!MHA_OPTIONS.has(key)) return null;
  try {
    const { X, C, WQ, WK, WV, WO, heads, kvHeads, dk, dv } = projections(x, o, 'multiHeadAttention');
    if (dk % 4 !== 0 || dv % 4 !== 0) return null;
    const c = newCall();
    c.dk = dk;
    c.heads = heads;
    readShared(c, o, 'multiHeadAttention');
    const shared = {};
    if (o.mask != null) shared.mask = { rows: X.rows, cols: C.rows, data: toMask(o.mask, 'mask', X.rows, C.rows) };
    if (o.bias != null) shared.bias = plainMatrix(toMatrix(o.bias, 'bias', X.rows, C.rows));
    // Proxies of typed arrays pass the checks above but cannot be posted.
    if (![X, C, WQ, WK, WV, WO, shared.mask, shared.bias].every((m) => m == null || ArrayBuffer.isView(m.data))) return null;
    for (const key of ['causal', 'scale', 'softcap', 'window', 'queryOffset']) {
      if (o[key] == null) continue;
      const value = plainValue(o[key], false);
      if (value === CANNOT) return null;
      shared[key] = value;
    }
    if (c.rope !== null) shared.rope = { ...c.rope };
    const work = 2 * heads * X.rows * C.rows * (dk + dv) + 2 * X.rows * X.cols * WQ.cols + 2 * C.rows * C.cols * (WK.cols + WV.cols);
    return { X, C, WQ, WK, WV, WO, heads, kvHeads, group: heads / kvHeads, dk, dv, shared, sinks: c.sinks, alibi: c.alibi, work };
  } catch {
    return null;
  }
}

/** kv-head groups [g0, g1) for `threads` parts of a multiHeadAttention call. */
export function mhaGroups(plan, threads) {
  const count = Math.min(threads, plan.kvHeads);
  return Array.from({ length: count }, (_, p) => ({
    g0: Math.floor(plan.kvHeads * p / count), g1: Math.floor(plan.kvHeads * (p + 1) / count),
  }));
}

/** The options of one part: the kv-head groups' columns of wq, wk, wv (fresh arrays). */
export function mhaPartOptions(plan, { g0, g1 }) {
  const { X, C, WQ, WK, WV, group, dk, dv } = plan;
  const opts = {
    ...plan.shared,
    wq: columns(WQ, g0 * group * dk, g1 * group * dk), wk: columns(WK, g0 * dk, g1 * dk), wv: columns(WV, g0 * dv, g1 * dv),
    heads: (g1 - g0) * group, kvHeads: g1 - g0,
  };
  if (plan.sinks !== null) opts.sinks = plan.sinks.slice(g0 * group, g1 * group);
  if (plan.alibi !== null) opts.alibi = plan.alibi.slice(g0 * group, g1 * group);
  if (C !== X) opts.context = plainMatrix(C);
  return opts;
}

/** A matrix as { rows, cols, data } (what a worker receives). */
export function plainMatrix(m) {
  return { rows: m.rows, cols: m.cols, data: m.data };
}

// Columns [c0, c1) of a matrix, as a new { rows, cols, data }.
function columns(m, c0, c1) {
  const width = c1 - c0, data = new Float32Array(m.rows * width);
  for (let i = 0; i < m.rows; i++) data.set(m.data.subarray(i * m.cols + c0, i * m.cols + c1), i * width);
  return { rows: m.rows, cols: width, data };
}

function gcd(a, b) {
  while (b !== 0) [a, b] = [b, a % b];
  return a;
}
