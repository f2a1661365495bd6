// Attention#gelu and geluBackward, both of PyTorch's forms ('none': x Phi(x),
// 'tanh'), on the SIMD128, scalar and relaxed-SIMD builds against float64
// references and central differences (tests/fixtures/make_block_fixtures.py),
// and the edge cases: the far tails, huge values, Infinity and NaN.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { Matrix } from '../../web/attention.js';
import { BUILDS, assertScaled, generated, loadBuild, readJSON, rejects, rowScales, runWithRelaxedSimd } from '../helpers.js';

runWithRelaxedSimd(import.meta.url);

const fixture = readJSON('./fixtures/block.json');
const M = (rows, cols, data) => new Matrix(rows, cols, Float32Array.from(data));
// Forward within 1e-6 of its row's largest |y| (measured 4.2e-7, tanh form);
// dx within 1e-5 of its row's largest |dOut| (gelu' is at most 1.13; measured 1.1e-7).
const FORWARD = 1e-6, GRADIENT = 1e-5;
// Where |y| is above 1e-3 of the row's largest, relative to y itself (measured
// 3.9e-7 for 'none', 1.2e-6 for 'tanh', whose u = sqrt(2/pi)(x + 0.044715 x^3)
// is rounded before exp(-2|u|) multiplies its error by 2|u|).
const RELATIVE = { none: 1e-6, tanh: 3e-6 };

const results = {};
for (const isa of BUILDS) {
  const s = suite(`gelu, ${isa} build`);
  s.before(async (ctx) => {
    ctx.attn = await loadBuild(isa);
  });
  for (const c of generated(fixture.gelu, 2, 'block.json gelu cases')) {
    s(`approximate '${c.approximate}' (${c.rows}, ${c.cols}), x from -12 to 12 and beyond`, ({ attn }) => {
      const x = M(c.rows, c.cols, c.x);
      const y = attn.gelu(x, { approximate: c.approximate });
      const scales = rowScales(c.y, c.rows, c.cols);
      assertScaled(y.data, c.y, scales, FORWARD, 'gelu');
      for (let i = 0; i < c.y.length; i++) {
        if (Math.abs(c.y[i]) > 1e-3 * scales[i]) assertScaled([y.data[i]], [c.y[i]], Math.abs(c.y[i]), RELATIVE[c.approximate], `gelu at x = ${c.x[i]}`);
      }
      const dx = attn.geluBackward(x, M(c.rows, c.cols, c.dout), { approximate: c.approximate });
      assertScaled(dx.data, c.dx, rowScales(c.dout, c.rows, c.cols), GRADIENT, 'geluBackward');
      (results[c.approximate] ??= {})[isa] = [y.data, dx.data];
    });
  }
  s('the default is the exact form; out may be x\'s data', ({ attn }) => {
    const x = M(2, 5, [-3, -1, -0.5, 0, 0.5, 1, 2, 3, 4, 5]);
    const exact = attn.gelu(x, { approximate: 'none' });
    assert.equal(attn.gelu(x).data, exact.data);
    assert.equal(attn.gelu(x, {}).data, exact.data);
    assert.equal(attn.geluBackward(x, x).data, attn.geluBackward(x, x, { approximate: 'none' }).data);
    assert.is.not(attn.gelu(x, { approximate: 'tanh' }).data[1], exact.data[1]);
    const copy = new Matrix(2, 5, x.data.slice());
    assert.is(attn.gelu(copy, { out: copy.data }).data, copy.data);
    assert.equal(copy.data, exact.data);
  });
  s('huge x gives x and -0, Infinity gives Infinity and -Infinity NaN (as PyTorch), NaN stays NaN', ({ attn }) => {
    for (const approximate of ['none', 'tanh']) {
      const y = attn.gelu(M(1, 6, [1e30, -1e30, Infinity, -Infinity, NaN, 3e38]), { approximate }).data;
      assert.equal(Array.from(y.slice(0, 3)), [Math.fround(1e30), -0, Infinity]);
      assert.ok(Object.is(y[1], -0));
      assert.ok(Number.isNaN(y[3]) && Number.isNaN(y[4]));
      assert.is(y[5], Math.fround(3e38));
      const d = attn.geluBackward(M(1, 3, [1e30, -1e30, NaN]), M(1, 3, [2, 2, 2]), { approximate }).data;
      assert.equal(Array.from(d.slice(0, 2)), [2, 0]);
      assert.ok(Number.isNaN(d[2]));
    }
  });
  s('1000 calls take no new wasm memory', ({ attn }) => {
    const x = M(9, 31, Array.from({ length: 279 }, (_, i) => Math.sin(i) * 4));
    attn.gelu(x);
    attn.geluBackward(x, x, { approximate: 'tanh' });
    const bytes = attn.memory.buffer.byteLength;
    for (let i = 0; i < 1000; i++) {
      attn.gelu(x, { approximate: i % 2 ? 'tanh' : 'none' });
      attn.geluBackward(x, x);
    }
    assert.is(attn.memory.buffer.byteLength, bytes);
  });
  s.run();
}

const twins = suite('gelu: SIMD128 and scalar give the same bits, relaxed SIMD within rounding');
twins('both forms', () => {
  for (const [form, r] of generated(Object.entries(results), 2, 'gelu results')) {
    for (let t = 0; t < 2; t++) {
      assert.equal(r.simd128[t], r.scalar[t], `${form} output ${t}`);
      assertScaled(r['relaxed-simd'][t], r.scalar[t], rowScales(r.scalar[t], 5, r.scalar[t].length / 5), 1e-6, `${form} relaxed output ${t}`);
    }
  }
});
twins.run();

const errors = suite('gelu: bad input names the argument and the shape');
errors.before(async (ctx) => {
  ctx.attn = await loadBuild('scalar');
});
errors('approximate, dOut, out, options', ({ attn }) => {
  const x = new Matrix(2, 3);
  const bad = [
    [() => attn.gelu(x, { approximate: 'erf' }), RangeError, /^gelu: approximate must be 'none' or 'tanh', got "erf"$/],
    [() => attn.gelu(x, { approximate: true }), TypeError, /^gelu: approximate must be 'none' or 'tanh', got true$/],
    [() => attn.gelu(x, { approximate: 'toString' }), RangeError, /^gelu: approximate must be/],
    [() => attn.gelu(x, { out: new Float32Array(5) }), RangeError, /^gelu: out has 5 values, needs 2 x 3 = 6/],
    [() => attn.gelu(x, { exact: true }), TypeError, /^gelu: unknown option "exact" \(known: approximate, out\)$/],
    [() => attn.gelu(7), TypeError, /^gelu: x must be a Matrix/],
    [() => attn.geluBackward(x, new Matrix(3, 2)), RangeError, /^geluBackward: dOut must have shape \(2, 3\), got \(3, 2\)$/],
    [() => attn.geluBackward(x, x, { out: x }), TypeError, /^geluBackward: unknown option "out" \(known: approximate\)$/],
  ];
  for (const [call, E, message] of bad) rejects(call, E, message);
});
errors.run();
