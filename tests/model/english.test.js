// The shipped English encoder (web/model/english.json) against the issue's
// targets, measured on held-out grammar sentences (a seed training never
// uses): heads that follow syntax where no fixed offset does, agreement past
// attractors, and the heads' choices on the example sentences. The card the
// JSON carries must be what these measurements give.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { headScores, loadModel } from '../../web/model.js';
import { HELD_OUT_SEED } from '../../web/model/english/scores.js';

const test = suite('the shipped English encoder');
let m, scores, evaluation;
test.before(async () => {
  m = await loadModel('english');
  scores = headScores(m).flat();
  evaluation = m.evaluate();
});

// The head with the best score on a relation.
const best = (key) => scores.reduce((a, b) => (b.relations[key].score > a.relations[key].score ? b : a));
// The word a head attends to most from word i, other than i itself.
function looksAt(words, head, i) {
  const w = m.forward(words).attentions[head.layer][head.head];
  let arg = -1;
  for (let j = 0; j < words.length; j++) if (j !== i && (arg < 0 || w.get(i, j) > w.get(i, arg))) arg = j;
  return words[arg];
}
const describe = (h, key) => `head ${h.layer + 1}.${h.head + 1}: ${key} ${h.relations[key].score.toFixed(3)}, best offset ${h.relations[key].baseline.toFixed(3)}`;

test('held-out sentences come from a seed training does not use', () => {
  assert.is(m.kind, 'encoder');
  assert.is(m.card.data.heldOutSeed, HELD_OUT_SEED);
  assert.ok(Number.isInteger(m.card.data.trainSeed) && m.card.data.trainSeed !== HELD_OUT_SEED);
});

// The targets, unchanged; docs/model-english.md gives what the
// shipped model measures against each.
const TARGET = {
  detNounPastAdjectives: 0.85, detNounPastAdjectivesMargin: 0.1,
  verbSubjectPastPhrase: 0.7, verbSubjectPastPhraseMargin: 0.3,
  detNoun: 0.9, verbSubject: 0.8, agreement: 0.9, attractor: 0.85,
};
// The best head on a relation among those at least `margin` above its baseline, or null.
const bestAbove = (key, margin) => scores.filter((h) => h.relations[key].score >= h.relations[key].baseline + margin)
  .reduce((a, h) => (a === null || h.relations[key].score > a.relations[key].score ? h : a), null);

test('det -> noun past adjectives: a head >= 0.85 and >= 0.1 above the best offset', () => {
  const key = 'detNounPastAdjectives';
  const h = bestAbove(key, TARGET.detNounPastAdjectivesMargin);
  assert.ok(h !== null, describe(best(key), key));
  assert.ok(h.relations[key].score >= TARGET[key], describe(h, key));
});

test('verb -> subject past a phrase or clause: a head >= 0.7 and >= 0.3 above the best offset', () => {
  const key = 'verbSubjectPastPhrase';
  const h = bestAbove(key, TARGET.verbSubjectPastPhraseMargin);
  assert.ok(h !== null, describe(best(key), key));
  assert.ok(h.relations[key].score >= TARGET[key], describe(h, key));
});

test('the best det -> noun head >= 0.9 and verb -> subject head >= 0.8 overall, each above its best offset', () => {
  for (const key of ['detNoun', 'verbSubject']) {
    const h = best(key);
    assert.ok(h.relations[key].score >= TARGET[key], describe(h, key));
    assert.ok(h.relations[key].score > h.relations[key].baseline, describe(h, key));
  }
});

test('agreement: the right form beats the wrong one in >= 90% of cases, >= 85% past an attractor', () => {
  const { all, attractor } = evaluation.agreement;
  assert.ok(all.cases > 300 && attractor.cases > 30, JSON.stringify(evaluation.agreement));
  assert.ok(all.accuracy >= TARGET.agreement, `all ${all.right} / ${all.cases}`);
  assert.ok(attractor.accuracy >= TARGET.attractor, `attractor ${attractor.right} / ${attractor.cases}`);
});

test('the example sentences: the best heads take "the" and "sat" to "cat", and "ran" to "dog" past a relative clause', () => {
  const det = best('detNoun'), subject = best('verbSubject');
  assert.is(looksAt(['the', 'cat', 'sat', 'there'], det, 0), 'cat');
  assert.is(looksAt(['the', 'cat', 'sat', 'there'], subject, 2), 'cat');
  assert.is(looksAt('the big black cat sat on the mat'.split(' '), det, 0), 'cat');
  assert.is(looksAt('the dog that the cat saw ran'.split(' '), subject, 6), 'dog');
});

test('every head is labelled, and the card carries these scores', () => {
  const card = m.card.heads.flat();
  assert.is(card.length, m.layers * m.heads);
  scores.forEach((h, i) => {
    assert.is(card[i].label, h.label);
    assert.is(card[i].relation, h.relation);
    assert.is(card[i].position, h.position);
    assert.ok((h.relation === null) !== (h.position === null), `head ${i} is labelled by exactly one of a relation and a position`);
    for (const [key, r] of Object.entries(h.relations)) {
      assert.ok(Math.abs(card[i].relations[key][0] - r.score) < 1e-3 && Math.abs(card[i].relations[key][1] - r.baseline) < 1e-3, `${key} of head ${i}`);
    }
  });
  assert.ok(Math.abs(m.card.evaluation.agreement.all.accuracy - evaluation.agreement.all.accuracy) < 1e-3);
});

test('fill: masked verbs and determiners take the number of their noun, past a relative clause too', () => {
  const p = (sentence, i) => Object.fromEntries(m.fill(sentence.split(' '), i, m.vocab.length).map((g) => [g.word, g.p]));
  for (const [sentence, i, right, wrong] of [
    ['the cat sits on the mat', 2, 'sits', 'sit'], ['the cats sit on the mat', 2, 'sit', 'sits'],
    ['the dog that the cats chase runs', 6, 'runs', 'run'], ['the dogs that the cat chases run', 6, 'run', 'runs'],
    ['this big black cat sat on the mat', 0, 'this', 'these'], ['these big black cats sat on the mat', 0, 'these', 'this'],
  ]) {
    const q = p(sentence, i);
    assert.ok(q[right] > q[wrong], `${sentence}: ${right} ${q[right]}, ${wrong} ${q[wrong]}`);
  }
  assert.is(m.fill('the big black cat sat on the mat'.split(' '), 7).length, 5);
});

test.run();
