// The toolbar in Chromium (playwright-core, the strict CSP): the scale
// slider's track stays put under the pointer through a whole drag, the
// toolbar keeps its height whatever the readout says, the hidden reset
// button keeps no row of its own, and step mode opens on the first step shown.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { EXPLORER as E, settled, start } from '../browser.js';

// How far the thumb may sit from the pointer: half a slider step (64 steps
// over the track) is under 1.5 px at the narrowest track, plus rounding.
const THUMB_TOLERANCE_PX = 2;
// Chromium's range thumb is 16 px wide (its centre runs from 8 px in from
// each end of the track).
const THUMB_PX = 16;

const test = suite('toolbar in Chromium');
test.before(async (ctx) => {
  ctx.env = await start();
});
test.after(async ({ env }) => env?.close());

const slider = (page) => page.$eval(E, (el) => {
  const s = el.shadowRoot.querySelector('input[type="range"]');
  const r = s.getBoundingClientRect();
  return { left: r.left, width: r.width, top: r.top, height: r.height, value: Number(s.value), min: Number(s.min), max: Number(s.max) };
});

for (const width of [1366, 390]) {
  test(`at ${width} px the thumb stays within ${THUMB_TOLERANCE_PX} px of the pointer through a full drag, and the toolbar keeps its height`, async ({ env }) => {
    const { page, problems, context } = await env.page({ viewport: { width, height: 800 }, reducedMotion: 'reduce' });
    await page.goto(`${env.base}/`);
    await settled(page);
    const toolbarHeight = () => page.$eval(E, (el) => el.shadowRoot.querySelector('.toolbar').getBoundingClientRect().height);
    const height0 = await toolbarHeight();
    const s0 = await slider(page);
    const centre = (s) => s.left + THUMB_PX / 2 + ((s.value - s.min) / (s.max - s.min)) * (s.width - THUMB_PX);
    const y = s0.top + s0.height / 2;
    // Grab the thumb where it is (the default scale, the middle) and drag to the right end, then steadily to the left end.
    let x = centre(s0);
    await page.mouse.move(x, y);
    await page.mouse.down();
    const worst = { gap: 0, at: null };
    const heights = new Set([height0]);
    const visit = async (to) => {
      await page.mouse.move(to, y);
      await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0))));
      const s = await slider(page);
      // Only where the pointer is over the track can the thumb follow it.
      if (to >= s.left + THUMB_PX / 2 && to <= s.left + s.width - THUMB_PX / 2) {
        const gap = Math.abs(centre(s) - to);
        if (gap > worst.gap) Object.assign(worst, { gap, at: { to, left: s.left, value: s.value } });
      }
      heights.add(await toolbarHeight());
    };
    for (; x < s0.left + s0.width; x += 6) await visit(x);
    for (; x > s0.left; x -= 3) await visit(x);
    await page.mouse.up();
    assert.ok(worst.gap <= THUMB_TOLERANCE_PX, `thumb ${worst.gap.toFixed(1)} px from the pointer: ${JSON.stringify(worst.at)}`);
    assert.equal([...heights], [height0], 'the toolbar changed height during the drag');
    assert.ok(await page.$eval(E, (el) => el.scale !== null && el.getAttribute('scale') !== null), 'the drag changed the scale');
    assert.equal(problems, []);
    await context.close();
  });
}

test('at 390 px the scale\'s reset button shares the readout\'s row: no blank row for it while it is hidden', async ({ env }) => {
  const { page, problems, context } = await env.page({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
  await page.goto(`${env.base}/`);
  await settled(page);
  const rows = () => page.$eval(E, (el) => {
    const top = (q) => el.shadowRoot.querySelector(q).getBoundingClientRect().top;
    return { readout: top('.scale-text'), reset: top('.scale-reset'), hidden: getComputedStyle(el.shadowRoot.querySelector('.scale-reset')).visibility === 'hidden' };
  });
  const before = await rows();
  assert.ok(before.hidden, 'at the default scale the reset is not drawn');
  assert.ok(Math.abs(before.reset - before.readout) < 8, `reset at ${before.reset}, readout at ${before.readout}`);
  await page.$eval(E, (el) => { el.scale = 2; });
  await settled(page);
  const after = await rows();
  assert.not.ok(after.hidden);
  assert.ok(Math.abs(after.reset - after.readout) < 8);
  assert.equal(problems, []);
  await context.close();
});

test('"Step by step" opens on the first step shown: inputs on the full page, weights in a lines-and-weights embed', async ({ env }) => {
  const { page, problems, context } = await env.page({ reducedMotion: 'reduce' });
  await page.goto(`${env.base}/`);
  await settled(page);
  await page.locator(E).evaluate((el) => { el.shadowRoot.querySelector('details.settings').open = true; });
  await page.click(`${E} .settings button:has-text("Step by step")`);
  await settled(page);
  assert.is(await page.$eval(E, (el) => el.step), 'inputs');
  assert.equal(await page.$$eval(`${E} section.step`, (s) => s.map((x) => x.dataset.step)), ['inputs']);
  await page.$eval(E, (el) => { el.step = 'all'; el.show = 'lines weights'; });
  await settled(page);
  await page.click(`${E} .settings button:has-text("Step by step")`);
  await settled(page);
  assert.is(await page.$eval(E, (el) => el.step), 'weights');
  assert.equal(problems, []);
  await context.close();
});

test.run();
