// The model view as a newcomer meets it, in Chromium: after Repeat the
// guesses box shows the repeat's guesses (not the misses before it); Tab
// into the heads grid lands on the chosen head (a roving tab stop); a
// trained head's scale is the model's, so there is no slider for it and the
// text says why.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { EXPLORER as E, openWith, start } from '../browser.js';

const SENTENCE = 'the cat sat on the mat with my friend';
const N = SENTENCE.split(' ').length;

async function open(env, attrs, viewport = { width: 1280, height: 900 }) {
  const { page, problems, context } = await openWith(env, attrs, { viewport });
  await page.waitForFunction((sel) => document.querySelector(sel)?.shadowRoot.querySelector('.model-part:not([hidden]) button.thumb'), E, { timeout: 60_000 });
  await frame(page);
  return { page, problems, context };
}
const frame = (page) => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 30))));

const test = suite('model view: repeat, tab stop, scale');
test.before(async (ctx) => {
  ctx.env = await start();
});
test.after(async ({ env }) => env?.close());

test('after Repeat the guesses box shows the repeat: its first rows are in view, marked, and stay in view on the next update', async ({ env }) => {
  const { page, problems, context } = await open(env, `model="induction" tokens="${SENTENCE}" show="model lines" controls="minimal"`);
  await page.locator(`${E} button.repeat`).click();
  await page.waitForFunction(([sel, m]) => document.querySelector(sel).shadowRoot.querySelectorAll('.guess-table tbody tr').length === m, [E, 2 * N]);
  await frame(page);
  const seen = () => page.$eval(E, (el) => {
    const box = el.shadowRoot.querySelector('.predictions .scroll-y');
    const b = box.getBoundingClientRect();
    const rows = [...box.querySelectorAll('tbody tr')];
    return {
      inView: rows.map((r) => {
        const q = r.getBoundingClientRect();
        return q.top >= b.top - 1 && q.bottom <= b.bottom + 1;
      }),
      marked: rows.map((r) => r.dataset.repeat === 'start'),
      scrolls: box.scrollHeight > box.clientHeight,
    };
  });
  const after = await seen();
  assert.ok(after.scrolls, 'the box scrolls: both halves do not fit in it');
  // Row N is the repeat's first word: its guess is the first one induction makes right.
  assert.ok(after.inView[N] && after.inView[N + 1], `rows in view: ${after.inView.map((v, i) => (v ? i : '')).filter(String).join(',')}`);
  assert.not.ok(after.inView[0], 'the first misses are scrolled out of the way');
  assert.equal(after.marked.map((m, i) => (m ? i : -1)).filter((i) => i >= 0), [N]);
  // Another update (a head chosen) keeps the box where it is.
  await page.evaluate((sel) => document.querySelector(sel).setAttribute('model-head', '1 1'), E);
  await page.waitForFunction((sel) => document.querySelector(sel).shadowRoot.querySelector('button.thumb[data-layer="0"][data-head="0"]').getAttribute('aria-selected') === 'true', E);
  await frame(page);
  assert.ok((await seen()).inView[N], 'still in view after an update');
  // Rows below the fold are announced by a fade and a note, gone once scrolled to the end.
  const more = () => page.$eval(E, (el) => {
    const box = el.shadowRoot.querySelector('.predictions .scroll-y');
    return { more: box.classList.contains('more'), note: getComputedStyle(box.nextElementSibling).visibility, below: box.scrollTop + box.clientHeight < box.scrollHeight - 1 };
  });
  // From the top (where the box stands after Repeat depends on how tall its rows are).
  await page.$eval(E, (el) => {
    el.shadowRoot.querySelector('.predictions .scroll-y').scrollTop = 0;
  });
  await frame(page);
  const m1 = await more();
  assert.ok(m1.below && m1.more && m1.note === 'visible', JSON.stringify(m1));
  await page.$eval(E, (el) => {
    const box = el.shadowRoot.querySelector('.predictions .scroll-y');
    box.scrollTop = box.scrollHeight;
  });
  await frame(page);
  const m2 = await more();
  assert.ok(!m2.below && !m2.more && m2.note === 'hidden', JSON.stringify(m2));
  assert.equal(problems, []);
  await context.close();
});

test('Tab into the heads grid lands on the chosen head: one tab stop, on the chosen thumb, following the choice', async ({ env }) => {
  const { page, problems, context } = await open(env, `model="induction" model-head="2 3" tokens="${SENTENCE}" show="model lines"`);
  const stops = () => page.$$eval(`${E} button.thumb`, (bs) => bs.filter((b) => b.tabIndex === 0).map((b) => `${b.dataset.layer}:${b.dataset.head}`));
  assert.equal(await stops(), ['1:2']);
  // Back from the Repeat button (after the grid in tab order) into the grid.
  await page.locator(`${E} button.repeat`).focus();
  await page.keyboard.press('Shift+Tab');
  const focused = () => page.evaluate((sel) => {
    const a = document.querySelector(sel).shadowRoot.activeElement;
    return a ? `${a.dataset.layer}:${a.dataset.head}` : '';
  }, E);
  assert.is(await focused(), '1:2');
  // Arrows move from there, and the choice carries the tab stop.
  await page.keyboard.press('ArrowLeft');
  await page.waitForFunction((sel) => document.querySelector(sel).getAttribute('model-head') === '2 2', E);
  await frame(page);
  assert.equal(await stops(), ['1:1']);
  // A choice made elsewhere (the attribute) moves the tab stop too.
  await page.evaluate((sel) => document.querySelector(sel).setAttribute('model-head', '1 4'), E);
  await page.waitForFunction((sel) => document.querySelector(sel).shadowRoot.querySelector('button.thumb[data-layer="0"][data-head="3"]').getAttribute('aria-selected') === 'true', E);
  assert.equal(await stops(), ['0:3']);
  await page.locator(`${E} button.repeat`).focus();
  await page.keyboard.press('Shift+Tab');
  assert.is(await focused(), '0:3');
  assert.equal(problems, []);
  await context.close();
});

test('a trained head has no scale slider: the scale is the model’s, the toolbar and the text say so', async ({ env }) => {
  for (const controls of ['minimal', 'full']) {
    // A scale attribute left on the element does not change the model's head.
    const { page, problems, context } = await open(env, `model="induction" tokens="${SENTENCE}" show="model lines weights" controls="${controls}" scale="2"`);
    const seen = await page.$eval(E, (el) => {
      const root = el.shadowRoot;
      const slider = root.querySelector('.toolbar input[type="range"]');
      const text = root.querySelector('.toolbar .scale-text');
      return {
        slider: slider.getBoundingClientRect().width > 0,
        readout: `${text.textContent}${getComputedStyle(text, '::after').content.replace(/^"|"$/g, '')}`,
        why: root.querySelector('.model-part .explanation').textContent,
        scale: el.config.scale,
      };
    });
    assert.not.ok(seen.slider, `no slider (controls="${controls}")`);
    assert.is(seen.readout, '0.250 = 1/√16 · fixed by the model');
    assert.match(seen.why, /scale is 1\/√16 = 0\.250, fixed: the model learned its weights at that scale/);
    assert.is(seen.scale, 0.25);
    assert.equal(problems, []);
    await context.close();
  }
  // The explorer's own example keeps its slider.
  const { page, context } = await open(env, `model="induction" tokens="${SENTENCE}" show="model lines" controls="minimal"`);
  await page.evaluate((sel) => document.querySelector(sel).removeAttribute('model'), E);
  await page.waitForFunction((sel) => document.querySelector(sel).config.dk === 3, E);
  await frame(page);
  assert.ok(await page.$eval(E, (el) => el.shadowRoot.querySelector('.toolbar input[type="range"]').getBoundingClientRect().width > 0));
  await context.close();
});

test.run();
