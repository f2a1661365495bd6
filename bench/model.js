// model.js - how fast a fresh model learns induction in Node: steps per
// second of trainStep() and the steps and seconds of training until the
// next-word accuracy on the repeat (2 x 16 words, after its first word)
// reaches 90%. Evaluation time is not counted as training time.
//
//   node bench/model.js [--seed N] [--max-steps N] [--every N] [key=value ...]
// key=value pairs go to createModel (numbers), e.g. batch=8 learningRate=0.005.

import { createModel } from '../web/model.js';

const args = process.argv.slice(2);
const flag = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const seeds = args.includes('--seeds') ? args[args.indexOf('--seeds') + 1].split(',').map(Number) : [flag('--seed', 0)];
const maxSteps = flag('--max-steps', 3000);
const every = flag('--every', 25);
const overrides = Object.fromEntries(args.filter((a) => a.includes('=')).map((a) => {
  const [k, v] = a.split('=');
  return [k, Number(v)];
}));
const TARGET = 0.9;

for (const seed of seeds) {
  const model = await createModel({ seed, ...overrides });
  let trainMs = 0, reached = null, last = null;
  const started = performance.now();
  for (let step = 1; step <= maxSteps && reached === null; step++) {
    const t = performance.now();
    const loss = model.trainStep();
    trainMs += performance.now() - t;
    if (step % every === 0) {
      last = { step, loss, ...model.evaluate({ sequences: 32 }) };
      if (last.accuracy >= TARGET) reached = last;
    }
  }
  const wall = (performance.now() - started) / 1000;
  const steps = reached?.step ?? maxSteps;
  console.log(JSON.stringify({
    seed, ...overrides,
    config: model.config, batch: model.training.batch, learningRate: model.training.learningRate,
    stepsTo90: reached?.step ?? null,
    trainSeconds: +(trainMs / 1000).toFixed(1),
    wallSeconds: +wall.toFixed(1),
    stepsPerSecond: +(steps / (trainMs / 1000)).toFixed(1),
    accuracy: +(last?.accuracy ?? 0).toFixed(3),
  }));
}
