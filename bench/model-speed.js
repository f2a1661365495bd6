// model-speed.js - how fast a fresh tiny transformer (createModel({ seed: 1 }),
// the default settings, web/model.js) learns the repeat, in Node and in
// Chromium: on the page's main thread, and in the explorer's training Worker
// (web/explorer/model-worker.js, what "Train from scratch" runs, playing and
// reporting as it does in the explorer).
//
// Each run trains from scratch until the model predicts the repeat with
// TARGET accuracy (model.evaluate(): 64 repeated random sequences; in Node
// and on the main thread checked every CHECK_EVERY steps with the clock
// stopped, in the Worker on the models it reports) or LIMIT seconds of
// training have passed. It reports the steps a second after a warm-up (while
// the engine compiles the JS and tiers up the wasm: the first warmupSteps
// steps or warmupSeconds seconds, whichever ends first),
// and the step and the seconds of training at which the accuracy reached TARGET.
//
//   node bench/model-speed.js [--limit 60]
// bench/run.js imports modelSpeed for its results (npm run bench, or
// npm run bench -- --only model for this alone).
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';

import { start } from '../tests/browser.js';

const SETTINGS = { seed: 1, target: 0.9, checkEvery: 50, warmupSteps: 100, warmupSeconds: 3 };

// Trains until the target accuracy or `limit` seconds; runs in Node and, as
// its source, in a page, so it uses only what it is given.
async function trainRun({ modelUrl, seed, target, checkEvery, warmupSteps, warmupSeconds, limit }) {
  const { createModel } = await import(modelUrl);
  const model = await createModel({ seed });
  let trained = 0, steps = 0, afterWarmup = null, reached = null;
  while (reached === null && trained < limit * 1000) {
    const t0 = performance.now();
    for (let i = 0; i < checkEvery; i++) {
      model.trainStep();
      steps++;
      const ms = trained + performance.now() - t0;
      if (afterWarmup === null && (steps >= warmupSteps || ms >= warmupSeconds * 1000)) afterWarmup = { steps, ms };
    }
    trained += performance.now() - t0;
    if (model.evaluate().accuracy >= target) reached = { step: steps, seconds: trained / 1000 };
  }
  return { stepsPerSecond: rate(steps, trained, afterWarmup), reached, steps, seconds: trained / 1000 };

  function rate(total, ms, warm) {
    return warm === null || total === warm.steps ? total / (ms / 1000) : (total - warm.steps) / ((ms - warm.ms) / 1000);
  }
}

// The same in the explorer's Worker as the page runs it (its protocol is
// described in web/explorer/model-worker.js): 'start', then 'play' once it is
// 'ready'; each 'report' timed as it arrives and acknowledged as the page
// acknowledges it once painted (without the ack no next report comes). When
// the worker's own estimate comes near the target, its weights are asked for
// ('export') and the accuracy measured on the page while the worker goes on.
async function workerRun({ seed, target, warmupSteps, warmupSeconds, limit }) {
  const PREFILTER = 0.15;
  const { loadModel } = await import('/web/model.js');
  const worker = new Worker('/web/explorer/model-worker.js', { type: 'module' });
  try {
    return await new Promise((resolve, reject) => {
      let t0 = null, afterWarmup = null, checking = false, last = null, done = false;
      // Counted up to `end`: the report that reached the target, or the last one.
      const finish = (reached, end) => {
        if (done) return;
        done = true;
        const warm = afterWarmup !== null && end.step > afterWarmup.step;
        const from = warm ? afterWarmup : { step: 0, ms: 0 };
        resolve({ stepsPerSecond: (end.step - from.step) / ((end.ms - from.ms) / 1000), reached, steps: end.step, seconds: end.ms / 1000 });
      };
      worker.onerror = (e) => reject(new Error(e.message));
      worker.onmessage = async ({ data }) => {
        if (data.type === 'error') reject(new Error(data.message));
        if (data.type === 'ready') {
          t0 = performance.now();
          worker.postMessage({ type: 'play' });
          return;
        }
        if (data.type === 'model' && checking && last) {
          const at = last;
          const model = await loadModel(data.json);
          checking = false;
          if (model.evaluate().accuracy >= target) finish({ step: at.step, seconds: at.ms / 1000 }, at);
          return;
        }
        if (data.type !== 'report' || t0 === null) return;
        worker.postMessage({ type: 'ack' });
        const now = { step: data.step, ms: performance.now() - t0 };
        last = now;
        if (afterWarmup === null && (now.step >= warmupSteps || now.ms >= warmupSeconds * 1000)) afterWarmup = now;
        if (now.ms >= limit * 1000 || data.finished) return finish(null, now);
        // The worker's own accuracy (on a few sequences, now and then) says
        // when a check is worth its time on the page, which shares the CPU
        // with the worker. One check at a time.
        if (checking || !(data.accuracy >= target - PREFILTER)) return;
        checking = true;
        worker.postMessage({ type: 'export' });
      };
      worker.postMessage({ type: 'start', seed });
    });
  } finally {
    worker.terminate();
  }
}

async function chromiumRuns(settings) {
  const env = await start();
  try {
    const { page } = await env.page();
    await page.goto(`${env.base}/tests/pages/model.html`);
    const main = await page.evaluate(`(${trainRun})(${JSON.stringify({ ...settings, modelUrl: '/web/model.js' })})`);
    const worker = await page.evaluate(`(${workerRun})(${JSON.stringify(settings)})`);
    return { main, worker };
  } finally {
    await env.close();
  }
}

/**
 * { node, chromium: { main, worker } | null, error? }, each run
 * { stepsPerSecond, reached: { step, seconds } | null, steps, seconds }.
 */
export async function modelSpeed({ limit = 60 } = {}) {
  const settings = { ...SETTINGS, limit };
  const node = await trainRun({ ...settings, modelUrl: new URL('../web/model.js', import.meta.url).href });
  // Both Chromium runs end within their limits; one that does not (a worker
  // that stopped reporting) costs the row, not the rest of npm run bench.
  const ms = (2 * limit + 120) * 1000;
  try {
    const chromium = await Promise.race([chromiumRuns(settings), new Promise((resolve, reject) => {
      setTimeout(() => reject(new Error(`no result in ${ms / 1000} s`)), ms).unref();
    })]);
    return { node, chromium, limit };
  } catch (err) {
    return { node, chromium: null, limit, error: err.message.split('\n')[0] };
  }
}

/** The lines npm run bench prints. */
export function modelSpeedLines(r) {
  const { target, checkEvery, warmupSteps, warmupSeconds } = SETTINGS;
  const pct = `${Math.round(target * 100)}%`;
  const line = (name, run, note = '') => {
    const reached = run.reached
      ? `${pct} on the repeat at step ${run.reached.step}, after ${run.reached.seconds.toFixed(1)} s of training`
      : `below ${pct} on the repeat after ${run.steps} steps, ${run.seconds.toFixed(1)} s`;
    return `  ${`${name}:`.padEnd(22)}${run.stepsPerSecond.toFixed(1).padStart(6)} steps/s; ${reached}${note}`;
  };
  const lines = [`tiny transformer trained from scratch (createModel({ seed: ${SETTINGS.seed} }), defaults: 2 layers x 4 heads, d_model 64, batch 16)`,
    line('Node', r.node)];
  if (r.chromium) {
    lines.push(line('Chromium main thread', r.chromium.main), line('Chromium worker', r.chromium.worker, ' (the explorer\'s Train from scratch)'));
  } else {
    lines.push(`  (Chromium skipped: ${r.error})`);
  }
  lines.push(`  (steps/s after the first ${warmupSteps} steps or ${warmupSeconds} s of training, whichever ends first; accuracy on 64 repeated sequences every ${checkEvery} steps, not timed, or on the models the Worker reports; at most ${r.limit} s)`);
  return lines;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { limit: { type: 'string', default: '60' } } });
  for (const line of modelSpeedLines(await modelSpeed({ limit: Number(values.limit) }))) console.log(line);
}
