// Sinks and ALiBi by their definitions, without numpy: a sink is a key
// whose logit is the sink and whose value is 0; ALiBi is the bias
// -slope * (p - j). The kernels compute both in place of those extra keys
// and arrays; here the library's own bias path is the reference. Also the
// calls over matrices (attention, multiHeadAttention and their backward)
// and a row with no allowed key.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { NumpyRandom, alibiSlopes } from '../../web/attention.js';
import { assertClose, loadBuild } from '../helpers.js';

// The same attention by two float32 paths that sum in other orders (an
// extra key, a bias array): a few ulp of the largest value.
const RTOL_SAME_MATH = 2e-6;

const s = suite('sinks and ALiBi by their definitions');
s.before(async (ctx) => {
  ctx.attn = await loadBuild('simd128');
});

function randn(rng, ...shape) {
  return Float32Array.from(rng.randn(...shape));
}

// nq x nk shapes that take the decode kernel (nq < 4), the fused kernel and
// the step path.
const SHAPES = [[1, 40], [3, 17], [37, 70]];

for (const [nq, nk] of SHAPES) {
  s(`nq=${nq} nk=${nk}: a sink is an extra key with logit s and value 0 (output and lse)`, ({ attn }) => {
    const rng = new NumpyRandom(nq * 100 + nk);
    const d = 8, heads = 2, sinks = Float32Array.of(0.7, -1.5);
    const q = randn(rng, heads, nq, d), k = randn(rng, heads, nk, d), v = randn(rng, heads, nk, d);
    const options = { heads, nq, nk, dk: d, dv: d, causal: true, queryOffset: nk - nq };
    for (const steps of [false, true]) {
      const r = attn.sdpa(q, k, v, { ...options, sinks, stats: true, steps });
      // The extra key nk: q . k = 0 (k zero), bias s there and 0 elsewhere, v zero.
      const k2 = new Float32Array(heads * (nk + 1) * d), v2 = new Float32Array(heads * (nk + 1) * d);
      const bias = new Float32Array(heads * nq * (nk + 1));
      for (let h = 0; h < heads; h++) {
        k2.set(k.subarray(h * nk * d, (h + 1) * nk * d), h * (nk + 1) * d);
        v2.set(v.subarray(h * nk * d, (h + 1) * nk * d), h * (nk + 1) * d);
        for (let i = 0; i < nq; i++) bias[(h * nq + i) * (nk + 1) + nk] = sinks[h];
      }
      // causal with the extra key last: each row must see it, so the mask
      // of the frontier is in the bias instead.
      for (let h = 0; h < heads; h++) {
        for (let i = 0; i < nq; i++) for (let j = i + nk - nq + 1; j < nk; j++) bias[(h * nq + i) * (nk + 1) + j] = -Infinity;
      }
      const ref = attn.sdpa(q, k2, v2, { heads, nq, nk: nk + 1, dk: d, dv: d, bias: { data: bias, shape: [heads, nq, nk + 1] }, stats: true });
      assertClose(r.output, ref.output, { rtol: RTOL_SAME_MATH, what: `output steps=${steps}` });
      assertClose(r.lse, ref.lse, { rtol: RTOL_SAME_MATH, what: `lse steps=${steps}` });
    }
  });

  s(`nq=${nq} nk=${nk}: alibi equals the bias array -slope * (p - j), taken from the row's last key`, ({ attn }) => {
    const rng = new NumpyRandom(nq * 1000 + nk);
    const d = 8, heads = 3, off = 5;
    const q = randn(rng, heads, nq, d), k = randn(rng, heads, nk, d), v = randn(rng, heads, nk, d);
    const slopes = alibiSlopes(heads);
    // Softmax is shift invariant: the kernels add slope * (j - r), r the
    // last key a row may see (here every row sees every key), and add the
    // row's constant slope * (r - p) back to lse only (attention.h).
    const bias = new Float32Array(heads * nq * nk), shift = new Float32Array(heads * nq);
    for (let h = 0; h < heads; h++) {
      for (let i = 0; i < nq; i++) {
        for (let j = 0; j < nk; j++) bias[(h * nq + i) * nk + j] = Math.fround(slopes[h] * (j - (nk - 1)));
        shift[h * nq + i] = slopes[h] * (nk - 1 - (i + off));
      }
    }
    const options = { heads, nq, nk, dk: d, dv: d, queryOffset: off, stats: true };
    for (const steps of [false, true]) {
      const r = attn.sdpa(q, k, v, { ...options, alibi: true, steps });
      const ref = attn.sdpa(q, k, v, { ...options, bias: { data: bias, shape: [heads, nq, nk] }, steps });
      // The kernel adds exactly this float32 bias, after the same logit: the same bits.
      assert.equal(Array.from(r.output), Array.from(ref.output), `steps=${steps}`);
      assert.equal(Array.from(r.lse), Array.from(ref.lse, (x, t) => Math.fround(x + shift[t])), `lse steps=${steps}`);
    }
  });
}

s('alibiSlopes: 2^(-8(h+1)/n) for a power of two, the interleaved rule otherwise (values of the reference get_slopes)', () => {
  assert.equal(Array.from(alibiSlopes(4)), [0.25, 0.0625, 0.015625, 0.00390625]);
  assert.equal(Array.from(alibiSlopes(6)), [0.25, 0.0625, 0.015625, 0.00390625, 0.5, 0.125]);
  assert.equal(Array.from(alibiSlopes(1)), [0.00390625]);
  const twelve = alibiSlopes(12); // 8 of 2^(-h-1), then 2^(-0.5), 2^(-1.5), 2^(-2.5), 2^(-3.5)
  assert.equal(Array.from(twelve.subarray(8)), [2 ** -0.5, 2 ** -1.5, 2 ** -2.5, 2 ** -3.5].map(Math.fround));
});

s('a row with no allowed key gives output 0 and lse = sink, its gradients add nothing', ({ attn }) => {
  const rng = new NumpyRandom(5);
  const d = 4, nq = 3, nk = 6;
  const q = randn(rng, nq, d), k = randn(rng, nk, d), v = randn(rng, nk, d), dout = randn(rng, nq, d);
  const mask = new Uint8Array(nq * nk).fill(1);
  mask.fill(0, nk, 2 * nk); // row 1 sees nothing
  const options = { nq, nk, dk: d, dv: d, mask, sinks: Float32Array.of(1.25) };
  for (const steps of [false, true]) {
    const r = attn.sdpa(q, k, v, { ...options, stats: true, steps });
    assert.equal(Array.from(r.output.subarray(d, 2 * d)), [0, 0, 0, 0]);
    assert.is(r.lse[1], 1.25);
    if (steps) assert.ok(r.weights.subarray(nk, 2 * nk).every((w) => w === 0));
  }
  const g = attn.sdpaBackward(q, k, v, null, dout, options);
  assert.equal(Array.from(g.dq.subarray(d, 2 * d)), [0, 0, 0, 0]);
  assert.ok(Number.isFinite(g.dsinks[0]));
  // Without row 1's dout, nothing changes anywhere: the row added nothing.
  const dout2 = dout.slice();
  dout2.fill(0, d, 2 * d);
  const g2 = attn.sdpaBackward(q, k, v, null, dout2, options);
  for (const key of ['dk', 'dv', 'dsinks']) assert.equal(Array.from(g[key]), Array.from(g2[key]), key);
});

s('attention and multiHeadAttention take rope, sinks and alibi; their backward returns dsinks', ({ attn }) => {
  const rng = new NumpyRandom(6);
  const n = 5, d = 4, heads = 2;
  const q = randn(rng, n, d), k = randn(rng, n, d), v = randn(rng, n, d);
  const m = (data) => ({ rows: n, cols: d, data });
  const extra = { rope: true, sinks: Float32Array.of(0.5), alibi: true, causal: true };
  const one = attn.attention(m(q), m(k), m(v), extra);
  const flat = attn.sdpa(q, k, v, { nq: n, nk: n, dk: d, dv: d, ...extra });
  assert.equal(Array.from(one.output.data), Array.from(flat));
  const back = attn.attentionBackward(m(q), m(k), m(v), m(randn(rng, n, d)), extra);
  assert.is(back.dsinks.length, 1);
  const x = { rows: n, cols: 8, data: randn(rng, n, 8) };
  const w = () => ({ rows: 8, cols: 8, data: randn(rng, 8, 8) });
  const layer = { heads, wq: w(), wk: w(), wv: w(), rope: { dims: 2 }, sinks: Float32Array.of(0, 1), alibi: true, causal: true };
  const out = attn.multiHeadAttention(x, layer).output;
  assert.is(out.rows, n);
  assert.not.equal(Array.from(out.data), Array.from(attn.multiHeadAttention(x, { ...layer, rope: undefined }).output.data));
  const g = attn.multiHeadAttentionBackward(x, { rows: n, cols: 8, data: randn(rng, n, 8) }, layer);
  assert.is(g.dsinks.length, heads);
  assert.ok(g.dsinks.every(Number.isFinite));
});

s.run();
