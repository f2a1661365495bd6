// RoPE, sinks and ALiBi computed in the kernels (c/attention.h, POSITIONS
// AND SINKS) on the three builds, against numpy's float64 reference
// (tests/fixtures/positions.json from make_fixtures.py: forward, lse and
// gradients, dsinks included, checked there against finite differences),
// and RoPE itself against ONNX RotaryEmbedding's reference implementation
// (the keys a cache turns at append). Node 20 needs a flag for relaxed
// SIMD: without it this file runs itself again with it.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { NumpyRandom } from '../../web/attention.js';
import { BUILDS, RTOL_REFERENCE, assertClose, generated, loadBuild, readJSON, rejects, runWithRelaxedSimd } from '../helpers.js';

runWithRelaxedSimd(import.meta.url);

const cases = generated(readJSON('./fixtures/positions.json').cases, 13, 'positions.json');
const ropeCases = generated(cases.filter((c) => c.rope && c.rotatedK), 7, 'positions.json cases with rotatedK');
const singleHeadRope = generated(ropeCases.filter((c) => c.batch === 1 && c.kvHeads === 1), 4, 'rotatedK cases of one kv head');

// Gradients against float64 analytic ones, relative to the largest: as
// tests/c/backward.test.js states for the same kernels.
const RTOL_BACKWARD = 5e-6;
// lse is m + log(l): an absolute error of a few ulp of the largest |lse|.
const RTOL_LSE = 2e-6;
// dsinks = -sum_i exp(s - lse_i) delta_i: each weight exp(s - lse_i) is off
// by about ulp(|lse_i|) relatively (lse is float32), and the terms may cancel:
// the error is relative to sum_i |exp(s - lse_i) delta_i| (dsinksTerms)
// times the largest |lse| (at least 1).
const RTOL_DSINKS = 5e-6;
// The library's turned keys against ONNX's float32 reference turn: the same
// float32 products and sums, so equal unless a cos or sin (float64, then
// rounded) lands on the other side of a rounding boundary than numpy's:
// then one ulp of that key's largest element.
const RTOL_ONNX_ROPE = 1.2e-7;

function inputsOf(c) {
  const rng = new NumpyRandom(c.seed);
  const draw = (...shape) => Float32Array.from(rng.randn(...shape), (x) => x * (c.amp ?? 1));
  const q = draw(c.batch, c.heads, c.nq, c.dk);
  const k = draw(c.batch, c.kvHeads, c.nk, c.dk);
  const v = Float32Array.from(rng.randn(c.batch, c.kvHeads, c.nk, c.dv));
  const dout = Float32Array.from(rng.randn(c.batch, c.heads, c.nq, c.dv));
  return { q, k, v, dout };
}

function optionsOf(c) {
  return {
    batch: c.batch, heads: c.heads, kvHeads: c.kvHeads, nq: c.nq, nk: c.nk, dk: c.dk, dv: c.dv, causal: c.causal,
    window: c.window, queryOffset: Array.isArray(c.queryOffset) ? Int32Array.from(c.queryOffset) : c.queryOffset,
    rope: c.rope ?? undefined, sinks: c.sinks ? Float32Array.from(c.sinks) : undefined,
    alibi: c.alibi === true ? true : c.alibi ? Float32Array.from(c.alibi) : undefined,
  };
}

for (const build of BUILDS) {
  const s = suite(`RoPE, sinks and ALiBi against numpy, ${build} build`);
  s.before(async (ctx) => {
    ctx.attn = await loadBuild(build);
    assert.is(ctx.attn.isa, build);
  });
  for (const c of cases) {
    s(`${c.name}: output and lse within ${RTOL_REFERENCE} of numpy (output path)`, ({ attn }) => {
      const { q, k, v } = inputsOf(c);
      const r = attn.sdpa(q, k, v, { ...optionsOf(c), stats: true });
      assertClose(r.output, c.output, { rtol: RTOL_REFERENCE, what: `${build} ${c.name} output` });
      assertClose(r.lse, c.lse, { rtol: RTOL_LSE, what: `${build} ${c.name} lse` });
    });
    s(`${c.name}: the step path agrees, and its weights with the sink sum to less than 1`, ({ attn }) => {
      const { q, k, v } = inputsOf(c);
      const r = attn.sdpa(q, k, v, { ...optionsOf(c), steps: true, stats: true });
      assertClose(r.output, c.output, { rtol: RTOL_REFERENCE, what: `${build} ${c.name} step output` });
      assertClose(r.lse, c.lse, { rtol: RTOL_LSE, what: `${build} ${c.name} step lse` });
      for (let row = 0; row < c.batch * c.heads * c.nq; row++) {
        let sum = 0;
        for (let j = 0; j < c.nk; j++) sum += r.weights[row * c.nk + j];
        const h = Math.floor(row / c.nq) % c.heads;
        // The sink's share is exp(sink - lse): the weights sum to 1 minus it.
        const expected = c.sinks ? 1 - Math.exp(c.sinks[h] - c.lse[row]) : 1;
        assert.ok(Math.abs(sum - expected) < 1e-5, `${c.name} row ${row}: weights sum to ${sum}, expected ${expected}`);
      }
    });
    s(`${c.name}: gradients within ${RTOL_BACKWARD} of numpy's (dsinks too), with and without the forward's lse`, ({ attn }) => {
      const { q, k, v, dout } = inputsOf(c);
      const fwd = attn.sdpa(q, k, v, { ...optionsOf(c), stats: true });
      for (const [label, output, extra] of [['recomputed', null, {}], ['given', fwd.output, { lse: fwd.lse }]]) {
        const g = attn.sdpaBackward(q, k, v, output, dout, { ...optionsOf(c), ...extra });
        for (const key of ['dq', 'dk', 'dv']) assertClose(g[key], c.grads[key], { rtol: RTOL_BACKWARD, what: `${build} ${c.name} ${label} ${key}` });
        if (c.sinks) {
          const lseMax = Math.max(1, ...c.lse.map(Math.abs));
          for (let h = 0; h < c.heads; h++) {
            const tol = RTOL_DSINKS * lseMax * c.dsinksTerms[h];
            assert.ok(Math.abs(g.dsinks[h] - c.grads.dsinks[h]) <= tol, `${build} ${c.name} ${label} dsinks[${h}]: got ${g.dsinks[h]}, expected ${c.grads.dsinks[h]} (tolerance ${tol})`);
          }
        } else {
          assert.is(g.dsinks, undefined);
        }
      }
    });
  }
  for (const c of ropeCases) {
    s(`${c.name}: a cache's keys turned at append (in 3 appends) match ONNX RotaryEmbedding's reference within one ulp`, ({ attn }) => {
      const { k, v } = inputsOf(c);
      const cache = attn.kvCache({ batch: c.batch, kvHeads: c.kvHeads, dk: c.dk, dv: c.dv, capacity: c.nk });
      const cuts = [0, Math.floor(c.nk / 3), c.nk - 1, c.nk];
      for (let a = 0; a + 1 < cuts.length; a++) {
        const t = cuts[a + 1] - cuts[a];
        if (t === 0) continue;
        const part = (x, d) => {
          const out = new Float32Array(c.batch * c.kvHeads * t * d);
          for (let bh = 0; bh < c.batch * c.kvHeads; bh++) out.set(x.subarray(bh * c.nk * d + cuts[a] * d, bh * c.nk * d + cuts[a + 1] * d), bh * t * d);
          return out;
        };
        cache.append(part(k, c.dk), part(v, c.dv), { rope: c.rope });
      }
      const keys = cache.keys();
      for (let row = 0; row < keys.length / c.dk; row++) {
        assertClose(keys.subarray(row * c.dk, (row + 1) * c.dk), c.rotatedK.slice(row * c.dk, (row + 1) * c.dk), { rtol: RTOL_ONNX_ROPE, what: `${build} ${c.name} key row ${row}` });
      }
      cache.dispose();
    });
  }
  for (const c of singleHeadRope) {
    s(`${c.name}: attn.rope turns the keys as ONNX RotaryEmbedding's reference does`, ({ attn }) => {
      const { k } = inputsOf(c);
      const keys = attn.rope({ rows: c.nk, cols: c.dk, data: k }, c.rope === true ? {} : c.rope).data;
      for (let row = 0; row < c.nk; row++) {
        assertClose(keys.subarray(row * c.dk, (row + 1) * c.dk), c.rotatedK.slice(row * c.dk, (row + 1) * c.dk), { rtol: RTOL_ONNX_ROPE, what: `${build} ${c.name} key row ${row}` });
      }
    });
  }
  s.run();
}

// A suite whose tests get every build's instance as ctx.builds.
function withBuilds(name) {
  const s = suite(name);
  s.before(async (ctx) => {
    ctx.builds = {};
    for (const build of BUILDS) ctx.builds[build] = await loadBuild(build);
  });
  return s;
}

const turn = withBuilds('attn.rope: the rows the kernels attend with');

turn('attention over attn.rope(q, { position }) and attn.rope(k) equals attention with rope and queryOffset, bit for bit', ({ builds }) => {
  const rng = new NumpyRandom(31);
  const m = (rows, cols) => ({ rows, cols, data: Float32Array.from(rng.randn(rows * cols)) });
  const q = m(3, 6), k = m(7, 6), v = m(7, 2);
  for (const [build, attn] of Object.entries(builds)) {
    for (const rope of [{}, { theta: 500, dims: 4 }, { interleaved: true, dims: 2 }]) {
      for (const offset of [0, 4, -2]) {
        const want = attn.attention(q, k, v, { rope, queryOffset: offset, causal: true }).output.data;
        const got = attn.attention(attn.rope(q, { ...rope, position: offset }), attn.rope(k, rope), v, { queryOffset: offset, causal: true }).output.data;
        assert.equal(Array.from(got), Array.from(want), `${build} ${JSON.stringify(rope)} offset ${offset}`);
      }
    }
  }
});

turn('attn.rope with heads turns each head from position, as one call per head does', ({ builds }) => {
  const rng = new NumpyRandom(32);
  const [heads, n, d] = [3, 4, 8];
  const x = { rows: heads * n, cols: d, data: Float32Array.from(rng.randn(heads * n * d)) };
  for (const [build, attn] of Object.entries(builds)) {
    for (const rope of [{}, { theta: 500, dims: 4, interleaved: true }]) {
      const got = attn.rope(x, { ...rope, heads, position: 9 }).data;
      for (let h = 0; h < heads; h++) {
        const one = attn.rope({ rows: n, cols: d, data: x.data.subarray(h * n * d, (h + 1) * n * d) }, { ...rope, position: 9 }).data;
        assert.equal(Array.from(got.subarray(h * n * d, (h + 1) * n * d)), Array.from(one), `${build} head ${h} ${JSON.stringify(rope)}`);
      }
    }
  }
  const attn = builds.simd128;
  rejects(() => attn.rope(x, { heads: 5 }), RangeError, /rope: heads must be a positive integer dividing x's 12 rows, got 5/);
  rejects(() => attn.rope(x, { heads: '3' }), TypeError, /rope: heads must be a positive integer/);
  // With heads, the last row's position is position + n / heads - 1.
  assert.is(attn.rope(x, { heads: 3, position: 2 ** 31 - 4 }).rows, 12);
  rejects(() => attn.rope(x, { heads: 3, position: 2 ** 31 - 3 }), RangeError, /row 3's position must fit int32/);
});

turn('with rope, the last query row\'s position must fit int32 (sdpa and a cache refuse alike)', ({ builds }) => {
  const attn = builds.simd128;
  const q = new Float32Array(2 * 8), k = new Float32Array(3 * 8);
  const shape = { nq: 2, nk: 3, dk: 8, dv: 8, rope: true };
  const past = /queryOffset: with rope, query row 1 turns at position 2147483647 \+ 1, past the int32 range/;
  rejects(() => attn.sdpa(q, k, k, { ...shape, queryOffset: 2 ** 31 - 1 }), RangeError, past);
  rejects(() => attn.sdpa(q, k, k, { ...shape, batch: 1, queryOffset: Int32Array.of(2 ** 31 - 1) }), RangeError, past);
  assert.is(attn.sdpa(q, k, k, { ...shape, queryOffset: 2 ** 31 - 2 }).length, 16);
  // Without rope no position is computed from the offset: the call runs.
  assert.is(attn.sdpa(q, k, k, { ...shape, rope: false, queryOffset: 2 ** 31 - 1 }).length, 16);
  const cache = attn.kvCache({ kvHeads: 1, dk: 8, capacity: 4 });
  cache.append(k, k, { rope: true });
  rejects(() => cache.attend(q, { nq: 2, queryOffset: 2 ** 31 - 1, rope: true }), RangeError, /^kvCache.attend: queryOffset: with rope/);
  cache.dispose();
});

turn('attn.rope checks its arguments and leaves x alone', ({ builds }) => {
  const attn = builds.simd128;
  const x = { rows: 2, cols: 4, data: new Float32Array([1, 2, 3, 4, 5, 6, 7, 8]) };
  const before = Array.from(x.data);
  assert.is(attn.rope(x, { position: 3 }).rows, 2);
  assert.equal(Array.from(x.data), before);
  assert.equal(Array.from(attn.rope(x, { position: 0, dims: 2 }).data.subarray(2, 4)), [3, 4]); // row 0 at position 0: unturned
  rejects(() => attn.rope(x, { dims: 3 }), RangeError, /rope.dims must be an even integer from 2 to dk = 4/);
  rejects(() => attn.rope(x, { position: 0.5 }), RangeError, /rope: position must be an integer/);
  rejects(() => attn.rope(x, { position: 2 ** 31 - 1 }), RangeError, /row 1's position must fit int32/);
  rejects(() => attn.rope(x, { offset: 1 }), TypeError, /rope: unknown option "offset"/);
  rejects(() => attn.rope({ rows: 1, cols: 1, data: new Float32Array(1) }), RangeError, /rope.dims must be an even integer from 2 to dk = 1/);
});

turn.run();

const consistency = withBuilds('RoPE in a cache and across builds');

// A cache turns each key once, at append, from a table that starts at its
// own position; sdpa turns all keys from position 0. The table's values
// depend on the position only (anchors every 64 positions), so both give
// the same bits, appended one token at a time or all at once.
consistency('attend with rope over keys appended one at a time equals sdpa with rope, bit for bit', ({ builds }) => {
  const rng = new NumpyRandom(77);
  const heads = 4, kvHeads = 2, nk = 150, d = 16, nq = 1;
  const k = Float32Array.from(rng.randn(kvHeads, nk, d)), v = Float32Array.from(rng.randn(kvHeads, nk, d));
  const q = Float32Array.from(rng.randn(heads, nq, d));
  const rope = { theta: 10000, dims: 16, interleaved: false };
  for (const build of BUILDS) {
    const attn = builds[build];
    const cache = attn.kvCache({ kvHeads, dk: d, capacity: nk });
    for (let j = 0; j < nk; j++) {
      const kt = new Float32Array(kvHeads * d), vt = new Float32Array(kvHeads * d);
      for (let g = 0; g < kvHeads; g++) {
        kt.set(k.subarray((g * nk + j) * d, (g * nk + j + 1) * d), g * d);
        vt.set(v.subarray((g * nk + j) * d, (g * nk + j + 1) * d), g * d);
      }
      cache.append(kt, vt, { rope });
    }
    const viaCache = cache.attend(q, { heads, rope });
    const direct = attn.sdpa(q, k, v, { heads, kvHeads, nq, nk, dk: d, dv: d, queryOffset: nk - nq, causal: true, rope });
    assert.equal(Array.from(viaCache), Array.from(direct), `${build}: cache and sdpa differ`);
    // The keys are turned: an attend without the rope, or with another, is refused, as is an
    // append with another rope; clear() lets the cache start over.
    rejects(() => cache.attend(q, { heads }), RangeError,
      /kvCache.attend: the keys were turned with rope \{ theta: 10000, dims: 16, interleaved: false \} as they were appended; attend needs the same rope to turn the queries, got no rope/);
    rejects(() => cache.attend(q, { heads, rope: { ...rope, theta: 500000 } }), RangeError, /got rope \{ theta: 500000/);
    cache.truncate(nk - 1);
    assert.throws(() => cache.append(k.subarray(0, kvHeads * d), v.subarray(0, kvHeads * d), { rope: true, interleaved: true }), TypeError);
    rejects(() => cache.append(k.subarray(0, kvHeads * d), v.subarray(0, kvHeads * d)), RangeError,
      /kvCache.append: the held keys were appended with rope \{ theta: 10000, dims: 16, interleaved: false \}, got no rope; a cache's keys all turn alike/);
    assert.is(cache.length, nk - 1, 'a refused append changes nothing');
    cache.clear();
    cache.append(k.subarray(0, kvHeads * d), v.subarray(0, kvHeads * d));
    assert.is(cache.attend(q, { heads, rope }).length, heads * d, 'over keys appended unturned, attend may turn the queries');
    cache.dispose();
  }
});

consistency('the SIMD128 and scalar builds give the same bits with rope, sinks and alibi on the decode path', ({ builds }) => {
  const rng = new NumpyRandom(78);
  const heads = 8, kvHeads = 2, nk = 333, d = 20;
  const q = Float32Array.from(rng.randn(2, heads, 1, d)), k = Float32Array.from(rng.randn(2, kvHeads, nk, d));
  const v = Float32Array.from(rng.randn(2, kvHeads, nk, d));
  const options = {
    batch: 2, heads, kvHeads, nq: 1, nk, dk: d, dv: d, causal: true, queryOffset: Int32Array.from([332, 200]),
    rope: { dims: 12, interleaved: true }, sinks: Float32Array.from(rng.randn(heads)), alibi: true, stats: true,
  };
  const a = builds.simd128.sdpa(q, k, v, options), b = builds.scalar.sdpa(q, k, v, options);
  assert.equal(Array.from(a.output), Array.from(b.output));
  assert.equal(Array.from(a.lse), Array.from(b.lse));
});

// Grouped-query decoding turns the keys inside the decode kernel, once for
// the group's heads: up to 4 heads as each key is read (rotate_half, dims / 2
// a multiple of 4), more heads or other pairs into a tile first; one head
// per kv head turns them all before the kernel. All turn the same floats and
// sum in the same order: the same bits.
consistency('decode with rope: keys turned in the kernel for a group equal keys turned before it, bit for bit', ({ builds }) => {
  const rng = new NumpyRandom(80);
  const nk = 203, d = 24;
  const q = Float32Array.from(rng.randn(6, 1, d)), k = Float32Array.from(rng.randn(1, nk, d));
  const v = Float32Array.from(rng.randn(1, nk, d));
  const ropes = [{ theta: 500000 }, { dims: 16 }, { dims: 12 }, { dims: 10, interleaved: true }];
  for (const [heads, rope] of [6, 4, 3, 2].flatMap((h) => ropes.map((r) => [h, r]))) {
    const repeat = (x) => { const y = new Float32Array(heads * x.length); for (let h = 0; h < heads; h++) y.set(x, h * x.length); return y; };
    for (const build of BUILDS) {
      const attn = builds[build];
      const o = { heads, nq: 1, nk, dk: d, dv: d, causal: true, queryOffset: 150, window: [90, 0], rope, stats: true };
      const qh = q.subarray(0, heads * d);
      const grouped = attn.sdpa(qh, k, v, { ...o, kvHeads: 1 });
      const apart = attn.sdpa(qh, repeat(k), repeat(v), { ...o, kvHeads: heads });
      const what = `${build} heads ${heads} ${JSON.stringify(rope)}`;
      assert.equal(Array.from(grouped.output), Array.from(apart.output), `${what}: outputs differ`);
      assert.equal(Array.from(grouped.lse), Array.from(apart.lse), `${what}: lse differs`);
    }
  }
});

consistency('rope: rotate_half and interleaved differ, dims < dk leaves the rest, theta matters', ({ builds }) => {
  const attn = builds.simd128;
  const rng = new NumpyRandom(79);
  const d = 8, n = 6;
  const q = Float32Array.from(rng.randn(n, d)), k = Float32Array.from(rng.randn(n, d)), v = Float32Array.from(rng.randn(n, d));
  const o = { nq: n, nk: n, dk: d, dv: d };
  const run = (rope) => Array.from(attn.sdpa(q, k, v, { ...o, rope }));
  assert.not.equal(run({}), run({ interleaved: true }));
  assert.not.equal(run({}), run({ theta: 500000 }));
  assert.equal(run(true), run({ theta: 10000, dims: d, interleaved: false }));
  // A cache's keys with dims = 4 of 8: the last 4 elements are the inputs'.
  const cache = attn.kvCache({ dk: d, capacity: n });
  cache.append(k, v, { rope: { dims: 4 } });
  const keys = cache.keys();
  for (let j = 0; j < n; j++) for (let c = 4; c < d; c++) assert.is(keys[j * d + c], k[j * d + c]);
  assert.ok(keys.some((x, i) => i % d < 4 && x !== k[i]));
  // Position 0 turns by angle 0: its key is unchanged.
  for (let c = 0; c < d; c++) assert.is(keys[c], k[c]);
});

consistency('bad rope, sinks and alibi options are TypeErrors and RangeErrors naming the option', ({ builds }) => {
  const attn = builds.simd128;
  const x = new Float32Array(2 * 4 * 4);
  const o = { heads: 2, nq: 4, nk: 4, dk: 4, dv: 4 };
  const cases = [
    [{ rope: 3 }, TypeError, /sdpa: rope must be true or/],
    [{ rope: { dims: 3 } }, RangeError, /sdpa: rope.dims must be an even integer from 2 to dk = 4, got 3/],
    [{ rope: { dims: 6 } }, RangeError, /rope.dims must be an even integer from 2 to dk = 4, got 6/],
    [{ rope: { theta: 0.5 } }, RangeError, /rope.theta must be >= 1/],
    [{ rope: { theta: 1e39 } }, RangeError, /rope.theta must be >= 1 and finite as a float32/],
    [{ rope: { base: 1 } }, TypeError, /rope: unknown key "base"/],
    [{ rope: { interleaved: 1 } }, TypeError, /rope.interleaved must be a boolean/],
    [{ sinks: [0, 0] }, TypeError, /sdpa: sinks must be a Float32Array of heads = 2 logits/],
    [{ sinks: new Float32Array(3) }, RangeError, /sinks has 3 values, expected heads = 2/],
    [{ sinks: Float32Array.of(0, NaN) }, RangeError, /sinks\[1\] is NaN, must be finite/],
    [{ alibi: 'yes' }, TypeError, /sdpa: alibi must be a Float32Array of heads = 2 slopes/],
    [{ alibi: Float32Array.of(1, Infinity) }, RangeError, /alibi\[1\] is Infinity, must be finite/],
  ];
  for (const [extra, E, message] of cases) {
    rejects(() => attn.sdpa(x, x, x, { ...o, ...extra }), E, message, JSON.stringify(extra));
  }
  const cache = attn.kvCache({ dk: 4, capacity: 4 });
  rejects(() => cache.append(new Float32Array(4), new Float32Array(4), { rope: { dims: 5 } }), RangeError, /kvCache.append: rope.dims/);
  rejects(() => cache.append(new Float32Array(4), new Float32Array(4), { sinks: 1 }), TypeError, /kvCache.append: unknown option "sinks"/);
  assert.is(cache.length, 0);
});

consistency.run();
