// The shipped model (web/model/induction.json, from `npm run train-model`):
// accuracy >= 0.95 on repeated random 2 x 16 sequences, a previous-token
// head and an induction head scoring >= 0.6, a file under 100 KiB.
import { readFileSync, statSync } from 'node:fs';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { WORDS, headScores, loadModel } from '../../web/model.js';

const FILE = new URL('../../web/model/induction.json', import.meta.url);
// Sequences the scores are averaged over, drawn from a seed the training never saw.
const EVAL = { sequences: 128, seed: 20260101 };
const TARGET_ACCURACY = 0.95;
const TARGET_HEAD = 0.6;
const MAX_BYTES = 100 * 1024;

const test = suite('the shipped model');
let model;
test.before(async () => {
  model = await loadModel();
});

test('is a small file of the default architecture and vocabulary', () => {
  assert.ok(statSync(FILE).size <= MAX_BYTES, `${statSync(FILE).size} bytes`);
  const json = JSON.parse(readFileSync(FILE, 'utf8'));
  assert.is(json.format, 'attention-wasm-model');
  assert.equal(model.config, { layers: 2, heads: 4, dModel: 64, dHead: 16, context: 32 });
  assert.equal(model.vocab, WORDS);
  assert.ok(model.steps > 0);
});

test(`predicts the repeat: accuracy >= ${TARGET_ACCURACY} after its first word`, () => {
  const { accuracy } = model.evaluate(EVAL);
  assert.ok(accuracy >= TARGET_ACCURACY, `accuracy ${accuracy}`);
});

test(`a layer-1 previous-token head and a layer-2 induction head, each scoring >= ${TARGET_HEAD}`, () => {
  const scores = headScores(model, EVAL);
  const previous = Math.max(...scores[0].map((s) => s.previousToken));
  const induction = Math.max(...scores[1].map((s) => s.induction));
  assert.ok(previous >= TARGET_HEAD, `best layer-1 previous-token score ${previous}`);
  assert.ok(induction >= TARGET_HEAD, `best layer-2 induction score ${induction}`);
});

test('on a sentence and its repeat, the second half is predicted from the first', () => {
  const sentence = 'a big dog went home after school with my friend'.split(' ');
  const words = [...sentence, ...sentence];
  const predictions = model.predict(words, 1);
  // From the repeat's second word on, the top guess is the word that followed last time.
  let right = 0, total = 0;
  for (let i = sentence.length + 1; i < words.length - 1; i++) {
    total++;
    if (predictions[i][0].word === words[i + 1]) right++;
  }
  assert.ok(right / total >= 0.75, `${right} of ${total}`);
});

test.run();
