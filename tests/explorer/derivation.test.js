// Derivations read in place: derive() gives each number its operands (pure,
// in Node); in Chromium the popover draws them as signed bars and never
// covers the row or the column of the number it explains, at 1366 and 390 px.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { loadAttention } from '../../web/attention.js';
import { computeExample, normalizeConfig } from '../../web/worked/computation.js';
import { derive, deriveGradient } from '../../web/worked/derivation.js';
import { Matrix } from '../../web/core/matrix.js';
import { EXPLORER as E, OUTPUT, popover, settled, start } from '../browser.js';

// Terms are float64 products of float32 operands; the kernels sum float32
// with SIMD lanes: the printed sums agree to 1e-3 at these sizes.
const ATOL_SUM = 1e-3;

const model = suite('derive');
model.before(async (ctx) => {
  ctx.attn = await loadAttention();
});
const context = (attn, overrides = {}) => {
  const config = normalizeConfig(overrides);
  return { config, example: computeExample(attn, config, {}), mask: null, scaleIsDefault: overrides.scale === undefined };
};

model('a score is q_i and k_j side by side, their products as terms summing to it', ({ attn }) => {
  const ctx = context(attn);
  const d = derive(ctx, 'scores-0', 1, 2);
  assert.is(d.rows.length, 3);
  const head = ctx.example.heads[0];
  d.rows.forEach((r, p) => {
    assert.is(r.a, head.q.get(1, p));
    assert.is(r.b, head.k.get(2, p));
  });
  const sum = d.rows.reduce((a, r) => a + r.value, 0);
  assert.ok(Math.abs(sum - head.scores.get(1, 2)) < ATOL_SUM);
  assert.is(d.result[1], head.scores.get(1, 2).toFixed(3));
});

model('a logit step by step: score, scale, softcap, and −∞ for a blocked pair', ({ attn }) => {
  const ctx = context(attn, { softcap: 2, causal: true });
  const d = derive(ctx, 'scaled-0', 2, 1);
  assert.equal(d.steps.map(([label]) => label), ['score q·k', '× 1/√3', '2·tanh(x / 2)']);
  assert.is(d.result[1], ctx.example.heads[0].logits.get(2, 1).toFixed(3));
  const blocked = derive(ctx, 'scaled-0', 1, 3);
  assert.is(blocked.result[1], '−∞');
});

model('a weight is exp(z - max) over the row sum, every exp of the row a term; an output the terms w v', ({ attn }) => {
  const ctx = context(attn);
  const d = derive(ctx, 'weights-0', 1, 2);
  assert.is(d.rows.length, 4);
  assert.equal(d.rows.map((r) => r.on), [false, false, true, false]);
  const total = d.rows.reduce((a, r) => a + r.value, 0);
  assert.ok(Math.abs(d.rows[2].value / total - ctx.example.heads[0].weights.get(1, 2)) < 1e-6);
  assert.ok(d.rows.some((r) => r.value === 1), 'the max logit gives exp(0) = 1');
  const o = derive(ctx, 'output-0', 3, 1);
  const sum = o.rows.reduce((a, r) => a + r.value, 0);
  assert.ok(Math.abs(sum - ctx.example.heads[0].output.get(3, 1)) < ATOL_SUM);
  const g = deriveGradient(Matrix.from([[1, 2], [3, 4]]), Matrix.from([[0.5], [-1]]), 1, 0, { tokens: ['a', 'b'] });
  assert.equal(g.rows.map((r) => r.value), [1, -4]);
  assert.is(g.result[1], '-3.0000');
});

model.run();

const test = suite('derivations in Chromium');
test.before(async (ctx) => {
  ctx.env = await start();
});
test.after(async ({ env }) => env?.close());

// The rectangles of the cells in row i and in column j of a table, and the popover's.
const cover = (page, id, i, j) => page.$eval(E, (el, [id, i, j]) => {
  const root = el.shadowRoot;
  const p = root.querySelector('.popover').getBoundingClientRect();
  const hits = [];
  for (const td of root.querySelectorAll(`table[data-id="${id}"] td[data-i]`)) {
    if (Number(td.dataset.i) !== i && Number(td.dataset.j) !== j) continue;
    const r = td.getBoundingClientRect();
    if (r.left < p.right - 1 && p.left < r.right - 1 && r.top < p.bottom - 1 && p.top < r.bottom - 1) hits.push(`${td.dataset.i},${td.dataset.j}`);
  }
  return { hits, bars: root.querySelectorAll('.popover .d-bar').length, bottom: p.bottom, height: innerHeight };
}, [id, i, j]);

for (const width of [1366, 390]) {
  test(`at ${width} px the popover shows the operands as bars and covers neither the row nor the column`, async ({ env }) => {
    const { page, problems, context } = await env.page({ viewport: { width, height: 844 }, reducedMotion: 'reduce' });
    await page.goto(`${env.base}/`);
    await settled(page);
    for (const [id, i, j, bars] of [['scores-0', 1, 2, 3], ['weights-0', 1, 1, 4], ['output-0', 2, 0, 4], ['scaled-0', 0, 1, 0], ['Q', 2, 1, 6]]) {
      const cell = page.locator(`${E} table[data-id="${id}"] td[data-i="${i}"][data-j="${j}"]`);
      await cell.scrollIntoViewIfNeeded();
      await cell.focus();
      await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0))));
      const p = await popover(page);
      assert.not.ok(p.hidden, id);
      const c = await cover(page, id, i, j);
      assert.equal(c.hits, [], `${id} (${i}, ${j}): the popover covers cells of its row or column`);
      assert.is(c.bars, bars, `${id}: bars`);
      assert.ok(c.bottom <= c.height, `${id}: ends at ${c.bottom}, window ${c.height}`);
      if (id === 'weights-0') await page.screenshot({ path: `${OUTPUT}derivation-weight-${width}.png` });
      if (id === 'scores-0') await page.screenshot({ path: `${OUTPUT}derivation-score-${width}.png` });
    }
    assert.equal(problems, []);
    await context.close();
  });
}

test.run();
