// Inspection and explanations: what a number's derivation says and which
// cells it comes from, why a pair is blocked, the step texts for the
// controls shown (pure, in Node); then in Chromium (playwright-core, the
// strict CSP) the popover beside its cell, its current value, tap to
// inspect on a touch screen, and where it goes and when it closes.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { loadAttention } from '../../web/attention.js';
import { computeExample, normalizeConfig } from '../../web/worked/computation.js';
import { DEFAULT_EXPLANATIONS, blockedReason, defaultExplanation, explain, snapshotTitle } from '../../web/worked/text.js';
import { EXPLORER as E, popover, settled, start } from '../browser.js';
import { assertClose } from '../helpers.js';

// A derivation rebuilds a softmax in float64 from the float32 logits: four
// decimals are what it prints, so it agrees with the kernel to 5e-5.
const ATOL_PRINTED = 5e-5;
// The core's tanh (c/kernels/f32-tanh.h) against Math.tanh: float32 with a
// polynomial exp, a few ulp; 1e-5 relative leaves room and still catches a
// logit that skipped the cap (off by far more).
const RTOL_TANH = 1e-5;

const texts = suite('derivations and blocked pairs');
texts.before(async (ctx) => {
  ctx.attn = await loadAttention();
});

const context = (attn, overrides = {}, mask = null) => {
  const config = normalizeConfig(overrides);
  const example = computeExample(attn, config, {}, mask ?? undefined);
  return { config, example, mask, edits: new Map(), inputs: {}, scaleIsDefault: overrides.scale === undefined };
};

texts('a score comes from row i of Q and row j of K, in its head’s columns', ({ attn }) => {
  const ctx = context(attn, { heads: 2, kvHeads: 1 });
  const r = explain(ctx, 'scores-1', 2, 0);
  assert.equal(r.sources, [{ id: 'Q', rows: [2, 3], cols: [3, 6] }, { id: 'K', rows: [0, 1], cols: [0, 3] }]);
  assert.match(r.text, /^score\(sat → the\) \(head 2\) = q_sat · k_the = /);
  const value = ctx.example.heads[1].scores.get(2, 0).toFixed(3);
  assert.ok(r.text.endsWith(value.replace(/^-0\.000$/, '0.000')), r.text);
});

texts('a weight: its row of logits; the derivation’s value is the kernel’s', ({ attn }) => {
  const ctx = context(attn);
  for (let i = 0; i < 4; i++) {
    for (let j = 0; j < 4; j++) {
      const r = explain(ctx, 'weights-0', i, j);
      assert.equal(r.sources, [{ id: 'scaled-0', rows: [i, i + 1], cols: [0, 4] }]);
      const parts = r.text.split(' = ');
      const quotient = parts.at(-2).split(' / ').map(Number);
      assertClose([quotient[0] / quotient[1]], [ctx.example.heads[0].weights.get(i, j)], { atol: ATOL_PRINTED, what: `(${i}, ${j})` });
    }
  }
});

texts('an output: its row of weights and its column of V; a Q entry: row of X, column of W_Q', ({ attn }) => {
  const ctx = context(attn, { heads: 2, kvHeads: 2 });
  assert.equal(explain(ctx, 'output-1', 3, 2).sources, [{ id: 'weights-1', rows: [3, 4], cols: [0, 4] }, { id: 'V', rows: [0, 4], cols: [5, 6] }]);
  assert.equal(explain(ctx, 'Q', 1, 4).sources, [{ id: 'X', rows: [1, 2], cols: [0, 6] }, { id: 'WQ', rows: [0, 6], cols: [4, 5] }]);
  assert.equal(explain(ctx, 'scaled-0', 1, 2).sources, [{ id: 'scores-0', rows: [1, 2], cols: [2, 3] }]);
});

texts('causal and masked pairs: −∞ logits, weight 0, and why', ({ attn }) => {
  const mask = new Uint8Array(16).fill(1);
  mask[2 * 4 + 0] = 0;
  const ctx = context(attn, { causal: true }, mask);
  assert.is(blockedReason(ctx.config, mask, 4, 0, 1), 'causal: a later token');
  assert.is(blockedReason(ctx.config, mask, 4, 2, 0), 'masked');
  assert.is(blockedReason(ctx.config, mask, 4, 2, 1), '');
  assert.match(explain(ctx, 'scaled-0', 0, 3).text, /= −∞: the pair may not attend \(causal: a later token\)/);
  assert.match(explain(ctx, 'weights-0', 2, 0).text, /= 0: not allowed \(masked\)/);
  assert.is(ctx.example.heads[0].weights.get(2, 0), 0);
});

texts('a window and a query offset block keys by position; a softcapped logit is c·tanh(x/c)', ({ attn }) => {
  const c = normalizeConfig({ window: [1, 0], queryOffset: 1, causal: true });
  // Query i sits at position i + 1: it sees keys i .. i + 1 (1 back, causal).
  assert.is(blockedReason(c, null, 4, 0, 0), '');
  assert.is(blockedReason(c, null, 4, 0, 1), '');
  assert.is(blockedReason(c, null, 4, 2, 1), 'outside the window');
  assert.is(blockedReason(c, null, 4, 0, 2), 'causal: a later token');
  assert.is(blockedReason(c, null, 4, 3, 2), 'outside the window');
  assert.is(blockedReason(normalizeConfig({ window: [-1, 1] }), null, 4, 0, 2), 'outside the window', 'unbounded back, 1 ahead');
  const ctx = context(attn, { softcap: 2, window: [1, 1] });
  const head = ctx.example.heads[0];
  for (let i = 0; i < 4; i++) {
    for (let j = 0; j < 4; j++) {
      const logit = head.logits.get(i, j);
      if (Math.abs(i - j) > 1) {
        assert.is(logit, -Infinity, `(${i}, ${j}) outside the window`);
        assert.match(explain(ctx, 'scaled-0', i, j).text, /−∞: the pair may not attend \(outside the window\)/);
        continue;
      }
      assertClose([logit], [2 * Math.tanh(head.scaled.get(i, j) / 2)], { rtol: RTOL_TANH, relativeTo: 'value', what: `logit (${i}, ${j})` });
      assert.match(explain(ctx, 'scaled-0', i, j).text, /= c·tanh\(x \/ c\) with c = 2 and x = score × scale = /);
    }
  }
  assert.match(snapshotTitle(ctx.config), /no mask, window 1 back, 1 ahead, scale 0\.577 = 1\/√3, softcap 2\)$/);
});


texts.run();

const forControls = suite('explanations for the controls shown');

forControls('no text points to a control the embed hides: "Mask pairs" and "Settings" need full controls, the slider any', () => {
  for (const step of Object.keys(DEFAULT_EXPLANATIONS)) {
    assert.is(defaultExplanation(step, 'full'), DEFAULT_EXPLANATIONS[step]);
    for (const controls of ['minimal', 'none']) {
      const text = defaultExplanation(step, controls);
      assert.not.match(text, /Mask pairs|Settings/, `${step}, ${controls}`);
      if (controls === 'none') assert.not.match(text, /slider/, `${step}, none`);
      assert.match(text, /\.$/, `${step}, ${controls} ends a sentence`);
    }
  }
  assert.match(DEFAULT_EXPLANATIONS.weights, /Mask pairs/, 'the full page still points to it');
  assert.match(defaultExplanation('scaled', 'minimal'), /slider/);
  assert.is(defaultExplanation('no-such-part', 'minimal'), undefined, 'a part without a default text is left alone');
});

forControls.run();

const test = suite('inspection in Chromium');
test.before(async (ctx) => {
  ctx.env = await start();
});
test.after(async ({ env }) => env?.close());

test('the popover sits beside the table, level with the cell, lights its sources, and shows the current value after a mask and an edit', async ({ env }) => {
  const { page, problems } = await env.page({ viewport: { width: 1366, height: 900 } });
  await page.goto(`${env.base}/`);
  await settled(page);
  // The cell mid-window: the popover has room to stay level with it.
  await page.$eval(E, (el) => el.shadowRoot.querySelector('table[data-id="weights-0"] td[data-i="1"][data-j="2"]').scrollIntoView({ block: 'center' }));
  await page.focus(`${E} table[data-id="weights-0"] td[data-i="1"][data-j="2"]`);
  const first = await popover(page);
  assert.not.ok(first.hidden);
  assert.match(first.text, /^weight\(cat → sat\) = .* = 0\.0806$/);
  const geometry = await page.$eval(E, (el) => {
    const cell = el.shadowRoot.querySelector('table[data-id="weights-0"] td[data-i="1"][data-j="2"]').getBoundingClientRect();
    const table = el.shadowRoot.querySelector('figure[data-id="weights-0"]').getBoundingClientRect();
    const pop = el.shadowRoot.querySelector('.popover').getBoundingClientRect();
    const lit = [...el.shadowRoot.querySelectorAll('table[data-id="scaled-0"] td.src')].map((td) => `${td.dataset.i},${td.dataset.j}`);
    return { dx: pop.left - table.right, dy: Math.abs(pop.top - cell.top), lit };
  });
  // Beside the table, level with the cell: the rest of the cell's row stays in view.
  assert.ok(geometry.dx >= 0 && geometry.dx < 40 && geometry.dy < 40, `beside the table: ${JSON.stringify(geometry)}`);
  assert.equal(geometry.lit, ['1,0', '1,1', '1,2', '1,3'], 'the row of logits it comes from');
  // Mask another pair of the row: the weight grows and the popover follows.
  await page.evaluate((sel) => {
    const el = document.querySelector(sel);
    const mask = el.mask;
    mask[1][3] = false;
    el.mask = mask;
  }, E);
  await page.waitForFunction((sel) => document.querySelector(sel).state.weights.get(1, 3) === 0, E);
  const masked = await page.evaluate((sel) => document.querySelector(sel).state.weights.get(1, 2).toFixed(4), E);
  assert.is.not(masked, '0.0806');
  assert.ok((await popover(page)).text.endsWith(`= ${masked}`), `${(await popover(page)).text} ends with ${masked}`);
  // Edit X: the popover of the same weight shows the new value again.
  await page.evaluate((sel) => {
    const el = document.querySelector(sel);
    const X = el.state.X.toArray();
    X[2][0] = 3;
    el.inputs = { X };
  }, E);
  await page.waitForFunction(([sel, old]) => document.querySelector(sel).state.weights.get(1, 2).toFixed(4) !== old, [E, masked]);
  const edited = await page.evaluate((sel) => document.querySelector(sel).state.weights.get(1, 2).toFixed(4), E);
  assert.ok((await popover(page)).text.endsWith(`= ${edited}`), 'after the edit');
  assert.equal(problems, []);
  await page.context().close();
});

test('on a touch screen a tap inspects; masking is a separate mode', async ({ env }) => {
  const { page, problems } = await env.page({ viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true });
  await page.goto(`${env.base}/`);
  await settled(page);
  const cell = `${E} table[data-id="weights-0"] td[data-i="2"][data-j="1"]`;
  await page.tap(cell);
  await page.evaluate(() => new Promise((r) => setTimeout(r, 30)));
  const p = await popover(page);
  assert.not.ok(p.hidden);
  assert.match(p.text, /^weight\(sat → cat\) = /);
  assert.ok(await page.evaluate((sel) => document.querySelector(sel).state.weights.get(2, 1) > 0, E), 'not masked');
  assert.not.match(page.url(), /mask=/);
  // A tap beside the tables closes it.
  await page.tap(`${E} section.lead h2`);
  assert.ok((await popover(page)).hidden, 'closed by a tap elsewhere');
  await page.tap(`${E} button:has-text("Mask pairs")`);
  await page.tap(cell);
  await page.waitForFunction((sel) => document.querySelector(sel).state.weights.get(2, 1) === 0, E);
  // The address is written once changes pause.
  await page.waitForURL(/mask=1111\.1111\.1011\.1111/, { timeout: 2000 });
  assert.equal(problems, []);
  await page.context().close();
});

test('the popover never ends below the window: for a cell at the bottom it moves up, and does not cover the cell', async ({ env }) => {
  const { page, context } = await env.page({ viewport: { width: 1366, height: 900 } });
  await page.goto(`${env.base}/?tokens=${Array.from({ length: 12 }, (_, i) => `w${i}`).join('+')}`);
  await settled(page);
  const cell = await page.evaluateHandle((sel) => document.querySelector(sel).shadowRoot.querySelector('table[data-id="output-0"] td[data-i="11"][data-j="2"]'), E);
  // The cell's bottom 10 px above the window's.
  await page.evaluate((td) => { const r = td.getBoundingClientRect(); window.scrollTo(0, r.bottom + scrollY + 10 - innerHeight); }, cell);
  await page.waitForTimeout(150);
  const box = await cell.boundingBox();
  assert.ok(box.y > 800 && box.y + box.height <= 900, `the cell sits at the window's bottom (y ${box.y})`);
  await page.mouse.move(box.x + 5, box.y + 5);
  await page.waitForTimeout(50);
  const pop = await page.$eval(E, (el) => {
    const p = el.shadowRoot.querySelector('.popover');
    return { hidden: p.hidden, ...p.getBoundingClientRect().toJSON() };
  });
  assert.not.ok(pop.hidden);
  assert.ok(pop.bottom <= 900, `popover ends at ${pop.bottom}, window at 900`);
  const overlaps = pop.left < box.x + box.width && box.x < pop.right && pop.top < box.y + box.height && box.y < pop.bottom;
  assert.not.ok(overlaps, `and does not cover the cell: ${JSON.stringify({ pop, box })}`);
  await context.close();
});

test('a weight’s formula writes minus a negative max as a plus; with positions, no two rows of a word are called equal', async ({ env }) => {
  const { page, problems, context } = await env.page({ reducedMotion: 'reduce' });
  await page.goto(`${env.base}/?causal=1&seed=0`);
  await settled(page);
  // Row 0 under causal attends to itself alone: its max logit is its own, negative with seed 0.
  assert.ok(await page.$eval(E, (el) => el.state.scaled.get(0, 0) < 0), 'row 0 has a negative logit');
  const formulas = [];
  for (let i = 0; i < 4; i++) {
    for (let j = 0; j <= i; j++) {
      await page.hover(`${E} table[data-id="weights-0"] td[data-i="${i}"][data-j="${j}"]`);
      formulas.push((await popover(page)).text);
    }
  }
  assert.ok(formulas.every((t) => !/[−-]\s*[−-]\d/.test(t)), formulas.find((t) => /[−-]\s*[−-]\d/.test(t)));
  assert.match(formulas[0], /exp\(-\d\.\d{3} \+ \d\.\d{3}\)/);
  await page.goto(`${env.base}/?tokens=the+cat+saw+the+dog&embeddings=word&positions=1`);
  await settled(page);
  await page.hover(`${E} table[data-id="X"] td[data-i="3"][data-j="0"]`);
  const text = (await popover(page)).text;
  assert.not.match(text, /gets this row/);
  assert.match(text, /position encoding of position 3/);
  assert.equal(problems, []);
  await context.close();
});

test('focus leaving the numbers for a row label closes the popover of the cell it left', async ({ env }) => {
  const { page, context } = await env.page({ viewport: { width: 1366, height: 900 } });
  await page.goto(`${env.base}/`);
  await settled(page);
  await page.$eval(E, (el) => el.shadowRoot.querySelector('table[data-id="weights-0"] td[data-i="0"][data-j="0"]').focus());
  const shown = () => page.$eval(E, (el) => !el.shadowRoot.querySelector('.popover').hidden);
  assert.ok(await shown(), 'a focused weight shows its derivation');
  await page.keyboard.press('ArrowLeft');
  assert.is(await page.$eval(E, (el) => el.shadowRoot.activeElement.className), 'token');
  assert.not.ok(await shown(), 'the row label has no derivation: the popover of weight(the → the) closes');
  await page.keyboard.press('ArrowRight');
  assert.ok(await shown(), 'and opens again on the cell');
  await context.close();
});

test('focus moved out of the tables by a script, to the toolbar or out of the explorer, closes the popover', async ({ env }) => {
  const { page, context } = await env.page({ viewport: { width: 1366, height: 900 } });
  await page.goto(`${env.base}/`);
  await settled(page);
  const focusCell = () => page.$eval(E, (el) => el.shadowRoot.querySelector('table[data-id="weights-0"] td[data-i="1"][data-j="2"]').focus());
  const shown = () => page.$eval(E, (el) => !el.shadowRoot.querySelector('.popover').hidden);
  await focusCell();
  assert.ok(await shown(), 'a focused weight shows its derivation');
  await page.$eval(E, (el) => el.shadowRoot.querySelector('.toolbar button, .toolbar input').focus());
  assert.not.ok(await shown(), 'focus moved by a script to the toolbar closes it');
  await focusCell();
  assert.ok(await shown());
  await page.evaluate(() => {
    const b = document.createElement('button');
    b.textContent = 'outside';
    document.body.append(b);
    b.focus();
  });
  assert.not.ok(await shown(), 'focus moved to the page outside the explorer closes it');
  await context.close();
});

test.run();
