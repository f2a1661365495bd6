// The English encoder (web/model/encoder.js, encoder-model.js, english/):
// gradients and forward against PyTorch in float64, padding, determinism,
// serialisation, the tokenizer, the grammar's structure, input errors. The
// shipped model's scores are in tests/model/english.test.js.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { loadAttention } from '../../web/attention.js';
import { createEncoder, headScores, loadModel, tokenize } from '../../web/model.js';
import { EncoderModel } from '../../web/model/encoder-model.js';
import { encoderLossAndGradients, initEncoderParams } from '../../web/model/encoder.js';
import { drawBatch } from '../../web/model/english/batch.js';
import { sentences } from '../../web/model/english/grammar.js';
import { DETERMINERS, allForms } from '../../web/model/english/lexicon.js';
import { bestOffset } from '../../web/model/english/scores.js';
import { MASK, UNKNOWN, englishVocab } from '../../web/model/english/vocab.js';
import { NumpyRandom } from '../../web/core/numpy-random.js';
import { assertClose, readJSON, rejects } from '../helpers.js';

// float32 wasm forward and backward (LayerNorm, GELU, two or three layers)
// against PyTorch in float64, relative to each parameter's largest gradient.
const RTOL_GRAD = 2e-4;
// float32 logits and attention weights against the float64 forward.
const RTOL_FORWARD = 2e-5;
// int8 weights (each value within 1/254 of its row's largest), carried through the layers.
const RTOL_INT8 = 1e-1;

const fixture = readJSON('./fixtures/encoder.json');
let attn;

function fixtureVocab(size) {
  return [UNKNOWN, MASK, ...Array.from({ length: size - 2 }, (_, i) => `w${i + 1}`)];
}

function caseModel(c, dtype = 'float32') {
  const params = Object.fromEntries(Object.entries(c.params).map(([k, v]) => [k, Float32Array.from(v)]));
  const model = new EncoderModel(attn, { config: c.config, vocab: fixtureVocab(c.vocabSize), params, training: {}, rng: new NumpyRandom(0) });
  return loadModel(model.toJSON({ dtype }), { attention: attn });
}

const reference = suite('encoder against PyTorch (float64)');
reference.before(async () => {
  attn = await loadAttention({ deterministic: true });
});
for (const c of fixture.cases) {
  reference(`${c.name}: loss and every parameter's gradient`, () => {
    const params = Object.fromEntries(Object.entries(c.params).map(([k, v]) => [k, Float32Array.from(v)]));
    const { loss, grads } = encoderLossAndGradients(attn, { ...c.config, vocabSize: c.vocabSize }, params, Int32Array.from(c.tokens),
      c.batch, c.n, Int32Array.from(c.lengths), Int32Array.from(c.rows), Int32Array.from(c.targets));
    assertClose([loss], [c.loss], { rtol: 1e-5, what: 'loss' });
    assert.equal(Object.keys(grads).sort(), Object.keys(c.grads).sort());
    for (const name in c.grads) assertClose(grads[name], c.grads[name], { rtol: RTOL_GRAD, what: `${c.name} d${name}` });
  });
  reference(`${c.name}: forward logits and attention weights of the first sentence alone`, async () => {
    const model = await caseModel(c);
    const n = c.lengths[0];
    const r = model.forward(Int32Array.from(c.tokens.slice(0, n)));
    assertClose(r.logits.data, c.logits, { rtol: RTOL_FORWARD, what: 'logits' });
    for (let l = 0; l < c.config.layers; l++) {
      for (let h = 0; h < c.config.heads; h++) {
        const expected = c.weights[l].slice(h * n * n, (h + 1) * n * n);
        assertClose(r.attentions[l][h].data, expected, { rtol: RTOL_FORWARD, atol: 1e-7, what: `weights ${l}.${h}` });
      }
    }
  });
  reference(`${c.name}: int8 weights stay near the float64 logits`, async () => {
    const model = await caseModel(c, 'int8');
    const n = c.lengths[0];
    assertClose(model.forward(Int32Array.from(c.tokens.slice(0, n))).logits.data, c.logits, { rtol: RTOL_INT8, what: 'int8 logits' });
  });
}
reference('a head\'s q is the layer\'s LayerNorm\'d input times its wq columns (the derivation the explorer shows)', async () => {
  const c = fixture.cases[0];
  const model = await caseModel(c);
  const r = model.forward(Int32Array.from(c.tokens.slice(0, c.lengths[0])));
  for (let l = 0; l < model.layers; l++) {
    for (let h = 0; h < model.heads; h++) {
      const { wq, wk, wv } = model.head(l, h);
      const X = r.layers[l].xNorm;
      for (const [w, got] of [[wq, r.layers[l].heads[h].q], [wk, r.layers[l].heads[h].k], [wv, r.layers[l].heads[h].v]]) {
        assertClose(got.data, attn.matmul(X, w).data, { rtol: 1e-6, what: `layer ${l} head ${h}` });
      }
    }
  }
});

const training = suite('training');
training.before(async () => {
  attn ??= await loadAttention({ deterministic: true });
});
training('a few steps twice from the same seed give the same bits; another seed does not', async () => {
  const run = async (seed) => {
    const m = await createEncoder({ seed, layers: 1, heads: 2, dModel: 16, dHead: 8, mlp: 32, batch: 8, attention: attn });
    const losses = [m.trainStep(), m.trainStep(), m.trainStep()];
    return { losses, json: JSON.stringify(m.toJSON()) };
  };
  const a = await run(5), b = await run(5), c = await run(6);
  assert.equal(a.losses, b.losses);
  assert.ok(a.json === b.json, 'parameters differ between two runs of one seed');
  assert.ok(a.json !== c.json, 'seed 6 trained to seed 5\'s parameters');
});
training('the loss falls over 40 steps of a small encoder', async () => {
  const m = await createEncoder({ seed: 2, layers: 1, heads: 2, dModel: 32, dHead: 16, mlp: 64, batch: 16, learningRate: 0.005, warmup: 10, attention: attn });
  const first = m.trainStep();
  let last = 0;
  for (let i = 0; i < 40; i++) last = m.trainStep();
  assert.ok(last < first - 1, `loss ${first} -> ${last}`);
  assert.is(m.steps, 41);
});
training('padding changes nothing: a sentence alone and padded in a batch give the same loss and gradients', () => {
  const shape = { layers: 2, heads: 2, dModel: 16, dHead: 8, mlp: 32, context: 8, vocabSize: 20 };
  const params = initEncoderParams(shape, new NumpyRandom(3));
  const sentence = [4, 9, 2, 7];
  const alone = encoderLossAndGradients(attn, shape, params, Int32Array.from(sentence), 1, 4, Int32Array.of(4), Int32Array.of(1, 3), Int32Array.of(5, 6));
  // Batch entry 0 padded from 4 to 7 with words that would change it if it saw them; the loss counts only its rows.
  const tokens = Int32Array.of(...sentence, 11, 12, 13, 3, 8, 1, 1, 5, 6, 2);
  const padded = encoderLossAndGradients(attn, shape, params, tokens, 2, 7, Int32Array.of(4, 7), Int32Array.of(1, 3), Int32Array.of(5, 6));
  assertClose([padded.loss], [alone.loss], { rtol: 1e-6, what: 'loss' });
  for (const name in alone.grads) assertClose(padded.grads[name], alone.grads[name], { rtol: 1e-5, atol: 1e-9, what: `d${name}` });
});

const data = suite('tokenizer, lexicon and grammar');
data('tokenize lower-cases and splits punctuation', () => {
  assert.equal(tokenize('The cat sat on the mat.'), ['the', 'cat', 'sat', 'on', 'the', 'mat', '.']);
  assert.equal(tokenize("Don't stop, Anna!"), ["don't", 'stop', ',', 'anna', '!']);
  assert.equal(tokenize('  '), []);
  rejects(() => tokenize(3), TypeError, /text must be a string/);
});
data('the vocabulary holds at least 1000 word forms and the example sentences entirely', () => {
  const forms = allForms();
  assert.ok(forms.length >= 1000, `${forms.length} forms`);
  const vocab = new Set(englishVocab());
  assert.is(vocab.size, englishVocab().length, 'a form appears twice');
  for (const s of ['the cat sat on the mat', 'the big black cat sat on the mat', 'the dog that the cat saw ran', 'the cat sat there']) {
    for (const w of tokenize(s)) assert.ok(vocab.has(w), `${w} (in "${s}") is not in the vocabulary`);
  }
});
data('every relation a sentence records points at a word of the right kind', () => {
  const forms = {};
  for (const s of sentences(7, 300)) {
    for (const r of [...s.det, ...s.adj, ...s.subj, ...s.obj, ...s.prep]) {
      assert.ok(r.from >= 0 && r.from < s.words.length && r.to >= 0 && r.to < s.words.length && r.from !== r.to, s.words.join(' '));
    }
    for (const r of s.det) assert.ok(r.to - r.from === r.adjectives + 1, `det ${s.words[r.from]} -> ${s.words[r.to]} in "${s.words.join(' ')}"`);
    for (const a of s.agree) {
      assert.is(s.words[a.at], a.right);
      forms[a.kind] = (forms[a.kind] ?? 0) + 1;
    }
    for (const r of s.subj.filter((x) => x.between !== null)) assert.ok(r.from - r.to > 2, `subject past a phrase in "${s.words.join(' ')}"`);
  }
  assert.ok(forms.verb > 100 && forms.det > 30, JSON.stringify(forms));
});
data('masked batches: about one word in five chosen; half the chosen determiners and agreeing verbs swapped, 80% of the rest <mask>; padding never chosen', () => {
  const vocab = englishVocab();
  const index = new Map(vocab.map((w, i) => [w, i]));
  const determiners = new Set(Object.values(DETERMINERS).flat().map((w) => index.get(w)));
  const rng = new NumpyRandom(4);
  let chosen = 0, words = 0, masked = 0, rest = 0;
  const swapped = { det: [0, 0], verb: [0, 0] };
  for (let i = 0; i < 20; i++) {
    const b = drawBatch(rng, { batch: 32, context: 32, index, maskId: 1, firstWord: 13, vocabSize: vocab.length });
    const kind = new Map();
    b.sentences.forEach((s, k) => {
      for (const r of s.det) kind.set(k * b.n + r.from, { det: true });
      for (const a of s.agree) if (a.kind === 'verb') kind.set(k * b.n + a.at, { wrong: index.get(a.wrong) });
    });
    b.rows.forEach((r, j) => {
      assert.ok(r % b.n < b.kvLengths[Math.floor(r / b.n)], 'a padding position was chosen');
      const k = kind.get(r), token = b.tokens[r];
      if (k?.det) {
        swapped.det[1]++;
        if (token !== b.targets[j] && determiners.has(token)) swapped.det[0]++;
      } else if (k) {
        swapped.verb[1]++;
        if (token === k.wrong) swapped.verb[0]++;
      } else {
        rest++;
        if (token === 1) masked++;
      }
    });
    chosen += b.rows.length;
    words += b.kvLengths.reduce((x, y) => x + y, 0);
  }
  assert.ok(chosen / words > 0.15 && chosen / words < 0.3, `${chosen / words}`);
  assert.ok(Math.abs(masked / rest - 0.8) < 0.05, `${masked / rest}`);
  for (const [key, [n, of]] of Object.entries(swapped)) {
    // Half swapped (within 3.5 standard deviations), plus the few that BERT's 10% random word makes another determiner.
    assert.ok(of > 150 && Math.abs(n / of - 0.5) < 0.03 + 3.5 * Math.sqrt(0.25 / of), `${key}: ${n} / ${of}`);
  }
});
data('bestOffset picks the commonest offset', () => {
  assert.equal(bestOffset([{ from: 0, to: 1 }, { from: 3, to: 4 }, { from: 2, to: 5 }]), { offset: 1, baseline: 2 / 3 });
  assert.equal(bestOffset([]), { offset: 0, baseline: 0 });
});

const errors = suite('input errors');
let model;
errors.before(async () => {
  attn ??= await loadAttention({ deterministic: true });
  model = await createEncoder({ seed: 1, layers: 1, heads: 2, dModel: 16, dHead: 8, mlp: 32, attention: attn });
});
errors('unknown words are id 0 and reported with their positions', () => {
  const words = ['the', 'Cat', 'zyzzyva', 'sat', 'qwerty'];
  assert.equal(Array.from(model.encode(words)).map((id) => model.vocab[id]), ['the', 'cat', UNKNOWN, 'sat', UNKNOWN]);
  assert.equal(model.unknownWords(words), [{ index: 2, word: 'zyzzyva' }, { index: 4, word: 'qwerty' }]);
  assert.equal(model.forward(words).unknown, [2, 4]);
});
errors('bad calls are TypeError or RangeError naming the argument', async () => {
  rejects(() => model.encode('the cat'), TypeError, /encode: words must be an array of strings/);
  rejects(() => model.forward([]), RangeError, /forward: tokens must hold 1 to 32/);
  rejects(() => model.forward(new Array(33).fill('the')), RangeError, /context/);
  rejects(() => model.forward([1, 99999]), RangeError, /tokens\[1\] must be a word or an id/);
  rejects(() => model.fill(['the', 'cat'], 2), RangeError, /fill: i must be an integer in \[0, 2\)/);
  rejects(() => model.head(1, 0), RangeError, /head: layer must be an integer in \[0, 1\)/);
  rejects(() => model.headScores({ sentences: 0 }), RangeError, /sentences must be a positive integer/);
  rejects(() => headScores({}), TypeError, /headScores: model must be a Model or an EncoderModel/);
  await rejects(createEncoder({ layer: 2 }), TypeError, /createEncoder/);
  const json = model.toJSON();
  await rejects(loadModel({ ...json, kind: 'decoderish' }), RangeError, /kind must be/);
  await rejects(loadModel({ ...json, params: { ...json.params, 'layers.0.wq': 'AAAA' } }, { attention: attn }), RangeError, /params\.layers\.0\.wq/);
});
errors('fill gives five words with probabilities, never the special tokens', () => {
  const guesses = model.fill(['the', 'cat', 'sat', 'there'], 1);
  assert.is(guesses.length, 5);
  for (const g of guesses) {
    assert.ok(g.word !== UNKNOWN && g.word !== MASK && g.p > 0 && g.p < 1);
  }
  assert.ok(guesses[0].p >= guesses[4].p);
});

reference.run();
training.run();
data.run();
errors.run();
