// multiHeadAttention(x, { ..., cache }): each call appends its tokens' keys
// and values to a KV cache and attends at the cache's positions, so a prompt
// then token-by-token decoding gives, row for row, what one causal call over
// the whole sequence gives (RoPE and grouped-query heads included, 'bshd' and
// 'bhsd' caches alike); the options that cannot go with a cache are errors.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { Matrix, loadAttention } from '../../web/attention.js';
import { assertClose } from '../helpers.js';

// The cached path runs the decode kernel, the whole call the fused one: the
// same sums in another order, float32.
const RTOL = 1e-5, ATOL = 1e-6;

const draw = (rows, cols, seed) => new Matrix(rows, cols, Float32Array.from({ length: rows * cols }, (_, i) => Math.sin(i * 12.9898 + seed * 78.233) * 0.5));
const rowsOf = (m, i0, i1) => new Matrix(i1 - i0, m.cols, m.data.slice(i0 * m.cols, i1 * m.cols));

const test = suite('multiHeadAttention with a KV cache');
test.before(async (ctx) => {
  ctx.attn = await loadAttention();
});
test.after(({ attn }) => attn?.dispose());

test('a prompt, then one token a call: the rows of one causal call over everything', ({ attn }) => {
  const dModel = 32, heads = 4, kvHeads = 2, d = 8, n = 11;
  const weights = { wq: draw(dModel, heads * d, 1), wk: draw(dModel, kvHeads * d, 2), wv: draw(dModel, kvHeads * d, 3), wo: draw(heads * d, dModel, 4), heads, kvHeads };
  const x = draw(n, dModel, 5);
  for (const rope of [null, { theta: 10000 }]) {
    const full = attn.multiHeadAttention(x, { ...weights, causal: true, ...(rope ? { rope } : {}) }).output;
    for (const layout of ['bshd', 'bhsd']) {
      const cache = attn.kvCache({ kvHeads, dk: d, capacity: n, layout });
      const pieces = [attn.multiHeadAttention(rowsOf(x, 0, 5), { ...weights, cache, causal: true, rope }).output];
      for (let t = 5; t < n; t++) pieces.push(attn.multiHeadAttention(rowsOf(x, t, t + 1), { ...weights, cache, rope }).output);
      assert.is(cache.length, n);
      const got = new Float32Array(n * dModel);
      pieces.reduce((at, p) => (got.set(p.data, at), at + p.data.length), 0);
      assertClose(got, full.data, { rtol: RTOL, atol: ATOL, what: `${layout} cache, rope ${rope ? 'on' : 'off'}` });
      cache.dispose();
    }
  }
});

test('steps: one (n, length) matrix per head over every held key', ({ attn }) => {
  const cache = attn.kvCache({ kvHeads: 1, dk: 4, capacity: 8 });
  const w = { wq: draw(6, 8, 1), wk: draw(6, 4, 2), wv: draw(6, 4, 3), heads: 2 };
  attn.multiHeadAttention(draw(3, 6, 4), { ...w, cache, causal: true });
  const r = attn.multiHeadAttention(draw(1, 6, 5), { ...w, cache, steps: true });
  assert.is(r.weights.length, 2);
  assert.equal([r.weights[0].rows, r.weights[0].cols], [1, 4]);
  const sum = r.weights[1].data.reduce((a, b) => a + b, 0);
  assert.ok(Math.abs(sum - 1) < 1e-6, `weights sum to ${sum}`);
});

test('what cannot go with a cache is an error that says why', ({ attn }) => {
  const cache = attn.kvCache({ kvHeads: 1, dk: 4, capacity: 8 });
  const w = { wq: draw(6, 8, 1), wk: draw(6, 4, 2), wv: draw(6, 4, 3), heads: 2 };
  const x = draw(2, 6, 4);
  const cases = [
    [{ cache: new Float32Array(4) }, TypeError, /cache must be a KVCache from this instance's kvCache\(\)/],
    [{ cache, context: x }, TypeError, /context cannot be given with cache/],
    [{ cache, mask: [[true, true], [true, true]] }, TypeError, /mask cannot be given with cache/],
    [{ cache, kvHeads: 2, wk: draw(6, 8, 2), wv: draw(6, 8, 3) }, RangeError, /kvHeads is 2 but the cache holds 1 kv heads/],
    [{ cache, wq: draw(6, 12, 1), wk: draw(6, 6, 2), wv: draw(6, 6, 3) }, RangeError, /give dk 6 and dv 6, the cache holds dk 4 and dv 4/],
    [{ cache: attn.kvCache({ batch: 2, dk: 4, capacity: 8 }) }, RangeError, /cache must have batch 1/],
  ];
  for (const [extra, E, message] of cases) {
    assert.throws(() => attn.multiHeadAttention(x, { ...w, ...extra }), (err) => err instanceof E && message.test(err.message), String(message));
  }
  assert.is(cache.length, 0, 'a refused call appends nothing');
});

test.run();
