// The <attention-explorer> element's public face: attributes and properties
// (set before the module loads too), the events, bad input, and the types in
// web/explorer.d.ts against what the module and the settings table define.
// The browser suite runs in Chromium (playwright-core) under the strict CSP.
import { readFileSync } from 'node:fs';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { loadAttention } from '../../web/attention.js';
import * as explorerModule from '../../web/explorer.js';
import { EMBEDDINGS, LIMITS, computeExample, normalizeConfig } from '../../web/worked/computation.js';
import { DIGITS, fixed } from '../../web/worked/format.js';
import { CONTROLS, PARTS, SETTINGS, STEPS } from '../../web/worked/settings.js';
import { EXPLORER as E, OUTPUT, cellTexts, popover, settled, start, svgTitle } from '../browser.js';

const textsOf = (m, digits) => m.toArray().map((row) => row.map((x) => fixed(x, digits)));

// ---- the types ------------------------------------------------------------

const DTS = readFileSync(new URL('../../web/explorer.d.ts', import.meta.url), 'utf8');

// The body of `class name` or `interface name` in the .d.ts.
function body(name) {
  const head = new RegExp(`(?:class|interface) ${name}\\b[^{]*\\{`).exec(DTS);
  if (!head) throw new Error(`web/explorer.d.ts declares no ${name}`);
  let depth = 1, k = head.index + head[0].length;
  const from = k;
  for (; depth > 0; k++) depth += DTS[k] === '{' ? 1 : DTS[k] === '}' ? -1 : 0;
  return DTS.slice(from, k - 1);
}

// The members of a class or interface, { name, isStatic, doc } each: the
// lines of its body outside nested braces that declare a name, with the doc
// comment right above.
function members(name) {
  const out = [];
  let doc = '', depth = 0;
  for (const line of body(name).split('\n')) {
    if (/^\s*\/\*\*/.test(line)) doc = line;
    else if (/^\s*\*/.test(line)) doc += line;
    const m = depth === 0 && /^\s*(static\s+)?(?:readonly\s+)?([A-Za-z_]\w*|'[^']+')\??\s*[:(]/.exec(line);
    if (m) {
      out.push({ name: m[2].replace(/'/g, ''), isStatic: Boolean(m[1]), doc });
      doc = '';
    }
    for (const c of line) depth += c === '{' ? 1 : c === '}' ? -1 : 0;
  }
  return out;
}

// The string literals of `export type name = 'a' | 'b'`.
function union(name) {
  const m = new RegExp(`export type ${name} = ([^;]+);`).exec(DTS);
  if (!m) throw new Error(`web/explorer.d.ts declares no type ${name}`);
  return [...m[1].matchAll(/'([^']*)'/g)].map((x) => x[1]);
}

const sorted = (xs) => [...xs].sort();
// Callbacks the browser calls, not API a page uses.
const LIFECYCLE = ['constructor', 'connectedCallback', 'disconnectedCallback', 'attributeChangedCallback'];

const types = suite('web/explorer.d.ts against the module');
const { AttentionExplorer } = explorerModule;

types('the module exports what the .d.ts declares as values, and nothing else', () => {
  const declared = [...DTS.matchAll(/^export declare (?:class|const|function) (\w+)/gm)].map((m) => m[1]);
  assert.equal(sorted(Object.keys(explorerModule)), sorted(declared));
});

types('every row of the settings table is a declared property whose doc names its attribute', () => {
  const declared = new Map(members('AttentionExplorer').filter((m) => !m.isStatic).map((m) => [m.name, m]));
  assert.ok(SETTINGS.length > 10);
  for (const s of SETTINGS) {
    const member = declared.get(s.key);
    assert.ok(member, `${s.key} (attribute ${s.attr}) is not declared on AttentionExplorer`);
    assert.ok(member.doc.includes(`\`${s.attr}\``), `the doc of ${s.key} names its attribute \`${s.attr}\`: ${member.doc}`);
  }
});

types('the class declares exactly its runtime properties, methods and statics', () => {
  const declared = members('AttentionExplorer');
  const instance = Object.getOwnPropertyNames(AttentionExplorer.prototype).filter((k) => !LIFECYCLE.includes(k));
  assert.equal(sorted(declared.filter((m) => !m.isStatic).map((m) => m.name)), sorted(instance));
  const statics = Object.getOwnPropertyNames(AttentionExplorer).filter((k) => !['length', 'name', 'prototype', 'observedAttributes'].includes(k));
  assert.equal(sorted(declared.filter((m) => m.isStatic).map((m) => m.name)), sorted(statics));
  assert.ok(statics.includes('LIMITS'));
});

types('LIMITS, the steps, parts, controls and embeddings are typed as they are', () => {
  assert.equal(sorted(members('ExplorerLimits').map((m) => m.name)), sorted(Object.keys(LIMITS)));
  assert.equal(AttentionExplorer.LIMITS, LIMITS);
  assert.equal(union('ExplorerStep'), ['all', ...STEPS]);
  assert.equal(union('ExplorerPart'), [...PARTS]);
  assert.equal(union('ExplorerControls'), [...CONTROLS]);
  assert.equal(union('ExplorerEmbeddings'), [...EMBEDDINGS]);
});

// The names an interface takes from another by `extends Pick<Other, 'a' | 'b'>`.
function picked(name, from) {
  const m = new RegExp(`interface ${name} extends Pick<${from}, ([^>]+)>`).exec(DTS);
  return m ? [...m[1].matchAll(/'([^']*)'/g)].map((x) => x[1]) : [];
}

types('the attention-change detail holds every setting that changes the numbers, and step, mask, edited', () => {
  const want = [...SETTINGS.filter((s) => s.compute).map((s) => s.key), 'step', 'mask', 'edited'];
  const fromElement = picked('ExplorerChangeDetail', 'AttentionExplorer');
  assert.ok(fromElement.length > 0, 'the detail takes the properties that read back the same from the element');
  const own = members('ExplorerChangeDetail').map((m) => m.name);
  assert.equal(own.filter((k) => fromElement.includes(k)), [], 'declared once');
  assert.equal(sorted([...own, ...fromElement]), sorted(want));
});

types('every event the explorer fires is in HTMLElementEventMap', () => {
  const dir = new URL('../../web/explorer/', import.meta.url);
  const fired = new Set();
  for (const file of ['element.js', 'toolbar.js', 'steps-view.js', 'popover.js', 'train-view.js', 'lines.js']) {
    for (const m of readFileSync(new URL(file, dir), 'utf8').matchAll(/new CustomEvent\('([^']+)'/g)) fired.add(m[1]);
  }
  assert.ok(fired.has('attention-change'));
  assert.equal(sorted(members('HTMLElementEventMap').map((m) => m.name).filter((n) => n.startsWith('attention-'))), sorted(fired));
});

types.run();

// ---- the element in a browser --------------------------------------------------

const test = suite('explorer element in Chromium');
test.before(async (ctx) => {
  ctx.env = await start();
  ctx.attn = await loadAttention();
});
test.after(async ({ env }) => env?.close());

test('properties set before the module loads take effect, and later sets still reach the element', async ({ env, attn }) => {
  const { page, problems } = await env.page();
  await page.goto(`${env.base}/tests/pages/embed-late.html`);
  await page.evaluate(async (sel) => {
    const el = document.createElement(sel);
    // An undefined element: these become own properties until the module upgrades it.
    el.tokens = 'one two three';
    el.seed = 5;
    el.causal = true;
    el.explanations = { weights: 'Set before the upgrade.' };
    document.querySelector('main').append(el);
    await import('/web/explorer.js');
  }, E);
  await settled(page);
  const seen = await page.evaluate((sel) => {
    const el = document.querySelector(sel);
    return {
      own: Object.keys(el), tokens: el.getAttribute('tokens'), seed: el.getAttribute('seed'), causal: el.hasAttribute('causal'),
      state: el.state.tokens, explanation: el.shadowRoot.querySelector('section.lead slot').textContent,
    };
  }, E);
  assert.equal(seen.own, [], 'no own property shadows an accessor');
  assert.equal([seen.tokens, seen.seed, seen.causal], ['one two three', '5', true]);
  assert.equal(seen.state, ['one', 'two', 'three']);
  assert.is(seen.explanation, 'Set before the upgrade.');
  const ex = computeExample(attn, normalizeConfig({ tokens: ['one', 'two', 'three'], seed: 5, causal: true }));
  assert.equal(await cellTexts(page, 'weights-0'), textsOf(ex.heads[0].weights, 4));
  await page.evaluate((sel) => {
    const el = document.querySelector(sel);
    el.tokens = 'four five';
    el.causal = false;
  }, E);
  await page.waitForFunction((sel) => document.querySelector(sel).state.tokens.join(' ') === 'four five', E);
  assert.equal(await page.evaluate((sel) => [document.querySelector(sel).getAttribute('tokens'), document.querySelector(sel).config.causal], E), ['four five', false]);
  assert.equal(problems, []);
  await page.context().close();
});

test('a highlight asked for before the first view waits for it, and then lights its cells', async ({ env }) => {
  const { page, problems } = await env.page();
  await page.goto(`${env.base}/tests/pages/embed-late.html`);
  await page.evaluate(async (sel) => {
    await import('/web/explorer.js');
    const el = document.createElement(sel);
    el.setAttribute('show', 'weights');
    document.querySelector('main').append(el);
    // Connected, not computed yet: the story may ask this early (a block already in view).
    el.highlight({ part: 'weights', row: 'cat' });
    el.highlight({ part: 'weights', row: 'cat' });
  }, E);
  await settled(page);
  const lit = await page.$eval(E, (el) => [...el.shadowRoot.querySelectorAll('table[data-id="weights-0"] td.story')].map((td) => td.dataset.i));
  assert.equal(lit, ['1', '1', '1', '1']);
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
    ['tokens', Array.from({ length: 1000 }, (_, i) => `w${i}`).join(' '), /at most 512 tokens, got 1000/]]) {
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

test('window, softcap and query-offset attributes: −∞ outside the window, the logits row, c·tanh(x/c) in the popover', async ({ env }) => {
  const { page, problems } = await env.page();
  await page.goto(`${env.base}/?window=1&softcap=2&query-offset=0`);
  await settled(page);
  const scaled = await page.$$eval(`${E} table[data-id="scaled-0"] tbody tr`, (rows) => rows.map((r) => [...r.querySelectorAll('td[data-i]')].map((td) => td.textContent)));
  assert.equal(scaled.map((row) => row.map((x) => x === '−∞')), [
    [false, false, true, true], [false, false, false, true], [true, false, false, false], [true, true, false, false]]);
  const state = await page.evaluate((sel) => {
    const el = document.querySelector(sel);
    return { logits: el.state.logits.toArray(), scaled: el.state.scaled.toArray(), title: el.shadowRoot.querySelector('section.step-scaled h2').textContent };
  }, E);
  assert.is(state.logits[0][3], -Infinity, 'outside the window');
  assert.ok(Math.abs(state.logits[1][1] - 2 * Math.tanh(state.scaled[1][1] / 2)) < 1e-5);
  assert.match(state.title, /^Step 2: logits = 2·tanh\(score × 0\.577 \/ 2\)$/);
  await page.hover(`${E} table[data-id="scaled-0"] td[data-i="1"][data-j="1"]`);
  assert.match((await popover(page)).text, /c·tanh\(x \/ c\) with c = 2/);
  const svg = await page.$eval(E, (el) => el.toSVG());
  assert.match(svgTitle(svg), /window 1 back, 1 ahead/);
  assert.match(svgTitle(svg), /softcap 2\)$/);
  // The settings fields show the attributes; changing a field changes the attribute.
  await page.click(`${E} details.settings summary`);
  await page.fill(`${E} input[placeholder="left right"]`, '0 -1');
  await page.press(`${E} input[placeholder="left right"]`, 'Enter');
  await page.waitForFunction((sel) => document.querySelector(sel).getAttribute('window') === '0 -1', E);
  await page.waitForFunction((sel) => document.querySelector(sel).state.weights.get(1, 0) === 0, E);
  assert.equal(problems, []);
  await page.context().close();
});

test('embeddings="word": a repeated word gets equal rows of X, and equal rows of weights', async ({ env }) => {
  const { page, problems } = await env.page();
  await page.goto(`${env.base}/?tokens=the+cat+saw+the+dog&embeddings=word`);
  await settled(page);
  const rows = await page.$$eval(`${E} table[data-id="X"] tbody tr`, (trs) => trs.map((r) => [...r.querySelectorAll('td[data-i]')].map((td) => td.textContent)));
  assert.equal(rows[0], rows[3]);
  assert.not.equal(rows[0], rows[1]);
  const weights = await page.evaluate((sel) => document.querySelector(sel).state.weights.toArray(), E);
  assert.equal(weights[0], weights[3]);
  assert.is(await page.$eval(E, (el) => el.shadowRoot.querySelector('details.settings select').value), 'word');
  assert.equal(problems, []);
  await page.context().close();
});

test.run();
