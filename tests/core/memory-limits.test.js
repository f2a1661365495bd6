// Sizes bounded by memory, not by (nq, nk): 16 heads x 8192 tokens, d = 64
// (inputs of 32 MiB each, batch * heads * nq * nk = 2^30) runs in sdpa
// (causal, and with a window), sdpaBackward and a cache's prefill; only a
// call with step matrices needs (nq, nk) memory, and when a call cannot fit
// the error names its largest part and the bytes. These calls are big (each
// a few seconds to tens of seconds on one core): one test each, SIMD128
// build only.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { loadAttention } from '../../web/attention.js';
import { assertClose, rejects } from '../helpers.js';

const [HEADS, N, D] = [16, 8192, 64];
// Rows of the big call checked against the same rows of a small call over
// the keys they can see (causal: the first ROWS tokens): the same kernels
// over fewer keys; sums over key blocks may split differently.
const ROWS = 256;
const RTOL_SPLIT = 2e-6;

// xorshift32 values in [-1, 1): tens of millions, cheaply.
function values(n, seed) {
  let s = seed;
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    s ^= s << 13; s ^= s >>> 17; s ^= s << 5;
    out[i] = ((s >>> 0) / 4294967296 - 0.5) * 2;
  }
  return out;
}

// Rows [0, rows) of each head of a (heads, n, d) array.
const firstRows = (x, n, rows) => {
  const out = new Float32Array(HEADS * rows * D);
  for (let h = 0; h < HEADS; h++) out.set(x.subarray(h * n * D, (h * n + rows) * D), h * rows * D);
  return out;
};

const s = suite('sizes bounded by memory (16 heads x 8192 tokens, d = 64)');
s.before(async (ctx) => {
  ctx.attn = await loadAttention({ simd: true, deterministic: true });
  ctx.q = values(HEADS * N * D, 1);
  ctx.k = values(HEADS * N * D, 2);
  ctx.v = values(HEADS * N * D, 3);
  ctx.small = { q: firstRows(ctx.q, N, ROWS), k: firstRows(ctx.k, N, ROWS), v: firstRows(ctx.v, N, ROWS) };
});

const shape = (n) => ({ heads: HEADS, nq: n, nk: n, dk: D, dv: D });

s('sdpa, causal: runs, and its first rows are those of the call over their keys', ({ attn, q, k, v, small }) => {
  const out = attn.sdpa(q, k, v, { ...shape(N), causal: true });
  assert.is(out.length, HEADS * N * D);
  assertClose(firstRows(out, N, ROWS), attn.sdpa(small.q, small.k, small.v, { ...shape(ROWS), causal: true }), { rtol: RTOL_SPLIT, what: 'first rows' });
});

s('sdpa, sliding window [128, 0]: runs, and its first rows are those of the call over their keys', ({ attn, q, k, v, small }) => {
  const out = attn.sdpa(q, k, v, { ...shape(N), causal: true, window: [128, 0] });
  assertClose(firstRows(out, N, ROWS), attn.sdpa(small.q, small.k, small.v, { ...shape(ROWS), causal: true, window: [128, 0] }), { rtol: RTOL_SPLIT, what: 'first rows' });
});

s('sdpaBackward, causal window [128, 0]: runs; dq of the first rows is that of the call over their keys', ({ attn, q, k, v, small }) => {
  const options = { ...shape(N), causal: true, window: [128, 0] };
  const dout = values(HEADS * N * D, 4);
  const g = attn.sdpaBackward(q, k, v, null, dout, options);
  assert.is(g.dk.length, HEADS * N * D);
  const sg = attn.sdpaBackward(small.q, small.k, small.v, null, firstRows(dout, N, ROWS), { ...options, nq: ROWS, nk: ROWS });
  assertClose(firstRows(g.dq, N, ROWS), sg.dq, { rtol: RTOL_SPLIT, what: 'dq of the first rows' });
});

s("a cache's prefill of 8192 tokens over 16 kv heads (float16): runs, and its first rows are those of the call over their keys", ({ attn, q, k, v, small }) => {
  const cache = attn.kvCache({ kvHeads: HEADS, dk: D, capacity: N, dtype: 'float16' });
  try {
    cache.append(k, v);
    const out = cache.attend(q, { heads: HEADS, causal: true });
    const head = attn.kvCache({ kvHeads: HEADS, dk: D, capacity: ROWS, dtype: 'float16' });
    head.append(small.k, small.v);
    assertClose(firstRows(out, N, ROWS), head.attend(small.q, { heads: HEADS, causal: true }), { rtol: RTOL_SPLIT, what: 'first rows' });
    head.dispose();
  } finally {
    cache.dispose();
  }
});

s('a decode step reserves no packed K and V: attending over a 32 MiB cache grows the memory by less than 1 MiB', async () => {
  const attn = await loadAttention({ simd: true, deterministic: true });
  const [n, d] = [65536, 64];
  const cache = attn.kvCache({ dk: d, capacity: n });
  cache.append(values(n * d, 5), values(n * d, 6));
  const before = attn.memory.buffer.byteLength;
  const out = cache.attend(values(d, 7));
  assert.ok(out.every(Number.isFinite));
  const grown = attn.memory.buffer.byteLength - before;
  assert.ok(grown < 2 ** 20, `the memory grew by ${grown} bytes`);
  cache.dispose();
  attn.dispose();
});

s('a call that cannot fit names its largest part and the bytes: the step matrices here', ({ attn, q, k, v }) => {
  rejects(() => attn.sdpa(q, k, v, { ...shape(N), steps: true }), RangeError,
    /16\.0 GiB = 17179869184 bytes of it for steps: scores, scaled, logits and weights, each \(batch, heads, nq, nk\) = \(1, 16, 8192, 8192\)/);
});

s.run();
