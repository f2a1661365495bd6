// Settings, the URL and the page: the settings table and its parsing, the
// scale slider's fixed range, word embeddings and positions (pure, in Node);
// then in Chromium (playwright-core, the strict CSP) index.html with the
// handbook numbers, the address that holds the settings, the toolbar's
// slider and reset, the first screen, and what npm start serves.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { loadAttention } from '../../web/attention.js';
import { computeExample, defaultScale, drawInputs, normalizeConfig, sinusoid, wordSeed } from '../../web/worked/computation.js';
import { fixed } from '../../web/worked/format.js';
import { PARTS, SCALE_SLIDER, SETTINGS, parseSetting, readSettings, scaleToSlider, sliderToScale } from '../../web/worked/settings.js';
import { serve } from '../../scripts/serve.js';
import { EXPLORER as E, OUTPUT, cellTexts, cspViolations, settled, start, watchCSP } from '../browser.js';
import { assertClose, handbookTables, rejects } from '../helpers.js';

// float32 rows drawn from the same float64 draws are bit-identical; a sum of
// float32 with an exact sinusoid is within one float32 rounding of it.
const ATOL_F32_ROUNDING = 1e-6;
const expected = handbookTables();
const textsOf = (m, digits) => m.toArray().map((row) => row.map((x) => fixed(x, digits)));

const reader = (attrs) => (name) => (name in attrs ? attrs[name] : null);

const settings = suite('settings table');

settings('every attribute is in one table with a help text; CLI and URL flags are subsets', () => {
  const attrs = SETTINGS.map((s) => s.attr);
  assert.equal(new Set(attrs).size, attrs.length, 'no duplicates');
  for (const name of ['tokens', 'seed', 'd-model', 'dk', 'dv', 'heads', 'kv-heads', 'causal', 'scale', 'embeddings', 'positions', 'step', 'show', 'controls']) {
    assert.ok(attrs.includes(name), name);
  }
  for (const s of SETTINGS) assert.ok(s.help.length > 10, `${s.attr} has help`);
  assert.not.ok(SETTINGS.find((s) => s.attr === 'show').cli, 'show is the element’s, not the CLI’s');
});

settings('readSettings: defaults are the handbook; attributes parse and complete the config', () => {
  const a = readSettings(reader({}));
  assert.equal(a.config.tokens, ['the', 'cat', 'sat', 'there']);
  assert.is(a.config.scale, defaultScale(3));
  assert.is(a.view.step, 'all');
  assert.equal([...a.view.show], PARTS);
  assert.is(a.view.controls, 'full');
  const b = readSettings(reader({ tokens: ' a  b ', seed: '9', heads: '4', 'kv-heads': '2', causal: '', scale: '', embeddings: 'word', show: 'lines weights', controls: 'minimal' }));
  assert.equal(b.config.tokens, ['a', 'b']);
  assert.is(b.config.seed, 9);
  assert.is(b.config.kvHeads, 2);
  assert.is(b.config.causal, true);
  assert.is(b.config.scale, defaultScale(3), 'an empty scale is the default');
  assert.is(b.config.embeddings, 'word');
  assert.equal([...b.view.show], ['lines', 'weights']);
  assert.is(b.view.controls, 'minimal');
});

for (const [attrs, message] of [
  [{ seed: 'abc' }, /^seed expects a whole number \(0 or more\), got "abc"$/],
  [{ heads: '1e3' }, /^heads expects a whole number/],
  [{ tokens: '  ' }, /^tokens needs at least one word$/],
  [{ tokens: Array.from({ length: 513 }, (_, i) => `w${i}`).join(' ') }, /^tokens takes at most 512 tokens, got 513$/],
  [{ scale: 'Infinity' }, /^scale expects a number, got "Infinity"$/],
  [{ embeddings: 'letters' }, /^embeddings must be one of position, word; got "letters"$/],
  [{ show: 'weights legs' }, /^show lists parts from .*; got "legs"$/],
  [{ controls: 'some' }, /^controls must be one of full, minimal, none/],
  [{ step: 'nope' }, /^step must be one of all, inputs/],
  [{ dk: '0' }, /^dk must be an integer from 1 to 256, got 0$/],
]) {
  settings(`readSettings refuses ${JSON.stringify(attrs).slice(0, 60)} naming the setting`, () => {
    rejects(() => readSettings(reader(attrs)), RangeError, message);
  });
}

settings('window, softcap and query-offset: parsed from the attribute, checked by normalizeConfig', () => {
  const read = (attrs) => readSettings(reader(attrs)).config;
  assert.equal(read({ window: '2' }).window, [2, 2]);
  assert.equal(read({ window: '3 0' }).window, [3, 0]);
  assert.is(read({ window: '-1 -1' }).window, null, 'unbounded on both sides is no window');
  assert.is(read({ window: '' }).window, null);
  assert.is(read({ 'query-offset': '-2' }).queryOffset, -2);
  assert.is(read({ softcap: '5' }).softcap, 5);
  assert.is(read({}).softcap, 0);
  assert.throws(() => read({ window: '2 x' }), /^window expects "left right"/);
  assert.throws(() => read({ window: '-2' }), /^window\[0\] must be an integer from -1 \(unbounded\) to 2147483647, got -2/);
  assert.throws(() => read({ softcap: '-1' }), /^softcap must be 0 \(none\) or a number > 0/);
  assert.throws(() => read({ 'query-offset': '1.5' }), /^query-offset expects a whole number/);
});

settings('parseSetting names the flag the caller uses (the CLI says --seed)', () => {
  const seed = SETTINGS.find((s) => s.attr === 'seed');
  assert.throws(() => parseSetting(seed, 'x', '--seed'), /^--seed expects a whole number \(0 or more\), got "x"$/);
  const causal = SETTINGS.find((s) => s.attr === 'causal');
  assert.is(parseSetting(causal, ''), true);
  assert.is(parseSetting(causal, '0'), false);
});

settings('the command line takes --embeddings word: both "the" rows of the scores are equal', () => {
  const cli = fileURLToPath(new URL('../../web/cli.js', import.meta.url));
  const r = spawnSync(process.execPath, [cli, '--tokens', 'the cat saw the dog', '--embeddings', 'word'], { encoding: 'utf8' });
  assert.is(r.status, 0, r.stderr);
  const rows = [...r.stdout.split('Step 2')[0].matchAll(/^\s+the\s+(-?\d.+)$/gm)].map((m) => m[1].trim());
  assert.is(rows.length, 2);
  assert.is(rows[0], rows[1]);
  assert.match(r.stdout, /embeddings "word"/);
});

settings.run();

const slider = suite('scale slider');

slider('the range is fixed: 1/16 to 16 times 1/sqrt(d_k), whatever the scale', () => {
  for (const dk of [1, 3, 64]) {
    assert.is(sliderToScale(SCALE_SLIDER.max, dk), Number((16 / Math.sqrt(dk)).toPrecision(4)));
    assert.is(sliderToScale(SCALE_SLIDER.min, dk), Number((1 / 16 / Math.sqrt(dk)).toPrecision(4)));
    assert.is(sliderToScale(0, dk), null, 'the middle is the default');
    assert.is(scaleToSlider(1000, dk), SCALE_SLIDER.max, 'clamped, never rescaled');
    assert.is(scaleToSlider(0, dk), SCALE_SLIDER.min);
  }
  assert.is(SCALE_SLIDER.step, 0.125);
  // A keyboard step is an eighth of an octave: about 9 %.
  const ratio = sliderToScale(SCALE_SLIDER.step, 3) / defaultScale(3);
  assertClose([ratio], [2 ** 0.125], { rtol: 1e-3, what: 'one step' });
});

slider('scale -> position -> scale round-trips to 4 significant digits', () => {
  for (const p of [-4, -1.5, -0.125, 0.125, 2, 3.875]) {
    const scale = sliderToScale(p, 5);
    assertClose([scaleToSlider(scale, 5)], [p], { atol: 1e-3, what: `position ${p}` });
  }
});

slider.run();

const words = suite('embeddings and positions');

words('position embeddings are the handbook draws; word embeddings give a repeated word one row', () => {
  const tokens = ['the', 'cat', 'saw', 'the', 'dog'];
  const handbook = drawInputs(normalizeConfig());
  const pos = drawInputs(normalizeConfig({ tokens: ['the', 'cat', 'sat', 'there'] }));
  assert.equal(Array.from(pos.X.data), Array.from(handbook.X.data));
  const word = drawInputs(normalizeConfig({ tokens, embeddings: 'word' }));
  const row = (m, i) => Array.from(m.data.subarray(i * m.cols, (i + 1) * m.cols));
  assert.equal(row(word.X, 0), row(word.X, 3), 'both "the"');
  assert.not.equal(row(word.X, 0), row(word.X, 1));
  const plain = drawInputs(normalizeConfig({ tokens, seed: 7 }));
  assert.equal(Array.from(word.WQ.data), Array.from(plain.WQ.data), 'W_Q stays the handbook draw');
  assert.not.equal(wordSeed(7, 'the'), wordSeed(8, 'the'), 'the seed changes the words');
});

words('positions add the sinusoid to each row', () => {
  const config = normalizeConfig({ tokens: ['a', 'a', 'a'], embeddings: 'word', positions: true, dModel: 8 });
  const base = drawInputs({ ...config, positions: false });
  const withPos = drawInputs(config);
  for (let i = 0; i < 3; i++) {
    const pe = sinusoid(i, 8);
    const want = Array.from({ length: 8 }, (_, c) => base.X.data[i * 8 + c] + pe[c]);
    assertClose(Array.from(withPos.X.data.subarray(i * 8, i * 8 + 8)), want, { atol: ATOL_F32_ROUNDING, what: `row ${i}` });
  }
  assert.is(sinusoid(0, 4)[0], 0);
  assert.is(sinusoid(0, 4)[1], 1);
});

words.run();

const test = suite('settings, URL and page in Chromium');
test.before(async (ctx) => {
  ctx.env = await start();
  ctx.attn = await loadAttention();
});
test.after(async ({ env }) => env?.close());

test('index.html shows the handbook numbers under the strict CSP, with no errors', async ({ env }) => {
  const { page, problems } = await env.page();
  await watchCSP(page);
  const response = await page.goto(`${env.base}/`);
  assert.match(response.headers()['content-security-policy'], /script-src 'self' 'wasm-unsafe-eval'/);
  await settled(page);
  assert.equal(await cspViolations(page), [], 'no Content-Security-Policy violations');
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

test('attention first: the lines view and the weights are on the first screen at 1366 x 900; the toolbar stays in reach', async ({ env }) => {
  const { page, problems } = await env.page({ viewport: { width: 1366, height: 900 } });
  await watchCSP(page);
  await page.goto(`${env.base}/`);
  await settled(page);
  const boxes = await page.$eval(E, (el) => {
    const r = (sel) => el.shadowRoot.querySelector(sel).getBoundingClientRect().toJSON();
    return { lines: r('figure.lines'), weights: r('table[data-id="weights-0"]'), slider: r('input[type="range"]') };
  });
  assert.ok(boxes.weights.bottom <= 900, `weights end at ${boxes.weights.bottom}`);
  assert.ok(boxes.lines.bottom <= 900, `lines end at ${boxes.lines.bottom}`);
  await page.mouse.wheel(0, 1500);
  await page.waitForTimeout(100);
  const slider = await page.$eval(E, (el) => el.shadowRoot.querySelector('input[type="range"]').getBoundingClientRect().toJSON());
  assert.ok(slider.top >= 0 && slider.bottom <= 900, `the slider is still on screen after scrolling (top ${slider.top})`);
  assert.equal(await cspViolations(page), []);
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

test('a mistyped link opened cold draws its good settings and defaults for the bad ones, and says which', async ({ env }) => {
  const { page, problems, context } = await env.page({ viewport: { width: 1366, height: 900 } });
  for (const [query, heads, tokens, said] of [
    ['?heads=99', 1, 'the cat sat there', /heads must be .* got 99; shown with its default instead/],
    ['?tokens=one+two+three&heads=2&rope=abc', 2, 'one two three', /rope.*abc.*; shown with its default instead/],
    ['?heads=3&kv-heads=2', 3, 'the cat sat there', /; shown with its default instead/],
  ]) {
    await page.goto(`${env.base}/${query}`);
    await settled(page);
    const r = await page.$eval(E, (el) => ({
      heads: el.config.heads, tokens: el.state.tokens.join(' '), field: el.shadowRoot.querySelector('input[type="text"]').value,
      message: el.shadowRoot.querySelector('.message').hidden ? null : el.shadowRoot.querySelector('.message').textContent,
    }));
    assert.is(r.heads, heads, query);
    assert.is(r.tokens, tokens, query);
    assert.is(r.field, tokens, `${query}: the tokens field`);
    assert.match(r.message ?? '', said, query);
  }
  // A good setting afterwards clears the message; a bad one then keeps the view it has.
  await page.$eval(E, (el) => el.setAttribute('heads', '2'));
  await settled(page);
  assert.ok(await page.$eval(E, (el) => el.shadowRoot.querySelector('.message').hidden));
  assert.equal(problems, []);
  await context.close();
});

test('a setting present with no value stays bare in the address: "?rope" is written back as "?rope", not "?rope="', async ({ env }) => {
  const { page, context } = await env.page({ viewport: { width: 1366, height: 900 } });
  await page.goto(`${env.base}/?rope&seed=3`);
  await settled(page);
  assert.ok(await page.$eval(E, (el) => el.config.rope !== null));
  // A change makes the page write its address.
  await page.$eval(E, (el) => el.setAttribute('seed', '4'));
  await page.waitForURL(/seed=4/, { timeout: 5000 });
  const search = await page.evaluate(() => location.search);
  assert.match(search, /(^\?|&)rope(&|$)/, search);
  await page.reload();
  await settled(page);
  assert.ok(await page.$eval(E, (el) => el.config.rope !== null), 'still on after a reload');
  await context.close();
});

test('the address takes a boolean as the attribute does: "?causal" and "causal=true" are on, "causal=0" off', async ({ env }) => {
  const { page, context } = await env.page({ viewport: { width: 1366, height: 900 } });
  for (const [query, on] of [['?causal', true], ['?causal=true', true], ['?causal=1', true], ['?causal=0', false], ['?positions&causal=false', false]]) {
    await page.goto(`${env.base}/${query}`);
    await settled(page);
    assert.is(await page.$eval(E, (el) => el.config.causal), on, query);
  }
  await context.close();
});

test('the scale slider: a fixed log range, a full drag ends at 16/√d_k, keyboard steps of an eighth of an octave', async ({ env }) => {
  const { page, problems } = await env.page({ viewport: { width: 1366, height: 900 } });
  await page.goto(`${env.base}/`);
  await settled(page);
  const slider = await page.evaluateHandle((sel) => document.querySelector(sel).shadowRoot.querySelector('input[type="range"]'), E);
  const box = await slider.boundingBox();
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.mouse.down();
  for (let k = 1; k <= 20; k++) await page.mouse.move(box.x + box.width / 2 + (k / 20) * (box.width / 2 + 40), box.y + box.height / 2);
  await page.mouse.up();
  await page.evaluate(() => new Promise((r) => setTimeout(r, 30)));
  const after = await page.evaluate((sel) => {
    const el = document.querySelector(sel);
    const input = el.shadowRoot.querySelector('input[type="range"]');
    return { scale: el.scale, min: input.min, max: input.max, step: input.step };
  }, E);
  assert.is(after.scale, Number((16 / Math.sqrt(3)).toPrecision(4)), 'the right end is 16 × 1/√3');
  assert.equal([after.min, after.max, after.step], ['-4', '4', '0.125'], 'the range never moves');
  await slider.focus();
  await page.keyboard.press('Home');
  await page.keyboard.press('ArrowRight');
  await page.evaluate(() => new Promise((r) => setTimeout(r, 30)));
  const stepped = await page.evaluate((sel) => document.querySelector(sel).scale, E);
  assert.is(stepped, Number(((1 / 16) * 2 ** 0.125 / Math.sqrt(3)).toPrecision(4)));
  assert.equal(problems, []);
  await page.context().close();
});

test('the scale reset is drawn only when there is something to reset, and says what it does', async ({ env }) => {
  const { page, context } = await env.page({ viewport: { width: 1366, height: 900 } });
  await page.goto(`${env.base}/`);
  await settled(page);
  const reset = () => page.$eval(E, (el) => {
    const b = el.shadowRoot.querySelector('.toolbar button[title^="Reset the scale"]');
    return { visibility: getComputedStyle(b).visibility, label: b.getAttribute('aria-label'), text: b.textContent };
  });
  assert.is((await reset()).visibility, 'hidden', 'at 1/√d_k a greyed-out "1/√dₖ" read as an input field');
  await page.$eval(E, (el) => el.setAttribute('scale', '1'));
  await page.waitForFunction((sel) => document.querySelector(sel).config.scale === 1, E);
  const shown = await reset();
  assert.is(shown.visibility, 'visible');
  assert.match(shown.label, /^Reset the scale/);
  await context.close();
});

test('npm start serves only what the page needs: /.git/config, tests/ and sources are 404', async () => {
  const server = await serve({ port: 0 });
  try {
    const base = `http://127.0.0.1:${server.address().port}`;
    const status = async (path) => (await fetch(`${base}${path}`, { redirect: 'manual' })).status;
    for (const path of ['/', '/index.html', '/web/explorer.js', '/web/icon.svg', '/dist/attention-simd.wasm']) assert.is(await status(path), 200, path);
    for (const path of ['/.git/config', '/.git/HEAD', '/tests/explorer/element.test.js', '/package.json', '/c/attention.h', '/web/.hidden', '/node_modules/uvu/package.json', '/web/../.git/config']) {
      assert.is(await status(path), 404, path);
    }
  } finally {
    await new Promise((r) => server.close(r));
  }
});

test.run();
