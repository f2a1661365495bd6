// step-tables.js: what each table of the steps view holds (ids, titles,
// labels, accessible names, which are canvases) and which matrix of a
// computation it shows; the labels of a copied table (pure, in Node; the
// built tables are in tables.test.js and steps-view.test.js).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { EDITABLE, copyLabels, headTableSpecs, inputTableSpecs, matrixOf, projectionTableSpecs } from '../../web/explorer/step-tables.js';
import { normalizeConfig } from '../../web/worked/computation.js';

const specs = suite('step-tables');
const tokens = ['the', 'cat', 'sat'];
const example = (heads, extra = {}) => ({ tokens, heads: Array.from({ length: heads }, (_, h) => ({ kvHead: h >> 1, scores: `s${h}`, scaled: `c${h}`, weights: `w${h}`, output: `o${h}` })), ...extra });

specs('one head: the step\'s own title, token rows and columns, sums under the weights', () => {
  const c = normalizeConfig({ tokens, dv: 2 });
  const [w] = headTableSpecs(c, example(1), 'weights');
  assert.is(w.id, 'weights-0');
  assert.is(w.title, 'attention weights');
  assert.equal(w.rows, tokens);
  assert.equal(w.cols, tokens);
  assert.ok(w.withSums && w.selectable);
  assert.not.ok('name' in w);
  const [o] = headTableSpecs(c, example(1), 'output');
  assert.equal(o.cols, ['v0', 'v1']);
  assert.not.ok(o.withSums);
});

specs('several heads: "Head h" captions, names that say the step, kv heads for grouped queries', () => {
  const c = normalizeConfig({ tokens, heads: 4, kvHeads: 2 });
  const s = headTableSpecs(c, example(4), 'scores');
  assert.equal(s.map((x) => x.id), ['scores-0', 'scores-1', 'scores-2', 'scores-3']);
  assert.is(s[3].title, 'Head 4 (K, V of kv head 2)');
  assert.is(s[3].name, 'Head 4 raw scores');
  assert.is(s[1].head, 1);
  assert.is(headTableSpecs(normalizeConfig({ tokens, heads: 2 }), example(2), 'scaled')[0].title, 'Head 1');
});

specs('canvases for the token-by-token steps, never for the output', () => {
  const c = normalizeConfig({ tokens });
  assert.ok(headTableSpecs(c, example(1), 'weights', true)[0].heatmap);
  assert.not.ok(headTableSpecs(c, example(1), 'output', true)[0].heatmap);
  assert.not.ok(headTableSpecs(c, example(1), 'weights', false)[0].heatmap);
});

specs('inputs and projections: columns per head, RoPE tables after the ones they turn', () => {
  const c = normalizeConfig({ tokens, heads: 2, kvHeads: 1, dk: 2, dv: 1, dModel: 3 });
  const inputs = inputTableSpecs(c, tokens);
  assert.equal(inputs.map((x) => x.id), ['X', 'WQ', 'WK', 'WV']);
  assert.ok(inputs.every((x) => x.editable && EDITABLE.has(x.id)));
  assert.equal(inputs[0].cols, ['x0', 'x1', 'x2']);
  assert.equal(inputs[1].rows, ['x0', 'x1', 'x2']);
  assert.equal(inputs[1].cols, ['q1.0', 'q1.1', 'q2.0', 'q2.1']);
  assert.equal(inputs[2].cols, ['k0', 'k1']);
  assert.equal(projectionTableSpecs(c, tokens).map((x) => x.id), ['Q', 'K', 'V']);
  const rope = projectionTableSpecs(normalizeConfig({ tokens, rope: true, dk: 2 }), tokens);
  assert.equal(rope.map((x) => x.id), ['Q', 'QR', 'K', 'KR', 'V']);
  assert.is(rope[1].title, 'q after RoPE');
});

specs('matrixOf: inputs and projections by name, a step by head, logits for the scaled step when there are any', () => {
  const ex = example(2, { X: 'x', WK: 'wk', QR: 'qr' });
  assert.is(matrixOf(ex, 'X'), 'x');
  assert.is(matrixOf(ex, 'WK'), 'wk');
  assert.is(matrixOf(ex, 'QR'), 'qr');
  assert.is(matrixOf(ex, 'weights-1'), 'w1');
  assert.is(matrixOf(ex, 'scaled-0'), 'c0');
  ex.heads[0].logits = 'l0';
  assert.is(matrixOf(ex, 'scaled-0'), 'l0');
});

specs('copyLabels: tokens on token axes, dimensions by number elsewhere', () => {
  assert.equal(copyLabels('weights-0', { rows: 3, cols: 3 }, tokens), { rows: tokens, cols: tokens });
  assert.equal(copyLabels('X', { rows: 3, cols: 2 }, tokens), { rows: tokens, cols: ['c0', 'c1'] });
  assert.equal(copyLabels('WQ', { rows: 2, cols: 1 }, tokens), { rows: ['x0', 'x1'], cols: ['c0'] });
  assert.equal(copyLabels('Q', { rows: 3, cols: 1 }, tokens), { rows: tokens, cols: ['c0'] });
});

specs.run();
