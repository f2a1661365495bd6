// The explorer's Train part in Chromium (<attention-explorer train>): paint a
// target, train until the weights match it, presets that switch on what they
// need, determinism, play until it converges, the gradient hover text, its
// settings in the address, axe-core. Screenshots of a painted target before
// and after training go to tests/output/.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { EXPLORER as E, OUTPUT, axeViolations, start } from './browser.js';

// The bar for "previous token" on 6 tokens at the default settings.
const STEP_BUDGET = 300;
// Play runs PLAY_RATE (60) steps a second on animation frames: the budget
// takes 5 s; a slow shared machine gets this long before the wait gives up.
const PLAY_WAIT_MS = 120_000;
// A one-token target is met when each row puts more than half its weight on
// its token: the mean cross-entropy is then below ln 2.
const LOSS_MATCHED = Math.LN2;

async function open(env, attrs = 'train tokens="the cat sat on the mat" seed="7" show="weights lines"') {
  const { page, problems } = await env.page();
  await page.goto(`${env.base}/tests/pages/train.html`);
  await page.evaluate((a) => {
    const main = document.querySelector('main');
    main.innerHTML = '';
    const tmp = document.createElement('div');
    tmp.innerHTML = `<attention-explorer ${a}></attention-explorer>`;
    main.append(tmp.firstElementChild);
  }, attrs);
  await page.waitForFunction((sel) => document.querySelector(sel)?.shadowRoot.querySelector('.train-target td[data-i]'), E);
  return { page, problems };
}

const frame = (page) => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 30))));

// Clicks Step until the part says the weights match (or the budget is spent).
const stepUntilMatch = (page, budget) => page.evaluate(([sel, n]) => {
  const root = document.querySelector(sel).shadowRoot;
  const step = [...root.querySelectorAll('.train button')].find((b) => b.textContent === 'Step');
  let s = 0;
  while (s < n && !root.querySelector('.train .matched').textContent) {
    step.click();
    s++;
  }
  return { steps: s, status: root.querySelector('.train-status').textContent };
}, [E, budget]);

const test = suite('Train part in Chromium');
test.before(async (ctx) => {
  ctx.env = await start();
});
test.after(async ({ env }) => env?.close());

test('a painted "previous token" target is learnt within the step budget; screenshots before and after', async ({ env }) => {
  const { page, problems } = await open(env, 'train positions tokens="the cat sat on the mat" seed="7" show="weights lines"');
  await page.locator(`${E} .train select[aria-label="target"]`).selectOption('paint');
  assert.equal(await page.$$eval(`${E} .train-target td.on`, (tds) => tds.length), 0);
  for (let i = 0; i < 6; i++) await page.locator(`${E} .train-target td[data-i="${i}"][data-j="${Math.max(i - 1, 0)}"]`).click();
  const on = await page.$$eval(`${E} .train-target td.on`, (tds) => tds.map((td) => `${td.dataset.i}:${td.dataset.j}`));
  assert.equal(on, ['0:0', '1:0', '2:1', '3:2', '4:3', '5:4']);
  // The keyboard paints too: Enter or Space on a cell sets its row (again: clears it).
  const pressed = (i, j) => page.locator(`${E} .train-target td[data-i="${i}"][data-j="${j}"]`).getAttribute('aria-pressed');
  await page.locator(`${E} .train-target td[data-i="5"][data-j="5"]`).focus();
  await page.keyboard.press('Enter');
  assert.equal([await pressed(5, 5), await pressed(5, 4)], ['true', 'false']);
  await page.keyboard.press(' ');
  assert.is(await pressed(5, 5), 'false');
  await page.locator(`${E} .train-target td[data-i="5"][data-j="4"]`).focus();
  await page.keyboard.press(' ');
  assert.is(await pressed(5, 4), 'true');
  await frame(page);
  const before = await page.locator(`${E} .train-status`).textContent();
  assert.match(before, /^step 0 · loss \d/);
  await page.locator(E).screenshot({ path: `${OUTPUT}train-painted-before.png` });
  const r = await stepUntilMatch(page, STEP_BUDGET);
  assert.ok(r.steps < STEP_BUDGET, `no match after ${STEP_BUDGET} steps: ${r.status}`);
  await frame(page);
  // The explorer's own weights now put each row's largest weight on the previous token.
  const argmax = await page.evaluate((sel) => {
    const w = document.querySelector(sel).state.weights;
    return Array.from({ length: w.rows }, (_, i) => {
      let best = 0;
      for (let j = 1; j < w.cols; j++) if (w.data[i * w.cols + j] > w.data[i * w.cols + best]) best = j;
      return best;
    });
  }, E);
  assert.equal(argmax, [0, 0, 1, 2, 3, 4]);
  await page.locator(E).screenshot({ path: `${OUTPUT}train-painted-after.png` });
  assert.equal(problems, []);
});

test('the default target, previous token, turns on positions and matches at the defaults', async ({ env }) => {
  const { page, problems } = await open(env);
  await frame(page);
  assert.is(await page.locator(`${E} .train select[aria-label="target"]`).inputValue(), 'previous-token');
  assert.is(await page.evaluate((sel) => document.querySelector(sel).positions, E), true);
  const r = await stepUntilMatch(page, STEP_BUDGET);
  assert.ok(r.steps < STEP_BUDGET, r.status);
  console.log(`  previous token (default target, seed 7): matched after ${r.steps} steps`);
  assert.equal(problems, []);
});

test('deterministic: the same page and clicks give the same loss, to the printed digit', async ({ env }) => {
  const run = async () => {
    const { page } = await open(env);
    await page.locator(`${E} .train select[aria-label="target"]`).selectOption('same-word');
    await frame(page);
    await page.evaluate((sel) => {
      const step = [...document.querySelector(sel).shadowRoot.querySelectorAll('.train button')].find((b) => b.textContent === 'Step');
      for (let s = 0; s < 40; s++) step.click();
    }, E);
    return page.locator(`${E} .train-status`).textContent();
  };
  const a = await run(), b = await run();
  assert.match(a, /^step 40 · loss /);
  assert.is(a, b);
});

test('play steps on animation frames until the weights match, pause stops, reset restores the weights', async ({ env }) => {
  const { page, problems } = await open(env);
  const w0 = await page.evaluate((sel) => Array.from(document.querySelector(sel).state.WQ.data), E);
  await page.locator(`${E} .train select[aria-label="target"]`).selectOption('first-token');
  await frame(page);
  const loss = () => page.locator(`${E} .train-status`).textContent().then((t) => Number(t.match(/loss ([\d.]+)/)?.[1]));
  await page.locator(`${E} .train button:text("Step")`).click();
  await frame(page);
  const first = await loss();
  await page.locator(`${E} .train button:text("Play")`).click();
  // Seed 7 and the defaults (adam, learning rate 0.02): play until the part
  // says the weights match; the step it says so at is read on that frame.
  const at = await page.waitForFunction(([sel, budget]) => {
    const root = document.querySelector(sel).shadowRoot;
    const steps = Number(root.querySelector('.train-status').textContent.match(/^step (\d+)/)[1]);
    const matched = root.querySelector('.train .matched').textContent !== '';
    return (matched || steps >= budget) && { steps, matched };
  }, [E, STEP_BUDGET], { timeout: PLAY_WAIT_MS });
  const { steps: matchedAt, matched } = await at.jsonValue();
  assert.ok(matched && matchedAt < STEP_BUDGET, `no match after ${matchedAt} steps`);
  await page.locator(`${E} .train button:text("Pause")`).click();
  await frame(page);
  const status = await page.locator(`${E} .train-status`).textContent();
  const steps = Number(status.match(/^step (\d+)/)[1]);
  assert.match(status, /matches the target/, status);
  const last = await loss();
  assert.ok(last < LOSS_MATCHED && last < first, `loss ${first} -> ${last}`);
  console.log(`  play, first token (seed 7): matched after ${matchedAt} steps (${status})`);
  // Paused: no more steps.
  await page.waitForTimeout(200);
  assert.is(Number((await page.locator(`${E} .train-status`).textContent()).match(/^step (\d+)/)[1]), steps);
  // The explorer's own weights put each row's largest weight on the first token.
  const argmax = await page.evaluate((sel) => {
    const w = document.querySelector(sel).state.weights;
    return Array.from({ length: w.rows }, (_, i) => {
      let best = 0;
      for (let j = 1; j < w.cols; j++) if (w.data[i * w.cols + j] > w.data[i * w.cols + best]) best = j;
      return best;
    });
  }, E);
  assert.equal(argmax, [0, 0, 0, 0, 0, 0]);
  await page.locator(`${E} .train button:text("Reset")`).click();
  await frame(page);
  assert.equal(await page.evaluate((sel) => Array.from(document.querySelector(sel).state.WQ.data), E), w0);
  assert.equal(problems, []);
});

test('W_V can learn to copy the attended token\'s X: its gradient shows, its loss falls', async ({ env }) => {
  const { page, problems } = await open(env);
  const wv0 = await page.evaluate((sel) => Array.from(document.querySelector(sel).state.WV.data), E);
  assert.is(await page.locator(`${E} .train-grids figure:has(figcaption:text-is("dW_V"))`).isHidden(), true);
  await page.locator(`${E} .train label:has-text("W_V learns") input`).check();
  const loss = () => page.locator(`${E} .train-status`).textContent().then((t) => Number(t.match(/loss ([\d.]+)/)[1]));
  await page.locator(`${E} .train button:text("Step")`).click();
  await frame(page);
  const first = await loss();
  assert.is(await page.locator(`${E} .train-grids figure:has(figcaption:text-is("dW_V"))`).isVisible(), true);
  await page.evaluate((sel) => {
    const step = [...document.querySelector(sel).shadowRoot.querySelectorAll('.train button')].find((b) => b.textContent === 'Step');
    for (let s = 0; s < 150; s++) step.click();
  }, E);
  await frame(page);
  assert.ok(await loss() < first / 2, `loss ${first} -> ${await loss()}`);
  const wv1 = await page.evaluate((sel) => Array.from(document.querySelector(sel).state.WV.data), E);
  assert.not.equal(wv1, wv0);
  assert.equal(problems, []);
});

test('new sizes restart training on the new weights', async ({ env }) => {
  const { page, problems } = await open(env);
  await page.locator(`${E} .train button:text("Step")`).click();
  await page.evaluate((sel) => { document.querySelector(sel).dk = 4; }, E);
  await frame(page);
  await page.locator(`${E} .train button:text("Step")`).click();
  await frame(page);
  const cols = await page.$$eval(`${E} .train-grids figure:nth-child(3) tr:first-child th`, (ths) => ths.length - 1);
  assert.is(cols, 4);
  assert.is(await page.evaluate((sel) => document.querySelector(sel).state.WQ.cols, E), 4);
  assert.equal(problems, []);
});

test('hovering a dW_Q cell writes it as its sum over tokens; removing train removes the part', async ({ env }) => {
  const { page, problems } = await open(env);
  await page.locator(`${E} .train select[aria-label="target"]`).selectOption('first-token');
  await frame(page);
  await page.locator(`${E} .train-grids figure:nth-child(3) td[data-i="1"][data-j="2"]`).hover();
  const text = await page.locator(`${E} .train-derivation`).textContent();
  assert.match(text, /^dW_Q\[1, 2\] = Σ over tokens of X\[token, 1\] · dQ\[token, 2\] = .* = -?\d+\.\d{4}$/);
  const shown = await page.locator(`${E} .train-grids figure:nth-child(3) td[data-i="1"][data-j="2"]`).textContent();
  assert.is(Number(text.split(' = ').pop()).toFixed(3), Number(shown).toFixed(3));
  await page.evaluate((sel) => document.querySelector(sel).removeAttribute('train'), E);
  await frame(page);
  assert.is(await page.locator(`${E} .train`).count(), 0);
  assert.equal(problems, []);
});

test('index.html keeps the training settings in its URL, both ways', async ({ env }) => {
  const { page, problems } = await env.page();
  await page.goto(`${env.base}/?tokens=the+cat+sat+on+the+mat&train=1&train-target=attend-to%3Acat&train-optimizer=sgd&train-lr=0.05`);
  await page.waitForFunction((sel) => document.querySelector(sel)?.shadowRoot.querySelector('.train-target td.on'), E);
  const on = await page.$$eval(`${E} .train-target td.on`, (tds) => tds.map((td) => `${td.dataset.i}:${td.dataset.j}`));
  assert.equal(on, ['0:1', '1:1', '2:1', '3:1', '4:1', '5:1']);
  assert.is(await page.locator(`${E} .train select[aria-label="optimizer"]`).inputValue(), 'sgd');
  assert.is(await page.locator(`${E} .train output`).textContent(), '0.05');
  // The properties read the attributes.
  assert.equal(await page.$eval(E, (el) => [el.trainTarget, el.trainOptimizer, el.trainLr]), ['attend-to:cat', 'sgd', 0.05]);
  await page.locator(`${E} .train select[aria-label="target"]`).selectOption('first-token');
  await page.waitForFunction(() => new URLSearchParams(location.search).get('train-target') === 'first-token');
  await page.locator(`${E} .train-target td[data-i="2"][data-j="3"]`).click();
  await page.waitForFunction(() => new URLSearchParams(location.search).get('train-target') === 'paint:0-0,1-0,2-3,3-0,4-0,5-0');
  assert.equal(problems, []);
});

test('axe-core finds no serious or critical violations in the Train part (light and dark)', async ({ env }) => {
  for (const colorScheme of ['light', 'dark']) {
    // axe is injected as a script, which the page's own CSP would rightly refuse.
    const { page, context } = await env.page({ bypassCSP: true, colorScheme });
    await page.goto(`${env.base}/?tokens=the+cat+sat+on+the+mat&train=1`);
    await page.waitForFunction((sel) => document.querySelector(sel)?.shadowRoot.querySelector('.train-target td.on'), E);
    await page.locator(`${E} .train button:text("Step")`).click();
    await frame(page);
    const violations = await axeViolations(page);
    assert.equal(violations, [], colorScheme);
    await context.close();
  }
});

test.run();
