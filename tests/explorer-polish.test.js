// The explorer as a newcomer meets it, in Chromium (playwright-core): what a
// compact embed says and shows, the size of the lines view, numbers that fit
// their cells on a phone, a popover that stays in the window, one tab stop
// for the lines view, a Copy button beside its table. Each test fails on the
// version before its fix.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { start } from './browser.js';

const E = 'attention-explorer';
// Toolbar controls are about 30 px tall; one row with padding stays under this.
const ONE_TOOLBAR_ROW = 56;
// Lines of a four-token sentence need rows taller than the 22 px of a long one
// to tell their widths apart.
const LINES_MIN_HEIGHT = 140;

async function settled(page, host = E) {
  await page.waitForFunction((sel) => {
    const els = [...document.querySelectorAll(sel)];
    return els.length > 0 && els.every((el) => el.state && el.shadowRoot.querySelector('table[data-id="weights-0"], figure.lines'));
  }, host);
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0))));
}

// The deepest focused element, through shadow roots.
const focused = (page) => page.evaluate(() => {
  let a = document.activeElement;
  while (a?.shadowRoot?.activeElement) a = a.shadowRoot.activeElement;
  return { tag: a?.tagName, q: a?.dataset?.q ?? null };
});

const test = suite('explorer polish');
test.before(async (ctx) => {
  ctx.env = await start();
});
test.after(async ({ env }) => env?.close());

test('controls="minimal": no pointer to a hidden "Mask pairs", no reset button, one toolbar row in a 720 px column', async ({ env }) => {
  const { page, problems } = await env.page({ viewport: { width: 1366, height: 900 } });
  await page.goto(`${env.base}/tests/pages/compact.html`);
  await settled(page, `${E}#one`);
  const seen = await page.$eval(`${E}#one`, (el) => {
    const root = el.shadowRoot;
    const visible = (node) => node && node.getClientRects().length > 0;
    const buttons = [...root.querySelectorAll('.toolbar button')].filter(visible).map((b) => b.textContent);
    return {
      explanation: root.querySelector('section.lead .explanation').textContent,
      title: root.querySelector('section.lead h2').textContent,
      buttons,
      toolbar: root.querySelector('.toolbar').getBoundingClientRect().height,
    };
  });
  assert.not.match(seen.explanation, /Mask pairs/, 'the text points to no control the embed hides');
  assert.match(seen.explanation, /Hatched cells/);
  assert.equal(seen.title, 'Attention weights', 'no "Step 3" where steps 1 and 2 are not shown');
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

test('the lines view of a short sentence is large at 1366 px and fits a 390 px phone unscaled', async ({ env }) => {
  for (const [viewport, mobile] of [[{ width: 1366, height: 900 }, false], [{ width: 390, height: 844 }, true]]) {
    const { page, context } = await env.page({ viewport, ...(mobile ? { isMobile: true, hasTouch: true } : {}) });
    await page.goto(`${env.base}/`);
    await settled(page);
    const svg = await page.$eval(E, (el) => {
      const s = el.shadowRoot.querySelector('figure.lines svg');
      const r = s.getBoundingClientRect();
      return { width: r.width, height: r.height, natural: Number(s.getAttribute('width')) };
    });
    assert.ok(svg.height >= LINES_MIN_HEIGHT, `${viewport.width} px: lines view ${svg.height} px tall`);
    assert.ok(Math.abs(svg.width - svg.natural) < 1, `${viewport.width} px: drawn ${svg.width} px wide of ${svg.natural} (text shrinks when scaled down)`);
    await context.close();
  }
});

test('at 390 px every number fits inside its cell', async ({ env }) => {
  const { page, context } = await env.page({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
  await page.goto(`${env.base}/`);
  await settled(page);
  const spill = await page.$eval(E, (el) => {
    const range = document.createRange();
    return [...el.shadowRoot.querySelectorAll('td[data-i]')].filter((td) => {
      range.selectNodeContents(td);
      const text = range.getBoundingClientRect(), cell = td.getBoundingClientRect();
      return text.left < cell.left + 1 || text.right > cell.right - 1;
    }).map((td) => `${td.closest('table').dataset.id}[${td.dataset.i}][${td.dataset.j}] ${td.textContent}`);
  });
  assert.equal(spill, [], `numbers wider than their cell: ${spill.slice(0, 5).join(', ')}`);
  await context.close();
});

test('the popover never ends below the window: under a cell at the bottom it opens above it', async ({ env }) => {
  const { page, context } = await env.page({ viewport: { width: 1366, height: 900 } });
  await page.goto(`${env.base}/?tokens=${Array.from({ length: 12 }, (_, i) => `w${i}`).join('+')}`);
  await settled(page);
  const cell = await page.evaluateHandle((sel) => document.querySelector(sel).shadowRoot.querySelector('table[data-id="scores-0"] td[data-i="11"][data-j="11"]'), E);
  await cell.scrollIntoViewIfNeeded();
  const before = await cell.boundingBox();
  await page.mouse.wheel(0, before.y - 870);
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
  assert.ok(pop.bottom <= box.y, 'and does not cover the cell');
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

test('the lines view is one tab stop: Tab from the settings lands on a query token', async ({ env }) => {
  const { page, context } = await env.page({ viewport: { width: 1366, height: 900 } });
  await page.goto(`${env.base}/`);
  await settled(page);
  await page.$eval(E, (el) => el.shadowRoot.querySelector('details.settings > summary').focus());
  await page.keyboard.press('Tab');
  assert.equal(await focused(page), { tag: 'text', q: '0' });
  await page.keyboard.press('ArrowDown');
  assert.equal(await focused(page), { tag: 'text', q: '1' });
  await page.keyboard.press('Shift+Tab');
  assert.equal((await focused(page)).tag, 'SUMMARY', 'Shift+Tab goes straight back: no stop on the svg');
  await context.close();
});

test('a table\'s Copy button sits by the table, not at the far edge of the page', async ({ env }) => {
  const { page, context } = await env.page({ viewport: { width: 1366, height: 900 } });
  await page.goto(`${env.base}/`);
  await settled(page);
  // The figure is as wide as its table, or as its caption where that is wider.
  const gaps = await page.$eval(E, (el) => [...el.shadowRoot.querySelectorAll('figure.matrix')].map((f) => {
    const copy = f.querySelector('details.copy').getBoundingClientRect();
    return {
      id: f.dataset.id,
      gap: copy.right - f.querySelector('table').getBoundingClientRect().right,
      slack: copy.left - f.querySelector('figcaption .shape').getBoundingClientRect().right,
    };
  }));
  assert.ok(gaps.length >= 8);
  for (const { id, gap, slack } of gaps) assert.ok(gap <= 8 || slack <= 12, `${id}: Copy ends ${gap} px right of its table`);
  await context.close();
});

test('at 390 px a cell reached by the arrow keys is never behind the sticky toolbar', async ({ env }) => {
  const { page, context } = await env.page({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
  await page.goto(`${env.base}/?tokens=${Array.from({ length: 16 }, (_, i) => `t${i}`).join('+')}`);
  await settled(page);
  await page.$eval(E, (el) => el.shadowRoot.querySelector('table[data-id="scores-0"] td[data-i="15"][data-j="0"]').focus());
  for (let k = 0; k < 15; k++) {
    await page.keyboard.press('ArrowUp');
    const gap = await page.$eval(E, (el) => {
      const cell = el.shadowRoot.activeElement.getBoundingClientRect();
      return cell.top - el.shadowRoot.querySelector('.toolbar').getBoundingClientRect().bottom;
    });
    assert.ok(gap >= 0, `row ${14 - k}: the focused cell's top is ${-gap} px under the toolbar`);
  }
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

test('a drag leaves off-screen tables for later: they show the current numbers when they come on screen and when the drag ends', async ({ env }) => {
  const { page, context, problems } = await env.page({ viewport: { width: 1366, height: 900 }, reducedMotion: 'reduce' });
  await page.goto(`${env.base}/?tokens=${Array.from({ length: 32 }, (_, i) => `t${i}`).join('+')}&heads=2`);
  await settled(page);
  // Which cells of the scaled scores and of head 2's weights differ from the element's state.
  const wrong = () => page.evaluate(async (sel) => {
    const { fixed } = await import('/web/explorer/format.js');
    const el = document.querySelector(sel);
    const out = [];
    for (const [id, m, digits] of [['scaled-0', el.state.scaled[0], 3], ['weights-1', el.state.weights[1], 4]]) {
      const tds = el.shadowRoot.querySelectorAll(`table[data-id="${id}"] td[data-i]`);
      tds.forEach((td, k) => { if (td.textContent !== fixed(m.data[k], digits)) out.push(`${id}[${k}] ${td.textContent} != ${fixed(m.data[k], digits)}`); });
    }
    return out;
  }, E);
  const drag = (positions) => page.evaluate(async ({ sel, positions }) => {
    const slider = document.querySelector(sel).shadowRoot.querySelector('input[type="range"]');
    for (const p of positions) {
      await new Promise((r) => requestAnimationFrame(r));
      slider.value = String(p);
      slider.dispatchEvent(new Event('input', { bubbles: true }));
    }
  }, { sel: E, positions });
  await drag([0.5, 1, 1.5, 2]);
  // Still dragging (no change event, no pause): bring the scaled scores on screen.
  await page.evaluate((sel) => {
    const box = document.querySelector(sel).shadowRoot.querySelector('section.step-scaled');
    window.scrollTo(0, box.getBoundingClientRect().top + scrollY);
    document.querySelector(sel).shadowRoot.querySelector('input[type="range"]').dispatchEvent(new Event('input', { bubbles: true }));
  }, E);
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  const onScreen = (await wrong()).filter((w) => w.startsWith('scaled'));
  assert.equal(onScreen, [], 'a table that came on screen during the drag shows the current numbers');
  await drag([-1, -2]);
  await page.$eval(E, (el) => el.shadowRoot.querySelector('input[type="range"]').dispatchEvent(new Event('change', { bubbles: true })));
  assert.equal(await wrong(), [], 'after the drag every table shows the current numbers');
  await drag([3]);
  await page.waitForTimeout(400);
  assert.equal(await wrong(), [], 'a pause ends a drag too');
  // What the lines view says follows once the drag ends.
  const spoken = await page.evaluate(async (sel) => {
    const { attendsMost } = await import('/web/explorer/text.js');
    const el = document.querySelector(sel);
    return [...el.shadowRoot.querySelectorAll('figure.lines text.query')].map((label, i) => ({
      said: label.getAttribute('aria-label'),
      want: el.state.weights.map((m, h) => `head ${h + 1}: ${attendsMost(el.state.tokens, m, i)}`).join('; '),
    }));
  }, E);
  assert.is(spoken.length, 32);
  for (const { said, want } of spoken) assert.is(said, want);
  assert.equal(problems, []);
  await context.close();
});

test.run();
