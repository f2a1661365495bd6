// english.js - the English encoder's speed in Node: the forward of a
// 12-word sentence (every step kept, as the explorer asks for it), fill(),
// and trainStep() per second at the shipped batch and at smaller ones, from
// which docs/model-english.md estimates training in a tab. Prints the CPU
// model and the load beside every number: the machine is shared.
//
//   node bench/english.js [--repeats N] [--steps N]

import { loadavg } from 'node:os';

import { createEncoder, loadModel } from '../web/model.js';
import { cpuModel } from './cpu.js';

const args = process.argv.slice(2);
const flag = (name, fallback) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : fallback);
const repeats = flag('--repeats', 200);
const steps = flag('--steps', 20);
const cpu = cpuModel();
const load = () => loadavg()[0].toFixed(2);

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
function time(fn, n) {
  for (let i = 0; i < Math.min(10, n); i++) fn();
  const ms = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    fn();
    ms.push(performance.now() - t);
  }
  return median(ms);
}

const m = await loadModel('english');
const words = 'the big black cat that the dogs chase sat on the mat'.split(' ');
console.log(`${cpu}, load ${load()}`);
console.log(`forward, ${words.length} words: median ${time(() => m.forward(words), repeats).toFixed(2)} ms (load ${load()})`);
console.log(`fill, ${words.length} words: median ${time(() => m.fill(words, 3), repeats).toFixed(2)} ms (load ${load()})`);
for (const batch of [64, 16, 8]) {
  const fresh = await createEncoder({ seed: 1, batch });
  fresh.trainStep();
  const t = performance.now();
  for (let i = 0; i < steps; i++) fresh.trainStep();
  const perSecond = steps / ((performance.now() - t) / 1000);
  console.log(`trainStep, batch ${batch}: ${perSecond.toFixed(2)} steps/s, ${(perSecond * batch).toFixed(0)} sentences/s (load ${load()})`);
}
