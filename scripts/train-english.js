#!/usr/bin/env node
// train-english.js - trains the shipped English encoder (npm run train-model
// -- english) and writes web/model/english.json: createEncoder at the default
// architecture (ENCODER_DEFAULTS) with a fixed seed, STEPS Adam steps on
// masked-LM batches of grammar sentences with the step size decaying to 0,
// saved as int8 (a float32 scale per row) with its model card: the data,
// the size, the steps, the held-out loss, agreement and every head's scores,
// all measured on the saved (quantized) model.
// Deterministic: the SIMD128 build with `deterministic: true` and seeded draws
// give the same file on every run. Prints the loss every LOG_EVERY steps and
// the best head per relation every SCORE_EVERY; redirect it to a log.
//
//   node scripts/train-english.js [--steps N] [--out PATH]

import { statSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import { createEncoder, headScores, loadModel } from '../web/model.js';
import { encoderParamShapes } from '../web/model/encoder.js';
import { MASK_DEFAULTS } from '../web/model/english/batch.js';
import { GRAMMAR_DEFAULTS } from '../web/model/english/grammar.js';
import { NOUNS, VERBS, ADJECTIVES } from '../web/model/english/lexicon.js';
import { HELD_OUT_SEED, LABEL_FLOOR, LABEL_MARGIN, RELATIONS, SCORE_SENTENCES } from '../web/model/english/scores.js';

const SEED = 1;
const STEPS = 3600;
const BATCH = 64;
const LEARNING_RATE = 0.002;
const LOG_EVERY = 100;
const SCORE_EVERY = 500;

const { values } = parseArgs({ options: { steps: { type: 'string' }, out: { type: 'string' } }, allowPositionals: true });
const steps = values.steps === undefined ? STEPS : Number(values.steps);
if (!Number.isInteger(steps) || steps < 0) throw new RangeError(`--steps must be a non-negative integer, got ${values.steps}`);
const OUT = values.out ?? fileURLToPath(new URL('../web/model/english.json', import.meta.url));

const round = (x) => Math.round(x * 1000) / 1000;

function bestPerRelation(scores) {
  const best = {};
  for (const layer of scores) {
    for (const head of layer) {
      for (const [key, r] of Object.entries(head.relations)) if (!best[key] || r.score > best[key].score) best[key] = { ...r, layer: head.layer, head: head.head };
    }
  }
  return best;
}

function scoreLine(scores) {
  return Object.entries(bestPerRelation(scores)).map(([key, b]) => `${key} ${b.score.toFixed(2)} (offset ${b.baseline.toFixed(2)}) at ${b.layer + 1}.${b.head + 1}`).join(', ');
}

const started = performance.now();
const model = await createEncoder({ seed: SEED, batch: BATCH, learningRate: LEARNING_RATE, decaySteps: steps });
console.log(`training: seed ${SEED}, ${JSON.stringify(model.config)}, ${JSON.stringify(model.training)}, ${model.vocab.length} words`);
let smooth = null;
for (let step = 1; step <= steps; step++) {
  const loss = model.trainStep();
  smooth = smooth === null ? loss : 0.98 * smooth + 0.02 * loss;
  if (step % LOG_EVERY === 0) console.log(`step ${String(step).padStart(5)}  loss ${smooth.toFixed(3)}  ${((performance.now() - started) / 1000).toFixed(0)} s`);
  if (step % SCORE_EVERY === 0 && step < steps) console.log(`  best heads: ${scoreLine(model.headScores({ sentences: 200 }))}`);
}

// Measure the saved model, as a user loads it.
writeFileSync(OUT, `${JSON.stringify(model.toJSON({ dtype: 'int8', card: null }))}\n`);
const shipped = await loadModel(OUT);
const scores = headScores(shipped);
const evaluation = shipped.evaluate();
const parameters = Object.values(encoderParamShapes({ ...shipped.config, vocabSize: shipped.vocab.length })).reduce((sum, [r, c]) => sum + r * c, 0);
const card = {
  description: 'A bidirectional transformer encoder trained by masked-word prediction on sentences of the project\'s English grammar',
  data: {
    source: 'web/model/english/grammar.js over web/model/english/lexicon.js (written by the project, MIT)',
    mix: 'grammar sentences only (100%); no real prose, see docs/model-english.md',
    lexicon: { nouns: NOUNS.length, verbs: VERBS.length + 2, adjectives: ADJECTIVES.length, forms: shipped.vocab.length },
    grammar: GRAMMAR_DEFAULTS,
    masking: MASK_DEFAULTS,
    trainSeed: SEED,
    heldOutSeed: HELD_OUT_SEED,
  },
  size: { ...shipped.config, vocab: shipped.vocab.length, parameters, dtype: 'int8' },
  training: { steps, ...model.training, finalTrainLoss: round(smooth ?? NaN) },
  evaluation: {
    sentences: SCORE_SENTENCES,
    maskedLoss: round(evaluation.loss),
    maskedAccuracy: round(evaluation.accuracy),
    agreement: Object.fromEntries(Object.entries(evaluation.agreement).map(([k, v]) => [k, { ...v, accuracy: round(v.accuracy) }])),
  },
  labels: { margin: LABEL_MARGIN, floor: LABEL_FLOOR },
  relations: Object.fromEntries(Object.entries(RELATIONS).map(([k, r]) => [k, r.name])),
  heads: scores.map((layer) => layer.map((h) => ({
    label: h.label,
    relation: h.relation,
    position: h.position,
    relations: Object.fromEntries(Object.entries(h.relations).map(([k, r]) => [k, [round(r.score), round(r.baseline), r.offset]])),
    positional: Object.fromEntries(Object.entries(h.positional).map(([k, v]) => [k, round(v)])),
  }))),
};
writeFileSync(OUT, `${JSON.stringify(shipped.toJSON({ dtype: 'int8', card }))}\n`);

console.log(`\nwrote ${OUT}: ${(statSync(OUT).size / 1024).toFixed(1)} KiB, ${parameters} parameters, ${((performance.now() - started) / 1000).toFixed(0)} s`);
console.log(`held-out masked loss ${evaluation.loss.toFixed(3)}, accuracy ${evaluation.accuracy.toFixed(3)}`);
for (const [key, a] of Object.entries(evaluation.agreement)) console.log(`agreement ${key}: ${a.right} / ${a.cases} = ${a.accuracy.toFixed(3)}`);
console.log(`best heads: ${scoreLine(scores)}`);
scores.forEach((layer) => layer.forEach((h) => console.log(`  layer ${h.layer + 1} head ${h.head + 1}: ${h.label}`)));
