// model-speed.js - training steps per second of a fresh tiny transformer
// (createModel({ seed: 1 }), the default settings, web/model.js) in Node and
// in Chromium: on the page's main thread, and in the explorer's training
// Worker (web/explorer/model-worker.js, what "Train from scratch" runs),
// counted from its progress messages. A few warm-up steps first, so the
// wasm and JS are compiled; then as many steps as fit in `seconds`.
//
//   node bench/model-speed.js [--seconds 5]
// bench/run.js imports modelSpeed for its results (npm run bench, or
// npm run bench -- --only model for this alone).
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';

import { createModel } from '../web/model.js';
import { start } from '../tests/browser.js';

const WARMUP_STEPS = 3;

async function nodeSpeed(seconds) {
  const model = await createModel({ seed: 1 });
  for (let i = 0; i < WARMUP_STEPS; i++) model.trainStep();
  const t0 = performance.now();
  let steps = 0;
  while (performance.now() - t0 < seconds * 1000) {
    model.trainStep();
    steps++;
  }
  return steps / ((performance.now() - t0) / 1000);
}

async function chromiumSpeed(seconds) {
  const env = await start();
  try {
    const { page } = await env.page();
    await page.goto(`${env.base}/tests/pages/model.html`);
    return await page.evaluate(async ([ms, warmup]) => {
      const { createModel } = await import('/web/model.js');
      const model = await createModel({ seed: 1 });
      for (let i = 0; i < warmup; i++) model.trainStep();
      let t0 = performance.now();
      let steps = 0;
      while (performance.now() - t0 < ms) {
        model.trainStep();
        steps++;
      }
      const main = steps / ((performance.now() - t0) / 1000);
      // The worker: from its first report after warm-up to the last within the time.
      const worker = new Worker('/web/explorer/model-worker.js', { type: 'module' });
      const inWorker = await new Promise((resolve, reject) => {
        let first = null;
        worker.onerror = (e) => reject(new Error(e.message));
        worker.onmessage = ({ data }) => {
          if (data.type === 'error') reject(new Error(data.message));
          if (data.type !== 'progress') return;
          if (first === null) {
            if (data.step === 0) {
              worker.postMessage({ type: 'step', count: warmup });
              return;
            }
            first = { t: performance.now(), step: data.step };
            worker.postMessage({ type: 'play' });
            return;
          }
          const elapsed = performance.now() - first.t;
          if (elapsed >= ms) {
            worker.terminate();
            resolve((data.step - first.step) / (elapsed / 1000));
          }
        };
        worker.postMessage({ type: 'start', seed: 1 });
      });
      return { main, worker: inWorker };
    }, [seconds * 1000, WARMUP_STEPS]);
  } finally {
    await env.close();
  }
}

/** { node, chromium: { main, worker } | null, error? } in steps per second. */
export async function modelSpeed({ seconds = 5 } = {}) {
  const node = await nodeSpeed(seconds);
  try {
    return { node, chromium: await chromiumSpeed(seconds) };
  } catch (err) {
    return { node, chromium: null, error: err.message.split('\n')[0] };
  }
}

/** The lines npm run bench prints. */
export function modelSpeedLines(r) {
  const lines = ['tiny transformer training (createModel({ seed: 1 }), defaults: 2 x 4 heads, d_model 64, batch 16)',
    `  Node:                ${r.node.toFixed(1)} steps/s`];
  if (r.chromium) {
    lines.push(`  Chromium main thread: ${r.chromium.main.toFixed(1)} steps/s`, `  Chromium worker:      ${r.chromium.worker.toFixed(1)} steps/s (the explorer's Train from scratch)`);
  } else {
    lines.push(`  (Chromium skipped: ${r.error})`);
  }
  return lines;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { seconds: { type: 'string', default: '5' } } });
  for (const line of modelSpeedLines(await modelSpeed({ seconds: Number(values.seconds) }))) console.log(line);
}
