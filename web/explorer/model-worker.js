// model-worker.js - trains a fresh tiny transformer (web/model.js) off the
// page's main thread, so the explorer stays responsive while its heads form.
// The page sends { type: 'start', seed } then 'play', 'pause' or
// { type: 'step', count }; the worker answers with 'progress' messages:
// the losses of the steps since the last one, the model as JSON (float32,
// exact), and now and then its head scores and accuracy on repeats.

import { createModel } from '../model.js';

// A slice of steps runs this long before the worker reports and reads its
// messages: short enough that Pause answers at once, long enough that
// reporting is a small part of the time.
const SLICE_MS = 250;
// Scores and accuracy on this many repeated random sequences: enough to
// see a head form, cheap beside the training.
const SCORE_SEQUENCES = 16;
// Scores every this many slices (once a second): a head forms over seconds,
// and scoring takes a good part of a slice's time from training.
const SCORE_EVERY = 4;

let model = null;
let playing = false;
let losses = [];
let slices = 0;

function report(withScores) {
  const msg = { type: 'progress', step: model.steps, losses, playing, json: model.toJSON() };
  if (withScores) {
    msg.scores = model.headScores({ sequences: SCORE_SEQUENCES });
    msg.accuracy = model.evaluate({ sequences: SCORE_SEQUENCES }).accuracy;
  }
  losses = [];
  postMessage(msg);
}

function run(count) {
  const t0 = performance.now();
  let done = 0;
  while (done < count && performance.now() - t0 < SLICE_MS) {
    losses.push(model.trainStep());
    done++;
  }
  return done;
}

function loop() {
  if (!playing || !model) return;
  run(Infinity);
  slices++;
  report(slices % SCORE_EVERY === 0);
  setTimeout(loop, 0);
}

// Messages that come while the model is being made wait for it.
let ready = Promise.resolve();

onmessage = async ({ data }) => {
  try {
    if (data.type === 'start') {
      playing = false;
      model = null;
      ready = createModel({ seed: data.seed }).then((m) => {
        model = m;
        losses = [];
        report(true);
      });
      await ready;
      return;
    }
    await ready;
    if (data.type === 'play' && model && !playing) {
      playing = true;
      loop();
    } else if (data.type === 'pause' && model) {
      playing = false;
      report(true);
    } else if (data.type === 'step' && model && !playing) {
      let left = data.count;
      while (left > 0) left -= run(left);
      report(true);
    }
  } catch (err) {
    playing = false;
    postMessage({ type: 'error', message: err.message });
  }
};
