// tensor.js - tensors as { data, dims } (what transformers.js and
// onnxruntime-web hold) for Attention#sdpa: the sizes sdpa needs read from
// each tensor's dims and the layout, checked against each other and against
// any sizes the options also give, and the result handed back with its dims.
// Pure: no DOM, no wasm.

import { describe } from './matrix.js';

// The dims of a tensor of each rank, in each layout, named as sdpa names them.
const AXES = {
  bhsd: { 4: ['batch', 'heads', 'n', 'd'], 3: ['heads', 'n', 'd'], 2: ['n', 'd'] },
  bshd: { 4: ['batch', 'n', 'heads', 'd'], 3: ['n', 'heads', 'd'], 2: ['n', 'd'] },
};

/** True for { data, dims } with dims an array (a Matrix, which also has dims, is not taken as one here). */
export function isTensor(x) {
  return x !== null && typeof x === 'object' && !ArrayBuffer.isView(x) && Array.isArray(x.dims) && 'data' in x && !('rows' in x);
}

function axesOf(t, what, layout) {
  if (!isTensor(t)) throw new TypeError(`sdpa: ${what} must be a tensor { data, dims } like q, got ${describe(t)}`);
  const { dims, data } = t;
  const names = AXES[layout][dims.length];
  if (names === undefined) {
    throw new RangeError(`sdpa: ${what}.dims must have 2, 3 or 4 entries (${AXES[layout][4].join(', ')} for layout '${layout}'), got [${dims.join(', ')}]`);
  }
  dims.forEach((n, i) => {
    if (!Number.isInteger(n) || n < 1) throw new RangeError(`sdpa: ${what}.dims[${i}] (${names[i]}) must be a positive integer, got ${describe(n)}`);
  });
  if (!ArrayBuffer.isView(data) || data instanceof DataView) throw new TypeError(`sdpa: ${what}.data must be a typed array, got ${describe(data)}`);
  const size = dims.reduce((a, b) => a * b, 1);
  if (data.length !== size) throw new RangeError(`sdpa: ${what}.data has ${data.length} values, its dims [${dims.join(', ')}] need ${size}`);
  const axes = { batch: 1, heads: 1 };
  names.forEach((name, i) => {
    axes[name] = dims[i];
  });
  return axes;
}

/**
 * sdpa's arguments for tensors q (batch, heads, nq, dk), k (batch, kvHeads,
 * nk, dk), v (batch, kvHeads, nk, dv) in `options.layout` (default 'bhsd';
 * 'bshd' puts the sequence before the heads; rank 3 drops batch, rank 2 also
 * heads). Returns { q, k, v, options, dims } with flat data and the sizes
 * filled in, and the output's dims in q's rank and layout.
 */
export function tensorCall(q, k, v, options = {}) {
  if (options === null || typeof options !== 'object') throw new TypeError(`sdpa: options must be an object, got ${describe(options)}`);
  const layout = options.layout ?? 'bhsd';
  if (!Object.hasOwn(AXES, layout)) throw new TypeError(`sdpa: layout must be 'bhsd' or 'bshd', got ${describe(layout)}`);
  const Q = axesOf(q, 'q', layout), K = axesOf(k, 'k', layout), V = axesOf(v, 'v', layout);
  if (k.dims.length !== q.dims.length || v.dims.length !== q.dims.length) {
    throw new RangeError(`sdpa: q, k and v must have the same rank, got [${q.dims.join(', ')}], [${k.dims.join(', ')}], [${v.dims.join(', ')}]`);
  }
  const agree = (what, a, b, aName, bName) => {
    if (a !== b) throw new RangeError(`sdpa: ${aName} and ${bName} disagree on ${what}: ${a} and ${b}`);
  };
  agree('batch', Q.batch, K.batch, 'q.dims', 'k.dims');
  agree('batch', K.batch, V.batch, 'k.dims', 'v.dims');
  agree('kv heads', K.heads, V.heads, 'k.dims', 'v.dims');
  agree('the key count', K.n, V.n, 'k.dims', 'v.dims');
  agree('dk', Q.d, K.d, 'q.dims', 'k.dims');
  const sizes = { batch: Q.batch, heads: Q.heads, kvHeads: K.heads, nq: Q.n, nk: K.n, dk: Q.d, dv: V.d };
  for (const [key, value] of Object.entries(sizes)) {
    if (options[key] != null && options[key] !== value) {
      throw new RangeError(`sdpa: options.${key} is ${describe(options[key])} but the tensors' dims say ${value}`);
    }
  }
  const dims = [...q.dims];
  dims[dims.length - 1] = V.d;
  return { q: q.data, k: k.data, v: v.data, options: { ...options, ...sizes }, dims };
}

/**
 * sdpa's result as tensors: the output with `dims`; with steps or stats the
 * object's output and each (batch, heads, nq, nk) step as { data, dims }, lse
 * (batch, heads, nq).
 */
export function tensorResult(r, dims, { batch, heads, nq, nk }) {
  if (ArrayBuffer.isView(r)) return { data: r, dims };
  const out = { output: { data: r.output, dims } };
  for (const key of ['scores', 'scaled', 'logits', 'weights']) if (r[key] !== undefined) out[key] = { data: r[key], dims: [batch, heads, nq, nk] };
  if (r.lse !== undefined) out.lse = { data: r.lse, dims: [batch, heads, nq] };
  return out;
}
