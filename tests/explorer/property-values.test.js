// property-values.js: the element's `inputs` and `mask` read from what a page
// sets and compared with the values in force, the shapes and draw key behind
// the random draws, the composed inputs with typed-in edits, and `state`
// (pure, in Node; the element's behaviour with them is in element.test.js).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { Matrix } from '../../web/core/matrix.js';
import { composeInputs, drawKey, inputShapes, readInputs, readMask, sameInputs, sameMask, stateOf } from '../../web/explorer/property-values.js';
import { HANDBOOK, normalizeConfig } from '../../web/worked/computation.js';
import { rejects } from '../helpers.js';

const values = suite('property-values');
const m = (rows) => Matrix.from(rows);

values('readInputs takes Matrix, { rows, cols, data } and number[][], and copies them', () => {
  const src = [[1, 2], [3, 4]];
  const got = readInputs({ X: src, WQ: { rows: 1, cols: 2, data: [5, 6] }, WK: null, WV: undefined });
  assert.equal(Object.keys(got).sort(), ['WQ', 'X']);
  assert.ok(got.X instanceof Matrix);
  assert.equal(got.X.toArray(), src);
  src[0][0] = 9;
  assert.is(got.X.get(0, 0), 1);
  assert.equal(readInputs(null), {});
  assert.equal(readInputs(undefined), {});
});

values('readInputs names the property, the unknown matrix or the bad one', () => {
  rejects(() => readInputs(5), TypeError, 'inputs must be an object { X?, WQ?, WK?, WV? }');
  rejects(() => readInputs({ Q: [[1]] }), RangeError, 'inputs: unknown matrix "Q" (use X, WQ, WK, WV)');
  rejects(() => readInputs({ X: [[1, 2], [3]] }), Error, /^inputs\.X: /);
});

values('sameInputs: same keys, shapes and bits (NaN equals NaN, 0 is not -0)', () => {
  const a = { X: m([[1, NaN]]) };
  assert.ok(sameInputs(a, { X: [[1, NaN]] }));
  assert.ok(sameInputs({}, {}));
  assert.not.ok(sameInputs(a, { X: [[1, 2]] }));
  assert.not.ok(sameInputs(a, { X: [[1], [NaN]] }));
  assert.not.ok(sameInputs(a, { WQ: [[1, NaN]] }));
  assert.not.ok(sameInputs(a, { X: [[1, NaN]], WQ: [[1]] }));
  assert.not.ok(sameInputs({ X: m([[0]]) }, { X: [[-0]] }));
});

values('readMask gives 1 where a pair may attend and refuses another shape', () => {
  assert.equal([...readMask([[true, false], [1, 0]], 2)], [1, 0, 1, 0]);
  for (const bad of [[[true]], [[true, true], [true]], 'x', [[true, true], null]]) {
    rejects(() => readMask(bad, 2), RangeError, 'mask must be boolean[][] of shape (2, 2)', JSON.stringify(bad));
  }
});

values('sameMask: null equals an all-true mask, not one that blocks a pair', () => {
  assert.ok(sameMask(Uint8Array.of(1, 1, 1, 1), null));
  assert.not.ok(sameMask(Uint8Array.of(1, 0, 1, 1), null));
  assert.ok(sameMask(Uint8Array.of(1, 0), Uint8Array.of(1, 0)));
  assert.not.ok(sameMask(Uint8Array.of(1, 0), Uint8Array.of(0, 1)));
  assert.not.ok(sameMask(Uint8Array.of(1), Uint8Array.of(1, 1)));
});

values('inputShapes and drawKey follow the sizes, the seed and the embeddings', () => {
  const c = normalizeConfig({ heads: 2, kvHeads: 1, dk: 3, dv: 2, dModel: 5 });
  assert.equal(inputShapes(c), { X: [HANDBOOK.tokens.length, 5], WQ: [5, 6], WK: [5, 3], WV: [5, 2] });
  const base = normalizeConfig({});
  const key = drawKey(base);
  assert.is(drawKey(normalizeConfig({ scale: 2, causal: true })), key, 'scale and causal draw nothing new');
  assert.is.not(drawKey(normalizeConfig({ seed: 1 })), key);
  assert.is.not(drawKey(base, 'model'), key);
  // Position embeddings draw row i for token i: other words, same draws; word embeddings follow the words.
  assert.is(drawKey(normalizeConfig({ tokens: ['a', 'b', 'c', 'd'] })), key);
  assert.is.not(drawKey(normalizeConfig({ tokens: ['a', 'b', 'c', 'd'], embeddings: 'word' })), drawKey(normalizeConfig({ embeddings: 'word' })));
});

values('composeInputs: the page\'s matrices checked, the base copied, the edits written over', () => {
  const c = normalizeConfig({ tokens: ['a', 'b'], dModel: 2, dk: 1 });
  const base = { X: m([[1, 2], [3, 4]]), WQ: m([[1], [2]]), WK: m([[3], [4]]), WV: m([[5], [6]]) };
  const got = composeInputs(c, { WK: [[7], [8]] }, base, new Map([['X:1:0', 30], ['WK:0:0', 70]]));
  assert.equal(got.X.toArray(), [[1, 2], [30, 4]]);
  assert.equal(got.WK.toArray(), [[70], [8]]);
  assert.is(base.X.get(1, 0), 3, 'the base stays as drawn');
  assert.ok(got.WQ !== base.WQ && got.WQ.data !== base.WQ.data);
  rejects(() => composeInputs(c, { X: [[1, 2, 3]] }, base, new Map()), RangeError, /inputs\.X/);
});

values('stateOf: one matrix per step with one head, an array with several', () => {
  const head = (s) => ({ scores: s, scaled: s, weights: s, output: s });
  const ex = { tokens: ['a'], X: 1, WQ: 2, WK: 3, WV: 4, Q: 5, K: 6, V: 7, heads: [head('h0'), head('h1')] };
  const one = stateOf({ ...ex, heads: [head('h0')] }, 1);
  assert.is(one.weights, 'h0');
  assert.ok(Object.isFrozen(one));
  assert.not.ok('QR' in one || 'logits' in one);
  assert.equal(stateOf(ex, 2).weights, ['h0', 'h1']);
  assert.equal(stateOf({ ...ex, QR: 8, KR: 9, heads: [{ ...head('h0'), logits: 'l' }] }, 1).logits, 'l');
});

values.run();
