// "Play softmax" plays the head the learner is looking at, in Chromium: the
// head picked in a multi-head example (every head shown, in step, when none
// is picked) and the chosen head of the model view; under
// prefers-reduced-motion nothing moves on its own.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { EXPLORER as E, cellTexts, openWith, start } from '../browser.js';

async function open(env, attrs, { model = false } = {}) {
  const { page, problems, context } = await openWith(env, attrs, { reducedMotion: 'reduce' });
  await page.waitForFunction(([sel, m]) => {
    const el = document.querySelector(sel);
    return el?.state && el.shadowRoot.querySelector('.softmax-play-button') && (!m || el.config.dk === 16);
  }, [E, model], { timeout: 60_000 });
  await frame(page);
  return { page, problems, context };
}
const frame = (page) => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 30))));
const press = (page) => page.locator(`${E} .softmax-play-button`).click();
const status = (page) => page.$eval(E, (el) => el.shadowRoot.querySelector('.softmax-status').textContent);

// Row `row`'s exp(z - max) of a head's logits, as the play writes them (4 decimals).
const expsOf = (page, head, row) => page.evaluate(([sel, h, i]) => {
  const s = document.querySelector(sel).state;
  const m = Array.isArray(s.scaled) ? s.scaled[h] : s.scaled;
  const w = Array.isArray(s.weights) ? s.weights[h] : s.weights;
  // Pairs that may not attend have weight 0 and exp(−∞) = 0.
  const z = Array.from({ length: m.cols }, (_, j) => (w.data[i * w.cols + j] === 0 ? -Infinity : m.data[i * m.cols + j]));
  const max = Math.max(...z);
  return z.map((x) => (x === -Infinity ? 0 : Math.exp(x - max)).toFixed(4));
}, [E, head, row]);

const test = suite('Play softmax plays the head in view');
test.before(async (ctx) => {
  ctx.env = await start();
});
test.after(async ({ env }) => env?.close());

test('two heads, head 2 picked: head 2’s table plays its own exps; head 1 is untouched', async ({ env }) => {
  const { page, problems, context } = await open(env, 'heads="2" tokens="the cat sat on the mat"');
  await page.locator(`${E} select[aria-label="head shown in the tables"]`).selectOption('1');
  await frame(page);
  const head1 = await cellTexts(page, 'weights-0');
  await press(page);
  const played = await cellTexts(page, 'weights-1');
  assert.equal(played[0], await expsOf(page, 1, 0));
  assert.ok(await page.$eval(E, (el) => el.shadowRoot.querySelector('table[data-id="weights-1"] tbody tr').classList.contains('playing')));
  assert.equal(await cellTexts(page, 'weights-0'), head1);
  assert.match(await status(page), /^the: exp\(z − max\) for each key \(max -?\d\.\d{3} \(head 2\)/);
  // Nothing moves on its own under reduced motion: the same phase a while later.
  await page.waitForTimeout(1500);
  assert.equal((await cellTexts(page, 'weights-1'))[0], played[0]);
  // Another head picked mid-play ends the play: its phases were head 2's.
  await page.locator(`${E} select[aria-label="head shown in the tables"]`).selectOption('0');
  await press(page);
  assert.is(await page.$eval(E, (el) => el.shadowRoot.querySelector('.softmax-play-button').getAttribute('aria-pressed')), 'false');
  assert.equal(problems, []);
  await context.close();
});

test('two heads, all shown: both tables play in step, the status gives each head’s numbers', async ({ env }) => {
  const { page, problems, context } = await open(env, 'heads="2" tokens="the cat sat on the mat"');
  await press(page);
  await press(page); // row 0 divided
  await press(page); // row 1's exps
  assert.equal((await cellTexts(page, 'weights-0'))[1], await expsOf(page, 0, 1));
  assert.equal((await cellTexts(page, 'weights-1'))[1], await expsOf(page, 1, 1));
  assert.match(await status(page), /^cat: exp\(z − max\) for each key \(max -?\d\.\d{3} \(head 1\), -?\d\.\d{3} \(head 2\), so .*\); they sum to \d\.\d{4} \(head 1\), \d\.\d{4} \(head 2\)$/);
  assert.equal(problems, []);
  await context.close();
});

test('the model view plays the chosen head, and each choice plays its own', async ({ env }) => {
  const sentence = 'the cat sat on the mat the cat sat on the mat';
  for (const head of ['1 2', '2 3']) {
    const { page, problems, context } = await open(env, `model="induction" model-head="${head}" tokens="${sentence}" show="model lines weights"`, { model: true });
    // Row 6 is the repeat's first word: press through rows 0 to 5 (two phases each) to its exps.
    for (let k = 0; k < 13; k++) await press(page);
    const played = (await cellTexts(page, 'weights-0'))[6];
    const expected = await expsOf(page, 0, 6);
    assert.equal(played, expected, `model-head ${head}`);
    // The chosen head's own weights, from the model (not the explorer's): their row 6 is these exps over their sum.
    const fromModel = await page.evaluate(async ([sel, h]) => {
      const { loadModel } = await import('/web/model.js');
      const m = await loadModel('induction');
      const [l, k] = h.split(' ').map((x) => Number(x) - 1);
      const w = m.forward(document.querySelector(sel).config.tokens).attentions[l][k];
      return Array.from(w.data.subarray(6 * w.cols, 7 * w.cols));
    }, [E, head]);
    const sum = expected.reduce((a, x) => a + Number(x), 0);
    expected.forEach((x, j) => assert.ok(Math.abs(Number(x) / sum - fromModel[j]) < 2e-3, `${head}: key ${j} ${Number(x) / sum} vs ${fromModel[j]}`));
    assert.match(await status(page), /^the: exp\(z − max\)/);
    assert.equal(problems, []);
    await context.close();
  }
});

test.run();
