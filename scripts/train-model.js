#!/usr/bin/env node
// train-model.js - trains the shipped model (npm run train-model) and writes
// web/model/induction.json: createModel at the default architecture with a
// fixed seed, STEPS Adam steps on the repeat task with the step size decaying
// to 0 and the words outside the repeat weighted OTHER_WEIGHT in the loss,
// saved as int8 (a float32 scale per row). Deterministic: the SIMD128 build and seeded draws give the same file
// on every machine. Prints the loss and accuracy as it goes, then the saved
// (quantized) model's accuracy and head scores, as docs/model.md states them.

import { statSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { createModel, headScores, loadModel } from '../web/model.js';

// `npm run train-model -- english` trains the English encoder instead (train-english.js).
if (process.argv[2] === 'english') {
  process.argv.splice(2, 1);
  await import('./train-english.js');
} else {
  await trainInduction();
}

async function trainInduction() {
  const SEED = 1;
  const STEPS = 3000;
  // A little loss on the random words outside the repeat teaches the model to be
  // unsure there, so its predictions before a repeat read as guesses.
  const OTHER_WEIGHT = 0.1;
  const REPORT_EVERY = 250;
  const OUT = fileURLToPath(new URL('../web/model/induction.json', import.meta.url));

  const started = performance.now();
  const model = await createModel({ seed: SEED, decaySteps: STEPS, otherWeight: OTHER_WEIGHT });
  console.log(`training: seed ${SEED}, ${JSON.stringify(model.config)}, ${JSON.stringify(model.training)}`);
  let smooth = null;
  for (let step = 1; step <= STEPS; step++) {
    const loss = model.trainStep();
    smooth = smooth === null ? loss : 0.95 * smooth + 0.05 * loss;
    if (step % REPORT_EVERY === 0) {
      const { accuracy } = model.evaluate({ sequences: 32 });
      const seconds = (performance.now() - started) / 1000;
      console.log(`step ${String(step).padStart(5)}  loss ${smooth.toFixed(3)}  accuracy ${accuracy.toFixed(3)}  ${seconds.toFixed(0)} s`);
    }
  }

  writeFileSync(OUT, `${JSON.stringify(model.toJSON({ dtype: 'int8' }))}\n`);
  const shipped = await loadModel();
  const { accuracy, loss } = shipped.evaluate();
  console.log(`\nwrote ${OUT}: ${(statSync(OUT).size / 1024).toFixed(1)} KiB`);
  console.log(`shipped model on 64 repeated random 2 x 16 sequences: accuracy ${accuracy.toFixed(3)} on the repeat after its first word, loss ${loss.toFixed(3)}`);
  console.log('head scores (previous token / induction / first token):');
  headScores(shipped).forEach((layer, l) => {
    layer.forEach((s, h) => {
      console.log(`  layer ${l + 1} head ${h + 1}: ${s.previousToken.toFixed(2)} / ${s.induction.toFixed(2)} / ${s.firstToken.toFixed(2)}`);
    });
  });
}
