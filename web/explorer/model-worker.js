// model-worker.js - trains a fresh tiny transformer (web/model.js) off the
// page's main thread, so the explorer stays responsive while its heads form.
//
// The page sends { type: 'start', seed, tokens, steps? } (steps: where the
// run ends, TRAIN_STEPS unless told), then 'play', 'pause',
// { type: 'step', count }, { type: 'view', tokens } (the words on screen
// changed), 'ack' (the last report is painted) and 'export'. The worker
// answers:
// - 'ready' once, with the vocabulary and sizes, so reports carry ids only;
// - 'report': what the page draws, as typed arrays whose buffers are
//   transferred, never copied or parsed: the losses since the last report,
//   every head's pattern on the page's words (layers x heads x n x n), the top
//   3 guesses at each word, and now and then the head scores and accuracy on
//   repeats. While playing, a new report goes out only once the page has
//   acknowledged the last one (it acks after painting it) and REPORT_MS has
//   passed, so reports come at most as often as the page paints and never
//   queue up behind a busy page;
// - 'model': the full weights as JSON, only when they are asked for: after
//   start, pause, a run of steps, the end of training, or 'export'.
//
// Training ends on its own at TRAIN_STEPS: the step size decays linearly to
// zero there (the schedule the shipped model was trained with), so the model
// settles instead of wandering, and a run left going ends as good as it gets.

import { createModel } from '../model.js';

// A slice of steps runs at most this long before the worker reads its
// messages: short enough that Pause and acks answer within a frame or two,
// long enough that the message round trip is a small part of the time.
const SLICE_MS = 40;
// Scores and accuracy on this many repeated random sequences: enough to
// see a head form, cheap beside the training.
const SCORE_SEQUENCES = 16;
// Scores at most this often: a head forms over seconds, and scoring takes a
// good part of a slice's time from training.
const SCORE_MS = 1000;
// The shipped model's schedule (scripts/train-model.js): Adam's step size
// decays linearly to zero over these steps, and a little loss on the words
// outside the repeat keeps the guesses before a repeat unsure.
export const TRAIN_STEPS = 3000;
const OTHER_WEIGHT = 0.1;
// Reports at most this often while playing, on top of waiting for the ack:
// ten a second shows the heads forming as smoothly as the eye follows a
// chart, and leaves most frames of a busy page free of repaints.
const REPORT_MS = 100;
// Guesses per word in a report.
const TOP = 3;

let model = null;
let playing = false;
let losses = [];
let tokens = ['the'];
let acked = true; // the page painted the last report
let dirty = true; // something changed since the last report
let scoredAt = -Infinity;
let total = TRAIN_STEPS; // the step training ends at
let reportedAt = -Infinity;

const finished = () => model.steps >= total;

function scores() {
  const s = model.headScores({ sequences: SCORE_SEQUENCES });
  const out = new Float32Array(model.layers * model.heads * 3);
  s.forEach((row, l) => row.forEach((h, k) => out.set([h.previousToken, h.induction, h.firstToken], 3 * (l * model.heads + k))));
  scoredAt = performance.now();
  return { scores: out, accuracy: model.evaluate({ sequences: SCORE_SEQUENCES }).accuracy };
}

// The patterns and guesses on the page's words, from one forward pass.
function report({ withScores = false } = {}) {
  const shown = tokens.slice(0, model.context);
  const r = model.forward(shown);
  const n = r.tokens.length, L = model.layers, H = model.heads;
  const attention = new Float32Array(L * H * n * n);
  r.attentions.forEach((row, l) => row.forEach((m, h) => attention.set(m.data, (l * H + h) * n * n)));
  const { ids, probabilities } = topGuesses(r.logits, TOP);
  const msg = {
    type: 'report', step: model.steps, playing, finished: finished(), n,
    tokens: r.tokens, attention, guesses: ids, probabilities, losses: Float32Array.from(losses),
    ...(withScores || performance.now() - scoredAt >= SCORE_MS ? scores() : {}),
  };
  losses = [];
  dirty = false;
  acked = false;
  reportedAt = performance.now();
  const transfer = [msg.tokens.buffer, attention.buffer, ids.buffer, probabilities.buffer, msg.losses.buffer];
  if (msg.scores) transfer.push(msg.scores.buffer);
  postMessage(msg, transfer);
}

// (n, TOP) ids and probabilities of the most likely next words, from (n, vocab) logits.
function topGuesses({ rows, cols, data }, k) {
  const ids = new Int32Array(rows * k), probabilities = new Float32Array(rows * k);
  for (let i = 0; i < rows; i++) {
    const row = data.subarray(i * cols, (i + 1) * cols);
    let max = -Infinity, sum = 0;
    for (const z of row) if (z > max) max = z;
    for (const z of row) sum += Math.exp(z - max);
    const best = [];
    for (let id = 0; id < cols; id++) {
      if (best.length < k || row[id] > row[best[best.length - 1]]) {
        best.push(id);
        best.sort((a, b) => row[b] - row[a] || a - b);
        if (best.length > k) best.pop();
      }
    }
    best.forEach((id, r) => {
      ids[i * k + r] = id;
      probabilities[i * k + r] = Math.exp(row[id] - max) / sum;
    });
  }
  return { ids, probabilities };
}

function sendModel() {
  postMessage({ type: 'model', json: model.toJSON() });
}

function run(count) {
  const t0 = performance.now();
  let done = 0;
  while (done < count && !finished() && performance.now() - t0 < SLICE_MS) {
    losses.push(model.trainStep());
    done++;
  }
  if (done) dirty = true;
  return done;
}

function stop() {
  playing = false;
  report({ withScores: true });
  sendModel();
}

function loop() {
  if (!playing || !model) return;
  run(Infinity);
  if (finished()) {
    stop();
    return;
  }
  if (acked && dirty && performance.now() - reportedAt >= REPORT_MS) report();
  setTimeout(loop, 0);
}

// Messages that come while the model is being made wait for it.
let ready = Promise.resolve();

onmessage = async ({ data }) => {
  try {
    if (data.type === 'start') {
      playing = false;
      model = null;
      if (data.tokens) tokens = data.tokens;
      total = data.steps ?? TRAIN_STEPS;
      ready = createModel({ seed: data.seed, decaySteps: total, otherWeight: OTHER_WEIGHT }).then((m) => {
        model = m;
        losses = [];
        postMessage({ type: 'ready', vocab: m.vocab, layers: m.layers, heads: m.heads, dHead: m.dHead, context: m.context, total });
        report({ withScores: true });
        sendModel();
      });
      await ready;
      return;
    }
    await ready;
    if (!model) return;
    if (data.type === 'ack') {
      acked = true;
    } else if (data.type === 'view') {
      tokens = data.tokens;
      dirty = true;
      if (!playing) report();
    } else if (data.type === 'play' && !playing && !finished()) {
      playing = true;
      loop();
    } else if (data.type === 'pause' && playing) {
      stop();
    } else if (data.type === 'step' && !playing) {
      let left = data.count;
      while (left > 0 && !finished()) left -= run(left);
      report({ withScores: true });
      sendModel();
    } else if (data.type === 'export') {
      sendModel();
    }
  } catch (err) {
    playing = false;
    postMessage({ type: 'error', message: err.message });
  }
};
