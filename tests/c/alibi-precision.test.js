// ALiBi (options.alibi) far from the keys and at the edges of float32: the
// bias is measured from each row's reference key (c/kernels/keys.h), so a
// query offset of 2^24 or near 2^31 keeps the answer of float64 arithmetic;
// a huge slope weighs the far keys 0 rather than giving NaN; values up to
// FLT_MAX / nk stay finite. Every build, every kernel path (decode, grouped
// decode, fused, steps), the backward and the compact caches.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { NumpyRandom } from '../../web/attention.js';
import { BUILDS, RTOL_REFERENCE, assertClose, loadBuild, runWithRelaxedSimd } from '../helpers.js';

runWithRelaxedSimd(import.meta.url);

// A suite whose tests get every build's instance as ctx.builds.
function withBuilds(name) {
  const s = suite(name);
  s.before(async (ctx) => {
    ctx.builds = {};
    for (const build of BUILDS) ctx.builds[build] = await loadBuild(build);
  });
  return s;
}

// Query offsets past the keys where float32 cannot hold p - j exactly.
const FAR = [2 ** 24, 2 ** 24 + 3, 2 ** 31 - 64];
// lse is the float32 of a number of the size slope * offset: a few of its
// ulp, relative to itself.
const RTOL_LSE = 4e-7;

const randn = (rng, n) => Float32Array.from(rng.randn(n));

/** float64 attention of heads x nq rows with ALiBi from p = i + offset (causal: keys j <= p). */
function reference({ heads, kvHeads = heads, nq, nk, d, offset, causal, slopes }, q, k, v) {
  const out = new Float64Array(heads * nq * d), lse = new Float64Array(heads * nq);
  const scale = 1 / Math.sqrt(d), group = heads / kvHeads;
  for (let h = 0; h < heads; h++) {
    const g = Math.floor(h / group);
    for (let i = 0; i < nq; i++) {
      const p = i + offset, z = [];
      for (let j = 0; j < nk; j++) {
        if (causal && j > p) { z.push(-Infinity); continue; }
        let dot = 0;
        for (let c = 0; c < d; c++) dot += q[(h * nq + i) * d + c] * k[(g * nk + j) * d + c];
        z.push(dot * scale + slopes[h] * (j - p));
      }
      const m = Math.max(...z);
      let l = 0;
      const w = z.map((x) => { const e = Math.exp(x - m); l += e; return e; });
      lse[h * nq + i] = m + Math.log(l);
      for (let j = 0; j < nk; j++) {
        for (let c = 0; c < d; c++) out[(h * nq + i) * d + c] += (w[j] / l) * v[(g * nk + j) * d + c];
      }
    }
  }
  return { out, lse };
}

const far = withBuilds('ALiBi with a query offset far past the keys: float64\'s answer within float32 rounding');

far('random sdpa cases at offsets 2^24 and near 2^31, every path, against float64', ({ builds }) => {
  const rng = new NumpyRandom(2024);
  for (const [heads, kvHeads, nq, nk] of [[2, 2, 1, 40], [4, 1, 1, 33], [2, 2, 3, 17], [2, 1, 8, 300], [2, 2, 12, 64]]) {
    for (const offset of FAR) {
      for (const causal of [true, false]) {
        const d = 8;
        const slopes = Float32Array.from({ length: heads }, () => 0.01 + Math.abs(rng.randn(1)[0]));
        const q = randn(rng, heads * nq * d), k = randn(rng, kvHeads * nk * d), v = randn(rng, kvHeads * nk * d);
        const want = reference({ heads, kvHeads, nq, nk, d, offset, causal, slopes }, q, k, v);
        for (const [build, attn] of Object.entries(builds)) {
          for (const steps of [false, true]) {
            const what = `${build} heads ${heads}/${kvHeads} nq ${nq} nk ${nk} offset ${offset} causal ${causal} steps ${steps}`;
            const r = attn.sdpa(q, k, v, { heads, kvHeads, nq, nk, dk: d, dv: d, alibi: slopes, queryOffset: offset, causal, steps, stats: true });
            assertClose(r.output, want.out, { rtol: RTOL_REFERENCE, what: `${what} output` });
            assertClose(r.lse, want.lse, { rtol: RTOL_LSE, relativeTo: 'each', what: `${what} lse` });
          }
        }
      }
    }
  }
});

far('the backward and the compact caches give at a far offset what they give near the keys (softmax is shift invariant)', ({ builds }) => {
  const rng = new NumpyRandom(2025);
  const heads = 2, nq = 3, nk = 20, d = 8;
  const slopes = Float32Array.of(0.5, 0.125);
  const q = randn(rng, heads * nq * d), k = randn(rng, heads * nk * d), v = randn(rng, heads * nk * d);
  const dout = randn(rng, heads * nq * d);
  const base = { heads, nq, nk, dk: d, dv: d, alibi: slopes, causal: true };
  // Every row at or past the last key sees all keys: the same softmax at offset nk and far away.
  for (const [build, attn] of Object.entries(builds)) {
    const near = attn.sdpaBackward(q, k, v, null, dout, { ...base, queryOffset: nk });
    for (const offset of FAR) {
      // With the forward's output and lse, and without.
      const fwd = attn.sdpa(q, k, v, { ...base, queryOffset: offset, stats: true });
      const g = attn.sdpaBackward(q, k, v, fwd.output, dout, { ...base, queryOffset: offset, lse: fwd.lse });
      const g0 = attn.sdpaBackward(q, k, v, null, dout, { ...base, queryOffset: offset });
      for (const name of ['dq', 'dk', 'dv']) assertClose(g0[name], near[name], { rtol: RTOL_REFERENCE, what: `${build} ${name} offset ${offset} (no lse)` });
      for (const name of ['dq', 'dk', 'dv']) {
        assertClose(g[name], near[name], { rtol: RTOL_REFERENCE, what: `${build} ${name} offset ${offset}` });
      }
    }
    for (const dtype of ['float16', 'int8']) {
      const cache = attn.kvCache({ kvHeads: heads, dk: d, dv: d, capacity: nk, dtype });
      cache.append(k, v);
      const nearOut = cache.attend(q, { heads, alibi: slopes, causal: true, queryOffset: nk });
      for (const offset of FAR) {
        const out = cache.attend(q, { heads, alibi: slopes, causal: true, queryOffset: offset });
        assertClose(out, nearOut, { rtol: RTOL_REFERENCE, what: `${build} ${dtype} cache offset ${offset}` });
      }
      cache.dispose();
    }
  }
});

far.run();

const edges = withBuilds('ALiBi and values at the edges of float32');

edges('a slope of +-3e38 weighs only the row\'s nearest key by its sign, never NaN', ({ builds }) => {
  const rng = new NumpyRandom(7);
  const heads = 2, nq = 5, nk = 9, d = 4;
  const q = randn(rng, heads * nq * d), k = randn(rng, heads * nk * d), v = randn(rng, heads * nk * d);
  for (const [build, attn] of Object.entries(builds)) {
    for (const steps of [false, true]) {
      for (const nqCall of [1, nq]) {
        const r = attn.sdpa(q.subarray(0, heads * nqCall * d), k, v, {
          heads, nq: nqCall, nk, dk: d, dv: d, alibi: Float32Array.of(3e38, -3e38), steps,
        });
        const out = steps ? r.output : r;
        for (let h = 0; h < heads; h++) {
          const j = h === 0 ? nk - 1 : 0; // a positive slope favours the last key, a negative one the first
          for (let i = 0; i < nqCall; i++) {
            const row = Array.from(out.subarray((h * nqCall + i) * d, (h * nqCall + i + 1) * d));
            assert.equal(row, Array.from(v.subarray((h * nk + j) * d, (h * nk + j + 1) * d)), `${build} steps ${steps} nq ${nqCall} head ${h} row ${i}`);
          }
        }
      }
    }
  }
});

edges('values of FLT_MAX / nk everywhere give finite outputs equal to them (attention.h NUMERICS)', ({ builds }) => {
  const rng = new NumpyRandom(8);
  for (const [nq, nk] of [[1, 7], [2, 30], [16, 300]]) {
    const d = 8, big = Math.fround(3.4028234663852886e38 / nk / 1.0001);
    const q = randn(rng, nq * d), k = randn(rng, nk * d), v = new Float32Array(nk * d).fill(big);
    for (const [build, attn] of Object.entries(builds)) {
      for (const steps of [false, true]) {
        const r = attn.sdpa(q, k, v, { nq, nk, dk: d, dv: d, steps });
        const out = steps ? r.output : r;
        for (const x of out) assert.ok(Number.isFinite(x) && Math.abs(x - big) <= 1e-5 * big, `${build} nq ${nq} nk ${nk} steps ${steps}: ${x}`);
      }
    }
  }
});

edges.run();
