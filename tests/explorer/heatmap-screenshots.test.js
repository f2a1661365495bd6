// Screenshots of a 512-token explorer for a person to look at
// (tests/output/heatmap-512-<width>-<scheme>.png and text-512-...): the
// weights heatmap, zoomed in once so numbers show, and the text view shaded
// by a chosen word, at 1366 and 390 px, light and dark. Each also checks
// that the canvas was painted in the scheme's palette and every token shaded.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { OUTPUT, settled, start } from '../browser.js';

const SENTENCE = 'the quick brown fox jumps over the lazy dog while a cat sat on the mat and watched it'.split(' ');
const TOKENS = Array.from({ length: 512 }, (_, i) => SENTENCE[i % SENTENCE.length]);
const CHOSEN = 47; // a "while": with word embeddings and causal, it looks back at the earlier words

const test = suite('512-token screenshots');
test.before(async (ctx) => {
  ctx.env = await start();
});
test.after(async ({ env }) => env?.close());

for (const width of [1366, 390]) {
  for (const scheme of ['light', 'dark']) {
    test(`512 tokens at ${width} px, ${scheme}`, async ({ env }) => {
      const { page, context, problems } = await env.page({ viewport: { width, height: 900 }, colorScheme: scheme, deviceScaleFactor: 2, reducedMotion: 'reduce' });
      await page.goto(`${env.base}/?tokens=${TOKENS.join('+')}&causal=1&embeddings=word&positions=1`);
      await settled(page);
      const host = 'attention-explorer';
      await page.click(`${host} .tokens-text .tok[data-t="${CHOSEN}"]`);
      const text = page.locator(`${host} figure.tokens`);
      await text.scrollIntoViewIfNeeded();
      await text.screenshot({ path: `${OUTPUT}text-512-${width}-${scheme}.png` });
      const figure = page.locator(`${host} figure.heatmap[data-id="weights-0"]`);
      await figure.scrollIntoViewIfNeeded();
      await page.waitForFunction((sel) => document.querySelector(sel).shadowRoot.querySelector('canvas[data-id="weights-0"]').width > 0, host);
      await figure.screenshot({ path: `${OUTPUT}heatmap-512-${width}-${scheme}.png` });
      const seen = await page.evaluate(async ({ sel, chosen }) => {
        const el = document.querySelector(sel);
        const root = el.shadowRoot;
        const canvas = root.querySelector('canvas[data-id="weights-0"]');
        // The colour drawn at the chosen row's own cell (causal: it attends to itself) is the palette's.
        const { sequential } = await import('/web/explorer/colors.js');
        const copy = document.createElement('canvas');
        copy.width = canvas.width;
        copy.height = canvas.height;
        copy.getContext('2d').drawImage(canvas, 0, 0);
        const corner = [...copy.getContext('2d').getImageData(canvas.width - 4, 40, 1, 1).data].slice(0, 3);
        return {
          shaded: [...root.querySelectorAll('.tokens-text .tok')].filter((t) => /\bhs\d+\b/.test(t.className)).length,
          pressed: root.querySelector('.tokens-text .tok[aria-pressed="true"]')?.dataset.t,
          heat: getComputedStyle(canvas).getPropertyValue('--attn-heat').trim(),
          corner, zero: sequential(0, getComputedStyle(canvas).getPropertyValue('--attn-heat').trim()),
        };
      }, { sel: host, chosen: CHOSEN });
      assert.is(seen.shaded, 512);
      assert.is(seen.pressed, String(CHOSEN));
      assert.is(seen.heat, scheme);
      // Top right of the plot: a blocked pair (causal) in the quiet grey, not a weight's colour.
      assert.not.equal(seen.corner, seen.zero, 'the blocked corner is not drawn as a zero weight');
      // Zoomed twice around a cell of the chosen row: numbers are written at 1366 px.
      await page.focus(`${host} .heat-box[data-id="weights-0"] [role="gridcell"]`);
      for (let k = 0; k < CHOSEN; k++) await page.keyboard.press('ArrowDown');
      for (let k = 0; k < 40; k++) await page.keyboard.press('ArrowRight');
      for (let k = 0; k < 6; k++) await page.keyboard.press('+');
      await page.keyboard.press('Escape');
      await figure.screenshot({ path: `${OUTPUT}heatmap-512-zoomed-${width}-${scheme}.png` });
      const where = await page.$eval(`${host} figure.heatmap[data-id="weights-0"] .where`, (s) => s.textContent);
      assert.match(where, /^rows \d+–\d+, columns \d+–\d+$/);
      assert.equal(problems, []);
      await context.close();
    });
  }
}

test.run();
