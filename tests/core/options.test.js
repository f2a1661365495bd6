// The options module (web/core/options.js): each rule holds in every call
// that takes the option, with one meaning and one message.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { Matrix, NumpyRandom, loadAttention } from '../../web/attention.js';
import { WINDOW_MAX, blockedBy, checkScale, checkSoftcap, checkWindow, defaultScale } from '../../web/core/options.js';
import { normalizeConfig } from '../../web/worked/computation.js';
import { rejects } from '../helpers.js';

const test = suite('options rules');
test.before(async (ctx) => {
  ctx.attn = await loadAttention();
});

const draw = (seed, n) => Float32Array.from(new NumpyRandom(seed).randn(n));
const bits = (a) => Array.from(new Uint32Array(a.buffer, a.byteOffset, a.length));

test('softcap 0 is "none" in every call: the same bits as no softcap', ({ attn }) => {
  const nq = 3, nk = 5, d = 4;
  const q = draw(1, nq * d), k = draw(2, nk * d), v = draw(3, nk * d);
  const shape = { nq, nk, dk: d, dv: d, causal: true };
  assert.equal(bits(attn.sdpa(q, k, v, { ...shape, softcap: 0 })), bits(attn.sdpa(q, k, v, shape)));
  const Q = new Matrix(nq, d, q), K = new Matrix(nk, d, k), V = new Matrix(nk, d, v);
  assert.equal(bits(attn.attention(Q, K, V, { softcap: 0 }).output.data), bits(attn.attention(Q, K, V).output.data));
  const dO = new Matrix(nq, d, draw(4, nq * d));
  assert.equal(bits(attn.attentionBackward(Q, K, V, dO, { softcap: 0 }).dq.data), bits(attn.attentionBackward(Q, K, V, dO).dq.data));
  const g0 = attn.sdpaBackward(q, k, v, null, dO.data, { ...shape, softcap: 0 });
  assert.equal(bits(g0.dk), bits(attn.sdpaBackward(q, k, v, null, dO.data, shape).dk));
  const x = new Matrix(nq, d, draw(5, nq * d)), w = new Matrix(d, d, draw(6, d * d));
  const layer = { wq: w, wk: w, wv: w, heads: 2 };
  assert.equal(bits(attn.multiHeadAttention(x, { ...layer, softcap: 0 }).output.data), bits(attn.multiHeadAttention(x, layer).output.data));
  const cache = attn.kvCache({ dk: d, capacity: nk });
  cache.append(k, v);
  assert.equal(bits(cache.attend(q, { softcap: 0 })), bits(cache.attend(q)));
  assert.is(normalizeConfig({ softcap: 0 }).softcap, 0);
});

test('a value is checked as the float32 C sees: 1e39 and 1e-46 are refused, not passed on', ({ attn }) => {
  const o = { nq: 1, nk: 1, dk: 1, dv: 1 };
  const one = new Float32Array([1]);
  for (const [opt, Type, re] of [
    [{ scale: 1e39 }, RangeError, /^sdpa: scale must be finite as a float32/],
    [{ softcap: 1e39 }, RangeError, /^sdpa: softcap must be 0 \(none\) or a number > 0 that a float32 holds/],
    [{ softcap: 1e-46 }, RangeError, /^sdpa: softcap must be 0 \(none\) or a number > 0 that a float32 holds/],
    [{ scale: 1e-50 }, RangeError, /^sdpa: scale must be 0 or at least 1.4e-45 in magnitude/],
  ]) {
    rejects(() => attn.sdpa(one, one, one, { ...o, ...opt }), Type, re, JSON.stringify(opt));
  }
  // 0 itself is a scale (uniform weights); the largest float32 passes and is used.
  assert.is(checkScale(0, 'scale', 1), 0);
  assert.is(checkScale(3.4e38, 'scale', 1), 3.4e38);
  assert.is(checkSoftcap(1.5e-45, 'softcap'), 1.5e-45);
  assert.equal(Array.from(attn.sdpa(one, one, one, { ...o, softcap: 3.4e38 })), [1]);
});

test('the window has one bound everywhere: the library and the explorer accept WINDOW_MAX, refuse one more', ({ attn }) => {
  assert.is(WINDOW_MAX, 2 ** 31 - 1);
  const one = new Float32Array([1]);
  const o = { nq: 1, nk: 1, dk: 1, dv: 1 };
  assert.equal(Array.from(attn.sdpa(one, one, one, { ...o, window: [WINDOW_MAX, 0] })), [1]);
  assert.equal(normalizeConfig({ window: [WINDOW_MAX, 0] }).window, [WINDOW_MAX, 0]);
  assert.throws(() => attn.sdpa(one, one, one, { ...o, window: [WINDOW_MAX + 1, 0] }), RangeError);
  assert.throws(() => normalizeConfig({ window: [WINDOW_MAX + 1, 0] }), RangeError);
  assert.is(checkWindow([-1, -1], 'window'), null);
  assert.is(normalizeConfig({ window: [-1, -1] }).window, null);
  assert.equal(normalizeConfig({ queryOffset: -WINDOW_MAX }).queryOffset, -WINDOW_MAX);
});

test('the default scale is 1/sqrt(dk) for the library and the explorer alike', ({ attn }) => {
  assert.is(defaultScale(9), 1 / 3);
  assert.is(normalizeConfig({ dk: 9 }).scale, defaultScale(9));
  assert.is(normalizeConfig({ dk: 9 }).scaleIsDefault, true);
  assert.is(normalizeConfig({ dk: 9, scale: 1 / 3 }).scaleIsDefault, false);
  const q = draw(7, 9), k = draw(8, 18), v = draw(9, 18);
  const o = { nq: 1, nk: 2, dk: 9, dv: 9 };
  assert.equal(bits(attn.sdpa(q, k, v, o)), bits(attn.sdpa(q, k, v, { ...o, scale: defaultScale(9) })));
});

test('blockedBy is the kernels\' rule: causal and window at p = i + queryOffset', ({ attn }) => {
  const nq = 4, nk = 7;
  for (const opt of [{ causal: true }, { window: [1, 0] }, { window: [-1, 2] }, { causal: true, window: [2, -1], queryOffset: 3 }, { queryOffset: -2, causal: true }]) {
    const r = attn.sdpa(new Float32Array(nq), new Float32Array(nk), new Float32Array(nk), { nq, nk, dk: 1, dv: 1, steps: true, ...opt });
    for (let i = 0; i < nq; i++) {
      for (let j = 0; j < nk; j++) {
        assert.is(r.logits[i * nk + j] === -Infinity, blockedBy(opt, i, j) !== '', `${JSON.stringify(opt)} (${i}, ${j})`);
      }
    }
  }
});

test('Matrix.from always copies: a plain object\'s data is not shared', () => {
  const data = new Float32Array([1, 2, 3, 4]);
  const m = Matrix.from({ rows: 2, cols: 2, data });
  data[0] = 9;
  assert.is(m.get(0, 0), 1);
  m.data[1] = 7;
  assert.is(data[1], 2);
  const n = Matrix.from(new Matrix(1, 1, new Float32Array([5])));
  assert.is(n.get(0, 0), 5);
});

test.run();
