// What the kernels do with sdpa's options (mask/bias broadcast, short masks,
// softcap, window, queryOffset, kvLengths, layout, steps with logits, stats
// with lse), against
// the numpy reference in tests/fixtures/options.json, on both builds and both
// output kernels (fused and decode), the step path, and bshd against bhsd.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { NumpyRandom, loadAttention } from '../../web/attention.js';
import { RTOL_REFERENCE, RTOL_SIMD_VS_SCALAR, assertClose, optionCaseInputs as inputsOf, optionCaseOptions as optionsOf, generated, readJSON } from '../helpers.js';

const cases = generated(readJSON('./fixtures/options.json').cases, 38, 'options.json');

// lse is a log of a sum of exps: float32 logits and float32 sums against a
// float64 reference, error relative to the largest |lse| (at least 1).
const ATOL_LSE = 2e-5;

const full = (shape) => [...Array(4 - shape.length).fill(1), ...shape];

// Rows [i0, i1) of a mask or bias in 4-d form; a broadcast row dim stays.
function sliceRows(m, i0, i1) {
  if (!m) return m;
  const s = full(m.shape);
  if (s[2] === 1) return { data: m.data, shape: s };
  const rows = i1 - i0, out = new m.data.constructor(s[0] * s[1] * rows * s[3]);
  for (let bh = 0; bh < s[0] * s[1]; bh++) {
    out.set(m.data.subarray((bh * s[2] + i0) * s[3], (bh * s[2] + i1) * s[3]), bh * rows * s[3]);
  }
  return { data: out, shape: [s[0], s[1], rows, s[3]] };
}

// q rows [i0, i1) of a (batch, heads, nq, d) array.
function qRows(q, c, i0, i1, d) {
  const rows = i1 - i0, out = new Float32Array(c.batch * c.heads * rows * d);
  for (let bh = 0; bh < c.batch * c.heads; bh++) out.set(q.subarray((bh * c.nq + i0) * d, (bh * c.nq + i1) * d), bh * rows * d);
  return out;
}

// The case run one query row at a time (fewer than 4 rows: the decode
// kernel), each row with its own offset, reassembled.
function rowByRow(attn, c, inputs) {
  const out = new Float32Array(c.batch * c.heads * c.nq * c.dv);
  const offsets = Array.isArray(c.queryOffset) ? c.queryOffset : Array(c.batch).fill(c.queryOffset ?? 0);
  for (let i = 0; i < c.nq; i++) {
    const o = optionsOf({ ...c, nq: 1, queryOffset: offsets.map((x) => x + i) },
      { mask: sliceRows(inputs.mask, i, i + 1), bias: sliceRows(inputs.bias, i, i + 1) });
    const r = attn.sdpa(qRows(inputs.q, c, i, i + 1, c.dk), inputs.k, inputs.v, o);
    for (let bh = 0; bh < c.batch * c.heads; bh++) out.set(r.subarray(bh * c.dv, (bh + 1) * c.dv), (bh * c.nq + i) * c.dv);
  }
  return out;
}

// The case with its queries repeated to at least `rows` rows (the fused
// kernel takes 4 or more rows), cut back to the case's rows.
function asFused(attn, c, inputs) {
  const rows = Math.max(5, c.nq, Math.floor(2048 / (c.nk * c.dk)) + 1);
  const pad = (data, width, n) => {
    const out = new data.constructor(c.batch * c.heads * rows * width);
    for (let bh = 0; bh < c.batch * c.heads; bh++) {
      for (let r = 0; r < rows; r++) {
        const from = (bh * n + Math.min(r, n - 1)) * width;
        out.set(data.subarray(from, from + width), (bh * rows + r) * width);
      }
    }
    return out;
  };
  const padMask = (m) => {
    if (!m) return m;
    const s = full(m.shape);
    if (s[2] === 1) return { data: m.data, shape: s };
    const t = { batch: s[0], heads: s[1] };
    return { data: pad(m.data, s[3], s[2]).subarray(0, t.batch * t.heads * rows * s[3]), shape: [s[0], s[1], rows, s[3]] };
  };
  const padQ = (() => {
    const out = new Float32Array(c.batch * c.heads * rows * c.dk);
    for (let bh = 0; bh < c.batch * c.heads; bh++) {
      for (let r = 0; r < rows; r++) {
        const from = (bh * c.nq + Math.min(r, c.nq - 1)) * c.dk;
        out.set(inputs.q.subarray(from, from + c.dk), (bh * rows + r) * c.dk);
      }
    }
    return out;
  })();
  const wide = { ...c, nq: rows };
  const r = attn.sdpa(padQ, inputs.k, inputs.v, optionsOf(wide, { mask: padMask(inputs.mask), bias: padMask(inputs.bias) }));
  const out = new Float32Array(c.batch * c.heads * c.nq * c.dv);
  for (let bh = 0; bh < c.batch * c.heads; bh++) out.set(r.subarray(bh * rows * c.dv, (bh * rows + c.nq) * c.dv), bh * c.nq * c.dv);
  return out;
}

// (batch, h, n, d) <-> (batch, n, h, d)
function transpose(x, batch, h, n, d, toBshd) {
  const out = new Float32Array(x.length);
  for (let b = 0; b < batch; b++) {
    for (let hh = 0; hh < h; hh++) {
      for (let i = 0; i < n; i++) {
        const bhsd = ((b * h + hh) * n + i) * d, bshd = ((b * n + i) * h + hh) * d;
        const [from, to] = toBshd ? [bhsd, bshd] : [bshd, bhsd];
        out.set(x.subarray(from, from + d), to);
      }
    }
  }
  return out;
}

function assertLse(actual, expected, what) {
  let maxAbs = 1;
  for (const e of expected) if (e !== null && Math.abs(e) > maxAbs) maxAbs = Math.abs(e);
  for (let i = 0; i < expected.length; i++) {
    const e = expected[i] ?? -Infinity, a = actual[i];
    if (e === -Infinity ? a !== -Infinity : !(Math.abs(a - e) <= ATOL_LSE * maxAbs)) {
      throw new Error(`${what}[${i}]: got ${a}, expected ${e}`);
    }
  }
}

for (const simd of [true, false]) {
  const build = simd ? 'SIMD' : 'scalar';
  const s = suite(`options, ${build} build`);
  s.before(async (ctx) => {
    ctx.attn = await loadAttention({ simd });
  });
  for (const c of cases) {
    s(`${c.name}: output path and lse within ${RTOL_REFERENCE} of numpy`, ({ attn }) => {
      const inputs = inputsOf(c);
      const r = attn.sdpa(inputs.q, inputs.k, inputs.v, optionsOf(c, inputs, { stats: true }));
      assertClose(r.output, c.output, { rtol: RTOL_REFERENCE, what: `${build} ${c.name} output` });
      assertLse(r.lse, c.lse, `${build} ${c.name} lse`);
      // stats changes nothing about the output.
      const plain = attn.sdpa(inputs.q, inputs.k, inputs.v, optionsOf(c, inputs));
      assert.equal(Array.from(plain), Array.from(r.output));
    });
    s(`${c.name}: step path, logits and lse within ${RTOL_REFERENCE} of numpy`, ({ attn }) => {
      const inputs = inputsOf(c);
      const r = attn.sdpa(inputs.q, inputs.k, inputs.v, optionsOf(c, inputs, { steps: true, stats: true }));
      assertClose(r.output, c.output, { rtol: RTOL_REFERENCE, what: `${build} ${c.name} steps output` });
      assertLse(r.lse, c.lse, `${build} ${c.name} steps lse`);
      // The logits against numpy's (small cases): -Infinity exactly where
      // numpy has it, the rest within the reference tolerance.
      if (c.logits) {
        let maxAbs = 1;
        for (const x of c.logits) if (x !== null && Math.abs(x) > maxAbs) maxAbs = Math.abs(x);
        c.logits.forEach((e, idx) => {
          const a = r.logits[idx];
          if (e === null ? a !== -Infinity : !(Math.abs(a - e) <= RTOL_REFERENCE * maxAbs)) {
            throw new Error(`${build} ${c.name} logits[${idx}]: got ${a}, numpy ${e ?? -Infinity}`);
          }
        });
      }
      // weights = exp(logits - lse): the logits are what entered the softmax.
      for (let row = 0; row < c.batch * c.heads * c.nq; row++) {
        for (let j = 0; j < c.nk; j++) {
          const z = r.logits[row * c.nk + j], w = r.weights[row * c.nk + j];
          const want = z === -Infinity ? 0 : Math.exp(z - r.lse[row]);
          if (!(Math.abs(w - want) <= 1e-5)) throw new Error(`${c.name} row ${row} key ${j}: weight ${w}, exp(logit - lse) ${want}`);
        }
      }
    });
    s(`${c.name}: the other output kernel agrees within ${RTOL_SIMD_VS_SCALAR}`, ({ attn }) => {
      const inputs = inputsOf(c);
      const direct = attn.sdpa(inputs.q, inputs.k, inputs.v, optionsOf(c, inputs));
      const other = c.nq < 4 ? asFused(attn, c, inputs) : rowByRow(attn, c, inputs);
      assertClose(other, direct, { rtol: RTOL_SIMD_VS_SCALAR, what: `${build} ${c.name} decode vs fused` });
    });
    s(`${c.name}: bshd gives the same bits as bhsd`, ({ attn }) => {
      const inputs = inputsOf(c);
      const direct = attn.sdpa(inputs.q, inputs.k, inputs.v, optionsOf(c, inputs));
      const q = transpose(inputs.q, c.batch, c.heads, c.nq, c.dk, true);
      const k = transpose(inputs.k, c.batch, c.kvHeads, c.nk, c.dk, true);
      const v = transpose(inputs.v, c.batch, c.kvHeads, c.nk, c.dv, true);
      const r = attn.sdpa(q, k, v, optionsOf(c, inputs, { layout: 'bshd' }));
      const back = transpose(r, c.batch, c.heads, c.nq, c.dv, false);
      const differ = back.findIndex((x, i) => !Object.is(x, direct[i]));
      assert.is(differ, -1, `element ${differ}: bshd ${back[differ]}, bhsd ${direct[differ]}`);
    });
  }
  s.run();
}

const both = suite('options: SIMD build against scalar build');
both.before(async (ctx) => {
  ctx.simd = await loadAttention({ simd: true });
  ctx.scalar = await loadAttention({ simd: false });
});
for (const c of cases) {
  both(`${c.name}: outputs agree${c.nq < 4 ? ' bit for bit (decode kernel)' : ` within ${RTOL_SIMD_VS_SCALAR}`}`, ({ simd, scalar }) => {
    const inputs = inputsOf(c);
    const a = simd.sdpa(inputs.q, inputs.k, inputs.v, optionsOf(c, inputs));
    const b = scalar.sdpa(inputs.q, inputs.k, inputs.v, optionsOf(c, inputs));
    if (c.nq < 4) {
      const differ = a.findIndex((x, i) => !Object.is(x, b[i]));
      assert.is(differ, -1, `element ${differ}: SIMD ${a[differ]}, scalar ${b[differ]}`);
    } else {
      assertClose(a, b, { rtol: RTOL_SIMD_VS_SCALAR, what: `${c.name}` });
    }
  });
}
both.run();

// What attention.h and the README state about NaN and Infinity in V: a key
// skipped by position (causal, window, kvLengths, a short mask's missing
// columns) is never read, so nothing there reaches the output; a key masked
// by a keep-mask 0 or a -Infinity bias is read with weight 0, and 0 * NaN and
// 0 * Infinity are NaN (as in ONNX and PyTorch).
const nan = suite('NaN and Infinity in V at keys that are not allowed');
nan.before(async (ctx) => {
  ctx.builds = [await loadAttention({ simd: true }), await loadAttention({ simd: false })];
});
nan('skipped keys never reach the output; keys masked by mask 0 or -Infinity bias make it NaN, on every path', ({ builds }) => {
  const [nk, d] = [12, 4];
  const bad = 2; // the key whose value row holds NaN and Infinity
  const rng = new NumpyRandom(31);
  for (const attn of builds) {
    for (const nq of [1, 8]) {
      const q = Float32Array.from(rng.randn(nq * d)), k = Float32Array.from(rng.randn(nk * d)), v = Float32Array.from(rng.randn(nk * d));
      v.set([NaN, Infinity, -Infinity, NaN], bad * d);
      const base = { nq, nk, dk: d, dv: d };
      const keep = new Uint8Array(nq * nk).fill(1), minus = new Float32Array(nq * nk);
      for (let i = 0; i < nq; i++) { keep[i * nk + bad] = 0; minus[i * nk + bad] = -Infinity; }
      const skipped = {
        window: { window: [1, 0], queryOffset: nk - nq }, // keys from nk - nq - 1 on
        kvLengths: { kvLengths: Int32Array.of(bad) },
        'short mask': { mask: { data: new Uint8Array(nq * bad).fill(1), shape: [nq, bad] } },
        causal: { causal: true, queryOffset: bad - nq }, // the last row sees keys < bad... up to bad - 1
      };
      for (const [what, o] of Object.entries(skipped)) {
        for (const steps of [false, true]) {
          const r = attn.sdpa(q, k, v, { ...base, ...o, steps });
          const out = steps ? r.output : r;
          assert.ok(out.every((x) => Number.isFinite(x)), `${what}, nq=${nq}, steps=${steps}: finite`);
        }
      }
      // Causal from row 0: rows before the bad key share a tile with rows that
      // see it; they must still not read it.
      for (const steps of [false, true]) {
        const r = attn.sdpa(q, k, v, { ...base, causal: true, steps });
        const out = steps ? r.output : r;
        assert.ok(out.subarray(0, Math.min(nq, bad) * d).every(Number.isFinite), `causal rows before key ${bad}, nq=${nq}, steps=${steps}: finite`);
      }
      for (const [what, o] of Object.entries({ 'mask 0': { mask: keep }, '-Infinity bias': { bias: minus } })) {
        for (const steps of [false, true]) {
          const r = attn.sdpa(q, k, v, { ...base, ...o, steps });
          const out = steps ? r.output : r;
          assert.ok(out.every((x) => Number.isNaN(x)), `${what}, nq=${nq}, steps=${steps}: NaN (0 * NaN)`);
          if (steps) assert.ok(Array.from({ length: nq }, (_, i) => r.weights[i * nk + bad]).every((w) => w === 0), `${what}: weight 0`);
        }
      }
    }
    // The KV cache's one-token path (K panels) does the same.
    const cache = attn.kvCache({ dk: d, capacity: nk });
    const k1 = Float32Array.from(rng.randn(nk * d)), v1 = Float32Array.from(rng.randn(nk * d));
    v1.set([NaN, Infinity, -Infinity, NaN], bad * d);
    cache.append(k1, v1);
    const q1 = Float32Array.from(rng.randn(d));
    assert.ok(cache.attend(q1, { window: [nk - bad - 2, 0] }).every(Number.isFinite), 'cache, window: finite');
    const keep1 = new Uint8Array(nk).fill(1);
    keep1[bad] = 0;
    assert.ok(cache.attend(q1, { mask: keep1 }).every(Number.isNaN), 'cache, mask 0: NaN');
    cache.dispose();
  }
});
nan.run();
