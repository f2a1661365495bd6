// options.js - every option's rule, once: its name, type, range, default,
// what 0 / null / [-1, -1] mean, and its error message, and the rule of
// which keys a query may see (keySpan). The API calls (core/attention.js),
// both KV caches, the pool's planner, the model and the worked example all
// check options here, so an option means the same thing wherever it is
// given. How a whole call is assembled from them (shapes, masks,
// projections, a cache's calls) is core/calls.js. Pure: no wasm, no DOM.
//
// The rules, as c/attention.h states them for the C side:
//   causal       boolean, default false: key j is allowed for query i only when j <= p,
//                p = i + queryOffset (PyTorch's is_causal, top-left aligned).
//   scale        finite as a float32; default 1/sqrt(dk) (defaultScale).
//   softcap      0 or absent: none (as C and ONNX's softcap = 0); else c > 0 as a float32,
//                logits = c * tanh(scaled / c).
//   window       [left, right], integers in [-1, WINDOW_MAX]; -1 leaves a side unbounded,
//                so [-1, -1] (or absent) is no window.
//   queryOffset  integer in [-WINDOW_MAX, WINDOW_MAX] (or an Int32Array(batch)); default 0.
//   kvLengths    Int32Array(batch), each in [0, nk].
//   mask, bias   (nq, nk), or { data, shape } broadcast numpy-style to (batch, heads, nq, nk).
//   layout       'bhsd' (default, PyTorch) or 'bshd'.
//   rope         absent or false: none; true or { theta = 10000, dims = dk, interleaved = false }:
//                q rows turned at p = i + queryOffset, k rows at j (RoPE); dims even, 2..dk;
//                theta finite >= 1 as a float32. A cache turns keys at append, queries at attend.
//   sinks        Float32Array(heads) of logits finite as float32: each joins its head's
//                softmax denominators, with no value.
//   alibi        absent or false: none; true: the standard slopes for the head count
//                (alibiSlopes); or Float32Array(heads) of finite slopes: logits +=
//                -slope * (p - j), formed in C from the row's reference key, so any
//                finite slope gives no NaN (c/attention.h).
//   kvCache      batch, kvHeads (default 1), dk, dv (default dk), capacity: positive
//                integers; layout as above; dtype 'float32' (default), 'float16' or 'int8'
//                (checkCacheOptions, for one instance's cache and the pool's alike).
// A value is checked as the float32 or int32 C will see, so nothing that
// passes here comes back from C as a status.

import { checkSize, describe } from './matrix.js';

/** Window sides and query offsets are int32 in C. */
export const WINDOW_MAX = 2 ** 31 - 1;

/** The scale used when none is given: 1/sqrt(d_k), as in "Attention Is All You Need". */
export function defaultScale(dk) {
  return 1 / Math.sqrt(dk);
}

// ---- which options each call takes -------------------------------------------

const SIZES = ['batch', 'heads', 'kvHeads', 'nq', 'nk', 'dk', 'dv'];
/** The options every attention call shares. */
export const SHARED_OPTIONS = Object.freeze(['causal', 'mask', 'bias', 'scale', 'softcap', 'window', 'queryOffset', 'rope', 'sinks', 'alibi']);
const PROJECTIONS = ['wq', 'wk', 'wv', 'wo', 'heads', 'kvHeads', 'context'];

/** The options each call of the API accepts; any other key is a TypeError naming them. */
export const CALL_OPTIONS = Object.freeze({
  attention: Object.freeze([...SHARED_OPTIONS, 'steps', 'dtype']),
  attentionBackward: SHARED_OPTIONS,
  sdpa: Object.freeze([...SIZES, 'layout', ...SHARED_OPTIONS, 'kvLengths', 'steps', 'stats', 'out', 'dtype']),
  sdpaBackward: Object.freeze([...SIZES, 'layout', ...SHARED_OPTIONS, 'kvLengths', 'lse', 'out']),
  multiHeadAttention: Object.freeze([...PROJECTIONS, ...SHARED_OPTIONS, 'steps', 'cache']),
  multiHeadAttentionBackward: Object.freeze([...PROJECTIONS, ...SHARED_OPTIONS]),
  kvCache: Object.freeze(['batch', 'kvHeads', 'dk', 'dv', 'capacity', 'layout', 'dtype']),
  attend: Object.freeze(['heads', 'nq', ...SHARED_OPTIONS, 'kvLengths', 'steps', 'stats', 'out']),
  append: Object.freeze(['rope']),
  load: Object.freeze(['simd', 'deterministic', 'wasm']),
  matmul: Object.freeze(['out', 'transposeB', 'bias']),
  matmulBackward: Object.freeze(['transposeB', 'bias']),
  layerNorm: Object.freeze(['gamma', 'beta', 'eps', 'out']),
  layerNormBackward: Object.freeze(['gamma', 'beta', 'eps']),
  rmsNorm: Object.freeze(['gamma', 'eps', 'out']),
  rmsNormBackward: Object.freeze(['gamma', 'eps']),
  gelu: Object.freeze(['approximate', 'out']),
  geluBackward: Object.freeze(['approximate']),
  rope: Object.freeze(['theta', 'dims', 'interleaved', 'position', 'heads']),
  softmax: Object.freeze(['out']),
});

const ALLOWED = new Map(Object.entries(CALL_OPTIONS).map(([call, keys]) => [call, new Set(keys)]));

/**
 * Throws TypeError unless `options` is an object whose keys `call` takes.
 * for-in, not Object.keys: no array per call, and inherited keys are
 * checked too, as they are read.
 */
export function checkKeys(options, call, fn = call) {
  checkKnownKeys(options, ALLOWED.get(call), CALL_OPTIONS[call], fn);
}

/**
 * checkKeys for any call: `allowed` a Set of the keys it takes, `known`
 * the same keys in the order the message lists them (the model's calls).
 */
export function checkKnownKeys(options, allowed, known, fn) {
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`${fn}: options must be an object, got ${describe(options)}`);
  }
  for (const key in options) {
    if (!allowed.has(key)) {
      throw new TypeError(`${fn}: unknown option ${JSON.stringify(key)} (known: ${known.join(', ')})`);
    }
  }
}

// ---- one option at a time ----------------------------------------------------

/** null and undefined both mean "not given" for optional options. */
export function checkBool(value, name) {
  if (value != null && typeof value !== 'boolean') throw new TypeError(`${name} must be a boolean, got ${describe(value)}`);
  return value === true;
}

/** A positive integer, or `fallback` when absent and a fallback exists. */
export function checkCount(value, name, fallback) {
  if (value == null && fallback !== undefined) return fallback;
  checkSize(value, name);
  return value;
}

export function isCount(n) {
  return typeof n === 'number' && Number.isInteger(n) && n >= 1;
}

/** scale: absent -> defaultScale(dk); else a number that is finite as a float32 and not a nonzero that rounds to 0. */
export function checkScale(value, name, dk) {
  if (value == null) return defaultScale(dk);
  if (typeof value !== 'number') throw new TypeError(`${name} must be a number, got ${describe(value)}`);
  const f = Math.fround(value);
  if (!Number.isFinite(f)) throw new RangeError(`${name} must be finite as a float32 (magnitude below 3.4e38), got ${value}`);
  // 0 is a scale (uniform weights); a nonzero scale that a float32 rounds to 0 would silently be one.
  if (f === 0 && value !== 0) throw new RangeError(`${name} must be 0 or at least 1.4e-45 in magnitude (float32), got ${value}`);
  return value;
}

/** softcap: absent or 0 -> 0 (none); else a number > 0 that stays > 0 and finite as a float32. */
export function checkSoftcap(value, name) {
  if (value == null || value === 0) return 0;
  if (typeof value !== 'number') throw new TypeError(`${name} must be 0 (none) or a number > 0, got ${describe(value)}`);
  const f = Math.fround(value);
  if (!(f > 0) || !Number.isFinite(f)) {
    throw new RangeError(`${name} must be 0 (none) or a number > 0 that a float32 holds (1.4e-45 to 3.4e38), got ${value}`);
  }
  return value;
}

/** window: absent or [-1, -1] -> null (none); else [left, right], integers in [-1, WINDOW_MAX]. */
export function checkWindow(value, name) {
  if (value == null) return null;
  if (!(Array.isArray(value) || ArrayBuffer.isView(value)) || value.length !== 2) {
    throw new TypeError(`${name} must be [left, right] (integers, -1 for unbounded), got ${describe(value)}`);
  }
  for (const side of [0, 1]) {
    const x = value[side];
    if (typeof x !== 'number') throw new TypeError(`${name}[${side}] must be an integer from -1 (unbounded) to ${WINDOW_MAX}, got ${describe(x)}`);
    if (!Number.isInteger(x) || x < -1 || x > WINDOW_MAX) {
      throw new RangeError(`${name}[${side}] must be an integer from -1 (unbounded) to ${WINDOW_MAX}, got ${x}`);
    }
  }
  return value[0] === -1 && value[1] === -1 ? null : [value[0], value[1]];
}

const NO_OFFSET = Object.freeze({ queryOffset: 0, queryOffsets: null });

/** queryOffset: absent -> 0; an integer in [-WINDOW_MAX, WINDOW_MAX], or an Int32Array(batch). */
export function checkOffset(value, name, batch = 1) {
  if (value == null) return NO_OFFSET;
  if (typeof value === 'number') {
    if (!Number.isInteger(value) || value < -WINDOW_MAX || value > WINDOW_MAX) {
      throw new RangeError(`${name} must be an integer from ${-WINDOW_MAX} to ${WINDOW_MAX} (or an Int32Array of batch = ${batch} integers), got ${value}`);
    }
    return { queryOffset: value, queryOffsets: null };
  }
  if (!(value instanceof Int32Array)) {
    throw new TypeError(`${name} must be an integer or an Int32Array of batch = ${batch} integers, got ${describe(value)}`);
  }
  if (value.length !== batch) throw new RangeError(`${name} has ${value.length} values, expected batch = ${batch}`);
  return { queryOffset: 0, queryOffsets: value };
}

/** kvLengths: an Int32Array(batch), each in [0, nk]. */
export function checkLengths(value, name, batch, nk) {
  if (!(value instanceof Int32Array)) throw new TypeError(`${name} must be an Int32Array of batch = ${batch} lengths, got ${describe(value)}`);
  if (value.length !== batch) throw new RangeError(`${name} has ${value.length} values, expected batch = ${batch}`);
  for (let b = 0; b < batch; b++) {
    if (value[b] < 0 || value[b] > nk) throw new RangeError(`${name}[${b}] is ${value[b]}, must be in [0, nk = ${nk}]`);
  }
  return value;
}

/** dtype: absent -> 'float32'; 'float16' says a Uint16Array holds float16 bits. */
export function checkDtype(value, name) {
  if (value == null) return 'float32';
  if (value !== 'float32' && value !== 'float16') {
    const E = typeof value === 'string' ? RangeError : TypeError;
    throw new E(`${name} must be 'float32' or 'float16', got ${describe(value)}`);
  }
  return value;
}

/** A KV cache's element types, as attn_kv_dtype of c/attention.h numbers them. */
export const CACHE_DTYPES = Object.freeze(['float32', 'float16', 'int8']);

/** A KV cache's dtype: absent -> 'float32'; else one of CACHE_DTYPES. */
export function checkCacheDtype(value, name) {
  if (value == null) return 'float32';
  if (!CACHE_DTYPES.includes(value)) throw new TypeError(`${name} must be 'float32', 'float16' or 'int8', got ${describe(value)}`);
  return value;
}

/** layout: absent -> 'bhsd'; else 'bhsd' or 'bshd'. */
export function checkLayout(value, name) {
  if (value == null) return 'bhsd';
  if (typeof value !== 'string') throw new TypeError(`${name} must be 'bhsd' or 'bshd', got ${describe(value)}`);
  if (value !== 'bhsd' && value !== 'bshd') throw new RangeError(`${name} must be 'bhsd' or 'bshd', got ${describe(value)}`);
  return value;
}

/** RoPE's base when none is given (Llama 2, RoFormer). */
export const ROPE_THETA = 10000;
const NO_ROPE = null;

/**
 * rope: absent or false -> null (none); true or { theta, dims, interleaved }
 * -> { theta (default 10000, finite >= 1 as a float32: every frequency at most 1), dims (default dk,
 * even, 2..dk), interleaved (default false: rotate_half pairs) }.
 */
export function checkRope(value, name, dk) {
  if (value == null || value === false) return NO_ROPE;
  const o = value === true ? {} : value;
  if (o === null || typeof o !== 'object' || Array.isArray(o)) {
    throw new TypeError(`${name} must be true or { theta?, dims?, interleaved? }, got ${describe(value)}`);
  }
  for (const key in o) {
    if (key !== 'theta' && key !== 'dims' && key !== 'interleaved') throw new TypeError(`${name}: unknown key ${JSON.stringify(key)} (known: theta, dims, interleaved)`);
  }
  const theta = o.theta ?? ROPE_THETA;
  if (typeof theta !== 'number') throw new TypeError(`${name}.theta must be a number >= 1, got ${describe(theta)}`);
  const f = Math.fround(theta);
  if (!(f >= 1) || !Number.isFinite(f)) throw new RangeError(`${name}.theta must be >= 1 and finite as a float32, got ${theta}`);
  const dims = o.dims ?? dk;
  if (typeof dims !== 'number') throw new TypeError(`${name}.dims must be an even integer from 2 to dk = ${dk}, got ${describe(dims)}`);
  if (!Number.isInteger(dims) || dims < 2 || dims > dk || dims % 2 !== 0) {
    throw new RangeError(`${name}.dims must be an even integer from 2 to dk = ${dk}, got ${dims}`);
  }
  return { theta, dims, interleaved: checkBool(o.interleaved, `${name}.interleaved`) };
}

const ropeText = (r) => (r === null ? 'no rope' : `rope { theta: ${r.theta}, dims: ${r.dims}, interleaved: ${r.interleaved} }`);
const sameRope = (a, b) => a === b || (a !== null && b !== null && a.theta === b.theta && a.dims === b.dims && a.interleaved === b.interleaved);

/**
 * A KV cache's keys are turned once, as they are appended, so every append
 * and attend of a cache must use the rope its keys were turned with:
 * `held` is the rope of the appends since the cache was last empty
 * (undefined while it is empty), `rope` this call's (checked). An append
 * may not change it; an attend must repeat it, except that an attend may
 * turn its queries over keys the caller turned (appended with no rope).
 * call: 'append' or 'attend'.
 */
export function checkCacheRope(held, rope, call) {
  if (held === undefined || sameRope(held, rope)) return;
  if (call === 'append') {
    throw new RangeError(`kvCache.append: the held keys were appended with ${ropeText(held)}, got ${ropeText(rope)}; a cache's keys all turn alike (clear() it to change)`);
  }
  if (held !== null) {
    throw new RangeError(`kvCache.attend: the keys were turned with ${ropeText(held)} as they were appended; attend needs the same rope to turn the queries, got ${ropeText(rope)}`);
  }
}

/** A Float32Array of one finite float32 per head (sinks, ALiBi slopes). */
function checkPerHead(value, name, heads, what) {
  if (!(value instanceof Float32Array)) throw new TypeError(`${name} must be a Float32Array of heads = ${heads} ${what}, got ${describe(value)}`);
  if (value.length !== heads) throw new RangeError(`${name} has ${value.length} values, expected heads = ${heads}`);
  for (let h = 0; h < heads; h++) {
    if (!Number.isFinite(value[h])) throw new RangeError(`${name}[${h}] is ${value[h]}, must be finite`);
  }
  return value;
}

/** sinks: absent -> null; else a Float32Array(heads) of finite logits. */
export function checkSinks(value, name, heads) {
  return value == null ? null : checkPerHead(value, name, heads, 'logits');
}

/**
 * The standard ALiBi slopes for `heads` heads (Press et al., the reference
 * code's get_slopes; BLOOM and MPT use the same): for a power of two n,
 * 2^(-8 (h + 1) / n); otherwise those of the largest power of two n below,
 * then every other slope of 2n (2^(-4 (2k + 1) / n)) for the rest.
 */
export function alibiSlopes(heads) {
  const n = 2 ** Math.floor(Math.log2(heads));
  const slopes = new Float32Array(heads);
  for (let h = 0; h < heads; h++) slopes[h] = h < n ? 2 ** (-8 * (h + 1) / n) : 2 ** (-4 * (2 * (h - n) + 1) / n);
  return slopes;
}

/** alibi: absent or false -> null; true -> alibiSlopes(heads); else a Float32Array(heads) of finite slopes. */
export function checkAlibi(value, name, heads) {
  if (value == null || value === false) return null;
  if (value === true) return alibiSlopes(heads);
  return checkPerHead(value, name, heads, 'slopes (or true for the standard ones)');
}

// ---- a KV cache's options ---------------------------------------------------

/**
 * The options of a KV cache (Attention#kvCache and AttentionPool#kvCache):
 * { batch, kvHeads, dk, dv, capacity, layout, dtype }, checked, defaults
 * filled in; `fn` names the call in messages.
 */
export function checkCacheOptions(options, fn = 'kvCache') {
  checkKeys(options, 'kvCache', fn);
  const batch = checkCount(options.batch, `${fn}: batch`, 1);
  const kvHeads = checkCount(options.kvHeads, `${fn}: kvHeads`, 1);
  const dk = checkCount(options.dk, `${fn}: dk`);
  const dv = checkCount(options.dv, `${fn}: dv`, dk);
  const capacity = checkCount(options.capacity, `${fn}: capacity`);
  const layout = checkLayout(options.layout, `${fn}: layout`);
  const dtype = checkCacheDtype(options.dtype, `${fn}: dtype`);
  return { batch, kvHeads, dk, dv, capacity, layout, dtype };
}

// ---- plain numbers and arrays of them ----------------------------------------

/** An integer in [min, max]: TypeError for a non-number, RangeError outside. */
export function checkInteger(value, name, min, max) {
  if (typeof value !== 'number') throw new TypeError(`${name} must be an integer in [${min}, ${max}], got ${describe(value)}`);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new RangeError(`${name} must be an integer in [${min}, ${max}], got ${describe(value)}`);
  }
  return value;
}

/** A finite number > 0. */
export function checkPositive(value, name) {
  if (typeof value !== 'number') throw new TypeError(`${name} must be a finite number, got ${describe(value)}`);
  if (!Number.isFinite(value) || value <= 0) throw new RangeError(`${name} must be a finite number > 0, got ${describe(value)}`);
  return value;
}

/** A number in [min, max], or [min, max) when `open` says the top is excluded. */
export function checkBetween(value, name, min, max, open = false) {
  const inside = typeof value === 'number' && value >= min && (open ? value < max : value <= max);
  if (!inside) throw new RangeError(`${name} must be a number in [${min}, ${max}${open ? ')' : ']'}, got ${describe(value)}`);
  return value;
}

/**
 * Every value of an array of numbers finite: a RangeError naming the first
 * that is not, as `${name}[i]`. `negativeInfinity` lets -Infinity through
 * (an lse of a row with no allowed key).
 */
export function checkFinite(values, name, negativeInfinity = false) {
  for (let i = 0; i < values.length; i++) {
    const x = values[i];
    if (!Number.isFinite(x) && !(negativeInfinity && x === -Infinity)) {
      throw new RangeError(`${name}[${i}] is ${x}, must be finite${negativeInfinity ? ' (or -Infinity for a row with no allowed key)' : ''}`);
    }
  }
  return values;
}

// ---- which keys a query may see ----------------------------------------------

/**
 * The keys [lo, hi) query row i may see by position, of the nk that exist:
 * those from window[0] before to window[1] after its position
 * p = i + queryOffset (a side of -1, or no window, unbounded), and with
 * causal none after p. The rule of attn__key_span (c/kernels/kernels.h) as
 * attn__head_view (c/attention.c) sets it up; the mask and kvLengths come
 * on top. Both ends never decrease as i grows, so the keys some row of
 * [i0, i1) may see are keySpan(i0).lo .. keySpan(i1 - 1).hi.
 * @param {{ causal?: boolean, window?: number[] | null, queryOffset?: number }} options
 * @returns {{ lo: number, hi: number }} lo === hi when none
 */
export function keySpan(options, i, nk = Infinity) {
  const p = i + (options.queryOffset ?? 0);
  const w = options.window;
  const before = w && w[0] >= 0 ? w[0] : Infinity;
  let after = w && w[1] >= 0 ? w[1] : Infinity;
  if (options.causal && after > 0) after = 0;
  const hi = Math.max(Math.min(p + after + 1, nk), 0);
  const lo = Math.min(Math.max(p - before, 0), hi);
  return { lo, hi };
}

/**
 * Why key j is not allowed for query i ('causal' or 'window'), or '' when
 * it is (keySpan's rule): 'causal' for a key after the query's position.
 * @param {{ causal?: boolean, window?: number[] | null, queryOffset?: number }} options
 */
export function blockedBy(options, i, j) {
  const { lo, hi } = keySpan(options, i);
  if (j >= lo && j < hi) return '';
  return options.causal && j > i + (options.queryOffset ?? 0) ? 'causal' : 'window';
}
