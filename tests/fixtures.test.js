// The C core against the numpy float64 reference, for both builds and both
// paths (fused output path through sdpa, step path through attention()).
import { suite } from 'uvu';

import { loadAttention } from '../web/attention.js';
import { RTOL_REFERENCE, RTOL_SIMD_VS_SCALAR, assertClose, caseInputs, readJSON } from './helpers.js';

const { cases } = readJSON('./fixtures/attention.json');

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

for (const simd of [true, false]) {
  const build = simd ? 'SIMD' : 'scalar';
  const s = suite(`fixtures, ${build} build`);
  s.before(async (ctx) => {
    ctx.attn = await loadAttention({ simd });
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

const both = suite('SIMD build against scalar build');
both.before(async (ctx) => {
  ctx.simd = await loadAttention({ simd: true });
  ctx.scalar = await loadAttention({ simd: false });
});
for (const c of cases) {
  both(`${c.name}: outputs agree within ${RTOL_SIMD_VS_SCALAR}`, ({ simd, scalar }) => {
    const inputs = caseInputs(c);
    assertClose(sdpaOf(simd, c, inputs), sdpaOf(scalar, c, inputs), { rtol: RTOL_SIMD_VS_SCALAR, what: `${c.name} fused` });
    assertClose(stepsOf(simd, c, inputs), stepsOf(scalar, c, inputs), { rtol: RTOL_SIMD_VS_SCALAR, what: `${c.name} steps` });
  });
}
both.run();
