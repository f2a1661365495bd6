// The tiny transformer (web/model.js, web/model/): gradients against numpy,
// the forward a reader sees, the task, serialisation, determinism, input
// errors. The shipped model's scores are in tests/model/induction.test.js.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { Matrix, NumpyRandom, loadAttention } from '../../web/attention.js';
import { Model, UNKNOWN, WORDS, createModel, headScores, loadModel } from '../../web/model.js';
import { toJSONObject } from '../../web/model/serialize.js';
import { MAX_SEGMENT, MIN_SEGMENT, drawBatch, drawRepeats } from '../../web/model/task.js';
import { crossEntropy, initParams, lossAndGradients } from '../../web/model/transformer.js';
import { Workspace } from '../../web/model/workspace.js';
import { assertClose, readJSON, rejects } from '../helpers.js';

// float32 wasm forward and backward against float64 central differences of a
// float64 loss: float32 rounding through two or three layers, relative to the
// largest gradient of the parameter.
const RTOL_GRAD = 2e-4;
// float32 logits and weights against the float64 forward.
const RTOL_FORWARD = 1e-5;
// A float16 round trip: relative rounding 2^-11 of every parameter, carried
// through the layers to the logits.
const RTOL_FLOAT16 = 2e-2;
// int8: each value within 1/254 of its row's largest, carried through the layers.
const RTOL_INT8 = 1e-1;

const fixture = readJSON('./fixtures/model.json');
let attn;

// A model holding a fixture case's parameters, through the public loader.
function caseModel(c) {
  const vocab = [UNKNOWN, ...Array.from({ length: c.vocabSize - 1 }, (_, i) => `w${i + 1}`)];
  const params = Object.fromEntries(Object.entries(c.params).map(([k, v]) => [k, Float32Array.from(v)]));
  return loadModel(toJSONObject({ config: c.config, vocab, params, steps: 0 }, 'float32'), { attention: attn });
}

const gradients = suite('gradients against numpy');
gradients.before(async () => {
  attn = await loadAttention({ deterministic: true });
});
for (const c of fixture.cases) {
  gradients(`${c.name}: loss and every parameter's gradient`, () => {
    const params = Object.fromEntries(Object.entries(c.params).map(([k, v]) => [k, Float32Array.from(v)]));
    const shape = { ...c.config, vocabSize: c.vocabSize };
    const { loss, grads } = lossAndGradients(attn, shape, params, Int32Array.from(c.tokens), c.batch, c.n,
      Int32Array.from(c.rows), Int32Array.from(c.targets));
    assertClose([loss], [c.loss], { rtol: 1e-5, what: 'loss' });
    assert.equal(Object.keys(grads).sort(), Object.keys(c.grads).sort());
    for (const name in c.grads) assertClose(grads[name], c.grads[name], { rtol: RTOL_GRAD, what: `${c.name} d${name}` });
  });
  gradients(`${c.name}: forward logits and attention weights`, async () => {
    const model = await caseModel(c);
    const tokens = Int32Array.from(c.tokens.slice(0, c.n));
    const r = model.forward(tokens);
    const V = c.vocabSize;
    assertClose(r.logits.data, c.logits.slice(0, c.n * V), { rtol: RTOL_FORWARD, what: 'logits' });
    for (let l = 0; l < c.config.layers; l++) {
      for (let h = 0; h < c.config.heads; h++) {
        const expected = c.weights[l].slice(h * c.n * c.n, (h + 1) * c.n * c.n);
        assertClose(r.attentions[l][h].data, expected, { rtol: RTOL_FORWARD, atol: 1e-7, what: `weights ${l}.${h}` });
      }
    }
  });
}
gradients.run();

const forward = suite('forward: what the model view reads');
let model;
forward.before(async () => {
  model = await createModel({ seed: 5 });
});
forward('shapes, causal weights, and each head as its own attention', () => {
  const words = ['The', 'cat', 'sat', 'on', 'the', 'mat', 'zebra'];
  const r = model.forward(words);
  const n = words.length;
  assert.equal(Array.from(r.tokens), Array.from(model.encode(words)));
  assert.equal(r.words[0], 'the');
  assert.equal(r.words[6], UNKNOWN);
  assert.equal([r.logits.rows, r.logits.cols], [n, model.vocab.length]);
  assert.equal(r.attentions.length, model.layers);
  for (let l = 0; l < model.layers; l++) {
    const layer = r.layers[l];
    assert.equal([layer.x.rows, layer.x.cols], [n, model.dModel]);
    for (let h = 0; h < model.heads; h++) {
      const head = layer.heads[h];
      assert.is(r.attentions[l][h], head.weights);
      const w = model.head(l, h);
      // q = x W_Q of that head, weights = softmax(q k^T / sqrt(dk)) causal, output = weights v.
      assertClose(attn.matmul(layer.x, w.wq).data, head.q.data, { rtol: 1e-5, what: `q ${l}.${h}` });
      assertClose(attn.matmul(layer.x, w.wv).data, head.v.data, { rtol: 1e-5, what: `v ${l}.${h}` });
      const ref = attn.attention(head.q, head.k, head.v, { causal: true, steps: true });
      assertClose(head.scores.data, ref.scores.data, { rtol: 1e-5, what: 'scores' });
      assertClose(head.weights.data, ref.weights.data, { rtol: 1e-5, what: 'weights' });
      assertClose(head.output.data, ref.output.data, { rtol: 1e-5, what: 'output' });
      for (let i = 0; i < n; i++) {
        let sum = 0;
        for (let j = 0; j < n; j++) {
          sum += head.weights.get(i, j);
          if (j > i) assert.is(head.weights.get(i, j), 0);
        }
        assertClose([sum], [1], { atol: 1e-5, what: `row ${i} sum` });
      }
    }
  }
  // The next layer's input is this layer's input plus its output (the residual stream).
  const x1 = r.layers[0].x.data.map((v, i) => v + r.layers[0].output.data[i]);
  assertClose(r.layers[1].x.data, x1, { rtol: 1e-6, what: 'residual' });
});
forward('a prefix gives the same numbers as the longer sequence (causal)', () => {
  const long = model.forward(['a', 'big', 'dog', 'ran', 'home']);
  const short = model.forward(['a', 'big', 'dog']);
  const V = model.vocab.length;
  assertClose(short.logits.data, long.logits.data.subarray(0, 3 * V), { rtol: 1e-5, what: 'logits' });
});
forward('predict: the top words with probabilities, most likely first', () => {
  const p = model.predict(['the', 'cat'], 3);
  assert.is(p.length, 2);
  assert.is(p[1].length, 3);
  assert.ok(p[1][0].probability >= p[1][1].probability && p[1][1].probability >= p[1][2].probability);
  assert.is(p[1][0].word, model.vocab[p[1][0].id]);
});
forward('encode lower-cases, trims and maps unknown words to 0', () => {
  assert.equal(Array.from(model.encode(['THE', ' cat ', 'xylophone'])), [WORDS.indexOf('the'), WORDS.indexOf('cat'), 0]);
  assert.equal(model.decode(model.encode(['dog', 'qqq'])), ['dog', UNKNOWN]);
});
forward.run();

const task = suite('the repeat task');
task('a copied segment of varying length and place; the loss rows are its predictable words', () => {
  const rng = new NumpyRandom(11);
  const lengths = new Set();
  for (let draw = 0; draw < 40; draw++) {
    const { tokens, rows, targets } = drawBatch(rng, 1, 32, 50);
    assert.ok(tokens.every((t) => t >= 1 && t < 50));
    const length = rows.length + 1;
    assert.ok(length >= MIN_SEGMENT && length <= MAX_SEGMENT, `segment length ${length}`);
    lengths.add(length);
    const start = rows[0] - length;
    for (let j = 0; j < length; j++) assert.is(tokens[start + length + j], tokens[start + j]);
    rows.forEach((r, i) => assert.is(targets[i], tokens[r + 1]));
  }
  // A fixed distance would let one positional head solve the task.
  assert.ok(lengths.size >= 8, `only ${lengths.size} distinct lengths`);
});
task('otherWeight: every position with a next word, the repeat at weight 1, the rest at otherWeight; same draws', () => {
  const plain = drawBatch(new NumpyRandom(4), 2, 20, 30);
  const weighted = drawBatch(new NumpyRandom(4), 2, 20, 30, 0.25);
  assert.is(plain.weights, null);
  assert.equal(Array.from(weighted.tokens), Array.from(plain.tokens));
  assert.is(weighted.rows.length, 2 * 19);
  const repeatRows = Array.from(weighted.rows).filter((_, i) => weighted.weights[i] === 1);
  assert.equal(repeatRows, Array.from(plain.rows));
  assert.ok(Array.from(weighted.weights).every((w) => w === 1 || w === 0.25));
});
task('the weighted loss is the weighted mean of the rows\' losses, and so is its gradient', () => {
  const logits = new Matrix(3, 4, Float32Array.from([1, 2, 0, -1, 0.5, 0.5, 3, 0, -2, 1, 1, 0]));
  const targets = Int32Array.from([1, 2, 0]);
  const weights = Float32Array.from([1, 0.5, 0.25]);
  const one = [0, 1, 2].map((r) => crossEntropy(attn, new Matrix(1, 4, logits.data.slice(r * 4, r * 4 + 4)), targets.subarray(r, r + 1)));
  const both = crossEntropy(attn, logits, targets, weights);
  const total = 1.75;
  assertClose([both.loss], [one.reduce((a, o, r) => a + (weights[r] / total) * o.loss, 0)], { rtol: 1e-6, what: 'loss' });
  for (let r = 0; r < 3; r++) {
    assertClose(both.grad.subarray(r * 4, r * 4 + 4), one[r].grad.map((g) => (g * weights[r]) / total), { rtol: 1e-6, what: `grad row ${r}` });
  }
});
task('scoring sequences: distinct words, then the same words', () => {
  const t = drawRepeats(new NumpyRandom(2), 3, 16, 256);
  for (let b = 0; b < 3; b++) {
    const first = Array.from(t.subarray(b * 32, b * 32 + 16));
    assert.is(new Set(first).size, 16);
    assert.equal(Array.from(t.subarray(b * 32 + 16, b * 32 + 32)), first);
  }
});
task.run();

const training = suite('training');
training('the same seed gives the same loss curve; another seed another', async () => {
  const a = await createModel({ seed: 7, attention: attn });
  const b = await createModel({ seed: 7, attention: attn });
  const c = await createModel({ seed: 8, attention: attn });
  const la = [], lb = [], lc = [];
  for (let i = 0; i < 20; i++) {
    la.push(a.trainStep());
    lb.push(b.trainStep());
    lc.push(c.trainStep());
  }
  assert.equal(la, lb);
  assert.not.equal(la, lc);
  assert.is(a.steps, 20);
  assert.ok(la.every(Number.isFinite));
});
training('one Workspace reused across batches gives the bits a fresh one gives, whatever rows the loss counts', () => {
  const shape = { layers: 2, heads: 2, dModel: 8, dHead: 4, context: 12, vocabSize: 20 };
  const params = initParams(shape, new NumpyRandom(3));
  const batch = 3, n = shape.context;
  const work = new Workspace(shape, batch, n, params);
  const rng = new NumpyRandom(4);
  const counts = new Set();
  // otherWeight 0 counts only the repeat, whose length varies; 0.5 counts every row.
  for (const otherWeight of [0, 0, 0.5, 0, 0.5, 0]) {
    const { tokens, rows, targets, weights } = drawBatch(rng, batch, n, shape.vocabSize, otherWeight);
    counts.add(rows.length);
    const reused = lossAndGradients(attn, shape, params, tokens, batch, n, rows, targets, weights, work);
    const fresh = lossAndGradients(attn, shape, params, tokens, batch, n, rows, targets, weights);
    assert.is(reused.loss, fresh.loss);
    for (const name in fresh.grads) assert.equal(reused.grads[name], fresh.grads[name], name);
    assert.is(reused.grads.embed, work.grads.embed);
  }
  assert.ok(counts.size >= 3, `the batches counted ${[...counts]} rows`);
});
training('a few steps lower the loss on a fixed batch', async () => {
  const m = await createModel({ seed: 1, attention: attn, batch: 8 });
  const before = m.evaluate({ sequences: 16 }).loss;
  for (let i = 0; i < 30; i++) m.trainStep();
  assert.ok(m.evaluate({ sequences: 16 }).loss < before);
});
training('decaySteps: the step size reaches 0 there, and the parameters stop moving', async () => {
  const m = await createModel({ seed: 2, attention: attn, dModel: 8, dHead: 4, batch: 2, warmup: 0, decaySteps: 3 });
  const words = ['one', 'two', 'three'];
  const logits = [];
  for (let i = 0; i < 4; i++) {
    logits.push(Array.from(m.forward(words).logits.data));
    m.trainStep();
  }
  logits.push(Array.from(m.forward(words).logits.data));
  assert.not.equal(logits[1], logits[2]); // step 2 moves (lr * 1/3)
  assert.equal(logits[3], logits[4]); // step 4 does not (past decaySteps)
  assert.equal(logits[2], logits[3]); // step 3 has lr * 0
});
training.run();

const scores = suite('head scores');
scores('match the definitions computed from forward() on each sequence', async () => {
  const m = await createModel({ seed: 3, attention: attn });
  const s = headScores(m, { sequences: 3, seed: 9 });
  const seqs = drawRepeats(new NumpyRandom(9), 3, 16, m.vocab.length);
  for (let l = 0; l < m.layers; l++) {
    for (let h = 0; h < m.heads; h++) {
      let prev = 0, ind = 0, first = 0;
      for (let b = 0; b < 3; b++) {
        const w = m.forward(seqs.subarray(b * 32, b * 32 + 32)).attentions[l][h];
        for (let i = 1; i < 32; i++) {
          prev += w.get(i, i - 1) / (3 * 31);
          first += w.get(i, 0) / (3 * 31);
          if (i >= 16) ind += w.get(i, i - 15) / (3 * 16);
        }
      }
      assertClose([s[l][h].previousToken, s[l][h].induction, s[l][h].firstToken], [prev, ind, first], { rtol: 1e-5, what: `scores ${l}.${h}` });
    }
  }
});
scores.run();

const json = suite('toJSON and loadModel');
json('float32 round trip is exact; float16 is close and half the size', async () => {
  const m = await createModel({ seed: 4, attention: attn });
  for (let i = 0; i < 3; i++) m.trainStep();
  const words = ['one', 'two', 'three', 'one', 'two'];
  const expected = m.forward(words).logits.data;
  const back = await loadModel(JSON.parse(JSON.stringify(m)), { attention: attn });
  assert.equal(back.config, m.config);
  assert.equal(back.vocab, m.vocab);
  assert.is(back.steps, 3);
  assert.equal(Array.from(back.forward(words).logits.data), Array.from(expected));
  const half = m.toJSON({ dtype: 'float16' });
  assert.ok(JSON.stringify(half).length < 0.6 * JSON.stringify(m.toJSON()).length);
  const fromText = await loadModel(JSON.stringify(half), { attention: attn });
  assertClose(fromText.forward(words).logits.data, expected, { rtol: RTOL_FLOAT16, what: 'float16 logits' });
  const int8 = m.toJSON({ dtype: 'int8' });
  assert.ok(JSON.stringify(int8).length < 0.6 * JSON.stringify(half).length);
  const quantized = await loadModel(int8, { attention: attn });
  assertClose(quantized.forward(words).logits.data, expected, { rtol: RTOL_INT8, what: 'int8 logits' });
});
json('int8 keeps each value within half a step of its row scale', async () => {
  const m = await createModel({ seed: 6, attention: attn, dModel: 8, dHead: 4 });
  const back = await loadModel(m.toJSON({ dtype: 'int8' }), { attention: attn });
  // Layer 1's wq (dModel, heads * dHead): one int8 scale per row, across all heads.
  const heads = Array.from({ length: m.heads }, (_, h) => [m.head(1, h).wq, back.head(1, h).wq]);
  for (let i = 0; i < m.dModel; i++) {
    let max = 0;
    for (const [a] of heads) for (let j = 0; j < m.dHead; j++) max = Math.max(max, Math.abs(a.get(i, j)));
    const step = max / 127;
    for (const [a, b] of heads) {
      for (let j = 0; j < m.dHead; j++) {
        const err = Math.abs(a.get(i, j) - b.get(i, j));
        assert.ok(err <= 0.5 * step * 1.0001, `row ${i}: error ${err} > half a step ${step / 2}`);
      }
    }
  }
});
json.run();

const errors = suite('input errors name the argument');
errors('forward, encode, head, predict', async () => {
  const m = await createModel({ seed: 0, attention: attn, context: 10 });
  rejects(() => m.forward(new Int32Array(11)), RangeError, /tokens must hold 1 to 10/);
  rejects(() => m.forward([]), RangeError, /tokens/);
  rejects(() => m.forward([1, 999]), RangeError, /tokens\[1\].*\[0, 256\)/);
  rejects(() => m.forward([1, 1.5]), RangeError, /tokens\[1\]/);
  rejects(() => m.forward('the cat'), TypeError, /forward: tokens/);
  rejects(() => m.encode('the'), TypeError, /encode: words/);
  rejects(() => m.encode(['a', 3]), TypeError, /words\[1\]/);
  rejects(() => m.head(2, 0), RangeError, /layer/);
  rejects(() => m.head(0, 4), RangeError, /head/);
  rejects(() => m.predict(['a'], 0), RangeError, /predict: k/);
  rejects(() => m.toJSON({ dtype: 'bfloat16' }), RangeError, /dtype/);
  rejects(() => headScores({}), TypeError, /headScores: model/);
  rejects(() => m.headScores({ sequences: 0 }), RangeError, /sequences/);
});
errors('createModel and loadModel', async () => {
  await rejects(createModel({ heads: 0 }), RangeError, /createModel: heads must be an integer in \[1, 16\]/);
  await rejects(createModel({ dModel: '64' }), TypeError, /createModel: dModel/);
  await rejects(createModel({ context: 9 }), RangeError, /context.*\[10,/);
  await rejects(createModel({ seed: -1 }), RangeError, /createModel: seed/);
  await rejects(createModel({ learningRate: 0 }), RangeError, /learningRate/);
  await rejects(createModel({ beta2: 1 }), RangeError, /beta2/);
  await rejects(createModel({ otherWeight: 2 }), RangeError, /createModel: otherWeight must be a number in \[0, 1\]/);
  await rejects(createModel({ vocab: ['<unk>', 'a', 'a'] }), RangeError, /vocab\[2\].*twice/);
  await rejects(createModel({ vocab: 'abc' }), TypeError, /createModel: vocab/);
  await rejects(createModel({ attention: {} }), TypeError, /createModel: attention/);
  await rejects(createModel(null), TypeError, /createModel: options/);
  await rejects(loadModel({ format: 'other' }), TypeError, /loadModel: source/);
  const good = (await createModel({ attention: attn, dModel: 8, dHead: 4 })).toJSON();
  await rejects(loadModel({ ...good, version: 2 }), RangeError, /version/);
  await rejects(loadModel({ ...good, config: { ...good.config, heads: undefined } }), TypeError, /config: heads/);
  await rejects(loadModel({ ...good, params: { ...good.params, embed: good.params.position } }), RangeError, /params\.embed holds/);
  await rejects(loadModel({ ...good, dtype: 'int4' }), RangeError, /dtype/);
});
errors.run();

const exportsSuite = suite('the public names');
exportsSuite('Model is the class both factories return', async () => {
  const m = await createModel({ attention: attn, dModel: 8, dHead: 4 });
  assert.instance(m, Model);
  assert.equal(m.config, { layers: 2, heads: 4, dModel: 8, dHead: 4, context: 32 });
  assert.is(m.vocab.length, WORDS.length);
});
exportsSuite.run();
