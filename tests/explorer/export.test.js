// Export: the picture's title and the saved SVG (hatching, −∞, lines) in
// Node, then in Chromium (playwright-core, the strict CSP) copying a table
// and saving SVG and PNG.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { loadAttention } from '../../web/attention.js';
import { computeExample, normalizeConfig } from '../../web/worked/computation.js';
import { snapshotView } from '../../web/explorer/export.js';
import { PARTS } from '../../web/worked/settings.js';
import { toSVG } from '../../web/explorer/snapshot.js';
import { attendsMost, blockedReason, snapshotTitle } from '../../web/worked/text.js';
import { EXPLORER as E, settled, start, svgTitle } from '../browser.js';

const picture = suite('the exported picture');
picture.before(async (ctx) => {
  ctx.attn = await loadAttention();
});

const context = (attn, overrides = {}, mask = null) => {
  const config = normalizeConfig(overrides);
  const example = computeExample(attn, config, {}, mask ?? undefined);
  return { config, example, mask, edits: new Map(), inputs: {}, scaleIsDefault: overrides.scale === undefined };
};

picture('attendsMost names the strongest key; a picture’s title states causal, mask, window and scale', ({ attn }) => {
  const ctx = context(attn);
  assert.is(attendsMost(ctx.config.tokens, ctx.example.heads[0].weights, 1), 'cat attends most to cat, 0.3769');
  const title = snapshotTitle(ctx.config, { maskedPairs: 2, scaleIsDefault: true });
  assert.match(title, /“the cat sat there”/);
  assert.match(title, /not causal, mask: 2 pairs masked, no window, scale 0\.577 = 1\/√3/);
  assert.match(snapshotTitle({ ...ctx.config, causal: true, scale: 2 }, { scaleIsDefault: false }), /causal, no mask, no window, scale 2\.000 = 3\.46 × 1\/√3/);
});

picture('the exported picture hatches disallowed pairs, writes −∞ logits and draws the lines', ({ attn }) => {
  const ctx = context(attn, { causal: true });
  const view = snapshotView({
    config: ctx.config, example: ctx.example, parts: new Set(PARTS), step: 'all', maskedPairs: 0, scaleIsDefault: true, enabledHeads: [],
    blocked: (i, j) => blockedReason(ctx.config, null, 4, i, j),
  });
  const svg = toSVG(view);
  assert.match(svg, /<pattern id="hatch"/);
  // 6 causal pairs, hatched in the logits and in the weights.
  assert.is((svg.match(/class="blocked"/g) ?? []).length, 12);
  assert.is((svg.match(/>−∞</g) ?? []).length, 6);
  assert.match(svgTitle(svg), /causal, no mask, no window, scale 0\.577/);
  assert.ok((svg.match(/<line /g) ?? []).length >= 10, 'lines of the lines view');
});

picture.run();

const test = suite('copy and save in Chromium');
test.before(async (ctx) => {
  ctx.env = await start();
});
test.after(async ({ env }) => env?.close());

test('a table copies as numpy; Save SVG and Save PNG download the view', async ({ env }) => {
  const { page, problems } = await env.page({ reducedMotion: 'reduce' });
  await page.goto(`${env.base}/?step=scaled`);
  await settled(page);
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
  await page.context().close();
});

test('the PNG draws every label where the SVG has it, and no two titles run together', async ({ env }) => {
  const { page, problems, context } = await env.page();
  await page.goto(`${env.base}/?heads=2`);
  await settled(page);
  const r = await page.evaluate(async () => {
    const { snapshotView } = await import('/web/explorer/export.js');
    const { paint } = await import('/web/explorer/snapshot.js');
    const { blockedReason } = await import('/web/worked/text.js');
    const { PARTS } = await import('/web/worked/settings.js');
    const el = document.querySelector('attention-explorer');
    const config = el.config;
    // What toSVG() writes, and what the PNG's canvas is told: each text with its alignment.
    const svg = el.toSVG();
    const doc = new DOMParser().parseFromString(svg, 'image/svg+xml');
    const anchors = [...doc.querySelectorAll('text')].map((t) => `${t.textContent}@${t.getAttribute('x')},${t.getAttribute('y')}:${t.getAttribute('text-anchor') ?? 'start'}`);
    const { computeExample } = await import('/web/worked/computation.js');
    const { loadAttention } = await import('/web/attention.js');
    const example = computeExample(await loadAttention(), config, { X: el.state.X, WQ: el.state.WQ, WK: el.state.WK, WV: el.state.WV });
    const view = snapshotView({ config, example, parts: new Set(PARTS), step: 'all', maskedPairs: 0, scaleIsDefault: true, enabledHeads: [],
      blocked: (i, j) => blockedReason(config, null, config.tokens.length, i, j) });
    const drawn = [];
    const real = document.createElement('canvas').getContext('2d');
    const ctx = new Proxy(real, {
      get(target, key) {
        if (key === 'fillText') return (text, x, y) => { drawn.push({ text, x, y, align: target.textAlign, width: target.measureText(text).width, font: target.font }); };
        const v = target[key];
        return typeof v === 'function' ? v.bind(target) : v;
      },
      set(target, key, value) { target[key] = value; return true; },
    });
    paint(ctx, view);
    const ALIGN = { left: 'start', center: 'middle', right: 'end' };
    const painted = drawn.map((d) => `${d.text}@${d.x},${d.y}:${ALIGN[d.align]}`);
    // Titles of tables on one line: each ends before the next begins.
    const titles = drawn.filter((d) => d.font.startsWith('bold 13px'));
    const overlaps = [];
    for (const a of titles) for (const b of titles) if (a !== b && a.y === b.y && a.x < b.x && a.x + a.width > b.x - 4) overlaps.push(`${a.text} | ${b.text}`);
    return { anchors, painted, overlaps };
  });
  assert.equal(r.painted.filter((p) => !r.anchors.includes(p)), [], 'texts the PNG aligns differently from the SVG');
  assert.ok(r.painted.some((p) => p.endsWith(':end')), 'the query labels are right-aligned');
  assert.equal(r.overlaps, []);
  assert.equal(problems, []);
  await context.close();
});

test.run();
