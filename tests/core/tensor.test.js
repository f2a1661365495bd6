// Tensors { data, dims } (transformers.js, onnxruntime-web) in sdpa and as
// matrices: the sizes read from the dims and the layout, the result with its
// dims, the same numbers as the flat call; dims that disagree with each other
// or with the options are RangeErrors naming both. Symbol.dispose on the
// instance and its caches.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { Matrix, loadAttention } from '../../web/attention.js';

const draw = (n, seed) => Float32Array.from({ length: n }, (_, i) => Math.sin(i * 12.9898 + seed * 78.233));

const test = suite('tensors { data, dims }');
test.before(async (ctx) => {
  ctx.attn = await loadAttention();
});
test.after(({ attn }) => attn?.dispose());

test('bhsd and bshd, ranks 4, 3 and 2: the flat call\'s numbers, the output\'s dims', ({ attn }) => {
  const batch = 2, heads = 4, kvHeads = 2, nq = 3, nk = 5, dk = 8, dv = 6;
  const q = draw(batch * heads * nq * dk, 1), k = draw(batch * kvHeads * nk * dk, 2), v = draw(batch * kvHeads * nk * dv, 3);
  for (const layout of ['bhsd', 'bshd']) {
    const flat = attn.sdpa(q, k, v, { batch, heads, kvHeads, nq, nk, dk, dv, layout, causal: true });
    const dims = (h, n, d) => (layout === 'bhsd' ? [batch, h, n, d] : [batch, n, h, d]);
    const r = attn.sdpa({ data: q, dims: dims(heads, nq, dk) }, { data: k, dims: dims(kvHeads, nk, dk) }, { data: v, dims: dims(kvHeads, nk, dv) }, { layout, causal: true });
    assert.equal(r.dims, dims(heads, nq, dv));
    assert.equal(Array.from(r.data), Array.from(flat));
  }
  const one = attn.sdpa({ data: draw(12, 4), dims: [3, 4] }, { data: draw(20, 5), dims: [5, 4] }, { data: draw(10, 6), dims: [5, 2] });
  assert.equal(one.dims, [3, 2]);
  const three = attn.sdpa({ data: draw(24, 4), dims: [2, 3, 4] }, { data: draw(40, 5), dims: [2, 5, 4] }, { data: draw(20, 6), dims: [2, 5, 2] });
  assert.equal(three.dims, [2, 3, 2]);
  assert.equal(Array.from(three.data), Array.from(attn.sdpa(draw(24, 4), draw(40, 5), draw(20, 6), { heads: 2, nq: 3, nk: 5, dk: 4, dv: 2 })));
});

test('steps and stats come back as tensors', ({ attn }) => {
  const r = attn.sdpa({ data: draw(12, 1), dims: [1, 1, 3, 4] }, { data: draw(20, 2), dims: [1, 1, 5, 4] }, { data: draw(20, 3), dims: [1, 1, 5, 4] }, { steps: true, stats: true });
  assert.equal(r.output.dims, [1, 1, 3, 4]);
  assert.equal(r.weights.dims, [1, 1, 3, 5]);
  assert.equal(r.lse.dims, [1, 1, 3]);
  assert.is(r.weights.data.length, 15);
});

test('dims that disagree, bad dims and bad data are errors that name them', ({ attn }) => {
  const t = (dims, n = dims.reduce((a, b) => a * b, 1)) => ({ data: new Float32Array(n), dims });
  const cases = [
    [() => attn.sdpa(t([1, 1, 3, 4]), t([1, 1, 5, 8]), t([1, 1, 5, 4])), RangeError, /q\.dims and k\.dims disagree on dk: 4 and 8/],
    [() => attn.sdpa(t([1, 1, 3, 4]), t([1, 1, 5, 4]), t([1, 1, 6, 4])), RangeError, /k\.dims and v\.dims disagree on the key count: 5 and 6/],
    [() => attn.sdpa(t([1, 1, 3, 4]), t([1, 1, 5, 4]), t([1, 1, 5, 4]), { nq: 4 }), RangeError, /options\.nq is 4 but the tensors' dims say 3/],
    [() => attn.sdpa(t([1, 1, 3, 4], 11), t([1, 1, 5, 4]), t([1, 1, 5, 4])), RangeError, /q\.data has 11 values, its dims \[1, 1, 3, 4\] need 12/],
    [() => attn.sdpa(t([1, 1, 1, 3, 4]), t([1, 1, 5, 4]), t([1, 1, 5, 4])), RangeError, /q\.dims must have 2, 3 or 4 entries/],
    [() => attn.sdpa(t([1, 0, 3, 4]), t([1, 1, 5, 4]), t([1, 1, 5, 4])), RangeError, /q\.dims\[1\] \(heads\) must be a positive integer/],
    [() => attn.sdpa(t([3, 4]), new Float32Array(20), t([5, 4])), TypeError, /k must be a tensor \{ data, dims \} like q/],
    [() => attn.sdpa(t([3, 4]), t([1, 5, 4]), t([5, 4])), RangeError, /same rank/],
  ];
  for (const [call, E, message] of cases) {
    assert.throws(call, (err) => err instanceof E && message.test(err.message), String(message));
  }
});

test('a 2-D tensor is a matrix, and a Matrix has dims', ({ attn }) => {
  const a = { data: Float32Array.of(1, 2, 3, 4), dims: [2, 2] };
  assert.equal(attn.matmul(a, a).toArray(), [[7, 10], [15, 22]]);
  assert.equal(new Matrix(2, 3).dims, [2, 3]);
  const r = attn.attention(a, a, a);
  assert.equal(r.output.dims, [2, 2]);
  assert.throws(() => attn.matmul({ data: new Float32Array(8), dims: [2, 2, 2] }, a), (err) => err instanceof RangeError && /a\.dims must be \[rows, cols\]/.test(err.message));
});

test('Symbol.dispose on an instance and a cache', async () => {
  const attn = await loadAttention();
  const cache = attn.kvCache({ dk: 2, capacity: 4 });
  cache[Symbol.dispose]();
  assert.throws(() => cache.append(new Float32Array(2), new Float32Array(2)), /disposed/);
  attn[Symbol.dispose]();
  assert.throws(() => attn.matmul([[1]], [[1]]), /dispos/);
});

test.run();
