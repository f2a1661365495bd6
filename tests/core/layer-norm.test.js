// Attention#layerNorm, rmsNorm and their backward on the SIMD128, scalar and
// relaxed-SIMD builds against float64 references (torch's layer_norm, numpy)
// and central differences (tests/fixtures/make_block_fixtures.py), and the
// edge cases: a constant row, huge values, NaN, cols not a multiple of 4.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { Matrix } from '../../web/attention.js';
import { BUILDS, assertScaled, generated, loadBuild, readJSON, rejects, rowScales, runWithRelaxedSimd } from '../helpers.js';

runWithRelaxedSimd(import.meta.url);

const fixture = readJSON('./fixtures/block.json');
const M = (rows, cols, data) => new Matrix(rows, cols, Float32Array.from(data));
const maxAbs = (x) => x.reduce((m, v) => Math.max(m, Math.abs(v)), 1e-30);
// Forward: within 1e-6 of the row's largest |y| (measured: 2.4e-7).
// Gradients: within 1e-5 of their terms' size, for dx a row's r max_j |dout gamma|
// (dx cancels: with one column it is about eps, the terms about 1),
// for dgamma and dbeta the sum over rows of |dout| (measured: 1.5e-7).
const FORWARD = 1e-6, GRADIENT = 1e-5;

/** Per element of dx: r of its row (float64) times max_j |dout_ij gamma_j|. */
function dxScales(c, layer) {
  const { rows, cols } = c, s = new Float64Array(rows * cols);
  for (let i = 0; i < rows; i++) {
    const row = c.x.slice(i * cols, (i + 1) * cols);
    const mu = layer ? row.reduce((a, b) => a + b) / cols : 0;
    const v = row.reduce((a, b) => a + (b - mu) ** 2, 0) / cols;
    let g = 1e-30;
    for (let j = 0; j < cols; j++) g = Math.max(g, Math.abs(c.dout[i * cols + j] * c.gamma[j]));
    s.fill(g / Math.sqrt(v + (layer ? c.eps : c.rmsEps)), i * cols, (i + 1) * cols);
  }
  return s;
}
function colScale(c) {
  let m = 1e-30;
  for (let j = 0; j < c.cols; j++) {
    let t = 0;
    for (let i = 0; i < c.rows; i++) t += Math.abs(c.dout[i * c.cols + j]);
    m = Math.max(m, t);
  }
  return m;
}

/** float64 layer norm of one row (no gamma, beta): the reference of the edge cases. */
function layerNorm64(row, eps) {
  const mu = row.reduce((a, b) => a + b) / row.length;
  const v = row.reduce((a, b) => a + (b - mu) ** 2, 0) / row.length;
  return row.map((x) => (x - mu) / Math.sqrt(v + eps));
}

const results = [];
for (const isa of BUILDS) {
  const s = suite(`layerNorm and rmsNorm, ${isa} build`);
  s.before(async (ctx) => {
    ctx.attn = await loadBuild(isa);
  });
  for (const [n, c] of generated(fixture.norms, 8, 'block.json norm cases').entries()) {
    s(`${c.kind} (${c.rows}, ${c.cols}): forward and gradients against float64 and central differences`, ({ attn }) => {
      const x = M(c.rows, c.cols, c.x), dout = M(c.rows, c.cols, c.dout);
      const y = attn.layerNorm(x, { gamma: c.gamma, beta: c.beta, eps: c.eps });
      assertScaled(y.data, c.y, rowScales(c.y, c.rows, c.cols), FORWARD, 'layerNorm');
      const g = attn.layerNormBackward(x, dout, { gamma: c.gamma, beta: c.beta, eps: c.eps });
      assertScaled(g.dx.data, c.dx, dxScales(c, true), GRADIENT, 'layerNorm dx');
      assertScaled(g.dgamma, c.dgamma, colScale(c), GRADIENT, 'layerNorm dgamma');
      assertScaled(g.dbeta, c.dbeta, colScale(c), GRADIENT, 'layerNorm dbeta');
      const r = attn.rmsNorm(x, { gamma: c.gamma, eps: c.rmsEps });
      assertScaled(r.data, c.rms, rowScales(c.rms, c.rows, c.cols), FORWARD, 'rmsNorm');
      const rg = attn.rmsNormBackward(x, dout, { gamma: c.gamma, eps: c.rmsEps });
      assertScaled(rg.dx.data, c.rmsDx, dxScales(c, false), GRADIENT, 'rmsNorm dx');
      assertScaled(rg.dgamma, c.rmsDgamma, colScale(c), GRADIENT, 'rmsNorm dgamma');
      assert.not.ok('dbeta' in rg);
      (results[n] ??= {})[isa] = [y.data, g.dx.data, g.dgamma, g.dbeta, r.data, rg.dx.data, rg.dgamma];
    });
  }
  s('a constant row gives beta exactly (variance 0, then eps); with eps 0 it is NaN, as in PyTorch', ({ attn }) => {
    const x = M(2, 5, [3.7, 3.7, 3.7, 3.7, 3.7, -1e30, -1e30, -1e30, -1e30, -1e30]);
    const beta = [0.5, -1, 2, 0, 7];
    assert.equal(attn.layerNorm(x, { gamma: [2, 2, 2, 2, 2], beta }).data, Float32Array.from([...beta, ...beta]));
    assert.ok(attn.layerNorm(x, { eps: 0 }).data.slice(0, 5).every(Number.isNaN));
    const g = attn.layerNormBackward(x, M(2, 5, [1, 2, 3, 4, 5, 1, 1, 1, 1, 1]));
    assert.equal(g.dgamma, new Float32Array(5));
    assert.equal(g.dbeta, Float32Array.from([2, 3, 4, 5, 6]));
  });
  s('huge values: rows near 1e30 and 1e38 normalize as float64 does (no overflow in the variance)', ({ attn }) => {
    const rows = [[1e30, -2e30, 3e30, 0.5e30, 0, -1e30, 2.5e30], [3e38, -3e38, 1e38, 2e38, -1e38, 0, 3.4e38]];
    const x = M(2, 7, rows.flat());
    const want = rows.flatMap((r) => layerNorm64(Array.from(Float32Array.from(r)), 0));
    assertScaled(attn.layerNorm(x).data, want, 2, FORWARD, 'huge layerNorm');
    const rms = rows.flatMap((r) => {
      const f = Array.from(Float32Array.from(r)), q = Math.sqrt(f.reduce((a, b) => a + b * b, 0) / f.length);
      return f.map((v) => v / q);
    });
    assertScaled(attn.rmsNorm(x).data, rms, 2, FORWARD, 'huge rmsNorm');
    const dout = M(2, 7, Array.from({ length: 14 }, (_, i) => Math.sin(i)));
    assert.ok(attn.layerNormBackward(x, dout).dx.data.every(Number.isFinite));
    assert.ok(attn.rmsNormBackward(x, dout).dx.data.every(Number.isFinite));
  });
  s('NaN or Infinity in a row reaches that row only (layerNorm: all NaN; rmsNorm: as x / sqrt(mean(x^2)) in float64)', ({ attn }) => {
    const data = Array.from({ length: 3 * 9 }, (_, i) => Math.sin(i * 1.7));
    const alone = M(1, 9, data.slice(18));
    for (const bad of [NaN, Infinity]) {
      const x = M(3, 9, data);
      x.data[4] = bad;
      x.data[9 + 8] = -bad;
      const y = attn.layerNorm(x).data, r = attn.rmsNorm(x).data;
      assert.ok(y.slice(0, 18).every(Number.isNaN), `layerNorm rows 0 and 1 with ${bad}`);
      assert.equal(y.slice(18), attn.layerNorm(alone).data);
      assert.equal(r.slice(18), attn.rmsNorm(alone).data);
      for (let i = 0; i < 2; i++) {
        const row = Array.from(x.data.slice(i * 9, i * 9 + 9)), q = Math.sqrt(row.reduce((a, v) => a + v * v, 0) / 9);
        assert.equal(Array.from(r.slice(i * 9, i * 9 + 9)), row.map((v) => v / q), `rmsNorm row ${i} with ${bad}`);
      }
      const g = attn.layerNormBackward(x, M(3, 9, data)).dx.data;
      assert.ok(g.slice(0, 18).every(Number.isNaN));
      assert.equal(g.slice(18), attn.layerNormBackward(alone, M(1, 9, data.slice(18))).dx.data);
    }
  });
  s('gamma and beta default to 1 and 0; out may be x\'s data; one row and one column', ({ attn }) => {
    const x = M(3, 6, Array.from({ length: 18 }, (_, i) => Math.cos(i)));
    const plain = attn.layerNorm(x);
    assert.equal(attn.layerNorm(x, { gamma: new Float32Array(6).fill(1), beta: new Float32Array(6) }).data, plain.data);
    assert.equal(attn.rmsNorm(x, { gamma: [1, 1, 1, 1, 1, 1] }).data, attn.rmsNorm(x).data);
    const copy = new Matrix(3, 6, x.data.slice());
    assert.is(attn.layerNorm(copy, { out: copy.data }).data, copy.data);
    assert.equal(copy.data, plain.data);
    assert.equal(attn.layerNorm(M(1, 1, [5]), { beta: [0.25] }).data, Float32Array.from([0.25]));
    assert.equal(attn.layerNormBackward(M(1, 1, [5]), M(1, 1, [3])).dx.data, Float32Array.from([0]));
  });
  s('1000 calls of each take no new wasm memory', ({ attn }) => {
    const x = M(12, 37, Array.from({ length: 444 }, (_, i) => Math.sin(i))), gamma = new Float32Array(37).fill(1.5);
    const run = () => {
      attn.layerNorm(x, { gamma, beta: gamma });
      attn.layerNormBackward(x, x, { gamma });
      attn.rmsNorm(x, { gamma });
      attn.rmsNormBackward(x, x, { gamma });
    };
    run();
    const bytes = attn.memory.buffer.byteLength;
    for (let i = 0; i < 1000; i++) run();
    assert.is(attn.memory.buffer.byteLength, bytes);
  });
  s.run();
}

const twins = suite('layerNorm and rmsNorm: the three builds give the same bits (no fused multiply-add in them)');
twins('every fixture case', () => {
  for (const [n, r] of results.entries()) {
    for (let t = 0; t < r.scalar.length; t++) {
      assert.equal(r.simd128[t], r.scalar[t], `case ${n} output ${t}`);
      assert.equal(r['relaxed-simd'][t], r.scalar[t], `case ${n} relaxed output ${t}`);
    }
  }
});
twins.run();

const errors = suite('layerNorm and rmsNorm: bad input names the argument and the shape');
errors.before(async (ctx) => {
  ctx.attn = await loadBuild('scalar');
});
errors('gamma, beta, eps, dOut, options', ({ attn }) => {
  const x = new Matrix(2, 3);
  const bad = [
    [() => attn.layerNorm(x, { gamma: [1, 2] }), RangeError, /^layerNorm: gamma has 2 values, expected 3 \(the cols of x\)$/],
    [() => attn.layerNorm(x, { beta: 'b' }), TypeError, /^layerNorm: beta must be a Float32Array or number\[\] of 3 values \(the cols of x\), got the string "b"$/],
    [() => attn.layerNorm(x, { eps: -1 }), RangeError, /^layerNorm: eps must be a finite number >= 0, got -1$/],
    [() => attn.layerNorm(x, { eps: '1' }), TypeError, /^layerNorm: eps must be a number >= 0/],
    [() => attn.rmsNorm(x, { eps: Infinity }), RangeError, /^rmsNorm: eps must be a finite number >= 0, got Infinity$/],
    [() => attn.rmsNorm(x, { beta: [0, 0, 0] }), TypeError, /^rmsNorm: unknown option "beta" \(known: gamma, eps, out\)$/],
    [() => attn.layerNorm(x, { out: new Matrix(3, 2) }), RangeError, /^layerNorm: out must have shape \(2, 3\), got \(3, 2\)$/],
    [() => attn.layerNorm([[1, 2], [3]]), RangeError, /^layerNorm: x is ragged/],
    [() => attn.layerNormBackward(x, new Matrix(2, 4)), RangeError, /^layerNormBackward: dOut must have shape \(2, 3\), got \(2, 4\)$/],
    [() => attn.rmsNormBackward(x, x, { gamma: new Float32Array(4) }), RangeError, /^rmsNormBackward: gamma has 4 values, expected 3/],
    [() => attn.layerNormBackward(x, x, { out: x }), TypeError, /^layerNormBackward: unknown option "out" \(known: gamma, beta, eps\)$/],
  ];
  for (const [call, E, message] of bad) rejects(call, E, message);
});
errors.run();
