// The canvas heatmaps in Chromium (playwright-core, the strict CSP): past
// 16 tokens the token-by-token steps are canvases with the tables' keyboard
// grid (one tab stop, arrows, Home to the row label, Enter chooses the
// query), moves announced, the derivation popover of a hovered cell with
// its sources outlined, zoom; the 512-token limit and the refusal past it;
// the text view; outside attention's grid limit; no long task while a
// BERT-base-sized attention (512 tokens x 12 x 12) loads; page text never
// becomes markup.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { fixed } from '../../web/worked/format.js';
import { EXPLORER as E, axeViolations, settled, start } from '../browser.js';

// The longest task allowed while 512 x 12 x 12 weights load and paint.
// The aim is 200 ms on an idle machine (the longest measured at load 14 on
// 2 cores was 190 ms); this bound is for a loaded CI machine (at load 25-30
// the longest were 0.5-1.1 s, everything there runs 5-10 times slower). It
// is under the one task the load was before it went a head per task: the
// copy, the check of 38 million weights and 144 thumbnails took 0.94 s in
// one task at load 19; a page blocked by 10,000 layers (5 s) fails it too.
const LONG_TASK_BOUND_MS = 1500;

const words = (n, prefix = 'w') => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

const test = suite('canvas heatmaps in Chromium');
test.before(async (ctx) => {
  ctx.env = await start();
});
test.after(async ({ env }) => env?.close());

test('past 16 tokens the steps are canvases; 16 keep their tables', async ({ env }) => {
  const { page, context, problems } = await env.page({ viewport: { width: 1366, height: 900 } });
  await page.goto(`${env.base}/?tokens=${words(16).join('+')}`);
  await settled(page);
  const count = () => page.$eval(E, (el) => [el.shadowRoot.querySelectorAll('canvas[data-id]').length, el.shadowRoot.querySelectorAll('table[data-id^="weights-"]').length]);
  assert.equal(await count(), [0, 1]);
  await page.$eval(E, (el, t) => el.setAttribute('tokens', t), words(17).join(' '));
  await settled(page);
  assert.equal(await count(), [3, 0], 'scores, logits and weights on canvas');
  assert.equal(problems, []);
  await context.close();
});

test('axe finds nothing serious on a page of canvases and the text view', async ({ env }) => {
  // bypassCSP: axe is injected as an inline script.
  const { page, context } = await env.page({ viewport: { width: 1366, height: 900 }, bypassCSP: true });
  await page.goto(`${env.base}/?tokens=${words(40).join('+')}`);
  await settled(page);
  assert.equal(await axeViolations(page), []);
  await context.close();
});

test('the keyboard grid on a canvas: arrows move one cell, each move announced; Home reaches the row label, Enter chooses the query', async ({ env }) => {
  const { page, context, problems } = await env.page({ viewport: { width: 1366, height: 900 } });
  await page.goto(`${env.base}/?tokens=${words(40).join('+')}`);
  await settled(page);
  const cursor = `${E} .heat-box[data-id="weights-0"] [role="gridcell"]`;
  assert.is(await page.$$eval(`${E} .heat-box[data-id="weights-0"] [tabindex="0"]`, (n) => n.length), 1, 'one tab stop');
  await page.focus(cursor);
  for (const key of ['ArrowRight', 'ArrowRight', 'ArrowDown', 'ArrowDown', 'ArrowDown']) await page.keyboard.press(key);
  const at = await page.$eval(cursor, (c) => [Number(c.dataset.i), Number(c.dataset.j), c.getAttribute('aria-label'), c.getAttribute('aria-colindex'), c.parentElement.getAttribute('aria-rowindex')]);
  const w = await page.$eval(E, (el) => el.state.weights.data[3 * 40 + 2]);
  assert.equal(at, [3, 2, `row w3, column w2: ${fixed(w, 4)}`, '4', '5']);
  const said = await page.$eval(`${E} figure.heatmap[data-id="weights-0"] [aria-live]`, (p) => p.textContent);
  assert.is(said, at[2], 'the move is announced');
  assert.ok(await page.$eval(E, (el) => el.shadowRoot.activeElement?.matches('.heat-cursor')), 'focus stays on the keyboard cell');
  // The focused cell's derivation shows, as a table cell's does.
  const pop = await page.$eval(E, (el) => { const p = el.shadowRoot.querySelector('.popover'); return [p.hidden, p.querySelector('.formula').textContent]; });
  assert.equal(pop[0], false);
  assert.match(pop[1], /^weight\(w3 → w2\) = exp/);
  await page.keyboard.press('Home');
  assert.equal(await page.$eval(cursor, (c) => [c.dataset.i, c.dataset.j]), ['3', '-1']);
  assert.match(await page.$eval(`${E} figure.heatmap[data-id="weights-0"] [aria-live]`, (p) => p.textContent), /^w3: row label/);
  await page.keyboard.press('Enter');
  await page.waitForTimeout(50);
  const chosen = await page.$$eval(`${E} .tokens-text .tok[aria-pressed="true"]`, (n) => n.map((t) => t.dataset.t));
  assert.equal(chosen, ['3'], 'Enter on a row label chooses that query (the text view shades by it)');
  await page.keyboard.press('Control+End');
  assert.equal(await page.$eval(cursor, (c) => [c.dataset.i, c.dataset.j]), ['39', '39']);
  assert.equal(problems, []);
  await context.close();
});

test('hovering a cell shows its derivation and outlines its sources; zoom writes the numbers', async ({ env }) => {
  const { page, context, problems } = await env.page({ viewport: { width: 1366, height: 900 }, deviceScaleFactor: 2 });
  await page.goto(`${env.base}/?tokens=${words(24).join('+')}`);
  await settled(page);
  const canvas = `${E} canvas[data-id="weights-0"]`;
  await page.$eval(canvas, (c) => c.scrollIntoView({ block: 'center' }));
  // A canvas that was off screen keeps no pixels until the observer says it is back.
  await page.waitForFunction((sel) => document.querySelector(sel).shadowRoot.querySelector('canvas[data-id="weights-0"]').width > 0, E);
  const dims = await page.$eval(canvas, (c) => ({ w: c.width, cssW: c.getBoundingClientRect().width }));
  assert.ok(Math.abs(dims.w - 2 * dims.cssW) <= 2, `the backing store is devicePixelRatio x the css size (${dims.w} for ${dims.cssW})`);
  // Cell (5, 7): the layout's own box, from the module.
  const point = await page.evaluate(async (sel) => {
    const { cellBox, labelWidth, layoutHeatmap } = await import('/web/explorer/heatmap-layout.js');
    const el = document.querySelector(sel);
    const c = el.shadowRoot.querySelector('canvas[data-id="weights-0"]');
    const box = c.getBoundingClientRect();
    const L = layoutHeatmap({ rows: 24, cols: 24, width: c.parentElement.firstElementChild.getBoundingClientRect().width, labels: labelWidth(el.state.tokens), chars: 6 });
    const b = cellBox(L, 5, 7);
    return { x: box.left + b.x + b.w / 2, y: box.top + b.y + b.h / 2 };
  }, E);
  await page.mouse.move(point.x, point.y);
  await page.waitForTimeout(100);
  const seen = await page.$eval(E, (el) => {
    const p = el.shadowRoot.querySelector('.popover');
    return { hidden: p.hidden, text: p.querySelector('.formula').textContent, bars: p.querySelectorAll('.d-bar').length,
      sources: el.shadowRoot.querySelectorAll('.heat-box[data-id="scaled-0"] .heat-mark.src').length,
      target: el.shadowRoot.querySelectorAll('.heat-box[data-id="weights-0"] .heat-mark.target').length };
  });
  assert.is(seen.hidden, false);
  assert.match(seen.text, /^weight\(w5 → w7\) = exp/);
  assert.ok(seen.bars > 0, 'the popover draws the operands');
  assert.is(seen.sources, 1, 'the row of logits it comes from is outlined');
  assert.is(seen.target, 1);
  // Zoomed in, a cell is big enough for its number: the canvas is redrawn larger per cell.
  const before = await page.$eval(`${E} figure.heatmap[data-id="weights-0"] .where`, (s) => s.textContent);
  assert.is(before, '');
  await page.click(`${E} figure.heatmap[data-id="weights-0"] button[aria-label="Zoom in"]`);
  assert.match(await page.$eval(`${E} figure.heatmap[data-id="weights-0"] .where`, (s) => s.textContent), /^rows \d+–\d+, columns \d+–\d+$/);
  await page.click(`${E} figure.heatmap[data-id="weights-0"] button[aria-label="All tokens"]`);
  assert.is(await page.$eval(`${E} figure.heatmap[data-id="weights-0"] .where`, (s) => s.textContent), '');
  assert.equal(problems, []);
  await context.close();
});

test('Mask pairs on a canvas: a click masks the pair under the pointer, Space on the keyboard cell unmasks it', async ({ env }) => {
  const { page, context, problems } = await env.page({ viewport: { width: 1366, height: 900 } });
  await page.goto(`${env.base}/?tokens=${words(20).join('+')}`);
  await settled(page);
  await page.$eval(E, (el) => { el.masking = true; });
  await page.$eval(E, (el) => el.shadowRoot.querySelector('canvas[data-id="weights-0"]').scrollIntoView());
  await page.waitForFunction((sel) => document.querySelector(sel).shadowRoot.querySelector('canvas[data-id="weights-0"]').width > 0, E);
  const point = await page.evaluate(async (sel) => {
    const { cellBox, labelWidth, layoutHeatmap } = await import('/web/explorer/heatmap-layout.js');
    const el = document.querySelector(sel);
    const c = el.shadowRoot.querySelector('canvas[data-id="weights-0"]');
    const box = c.getBoundingClientRect();
    const L = layoutHeatmap({ rows: 20, cols: 20, width: c.parentElement.firstElementChild.getBoundingClientRect().width, labels: labelWidth(el.state.tokens), chars: 6 });
    const b = cellBox(L, 2, 5);
    return { x: box.left + b.x + b.w / 2, y: box.top + b.y + b.h / 2 };
  }, E);
  await page.mouse.click(point.x, point.y);
  await page.waitForTimeout(100);
  assert.equal(await page.$eval(E, (el) => [el.mask[2][5], el.mask[2][4], el.state.weights.get(2, 5)]), [false, true, 0]);
  await page.keyboard.press('Space');
  await page.waitForTimeout(100);
  const back = await page.$eval(E, (el) => [el.mask[2][5], el.state.weights.get(2, 5)]);
  assert.is(back[0], true);
  assert.ok(back[1] > 0);
  assert.equal(problems, []);
  await context.close();
});

test('a story\'s highlight lights its cells on a canvas and dims the rest', async ({ env }) => {
  const { page, context, problems } = await env.page({ viewport: { width: 1366, height: 900 } });
  await page.goto(`${env.base}/?tokens=${words(20).join('+')}`);
  await settled(page);
  await page.$eval(E, (el) => el.highlight({ part: 'weights', row: 3 }));
  await page.$eval(E, (el) => el.shadowRoot.querySelector('canvas[data-id="weights-0"]').scrollIntoView());
  await page.waitForFunction((sel) => document.querySelector(sel).shadowRoot.querySelector('canvas[data-id="weights-0"]').width > 0, E);
  await page.waitForTimeout(100);
  const alpha = await page.evaluate(async (sel) => {
    const { cellBox, labelWidth, layoutHeatmap } = await import('/web/explorer/heatmap-layout.js');
    const el = document.querySelector(sel);
    const c = el.shadowRoot.querySelector('canvas[data-id="weights-0"]');
    const L = layoutHeatmap({ rows: 20, cols: 20, width: c.parentElement.firstElementChild.getBoundingClientRect().width, labels: labelWidth(el.state.tokens), chars: 6 });
    const dpr = c.width / c.getBoundingClientRect().width;
    const copy = document.createElement('canvas');
    copy.width = c.width;
    copy.height = c.height;
    const ctx = copy.getContext('2d');
    ctx.drawImage(c, 0, 0);
    // A cell's corner pixel: its colour, not its number.
    const at = (i, j) => { const b = cellBox(L, i, j); return ctx.getImageData(Math.round((b.x + 2) * dpr), Math.round((b.y + 2) * dpr), 1, 1).data[3]; };
    return [at(3, 0), at(3, 19), at(5, 0), at(19, 19)];
  }, E);
  assert.equal(alpha, [255, 255, 70, 70], 'row 3 lit, the other rows dimmed');
  assert.equal(problems, []);
  await context.close();
});

test('a change of colour scheme redraws the canvas in the other palette', async ({ env }) => {
  const { page, context, problems } = await env.page({ viewport: { width: 1366, height: 900 }, colorScheme: 'light' });
  await page.goto(`${env.base}/?tokens=${words(20).join('+')}`);
  await settled(page);
  // The colour at the middle of the first cell of the raw scores, read back from the canvas.
  const pixel = () => page.$eval(E, (el) => {
    const c = el.shadowRoot.querySelector('canvas[data-id="scores-0"]');
    const copy = document.createElement('canvas');
    copy.width = c.width;
    copy.height = c.height;
    const ctx = copy.getContext('2d');
    ctx.drawImage(c, 0, 0);
    const x = Math.round(c.width * 0.5), y = Math.round(c.height * 0.5);
    return [...ctx.getImageData(x, y, 1, 1).data];
  });
  const light = await pixel();
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.waitForTimeout(200);
  const dark = await pixel();
  assert.not.equal(dark, light, 'the same cell has its dark colour');
  const { sequential, diverging } = await import('../../web/explorer/colors.js');
  const lum = ([r, g, b]) => r + g + b;
  assert.ok(lum(dark) < lum(light), `dark ${dark} is darker than light ${light}`);
  assert.ok(sequential && diverging);
  assert.equal(problems, []);
  await context.close();
});

test('512 tokens load, with the text view; 513 are refused with the limit named and the last view kept', async ({ env }) => {
  const { page, context, problems } = await env.page({ viewport: { width: 1366, height: 900 } });
  await page.goto(`${env.base}/`);
  await settled(page);
  await page.$eval(E, (el, t) => el.setAttribute('tokens', t), words(512).join(' '));
  await page.waitForFunction((sel) => document.querySelector(sel).state?.tokens.length === 512, E, { timeout: 60000 });
  await settled(page);
  const shown = await page.$eval(E, (el) => ({
    message: el.shadowRoot.querySelector('.message').textContent,
    canvases: el.shadowRoot.querySelectorAll('canvas[data-id]').length,
    tokens: el.shadowRoot.querySelectorAll('.tokens-text .tok').length,
    limit: el.constructor.LIMITS.tokens,
  }));
  assert.equal(shown, { message: '', canvases: 3, tokens: 512, limit: 512 });
  await page.click(`${E} .tokens-text .tok[data-t="300"]`);
  const shaded = await page.$$eval(`${E} .tokens-text .tok`, (n) => n.filter((t) => /\bhs\d+\b/.test(t.className)).length);
  assert.is(shaded, 512, 'every token is shaded by the chosen word\'s weight');
  await page.$eval(E, (el, t) => el.setAttribute('tokens', t), words(513).join(' '));
  await page.waitForTimeout(100);
  const refused = await page.$eval(E, (el) => [el.shadowRoot.querySelector('.message').textContent, el.state.tokens.length]);
  assert.match(refused[0], /at most 512 tokens, got 513/);
  assert.is(refused[1], 512, 'the last good view stays');
  assert.equal(problems, []);
  await context.close();
});

test('outside attention past the grid is refused at once, naming the limit', async ({ env }) => {
  const { page, context, problems } = await env.page();
  await page.goto(`${env.base}/`);
  await settled(page);
  const out = await page.evaluate(async (sel) => {
    const el = document.querySelector(sel);
    const message = () => el.shadowRoot.querySelector('.message').textContent;
    const layer = [[[1, 0], [0, 1]]];
    const t0 = performance.now();
    el.attentions = { tokens: ['a', 'b'], attention: Array.from({ length: 10000 }, () => layer) };
    await new Promise((r) => setTimeout(r, 20));
    const nested = [message(), performance.now() - t0];
    el.attentions = { tokens: ['a', 'b'], attention: new Float32Array(4 * 30000), shape: [30000, 1, 2, 2] };
    await new Promise((r) => setTimeout(r, 20));
    const flat = message();
    el.attentions = { tokens: ['a', 'b'], attention: new Float32Array(4 * 2 * 65), shape: [2, 65, 2, 2] };
    await new Promise((r) => setTimeout(r, 20));
    const heads = message();
    el.attentions = { tokens: ['a', 'b'], attention: new Float32Array(4 * 40 * 40), shape: [40, 40, 2, 2] };
    await new Promise((r) => setTimeout(r, 20));
    return { nested, flat, heads, grid: message(), thumbs: el.shadowRoot.querySelectorAll('button.thumb').length };
  }, E);
  assert.match(out.nested[0], /10000 layers x 1 heads; the model view's grid shows at most 64 layers/);
  assert.match(out.flat, /30000 layers x 1 heads; the model view's grid shows at most 64 layers/);
  assert.match(out.heads, /2 layers x 65 heads; the model view's grid shows at most 64 heads a layer/);
  assert.match(out.grid, /40 layers x 40 heads = 1600 heads; the model view's grid shows at most 1024 in all/);
  assert.is(out.thumbs, 0, 'nothing was drawn');
  assert.equal(problems, []);
  await context.close();
});

test('BERT-base-sized attention (512 tokens x 12 layers x 12 heads) loads and paints with no long task past the bound', async ({ env }) => {
  const { page, context, problems } = await env.page({ viewport: { width: 1366, height: 900 } });
  await page.goto(`${env.base}/`);
  await settled(page);
  // Made in a task of its own: making 38 million numbers is itself a long task, not the explorer's.
  await page.evaluate(() => {
    const n = 512, L = 12, H = 12;
    const data = new Float32Array(L * H * n * n);
    // Each head: half its weight on one key near the query (a shifted diagonal), the rest spread evenly.
    for (let m = 0; m < L * H; m++) {
      for (let i = 0; i < n; i++) {
        const row = data.subarray((m * n + i) * n, (m * n + i + 1) * n);
        row.fill(0.5 / n);
        row[(i + (m % 5) - 2 + n) % n] += 0.5;
      }
    }
    window.bert = { tokens: Array.from({ length: n }, (_, i) => `tok${i}`), attention: data, shape: [L, H, n, n], source: 'BERT-like' };
  });
  await page.waitForTimeout(100);
  const out = await page.evaluate(async ({ sel, bound }) => {
    const L = 12, H = 12;
    const long = [];
    const observer = new PerformanceObserver((list) => { for (const e of list.getEntries()) long.push(e.duration); });
    observer.observe({ type: 'longtask' });
    await new Promise((r) => setTimeout(r, 50));
    const el = document.querySelector(sel);
    el.attentions = window.bert;
    const root = el.shadowRoot;
    const t0 = performance.now();
    while (root.querySelectorAll('button.thumb').length < L * H || !root.querySelector('canvas[data-id="weights-0"]')) {
      if (performance.now() - t0 > 60000) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    // A canvas off screen keeps no pixels: scrolled to, the weights paint.
    root.querySelector('canvas[data-id="weights-0"]').scrollIntoView();
    while (!(root.querySelector('canvas[data-id="weights-0"]').width > 0) && performance.now() - t0 < 60000) await new Promise((r) => setTimeout(r, 20));
    const painted = root.querySelector('canvas[data-id="weights-0"]').width > 0;
    await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 50)));
    observer.disconnect();
    return {
      longest: Math.max(0, ...long), tasks: long.map(Math.round), bound, message: root.querySelector('.message').textContent,
      thumbs: root.querySelectorAll('button.thumb').length, weights: Boolean(root.querySelector('canvas[data-id="weights-0"]')),
      painted, tokens: el.state.tokens.length,
    };
  }, { sel: E, bound: LONG_TASK_BOUND_MS });
  assert.equal({ message: out.message, thumbs: out.thumbs, weights: out.weights, painted: out.painted, tokens: out.tokens },
    { message: '', thumbs: 144, weights: true, painted: true, tokens: 512 });
  assert.ok(out.longest < LONG_TASK_BOUND_MS, `longest task ${out.longest.toFixed(0)} ms (bound ${LONG_TASK_BOUND_MS}; long tasks ${out.tasks.join(', ')} ms)`);
  assert.equal(problems, []);
  await context.close();
});

test('hostile tokens stay text: canvas labels, the text view and outside attention make no markup', async ({ env }) => {
  const { page, context, problems } = await env.page({ viewport: { width: 1366, height: 900 } });
  await page.goto(`${env.base}/`);
  await settled(page);
  const hostile = ['<img/src=x/onerror=alert(1)>', '<script>alert(2)</script>', '"><b>x</b>', '&amp;', '<style>*{}</style>'];
  const tokens = Array.from({ length: 40 }, (_, i) => hostile[i % hostile.length] + i);
  await page.$eval(E, (el, t) => el.setAttribute('tokens', t), tokens.join(' '));
  await settled(page);
  const texts = await page.$$eval(`${E} .tokens-text .tok`, (n) => n.map((t) => t.textContent));
  assert.equal(texts, tokens);
  await page.focus(`${E} .heat-box[data-id="scores-0"] [role="gridcell"]`);
  await page.keyboard.press('ArrowDown');
  assert.is(await page.$eval(`${E} .heat-box[data-id="scores-0"] [role="gridcell"]`, (c) => c.getAttribute('aria-label').split(', column')[0]), `row ${tokens[1]}`);
  await page.evaluate(({ sel, tokens }) => {
    const n = tokens.length;
    const m = Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (i === j ? 1 : 0)));
    document.querySelector(sel).attentions = { tokens, attention: [[m]], source: '<img src=y onerror=alert(3)>' };
  }, { sel: E, tokens });
  await page.waitForTimeout(100);
  const injected = await page.$eval(E, (el) => el.shadowRoot.querySelectorAll('img, script, b, style:not(:first-of-type)').length);
  assert.is(injected, 0);
  assert.ok(await page.$eval(E, (el) => el.shadowRoot.querySelector('.model-part').textContent.includes('<img src=y onerror=alert(3)>')), 'the source is shown as text');
  assert.equal(problems, []);
  await context.close();
});

test.run();
