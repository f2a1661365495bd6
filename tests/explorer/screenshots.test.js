// Screenshots of the explorer where readers meet it, in Chromium: the story
// page, the embeds (compact figures, a Train figure, an article with its own
// type) and the full page, at 1366, 720 and 390 px, light and dark, written
// to tests/output/ for a person to look at. Each page must fit its width:
// nothing sticks out sideways (a table too wide scrolls inside its own box).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { OUTPUT, settled, start } from '../browser.js';

const WIDTHS = [1366, 720, 390];
const SCHEMES = ['light', 'dark'];
const PAGES = [
  ['story', '/tests/pages/story.html'],
  ['embeds', '/tests/pages/compact.html'],
  ['article', '/tests/pages/article.html'],
  ['train-figure', '/tests/pages/train-figure.html'],
  ['page', '/?tokens=the+cat+sat+on+the+mat'],
];

const test = suite('screenshots in Chromium');
test.before(async (ctx) => {
  ctx.env = await start();
});
test.after(async ({ env }) => env?.close());

for (const [name, url] of PAGES) {
  test(`${name} at ${WIDTHS.join(', ')} px, light and dark: fits its width; tests/output/${name}-<width>-<scheme>.png`, async ({ env }) => {
    for (const width of WIDTHS) {
      for (const colorScheme of SCHEMES) {
        const mobile = width < 500;
        const { page, problems, context } = await env.page({ viewport: { width, height: 900 }, colorScheme, reducedMotion: 'reduce', ...(mobile ? { isMobile: true, hasTouch: true } : {}) });
        await page.goto(`${env.base}${url}`);
        await settled(page);
        // Resize observers (the lines view, the loss plot) have laid out by the second frame.
        await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
        const sideways = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
        assert.ok(sideways <= 0, `${name} at ${width} px (${colorScheme}) is ${sideways} px too wide`);
        await page.screenshot({ path: `${OUTPUT}${name}-${width}-${colorScheme}.png`, fullPage: true });
        assert.equal(problems, []);
        await context.close();
      }
    }
  });
}

test.run();
