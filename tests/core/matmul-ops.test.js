// Attention#matmul with transposeB and a bias, and matmulBackward, on the
// SIMD128, scalar and relaxed-SIMD builds, against float64 references and
// central differences (tests/fixtures/make_block_fixtures.py, block.json).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { Matrix } from '../../web/attention.js';
import { BUILDS, assertScaled, generated, loadBuild, readJSON, rejects, rowScales, runWithRelaxedSimd } from '../helpers.js';

runWithRelaxedSimd(import.meta.url);

const fixture = readJSON('./fixtures/block.json');
const M = (rows, cols, data) => new Matrix(rows, cols, Float32Array.from(data));
const maxAbs = (x) => x.reduce((m, v) => Math.max(m, Math.abs(v)), 1e-30);
// The forward within 1e-6 of its row's largest value, gradients within 1e-5
// of the gradient's largest value (measured: below 1.4e-7 for both).
const FORWARD = 1e-6, GRADIENT = 1e-5;

function operands(c) {
  return { a: M(c.m, c.k, c.a), b: c.transposeB ? M(c.n, c.k, c.b) : M(c.k, c.n, c.b), dout: M(c.m, c.n, c.dout) };
}

const results = {};
for (const isa of BUILDS) {
  const s = suite(`matmul ops, ${isa} build`);
  s.before(async (ctx) => {
    ctx.attn = await loadBuild(isa);
  });
  for (const c of generated(fixture.matmul, 6, 'block.json matmul cases')) {
    const name = `(${c.m}, ${c.k}) x ${c.transposeB ? `(${c.n}, ${c.k})^T` : `(${c.k}, ${c.n})`}${c.bias ? ' + bias' : ''}`;
    s(`${name}: forward and gradients against float64 and central differences`, ({ attn }) => {
      const { a, b, dout } = operands(c);
      const y = attn.matmul(a, b, { transposeB: c.transposeB, bias: c.bias ?? undefined });
      assert.equal([y.rows, y.cols], [c.m, c.n]);
      assertScaled(y.data, c.out, rowScales(c.out, c.m, c.n), FORWARD, 'out');
      const g = attn.matmulBackward(a, b, dout, { transposeB: c.transposeB, bias: true });
      assert.equal([g.da.rows, g.da.cols, g.db.rows, g.db.cols], [a.rows, a.cols, b.rows, b.cols]);
      assertScaled(g.da.data, c.da, maxAbs(c.da), GRADIENT, 'da');
      assertScaled(g.db.data, c.db, maxAbs(c.db), GRADIENT, 'db');
      assertScaled(g.dbias, c.dbias, maxAbs(c.dbias), GRADIENT, 'dbias');
      assert.is(attn.matmulBackward(a, b, dout, { transposeB: c.transposeB }).dbias, null);
      (results[name] ??= {})[isa] = [y.data, g.da.data, g.db.data, g.dbias];
    });
  }
  s('transposeB gives the bits of matmul by the transpose; a bias adds after the sum', ({ attn }) => {
    const a = M(5, 6, Array.from({ length: 30 }, (_, i) => Math.sin(i))), bt = M(7, 6, Array.from({ length: 42 }, (_, i) => Math.cos(i * 1.3)));
    const b = new Matrix(6, 7);
    for (let i = 0; i < 7; i++) for (let j = 0; j < 6; j++) b.data[j * 7 + i] = bt.data[i * 6 + j];
    const plain = attn.matmul(a, b);
    assert.equal(attn.matmul(a, bt, { transposeB: true }).data, plain.data);
    assert.equal(attn.matmul(a, b, { transposeB: false }).data, plain.data);
    const bias = Array.from({ length: 7 }, (_, j) => j - 3.25);
    const withBias = attn.matmul(a, bt, { transposeB: true, bias });
    assert.equal(withBias.data, Float32Array.from(plain.data, (v, i) => v + Math.fround(bias[i % 7])));
    assert.equal(attn.matmul(a, b, { bias: Float32Array.from(bias) }).data, withBias.data);
  });
  s('out: written in place, may hold a\'s data', ({ attn }) => {
    const a = M(3, 3, [1, 2, 3, 4, 5, 6, 7, 8, 9]), b = M(3, 3, [1, 0, 0, 0, 2, 0, 0, 0, 3]);
    const fresh = attn.matmul(a, b, { transposeB: true, bias: [1, 1, 1] });
    const out = new Matrix(3, 3);
    assert.is(attn.matmul(a, b, { transposeB: true, bias: [1, 1, 1], out }), out);
    assert.equal(out.data, fresh.data);
    const r = attn.matmul(a, b, { transposeB: true, bias: [1, 1, 1], out: a.data });
    assert.is(r.data, a.data);
    assert.equal(a.data, fresh.data);
  });
  s('1000 calls of the forward and the backward take no new wasm memory', ({ attn }) => {
    const a = M(16, 12, Array.from({ length: 192 }, (_, i) => Math.sin(i))), b = M(20, 12, Array.from({ length: 240 }, (_, i) => Math.cos(i)));
    const dout = M(16, 20, Array.from({ length: 320 }, (_, i) => Math.sin(i * 0.7)));
    const bias = new Float32Array(20).fill(0.5);
    attn.matmul(a, b, { transposeB: true, bias });
    attn.matmulBackward(a, b, dout, { transposeB: true, bias: true });
    const bytes = attn.memory.buffer.byteLength;
    for (let i = 0; i < 1000; i++) {
      attn.matmul(a, b, { transposeB: true, bias });
      attn.matmulBackward(a, b, dout, { transposeB: true, bias: true });
    }
    assert.is(attn.memory.buffer.byteLength, bytes);
  });
  s.run();
}

const twins = suite('matmul ops: SIMD128 and scalar give the same bits, relaxed SIMD within rounding');
twins('every fixture case', () => {
  for (const [name, r] of Object.entries(results)) {
    for (let t = 0; t < 4; t++) {
      assert.equal(r.simd128[t], r.scalar[t], `${name} output ${t}`);
      assertScaled(r['relaxed-simd'][t], r.scalar[t], maxAbs(r.scalar[t]), 1e-6, `${name} relaxed output ${t}`);
    }
  }
});
twins.run();

const errors = suite('matmul ops: bad input names the argument and the shape');
errors.before(async (ctx) => {
  ctx.attn = await loadBuild('scalar');
});
errors('shapes, bias, options', ({ attn }) => {
  const a = new Matrix(2, 3), b = new Matrix(3, 4), bt = new Matrix(4, 3), d = new Matrix(2, 4);
  const bad = [
    [() => attn.matmul(a, b, { transposeB: true }), RangeError, /^matmul: b must have shape \(rows, 3\), got \(3, 4\)$/],
    [() => attn.matmul(a, bt), RangeError, /^matmul: b must have shape \(3, cols\), got \(4, 3\)$/],
    [() => attn.matmul(a, b, { bias: [1, 2, 3] }), RangeError, /^matmul: bias has 3 values, expected 4 \(the cols of b\)$/],
    [() => attn.matmul(a, bt, { transposeB: true, bias: new Float32Array(3) }), RangeError, /^matmul: bias has 3 values, expected 4 \(the rows of b\)$/],
    [() => attn.matmul(a, b, { bias: new Float64Array(4) }), TypeError, /^matmul: bias must be a Float32Array or number\[\] of 4 values \(the cols of b\), got a Float64Array of length 4$/],
    [() => attn.matmul(a, b, { bias: [1, 2, '3', 4] }), TypeError, /^matmul: bias\[2\] must be a number/],
    [() => attn.matmul(a, b, { transposeB: 1 }), TypeError, /^matmul: transposeB must be a boolean, got 1$/],
    [() => attn.matmul(a, bt, { transposeB: true, out: new Float32Array(7) }), RangeError, /^matmul: out has 7 values, needs 2 x 4 = 8/],
    [() => attn.matmulBackward(a, b, new Matrix(2, 3)), RangeError, /^matmulBackward: dOut must have shape \(2, 4\), got \(2, 3\)$/],
    [() => attn.matmulBackward(a, bt, d, { transposeB: true, bias: 'yes' }), TypeError, /^matmulBackward: bias must be a boolean/],
    [() => attn.matmulBackward(a, b, d, { out: d }), TypeError, /^matmulBackward: unknown option "out" \(known: transposeB, bias\)$/],
    [() => attn.matmulBackward(a, b, d, 3), TypeError, /^matmulBackward: options must be an object/],
  ];
  for (const [call, E, message] of bad) rejects(call, E, message);
  assert.equal(attn.matmulBackward(a, bt, d, { transposeB: true }).db.data, new Float32Array(12));
});
errors.run();
