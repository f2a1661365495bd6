// float16 tensors: the conversions (IEEE half, round to nearest even) and
// sdpa over float16 q, k, v and bias, computed in float32.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { NumpyRandom, float16ToFloat32, float32ToFloat16, loadAttention } from '../../web/attention.js';
import { halfBits, halfValue } from '../../web/core/float16.js';
import { rejects } from '../helpers.js';

const test = suite('float16');
test.before(async (ctx) => {
  ctx.attn = await loadAttention();
});

test('every float16 survives the round trip, and NaN stays NaN', () => {
  for (let h = 0; h < 0x10000; h++) {
    const x = halfValue(h);
    if (Number.isNaN(x)) {
      assert.ok(Number.isNaN(halfValue(halfBits(x))), `0x${h.toString(16)}`);
      continue;
    }
    assert.is(halfBits(x), h, `0x${h.toString(16)} = ${x}`);
  }
});

test('rounding: to nearest, ties to even, overflow to Infinity, underflow to zero (numpy float16 values)', () => {
  const cases = [
    [1, 0x3c00], [-2, 0xc000], [65504, 0x7bff], [65519.99, 0x7bff], [65520, 0x7c00], [1e6, 0x7c00], [-1e6, 0xfc00],
    [2 ** -24, 0x0001], [2 ** -25, 0x0000], [1.5 * 2 ** -25, 0x0001], [-(2 ** -26), 0x8000],
    [1 + 2 ** -11, 0x3c00], [1 + 3 * 2 ** -11, 0x3c02], [0.1, 0x2e66], [1 / 3, 0x3555], [2 ** -14, 0x0400],
    [Infinity, 0x7c00], [-Infinity, 0xfc00], [0, 0], [-0, 0x8000],
  ];
  for (const [x, h] of cases) assert.is(halfBits(x), h, `${x}: got 0x${halfBits(x).toString(16)}, want 0x${h.toString(16)}`);
});

test('sdpa with dtype float16: the float32 computation of the float16 values, output rounded to float16', ({ attn }) => {
  const o = { batch: 2, heads: 2, kvHeads: 1, nq: 3, nk: 5, dk: 4, dv: 6, causal: true };
  const rng = new NumpyRandom(3);
  const draw = (n) => float32ToFloat16(Float32Array.from(rng.randn(n)), new Uint16Array(0));
  const q = draw(2 * 2 * 3 * 4), k = draw(2 * 5 * 4), v = draw(2 * 5 * 6), bias = draw(3 * 5);
  const got = attn.sdpa(q, k, v, { ...o, bias, dtype: 'float16' });
  assert.instance(got, Uint16Array);
  const want = attn.sdpa(float16ToFloat32(q), float16ToFloat32(k), float16ToFloat32(v), { ...o, bias: float16ToFloat32(bias) });
  assert.equal(Array.from(got), Array.from(float32ToFloat16(want, new Uint16Array(0))));
  const out = new Uint16Array(got.length);
  assert.is(attn.sdpa(q, k, v, { ...o, bias, dtype: 'float16', out }), out);
  assert.equal(Array.from(out), Array.from(got));
  const r = attn.sdpa(q, k, v, { ...o, dtype: 'float16', stats: true });
  assert.instance(r.output, Uint16Array);
  assert.instance(r.lse, Float32Array);
});

test('float16 errors name the argument', ({ attn }) => {
  const o = { nq: 1, nk: 1, dk: 1, dv: 1 };
  const h = new Uint16Array([0x3c00]);
  assert.throws(() => attn.sdpa(h, new Float32Array(1), h, { ...o, dtype: 'float16' }), /sdpa: k must be float16 like q/);
  rejects(() => attn.sdpa(new Float32Array(1), h, h, { ...o, dtype: 'float16' }), TypeError, /dtype 'float16', q must be/);
  rejects(() => attn.sdpa(h, h, h, { ...o, dtype: 'bfloat16' }), RangeError, /sdpa: dtype must be 'float32' or 'float16'/);
  assert.throws(() => attn.sdpa(h, h, h, { ...o, dtype: 'float16', out: new Float32Array(1) }), /sdpa: out must be float16/);
  // Without dtype a Uint16Array is not taken for float16.
  rejects(() => attn.sdpa(h, h, h, o), TypeError, /sdpa: q must be a Float32Array, got a Uint16Array; for float16 bits pass dtype: 'float16'/);
});

test('attention with dtype float16: { rows, cols, data } of float16 bits, the output in float16, steps in float32', ({ attn }) => {
  const rng = new NumpyRandom(5);
  const half = (rows, cols) => ({ rows, cols, data: float32ToFloat16(Float32Array.from(rng.randn(rows * cols)), new Uint16Array(0)) });
  const wide = (m) => ({ rows: m.rows, cols: m.cols, data: float16ToFloat32(m.data) });
  const q = half(3, 4), k = half(5, 4), v = half(5, 2), bias = half(3, 5);
  const got = attn.attention(q, k, v, { bias, causal: true, dtype: 'float16', steps: true });
  const want = attn.attention(wide(q), wide(k), wide(v), { bias: wide(bias), causal: true, steps: true });
  assert.equal([got.output.rows, got.output.cols], [3, 2]);
  assert.instance(got.output.data, Uint16Array);
  assert.equal(Array.from(got.output.data), Array.from(float32ToFloat16(want.output.data, new Uint16Array(0))));
  assert.instance(got.weights.data, Float32Array);
  assert.equal(Array.from(got.weights.data), Array.from(want.weights.data));
  const Native = globalThis.Float16Array;
  if (Native !== undefined) {
    const native = (m) => ({ rows: m.rows, cols: m.cols, data: new Native(float16ToFloat32(m.data)) });
    const r = attn.attention(native(q), native(k), native(v), { bias: native(bias), causal: true });
    assert.instance(r.output.data, Native);
    assert.equal(Array.from(r.output.data), Array.from(float16ToFloat32(got.output.data)));
  }
});

test('attention float16 errors name the argument; a Uint16Array without dtype is refused', ({ attn }) => {
  const h = { rows: 1, cols: 1, data: new Uint16Array([0x3c00]) };
  const f = { rows: 1, cols: 1, data: new Float32Array([1]) };
  rejects(() => attn.attention(h, f, h, { dtype: 'float16' }), TypeError, /attention: k must be float16 like q/);
  assert.throws(() => attn.attention(h, h, h, { dtype: 'float16', bias: f }), /attention: bias must be float16 like q/);
  rejects(() => attn.attention([[1]], [[1]], [[1]], { dtype: 'float16' }), TypeError, /attention: with dtype 'float16', q must be \{ rows, cols, data \}/);
  rejects(() => attn.attention(h, h, h, { dtype: 'half' }), RangeError, /attention: dtype must be 'float32' or 'float16'/);
  rejects(() => attn.attention(h, h, h), TypeError, /attention: q.data is a Uint16Array; for float16 bits pass dtype: 'float16'/);
  // Shapes are still checked, after the widening.
  rejects(() => attn.attention(h, { rows: 1, cols: 2, data: new Uint16Array(2) }, h, { dtype: 'float16' }), RangeError, /attention: k must have shape/);
});

test.run();
