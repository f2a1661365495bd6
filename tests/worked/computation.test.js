// The worked example (web/worked/computation.js, the code the explorer and
// the command line share): every value the handbook prints, on both builds.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { loadAttention } from '../../web/attention.js';
import { computeExample, normalizeConfig } from '../../web/worked/computation.js';
import { DIGITS, fixed } from '../../web/worked/format.js';
import { handbookTables } from '../helpers.js';

const expected = handbookTables();

for (const simd of [true, false]) {
  const s = suite(`handbook example, ${simd ? 'SIMD' : 'scalar'} build`);
  s.before(async (ctx) => {
    ctx.attn = await loadAttention({ simd });
    ctx.ex = computeExample(ctx.attn, normalizeConfig());
  });
  s('runs the build it was asked for', ({ attn }) => assert.is(attn.simd, simd));
  for (const step of ['scores', 'scaled', 'weights', 'output']) {
    s(`step ${step}: every value at printed precision`, ({ ex }) => {
      const m = ex.heads[0][step];
      const rows = expected[step];
      assert.is(m.rows, 4);
      assert.is(m.cols, rows[0].cells.length);
      rows.forEach(({ label, cells }, i) => {
        assert.is(ex.tokens[i], label);
        cells.forEach((cell, j) => assert.is(fixed(m.get(i, j), DIGITS[step]), cell, `${step}[${label}][${j}]`));
      });
    });
  }
  s('weight rows sum to 1', ({ ex }) => {
    for (const row of ex.heads[0].weights.toArray()) assert.ok(Math.abs(row.reduce((a, b) => a + b) - 1) < 1e-6);
  });
  s('the fused output path gives the same printed output', ({ attn, ex }) => {
    const { q, k, v } = ex.heads[0];
    const out = attn.attention(q, k, v).output;
    expected.output.forEach(({ cells }, i) => cells.forEach((cell, j) => assert.is(fixed(out.get(i, j), 4), cell)));
  });
  s.run();
}
