// The explorer's `rope` setting: read from its attribute (theta, or nothing
// for 10000), q and k turned by the library's RoPE, the weights the
// library's sdpa gives with the same rope option, an odd d_k turning all
// but its last dimension; then in Chromium the tables of q and k after
// RoPE, the texts that name it and the property.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { loadAttention } from '../../web/attention.js';
import { computeExample, normalizeConfig } from '../../web/worked/computation.js';
import { readSettings } from '../../web/worked/settings.js';
import { explain } from '../../web/worked/text.js';
import { derive } from '../../web/worked/derivation.js';
import { Trainer, presetTarget } from '../../web/worked/train.js';
import { EXPLORER as E, cellTexts, popover, settled, start } from '../browser.js';
import { rejects } from '../helpers.js';

// The turned q and k against a float64 rotation of the same float32 Q and K:
// cos and sin are rounded to float32 and each product once (c/attention.h).
const TURN_ATOL = 1e-5;
// Scores summed in float64 from the turned q and k against the kernel's float32 sums.
const SCORE_ATOL = 1e-5;

const read = (attrs) => readSettings((a) => attrs[a] ?? null).config;

const unit = suite('rope: the setting and the numbers');
unit.before(async (ctx) => {
  ctx.attn = await loadAttention();
});

unit('rope alone is theta 10000; a number is theta; "false" and "0" are off; an odd d_k turns d_k - 1 dimensions', () => {
  assert.equal(read({ rope: '' }).rope, { theta: 10000, dims: 2, interleaved: false });
  assert.equal(read({ rope: '500', dk: '4' }).rope, { theta: 500, dims: 4, interleaved: false });
  assert.equal(read({ rope: '10000', dk: '7' }).rope.dims, 6);
  assert.is(read({ rope: 'false' }).rope, null);
  assert.is(read({ rope: '0' }).rope, null);
  assert.is(read({}).rope, null);
  rejects(() => read({ rope: 'fast' }), RangeError, /^rope expects nothing \(theta 10000\) or RoPE's theta/);
  rejects(() => read({ rope: '0.5' }), RangeError, /^rope\.theta must be >= 1/);
  rejects(() => read({ rope: '', dk: '1' }), RangeError, /^rope turns pairs of dimensions: it needs dk of 2 or more, got 1$/);
});

for (const [name, settings] of [
  ['the handbook (d_k 3, odd)', { rope: true }],
  ['d_k 4, theta 500, causal, a query offset', { rope: 500, dk: 4, causal: true, queryOffset: 2, tokens: ['a', 'b', 'c', 'd', 'e'] }],
  ['4 heads over 2 kv heads, d_k 5, a negative offset', { rope: true, dk: 5, heads: 4, kvHeads: 2, queryOffset: -1, tokens: ['the', 'cat', 'sat', 'on', 'the', 'mat'] }],
]) {
  unit(`${name}: the weights are the library's sdpa with the same rope option; q and k after RoPE are the turned rows`, ({ attn }) => {
    const config = normalizeConfig(settings);
    const ex = computeExample(attn, config);
    const { dk, heads, kvHeads, rope, queryOffset } = config;
    const n = config.tokens.length;
    // (1, heads, n, d) from the (n, heads * d) projections.
    const bhsd = (m, h, d) => {
      const out = new Float32Array(h * n * d);
      for (let g = 0; g < h; g++) for (let i = 0; i < n; i++) for (let c = 0; c < d; c++) out[(g * n + i) * d + c] = m.get(i, g * d + c);
      return out;
    };
    const r = attn.sdpa(bhsd(ex.Q, heads, dk), bhsd(ex.K, kvHeads, dk), bhsd(ex.V, kvHeads, config.dv), {
      batch: 1, heads, kvHeads, nq: n, nk: n, dk, dv: config.dv, rope, causal: config.causal, queryOffset, steps: true,
    });
    ex.heads.forEach((head, h) => assert.equal(Array.from(head.weights.data), Array.from(r.weights.subarray(h * n * n, (h + 1) * n * n)), `head ${h + 1}`));
    // The turn in float64: rotate_half pairs (c, c + dims/2), angle p theta^(-2c/dims).
    const half = rope.dims / 2;
    const check = (from, turned, offset) => {
      for (let i = 0; i < n; i++) {
        for (let col = 0; col < from.cols; col++) {
          const c = col % dk, base = col - c, p = i + offset;
          let want = from.get(i, col);
          if (c < rope.dims) {
            const angle = p * rope.theta ** (-2 * (c % half) / rope.dims);
            const other = from.get(i, base + (c < half ? c + half : c - half));
            want = c < half ? want * Math.cos(angle) - other * Math.sin(angle) : want * Math.cos(angle) + other * Math.sin(angle);
          }
          assert.ok(Math.abs(turned.get(i, col) - want) <= TURN_ATOL, `(${i}, ${col}): ${turned.get(i, col)} vs ${want}`);
        }
      }
    };
    check(ex.Q, ex.QR, queryOffset);
    check(ex.K, ex.KR, 0);
    // With d_k odd the last dimension is Q's own.
    if (dk % 2) assert.is(ex.QR.get(1, dk - 1), ex.Q.get(1, dk - 1));
    // Each score is the dot product of the turned q and k the tables show.
    ex.heads.forEach((head) => {
      for (let i = 0; i < n; i++) {
        for (let j = 0; j < n; j++) {
          let s = 0;
          for (let c = 0; c < dk; c++) s += head.q.get(i, c) * head.k.get(j, c);
          assert.ok(Math.abs(s - head.scores.get(i, j)) <= SCORE_ATOL, `score (${i}, ${j}): ${s} vs ${head.scores.get(i, j)}`);
        }
      }
    });
  });
}

unit('the derivations stay true: a turned entry is its own times cos and its pair’s times ∓sin; scores name q and k after RoPE', ({ attn }) => {
  const config = normalizeConfig({ rope: true, queryOffset: 1 });
  const ex = computeExample(attn, config);
  const ctx = { config, example: ex, mask: null, edits: new Map(), inputs: {}, scaleIsDefault: true };
  const model = derive(ctx, 'QR', 2, 0);
  const sum = model.rows.reduce((a, r) => a + r.value, 0);
  assert.ok(Math.abs(sum - ex.QR.get(2, 0)) <= TURN_ATOL, `${sum} vs ${ex.QR.get(2, 0)}`);
  assert.match(model.head, /^turned at position 3: angle 3\.0000 rad$/);
  assert.match(explain(ctx, 'QR', 2, 0).text, /^q after RoPE\[sat\]\[0\] = .*·cos\(3\.0000\) − .*·sin\(3\.0000\) = -?\d\.\d{4}: dimensions 0 and 1 of Q\[sat\] turned/);
  assert.match(explain(ctx, 'QR', 2, 2).text, /d_k = 3 is odd, so dimension 2 is not turned/);
  const score = explain(ctx, 'scores-0', 1, 2);
  assert.match(score.text, /^score\(cat → sat\) = q_cat after RoPE · k_sat after RoPE = /);
  assert.equal(score.sources.map((s) => s.id), ['QR', 'KR']);
});

unit('the Train part learns with RoPE on: its weights are the explorer’s', ({ attn }) => {
  const config = normalizeConfig({ rope: true, dk: 4, causal: true });
  const ex = computeExample(attn, config);
  const trainer = new Trainer(attn, { x: ex.X, wq: ex.WQ, wk: ex.WK, target: presetTarget('previous-token', config.tokens, { causal: true }), causal: true, rope: config.rope });
  const w = trainer.evaluate().weights;
  ex.heads[0].weights.data.forEach((x, k) => assert.ok(Math.abs(x - w.data[k]) <= 1e-6, `${k}: ${x} vs ${w.data[k]}`));
});

unit.run();

// ---- in Chromium -------------------------------------------------------------------

const test = suite('rope in Chromium');
test.before(async (ctx) => {
  ctx.env = await start();
});
test.after(async ({ env }) => env?.close());

test('<attention-explorer rope>: the weights are sdpa’s with rope, the tables show q and k after RoPE, the texts name it', async ({ env }) => {
  const { page, problems, context } = await env.page();
  await page.goto(`${env.base}/`);
  await settled(page);
  const before = await cellTexts(page, 'weights-0');
  await page.evaluate((sel) => document.querySelector(sel).setAttribute('rope', ''), E);
  await page.waitForFunction((sel) => document.querySelector(sel).shadowRoot.querySelector('table[data-id="QR"]'), E);
  await settled(page);
  assert.not.equal(await cellTexts(page, 'weights-0'), before, 'turning q and k changes the weights');
  // The same numbers from the library in the page, with the same rope option.
  const same = await page.evaluate(async (sel) => {
    const { loadAttention } = await import('/web/attention.js');
    const attn = await loadAttention();
    const el = document.querySelector(sel);
    const s = el.state;
    const r = attn.sdpa(s.Q.data, s.K.data, s.V.data, { batch: 1, heads: 1, kvHeads: 1, nq: 4, nk: 4, dk: 3, dv: 3, rope: { theta: 10000, dims: 2 }, steps: true });
    return { equal: Array.from(r.weights).every((w, k) => w === s.weights.data[k]), rope: el.rope, config: el.config.rope };
  }, E);
  assert.ok(same.equal, 'the explorer’s weights are sdpa’s bit for bit');
  assert.is(same.rope, 10000);
  assert.equal(same.config, { theta: 10000, dims: 2, interleaved: false });
  const texts = await page.$eval(E, (el) => {
    const r = el.shadowRoot;
    const text = (step) => r.querySelector(`section.step-${step} .explanation`)?.textContent ?? '';
    return {
      titles: [...r.querySelectorAll('section.step-projections figure.matrix figcaption')].map((f) => f.textContent),
      projections: text('projections'), scores: text('scores'), heading: r.querySelector('section.step-projections h2').textContent,
    };
  });
  assert.ok(texts.titles.some((t) => /^q after RoPE/.test(t)) && texts.titles.some((t) => /^k after RoPE/.test(t)), texts.titles.join(' | '));
  assert.match(texts.heading, /q and k after RoPE/);
  assert.match(texts.projections, /RoPE is on: q after RoPE and k after RoPE are q and k with each pair of dimensions turned .* \(theta 10000; the first 2 dimensions in one pair \(0, 1\); d_k = 3 is odd and RoPE turns pairs, so dimension 2 is not turned; one pair turns 1 radian a position whatever theta is, which sets the slower pairs from d_k = 4\)\.$/);
  assert.match(texts.scores, /dot products of q after RoPE with k after RoPE/);
  // A score's popover names the turned q and k and lights their rows.
  await page.locator(`${E} table[data-id="scores-0"] td[data-i="1"][data-j="2"]`).hover();
  assert.match((await popover(page)).text, /^score\(cat → sat\) = q_cat after RoPE · k_sat after RoPE = /);
  const lit = await page.$$eval(`${E} table[data-id="QR"] td.src, ${E} table[data-id="KR"] td.src`, (tds) => tds.length);
  assert.is(lit, 6, 'the three numbers of q_cat and of k_sat after RoPE are lit');
  await page.locator(`${E} table[data-id="QR"] td[data-i="2"][data-j="2"]`).hover();
  assert.match((await popover(page)).text, /dimension 2 is not turned/);
  // The property: a theta, then off.
  await page.evaluate((sel) => { document.querySelector(sel).rope = 500; }, E);
  await page.waitForFunction((sel) => document.querySelector(sel).config.rope?.theta === 500, E);
  assert.is(await page.evaluate((sel) => document.querySelector(sel).getAttribute('rope'), E), '500');
  await page.evaluate((sel) => { document.querySelector(sel).rope = false; }, E);
  await page.waitForFunction((sel) => !document.querySelector(sel).shadowRoot.querySelector('table[data-id="QR"]'), E);
  await settled(page);
  assert.equal(await cellTexts(page, 'weights-0'), before);
  assert.equal(problems, []);
  await context.close();
});

test.run();
