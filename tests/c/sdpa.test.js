// The C core against the numpy float64 reference, for the three builds
// (relaxed SIMD, SIMD128, scalar) and both paths (fused output path through
// sdpa, step path through attention()). Node 20 needs a flag for relaxed
// SIMD: without it this file runs itself again with the flag.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import {
  BUILDS, RTOL_REFERENCE, RTOL_RELAXED_VS_SCALAR, RTOL_SIMD_VS_SCALAR, assertClose, caseInputs, generated, loadBuild, readJSON,
  runWithRelaxedSimd,
} from '../helpers.js';

runWithRelaxedSimd(import.meta.url);

const cases = generated(readJSON('./fixtures/attention.json').cases, 57, 'attention.json');

function sdpaOf(attn, c, inputs) {
  return attn.sdpa(inputs.q, inputs.k, inputs.v, {
    batch: c.batch, heads: c.heads, kvHeads: c.kvHeads, nq: c.nq, nk: c.nk, dk: c.dk, dv: c.dv,
    causal: c.causal, mask: inputs.mask, bias: inputs.bias, ...(c.scale === null ? {} : { scale: c.scale }),
  });
}

// The step path, one head at a time through attention({ steps: true }).
function stepsOf(attn, c, inputs) {
  const out = new Float32Array(c.batch * c.heads * c.nq * c.dv);
  const group = c.heads / c.kvHeads;
  for (let b = 0; b < c.batch; b++) {
    for (let h = 0; h < c.heads; h++) {
      const qh = b * c.heads + h, kvh = b * c.kvHeads + Math.floor(h / group);
      const r = attn.attention(
        { rows: c.nq, cols: c.dk, data: inputs.q.subarray(qh * c.nq * c.dk, (qh + 1) * c.nq * c.dk) },
        { rows: c.nk, cols: c.dk, data: inputs.k.subarray(kvh * c.nk * c.dk, (kvh + 1) * c.nk * c.dk) },
        { rows: c.nk, cols: c.dv, data: inputs.v.subarray(kvh * c.nk * c.dv, (kvh + 1) * c.nk * c.dv) },
        {
          steps: true, causal: c.causal,
          ...(inputs.mask ? { mask: { rows: c.nq, cols: c.nk, data: inputs.mask } } : {}),
          ...(inputs.bias ? { bias: { rows: c.nq, cols: c.nk, data: inputs.bias } } : {}),
          ...(c.scale === null ? {} : { scale: c.scale }),
        },
      );
      out.set(r.output.data, qh * c.nq * c.dv);
    }
  }
  return out;
}

for (const build of BUILDS) {
  const s = suite(`fixtures, ${build} build`);
  s.before(async (ctx) => {
    ctx.attn = await loadBuild(build);
    assert.is(ctx.attn.isa, build);
  });
  for (const c of cases) {
    s(`${c.name}: fused output path within ${RTOL_REFERENCE} of numpy`, ({ attn }) => {
      assertClose(sdpaOf(attn, c, caseInputs(c)), c.output, { rtol: RTOL_REFERENCE, what: `${build} ${c.name} output` });
    });
    s(`${c.name}: step path within ${RTOL_REFERENCE} of numpy`, ({ attn }) => {
      assertClose(stepsOf(attn, c, caseInputs(c)), c.output, { rtol: RTOL_REFERENCE, what: `${build} ${c.name} steps output` });
    });
  }
  s.run();
}

const both = suite('SIMD builds against scalar build');
both.before(async (ctx) => {
  ctx.relaxed = await loadBuild('relaxed-simd');
  ctx.simd = await loadBuild('simd128');
  ctx.scalar = await loadBuild('scalar');
});
for (const c of cases) {
  both(`${c.name}: outputs agree within ${RTOL_SIMD_VS_SCALAR} (SIMD128) and ${RTOL_RELAXED_VS_SCALAR} (relaxed)`, ({ relaxed, simd, scalar }) => {
    const inputs = caseInputs(c);
    const fused = sdpaOf(scalar, c, inputs), steps = stepsOf(scalar, c, inputs);
    assertClose(sdpaOf(simd, c, inputs), fused, { rtol: RTOL_SIMD_VS_SCALAR, what: `${c.name} fused` });
    assertClose(stepsOf(simd, c, inputs), steps, { rtol: RTOL_SIMD_VS_SCALAR, what: `${c.name} steps` });
    assertClose(sdpaOf(relaxed, c, inputs), fused, { rtol: RTOL_RELAXED_VS_SCALAR, what: `relaxed ${c.name} fused` });
    assertClose(stepsOf(relaxed, c, inputs), steps, { rtol: RTOL_RELAXED_VS_SCALAR, what: `relaxed ${c.name} steps` });
  });
}
// Fewer than 4 query rows take the decode kernels, whose twins sum in the
// same order: SIMD128 and scalar give the same bits there, not just close
// ones (relaxed SIMD fuses the products, so it is only close, above).
for (const c of generated(cases.filter((x) => x.nq < 4), 11, 'decode cases (nq < 4)')) {
  both(`${c.name}: decode path gives the same bits in SIMD128 and scalar`, ({ simd, scalar }) => {
    const inputs = caseInputs(c);
    const a = sdpaOf(simd, c, inputs), b = sdpaOf(scalar, c, inputs);
    const differ = a.findIndex((x, i) => !Object.is(x, b[i]));
    assert.is(differ, -1, `element ${differ}: SIMD ${a[differ]}, scalar ${b[differ]}`);
  });
}
both.run();

// The decode path (nq < 4) against the fused kernel: the same rows computed
// inside a call of 4 or more rows, where the fused kernel takes them.
const paths = suite('decode path against the fused kernel');
paths.before(async (ctx) => {
  ctx.builds = await Promise.all(BUILDS.map(loadBuild));
});
for (const c of generated(cases.filter((x) => x.nq < 4 && x.batch === 1 && x.heads === 1), 9, 'single-head decode cases')) {
  paths(`${c.name}: rows agree within ${RTOL_SIMD_VS_SCALAR}, every build`, ({ builds }) => {
    const inputs = caseInputs(c);
    // The case's rows, then copies of its last row: enough rows that the
    // fused kernel takes the call (attn__use_decode in c/attention.c sends
    // n_q n_k d_k <= 2048 to the decode kernel too).
    const rows = Math.max(5, Math.floor(2048 / (c.nk * c.dk)) + 1);
    const pad = (data, width) => {
      if (!data) return data;
      const out = new data.constructor(rows * width);
      out.set(data);
      for (let r = c.nq; r < rows; r++) out.set(data.subarray((c.nq - 1) * width, c.nq * width), r * width);
      return out;
    };
    const wide = { ...c, nq: rows };
    const wideInputs = { ...inputs, q: pad(inputs.q, c.dk), mask: pad(inputs.mask, c.nk), bias: pad(inputs.bias, c.nk) };
    for (const attn of builds) {
      const few = sdpaOf(attn, c, inputs);
      const many = sdpaOf(attn, wide, wideInputs).subarray(0, c.nq * c.dv);
      assertClose(few, many, { rtol: RTOL_SIMD_VS_SCALAR, what: `${attn.isa} ${c.name} decode vs fused` });
    }
  });
}
paths.run();

// Grouped-query decoding (nq = 1) runs a kv head's query heads as rows of one
// decode call. Each row's sums run as they would alone, so the output must be
// bit for bit the output of ordinary multi-head attention with K and V
// repeated for every query head.
const grouped = suite('grouped-query decoding against repeated K and V');
grouped.before(async (ctx) => {
  ctx.builds = await Promise.all(BUILDS.map(loadBuild));
});
const groupedCases = [
  { batch: 1, heads: 8, kvHeads: 2, nq: 1, nk: 300, dk: 64, dv: 64 },
  { batch: 2, heads: 6, kvHeads: 2, nq: 1, nk: 37, dk: 17, dv: 35, causal: true, mask: true, bias: true },
  { batch: 1, heads: 5, kvHeads: 1, nq: 1, nk: 9, dk: 4, dv: 3, mask: true, maskedRows: [0] },
  { batch: 1, heads: 4, kvHeads: 2, nq: 2, nk: 20, dk: 8, dv: 20, causal: true },
];
for (const g of groupedCases) {
  const c = { seed: 7, amp: 1, causal: false, mask: false, bias: false, maskedRows: [], ...g };
  const name = `batch=${c.batch} heads=${c.heads} kv=${c.kvHeads} nq=${c.nq} nk=${c.nk}${c.causal ? ' causal' : ''}${c.mask ? ' mask' : ''}${c.bias ? ' bias' : ''}`;
  grouped(`${name}: same bits as repeated K and V, every build`, ({ builds }) => {
    const inputs = caseInputs(c);
    const group = c.heads / c.kvHeads;
    const repeat = (x, d) => {
      const out = new Float32Array(c.batch * c.heads * c.nk * d);
      for (let b = 0; b < c.batch; b++) {
        for (let h = 0; h < c.heads; h++) {
          const from = (b * c.kvHeads + Math.floor(h / group)) * c.nk * d;
          out.set(x.subarray(from, from + c.nk * d), (b * c.heads + h) * c.nk * d);
        }
      }
      return out;
    };
    const mha = { ...c, kvHeads: c.heads };
    const mhaInputs = { ...inputs, k: repeat(inputs.k, c.dk), v: repeat(inputs.v, c.dv) };
    for (const attn of builds) {
      const a = sdpaOf(attn, c, inputs), b = sdpaOf(attn, mha, mhaInputs);
      const differ = a.findIndex((x, i) => !Object.is(x, b[i]));
      assert.is(differ, -1, `element ${differ}: grouped ${a[differ]}, repeated ${b[differ]}`);
    }
  });
}
grouped.run();
