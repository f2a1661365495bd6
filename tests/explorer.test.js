// The explorer in a real browser (Debian's Chromium via playwright-core),
// served with the strict CSP: the handbook numbers, attributes, properties,
// editing, keyboard, hostile text, accessibility, embedding, URL state.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { loadAttention } from '../web/attention.js';
import { computeExample, normalizeConfig } from '../web/explorer/computation.js';
import { DIGITS, fixed } from '../web/explorer/format.js';
import { Matrix } from '../web/core/matrix.js';
import { OUTPUT, start } from './browser.js';
import { handbookTables } from './helpers.js';

const require = createRequire(import.meta.url);
const AXE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const expected = handbookTables();
const E = 'attention-explorer';

// The text of every number cell of one table, row by row.
const cellTexts = (page, id, host = E) => page.$$eval(`${host} table[data-id="${id}"] tbody tr`, (rows) =>
  rows.map((r) => [...r.querySelectorAll('td[data-i]')].map((td) => td.textContent)));

// Waits until the element has rendered after the last change.
async function settled(page, host = E) {
  await page.waitForFunction((sel) => {
    const el = document.querySelector(sel);
    return el && el.state && el.shadowRoot.querySelector('table[data-id="weights-0"]');
  }, host);
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0))));
}

const textsOf = (m, digits) => m.toArray().map((row) => row.map((x) => fixed(x, digits)));

const test = suite('explorer in Chromium');
test.before(async (ctx) => {
  ctx.env = await start();
  ctx.attn = await loadAttention();
});
test.after(async ({ env }) => env?.close());

test('index.html shows the handbook numbers under the strict CSP, with no errors', async ({ env }) => {
  const { page, problems } = await env.page();
  await page.addInitScript(() => {
    window.__violations = [];
    document.addEventListener('securitypolicyviolation', (e) => window.__violations.push(`${e.violatedDirective}: ${e.blockedURI}`));
  });
  const response = await page.goto(`${env.base}/`);
  assert.match(response.headers()['content-security-policy'], /script-src 'self' 'wasm-unsafe-eval'/);
  await settled(page);
  assert.equal(await page.evaluate(() => window.__violations), [], 'no Content-Security-Policy violations');
  for (const [step, rows] of Object.entries(expected)) {
    const got = await cellTexts(page, `${step}-0`);
    assert.equal(got, rows.map((r) => r.cells), step);
  }
  const labels = await page.$$eval(`${E} table[data-id="weights-0"] tbody th`, (ths) => ths.map((th) => th.textContent));
  assert.equal(labels, ['the', 'cat', 'sat', 'there']);
  const sums = await page.$$eval(`${E} table[data-id="weights-0"] td.sum`, (tds) => tds.map((td) => td.textContent));
  assert.equal(sums, ['1.0000', '1.0000', '1.0000', '1.0000']);
  await page.screenshot({ path: `${OUTPUT}explorer-handbook.png`, fullPage: true });
  assert.equal(problems, []);
  await page.context().close();
});

test('attributes and properties recompute: seed, dims, heads, kv-heads, causal, scale', async ({ env, attn }) => {
  const { page, problems } = await env.page({ colorScheme: 'dark' });
  await page.goto(`${env.base}/`);
  await settled(page);
  await page.evaluate((sel) => {
    const el = document.querySelector(sel);
    el.setAttribute('seed', '11');
    el.setAttribute('tokens', 'we like small models');
    el.dModel = 8;
    el.dk = 4;
    el.heads = 2;
    el.kvHeads = 1;
    el.causal = true;
  }, E);
  await settled(page);
  const config = normalizeConfig({ tokens: ['we', 'like', 'small', 'models'], seed: 11, dModel: 8, dk: 4, heads: 2, kvHeads: 1, causal: true });
  const ex = computeExample(attn, config);
  for (const h of [0, 1]) {
    for (const step of ['scores', 'scaled', 'weights', 'output']) {
      let want = textsOf(ex.heads[h][step], DIGITS[step]);
      // Causal: a later key's logit is −∞ (the softmax gives it exactly 0).
      if (step === 'scaled') want = want.map((row, i) => row.map((x, j) => (j > i ? '−∞' : x)));
      assert.equal(await cellTexts(page, `${step}-${h}`), want, `head ${h} ${step}`);
    }
  }
  const props = await page.evaluate((sel) => {
    const el = document.querySelector(sel);
    return { heads: el.heads, kvHeads: el.kvHeads, dv: el.dv, causal: el.causal, seed: el.seed, weights: el.state.weights.length, q: [el.state.Q.rows, el.state.Q.cols] };
  }, E);
  assert.equal(props, { heads: 2, kvHeads: 1, dv: 4, causal: true, seed: 11, weights: 2, q: [4, 8] });
  await page.screenshot({ path: `${OUTPUT}explorer-heads-dark.png`, fullPage: true });
  // A larger scale sharpens every row: its largest weight grows.
  const before = await page.evaluate((sel) => document.querySelector(sel).state.weights[0].toArray().map((r) => Math.max(...r)), E);
  await page.evaluate((sel) => {
    document.querySelector(sel).scale = 2;
  }, E);
  await settled(page);
  const after = await page.evaluate((sel) => document.querySelector(sel).state.weights[0].toArray().map((r) => Math.max(...r)), E);
  for (let i = 1; i < 4; i++) assert.ok(after[i] > before[i], `row ${i}: ${after[i]} > ${before[i]}`);
  assert.equal(problems, []);
  await page.context().close();
});

test('typing into a cell of X recomputes everything downstream; keyboard moves and masks', async ({ env, attn }) => {
  const { page, problems } = await env.page();
  await page.goto(`${env.base}/`);
  await settled(page);
  const events = await page.evaluateHandle((sel) => {
    const list = [];
    document.querySelector(sel).addEventListener('attention-change', (e) => list.push(e.detail));
    return list;
  }, E);
  await page.focus(`${E} table[data-id="X"] td[data-i="0"][data-j="0"]`);
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowDown');
  const focused = await page.evaluate((sel) => document.querySelector(sel).shadowRoot.activeElement.getAttribute('aria-label'), E);
  assert.match(focused, /^row cat, column x1: -1\.7547$/);
  await page.keyboard.type('2.5');
  await page.keyboard.press('Enter');
  await settled(page);
  const config = normalizeConfig();
  const ex0 = computeExample(attn, config);
  const X = new Matrix(4, 6, ex0.X.data.slice());
  X.data[1 * 6 + 1] = 2.5;
  const ex = computeExample(attn, config, { X });
  for (const step of ['scores', 'scaled', 'weights', 'output']) {
    assert.equal(await cellTexts(page, `${step}-0`), textsOf(ex.heads[0][step], DIGITS[step]), step);
  }
  assert.ok((await events.jsonValue()).at(-1).edited);
  const stillFocused = await page.evaluate((sel) => document.querySelector(sel).shadowRoot.activeElement.getAttribute('aria-label'), E);
  assert.match(stillFocused, /^row cat, column x1: 2\.5000 \(edited\)$/);
  // Space on a weight cell masks that pair: the row renormalises without it.
  await page.focus(`${E} table[data-id="weights-0"] td[data-i="1"][data-j="2"]`);
  await page.keyboard.press('Space');
  await settled(page);
  const mask = new Uint8Array(16).fill(1);
  mask[1 * 4 + 2] = 0;
  const masked = computeExample(attn, config, { X }, mask);
  assert.equal(await cellTexts(page, 'weights-0'), textsOf(masked.heads[0].weights, 4));
  assert.is((await cellTexts(page, 'weights-0'))[1][2], '0.0000');
  const label = await page.$eval(`${E} table[data-id="weights-0"] td[data-i="1"][data-j="2"]`, (td) => td.getAttribute('aria-label'));
  assert.match(label, /row cat, column sat: 0\.0000 \(masked\)/);
  // Hover explains a number.
  await page.hover(`${E} table[data-id="scores-0"] td[data-i="0"][data-j="1"]`);
  const explain = await page.$eval(`${E}`, (el) => el.shadowRoot.querySelector('.popover').textContent);
  assert.match(explain, /^score\(the → cat\) = q_the · k_cat = .+ = -?\d+\.\d{3}$/);
  assert.equal(problems, []);
  await page.context().close();
});

test('hostile token text is shown as text; invalid attributes show a message and keep the last state', async ({ env }) => {
  const { page, problems } = await env.page();
  await page.goto(`${env.base}/`);
  await settled(page);
  const hostile = '<img src=x onerror=alert(1)> <script>alert(2)</script> "quoted" &amp;';
  await page.evaluate(([sel, text]) => {
    document.querySelector(sel).setAttribute('tokens', text);
  }, [E, hostile]);
  await settled(page);
  const labels = await page.$$eval(`${E} table[data-id="weights-0"] tbody th`, (ths) => ths.map((th) => th.textContent));
  assert.equal(labels, hostile.split(/\s+/));
  const injected = await page.evaluate((sel) => document.querySelector(sel).shadowRoot.querySelectorAll('img, script').length, E);
  assert.is(injected, 0);
  const before = await cellTexts(page, 'weights-0');
  for (const [attr, value, message] of [['seed', 'abc', /seed expects a whole number/], ['dk', '0', /dk must be an integer from 1 to 256/],
    ['kv-heads', '2', /kv-heads must be an integer from 1 to 1/], ['scale', 'NaN', /scale expects a number/], ['tokens', '   ', /tokens needs at least one word/],
    ['step', 'nope', /step must be one of/], ['d-model', '99999999999', /d-model must be an integer from 1 to 512/],
    ['seed', 'NaN', /seed expects a whole number/], ['heads', '1e3', /heads expects a whole number/], ['dv', '', /dv expects a whole number/],
    ['tokens', Array.from({ length: 1000 }, (_, i) => `w${i}`).join(' '), /at most 64 tokens, got 1000/]]) {
    await page.evaluate(([sel, a, v]) => document.querySelector(sel).setAttribute(a, v), [E, attr, value]);
    await page.evaluate(() => new Promise((r) => setTimeout(r, 20)));
    const msg = await page.$eval(E, (el) => el.shadowRoot.querySelector('.message').textContent);
    assert.match(msg, message, `${attr}=${value}`);
    assert.equal(await cellTexts(page, 'weights-0'), before, `${attr}=${value} keeps the last good state`);
    await page.evaluate(([sel, a]) => document.querySelector(sel).removeAttribute(a), [E, attr]);
    if (attr === 'tokens') await page.evaluate(([sel, t]) => document.querySelector(sel).setAttribute('tokens', t), [E, hostile]);
  }
  await page.evaluate((sel) => {
    document.querySelector(sel).inputs = { X: [[1, 2]] };
  }, E);
  await page.evaluate(() => new Promise((r) => setTimeout(r, 20)));
  assert.match(await page.$eval(E, (el) => el.shadowRoot.querySelector('.message').textContent), new RegExp(`inputs\\.X must have shape \\(${hostile.split(/\s+/).length}, 6\\), got \\(1, 2\\)`));
  assert.equal(problems, []);
  await page.context().close();
});

test('step mode, copy and save', async ({ env }) => {
  const { page, problems } = await env.page({ reducedMotion: 'reduce' });
  await page.goto(`${env.base}/?step=scores`);
  await settled(page).catch(() => {});
  await page.waitForSelector(`${E} table[data-id="scores-0"]`);
  const visible = () => page.$$eval(`${E} section.step`, (s) => s.map((x) => x.dataset.step));
  assert.equal(await visible(), ['scores']);
  await page.click(`${E} .step-nav button:has-text("Next")`);
  await page.waitForFunction((sel) => document.querySelector(sel).step === 'scaled', E);
  await page.evaluate(() => new Promise((r) => setTimeout(r, 20)));
  assert.equal(await visible(), ['scaled']);
  await page.waitForURL(/step=scaled/, { timeout: 2000 });
  const copied = page.evaluate((sel) => new Promise((resolve) => document.querySelector(sel).addEventListener('attention-copy', (e) => resolve(e.detail), { once: true })), E);
  await page.click(`${E} figure[data-id="scaled-0"] summary`);
  await page.click(`${E} figure[data-id="scaled-0"] button[data-copy="numpy"]`);
  const detail = await copied;
  assert.is(detail.format, 'numpy');
  assert.match(detail.text, /^np\.array\(\[\[2\.29\d+, 2\.12\d+, 1\.52\d+, 1\.86\d+\],/);
  const saved = page.evaluate((sel) => new Promise((resolve) => document.querySelector(sel).addEventListener('attention-save', (e) => resolve(e.detail), { once: true })), E);
  const download = page.waitForEvent('download');
  await page.click(`${E} details.settings summary`);
  await page.click(`${E} button:has-text("Save SVG")`);
  const info = await saved;
  assert.is(info.type, 'image/svg+xml');
  assert.ok(info.size > 1000);
  assert.match((await download).suggestedFilename(), /attention\.svg/);
  const savedPng = page.evaluate((sel) => new Promise((resolve) => document.querySelector(sel).addEventListener('attention-save', (e) => resolve(e.detail), { once: true })), E);
  await page.click(`${E} button:has-text("Save PNG")`);
  const png = await savedPng;
  assert.is(png.type, 'image/png');
  assert.ok(png.size > 1000);
  const svg = await page.$eval(E, (el) => el.toSVG());
  assert.match(svg, /^<svg xmlns/);
  assert.ok(svg.includes('1.521'), 'the scaled numbers are in the SVG');
  assert.equal(problems, []);
  await page.context().close();
});

test('the URL holds the settings: loading one restores the view', async ({ env, attn }) => {
  const { page, problems } = await env.page();
  await page.goto(`${env.base}/?tokens=one+two+three&seed=5&causal=1&mask=100.110.011`);
  await settled(page);
  await page.waitForFunction((sel) => document.querySelector(sel).state.weights.get(2, 0) === 0, E);
  const config = normalizeConfig({ tokens: ['one', 'two', 'three'], seed: 5, causal: true });
  const ex = computeExample(attn, config, {}, Uint8Array.from([1, 0, 0, 1, 1, 0, 0, 1, 1]));
  assert.equal(await cellTexts(page, 'weights-0'), textsOf(ex.heads[0].weights, 4));
  await page.waitForURL(/mask=100\.110\.011/, { timeout: 2000 });
  assert.equal(problems, []);
  await page.context().close();
});

test('axe-core finds no serious or critical violations (light and dark)', async ({ env }) => {
  for (const colorScheme of ['light', 'dark']) {
    // axe is injected as a script, which the page's own CSP would rightly refuse.
    const { page, context } = await env.page({ bypassCSP: true, colorScheme });
    await page.goto(`${env.base}/?heads=2`);
    await settled(page);
    await page.addScriptTag({ content: AXE });
    const violations = await page.evaluate(async () => {
      const result = await window.axe.run(document, { resultTypes: ['violations'] });
      return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
        .map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`);
    });
    assert.equal(violations, [], colorScheme);
    await context.close();
  }
});

test('an embedding page that only imports the module works', async ({ env, attn }) => {
  const { page, problems } = await env.page();
  await page.goto(`${env.base}/tests/pages/embed.html`);
  await settled(page);
  const config = normalizeConfig({ tokens: ['a', 'small', 'dog', 'barked'], seed: 3, causal: true });
  const ex = computeExample(attn, config);
  assert.equal(await cellTexts(page, 'weights-0'), textsOf(ex.heads[0].weights, 4));
  assert.equal(await cellTexts(page, 'output-0'), textsOf(ex.heads[0].output, 4));
  await page.screenshot({ path: `${OUTPUT}explorer-embedded.png`, fullPage: true });
  assert.equal(problems, []);
  await page.context().close();
});

test('AttentionExplorer.wasm points explorers at a moved module', async ({ env }) => {
  const { page, problems } = await env.page();
  const wasm = [];
  page.on('request', (r) => r.url().endsWith('.wasm') && wasm.push(r.url().replace(/.*\//, '')));
  await page.goto(`${env.base}/tests/pages/moved-wasm.html`);
  await settled(page);
  assert.equal(await cellTexts(page, 'weights-0'), expected.weights.map((r) => r.cells));
  assert.equal(wasm, ['attention-scalar.wasm']);
  assert.equal(problems, []);
  await page.context().close();
});

test('Web Workers each run their own instance under the CSP', async ({ env }) => {
  const { page, problems } = await env.page();
  await page.goto(`${env.base}/tests/pages/worker.html`);
  await page.waitForFunction(() => document.getElementById('result').textContent !== 'running');
  const result = JSON.parse(await page.textContent('#result'));
  assert.equal(result, { simd: true, sevenMatches: true, eightMatches: true, differ: true });
  assert.equal(problems, []);
  await page.context().close();
});

test.run();
