// What a new learner tripped over, each in Chromium: Back returns to the
// setting before (index.html adds history entries); ?causal=maybe and
// ?train-target=bogus are refused aloud and keep the default; with 3 heads
// each table's accessible name says its step and head; a story highlight of a
// column off a phone table's box scrolls that box (not the page); a compact
// model figure writes no prose of its own and fits 900 px in a 720 px column;
// the Train part fits about 1000 px at 390; the guesses say when a repeated
// word makes copying ambiguous.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { EXPLORER as E, openWith, settled, start } from '../browser.js';

// The bars for the compact model figure and the Train part at 390 px.
const MODEL_FIGURE_MAX_PX = 900;
const TRAIN_PART_MAX_PX = 1050; // "about 1000"

const frames = (page) => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(r, 30)))));
const waitModel = (page) => page.waitForFunction((sel) => document.querySelector(sel)?.shadowRoot.querySelector('.model-part:not([hidden]) button.thumb'), E, { timeout: 60_000 });

const test = suite('what a new learner tripped over, in Chromium');
test.before(async (ctx) => {
  ctx.env = await start();
});
test.after(async ({ env }) => env?.close());

test('a setting is a history entry: Back returns to the one before, Forward again', async ({ env }) => {
  const { page, problems } = await env.page();
  await page.goto(`${env.base}/?tokens=a+b+c`);
  await settled(page);
  const before = await page.evaluate(() => history.length);
  await page.$eval(E, (el) => el.setAttribute('seed', '8'));
  await page.waitForFunction(() => location.search.includes('seed=8'));
  await page.$eval(E, (el) => el.setAttribute('seed', '9'));
  await page.waitForFunction(() => location.search.includes('seed=9'));
  assert.is(await page.evaluate(() => history.length), before + 2);
  await page.goBack();
  await page.waitForFunction((sel) => document.querySelector(sel).config?.seed === 8, E);
  assert.match(page.url(), /seed=8/);
  await page.goBack();
  await page.waitForFunction((sel) => !document.querySelector(sel).hasAttribute('seed'), E);
  assert.is(await page.$eval(E, (el) => el.config.tokens.join(' ')), 'a b c');
  await page.goForward();
  await page.waitForFunction((sel) => document.querySelector(sel).config?.seed === 8, E);
  assert.equal(problems, []);
});

test('Back with the Tokens box still focused after Enter shows the words gone back to; text being typed stays', async ({ env }) => {
  const { page, problems } = await env.page();
  await page.goto(`${env.base}/`);
  await settled(page);
  const box = page.locator(`${E} .toolbar input[type="text"]`);
  await box.fill('the dog ran');
  await box.press('Enter');
  await page.waitForFunction(() => location.search.includes('tokens=the+dog+ran'));
  await page.goBack();
  await page.waitForFunction((sel) => document.querySelector(sel).config?.tokens.join(' ') === 'the cat sat there', E);
  await frames(page);
  assert.is(await box.inputValue(), 'the cat sat there', 'the focused box follows Back once its words were applied');
  // Words typed and not yet applied are the reader's: a change from elsewhere leaves them.
  await box.fill('a half typed');
  await page.$eval(E, (el) => el.setAttribute('seed', '8'));
  await page.waitForFunction((sel) => document.querySelector(sel).config?.seed === 8, E);
  await frames(page);
  assert.is(await box.inputValue(), 'a half typed');
  assert.equal(problems, []);
});

test('?causal=maybe is refused with a notice naming it and what it takes; causal stays off', async ({ env }) => {
  const { page, problems } = await env.page();
  await page.goto(`${env.base}/?causal=maybe`);
  await settled(page);
  const notice = await page.locator('#url-notice');
  assert.ok(await notice.isVisible(), 'the notice shows');
  assert.match(await notice.textContent(), /causal=maybe: causal takes 1 or 0/);
  assert.is(await page.$eval(E, (el) => el.config.causal), false);
  assert.equal(problems, []);
});

test('?train-target=bogus is refused in the Train part, naming the accepted targets; the default stays', async ({ env }) => {
  const { page, problems } = await env.page();
  await page.goto(`${env.base}/?train=1&train-target=bogus`);
  await settled(page);
  await page.waitForFunction((sel) => document.querySelector(sel).shadowRoot.querySelector('.train-notice:not([hidden])'), E);
  const text = await page.locator(`${E} .train-notice`).textContent();
  assert.match(text, /^train-target="bogus" is refused: it takes previous-token, first-token, same-word, attend-to:<word> or paint:/);
  assert.match(text, /the target stays previous-token\.$/);
  assert.is(await page.locator(`${E} .train select[aria-label="target"]`).inputValue(), 'previous-token');
  assert.equal(problems, []);
});

test('with 3 heads every table says its step and head to a screen reader', async ({ env }) => {
  const { page, problems } = await env.page();
  await page.goto(`${env.base}/?heads=3&tokens=a+b+c+d+e+f`);
  await settled(page);
  const names = await page.$$eval(`${E} table[data-id^="scores-"], ${E} table[data-id^="weights-"], ${E} table[data-id^="output-"]`,
    (ts) => ts.map((t) => t.getAttribute('aria-label')));
  assert.ok(names.includes('Head 1 weights, 6 by 6'), names.join(' | '));
  assert.ok(names.includes('Head 3 raw scores, 6 by 6'), names.join(' | '));
  assert.is(new Set(names).size, names.length, `every name differs: ${names.join(' | ')}`);
  assert.equal(problems, []);
});

test('a story highlight of a column outside a phone table\'s box scrolls that box, not the page', async ({ env }) => {
  const { page, problems } = await env.page({ viewport: { width: 390, height: 844 } });
  await page.goto(`${env.base}/?tokens=the+cat+sat+on+the+old+mat+today&show=weights`);
  await settled(page);
  const before = await page.evaluate(() => window.scrollY);
  await page.$eval(E, (el) => el.highlight({ part: 'weights', col: 'today' }));
  await frames(page);
  const r = await page.$eval(E, (el) => {
    const td = el.shadowRoot.querySelector('table[data-id="weights-0"] td.story');
    const box = td.closest('.scroll');
    const a = td.getBoundingClientRect(), b = box.getBoundingClientRect();
    return { inside: a.left >= b.left - 1 && a.right <= b.right + 1, scrolled: box.scrollLeft, overflow: box.scrollWidth > box.clientWidth };
  });
  assert.ok(r.overflow, 'the table is wider than its box at 390 px');
  assert.ok(r.inside, `the lit column is inside the box (scrollLeft ${r.scrolled})`);
  assert.is(await page.evaluate(() => window.scrollY), before, 'the page did not move');
  assert.equal(problems, []);
});

test('a compact model figure writes no heading or text, and fits 900 px in a 720 px column', async ({ env }) => {
  const { page, problems } = await env.page({ viewport: { width: 1366, height: 900 } });
  await page.goto(`${env.base}/tests/pages/model.html`);
  await waitModel(page);
  await frames(page);
  const r = await page.$eval(E, (el) => ({
    height: el.getBoundingClientRect().height, width: el.getBoundingClientRect().width,
    words: [...el.shadowRoot.querySelectorAll('.model-part h2, .model-part h3, .model-part p')].filter((n) => n.checkVisibility() && n.textContent.trim() && !n.classList.contains('more-note') && !n.classList.contains('sr-only'))
      .map((n) => n.textContent.slice(0, 30)),
  }));
  assert.ok(r.width <= 720, `${r.width} px wide`);
  assert.equal(r.words, [], 'no heading or paragraph of its own');
  assert.ok(r.height <= MODEL_FIGURE_MAX_PX, `${r.height} px tall`);
  assert.equal(problems, []);
});

test('the Train part fits about 1000 px at 390 px', async ({ env }) => {
  const { page, problems } = await openWith(env, 'train', { viewport: { width: 390, height: 844 } });
  await page.waitForFunction((sel) => document.querySelector(sel)?.shadowRoot.querySelector('.train-target td[data-i]'), E);
  await frames(page);
  const height = await page.$eval(E, (el) => el.shadowRoot.querySelector('.train').getBoundingClientRect().height);
  assert.ok(height <= TRAIN_PART_MAX_PX, `${height} px tall`);
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 390), 'no horizontal overflow');
  assert.equal(problems, []);
});

test('the cat sat on the mat + Repeat: the guesses say that a repeated word makes copying ambiguous', async ({ env }) => {
  const { page, problems } = await openWith(env, 'model="induction" tokens="the cat sat on the mat" show="model lines"');
  await waitModel(page);
  await page.locator(`${E} button.repeat`).click();
  await page.waitForFunction((sel) => document.querySelector(sel).config.tokens.length === 12, E);
  await frames(page);
  const note = await page.$eval(E, (el) => el.shadowRoot.querySelector('.predictions > .explanation').textContent);
  assert.match(note, /“the” occurred more than once, followed by “cat” and “mat”: copying what came next is ambiguous there/);
  assert.equal(problems, []);
});

test('row labels are whole where the figure has room: "chased", not "chas…"', async ({ env }) => {
  const { page, problems } = await openWith(env, 'tokens="the cat chased the mouse around" show="lines weights" controls="minimal"', { viewport: { width: 1000, height: 900 } });
  await page.waitForFunction((sel) => document.querySelector(sel)?.shadowRoot.querySelector('table[data-id="weights-0"] tbody th .token'), E, { timeout: 60_000 });
  await frames(page);
  const cut = await page.$eval(E, (el) => [...el.shadowRoot.querySelectorAll('table[data-id="weights-0"] th .token, table[data-id="weights-0"] tbody th')]
    .filter((n) => n.scrollWidth > n.clientWidth).map((n) => n.textContent));
  assert.equal(cut, [], 'no label is cut');
  assert.equal(problems, []);
});

test('the lines view\'s heading takes at most two lines beside the table in a 688 px figure', async ({ env }) => {
  const { page, problems } = await env.page({ viewport: { width: 1000, height: 900 } });
  await page.goto(`${env.base}/tests/pages/article.html`);
  await settled(page, '#fig');
  for (const tokens of ['the cat sat on the mat', 'a b c', 'the cat sat on the mat with my old friend']) {
    await page.$eval('#fig', (el, t) => el.setAttribute('tokens', t), tokens);
    await frames(page);
    const r = await page.$eval('#fig', (el) => {
      const caption = el.shadowRoot.querySelector('figure.lines figcaption');
      return { width: el.getBoundingClientRect().width, height: caption.getBoundingClientRect().height, line: parseFloat(getComputedStyle(caption).lineHeight) };
    });
    assert.is(Math.round(r.width), 688);
    assert.ok(r.height <= 2 * r.line + 1, `"${tokens}": the heading is ${r.height} px tall, lines of ${r.line} px`);
  }
  assert.equal(problems, []);
});

test.run();
