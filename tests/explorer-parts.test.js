// The explorer's pure modules in Node, no browser: the settings table and its
// parsing, the scale slider's fixed range, word embeddings and positions,
// derivations with the cells they come from, the lines view's layout, the
// exported picture (hatching, −∞, title) and the dark palette's emphasis.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { loadAttention } from '../web/attention.js';
import { diverging, luminance, sequential } from '../web/explorer/colors.js';
import { computeExample, defaultScale, drawInputs, normalizeConfig, sinusoid, wordSeed } from '../web/explorer/computation.js';
import { snapshotView } from '../web/explorer/export.js';
import { lineStyle, linesLayout } from '../web/explorer/lines.js';
import { PARTS, SCALE_SLIDER, SETTINGS, parseSetting, readSettings, scaleToSlider, sliderToScale } from '../web/explorer/settings.js';
import { DEFAULT_EXPLANATIONS, attendsMost, blockedReason, defaultExplanation, explain, snapshotTitle } from '../web/explorer/text.js';
import { toSVG } from '../web/explorer/snapshot.js';
import { assertClose } from './helpers.js';

// float32 rows drawn from the same float64 draws are bit-identical; a sum of
// float32 with an exact sinusoid is within one float32 rounding of it.
// The title of a saved SVG: its 16 px lines joined (it wraps to the picture's width).
const svgTitle = (svg) => [...svg.matchAll(/font-size="16" fill="#000">([^<]*)</g)].map((m) => m[1]).join(' ');
const ATOL_F32_ROUNDING = 1e-6;
// A derivation rebuilds a softmax in float64 from the float32 logits: four
// decimals are what it prints, so it agrees with the kernel to 5e-5.
const ATOL_PRINTED = 5e-5;
// The core's tanh (c/kernels/f32-tanh.h) against Math.tanh: float32 with a
// polynomial exp, a few ulp; 1e-5 relative leaves room and still catches a
// logit that skipped the cap (off by far more).
const RTOL_TANH = 1e-5;

const reader = (attrs) => (name) => (name in attrs ? attrs[name] : null);

const settings = suite('settings table');

settings('every attribute is in one table with a help text; CLI and URL flags are subsets', () => {
  const attrs = SETTINGS.map((s) => s.attr);
  assert.equal(new Set(attrs).size, attrs.length, 'no duplicates');
  for (const name of ['tokens', 'seed', 'd-model', 'dk', 'dv', 'heads', 'kv-heads', 'causal', 'scale', 'embeddings', 'positions', 'step', 'show', 'controls']) {
    assert.ok(attrs.includes(name), name);
  }
  for (const s of SETTINGS) assert.ok(s.help.length > 10, `${s.attr} has help`);
  assert.not.ok(SETTINGS.find((s) => s.attr === 'show').cli, 'show is the element’s, not the CLI’s');
});

settings('readSettings: defaults are the handbook; attributes parse and complete the config', () => {
  const a = readSettings(reader({}));
  assert.equal(a.config.tokens, ['the', 'cat', 'sat', 'there']);
  assert.is(a.config.scale, defaultScale(3));
  assert.is(a.view.step, 'all');
  assert.equal([...a.view.show], PARTS);
  assert.is(a.view.controls, 'full');
  const b = readSettings(reader({ tokens: ' a  b ', seed: '9', heads: '4', 'kv-heads': '2', causal: '', scale: '', embeddings: 'word', show: 'lines weights', controls: 'minimal' }));
  assert.equal(b.config.tokens, ['a', 'b']);
  assert.is(b.config.seed, 9);
  assert.is(b.config.kvHeads, 2);
  assert.is(b.config.causal, true);
  assert.is(b.config.scale, defaultScale(3), 'an empty scale is the default');
  assert.is(b.config.embeddings, 'word');
  assert.equal([...b.view.show], ['lines', 'weights']);
  assert.is(b.view.controls, 'minimal');
});

for (const [attrs, message] of [
  [{ seed: 'abc' }, /^seed expects a whole number, got "abc"$/],
  [{ heads: '1e3' }, /^heads expects a whole number/],
  [{ tokens: '  ' }, /^tokens needs at least one word$/],
  [{ tokens: Array.from({ length: 65 }, (_, i) => `w${i}`).join(' ') }, /^tokens takes at most 64 tokens, got 65$/],
  [{ scale: 'Infinity' }, /^scale expects a number, got "Infinity"$/],
  [{ embeddings: 'letters' }, /^embeddings must be one of position, word; got "letters"$/],
  [{ show: 'weights legs' }, /^show lists parts from .*; got "legs"$/],
  [{ controls: 'some' }, /^controls must be one of full, minimal, none/],
  [{ step: 'nope' }, /^step must be one of all, inputs/],
  [{ dk: '0' }, /^dk must be an integer from 1 to 256, got 0$/],
]) {
  settings(`readSettings refuses ${JSON.stringify(attrs).slice(0, 60)} naming the setting`, () => {
    assert.throws(() => readSettings(reader(attrs)), (err) => err instanceof RangeError && message.test(err.message));
  });
}

settings('window, softcap and query-offset: parsed from the attribute, checked by normalizeConfig', () => {
  const read = (attrs) => readSettings(reader(attrs)).config;
  assert.equal(read({ window: '2' }).window, [2, 2]);
  assert.equal(read({ window: '3 0' }).window, [3, 0]);
  assert.is(read({ window: '-1 -1' }).window, null, 'unbounded on both sides is no window');
  assert.is(read({ window: '' }).window, null);
  assert.is(read({ 'query-offset': '-2' }).queryOffset, -2);
  assert.is(read({ softcap: '5' }).softcap, 5);
  assert.is(read({}).softcap, 0);
  assert.throws(() => read({ window: '2 x' }), /^window expects "left right"/);
  assert.throws(() => read({ window: '-2' }), /^window must be \[left, right\], integers from -1/);
  assert.throws(() => read({ softcap: '-1' }), /^softcap must be a finite number >= 0/);
  assert.throws(() => read({ 'query-offset': '1.5' }), /^query-offset expects a whole number/);
});

settings('parseSetting names the flag the caller uses (the CLI says --seed)', () => {
  const seed = SETTINGS.find((s) => s.attr === 'seed');
  assert.throws(() => parseSetting(seed, 'x', '--seed'), /^--seed expects a whole number, got "x"$/);
  const causal = SETTINGS.find((s) => s.attr === 'causal');
  assert.is(parseSetting(causal, ''), true);
  assert.is(parseSetting(causal, '0'), false);
});

settings('the command line takes --embeddings word: both "the" rows of the scores are equal', () => {
  const cli = fileURLToPath(new URL('../web/cli.js', import.meta.url));
  const r = spawnSync(process.execPath, [cli, '--tokens', 'the cat saw the dog', '--embeddings', 'word'], { encoding: 'utf8' });
  assert.is(r.status, 0, r.stderr);
  const rows = [...r.stdout.split('Step 2')[0].matchAll(/^\s+the\s+(-?\d.+)$/gm)].map((m) => m[1].trim());
  assert.is(rows.length, 2);
  assert.is(rows[0], rows[1]);
  assert.match(r.stdout, /embeddings "word"/);
});

settings.run();

const slider = suite('scale slider');

slider('the range is fixed: 1/16 to 16 times 1/sqrt(d_k), whatever the scale', () => {
  for (const dk of [1, 3, 64]) {
    assert.is(sliderToScale(SCALE_SLIDER.max, dk), Number((16 / Math.sqrt(dk)).toPrecision(4)));
    assert.is(sliderToScale(SCALE_SLIDER.min, dk), Number((1 / 16 / Math.sqrt(dk)).toPrecision(4)));
    assert.is(sliderToScale(0, dk), null, 'the middle is the default');
    assert.is(scaleToSlider(1000, dk), SCALE_SLIDER.max, 'clamped, never rescaled');
    assert.is(scaleToSlider(0, dk), SCALE_SLIDER.min);
  }
  assert.is(SCALE_SLIDER.step, 0.125);
  // A keyboard step is an eighth of an octave: about 9 %.
  const ratio = sliderToScale(SCALE_SLIDER.step, 3) / defaultScale(3);
  assertClose([ratio], [2 ** 0.125], { rtol: 1e-3, what: 'one step' });
});

slider('scale -> position -> scale round-trips to 4 significant digits', () => {
  for (const p of [-4, -1.5, -0.125, 0.125, 2, 3.875]) {
    const scale = sliderToScale(p, 5);
    assertClose([scaleToSlider(scale, 5)], [p], { atol: 1e-3, what: `position ${p}` });
  }
});

slider.run();

const words = suite('embeddings and positions');

words('position embeddings are the handbook draws; word embeddings give a repeated word one row', () => {
  const tokens = ['the', 'cat', 'saw', 'the', 'dog'];
  const handbook = drawInputs(normalizeConfig());
  const pos = drawInputs(normalizeConfig({ tokens: ['the', 'cat', 'sat', 'there'] }));
  assert.equal(Array.from(pos.X.data), Array.from(handbook.X.data));
  const word = drawInputs(normalizeConfig({ tokens, embeddings: 'word' }));
  const row = (m, i) => Array.from(m.data.subarray(i * m.cols, (i + 1) * m.cols));
  assert.equal(row(word.X, 0), row(word.X, 3), 'both "the"');
  assert.not.equal(row(word.X, 0), row(word.X, 1));
  const plain = drawInputs(normalizeConfig({ tokens, seed: 7 }));
  assert.equal(Array.from(word.WQ.data), Array.from(plain.WQ.data), 'W_Q stays the handbook draw');
  assert.not.equal(wordSeed(7, 'the'), wordSeed(8, 'the'), 'the seed changes the words');
});

words('positions add the sinusoid to each row', () => {
  const config = normalizeConfig({ tokens: ['a', 'a', 'a'], embeddings: 'word', positions: true, dModel: 8 });
  const base = drawInputs({ ...config, positions: false });
  const withPos = drawInputs(config);
  for (let i = 0; i < 3; i++) {
    const pe = sinusoid(i, 8);
    const want = Array.from({ length: 8 }, (_, c) => base.X.data[i * 8 + c] + pe[c]);
    assertClose(Array.from(withPos.X.data.subarray(i * 8, i * 8 + 8)), want, { atol: ATOL_F32_ROUNDING, what: `row ${i}` });
  }
  assert.is(sinusoid(0, 4)[0], 0);
  assert.is(sinusoid(0, 4)[1], 1);
});

words.run();

const texts = suite('derivations and titles');
texts.before(async (ctx) => {
  ctx.attn = await loadAttention();
});

const context = (attn, overrides = {}, mask = null) => {
  const config = normalizeConfig(overrides);
  const example = computeExample(attn, config, {}, mask ?? undefined);
  return { config, example, mask, edits: new Map(), inputs: {}, scaleIsDefault: overrides.scale === undefined };
};

texts('a score comes from row i of Q and row j of K, in its head’s columns', ({ attn }) => {
  const ctx = context(attn, { heads: 2, kvHeads: 1 });
  const r = explain(ctx, 'scores-1', 2, 0);
  assert.equal(r.sources, [{ id: 'Q', rows: [2, 3], cols: [3, 6] }, { id: 'K', rows: [0, 1], cols: [0, 3] }]);
  assert.match(r.text, /^score\(sat → the\) \(head 2\) = q_sat · k_the = /);
  const value = ctx.example.heads[1].scores.get(2, 0).toFixed(3);
  assert.ok(r.text.endsWith(value.replace(/^-0\.000$/, '0.000')), r.text);
});

texts('a weight: its row of logits; the derivation’s value is the kernel’s', ({ attn }) => {
  const ctx = context(attn);
  for (let i = 0; i < 4; i++) {
    for (let j = 0; j < 4; j++) {
      const r = explain(ctx, 'weights-0', i, j);
      assert.equal(r.sources, [{ id: 'scaled-0', rows: [i, i + 1], cols: [0, 4] }]);
      const parts = r.text.split(' = ');
      const quotient = parts.at(-2).split(' / ').map(Number);
      assertClose([quotient[0] / quotient[1]], [ctx.example.heads[0].weights.get(i, j)], { atol: ATOL_PRINTED, what: `(${i}, ${j})` });
    }
  }
});

texts('an output: its row of weights and its column of V; a Q entry: row of X, column of W_Q', ({ attn }) => {
  const ctx = context(attn, { heads: 2, kvHeads: 2 });
  assert.equal(explain(ctx, 'output-1', 3, 2).sources, [{ id: 'weights-1', rows: [3, 4], cols: [0, 4] }, { id: 'V', rows: [0, 4], cols: [5, 6] }]);
  assert.equal(explain(ctx, 'Q', 1, 4).sources, [{ id: 'X', rows: [1, 2], cols: [0, 6] }, { id: 'WQ', rows: [0, 6], cols: [4, 5] }]);
  assert.equal(explain(ctx, 'scaled-0', 1, 2).sources, [{ id: 'scores-0', rows: [1, 2], cols: [2, 3] }]);
});

texts('causal and masked pairs: −∞ logits, weight 0, and why', ({ attn }) => {
  const mask = new Uint8Array(16).fill(1);
  mask[2 * 4 + 0] = 0;
  const ctx = context(attn, { causal: true }, mask);
  assert.is(blockedReason(ctx.config, mask, 4, 0, 1), 'causal: a later token');
  assert.is(blockedReason(ctx.config, mask, 4, 2, 0), 'masked');
  assert.is(blockedReason(ctx.config, mask, 4, 2, 1), '');
  assert.match(explain(ctx, 'scaled-0', 0, 3).text, /= −∞: the pair may not attend \(causal: a later token\)/);
  assert.match(explain(ctx, 'weights-0', 2, 0).text, /= 0: not allowed \(masked\)/);
  assert.is(ctx.example.heads[0].weights.get(2, 0), 0);
});

texts('a window and a query offset block keys by position; a softcapped logit is c·tanh(x/c)', ({ attn }) => {
  const c = normalizeConfig({ window: [1, 0], queryOffset: 1, causal: true });
  // Query i sits at position i + 1: it sees keys i .. i + 1 (1 back, causal).
  assert.is(blockedReason(c, null, 4, 0, 0), '');
  assert.is(blockedReason(c, null, 4, 0, 1), '');
  assert.is(blockedReason(c, null, 4, 2, 1), 'outside the window');
  assert.is(blockedReason(c, null, 4, 0, 2), 'causal: a later token');
  assert.is(blockedReason(c, null, 4, 3, 2), 'outside the window');
  assert.is(blockedReason(normalizeConfig({ window: [-1, 1] }), null, 4, 0, 2), 'outside the window', 'unbounded back, 1 ahead');
  const ctx = context(attn, { softcap: 2, window: [1, 1] });
  const head = ctx.example.heads[0];
  for (let i = 0; i < 4; i++) {
    for (let j = 0; j < 4; j++) {
      const logit = head.logits.get(i, j);
      if (Math.abs(i - j) > 1) {
        assert.is(logit, -Infinity, `(${i}, ${j}) outside the window`);
        assert.match(explain(ctx, 'scaled-0', i, j).text, /−∞: the pair may not attend \(outside the window\)/);
        continue;
      }
      assertClose([logit], [2 * Math.tanh(head.scaled.get(i, j) / 2)], { rtol: RTOL_TANH, relativeTo: 'value', what: `logit (${i}, ${j})` });
      assert.match(explain(ctx, 'scaled-0', i, j).text, /= c·tanh\(x \/ c\) with c = 2 and x = score × scale = /);
    }
  }
  assert.match(snapshotTitle(ctx.config), /no mask, window 1 back, 1 ahead, scale 0\.577 = 1\/√3, softcap 2\)$/);
});

texts('attendsMost names the strongest key; a picture’s title states causal, mask, window and scale', ({ attn }) => {
  const ctx = context(attn);
  assert.is(attendsMost(ctx.config.tokens, ctx.example.heads[0].weights, 1), 'cat attends most to cat, 0.3769');
  const title = snapshotTitle(ctx.config, { maskedPairs: 2, scaleIsDefault: true });
  assert.match(title, /“the cat sat there”/);
  assert.match(title, /not causal, mask: 2 pairs masked, no window, scale 0\.577 = 1\/√3/);
  assert.match(snapshotTitle({ ...ctx.config, causal: true, scale: 2 }, { scaleIsDefault: false }), /causal, no mask, no window, scale 2\.000 = 3\.46 × 1\/√3/);
});

texts('the exported picture hatches disallowed pairs, writes −∞ logits and draws the lines', ({ attn }) => {
  const ctx = context(attn, { causal: true });
  const view = snapshotView({
    config: ctx.config, example: ctx.example, parts: new Set(PARTS), step: 'all', maskedPairs: 0, scaleIsDefault: true, enabledHeads: [],
    blocked: (i, j) => blockedReason(ctx.config, null, 4, i, j),
  });
  const svg = toSVG(view);
  assert.match(svg, /<pattern id="hatch"/);
  // 6 causal pairs, hatched in the logits and in the weights.
  assert.is((svg.match(/class="blocked"/g) ?? []).length, 12);
  assert.is((svg.match(/>−∞</g) ?? []).length, 6);
  assert.match(svgTitle(svg), /causal, no mask, no window, scale 0\.577/);
  assert.ok((svg.match(/<line /g) ?? []).length >= 10, 'lines of the lines view');
});

texts.run();

const look = suite('lines view and palettes');

look('lines: heavier weights draw wider and more opaque; layout has both token columns', () => {
  let last = { width: 0, opacity: -1 };
  for (const w of [0, 0.01, 0.2, 0.5, 1]) {
    const s = lineStyle(w);
    assert.ok(s.width > last.width && s.opacity > last.opacity, `w=${w}`);
    last = s;
  }
  assert.is(lineStyle(0.001).opacity, 0, 'a negligible weight draws nothing');
  const L = linesLayout(['a', 'a-very-long-token-indeed']);
  assert.is(L.left.length, 2);
  assert.is(L.right[1].text.length, 12, 'long tokens are shortened');
  assert.ok(L.line(0, 1).x2 > L.line(0, 1).x1);
});

look('dark palette: large magnitudes stand out (brighter), as they do (darker) in light', () => {
  const stepsUp = (f) => [0, 0.25, 0.5, 0.75, 1].map((t) => luminance(f(t)));
  const darkSeq = stepsUp((t) => sequential(t, 'dark'));
  const lightSeq = stepsUp((t) => sequential(t));
  for (let k = 1; k < 5; k++) {
    assert.ok(darkSeq[k] > darkSeq[k - 1], `dark sequential rises at ${k}`);
    assert.ok(lightSeq[k] < lightSeq[k - 1], `light sequential falls at ${k}`);
  }
  assert.ok(luminance(diverging(0, 'dark')) < luminance(diverging(1, 'dark')));
  assert.ok(luminance(diverging(0, 'dark')) < luminance(diverging(-1, 'dark')));
  assert.ok(luminance(sequential(0, 'dark')) < 0.02, 'zero sinks into the dark background');
});

look.run();

const forControls = suite('explanations for the controls shown');

forControls('no text points to a control the embed hides: "Mask pairs" and "Settings" need full controls, the slider any', () => {
  for (const step of Object.keys(DEFAULT_EXPLANATIONS)) {
    assert.is(defaultExplanation(step, 'full'), DEFAULT_EXPLANATIONS[step]);
    for (const controls of ['minimal', 'none']) {
      const text = defaultExplanation(step, controls);
      assert.not.match(text, /Mask pairs|Settings/, `${step}, ${controls}`);
      if (controls === 'none') assert.not.match(text, /slider/, `${step}, none`);
      assert.match(text, /\.$/, `${step}, ${controls} ends a sentence`);
    }
  }
  assert.match(DEFAULT_EXPLANATIONS.weights, /Mask pairs/, 'the full page still points to it');
  assert.match(defaultExplanation('scaled', 'minimal'), /slider/);
  assert.is(defaultExplanation('no-such-part', 'minimal'), undefined, 'a part without a default text is left alone');
});

forControls.run();
