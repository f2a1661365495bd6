// The explorer as a figure in someone's article (compact embeds and
// appearance="figure"), in Chromium: the page's font and colours, no box,
// no words of its own but a caption slot, the lines view beside the weights
// from about 560 px, a 4-token table whole at 390 px, a Train embed within
// 900 px at 720; and the full page using a wide screen.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { EXPLORER as E, settled, start } from '../browser.js';

// "From about 560 px": the narrowest column (the explorer's own width) at which
// the lines view and a 4-token weights table still sit side by side.
const SIDE_BY_SIDE_PX = 560;
const TRAIN_EMBED_MAX_PX = 900;
// Side by side, with the lines view at its own size and the toolbar on two
// rows at 560 px, a 4-token figure is under this; stacked it is over 500 px.
const SIDE_BY_SIDE_MAX_HEIGHT_PX = 400;

const test = suite('the explorer as a figure in Chromium');
test.before(async (ctx) => {
  ctx.env = await start();
});
test.after(async ({ env }) => env?.close());

const looks = (page, sel) => page.$eval(sel, (el) => {
  const cs = getComputedStyle(el), body = getComputedStyle(el.parentElement);
  const root = el.shadowRoot;
  const r = (q) => root.querySelector(q)?.getBoundingClientRect().toJSON() ?? null;
  const scroll = root.querySelector('figure[data-id="weights-0"] > .scroll');
  return {
    background: cs.backgroundColor, font: cs.fontFamily, pageFont: body.fontFamily, color: cs.color, pageColor: body.color,
    words: root.querySelectorAll('section h2, section .explanation').length,
    caption: root.querySelector('slot[name="caption"]')?.assignedNodes().map((n) => n.textContent).join('') ?? null,
    lines: r('figure.lines'), weights: r('figure[data-id="weights-0"]'), host: el.getBoundingClientRect().toJSON(),
    cut: scroll ? scroll.scrollWidth - scroll.clientWidth : null,
  };
});

test('a compact embed takes the page\'s font and colours, has no box or words of its own, and shows its caption', async ({ env }) => {
  for (const colorScheme of ['light', 'dark']) {
    const { page, problems, context } = await env.page({ viewport: { width: 1366, height: 900 }, colorScheme });
    await page.goto(`${env.base}/tests/pages/compact.html`);
    await settled(page, '#one');
    const l = await looks(page, '#one');
    assert.is(l.background, 'rgba(0, 0, 0, 0)', colorScheme);
    assert.is(l.font, l.pageFont);
    assert.is(l.color, l.pageColor);
    assert.is(l.words, 0);
    assert.match(l.caption, /^Figure 1\./);
    // Flush with the article's column: the lines view starts at the host's left edge.
    assert.ok(Math.abs(l.lines.left - l.host.left) < 1, `indent ${l.lines.left - l.host.left}`);
    assert.equal(problems, []);
    await context.close();
  }
});

test('appearance="figure" makes the full explorer a figure; appearance="app" keeps a compact embed\'s own look', async ({ env }) => {
  const { page, problems, context } = await env.page({ viewport: { width: 1366, height: 900 } });
  await page.goto(`${env.base}/tests/pages/compact.html`);
  await settled(page, '#one');
  await page.$eval('#one', (el) => { el.appearance = 'app'; });
  await settled(page, '#one');
  const app = await looks(page, '#one');
  assert.ok(app.words > 0, 'the app look has its heading');
  assert.is.not(app.background, 'rgba(0, 0, 0, 0)');
  await page.$eval('#one', (el) => { el.removeAttribute('controls'); el.setAttribute('appearance', 'figure'); });
  await settled(page, '#one');
  const figure = await looks(page, '#one');
  assert.is(figure.words, 0);
  assert.is(figure.background, 'rgba(0, 0, 0, 0)');
  assert.equal(problems, []);
  await context.close();
});

for (const width of [SIDE_BY_SIDE_PX + 32, 720]) {
  test(`in a ${width} px window the lines view and the weights sit side by side`, async ({ env }) => {
    const { page, problems, context } = await env.page({ viewport: { width, height: 900 } });
    await page.goto(`${env.base}/tests/pages/compact.html`);
    await settled(page, '#one');
    const l = await looks(page, '#one');
    assert.ok(l.lines.right <= l.weights.left && l.weights.top < l.lines.bottom, `lines ${JSON.stringify(l.lines)} weights ${JSON.stringify(l.weights)}`);
    assert.is(l.cut, 0, 'the table is whole');
    assert.ok(l.host.height < SIDE_BY_SIDE_MAX_HEIGHT_PX, `${l.host.height} px tall`);
    assert.equal(problems, []);
    await context.close();
  });
}

test('at 390 px a 4-token table is whole, its sums included', async ({ env }) => {
  const { page, problems, context } = await env.page({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
  await page.goto(`${env.base}/tests/pages/compact.html`);
  await settled(page, '#one');
  const l = await looks(page, '#one');
  assert.is(l.cut, 0);
  assert.ok(l.weights.right <= 390, `ends at ${l.weights.right}`);
  assert.equal(problems, []);
  await context.close();
});

// An article's own type: a larger serif body than the explorer's 15 px.
const ARTICLE_FONTS_PX = [18, 20];
// A table's numbers stay legible however small the article's type.
const MIN_NUMBER_PX = 11;

// Two frames: a resize observer's change (the lines view fitting its box) is laid out by then.
const frames = (page) => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));

/** The weights table's box and Σ column, and the lines view's label size, of the article's figure. */
const articleFigure = (page) => page.$eval('#fig', (el) => {
  const root = el.shadowRoot;
  const scroll = root.querySelector('figure[data-id="weights-0"] > .scroll');
  const box = scroll.getBoundingClientRect();
  const sums = [...root.querySelectorAll('table[data-id="weights-0"] .sum')].map((c) => c.getBoundingClientRect());
  const svg = root.querySelector('figure.lines svg');
  return {
    overflow: scroll.scrollWidth - scroll.clientWidth,
    sumsInside: sums.length > 0 && sums.every((r) => r.left >= box.left && r.right <= box.right + 0.5),
    numberPx: parseFloat(getComputedStyle(root.querySelector('table[data-id="weights-0"] td[data-i]')).fontSize),
    // The SVG draws its labels at 13 px: scaled down, they shrink with it.
    labelPx: 13 * svg.getBoundingClientRect().width / svg.viewBox.baseVal.width,
    beside: root.querySelector('figure.lines').getBoundingClientRect().right <= box.left,
  };
});

for (const fontPx of ARTICLE_FONTS_PX) {
  test(`in a 390 px article with a ${fontPx} px serif body a 4-token table is whole, its Σ column in view`, async ({ env }) => {
    const { page, problems, context } = await env.page({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    await page.goto(`${env.base}/tests/pages/article.html`);
    await page.evaluate((px) => { document.body.style.fontSize = `${px}px`; }, fontPx);
    await settled(page, '#fig');
    const f = await articleFigure(page);
    assert.ok(f.overflow <= 0, `the table scrolls by ${f.overflow} px`);
    assert.ok(f.sumsInside, 'the Σ column is inside the table\'s box');
    assert.ok(f.numberPx >= MIN_NUMBER_PX, `numbers at ${f.numberPx} px`);
    assert.equal(problems, []);
    await context.close();
  });
}

test('beside the weights the lines view keeps its labels as large as the numbers: it narrows its lines, then wraps', async ({ env }) => {
  const words = 'the cat sat on the mat and then the dog came in to see what it'.split(' ');
  const { page, problems, context } = await env.page({ viewport: { width: 752, height: 900 } });
  await page.goto(`${env.base}/tests/pages/article.html`);
  await settled(page, '#fig');
  let besides = 0;
  for (const fontPx of [16, 18]) {
    for (const n of [4, 5, 6, 8, 16]) {
      await page.evaluate(([px, tokens]) => { document.body.style.fontSize = `${px}px`; document.querySelector('#fig').tokens = tokens; }, [fontPx, words.slice(0, n).join(' ')]);
      await settled(page, '#fig');
      // Columns from a phone's to 720 px.
      for (const column of [360, 480, 560, 600, 640, 680, 720]) {
        await page.evaluate((px) => { document.querySelector('main').style.maxWidth = `${px + 32}px`; }, column);
        await frames(page);
        const f = await articleFigure(page);
        const where = `${n} tokens, ${fontPx} px type, ${column} px column`;
        assert.ok(f.labelPx >= MIN_NUMBER_PX, `${where}: labels at ${f.labelPx.toFixed(1)} px`);
        if (f.beside) {
          besides++;
          assert.ok(f.labelPx >= f.numberPx - 0.05, `${where}: labels at ${f.labelPx.toFixed(1)} px beside numbers at ${f.numberPx} px`);
        }
      }
    }
  }
  assert.ok(besides > 0, 'some of these columns have room side by side');
  assert.equal(problems, []);
  await context.close();
});

test('a figure\'s popover is painted on the article\'s ground (light and dark): opaque over the text it covers', async ({ env }) => {
  for (const colorScheme of ['light', 'dark']) {
    const { page, problems, context } = await env.page({ viewport: { width: 1366, height: 900 }, colorScheme });
    await page.goto(`${env.base}/tests/pages/article.html`);
    await settled(page, '#fig');
    await page.hover('#fig table[data-id="weights-0"] td[data-i="1"][data-j="2"]');
    const r = await page.$eval('#fig', (el) => {
      const p = el.shadowRoot.querySelector('.popover');
      const cs = getComputedStyle(p);
      return { hidden: p.hidden, background: cs.backgroundColor, color: cs.color, page: getComputedStyle(document.body).backgroundColor, text: getComputedStyle(document.body).color };
    });
    assert.not.ok(r.hidden, colorScheme);
    assert.is(r.background, r.page, `${colorScheme}: the popover's ground`);
    assert.is(r.color, r.text, `${colorScheme}: the popover's text`);
    assert.equal(problems, []);
    await context.close();
  }
});

test('a figure takes the palette of the ground it lies on, not the reader\'s scheme: controls and heatmap readable on a light page under a dark system and the reverse', async ({ env }) => {
  // Relative luminance of a CSS rgb() colour.
  const luminance = (rgb) => {
    const [r, g, b] = rgb.match(/[\d.]+/g).slice(0, 3).map((c) => {
      const s = Number(c) / 255;
      return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const contrast = (a, b) => (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
  for (const colorScheme of ['light', 'dark']) {
    const { page, problems, context } = await env.page({ viewport: { width: 900, height: 900 }, colorScheme });
    await page.goto(`${env.base}/tests/pages/grounds.html`);
    await settled(page, '#on-light');
    await settled(page, '#on-dark');
    for (const [id, ground] of [['on-light', 'light'], ['on-dark', 'dark']]) {
      const r = await page.$eval(`#${id}`, (el) => {
        const root = el.shadowRoot;
        const look = (q) => {
          const cs = getComputedStyle(root.querySelector(q));
          return { bg: cs.backgroundColor, fg: cs.color };
        };
        return {
          ground: el.dataset.attnGround, page: getComputedStyle(el.parentElement).backgroundColor,
          // A pressed button (the weights switch's choice) is filled with the accent on purpose.
          button: look('button:not([aria-pressed="true"])'), input: look('input[type="text"]'), cell: look('td[data-i]'),
        };
      });
      const what = `${id} under a ${colorScheme} scheme`;
      assert.is(r.ground, ground, what);
      // Every control's ink stands out from its own background (WCAG AA for text: 4.5).
      for (const part of ['button', 'input', 'cell']) {
        const c = contrast(luminance(r[part].bg), luminance(r[part].fg));
        assert.ok(c >= 4.5, `${what}: ${part} ${r[part].fg} on ${r[part].bg}, contrast ${c.toFixed(2)}`);
      }
      // Controls are drawn in the ground's lightness, not the system's.
      assert.is(luminance(r.button.bg) > 0.4, ground === 'light', `${what}: button ground ${r.button.bg} on a ${r.page} page`);
    }
    // An author's custom property on the element still wins over the ground's palette.
    const accent = await page.$eval('#on-dark', async (el) => {
      el.style.setProperty('--attn-accent', 'rgb(1, 2, 3)');
      return getComputedStyle(el.shadowRoot.querySelector('.settings > summary')).color;
    });
    assert.is(accent, 'rgb(1, 2, 3)', colorScheme);
    assert.equal(problems, []);
    await context.close();
  }
});

test(`a Train embed (show="lines weights" controls="minimal") is at most ${TRAIN_EMBED_MAX_PX} px tall at 720 px, without a second weights table`, async ({ env }) => {
  const { page, problems, context } = await env.page({ viewport: { width: 720, height: 900 } });
  await page.goto(`${env.base}/tests/pages/compact.html`);
  await page.evaluate(() => {
    const el = document.createElement('attention-explorer');
    for (const [k, v] of [['train', ''], ['tokens', 'the cat sat on the mat'], ['show', 'lines weights'], ['controls', 'minimal']]) el.setAttribute(k, v);
    document.querySelector('main').replaceChildren(el);
  });
  await settled(page);
  await page.waitForFunction((sel) => document.querySelector(sel).shadowRoot.querySelector('.train-target td[data-i]'), E);
  const r = await page.$eval(E, (el) => ({
    height: el.getBoundingClientRect().height,
    weightsNow: [...el.shadowRoot.querySelectorAll('.train figcaption')].filter((f) => f.textContent === 'weights now' && f.getClientRects().length > 0).length,
  }));
  assert.ok(r.height <= TRAIN_EMBED_MAX_PX, `${r.height} px tall`);
  assert.is(r.weightsNow, 0);
  assert.equal(problems, []);
  await context.close();
});

test('at 1366 px the full page puts steps 1 and 2 side by side and reaches the weights on the first screen', async ({ env }) => {
  const { page, problems, context } = await env.page({ viewport: { width: 1366, height: 900 } });
  await page.goto(`${env.base}/`);
  await settled(page);
  const r = await page.$eval(E, (el) => {
    const box = (q) => el.shadowRoot.querySelector(q).getBoundingClientRect().toJSON();
    return { scores: box('section.step-scores'), scaled: box('section.step-scaled'), weights: box('table[data-id="weights-0"]') };
  });
  assert.is(r.scores.top, r.scaled.top);
  assert.ok(r.scores.right <= r.scaled.left);
  assert.ok(r.weights.bottom <= 900, `weights end at ${r.weights.bottom}`);
  assert.equal(problems, []);
  await context.close();
});

test.run();
