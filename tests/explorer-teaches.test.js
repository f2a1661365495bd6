// The explorer as a teacher, in Chromium (playwright-core, the strict CSP):
// the fixed scale slider, the popover's current value, tap to inspect, the
// lines view, layouts at 1366, 720 and 390 px, the compact embed, word
// embeddings, −∞ for disallowed pairs, roving focus, axe-core, what npm start
// serves. Screenshots for people to look at go to tests/output/.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { serve } from '../scripts/serve.js';
import { OUTPUT, start } from './browser.js';

// The title of a saved SVG: its 16 px lines joined (it wraps to the picture's width).
const svgTitle = (svg) => [...svg.matchAll(/font-size="16" fill="#000">([^<]*)</g)].map((m) => m[1]).join(' ');
const require = createRequire(import.meta.url);
const AXE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const E = 'attention-explorer';
// The bound for the compact embed in a 720 px column.
const COMPACT_MAX_HEIGHT = 900;

async function settled(page, host = E) {
  await page.waitForFunction((sel) => {
    const el = document.querySelector(sel);
    return el && el.state && el.shadowRoot.querySelector('table[data-id="weights-0"], figure.lines');
  }, host);
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0))));
}

// Records Content-Security-Policy violations from the first script on.
async function watchCSP(page) {
  await page.addInitScript(() => {
    window.__violations = [];
    document.addEventListener('securitypolicyviolation', (e) => window.__violations.push(`${e.violatedDirective}: ${e.blockedURI}`));
  });
}

const popover = (page, host = E) => page.$eval(host, (el) => {
  const p = el.shadowRoot.querySelector('.popover');
  return { text: p.textContent, hidden: p.hidden };
});

const test = suite('the explorer teaches');
test.before(async (ctx) => {
  ctx.env = await start();
});
test.after(async ({ env }) => env?.close());

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
  assert.equal(await page.evaluate(() => window.__violations), []);
  assert.equal(problems, []);
  await page.context().close();
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

test('the popover sits beside the cell, lights its sources, and shows the current value after a mask and an edit', async ({ env }) => {
  const { page, problems } = await env.page({ viewport: { width: 1366, height: 900 } });
  await page.goto(`${env.base}/`);
  await settled(page);
  await page.focus(`${E} table[data-id="weights-0"] td[data-i="1"][data-j="2"]`);
  const first = await popover(page);
  assert.not.ok(first.hidden);
  assert.match(first.text, /^weight\(cat → sat\) = .* = 0\.0806$/);
  const geometry = await page.$eval(E, (el) => {
    const cell = el.shadowRoot.querySelector('table[data-id="weights-0"] td[data-i="1"][data-j="2"]').getBoundingClientRect();
    const pop = el.shadowRoot.querySelector('.popover').getBoundingClientRect();
    const lit = [...el.shadowRoot.querySelectorAll('table[data-id="scaled-0"] td.src')].map((td) => `${td.dataset.i},${td.dataset.j}`);
    return { dx: pop.left - cell.right, dy: Math.abs(pop.top - cell.top), lit };
  });
  assert.ok(geometry.dx >= 0 && geometry.dx < 40 && geometry.dy < 40, `beside the cell: ${JSON.stringify(geometry)}`);
  assert.equal(geometry.lit, ['1,0', '1,1', '1,2', '1,3'], 'the row of logits it comes from');
  // Mask another pair of the row: the weight grows and the popover follows.
  await page.evaluate((sel) => {
    const el = document.querySelector(sel);
    const mask = el.mask;
    mask[1][3] = false;
    el.mask = mask;
  }, E);
  await page.waitForFunction((sel) => document.querySelector(sel).state.weights.get(1, 3) === 0, E);
  const masked = await page.evaluate((sel) => document.querySelector(sel).state.weights.get(1, 2).toFixed(4), E);
  assert.is.not(masked, '0.0806');
  assert.ok((await popover(page)).text.endsWith(`= ${masked}`), `${(await popover(page)).text} ends with ${masked}`);
  // Edit X: the popover of the same weight shows the new value again.
  await page.evaluate((sel) => {
    const el = document.querySelector(sel);
    const X = el.state.X.toArray();
    X[2][0] = 3;
    el.inputs = { X };
  }, E);
  await page.waitForFunction(([sel, old]) => document.querySelector(sel).state.weights.get(1, 2).toFixed(4) !== old, [E, masked]);
  const edited = await page.evaluate((sel) => document.querySelector(sel).state.weights.get(1, 2).toFixed(4), E);
  assert.ok((await popover(page)).text.endsWith(`= ${edited}`), 'after the edit');
  assert.equal(problems, []);
  await page.context().close();
});

test('on a touch screen a tap inspects; masking is a separate mode', async ({ env }) => {
  const { page, problems } = await env.page({ viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true });
  await page.goto(`${env.base}/`);
  await settled(page);
  const cell = `${E} table[data-id="weights-0"] td[data-i="2"][data-j="1"]`;
  await page.tap(cell);
  await page.evaluate(() => new Promise((r) => setTimeout(r, 30)));
  const p = await popover(page);
  assert.not.ok(p.hidden);
  assert.match(p.text, /^weight\(sat → cat\) = /);
  assert.ok(await page.evaluate((sel) => document.querySelector(sel).state.weights.get(2, 1) > 0, E), 'not masked');
  assert.not.match(page.url(), /mask=/);
  // A tap beside the tables closes it.
  await page.tap(`${E} section.lead h2`);
  assert.ok((await popover(page)).hidden, 'closed by a tap elsewhere');
  await page.tap(`${E} button:has-text("Mask pairs")`);
  await page.tap(cell);
  await page.waitForFunction((sel) => document.querySelector(sel).state.weights.get(2, 1) === 0, E);
  // The address is written once changes pause.
  await page.waitForURL(/mask=1111\.1111\.1011\.1111/, { timeout: 2000 });
  assert.equal(problems, []);
  await page.context().close();
});

test('the lines view: a line per drawn pair and head, head toggles, a focused query shows only its lines, announced', async ({ env }) => {
  const { page, problems } = await env.page({ viewport: { width: 1366, height: 900 } });
  await page.goto(`${env.base}/?heads=2`);
  await settled(page);
  // The lines of one head: "M x1 y1L x2 y2" segments in the paths of its levels.
  const segments = (h) => page.$eval(E, (el, head) => [...el.shadowRoot.querySelectorAll(`figure.lines g.head-${head} path`)]
    .flatMap((p) => (p.getAttribute('d').match(/M[^M]+/g) ?? []).map((seg) => ({ level: Number(p.dataset.level), seg }))), h);
  const weights = await page.evaluate((sel) => document.querySelector(sel).state.weights.map((m) => m.toArray()), E);
  for (const h of [0, 1]) {
    assert.is((await segments(h)).length, weights[h].flat().filter((w) => w >= 0.005).length, `head ${h + 1}: one line per visible weight`);
  }
  const info = await page.$eval(E, (el) => ({ toggles: el.shadowRoot.querySelectorAll('.head-toggle').length, summary: [...el.shadowRoot.querySelectorAll('figure.lines li')].map((li) => li.textContent) }));
  assert.is(info.toggles, 2);
  assert.match(info.summary[1], /^head 1: cat attends most to \w+, 0\.\d{4}; head 2: cat attends most to \w+, 0\.\d{4}$/);
  // Keyboard: focus the first query, arrow down to "cat": only its lines stay.
  await page.focus(`${E} figure.lines text.query[data-q="0"]`);
  await page.keyboard.press('ArrowDown');
  const shown = await page.$eval(E, (el) => ({ focused: el.shadowRoot.activeElement?.getAttribute('data-q'), live: el.shadowRoot.querySelector('figure.lines [aria-live]').textContent }));
  assert.equal(shown.focused, '1');
  assert.match(shown.live, /cat attends most to/);
  const row = await segments(0);
  assert.is(row.length, weights[0][1].filter((w) => w >= 0.005).length, 'only the lines of "cat"');
  const y1 = new Set(row.map(({ seg }) => seg.split(/[ L]/)[1]));
  assert.is(y1.size, 1, 'all from one query');
  // The heaviest weight of the row is drawn at the highest level.
  const top = row.reduce((a, b) => (b.level > a.level ? b : a));
  const keyY = await page.$eval(E, (el, j) => el.shadowRoot.querySelector(`figure.lines text.key[data-k="${j}"]`).getAttribute('y'), weights[0][1].indexOf(Math.max(...weights[0][1])));
  assert.ok(top.seg.endsWith(` ${keyY}`), `${top.seg} ends at the key's y ${keyY}`);
  await page.click(`${E} .head-toggle.head-1`);
  assert.is(await page.$eval(E, (el) => el.shadowRoot.querySelector('figure.lines g.head-1').getAttribute('display')), 'none');
  assert.equal(problems, []);
  await page.context().close();
});

test('disallowed pairs: −∞ logits and hatched weights, in the page and the export title', async ({ env }) => {
  const { page, problems } = await env.page();
  await page.goto(`${env.base}/?causal=1&mask=1111.1111.0111.1111`);
  await settled(page);
  await page.waitForFunction((sel) => document.querySelector(sel).state.weights.get(2, 0) === 0, E);
  const scaled = await page.$$eval(`${E} table[data-id="scaled-0"] tbody tr`, (rows) => rows.map((r) => [...r.querySelectorAll('td[data-i]')].map((td) => td.textContent)));
  assert.equal(scaled.map((row) => row.map((x) => x === '−∞')), [
    [false, true, true, true], [false, false, true, true], [true, false, false, true], [false, false, false, false]]);
  const hatched = await page.$$eval(`${E} table[data-id="weights-0"] td.masked`, (tds) => tds.length);
  assert.is(hatched, 7);
  const svg = await page.$eval(E, (el) => el.toSVG());
  assert.match(svgTitle(svg), /causal, mask: 1 pair masked, no window, scale 0\.577/);
  assert.is((svg.match(/>−∞</g) ?? []).length, 7);
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

test('one tab stop per table; arrows move between row labels and cells', async ({ env }) => {
  const { page, problems } = await env.page();
  await page.goto(`${env.base}/`);
  await settled(page);
  const stops = await page.$eval(E, (el) => [...el.shadowRoot.querySelectorAll('table')].map((t) => t.querySelectorAll('[tabindex="0"]').length));
  assert.ok(stops.length >= 10);
  assert.ok(stops.every((n) => n === 1), JSON.stringify(stops));
  await page.focus(`${E} table[data-id="scores-0"] td[data-i="1"][data-j="0"]`);
  await page.keyboard.press('ArrowLeft');
  const label = await page.$eval(E, (el) => el.shadowRoot.activeElement.textContent);
  assert.is(label, 'cat');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowRight');
  const cell = await page.$eval(E, (el) => el.shadowRoot.activeElement.getAttribute('aria-label'));
  assert.match(cell, /^row sat, column the: /);
  const ring = await page.$eval(E, (el) => {
    const s = getComputedStyle(el.shadowRoot.activeElement);
    return { outline: `${s.outlineStyle} ${s.outlineWidth}`, inner: s.boxShadow };
  });
  assert.equal(ring.outline, 'solid 3px', 'the outer ring of the two-colour focus ring');
  assert.match(ring.inner, /inset/, 'the inner ring');
  assert.equal(problems, []);
  await page.context().close();
});

for (const heads of [1, 4]) {
  test(`no horizontal overflow at 390 px with ${heads} head(s); every table is visible or scrolls`, async ({ env }) => {
    const { page, problems } = await env.page({ viewport: { width: 390, height: 844 } });
    await page.goto(`${env.base}/?heads=${heads}&tokens=one+two+three+four+five+six`);
    await settled(page);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.is(overflow, 0);
    await checkTablesFit(page, heads * 4 + 7);
    assert.equal(problems, []);
    await page.context().close();
  });
}

for (const width of [1366, 720]) {
  test(`with 4 heads at ${width} px every head's tables are fully visible or scrollable`, async ({ env }) => {
    const { page, problems } = await env.page({ viewport: { width, height: 900 } });
    await page.goto(`${env.base}/?heads=4&tokens=a+b+c+d+e+f+g+h`);
    await settled(page);
    assert.is(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth), 0);
    await checkTablesFit(page, 4 * 4 + 7);
    assert.equal(problems, []);
    await page.context().close();
  });
}

// Every table is inside the explorer's width, or its scroll box is (and scrolls).
async function checkTablesFit(page, expected) {
  const report = await page.$eval(E, async (el) => {
    const frames = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    const out = [];
    // Each table is looked at on screen, as a reader sees it (off screen, sections skip rendering).
    for (const f of el.shadowRoot.querySelectorAll('figure.matrix')) {
      f.scrollIntoView({ block: 'center' });
      await frames();
      const host = el.getBoundingClientRect();
      const box = f.querySelector('.scroll');
      const r = f.querySelector('table').getBoundingClientRect();
      const b = box.getBoundingClientRect();
      const inside = r.left >= host.left - 1 && r.right <= host.right + 1;
      // A table that scrolls says so: its caption reads "scroll →" and its cut edge fades.
      const scrolls = box.scrollWidth > box.clientWidth && getComputedStyle(box).overflowX === 'auto' && b.right <= host.right + 1 &&
        f.classList.contains('overflowing') && getComputedStyle(f.querySelector('figcaption .shape'), '::after').content.includes('scroll');
      out.push({ id: f.dataset.id, ok: inside || scrolls });
    }
    return out;
  });
  assert.is(report.length, expected, 'tables');
  assert.equal(report.filter((r) => !r.ok), []);
}

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
  assert.equal(await page.evaluate(() => window.__violations), []);
  assert.equal(problems, []);
  await page.context().close();
});

test('axe-core: no serious or critical violations on the page and the compact embed, light and dark', async ({ env }) => {
  for (const colorScheme of ['light', 'dark']) {
    for (const path of ['/?heads=2&causal=1', '/tests/pages/compact.html']) {
      // axe is injected as a script, which the page's own CSP would rightly refuse.
      const { page, context } = await env.page({ bypassCSP: true, colorScheme });
      await page.goto(`${env.base}${path}`);
      await settled(page);
      await page.focus(`${E} table[data-id="weights-0"] td[data-i="1"][data-j="1"]`);
      await page.addScriptTag({ content: AXE });
      const violations = await page.evaluate(async () => {
        const result = await window.axe.run(document, { resultTypes: ['violations'] });
        return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
          .map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`);
      });
      assert.equal(violations, [], `${path} ${colorScheme}`);
      await context.close();
    }
  }
});

test('npm start serves only what the page needs: /.git/config, tests/ and sources are 404', async () => {
  const server = await serve({ port: 0 });
  try {
    const base = `http://127.0.0.1:${server.address().port}`;
    const status = async (path) => (await fetch(`${base}${path}`, { redirect: 'manual' })).status;
    for (const path of ['/', '/index.html', '/web/explorer.js', '/web/icon.svg', '/dist/attention-simd.wasm']) assert.is(await status(path), 200, path);
    for (const path of ['/.git/config', '/.git/HEAD', '/tests/explorer.test.js', '/package.json', '/c/attention.h', '/web/.hidden', '/node_modules/uvu/package.json', '/web/../.git/config']) {
      assert.is(await status(path), 404, path);
    }
  } finally {
    await new Promise((r) => server.close(r));
  }
});

test('screenshots of the page and the compact embed at 1366 and 390 px, light and dark', async ({ env }) => {
  for (const colorScheme of ['light', 'dark']) {
    for (const width of [1366, 390]) {
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
