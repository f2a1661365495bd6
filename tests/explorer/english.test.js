// The explorer with the trained English encoder beside the handbook's random
// weights: what encoder-source.js and mask-view.js say (pure, in Node); then
// in Chromium (playwright-core, the strict CSP) the page's weights switch,
// the English JSON fetched only when asked, the model view's heads with
// headScores' labels and baselines, a head's numbers in the tables (that
// layer's LayerNorm'd input and that head's q, k, v from m.forward), a
// masked word's guesses equal to m.fill's by click, keyboard and touch,
// unknown words named as text, bad attribute values that keep the view
// and warn, and the compact figure and story page. The model's own numbers
// come from attention-wasm/model in the same page.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { RELATION_NAMES, bestHead, cardScores, encoderLabel, maskIndex, relationNames, unknownText } from '../../web/explorer/encoder-source.js';
import { maskTexts } from '../../web/explorer/mask-view.js';
import { EXPLORER as E, axeViolations, settled, start } from '../browser.js';
import { rejects } from '../helpers.js';

// The tables and the model both compute in float32 with the library's
// kernels, the tables from X and W_Q (which are the model's bits) and the
// model over all heads at once: a few float32 roundings apart.
const ATOL_FLOAT32_SUMS = 1e-5;

const unit = suite('the encoder source and the mask panel (pure)');

const relation = (score, baseline, offset = 1, cases = 100) => ({ score, baseline, offset, cases });
const relations = (over = {}) => ({ ...Object.fromEntries(Object.keys(RELATION_NAMES).map((k) => [k, relation(0.1, 0.5)])), ...over });

unit('a head labelled with a relation shows that relation\'s offset baseline beside it', () => {
  const s = { relations: relations({ detNoun: relation(0.93, 0.77, 1, 812) }), label: 'det → noun 0.93', relation: 'detNoun', position: null };
  const l = encoderLabel(s);
  assert.is(l.text, 'det → noun 0.93');
  assert.is(l.baseline, 'vs offset +1: 0.77');
  assert.match(l.detail, /against 0\.77 for always looking \+1 words over \(the best fixed offset\), on 812 held-out cases/);
});

unit('the head\'s relation key names its relation, not its label\'s text', () => {
  const s = { relations: relations({ detNounPastAdjectives: relation(0.88, 0.7, 2) }), label: 'det → noun past adjectives 0.88', relation: 'detNounPastAdjectives', position: null };
  assert.is(encoderLabel(s).baseline, 'vs offset +2: 0.70');
  // A label that reads like a relation but carries no relation key gets no relation baseline.
  assert.is(encoderLabel({ ...s, relation: null, position: 'next' }).baseline, '');
});

unit('a positional head has no baseline beside it; its spoken label names its best relation', () => {
  const s = { relations: relations({ verbSubject: relation(0.6, 0.4, -1) }), label: 'next word 0.93', relation: null, position: 'next' };
  const l = encoderLabel(s);
  assert.is(l.baseline, '');
  assert.match(l.detail, /^next word 0\.93; its best relation, verb → subject, 0\.60 against 0\.40 for the best fixed offset \(-1\)$/);
});

unit('the model card\'s head scores read as headScores gives them, its relation names first', () => {
  const card = { relations: { detNoun: 'determiner → noun' }, heads: [[{ label: 'determiner → noun 0.91', relation: 'detNoun', position: null, relations: { detNoun: [0.91, 0.77, 1] }, positional: { next: 0.2 } }]] };
  const [[s]] = cardScores(card);
  assert.is(s.relation, 'detNoun');
  assert.is(s.position, null);
  assert.equal(s.relations.detNoun, { score: 0.91, baseline: 0.77, offset: 1 });
  assert.is(encoderLabel(s, relationNames(card)).baseline, 'vs offset +1: 0.77');
  assert.match(encoderLabel(s, relationNames(card)).detail, /on held-out sentences$/);
  assert.is(cardScores({ description: 'no scores' }), null);
  assert.is(cardScores(null), null);
  assert.is(relationNames({ relations: { detNoun: 3 } }), RELATION_NAMES);
});

unit('bestHead takes the highest score of the relation', () => {
  const row = (scores) => scores.map((x) => ({ relations: { detNoun: relation(x, 0.5) } }));
  assert.equal(bestHead([row([0.1, 0.2]), row([0.9, 0.3])]), [1, 0]);
});

unit('model-mask is an index into the sentence, named when outside it', () => {
  assert.is(maskIndex(null, 4), null);
  assert.is(maskIndex(2, 4), 2);
  rejects(() => maskIndex(4, 4), RangeError, 'model-mask expects the index of a word, 0 to 3 for these 4 words (counted from 0); got 4');
});

unit('unknown words are quoted once each, as text', () => {
  assert.is(unknownText([]), '');
  const t = unknownText([{ index: 1, word: 'zorp' }, { index: 3, word: '<b>x</b>' }, { index: 4, word: 'zorp' }]);
  assert.match(t, /^The model does not know the words “zorp”, “<b>x<\/b>”: it reads each as the unknown word/);
});

unit('the mask panel says the guess\'s rank and the two words the masked position looks at most', () => {
  const t = maskTexts({ words: ['the', 'cat', 'sat', 'there'], masked: 2, guesses: [{ word: 'ran', p: 0.5 }, { word: 'sat', p: 0.3 }],
    row: [0.1, 0.6, 0.05, 0.25], pick: { layer: 1, head: 2 } });
  assert.is(t.caption, '“sat” (word 3) is masked: the model reads <mask> there. Its top 2 guesses; “sat” is its guess number 2. Press “sat” again to unmask it.');
  assert.is(t.looks, 'In layer 2, head 3 the masked position (itself 0.05) looks most, of the other words, at “cat” (0.60), then “there” (0.25); its row is the one selected in the lines view.');
});

unit.run();

// ---- in Chromium -------------------------------------------------------------------

const test = suite('random beside trained in Chromium');
test.before(async (ctx) => {
  ctx.env = await start();
});
test.after(async ({ env }) => {
  await env?.close();
});

const frame = (page) => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 30))));
const shadow = (page, fn, arg) => page.$eval(E, fn, arg);
const modelShown = (page) => page.waitForFunction((sel) => document.querySelector(sel)?.shadowRoot.querySelector('.model-part:not([hidden]) button.thumb'), E, { timeout: 120_000 });
const message = (page) => shadow(page, (el) => el.shadowRoot.querySelector('.message').textContent);
const fetchedEnglish = (requests) => requests.filter((u) => u.endsWith('/web/model/english.json'));

async function open(env, path, options = {}) {
  const { page, problems } = await env.page(options);
  const requests = [], warnings = [];
  page.on('request', (r) => requests.push(r.url()));
  page.on('console', (msg) => msg.type() === 'warning' && warnings.push(msg.text()));
  await page.goto(`${env.base}${path}`);
  return { page, problems, requests, warnings };
}

// The model's own numbers for a sentence, in the page: headScores, the forward pass (masked word replaced by <mask>), one head's weights, fill.
const reference = (page, { words, layer, head, masked = null }) => page.evaluate(async ({ words, layer, head, masked }) => {
  const { loadModel, headScores } = await import('/web/model.js');
  const m = await loadModel('english');
  const ids = m.encode(words);
  if (masked !== null) ids[masked] = m.vocab.indexOf('<mask>');
  const r = m.forward(ids);
  const w = m.head(layer, head);
  const arr = (x) => Array.from(x.data);
  return {
    layers: m.layers, heads: m.heads,
    labels: headScores(m).flat().map((s) => s.label),
    xNorm: arr(r.layers[layer].xNorm), wq: arr(w.wq), wk: arr(w.wk), wv: arr(w.wv),
    q: arr(r.layers[layer].heads[head].q), k: arr(r.layers[layer].heads[head].k), v: arr(r.layers[layer].heads[head].v),
    weights: arr(r.layers[layer].heads[head].weights),
    fill: masked === null ? null : m.fill(words, masked),
  };
}, { words, layer, head, masked });

const stateOf = (page) => shadow(page, (el) => Object.fromEntries(['X', 'WQ', 'WK', 'WV', 'Q', 'K', 'V', 'weights'].map((k) => [k, Array.from(el.state[k].data)])));

function close(actual, expected, what) {
  assert.is(actual.length, expected.length, `${what}: length`);
  for (let i = 0; i < actual.length; i++) {
    if (!(Math.abs(actual[i] - expected[i]) <= ATOL_FLOAT32_SUMS)) assert.unreachable(`${what}[${i}]: ${actual[i]} against the model's ${expected[i]}`);
  }
}

test('the handbook page fetches no English model until the switch asks; then the same sentence through the encoder', async ({ env }) => {
  const { page, problems, requests } = await open(env, '/');
  await settled(page);
  assert.equal(await shadow(page, (el) => [...el.shadowRoot.querySelectorAll('.weights-switch button')].map((b) => `${b.textContent}:${b.getAttribute('aria-pressed')}`)),
    ['random:true', 'trained on English:false']);
  assert.equal(fetchedEnglish(requests), [], 'the default page never asks for english.json');
  const before = await stateOf(page);
  await page.click(`${E} .weights-switch button:text("trained")`);
  await modelShown(page);
  await frame(page);
  assert.is(await page.$eval(E, (el) => el.getAttribute('model')), 'english');
  assert.is(fetchedEnglish(requests).length, 1);
  assert.is(await page.$eval(E, (el) => el.config.tokens.join(' ')), 'the cat sat there', 'the same sentence');
  // What changed and why: the page's introduction and the model view's text.
  const lede = await page.$$eval('.lede', (ps) => ps.filter((p) => !p.hidden).map((p) => p.textContent).join(' '));
  assert.match(lede, /trained on English to fill in masked words/);
  assert.match(lede, /random weights only show the mechanics/);
  const text = await shadow(page, (el) => el.shadowRoot.querySelector('.model-part > .explanation').textContent);
  assert.match(text, /With the handbook’s random weights the patterns only show the mechanics; here W_Q and W_K were learned/);
  const after = await stateOf(page);
  assert.is.not(after.WQ.join(), before.WQ.join(), 'the tables show the model\'s weights, not the draws');
  // And back: the handbook's draws again, bit for bit.
  await page.click(`${E} .weights-switch button:text("random")`);
  await page.waitForFunction((sel) => !document.querySelector(sel).hasAttribute('model'), E);
  await settled(page);
  await frame(page);
  assert.equal((await stateOf(page)).WQ, before.WQ);
  assert.ok(await shadow(page, (el) => el.shadowRoot.querySelector('.model-part').hidden));
  assert.equal(problems, []);
});

test('the model view: every head with headScores\' label; a head\'s numbers fill the tables as m.forward has them', async ({ env }) => {
  const { page, problems } = await open(env, '/?model=english');
  await modelShown(page);
  await frame(page);
  const words = ['the', 'cat', 'sat', 'there'];
  const ref0 = await reference(page, { words, layer: 0, head: 0 });
  const shown = await shadow(page, (el) => [...el.shadowRoot.querySelectorAll('button.thumb')].map((b) => b.querySelector('.kind').textContent));
  assert.is(shown.length, ref0.layers * ref0.heads);
  assert.equal(shown, ref0.labels);
  // The head it opens on is the best det → noun head, and on the handbook's sentence it takes "the" to "cat" (index.html says so).
  const opened = await shadow(page, (el) => {
    const w = el.state.weights, n = w.rows;
    const row = Array.from(w.data.slice(0, n));
    return row.indexOf(Math.max(...row.slice(1)));
  });
  assert.is(words[opened], 'cat', 'the shipped model\'s det → noun head takes “the” to “cat”');
  // Choose the last layer's second head by a click: model-head follows, and every table is that head's.
  const layer = ref0.layers - 1, head = 1;
  await page.click(`${E} button.thumb[data-layer="${layer}"][data-head="${head}"]`);
  await page.waitForFunction(([sel, want]) => document.querySelector(sel).getAttribute('model-head') === want, [E, `${layer + 1} ${head + 1}`]);
  await frame(page);
  const ref = await reference(page, { words, layer, head });
  const state = await stateOf(page);
  assert.equal(state.X, ref.xNorm, 'X is the layer\'s LayerNorm\'d input, the model\'s bits');
  assert.equal(state.WQ, ref.wq);
  assert.equal(state.WK, ref.wk);
  assert.equal(state.WV, ref.wv);
  close(state.Q, ref.q, 'Q');
  close(state.K, ref.k, 'K');
  close(state.V, ref.v, 'V');
  close(state.weights, ref.weights, 'weights');
  // The derivation of a Q entry names the model's X and W_Q.
  await page.hover(`${E} table[data-id="X"] td[data-i="0"][data-j="0"]`);
  await page.waitForFunction((sel) => !document.querySelector(sel).shadowRoot.querySelector('.popover').hidden, E);
  assert.match(await shadow(page, (el) => el.shadowRoot.querySelector('.popover').textContent), /LayerNorm/);
  // The inputs' text is the model's, not the handbook's random draws.
  assert.match(await shadow(page, (el) => el.shadowRoot.querySelector('section.step-inputs .explanation').textContent), new RegExp(`layer ${layer + 1}, head ${head + 1} of the trained encoder`));
  assert.equal(problems, []);
});

test('pressing a word masks it: the model\'s top 5 equal m.fill\'s, and its row is where the masked word looks (click, keyboard, touch)', async ({ env }) => {
  for (const how of ['click', 'keyboard', 'touch']) {
    const { page, problems } = await open(env, '/?model=english', how === 'touch' ? { hasTouch: true, isMobile: true, viewport: { width: 390, height: 844 } } : {});
    await modelShown(page);
    await frame(page);
    const button = page.locator(`${E} .mask-words button[data-index="2"]`);
    if (how === 'click') await button.click();
    else if (how === 'touch') await button.tap();
    else {
      await button.focus();
      await page.keyboard.press('Enter');
    }
    await page.waitForFunction((sel) => document.querySelector(sel).getAttribute('model-mask') === '2', E);
    await page.waitForFunction((sel) => document.querySelector(sel).shadowRoot.querySelector('.mask-panel[data-masked="true"]'), E);
    await frame(page);
    const pick = await page.$eval(E, (el) => el.getAttribute('model-head'));
    const [layer, head] = pick ? pick.split(' ').map((x) => Number(x) - 1) : await shadow(page, (el) => {
      const b = el.shadowRoot.querySelector('button.thumb[aria-selected="true"]');
      return [Number(b.dataset.layer), Number(b.dataset.head)];
    });
    const words = ['the', 'cat', 'sat', 'there'];
    const ref = await reference(page, { words, layer, head, masked: 2 });
    const rows = await shadow(page, (el) => [...el.shadowRoot.querySelectorAll('.mask-guesses tbody tr')].map((tr) => [tr.querySelector('th').textContent, tr.querySelector('td.p').textContent]));
    assert.equal(rows, ref.fill.map((g) => [g.word, g.p.toFixed(3)]), `${how}: the guesses are m.fill's`);
    assert.is(ref.fill.length, 5);
    // The tables are the masked sentence's; the lines view shows the masked word's row alone.
    close((await stateOf(page)).weights, ref.weights, `${how}: weights with "sat" masked`);
    assert.is(await shadow(page, (el) => el.shadowRoot.querySelector('figure.lines text.query.on')?.textContent ?? ''), 'sat');
    const looks = await shadow(page, (el) => el.shadowRoot.querySelector('.mask-panel .looks').textContent);
    const row = ref.weights.slice(2 * 4, 3 * 4);
    const top = [0, 1, 3].sort((a, b) => row[b] - row[a])[0];
    assert.ok(looks.includes(`(itself ${row[2].toFixed(2)}) looks most, of the other words, at “${words[top]}”`), `${how}: ${looks}`);
    // A saved picture says whose numbers it shows: the model, the head, the masked word; no seed.
    const svg = await page.$eval(E, (el) => [...new DOMParser().parseFromString(el.toSVG(), 'image/svg+xml').querySelectorAll('text')].map((t) => t.textContent).join(' '));
    assert.ok(svg.startsWith(`Attention in layer ${layer + 1}, head ${head + 1} of the trained English encoder: “the cat sat there” (d_k 16, both ways, “sat” masked, scale 0.250 = 1/√16, the model's)`), svg.slice(0, 200));
    assert.equal(problems, []);
  }
});

test('a second press unmasks; an unknown word is named as text, never markup', async ({ env }) => {
  const { page, problems, warnings } = await open(env, '/?model=english&model-mask=1&tokens=the+zorp+%3Cimg%3E+sat');
  await modelShown(page);
  await page.waitForFunction((sel) => document.querySelector(sel).shadowRoot.querySelector('.message:not([hidden])'), E);
  const text = await message(page);
  // The model's tokenizer splits "<img>" into a mark, a word and a mark, each shown as text.
  assert.match(text, /The model does not know the words “zorp”, “<”, “img”, “>”/);
  // A fact about the text, not a mistake: a note, and no console warning.
  assert.is(await shadow(page, (el) => el.shadowRoot.querySelector('.message').dataset.kind), 'info');
  assert.equal(warnings.filter((w) => /does not know/.test(w)), []);
  assert.is(await shadow(page, (el) => el.shadowRoot.querySelectorAll('img').length), 0);
  await page.click(`${E} .mask-words button[data-index="1"]`);
  await page.waitForFunction((sel) => !document.querySelector(sel).hasAttribute('model-mask'), E);
  assert.equal(problems, []);
});

test('arrowing through the heads replaces the address instead of adding a history entry; a mask adds one', async ({ env }) => {
  const { page, problems } = await open(env, '/?model=english');
  await modelShown(page);
  await frame(page);
  const before = await page.evaluate(() => history.length);
  // The last layer's head at the top of the window, just under the sticky toolbar: the first layer's is above, out of view.
  await page.$eval(E, (el) => {
    const b = el.shadowRoot.querySelector('button.thumb[data-layer="2"][data-head="0"]');
    b.focus({ preventScroll: true });
    window.scrollBy(0, b.getBoundingClientRect().top - el.shadowRoot.querySelector('.toolbar').getBoundingClientRect().bottom - 4);
  });
  for (const key of ['ArrowRight', 'ArrowUp', 'ArrowUp']) {
    const was = await page.evaluate(() => location.search);
    await page.keyboard.press(key);
    await page.waitForFunction((w) => location.search !== w && /model-head=/.test(location.search), was);
  }
  assert.is(await page.evaluate(() => location.search), '?model=english&model-head=1+2');
  assert.is(await page.evaluate(() => history.length), before);
  // The chosen head is brought out from under the sticky toolbar.
  const [top, bar] = await page.$eval(E, (el) => [el.shadowRoot.activeElement.getBoundingClientRect().top, el.shadowRoot.querySelector('.toolbar').getBoundingClientRect().bottom]);
  assert.ok(top >= bar, `the focused head's top ${top} is below the toolbar's bottom ${bar}`);
  await page.click(`${E} .mask-words button[data-index="2"]`);
  await page.waitForFunction(() => /model-mask=2/.test(location.search));
  assert.is(await page.evaluate(() => history.length), before + 1);
  assert.equal(problems, []);
});

test('punctuation typed against a word is a token of its own, as the model\'s tokenizer splits it', async ({ env }) => {
  const { page, problems } = await open(env, `/?model=english&tokens=${encodeURIComponent('The cat, which was old, slept.')}`);
  await modelShown(page);
  await frame(page);
  const words = await shadow(page, (el) => [...el.shadowRoot.querySelectorAll('.mask-words button')].map((b) => b.textContent));
  assert.equal(words, ['The', 'cat', ',', 'which', 'was', 'old', ',', 'slept', '.']);
  assert.equal(await page.$eval(E, (el) => el.config.tokens), words);
  assert.not.match(await message(page), /“cat,”|“slept\.”|“old,”/);
  assert.equal(problems, []);
});

test('a sentence typed in opens unmasked (the index belonged to the words before)', async ({ env }) => {
  const { page, problems } = await open(env, '/?model=english&model-mask=2');
  await modelShown(page);
  await page.waitForFunction((sel) => document.querySelector(sel).shadowRoot.querySelector('.mask-panel[data-masked="true"]'), E);
  const field = `${E} input[type="text"][title^="Tokens"]`;
  await page.fill(field, 'the dog that the cat saw ran');
  await page.press(field, 'Enter');
  await page.waitForFunction((sel) => document.querySelector(sel).getAttribute('tokens') === 'the dog that the cat saw ran', E);
  assert.is(await page.$eval(E, (el) => el.hasAttribute('model-mask')), false);
  await page.waitForFunction((sel) => document.querySelector(sel).shadowRoot.querySelector('.mask-panel[data-masked="false"]'), E);
  assert.equal(problems, []);
});

test('the page\'s sentences about random draws give way to the trained model\'s, and back', async ({ env }) => {
  const { page, problems } = await open(env, '/');
  const shown = () => page.$$eval('[data-shown-in]', (ns) => ns.map((n) => `${n.dataset.shownIn}:${n.hidden ? 'hidden' : 'shown'}`));
  await page.waitForFunction((sel) => document.querySelector(sel).shadowRoot.querySelector('section.step-weights'), E);
  assert.ok((await shown()).every((s) => s === 'draws:shown' || s === 'model:hidden'), String(await shown()));
  assert.ok((await shown()).includes('draws:shown') && (await shown()).includes('model:hidden'));
  await page.$eval(E, (el) => el.setAttribute('model', 'english'));
  await modelShown(page);
  await page.waitForFunction(() => !document.querySelector('#trained').offsetParent);
  assert.ok((await shown()).every((s) => s === 'draws:hidden' || s === 'model:shown'), String(await shown()));
  await page.$eval(E, (el) => el.removeAttribute('model'));
  await page.waitForFunction(() => document.querySelector('#trained').offsetParent !== null);
  assert.ok((await shown()).every((s) => s === 'draws:shown' || s === 'model:hidden'), String(await shown()));
  assert.equal(problems, []);
});

test('no pair masking with the trained encoder: Mask pairs is hidden and turned off, and back with the random weights', async ({ env }) => {
  const { page, problems } = await open(env, '/');
  await page.waitForFunction((sel) => document.querySelector(sel).shadowRoot.querySelector('section.step-weights'), E);
  const shownMaskPairs = () => shadow(page, (el) => el.shadowRoot.querySelector('button[title^="When on, clicking a weight"]').offsetParent !== null);
  await page.$eval(E, (el) => { el.masking = true; });
  await page.$eval(E, (el) => el.setAttribute('model', 'english'));
  await modelShown(page);
  await frame(page);
  assert.is(await page.$eval(E, (el) => el.masking), false);
  assert.is(await shownMaskPairs(), false);
  await page.$eval(E, (el) => el.removeAttribute('model'));
  await page.waitForFunction((sel) => !document.querySelector(sel).shadowRoot.querySelector('.model-part:not([hidden]) button.thumb'), E);
  await frame(page);
  assert.is(await shownMaskPairs(), true);
  assert.equal(problems, []);
});

test('bad model-mask and model-head keep the view and say what was wrong', async ({ env }) => {
  // Cold, with a mask past the sentence and a head outside the model: the view opens unmasked on the default head.
  const { page, problems, warnings } = await open(env, '/?model=english&model-mask=9&model-head=9+9');
  await modelShown(page);
  await page.waitForFunction((sel) => document.querySelector(sel).shadowRoot.querySelector('.message:not([hidden])'), E);
  const cold = await message(page);
  assert.is(await shadow(page, (el) => el.shadowRoot.querySelector('.message').dataset.kind), 'error');
  assert.is(warnings.filter((w) => w.startsWith('attention-explorer: ') && /model-mask expects the index/.test(w)).length, 1, warnings.join('\n'));
  assert.match(cold, /model-head expects "layer head", layer 1 to \d and head 1 to \d; got "9 9"; shown with the best det → noun head instead/);
  assert.match(cold, /model-mask expects the index of a word, 0 to 3 for these 4 words \(counted from 0\); got 9; shown unmasked/);
  assert.ok(await shadow(page, (el) => el.shadowRoot.querySelector('section.step-weights') !== null));
  // A good mask, then a bad one: the last good view stays and the message names the attribute.
  await page.$eval(E, (el) => el.setAttribute('model-mask', '2'));
  await page.waitForFunction((sel) => document.querySelector(sel).shadowRoot.querySelector('.mask-panel[data-masked="true"]'), E);
  const guesses = await shadow(page, (el) => el.shadowRoot.querySelector('.mask-guesses tbody').textContent);
  await page.$eval(E, (el) => el.setAttribute('model-mask', 'sat'));
  await page.waitForFunction((sel) => /model-mask expects a whole number/.test(document.querySelector(sel).shadowRoot.querySelector('.message').textContent), E);
  await frame(page);
  assert.is(await shadow(page, (el) => el.shadowRoot.querySelector('.mask-guesses tbody').textContent), guesses);
  assert.equal(problems, []);
});

test('a model-mask that is not a number on a cold open: the trained view, unmasked, said once', async ({ env }) => {
  // The first draw happens before the model has loaded; once it has, the
  // salvaged settings are drawn again with the model, not kept as random numbers.
  const { page, problems, warnings } = await open(env, '/?model=english&model-mask=abc');
  await modelShown(page);
  await frame(page);
  assert.ok(await shadow(page, (el) => el.shadowRoot.querySelector('.mask-panel') !== null && el.config.dk === 16), 'the trained encoder\'s head is shown');
  assert.match(await message(page), /^model-mask expects a whole number \(0 or more\), got "abc"; shown with its default instead$/);
  assert.is(warnings.filter((w) => /model-mask expects a whole number/.test(w)).length, 1, warnings.join('\n'));
  // The settings of the random draws step aside for a note: the model's numbers come from no seed or size typed there.
  const settingsShown = () => shadow(page, (el) => {
    el.shadowRoot.querySelector('details.settings').open = true;
    return { draw: [...el.shadowRoot.querySelectorAll('.settings .row.draw')].some((r) => r.offsetParent !== null), note: el.shadowRoot.querySelector('.model-settings-note').offsetParent !== null };
  });
  assert.equal(await settingsShown(), { draw: false, note: true });
  // Back to random: the switch takes the bad mask away, and the settings are back.
  await shadow(page, (el) => el.shadowRoot.querySelector('.weights-switch button:not([aria-pressed="true"])').click());
  await page.waitForFunction((sel) => !document.querySelector(sel).hasAttribute('model'), E);
  assert.is(await page.$eval(E, (el) => el.hasAttribute('model-mask')), false);
  await page.waitForFunction((sel) => !document.querySelector(sel).shadowRoot.querySelector('.root').dataset.model, E);
  assert.equal(await settingsShown(), { draw: true, note: false });
  assert.equal(problems, []);
});

test('in a compact figure and a story: no prose of its own, a story step masks a word and goes back to random', async ({ env }) => {
  const { page, problems, requests } = await open(env, '/tests/pages/english.html', { viewport: { width: 720, height: 1000 } });
  await modelShown(page);
  await frame(page);
  // A figure writes no sentence of its own: the model view's texts are not drawn.
  const prose = await shadow(page, (el) => [...el.shadowRoot.querySelectorAll('.model-part .explanation, .model-part h2, .model-part h3')].filter((n) => n.offsetParent !== null).map((n) => n.textContent));
  assert.equal(prose, []);
  assert.ok(await shadow(page, (el) => el.shadowRoot.querySelector('.weights-switch').offsetParent === null), 'the switch is a full control');
  await page.click('#mask-sat');
  await page.waitForFunction((sel) => document.querySelector(sel).shadowRoot.querySelector('.mask-panel[data-masked="true"]'), E);
  assert.is(await page.$eval(E, (el) => el.getAttribute('model-mask')), '2');
  assert.is(await shadow(page, (el) => el.shadowRoot.querySelectorAll('.mask-guesses tbody tr').length), 5);
  // No horizontal overflow in the column.
  assert.ok(await page.$eval(E, (el) => el.scrollWidth <= el.clientWidth + 1));
  await page.click('#mask-sat'); // the step ends
  await page.click('#random');
  await page.waitForFunction((sel) => !document.querySelector(sel).getAttribute('model'), E);
  await settled(page);
  assert.ok(await shadow(page, (el) => el.shadowRoot.querySelector('.model-part').hidden));
  assert.is(fetchedEnglish(requests).length, 1);
  assert.equal(problems, []);
});

test('axe finds nothing serious on the English view: each head is named by what it shows and described in full', async ({ env }) => {
  for (const path of ['/?model=english&model-mask=2', '/tests/pages/english.html']) {
    const { page } = await open(env, path, { bypassCSP: true });
    await modelShown(page);
    await frame(page);
    assert.equal(await axeViolations(page), [], path);
    const [name, about] = await shadow(page, (el) => {
      const b = el.shadowRoot.querySelector('button.thumb');
      return [b.textContent, el.shadowRoot.getElementById(b.getAttribute('aria-describedby')).textContent];
    });
    assert.match(name, /^H1/);
    assert.match(about, /^layer 1, head 1: /);
  }
});

test.run();
