// The explorer's model view: outside attention checked and labelled (pure,
// in Node); then in Chromium the shipped model's layers x heads grid with its
// labels, choosing a head by keyboard, Repeat making the guesses right and
// the induction head look after the earlier occurrence, training from
// scratch, attention from the property and from attentions-src, errors that
// name the field, and no horizontal overflow at 390 px. Screenshots of a
// fresh and of the trained model, laptop and phone width, go to tests/output/.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { Matrix } from '../../web/core/matrix.js';
import { headLabel, normalizeAttentions, patternScores } from '../../web/explorer/attentions.js';
import { parseModelHead } from '../../web/explorer/model-source.js';
import { EXPLORER as E, OUTPUT, cellTexts, openWith, start } from '../browser.js';

// The shipped model's accuracy on the repeat (tests/model/induction.test.js
// holds it to the same bar).
const REPEAT_ACCURACY = 0.95;
const SENTENCE = 'the cat sat on the mat with my friend';

const eye = (n) => Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (i === j ? 1 : 0)));
const prev = (n) => Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (j === Math.max(0, i - 1) ? 1 : 0)));

const unit = suite('outside attention, checked and labelled');

unit('nested arrays and a flat Float32Array with a shape give the same matrices', () => {
  const tokens = ['a', 'b', 'c'];
  const nested = normalizeAttentions({ tokens, attention: [[eye(3), prev(3)]] });
  assert.is(nested.layers, 1);
  assert.is(nested.heads, 2);
  assert.equal(Array.from(nested.attention[0][1].data), prev(3).flat());
  const flat = normalizeAttentions({ tokens, attention: Float32Array.from([...eye(3).flat(), ...prev(3).flat()]), shape: [1, 1, 2, 3, 3] });
  assert.equal(Array.from(flat.attention[0][1].data), Array.from(nested.attention[0][1].data));
  const matrices = normalizeAttentions({ tokens, attention: [[new Matrix(3, 3, Float32Array.from(eye(3).flat()))]] });
  assert.equal(Array.from(matrices.attention[0][0].data), eye(3).flat());
});

for (const [value, message] of [
  [[1, 2], /^attentions must be an object \{ tokens, attention \}/],
  [{ tokens: 'a b', attention: [] }, /^attentions\.tokens must be a non-empty array of strings/],
  [{ tokens: ['a', 'b'], attention: [[eye(3)]] }, /^attentions\.attention\[0\]\[0\] must be an \(2, 2\) array/],
  [{ tokens: ['a', 'b'], attention: [[eye(2)], [eye(2), eye(2)]] }, /^attentions\.attention\[1\] has 2 heads, layer 0 has 1/],
  [{ tokens: ['a', 'b'], attention: [[[[0.5, 0.2], [0, 1]]]] }, /^attentions\.attention\[0\]\[0\]\[0\] sums to 0\.7000/],
  [{ tokens: ['a', 'b'], attention: [[[[3, -2], [0, 1]]]] }, /^attentions\.attention\[0\]\[0\]\[0\]\[0\] is 3: attention weights are in \[0, 1\]/],
  [{ tokens: ['a', 'b'], attention: new Float32Array(8), shape: [2, 2, 2] }, /^attentions\.shape must be \[layers, heads, n, n\]/],
  [{ tokens: ['a', 'b'], attention: new Float32Array(7), shape: [1, 2, 2, 2] }, /^attentions\.attention has 7 numbers; shape \[1,2,2,2\] needs 8/],
]) {
  unit(`refuses ${JSON.stringify(value).slice(0, 70)} naming the field`, () => {
    assert.throws(() => normalizeAttentions(value), (err) => (err instanceof TypeError || err instanceof RangeError) && message.test(err.message));
  });
}

unit('labels name the strongest kind with its score, "mixed" when none is clear', () => {
  assert.is(headLabel(patternScores(new Matrix(4, 4, Float32Array.from(prev(4).flat())))).text, 'previous token 1.00');
  assert.is(headLabel({ previousToken: 0.1, induction: 0.91, firstToken: 0.02 }).text, 'induction 0.91');
  const weak = headLabel({ previousToken: 0.1, induction: 0.05, firstToken: 0.12 });
  assert.is(weak.text, 'mixed');
  assert.is(weak.detail, 'mixed (strongest: first token 0.12)');
});

unit('model-head reads "layer head" from 1 and names itself when out of range', () => {
  assert.equal(parseModelHead('2 3', 2, 4), { layer: 1, head: 2 });
  assert.throws(() => parseModelHead('3 1', 2, 4), /^model-head expects "layer head", layer 1 to 2 and head 1 to 4; got "3 1"$/);
});

unit.run();

// ---- in Chromium -------------------------------------------------------------------

const root = (page) => page.locator(E);
async function open(env, attrs, viewport = { width: 1280, height: 900 }) {
  const { page, problems } = await openWith(env, attrs, { viewport });
  await page.waitForFunction((sel) => document.querySelector(sel)?.shadowRoot.querySelector('.model-part:not([hidden]) button.thumb'), E, { timeout: 60_000 });
  await frame(page);
  return { page, problems };
}
const frame = (page) => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 30))));
// What a screen reader says of each head beyond its visible name: its description.
const labels = (page) => page.$$eval(`${E} button.thumb`, (bs) => bs.map((b) => b.getRootNode().getElementById(b.getAttribute('aria-describedby'))?.textContent ?? null));
const guesses = (page) => page.$$eval(`${E} .guess-table tbody tr`, (rows) => rows.map((r) => r.className));

const test = suite('model view in Chromium');
test.before(async (ctx) => {
  ctx.env = await start();
});
test.after(async ({ env }) => env?.close());

test('the shipped model: a 2 x 4 grid labelled with kinds and scores, the induction head chosen', async ({ env }) => {
  const { page, problems } = await open(env, `model="induction" tokens="${SENTENCE}" show="model lines weights"`);
  const all = await labels(page);
  assert.is(all.length, 8);
  assert.match(all[0], /^layer 1, head 1: /);
  assert.ok(all.slice(0, 4).some((l) => /previous token 0\.[6-9]/.test(l)), all.join(' | '));
  assert.ok(all.slice(4).every((l) => /induction 0\.[6-9]/.test(l)), all.join(' | '));
  const chosen = await page.$$eval(`${E} button.thumb[aria-selected="true"]`, (bs) => bs.map((b) => `${b.dataset.layer}:${b.dataset.head}`));
  assert.is(chosen.length, 1);
  assert.match(chosen[0], /^1:/, 'a layer-2 head is chosen first');
  // The chosen head's numbers are the explorer's: d_model 64, d_k 16, causal.
  const config = await page.evaluate((sel) => document.querySelector(sel).config, E);
  assert.equal([config.dModel, config.dk, config.heads, config.causal], [64, 16, 1, true]);
  await root(page).screenshot({ path: `${OUTPUT}model-trained-laptop.png` });
  assert.equal(problems, []);
});

test('arrow keys choose a head: the weights table and model-head follow, the choice is announced', async ({ env }) => {
  const { page, problems } = await open(env, `model="induction" model-head="1 1" tokens="${SENTENCE}" show="model weights inputs"`);
  const before = await cellTexts(page, 'weights-0');
  await page.locator(`${E} button.thumb[data-layer="0"][data-head="0"]`).focus();
  await page.keyboard.press('ArrowRight');
  await page.waitForFunction((sel) => document.querySelector(sel).getAttribute('model-head') === '1 2', E);
  await frame(page);
  const after = await cellTexts(page, 'weights-0');
  assert.not.equal(after, before);
  assert.is(await page.evaluate((sel) => document.querySelector(sel).shadowRoot.activeElement?.dataset.head, E), '1');
  assert.match(await page.$eval(`${E}`, (el) => el.shadowRoot.querySelector('.model-part [aria-live]').textContent), /^layer 1, head 2: /);
  await page.keyboard.press('ArrowDown');
  await page.waitForFunction((sel) => document.querySelector(sel).getAttribute('model-head') === '2 2', E);
  // The input X is the residual stream entering layer 2: not the embeddings layer 1 sees.
  assert.is((await cellTexts(page, 'X'))[0].length, 64);
  await page.locator(`${E} table[data-id="X"] td[data-i="1"][data-j="0"]`).hover();
  assert.match(await page.$eval(E, (el) => el.shadowRoot.querySelector('.popover').textContent), /^X\[token “cat”, dimension 0\] = -?\d\.\d{4}: the residual stream entering layer 2: /);
  // The head's scores come from its q and k, as in the explorer's own example.
  await page.locator(`${E} table[data-id="weights-0"] td[data-i="2"][data-j="1"]`).hover();
  assert.match(await page.$eval(E, (el) => el.shadowRoot.querySelector('.popover').textContent), /^weight\(sat → cat\) = exp\(/);
  assert.equal(problems, []);
});

test('Repeat: the guesses on the repeat are right and the induction head looks after the earlier occurrence', async ({ env }) => {
  const { page, problems } = await open(env, `model="induction" tokens="${SENTENCE}" show="model lines weights"`);
  const n = SENTENCE.split(' ').length;
  const first = await guesses(page);
  assert.ok(first.filter((c) => c === 'right').length < n / 2, 'before the repeat most next words are guesses');
  await root(page).locator('button.repeat').click();
  await page.waitForFunction(([sel, m]) => document.querySelector(sel).shadowRoot.querySelectorAll('.guess-table tbody tr').length === m, [E, 2 * n]);
  await frame(page);
  const rows = await guesses(page);
  // Position n is the repeat's first word: its successor is decided by the earlier occurrence.
  const repeat = rows.slice(n, 2 * n - 1);
  const right = repeat.filter((c) => c === 'right').length / repeat.length;
  assert.ok(right >= REPEAT_ACCURACY, `right on the repeat: ${rows.join(' ')}`);
  // The chosen (induction) head: each word of the repeat looks most at the word after its first occurrence.
  const argmax = await page.evaluate((sel) => {
    const w = document.querySelector(sel).state.weights;
    return Array.from({ length: w.rows }, (_, i) => {
      let best = 0;
      for (let j = 1; j < w.cols; j++) if (w.data[i * w.cols + j] > w.data[i * w.cols + best]) best = j;
      return best;
    });
  }, E);
  const words = SENTENCE.split(' ');
  let hits = 0, count = 0;
  for (let i = n; i < 2 * n; i++) {
    const earlier = words.indexOf(words[i - n]); // "the" appears twice: its first occurrence
    count++;
    if (argmax[i] === earlier + 1 || argmax[i] === i - n + 1) hits++;
  }
  assert.ok(hits / count >= 0.8, `induction head argmax ${argmax.join(',')}`);
  await root(page).screenshot({ path: `${OUTPUT}model-repeat-laptop.png` });
  assert.equal(problems, []);
});

test('train from scratch: a fresh model in a worker, steps, a loss curve with axes and numbers', async ({ env }) => {
  const { page, problems } = await open(env, `model="induction" tokens="${SENTENCE} ${SENTENCE}" show="model lines"`);
  await root(page).locator('.model-train input[aria-label="seed of the fresh model"]').fill('3');
  await root(page).locator('.model-train button:text("Train from scratch")').click();
  await page.waitForFunction((sel) => /^step 0\b/.test(document.querySelector(sel).shadowRoot.querySelector('.model-status').textContent), E, { timeout: 60_000 });
  await frame(page);
  const fresh = await labels(page);
  assert.ok(fresh.some((l) => /mixed/.test(l)), `a fresh model's heads have no clear kind: ${fresh.join(' | ')}`);
  await root(page).screenshot({ path: `${OUTPUT}model-fresh-laptop.png` });
  await page.setViewportSize({ width: 390, height: 844 });
  await frame(page);
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 390), 'no horizontal overflow with the training panel at 390 px');
  await root(page).screenshot({ path: `${OUTPUT}model-fresh-phone.png` });
  await page.setViewportSize({ width: 1280, height: 900 });
  await root(page).locator('.model-train button:text("Step")').click();
  await page.waitForFunction((sel) => /^step 10 · loss \d/.test(document.querySelector(sel).shadowRoot.querySelector('.model-status').textContent), E, { timeout: 120_000 });
  await frame(page);
  const curve = await page.$eval(E, (el) => {
    const svg = el.shadowRoot.querySelector('.loss-curve');
    return { points: svg.querySelector('polyline')?.getAttribute('points').split(' ').length ?? 0, texts: [...svg.querySelectorAll('text')].map((t) => t.textContent) };
  });
  assert.ok(curve.points >= 5, `${curve.points} points`);
  assert.ok(curve.texts.includes('step') && curve.texts.includes('loss') && curve.texts.includes('100'), curve.texts.join(','));
  // The same seed gives the same loss (the deterministic build, Adam's seeded batches).
  const status = await root(page).locator('.model-status').textContent();
  await root(page).locator('.model-train button:text("Train from scratch")').click();
  await page.waitForFunction((sel) => /^step 0\b/.test(document.querySelector(sel).shadowRoot.querySelector('.model-status').textContent), E, { timeout: 60_000 });
  await root(page).locator('.model-train button:text("Step")').click();
  await page.waitForFunction((sel) => /^step 10 · /.test(document.querySelector(sel).shadowRoot.querySelector('.model-status').textContent), E, { timeout: 120_000 });
  assert.is((await root(page).locator('.model-status').textContent()).split(' · ')[1], status.split(' · ')[1]);
  await root(page).locator('.model-train button:text("Back to the trained model")').click();
  await page.waitForFunction((sel) => /^Showing a model trained for 3000 steps/.test(document.querySelector(sel).shadowRoot.querySelector('.model-status').textContent), E);
  assert.equal(problems, []);
});

test('attentions property and attentions-src: the grid, lines and weights show them, the popover says where they came from', async ({ env }) => {
  const { page, problems } = await open(env, 'attentions-src="attentions.json"');
  assert.is((await labels(page)).length, 4);
  assert.match((await labels(page))[0], /^layer 1, head 1: previous token 1\.00$/);
  assert.equal(await cellTexts(page, 'weights-0'), [['1.0000', '0.0000', '0.0000', '0.0000'], ['1.0000', '0.0000', '0.0000', '0.0000'], ['0.0000', '1.0000', '0.0000', '0.0000'], ['0.0000', '0.0000', '1.0000', '0.0000']]);
  assert.ok(await page.$(`${E} figure.lines`), 'the lines view is shown');
  assert.not.ok(await page.$(`${E} table[data-id="X"]`), 'no inputs: the explorer did not compute these');
  await page.locator(`${E} table[data-id="weights-0"] td[data-i="2"][data-j="1"]`).hover();
  const text = await page.$eval(E, (el) => el.shadowRoot.querySelector('.popover').textContent);
  assert.match(text, /^weight\(sat → cat\), layer 1, head 1 of a hand-made two-layer model = 1\.0000\. These numbers were computed outside the explorer/);
  // The property wins over the file; null goes back to it.
  await page.evaluate((sel) => {
    document.querySelector(sel).attentions = { tokens: ['x', 'y'], attention: Float32Array.from([1, 0, 0.5, 0.5, 1, 0, 0, 1]), shape: [1, 2, 2, 2], source: 'test' };
  }, E);
  await page.waitForFunction((sel) => document.querySelector(sel).shadowRoot.querySelectorAll('button.thumb').length === 2, E);
  await frame(page);
  assert.equal(await cellTexts(page, 'weights-0'), [['1.0000', '0.0000'], ['0.5000', '0.5000']]);
  await page.evaluate((sel) => { document.querySelector(sel).attentions = null; }, E);
  await page.waitForFunction((sel) => document.querySelector(sel).shadowRoot.querySelectorAll('button.thumb').length === 4, E);
  assert.equal(problems, []);
});

test('errors name the field: a bad attentions property, model-head out of range, a missing file', async ({ env }) => {
  const { page } = await open(env, `model="induction" tokens="${SENTENCE}"`);
  const message = () => page.$eval(E, (el) => el.shadowRoot.querySelector('.message').textContent);
  await page.evaluate((sel) => { document.querySelector(sel).attentions = { tokens: ['a', 'b'], attention: [[[[1, 0]]]] }; }, E);
  assert.match(await message(), /^attentions\.attention\[0\]\[0\] must be an \(2, 2\) array/);
  await page.evaluate((sel) => document.querySelector(sel).setAttribute('model-head', '3 1'), E);
  await page.waitForFunction((sel) => /model-head/.test(document.querySelector(sel).shadowRoot.querySelector('.message').textContent), E);
  assert.match(await message(), /^model-head expects "layer head", layer 1 to 2 and head 1 to 4; got "3 1"$/);
  const other = await open(env, 'attentions-src="attentions.json"');
  await other.page.evaluate((sel) => document.querySelector(sel).setAttribute('attentions-src', 'missing.json'), E);
  await other.page.waitForFunction((sel) => /missing/.test(document.querySelector(sel).shadowRoot.querySelector('.message').textContent), E);
  assert.match(await other.page.$eval(E, (el) => el.shadowRoot.querySelector('.message').textContent), /^attentions-src="missing\.json": HTTP 404$/);
});

test('a 720 px column fits show="model lines" controls="minimal" in 900 px; 390 px has no horizontal overflow, light and dark', async ({ env }) => {
  const attrs = `model="induction" tokens="${SENTENCE}" show="model lines" controls="minimal"`;
  const { page, problems } = await open(env, attrs, { width: 744, height: 900 });
  const height = await page.$eval(E, (el) => el.getBoundingClientRect().height);
  assert.ok(height <= 900, `${height} px tall`);
  for (const colorScheme of ['light', 'dark']) {
    const phone = await open(env, attrs, { width: 390, height: 844 });
    await phone.page.emulateMedia({ colorScheme });
    await frame(phone.page);
    const widths = await phone.page.evaluate(() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]);
    assert.ok(widths[0] <= widths[1], `scrollWidth ${widths[0]} > ${widths[1]} (${colorScheme})`);
    await root(phone.page).screenshot({ path: `${OUTPUT}model-trained-phone-${colorScheme}.png` });
    assert.equal(phone.problems, []);
  }
  assert.equal(problems, []);
});

test.run();
