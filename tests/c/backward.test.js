// The backward pass (attn_sdpa_backward through attentionBackward,
// sdpaBackward and multiHeadAttentionBackward) on the three builds: against
// numpy's float64 analytic gradients and central finite differences
// (tests/fixtures/backward.json from make_fixtures.py), SIMD against scalar,
// hostile inputs, and the same errors as the forward calls. Node 20 needs a
// flag for relaxed SIMD: without it this file runs itself again with it.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { loadAttention, NumpyRandom } from '../../web/attention.js';
import { BUILDS, assertClose, caseInputs, generated, loadBuild, readJSON, rejects, runWithRelaxedSimd } from '../helpers.js';

runWithRelaxedSimd(import.meta.url);

const cases = generated(readJSON('./fixtures/backward.json').cases, 34, 'backward.json');

// float32 gradients against float64 ones, relative to the largest gradient:
// dz = p (dp - delta) subtracts two sums of size ~|dout||v|, so the error is
// a few ulp of those sums rather than of the gradient; the README (Gradients)
// states the measured worst case, well inside this.
const RTOL_BACKWARD = 5e-6;
// numpy's analytic gradients agree with its own central differences to 1e-6
// (checked when the fixtures are made), so the float32 kernels sit as close
// to these as to the analytic ones.
const RTOL_FINITE_DIFFERENCES = 5e-6;
// The same gradients summed in another order (a broadcast bias's gradient
// summed here, per-batch calls): a few ulp of the largest one.
const RTOL_REORDERED = 2e-6;
// multiHeadAttentionBackward against float64 finite differences of a float64
// JS forward: the projections add float32 matmuls on both sides.
const RTOL_MHA = 1e-4;

/** The inputs of a backward case, drawn as make_fixtures.py's backward_case draws them. */
function inputsOf(c) {
  const rng = new NumpyRandom(c.seed);
  const inputs = caseInputs(c, rng);
  inputs.dout = Float32Array.from(rng.randn(c.batch, c.heads, c.nq, c.dv));
  return inputs;
}

function optionsOf(c, inputs) {
  return {
    batch: c.batch, heads: c.heads, kvHeads: c.kvHeads, nq: c.nq, nk: c.nk, dk: c.dk, dv: c.dv,
    causal: c.causal, mask: inputs.mask, bias: inputs.bias, window: c.window, queryOffset: c.queryOffset,
    ...(c.softcap > 0 ? { softcap: c.softcap } : {}), ...(c.scale === null ? {} : { scale: c.scale }),
  };
}

function gradsOf(attn, c, inputs = inputsOf(c), extra = {}) {
  return attn.sdpaBackward(inputs.q, inputs.k, inputs.v, extra.output ?? null, inputs.dout, { ...optionsOf(c, inputs), ...extra.options });
}

function hasNaN(x) {
  for (const v of x) if (Number.isNaN(v)) return true;
  return false;
}

for (const build of BUILDS) {
  const s = suite(`backward against numpy, ${build} build`);
  s.before(async (ctx) => {
    ctx.attn = await loadBuild(build);
    assert.is(ctx.attn.isa, build);
  });
  for (const c of cases) {
    s(`${c.name}: gradients within ${RTOL_BACKWARD} of numpy's analytic ones`, ({ attn }) => {
      const g = gradsOf(attn, c);
      for (const key of ['dq', 'dk', 'dv']) assertClose(g[key], c.grads[key], { rtol: RTOL_BACKWARD, what: `${build} ${c.name} ${key}` });
      if (c.bias) assertClose(g.dbias, c.grads.dbias, { rtol: RTOL_BACKWARD, what: `${build} ${c.name} dbias` });
      else assert.is(g.dbias, undefined);
    });
    if (c.fd) {
      s(`${c.name}: gradients within ${RTOL_FINITE_DIFFERENCES} of float64 central differences`, ({ attn }) => {
        const g = gradsOf(attn, c);
        for (const key of ['dq', 'dk', 'dv']) assertClose(g[key], c.fd[key], { rtol: RTOL_FINITE_DIFFERENCES, what: `${build} ${c.name} ${key} vs FD` });
      });
    }
  }
  // The relaxed module's forward may fuse its products where the backward's
  // recomputation (another order) rounds differently: with huge logits the
  // two logits differ by ulp(|logit|), which an lse passed in carries over
  // (attention.h), so those cases are left to the other builds there.
  s('the forward output and lse (sdpa stats) given or not: the same gradients', ({ attn }) => {
    for (const c of cases.filter((x) => build !== 'relaxed-simd' || x.amp === 1)) {
      const inputs = inputsOf(c);
      const { dout, ...forwardOptions } = { ...optionsOf(c, inputs), dout: null };
      const { output, lse } = attn.sdpa(inputs.q, inputs.k, inputs.v, { ...forwardOptions, stats: true });
      const plain = gradsOf(attn, c, inputs);
      const given = gradsOf(attn, c, inputs, { output, options: { lse } });
      for (const key of ['dq', 'dk', 'dv']) assertClose(given[key], plain[key], { rtol: RTOL_BACKWARD, what: `${build} ${c.name} ${key} with output and lse` });
    }
  });
  s.run();
}

// SIMD128 against scalar: the kernels keep the same summation orders and use
// the same exp and tanh, with no fused multiply-add, so the two give the same
// bits. The relaxed module fuses the multiply-adds (where the CPU can): close.
const RTOL_RELAXED_BACKWARD = 2e-6;
const both = suite('backward: SIMD128 against scalar bit for bit, relaxed SIMD close');
both.before(async (ctx) => {
  ctx.relaxed = await loadBuild('relaxed-simd');
  ctx.simd = await loadBuild('simd128');
  ctx.scalar = await loadBuild('scalar');
});
for (const c of cases) {
  both(`${c.name}: the same bits`, ({ relaxed, simd, scalar }) => {
    const a = gradsOf(simd, c), b = gradsOf(scalar, c), r = gradsOf(relaxed, c);
    for (const key of ['dq', 'dk', 'dv', ...(c.bias ? ['dbias'] : [])]) {
      assertClose(a[key], b[key], { what: `simd128 ${c.name} ${key}` });
      assertClose(r[key], b[key], { rtol: RTOL_RELAXED_BACKWARD, what: `relaxed ${c.name} ${key}` });
    }
  });
}
both.run();

const hostile = suite('backward: hostile inputs');
hostile.before(async (ctx) => {
  ctx.builds = await Promise.all(BUILDS.map(loadBuild));
});
hostile('fully masked rows give zero gradients, never NaN, even with Infinity in their q and dout', ({ builds }) => {
  const nq = 6, nk = 37, d = 5;
  const rng = new NumpyRandom(7);
  const q = Float32Array.from(rng.randn(nq, d)), k = Float32Array.from(rng.randn(nk, d));
  const v = Float32Array.from(rng.randn(nk, d)), dout = Float32Array.from(rng.randn(nq, d));
  const mask = new Uint8Array(nq * nk).fill(1);
  mask.fill(0, 2 * nk, 3 * nk);
  q[2 * d] = Infinity;
  dout[2 * d + 1] = NaN;
  for (const attn of builds) {
    const g = attn.sdpaBackward(q, k, v, null, dout, { nq, nk, dk: d, dv: d, mask });
    for (const key of ['dq', 'dk', 'dv']) assert.not.ok(hasNaN(g[key]), `${key} has NaN`);
    assert.equal(Array.from(g.dq.subarray(2 * d, 3 * d)), [0, 0, 0, 0, 0]);
    // Every row masked: all gradients 0.
    const none = attn.sdpaBackward(q, k, v, null, dout, { nq, nk, dk: d, dv: d, mask: new Uint8Array(nq * nk) });
    for (const key of ['dq', 'dk', 'dv']) assert.ok(none[key].every((x) => x === 0), `${key} not all 0`);
  }
});
hostile('huge logits and a -Infinity bias row stay finite', ({ builds }) => {
  const nq = 5, nk = 40, d = 4;
  const rng = new NumpyRandom(8);
  const q = Float32Array.from(rng.randn(nq, d), (x) => x * 1e4), k = Float32Array.from(rng.randn(nk, d), (x) => x * 1e4);
  const v = Float32Array.from(rng.randn(nk, d)), dout = Float32Array.from(rng.randn(nq, d));
  const bias = new Float32Array(nq * nk);
  bias.fill(-Infinity, nk, 2 * nk);
  for (const attn of builds) {
    const g = attn.sdpaBackward(q, k, v, null, dout, { nq, nk, dk: d, dv: d, bias });
    for (const key of ['dq', 'dk', 'dv', 'dbias']) assert.ok(g[key].every(Number.isFinite), `${key} not finite`);
    assert.ok(g.dq.subarray(d, 2 * d).every((x) => x === 0), 'the -Infinity row has dq 0');
  }
});
hostile('NaN in one query row reaches that row, not the dq of other rows', ({ builds }) => {
  const nq = 5, nk = 6, d = 3;
  const rng = new NumpyRandom(9);
  const q = Float32Array.from(rng.randn(nq, d)), k = Float32Array.from(rng.randn(nk, d));
  const v = Float32Array.from(rng.randn(nk, d)), dout = Float32Array.from(rng.randn(nq, d));
  q[3 * d] = NaN;
  for (const attn of builds) {
    const g = attn.sdpaBackward(q, k, v, null, dout, { nq, nk, dk: d, dv: d, causal: true });
    assert.ok(hasNaN(g.dq.subarray(3 * d, 4 * d)), 'row 3 NaN');
    assert.not.ok(hasNaN(g.dq.subarray(0, 3 * d)), 'rows 0-2 clean');
    assert.not.ok(hasNaN(g.dq.subarray(4 * d)), 'row 4 clean');
  }
});

hostile('the instance keeps working after an error', ({ builds }) => {
  const attn = builds[0];
  assert.throws(() => attn.attentionBackward([[1]], [[1]], [[1]], [[1, 2]]), /dOutput/);
  const g = attn.attentionBackward([[1, 0]], [[1, 0], [0, 1]], [[1], [2]], [[1]]);
  assert.ok(g.dv.data.every(Number.isFinite));
});
hostile.run();

const errors = suite('backward: bad input gives the same errors as the forward');
errors.before(async (ctx) => {
  ctx.attn = await loadAttention();
});
errors('attentionBackward and attention reject the same shapes and options', ({ attn }) => {
  const q = [[1, 2], [3, 4]], k = [[1, 0], [0, 1], [1, 1]], v = [[1], [2], [3]], dO = [[1], [1]];
  const bad = [
    [[[1, 2, 3]], k, v, {}],
    [q, [[1, 0, 0]], v, {}],
    [q, k, [[1], [2]], {}],
    [q, k, v, { mask: [[1, 1]] }],
    [q, k, v, { bias: [[0, 0, 0]] }],
    [q, k, v, { scale: NaN }],
    [q, k, v, { causal: 'yes' }],
    [q, k, v, { nope: 1 }],
  ];
  for (const [Q, K, V, options] of bad) {
    const forward = rejects(() => attn.attention(Q, K, V, options), Error, /./, `forward ${JSON.stringify(options)}`);
    const e = rejects(() => attn.attentionBackward(Q, K, V, dO, options), forward.constructor, /./, `backward ${JSON.stringify(options)}`);
    assert.is(e.constructor, forward.constructor);
    assert.is(e.message.replace(/^attentionBackward/, 'attention').replace(/ \(known: .*\)$/, ''), forward.message.replace(/ \(known: .*\)$/, ''));
  }
});
errors('sdpaBackward and sdpa reject the same options with the same messages', ({ attn }) => {
  const o = { batch: 2, heads: 2, nq: 3, nk: 4, dk: 2, dv: 2 };
  const q = new Float32Array(24), k = new Float32Array(32), v = new Float32Array(32), dO = new Float32Array(24);
  const bad = [
    { softcap: -1 }, { softcap: 1e-46 }, { softcap: 'x' }, { scale: 1e39 }, { window: [-2, 0] }, { window: 3 }, { window: [1, 0.5] },
    { queryOffset: 0.5 }, { queryOffset: new Int32Array(3) }, { kvLengths: new Int32Array([1, 5]) },
    { kvLengths: [1, 2] }, { layout: 'bsdh' }, { mask: new Uint8Array(5) }, { bias: { data: new Float32Array(8), shape: [2, 4] } },
    { bias: { data: new Float32Array(10), shape: [2, 5] } }, { scale: Infinity }, { causal: 1 }, { heads: 3, kvHeads: 2 },
    { nq: 0 }, { dk: 2.5 },
  ];
  for (const b of bad) {
    const forward = rejects(() => attn.sdpa(q, k, v, { ...o, ...b }), Error, /./, `sdpa ${JSON.stringify(b)}`);
    const e = rejects(() => attn.sdpaBackward(q, k, v, null, dO, { ...o, ...b }), forward.constructor, /^sdpaBackward/, `sdpaBackward ${JSON.stringify(b)}`);
    assert.is(e.constructor, forward.constructor, `${JSON.stringify(b)}: ${e.message}`);
    assert.is(e.message.replace(/^sdpaBackward/, 'sdpa'), forward.message, JSON.stringify(b));
  }
});
errors('sdpaBackward names the argument and the expected shape', ({ attn }) => {
  const o = { nq: 2, nk: 3, dk: 2, dv: 1 };
  const q = new Float32Array(4), k = new Float32Array(6), v = new Float32Array(3), dO = new Float32Array(2);
  assert.throws(() => attn.sdpaBackward(q, k, v, null, new Float32Array(3), o), /sdpaBackward: dOutput has 3 values, expected 2 for \(batch, heads, nq, dv\)/);
  assert.throws(() => attn.sdpaBackward(new Float32Array(5), k, v, null, dO, o), /sdpaBackward: q has 5 values/);
  assert.throws(() => attn.sdpaBackward(q, k, v, new Float32Array(1), dO, o), /sdpaBackward: output/);
  assert.throws(() => attn.sdpaBackward(q, k, v, null, dO, { ...o, lse: new Float32Array(3) }), /sdpaBackward: lse has 3 values, expected 2/);
  assert.throws(() => attn.sdpaBackward(q, k, v, null, dO, { ...o, heads: 3, kvHeads: 2 }), RangeError);
  assert.throws(() => attn.sdpaBackward(q, k, v, null, dO, { ...o, layot: 1 }), /unknown option "layot"/);
  assert.throws(() => attn.sdpaBackward(q, k, v, null, dO, null), TypeError);
});
errors('sdpaBackward writes dq, dk and dv into out; a wrong out names the gradient and its shape', ({ attn }) => {
  const rng = new NumpyRandom(7);
  const o = { batch: 2, heads: 2, kvHeads: 1, nq: 3, nk: 4, dk: 2, dv: 3, causal: true, layout: 'bshd' };
  const q = Float32Array.from(rng.randn(24)), k = Float32Array.from(rng.randn(16)), v = Float32Array.from(rng.randn(24));
  const dO = Float32Array.from(rng.randn(36));
  const fresh = attn.sdpaBackward(q, k, v, null, dO, o);
  const out = { dq: new Float32Array(24).fill(9), dk: new Float32Array(16).fill(9), dv: new Float32Array(24).fill(9) };
  const g = attn.sdpaBackward(q, k, v, null, dO, { ...o, out });
  for (const name of ['dq', 'dk', 'dv']) {
    assert.is(g[name], out[name], name);
    assert.equal(out[name], fresh[name], name);
  }
  // Only some of them, one longer than needed (as sdpa's out may be): the rest come back new.
  const longer = new Float32Array(30).fill(9);
  const some = attn.sdpaBackward(q, k, v, null, dO, { ...o, out: { dk: longer } });
  assert.is(some.dk, longer);
  assert.equal(longer.subarray(0, 16), fresh.dk);
  assert.is(longer[16], 9);
  assert.equal(some.dq, fresh.dq);
  assert.equal(attn.sdpaBackward(q, k, v, null, dO, { ...o, out: null }).dv, fresh.dv);
  const bad = [
    [{ dq: new Float32Array(23) }, RangeError, /^sdpaBackward: out\.dq has 23 values, needs 24 for \(batch, nq, heads, dk\)$/],
    [{ dk: new Float32Array(15) }, RangeError, /^sdpaBackward: out\.dk has 15 values, needs 16 for \(batch, nk, kvHeads, dk\)$/],
    [{ dv: new Float64Array(24) }, TypeError, /^sdpaBackward: out\.dv must be a Float32Array of 24 values \(batch, nk, kvHeads, dv\), got a Float64Array/],
    [{ dbias: new Float32Array(24) }, TypeError, /^sdpaBackward: out has an unknown key "dbias" \(known: dq, dk, dv\)$/],
    [new Float32Array(24), TypeError, /^sdpaBackward: out must be an object \{ dq, dk, dv \} of Float32Arrays, got a Float32Array/],
    [3, TypeError, /^sdpaBackward: out must be an object/],
  ];
  for (const [value, E, message] of bad) {
    rejects(() => attn.sdpaBackward(q, k, v, null, dO, { ...o, out: value }), E, message, message.source);
  }
});
errors.run();

// bhsd <-> bshd for a flat (batch, A, B, d) array: swaps the middle two dims.
function swapMiddle(x, batch, a, b, d) {
  const out = new Float32Array(x.length);
  for (let n = 0; n < batch; n++) for (let i = 0; i < a; i++) for (let j = 0; j < b; j++) {
    for (let c = 0; c < d; c++) out[((n * b + j) * a + i) * d + c] = x[((n * a + i) * b + j) * d + c];
  }
  return out;
}

const layouts = suite('backward: layouts, broadcasts, lengths and offsets of the forward');
layouts.before(async (ctx) => {
  ctx.builds = await Promise.all(BUILDS.map(loadBuild));
});
const shapeCase = { batch: 2, heads: 4, kvHeads: 2, nq: 9, nk: 37, dk: 6, dv: 5 };
function draw(seed) {
  const { batch, heads, kvHeads, nq, nk, dk, dv } = shapeCase;
  const rng = new NumpyRandom(seed);
  const f = (...shape) => Float32Array.from(rng.randn(...shape));
  return { q: f(batch, heads, nq, dk), k: f(batch, kvHeads, nk, dk), v: f(batch, kvHeads, nk, dv), dout: f(batch, heads, nq, dv), bias: f(batch, heads, nq, nk) };
}
layouts("layout 'bshd' gives the bhsd gradients, in bshd", ({ builds }) => {
  const { batch, heads, kvHeads, nq, nk, dk, dv } = shapeCase;
  const x = draw(40);
  for (const attn of builds) {
    const a = attn.sdpaBackward(x.q, x.k, x.v, null, x.dout, { ...shapeCase, causal: true, queryOffset: 30 });
    const b = attn.sdpaBackward(swapMiddle(x.q, batch, heads, nq, dk), swapMiddle(x.k, batch, kvHeads, nk, dk), swapMiddle(x.v, batch, kvHeads, nk, dv),
      null, swapMiddle(x.dout, batch, heads, nq, dv), { ...shapeCase, causal: true, queryOffset: 30, layout: 'bshd' });
    assertClose(swapMiddle(b.dq, batch, nq, heads, dk), a.dq, { rtol: RTOL_REORDERED, what: 'dq' });
    assertClose(swapMiddle(b.dk, batch, nk, kvHeads, dk), a.dk, { rtol: RTOL_REORDERED, what: 'dk' });
    assertClose(swapMiddle(b.dv, batch, nk, kvHeads, dv), a.dv, { rtol: RTOL_REORDERED, what: 'dv' });
  }
});
layouts('a broadcast bias gets its gradient summed over the broadcast dims', ({ builds }) => {
  const { batch, heads, nq, nk } = shapeCase;
  const x = draw(41);
  const perHead = x.bias.subarray(0, heads * nq * nk); // (heads, nq, nk), the same for both batch entries
  const full = new Float32Array(batch * heads * nq * nk);
  for (let b = 0; b < batch; b++) full.set(perHead, b * heads * nq * nk);
  for (const attn of builds) {
    const g = attn.sdpaBackward(x.q, x.k, x.v, null, x.dout, { ...shapeCase, bias: { data: perHead, shape: [heads, nq, nk] } });
    const f = attn.sdpaBackward(x.q, x.k, x.v, null, x.dout, { ...shapeCase, bias: { data: full, shape: [batch, heads, nq, nk] } });
    assert.is(g.dbias.length, heads * nq * nk);
    const summed = new Float32Array(heads * nq * nk);
    for (let b = 0; b < batch; b++) for (let i = 0; i < summed.length; i++) summed[i] += f.dbias[b * summed.length + i];
    assertClose(g.dbias, summed, { rtol: RTOL_REORDERED, what: 'dbias' });
    assertClose(g.dq, f.dq, { rtol: RTOL_REORDERED, what: 'dq' });
  }
});
layouts('kvLengths act as a mask of the later keys, whose dk and dv are 0', ({ builds }) => {
  const { batch, heads, kvHeads, nq, nk, dk } = shapeCase;
  const x = draw(42);
  const lengths = Int32Array.of(20, 0);
  const mask = new Uint8Array(batch * heads * nq * nk);
  for (let b = 0; b < batch; b++) for (let r = 0; r < heads * nq; r++) mask.fill(1, (b * heads * nq + r) * nk, (b * heads * nq + r) * nk + lengths[b]);
  for (const attn of builds) {
    const g = attn.sdpaBackward(x.q, x.k, x.v, null, x.dout, { ...shapeCase, kvLengths: lengths });
    const m = attn.sdpaBackward(x.q, x.k, x.v, null, x.dout, { ...shapeCase, mask: { data: mask, shape: [batch, heads, nq, nk] } });
    for (const key of ['dq', 'dk', 'dv']) assertClose(g[key], m[key], { rtol: RTOL_REORDERED, what: key });
    assert.ok(g.dk.subarray(20 * dk, nk * dk).every((t) => t === 0), 'keys past the length: dk 0');
    assert.ok(g.dq.subarray(heads * nq * dk).every((t) => t === 0), 'batch entry of length 0: dq 0');
    assert.ok(g.dv.subarray(kvHeads * nk * shapeCase.dv).every((t) => t === 0), 'batch entry of length 0: dv 0');
  }
});
layouts('per-batch query offsets equal one call per batch entry', ({ builds }) => {
  const x = draw(43);
  const offsets = Int32Array.of(28, -3);
  for (const attn of builds) {
    const g = attn.sdpaBackward(x.q, x.k, x.v, null, x.dout, { ...shapeCase, causal: true, window: [6, 2], queryOffset: offsets });
    for (let b = 0; b < 2; b++) {
      const part = (t) => t.subarray((b * t.length) / 2, ((b + 1) * t.length) / 2);
      const one = attn.sdpaBackward(part(x.q), part(x.k), part(x.v), null, part(x.dout),
        { ...shapeCase, batch: 1, causal: true, window: [6, 2], queryOffset: offsets[b] });
      assertClose(part(g.dq), one.dq, { rtol: 0, what: `batch ${b} dq` });
      assertClose(part(g.dk), one.dk, { rtol: 0, what: `batch ${b} dk` });
    }
  }
});
layouts.run();

// --- multiHeadAttentionBackward against float64 finite differences of a
// float64 JS forward of the same layer.

function mha64(x, c, w, { heads, kvHeads, causal }) {
  const mm = (a, ar, ac, b, bc) => {
    const out = new Float64Array(ar * bc);
    for (let i = 0; i < ar; i++) for (let p = 0; p < ac; p++) for (let j = 0; j < bc; j++) out[i * bc + j] += a[i * ac + p] * b[p * bc + j];
    return out;
  };
  const n = x.rows, m = c.rows, dk = w.wq.cols / heads, dv = w.wv.cols / kvHeads, group = heads / kvHeads;
  const Q = mm(x.data, n, x.cols, w.wq.data, w.wq.cols), K = mm(c.data, m, c.cols, w.wk.data, w.wk.cols), V = mm(c.data, m, c.cols, w.wv.data, w.wv.cols);
  const concat = new Float64Array(n * heads * dv);
  for (let h = 0; h < heads; h++) {
    const g = Math.floor(h / group);
    for (let i = 0; i < n; i++) {
      const z = [];
      for (let j = 0; j < m; j++) {
        let s = 0;
        for (let p = 0; p < dk; p++) s += Q[i * heads * dk + h * dk + p] * K[j * kvHeads * dk + g * dk + p];
        z.push(causal && j > i ? -Infinity : s / Math.sqrt(dk));
      }
      const mx = Math.max(...z), e = z.map((t) => Math.exp(t - mx)), sum = e.reduce((a, b) => a + b, 0);
      for (let j = 0; j < m; j++) for (let cc = 0; cc < dv; cc++) concat[i * heads * dv + h * dv + cc] += (e[j] / sum) * V[j * kvHeads * dv + g * dv + cc];
    }
  }
  return w.wo ? mm(concat, n, heads * dv, w.wo.data, w.wo.cols) : concat;
}

const mha = suite('multiHeadAttentionBackward');
mha.before(async (ctx) => {
  ctx.builds = await Promise.all(BUILDS.map(loadBuild));
});
const mat = (rng, rows, cols) => ({ rows, cols, data: Float64Array.from(rng.randn(rows, cols), (x) => Math.fround(x * 0.7)) });
for (const setup of [
  { name: 'self-attention with wo, heads=2', heads: 2, kvHeads: 2, n: 5, m: 5, dModel: 6, dk: 3, dv: 2, wo: 4, cross: false, causal: false },
  { name: 'GQA heads=4 kvHeads=2 causal, no wo', heads: 4, kvHeads: 2, n: 4, m: 4, dModel: 5, dk: 2, dv: 3, wo: 0, cross: false, causal: true },
  { name: 'cross-attention with wo', heads: 2, kvHeads: 1, n: 3, m: 6, dModel: 4, dContext: 5, dk: 2, dv: 2, wo: 3, cross: true, causal: false },
]) {
  mha(`${setup.name}: every gradient within ${RTOL_MHA} of finite differences`, ({ builds }) => {
    const rng = new NumpyRandom(11);
    const x = mat(rng, setup.n, setup.dModel);
    const c = setup.cross ? mat(rng, setup.m, setup.dContext) : x;
    const w = {
      wq: mat(rng, setup.dModel, setup.heads * setup.dk),
      wk: mat(rng, c.cols, setup.kvHeads * setup.dk),
      wv: mat(rng, c.cols, setup.kvHeads * setup.dv),
      ...(setup.wo ? { wo: mat(rng, setup.heads * setup.dv, setup.wo) } : {}),
    };
    const outCols = setup.wo || setup.heads * setup.dv;
    const dOut = mat(rng, setup.n, outCols);
    const opts = { heads: setup.heads, kvHeads: setup.kvHeads, causal: setup.causal };
    const loss = () => mha64(x, c, w, opts).reduce((acc, o, i) => acc + o * dOut.data[i], 0);
    const fd = (m) => Float64Array.from(m.data, (_, i) => {
      const keep = m.data[i], h = 1e-6;
      m.data[i] = keep + h;
      const up = loss();
      m.data[i] = keep - h;
      const down = loss();
      m.data[i] = keep;
      return (up - down) / (2 * h);
    });
    const expected = { dwq: fd(w.wq), dwk: fd(w.wk), dwv: fd(w.wv), ...(setup.wo ? { dwo: fd(w.wo) } : {}) };
    if (setup.cross) {
      expected.dx = fd(x);
      expected.dcontext = fd(c);
    } else {
      expected.dx = fd(x);
    }
    for (const attn of builds) {
      const g = attn.multiHeadAttentionBackward(x, dOut, { ...w, ...opts, ...(setup.cross ? { context: c } : {}) });
      assert.equal(Object.keys(g).sort(), Object.keys(expected).sort());
      for (const key of Object.keys(expected)) assertClose(g[key].data, expected[key], { rtol: RTOL_MHA, what: `${setup.name} ${key}` });
    }
  });
}
mha('bad options are rejected with the forward\'s messages', ({ builds }) => {
  const attn = builds[0];
  const x = [[1, 2], [3, 4]];
  assert.throws(() => attn.multiHeadAttentionBackward(x, [[1, 1]], { wq: [[1, 0], [0, 1]], wk: [[1, 0], [0, 1]], wv: [[1, 0], [0, 1]], heads: 1 }), /multiHeadAttentionBackward: dOutput/);
  assert.throws(() => attn.multiHeadAttentionBackward(x, [[1, 1], [1, 1]], { wq: [[1, 0], [0, 1]], wk: [[1, 0], [0, 1]], wv: [[1, 0], [0, 1]], heads: 3 }), /multiHeadAttentionBackward: wq has 2 columns/);
  assert.throws(() => attn.multiHeadAttentionBackward(x, [[1, 1], [1, 1]], { wq: [[1, 0], [0, 1]], wk: [[1, 0], [0, 1]], wv: [[1, 0], [0, 1]], heads: 1, steps: true }), /unknown option "steps"/);
});
mha.run();
