// Screenshots to look at (tests/output/look-*.png): the front page with its
// parts, and the model view training from scratch, at 1366, 720 and 390 px,
// light and dark; no width scrolls sideways. Then the model view by keyboard
// alone: Tab to Train from scratch, Enter, Tab to Play, Enter, and it trains.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { EXPLORER as E, OUTPUT, settled, start } from '../browser.js';

const WIDTHS = [1366, 720, 390];
const SCHEMES = ['light', 'dark'];
const SENTENCE = 'the+cat+sat+on+the+mat+with+my+old+friend';

const status = (page, re) => page.waitForFunction((source) => new RegExp(source).test(document.querySelector('attention-explorer')
  .shadowRoot.querySelector('.model-status')?.textContent ?? ''), re.source, { timeout: 120_000 });

const test = suite('how the parts look, in Chromium');
test.before(async (ctx) => {
  ctx.env = await start();
});
test.after(async ({ env }) => env?.close());

for (const colorScheme of SCHEMES) {
  test(`the front page and its parts list, ${colorScheme}, at ${WIDTHS.join(', ')} px`, async ({ env }) => {
    for (const width of WIDTHS) {
      const { page, problems, context } = await env.page({ viewport: { width, height: 900 }, colorScheme });
      await page.goto(`${env.base}/`);
      await settled(page);
      assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= innerWidth), `no sideways scroll at ${width}`);
      await page.screenshot({ path: `${OUTPUT}look-front-${width}-${colorScheme}.png` });
      await page.locator('#parts').scrollIntoViewIfNeeded();
      await page.screenshot({ path: `${OUTPUT}look-parts-${width}-${colorScheme}.png` });
      assert.equal(problems, []);
      await context.close();
    }
  });

  test(`the model view training from scratch, ${colorScheme}, at ${WIDTHS.join(', ')} px`, async ({ env }) => {
    for (const width of WIDTHS) {
      const { page, problems, context } = await env.page({ viewport: { width, height: 900 }, colorScheme });
      await page.goto(`${env.base}/?model=induction&tokens=${SENTENCE}+${SENTENCE}`);
      await status(page, /^Showing/);
      await page.locator(`${E} .model-train button`, { hasText: 'Train from scratch' }).click();
      await status(page, /^step 0\b/);
      await page.locator(`${E} .model-train button`, { hasText: 'Play' }).click();
      await status(page, /^step [1-9]\d* · /);
      await page.waitForTimeout(2000);
      assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= innerWidth), `no sideways scroll at ${width}`);
      await page.locator(`${E} .model-part`).screenshot({ path: `${OUTPUT}look-training-${width}-${colorScheme}.png` });
      assert.equal(problems, []);
      await context.close();
    }
  });
}

test('by keyboard: Tab to Train from scratch, Enter, Tab to Play, Enter; Space pauses', async ({ env }) => {
  const { page, problems } = await env.page({ viewport: { width: 1366, height: 900 } });
  await page.goto(`${env.base}/?model=induction`);
  await status(page, /^Showing/);
  const focused = () => page.evaluate(() => {
    let a = document.activeElement;
    while (a?.shadowRoot?.activeElement) a = a.shadowRoot.activeElement;
    return a?.textContent ?? '';
  });
  const tabTo = async (text) => {
    for (let k = 0; k < 80 && (await focused()) !== text; k++) await page.keyboard.press('Tab');
    assert.is(await focused(), text);
  };
  await tabTo('Train from scratch');
  await page.keyboard.press('Enter');
  await status(page, /^step 0\b/);
  await tabTo('Play');
  await page.keyboard.press('Enter');
  await status(page, /^step [1-9]\d* · /);
  assert.is(await focused(), 'Pause', 'the button says what it does now');
  await page.keyboard.press('Space');
  await page.waitForFunction(() => document.querySelector('attention-explorer').shadowRoot.querySelector('.model-train button[aria-pressed="false"]'));
  assert.equal(problems, []);
});

test.run();
