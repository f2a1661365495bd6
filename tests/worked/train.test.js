// The explorer's Train mode without the DOM (web/worked/train.js): targets,
// loss, optimizers, and training steps through the Attention API on both builds.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { loadAttention, Matrix } from '../../web/attention.js';
import {
  Optimizer, PRESETS, TRAIN_DEFAULTS, Trainer, crossEntropy, drawTrainingInputs, formatTarget, gradientTerms, matchesTarget,
  parseTarget, presetTarget,
  targetCells, targetFromCells,
} from '../../web/worked/train.js';
import { assertClose } from '../helpers.js';

const TOKENS = ['the', 'cat', 'sat', 'on', 'the', 'mat'];
// "Previous token" on 6 tokens matches within 300 steps at the defaults.
const STEP_BUDGET = 300;
// Trainer gradients (float32 wasm, V = I trick) against float64 central
// differences of a float64 forward: float32 rounding of Q, K and the weights.
const RTOL_TRAIN_GRAD = 1e-4;

const targets = suite('targets');
targets('presets give one probability row per token', () => {
  assert.equal(targetCells(presetTarget('previous-token', TOKENS)), [[0], [0], [1], [2], [3], [4]]);
  assert.equal(targetCells(presetTarget('first-token', TOKENS)), [[0], [0], [0], [0], [0], [0]]);
  assert.equal(targetCells(presetTarget('same-word', TOKENS)), [[4], [1], [2], [3], [0], [5]]);
  assert.equal(targetCells(presetTarget('attend-to', TOKENS, { word: 'sat' })), [[2], [2], [2], [2], [2], [2]]);
  for (const preset of PRESETS) {
    const t = presetTarget(preset, TOKENS, { word: 'cat' });
    const sums = Array.from({ length: t.rows }, (_, i) => t.data.subarray(i * t.cols, (i + 1) * t.cols).reduce((a, b) => a + b, 0));
    assertClose(sums, new Array(t.rows).fill(1), { atol: 1e-6, what: `${preset} row sums` });
  }
});
targets('causal drops target cells after their row', () => {
  assert.equal(targetCells(presetTarget('same-word', TOKENS, { causal: true })), [[0], [1], [2], [3], [0], [5]]);
  assert.equal(targetCells(presetTarget('attend-to', TOKENS, { word: 'sat', causal: true })), [[], [], [2], [2], [2], [2]]);
});
targets('the window and the query offset drop target cells the row may not see, as the trainer will apply them', () => {
  // window [1, 0]: row i sees i - 1 and i; first-token's 0 is out of reach from row 2 on.
  assert.equal(targetCells(presetTarget('first-token', TOKENS, { window: [1, 0] })), [[0], [0], [], [], [], []]);
  assert.equal(targetCells(presetTarget('previous-token', TOKENS, { window: [1, 0] })), [[0], [0], [1], [2], [3], [4]]);
  // causal, queryOffset -1: row i sees keys 0 .. i - 1, so row 0 sees none and its own word is out of reach.
  assert.equal(targetCells(presetTarget('previous-token', TOKENS, { causal: true, queryOffset: -1 })), [[], [0], [1], [2], [3], [4]]);
  assert.equal(targetCells(presetTarget('same-word', TOKENS, { causal: true, queryOffset: -1 })), [[], [], [], [], [0], []]);
  // causal, queryOffset 4: row 0 sees keys 0 .. 4, which holds its repeated word.
  assert.equal(targetCells(presetTarget('same-word', TOKENS, { causal: true, queryOffset: 4 }))[0], [4]);
});
targets('painted cells, shared equally; bad input is named', () => {
  const t = targetFromCells(3, [[1, 2], [], [0]]);
  assert.equal(Array.from(t.data), [0, 0.5, 0.5, 0, 0, 0, 1, 0, 0]);
  assert.throws(() => targetFromCells(3, [[3], [], []]), /row 0 has column 3, outside 0..2/);
  assert.throws(() => targetFromCells(3, [[0]]), /3 rows/);
  assert.throws(() => presetTarget('next-token', TOKENS), /preset must be one of/);
  assert.throws(() => presetTarget('attend-to', TOKENS, { word: 'dog' }), /attend-to needs a word/);
});
targets.run();

const loss = suite('loss');
loss('cross-entropy over targeted rows and its gradient', () => {
  const w = new Matrix(2, 2, Float32Array.of(0.25, 0.75, 0.5, 0.5));
  const t = targetFromCells(2, [[1], []]);
  const ce = crossEntropy(w, t);
  assert.is(ce.rows, 1);
  assertClose([ce.loss], [-Math.log(0.75)], { rtol: 1e-7 });
  assertClose(Array.from(ce.dWeights.data), [0, -1 / 0.75, 0, 0], { rtol: 1e-6 });
  assert.ok(matchesTarget(w, t));
  assert.not.ok(matchesTarget(w, targetFromCells(2, [[0], []])));
});
loss('a row matches only with more than half its weight on its targets, not by a hair', () => {
  const rows = (first) => new Matrix(3, 3, Float32Array.of(...first, 1, 0, 0, 1, 0, 0));
  const t = targetFromCells(3, [[1], [], []]);
  assert.not.ok(matchesTarget(rows([0.377, 0.378, 0.245]), t));
  assert.ok(matchesTarget(rows([0.2, 0.51, 0.29]), t));
  assert.ok(matchesTarget(rows([0.3, 0.4, 0.3]), targetFromCells(3, [[1, 2], [], []])));
});
loss('a weight that underflowed to 0 gives a finite loss', () => {
  const ce2 = crossEntropy(new Matrix(1, 2, Float32Array.of(1, 0)), new Matrix(1, 2, Float32Array.of(0, 1)));
  assert.ok(Number.isFinite(ce2.loss) && ce2.loss > 60);
  assert.ok(ce2.dWeights.data.every(Number.isFinite));
});
loss.run();

const optim = suite('optimizers');
optim('SGD with momentum: u = momentum u + g; w -= lr u', () => {
  const o = new Optimizer({ optimizer: 'sgd', learningRate: 0.1, momentum: 0.5 });
  const w = { a: Float32Array.of(1, 2) };
  o.step(w, { a: Float32Array.of(1, -1) });
  assertClose(Array.from(w.a), [0.9, 2.1], { rtol: 1e-7 });
  o.step(w, { a: Float32Array.of(1, -1) });
  assertClose(Array.from(w.a), [0.75, 2.25], { rtol: 1e-7 });
  assert.is(o.steps, 2);
});
optim('Adam: the first step moves each weight by about lr against its gradient sign', () => {
  const o = new Optimizer({ optimizer: 'adam', learningRate: 0.01 });
  const w = { a: Float32Array.of(1, 1, 1) };
  o.step(w, { a: Float32Array.of(3, -0.001, 0) });
  assertClose(Array.from(w.a), [0.99, 1.01, 1], { rtol: 1e-5 });
});
optim('bad settings are named', () => {
  assert.throws(() => new Optimizer({ optimizer: 'rmsprop' }), /optimizer must be one of sgd, adam/);
  assert.throws(() => new Optimizer({ learningRate: -1 }), /learningRate must be a finite number >= 0/);
});
optim.run();

// float64 loss of the trainer's head as a function of wq / wk, for central differences.
function loss64(x, wq, wk, dk, target) {
  const n = x.rows, dm = x.cols;
  const proj = (w) => {
    const out = new Float64Array(n * dk);
    for (let i = 0; i < n; i++) for (let p = 0; p < dm; p++) for (let c = 0; c < dk; c++) out[i * dk + c] += x.data[i * dm + p] * w[p * dk + c];
    return out;
  };
  const q = proj(wq), k = proj(wk);
  let rows = 0, l = 0;
  for (let i = 0; i < n; i++) {
    const z = [];
    for (let j = 0; j < n; j++) {
      let s = 0;
      for (let c = 0; c < dk; c++) s += q[i * dk + c] * k[j * dk + c];
      z.push(s / Math.sqrt(dk));
    }
    const m = Math.max(...z), e = z.map((t) => Math.exp(t - m)), sum = e.reduce((a, b) => a + b, 0);
    let has = false;
    for (let j = 0; j < n; j++) {
      const t = target.data[i * n + j];
      if (t > 0) {
        has = true;
        l -= t * Math.log(e[j] / sum);
      }
    }
    rows += has ? 1 : 0;
  }
  return l / rows;
}

for (const simd of [true, false]) {
  const build = simd ? 'SIMD' : 'scalar';
  const t = suite(`Trainer, ${build} build`);
  t.before(async (ctx) => {
    ctx.attn = await loadAttention({ simd });
  });
  t(`previous token on 6 tokens matches within ${STEP_BUDGET} steps at the defaults, for several seeds`, ({ attn }) => {
    for (const seed of [7, 1, 2, 3, 4]) {
      const trainer = new Trainer(attn, { ...drawTrainingInputs(TOKENS, { seed }), target: presetTarget('previous-token', TOKENS) });
      const first = trainer.evaluate();
      let step = 0, r = first;
      while (!r.matches && step < STEP_BUDGET) {
        trainer.step();
        step++;
        r = trainer.evaluate();
      }
      assert.ok(r.matches, `seed ${seed}: no match after ${STEP_BUDGET} steps (loss ${r.loss})`);
      assert.ok(r.loss < first.loss / 2, `seed ${seed}: loss ${first.loss} -> ${r.loss}`);
    }
  });
  t('every preset and both optimizers lower the loss', ({ attn }) => {
    for (const preset of PRESETS) {
      for (const optimizer of ['sgd', 'adam']) {
        const trainer = new Trainer(attn, { ...drawTrainingInputs(TOKENS), target: presetTarget(preset, TOKENS, { word: 'cat' }), optimizer });
        const before = trainer.evaluate().loss;
        for (let s = 0; s < STEP_BUDGET; s++) trainer.step();
        const after = trainer.evaluate();
        assert.ok(after.loss < before / 4, `${preset} ${optimizer}: ${before} -> ${after.loss}`);
        assert.ok(after.matches, `${preset} ${optimizer}: no match after ${STEP_BUDGET} steps`);
      }
    }
  });
  t('deterministic: the same seed and settings give the same loss history, bit for bit', ({ attn }) => {
    const run = (seed) => {
      const trainer = new Trainer(attn, { ...drawTrainingInputs(TOKENS, { seed }), target: presetTarget('same-word', TOKENS) });
      for (let s = 0; s < 40; s++) trainer.step();
      return trainer.history;
    };
    assert.equal(run(7), run(7));
    assert.not.equal(run(7), run(8));
  });
  t(`the trainer's gradients of W_Q and W_K within ${RTOL_TRAIN_GRAD} of float64 central differences`, ({ attn }) => {
    const inputs = drawTrainingInputs(TOKENS, { seed: 5 });
    const target = targetFromCells(6, [[1], [0, 2], [], [5], [4], [3]]);
    const r = new Trainer(attn, { ...inputs, target }).evaluate();
    for (const name of ['wq', 'wk']) {
      const w = Float64Array.from(inputs[name].data);
      const f = () => (name === 'wq' ? loss64(inputs.x, w, inputs.wk.data, 3, target) : loss64(inputs.x, inputs.wq.data, w, 3, target));
      const fd = Float64Array.from(w, (_, i) => {
        const keep = w[i], h = 1e-6;
        w[i] = keep + h;
        const up = f();
        w[i] = keep - h;
        const down = f();
        w[i] = keep;
        return (up - down) / (2 * h);
      });
      assertClose(r.grads[name].data, fd, { rtol: RTOL_TRAIN_GRAD, what: `d loss / d ${name}` });
    }
  });
  t('W_V learns a target output (mean squared error)', ({ attn }) => {
    const inputs = drawTrainingInputs(TOKENS);
    const y = new Matrix(6, 3, Float32Array.from({ length: 18 }, (_, i) => ((i * 7) % 5) / 4 - 0.5));
    const trainer = new Trainer(attn, { ...inputs, target: presetTarget('previous-token', TOKENS), targetOutput: y, learn: ['wq', 'wk', 'wv'] });
    const before = trainer.evaluate();
    assert.ok(before.grads.wv instanceof Matrix);
    for (let s = 0; s < 200; s++) trainer.step();
    assert.ok(trainer.evaluate().loss < before.loss / 2);
    assert.ok(trainer.params.wv.data.some((x, i) => x !== inputs.wv.data[i]), 'wv moved');
  });
  t('a keep-mask and causal reach the weights and the gradients', ({ attn }) => {
    const inputs = drawTrainingInputs(TOKENS);
    const mask = TOKENS.map((_, i) => TOKENS.map((__, j) => !(i === 2 && j === 1)));
    const r = new Trainer(attn, { ...inputs, target: presetTarget('first-token', TOKENS), mask, causal: true }).evaluate();
    assert.is(r.weights.get(2, 1), 0);
    assert.is(r.weights.get(1, 4), 0);
    assert.ok(r.grads.wq.data.every(Number.isFinite) && r.grads.wk.data.every(Number.isFinite));
  });
  t('window, softcap and queryOffset reach the weights', ({ attn }) => {
    const inputs = drawTrainingInputs(TOKENS);
    const r = new Trainer(attn, { ...inputs, target: presetTarget('previous-token', TOKENS), window: [1, 0], softcap: 2, queryOffset: 0 }).evaluate();
    for (let i = 0; i < 6; i++) for (let j = 0; j < 6; j++) if (j > i || j < i - 1) assert.is(r.weights.get(i, j), 0, `${i},${j}`);
    const logitBound = Math.exp(2) / (Math.exp(2) + Math.exp(-2)); // softcap 2: two logits differ by < 4
    assert.ok(r.weights.get(3, 2) <= logitBound + 1e-6 && r.weights.get(3, 2) >= 1 - logitBound - 1e-6);
  });
  t('only the chosen matrices learn; bad settings are named', ({ attn }) => {
    const inputs = drawTrainingInputs(TOKENS);
    const trainer = new Trainer(attn, { ...inputs, target: presetTarget('first-token', TOKENS), learn: ['wk'] });
    trainer.step();
    assert.equal(Array.from(trainer.params.wq.data), Array.from(inputs.wq.data));
    assert.not.equal(Array.from(trainer.params.wk.data), Array.from(inputs.wk.data));
    assert.throws(() => new Trainer(attn, { ...inputs, target: presetTarget('first-token', TOKENS), learn: ['wo'] }), /learn holds "wo"/);
    assert.throws(() => new Trainer(attn, { ...inputs, target: presetTarget('first-token', TOKENS), learn: ['wv'] }), /targetOutput/);
    assert.throws(() => new Trainer(attn, { ...inputs, target: new Matrix(5, 5) }), /target must be \(6, 6\)/);
  });
  t.run();
}

const defaults = suite('defaults');
defaults('are frozen and name Adam on W_Q and W_K', () => {
  assert.is(TRAIN_DEFAULTS.optimizer, 'adam');
  assert.equal([...TRAIN_DEFAULTS.learn], ['wq', 'wk']);
  assert.ok(Object.isFrozen(TRAIN_DEFAULTS));
});
defaults.run();

const terms = suite('gradientTerms');
terms('a dW entry as the sum over tokens of x times the gradient row', () => {
  const x = new Matrix(2, 2, Float32Array.of(1, 2, 3, 4));
  const dq = new Matrix(2, 1, Float32Array.of(0.5, -1));
  const t = gradientTerms(x, dq, 1, 0, { tokens: ['a', 'b'], digits: 2 });
  assert.is(t.value, 2 * 0.5 + 4 * -1);
  assert.equal(t.terms.map((u) => u.token), ['a', 'b']);
  assert.is(t.text, 'dW_Q[1, 0] = Σ over tokens of X[token, 1] · dQ[token, 0] = 2.00·0.50 + 4.00·(-1.00) = -3.00');
});
terms.run();

const targetText = suite('formatTarget and parseTarget');
targetText('round trip through the train-target text', () => {
  assert.is(formatTarget({ preset: 'previous-token' }), 'previous-token');
  assert.is(formatTarget({ preset: 'attend-to', word: 'cat' }), 'attend-to:cat');
  assert.is(formatTarget({ preset: 'paint', cells: [[0], [], [1, 2]] }), 'paint:0-0,2-1,2-2');
  assert.equal(parseTarget('paint:0-0,2-1,2-2', 3), { preset: 'paint', cells: [[0], [], [1, 2]] });
  assert.equal(parseTarget('attend-to:cat', 3), { preset: 'attend-to', word: 'cat' });
  assert.equal(parseTarget('same-word', 3), { preset: 'same-word' });
  assert.is(parseTarget('paint:0-3', 3), null);
  assert.is(parseTarget('next-token', 3), null);
  assert.is(parseTarget('paint:x', 3), null);
});
targetText.run();
