// The explorer inside other pages, in Chromium (playwright-core, the strict
// CSP): an article that only imports the module, a moved wasm, Web Workers,
// the compact embed (controls="minimal") in a 720 px column, axe-core on the
// page, the compact embed and both colour schemes, and screenshots for
// people to look at in tests/output/.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { loadAttention } from '../../web/attention.js';
import { computeExample, normalizeConfig } from '../../web/worked/computation.js';
import { fixed } from '../../web/worked/format.js';
import { EXPLORER as E, OUTPUT, axeViolations, cellTexts, cspViolations, settled, start, watchCSP } from '../browser.js';
import { handbookTables } from '../helpers.js';

const expected = handbookTables();
const textsOf = (m, digits) => m.toArray().map((row) => row.map((x) => fixed(x, digits)));
// Toolbar controls are about 30 px tall; one row with padding stays under this.
const ONE_TOOLBAR_ROW = 56;
// The tallest a compact embed may be in a 720 px column: under a laptop's
// first screen, so the figure and the text around it are seen together.
const COMPACT_MAX_HEIGHT = 900;

const test = suite('embedding in Chromium');
test.before(async (ctx) => {
  ctx.env = await start();
  ctx.attn = await loadAttention();
});
test.after(async ({ env }) => env?.close());

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

test('controls="minimal": no heading or text of its own, no reset button, one toolbar row in a 720 px column', async ({ env }) => {
  const { page, problems } = await env.page({ viewport: { width: 1366, height: 900 } });
  await page.goto(`${env.base}/tests/pages/compact.html`);
  await settled(page, `${E}#one`);
  const seen = await page.$eval(`${E}#one`, (el) => {
    const root = el.shadowRoot;
    const visible = (node) => node && node.getClientRects().length > 0;
    const buttons = [...root.querySelectorAll('.toolbar button')].filter(visible).map((b) => b.textContent);
    return {
      words: root.querySelectorAll('section h2, section .explanation').length,
      label: root.querySelector('section.lead').getAttribute('aria-label'),
      buttons,
      toolbar: root.querySelector('.toolbar').getBoundingClientRect().height,
    };
  });
  // A compact embed is a figure: the article writes the words, the section keeps its name.
  assert.is(seen.words, 0, 'no heading or explanation of its own');
  assert.equal(seen.label, 'Attention weights', 'no "Step 3" where steps 1 and 2 are not shown');
  assert.equal(seen.buttons, [], `visible toolbar buttons: ${seen.buttons}`);
  assert.ok(seen.toolbar <= ONE_TOOLBAR_ROW, `toolbar ${seen.toolbar} px tall`);
  // The full page keeps both.
  await page.goto(`${env.base}/`);
  await settled(page);
  const full = await page.$eval(E, (el) => ({
    explanation: el.shadowRoot.querySelector('section.lead .explanation').textContent,
    title: el.shadowRoot.querySelector('section.lead h2').textContent,
  }));
  assert.match(full.explanation, /Mask pairs/);
  assert.match(full.title, /^Step 3/);
  assert.equal(problems, []);
  await page.context().close();
});

test('the compact embed fits a 720 px column in at most 900 px; controls="minimal" shows scale, causal, heads', async ({ env }) => {
  const { page, problems } = await env.page({ viewport: { width: 1366, height: 900 } });
  await watchCSP(page);
  await page.goto(`${env.base}/tests/pages/compact.html`);
  await settled(page, '#one');
  await settled(page, '#two');
  await settled(page, '#four');
  for (const id of ['#one', '#two', '#four']) {
    const info = await page.$eval(id, (el) => {
      const visible = (sel) => [...el.shadowRoot.querySelectorAll(sel)].filter((n) => n.getClientRects().length > 0).length;
      return {
        height: el.getBoundingClientRect().height,
        width: el.getBoundingClientRect().width,
        sections: [...el.shadowRoot.querySelectorAll('section')].map((s) => s.dataset.step),
        slider: visible('input[type="range"]'), causal: visible('input[type="checkbox"]'), heads: visible('.field.heads input'),
        tokens: visible('.field.tokens input'), settings: visible('details.settings'),
      };
    });
    assert.ok(info.height <= COMPACT_MAX_HEIGHT, `${id}: ${info.height} px tall`);
    assert.ok(info.width <= 720, `${id}: ${info.width} px wide`);
    assert.equal(info.sections, ['weights'], `${id}: only the attention section`);
    assert.equal([info.slider, info.causal, info.heads, info.tokens, info.settings], [1, 1, 1, 0, 0], `${id}: minimal controls`);
  }
  // Four heads: the tables open on head 1 behind a picker; "all heads" shows the four.
  const shown = () => page.$eval('#four', (el) => [...el.shadowRoot.querySelectorAll('figure.matrix')].filter((f) => f.getClientRects().length > 0).map((f) => f.dataset.head));
  assert.equal(await shown(), ['0']);
  await page.selectOption('#four >> select[aria-label="head shown in the tables"]', 'head 3');
  assert.equal(await shown(), ['2']);
  await page.selectOption('#four >> select[aria-label="head shown in the tables"]', 'all heads');
  assert.equal(await shown(), ['0', '1', '2', '3']);
  assert.is(await page.$eval('#one', (el) => el.shadowRoot.querySelector('.field.head-pick').getClientRects().length), 0, 'no picker for one head');
  assert.equal(await cspViolations(page), []);
  assert.equal(problems, []);
  await page.context().close();
});

test('axe-core finds no serious or critical violations (light and dark)', async ({ env }) => {
  for (const colorScheme of ['light', 'dark']) {
    // axe is injected as a script, which the page's own CSP would rightly refuse.
    const { page, context } = await env.page({ bypassCSP: true, colorScheme });
    await page.goto(`${env.base}/?heads=2`);
    await settled(page);
    const violations = await axeViolations(page);
    assert.equal(violations, [], colorScheme);
    await context.close();
  }
});

test('axe-core: no serious or critical violations on the page and the compact embed, light and dark', async ({ env }) => {
  for (const colorScheme of ['light', 'dark']) {
    for (const path of ['/?heads=2&causal=1', '/tests/pages/compact.html']) {
      // axe is injected as a script, which the page's own CSP would rightly refuse.
      const { page, context } = await env.page({ bypassCSP: true, colorScheme });
      await page.goto(`${env.base}${path}`);
      await settled(page);
      await page.focus(`${E} table[data-id="weights-0"] td[data-i="1"][data-j="1"]`);
      const violations = await axeViolations(page);
      assert.equal(violations, [], `${path} ${colorScheme}`);
      await context.close();
    }
  }
});

test('screenshots of the page and the compact embed at 1366, 720 and 390 px, light and dark', async ({ env }) => {
  for (const colorScheme of ['light', 'dark']) {
    for (const width of [1366, 720, 390]) {
      for (const [name, path] of [['page', '/?heads=2&causal=1'], ['compact', '/tests/pages/compact.html']]) {
        const { page, context, problems } = await env.page({ viewport: { width, height: 900 }, colorScheme, reducedMotion: 'reduce' });
        await page.goto(`${env.base}${path}`);
        await settled(page);
        await page.hover(`${E} table[data-id="weights-0"] td[data-i="2"][data-j="1"]`);
        const file = `${OUTPUT}explorer-${name}-${width}-${colorScheme}.png`;
        await page.screenshot({ path: file, fullPage: name === 'compact' });
        assert.equal(problems, [], file);
        await context.close();
      }
    }
  }
});

test.run();
