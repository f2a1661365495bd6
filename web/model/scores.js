// scores.js - what a model has learned, measured on repeated random
// sequences (task.js drawRepeats: `half` distinct words, then the same words).
//
// Head scores as Olsson et al. (2022, "In-context learning and induction
// heads") define them, each a mean attention weight:
//   previousToken: weight from position i to i - 1, over i = 1 .. n-1
//   induction:     weight from a position i in the repeat (i >= half) to the
//                  position just after the earlier occurrence of its word,
//                  i - half + 1
//   firstToken:    weight from position i to position 0, over i = 1 .. n-1
// (row 0 can only attend to itself, so it is left out of the first and last).
//
// Accuracy: how often the most likely next word is right at the positions the
// earlier occurrence decides, from the repeat's first word (i = half) to its
// second-to-last (i = 2 half - 2); loss: the mean cross-entropy there.

import { NumpyRandom } from '../core/numpy-random.js';
import { crossEntropy, forwardPass, logitsAt } from './transformer.js';
import { drawRepeats } from './task.js';

/** The defaults of headScores() and evaluate(): enough sequences that a score moves by < 0.01 between seeds. */
export const SCORE_DEFAULTS = Object.freeze({ sequences: 64, seed: 0 });

function repeats(shape, { sequences, seed, half }) {
  const rng = new NumpyRandom(seed);
  return drawRepeats(rng, sequences, half, shape.vocabSize);
}

/**
 * @param {import('./workspace.js').Workspace} [work] for `sequences` sequences of 2 half tokens
 * @returns {{ previousToken: number, induction: number, firstToken: number }[][]} [layer][head]
 */
export function scoreHeads(attn, shape, params, options, work = undefined) {
  const { sequences, half } = options;
  const n = 2 * half;
  const tokens = repeats(shape, options);
  const pass = forwardPass(attn, shape, params, tokens, sequences, n, { steps: true, work });
  return pass.layers.map(({ steps }) => {
    const heads = [];
    for (let h = 0; h < shape.heads; h++) {
      let previous = 0, induction = 0, first = 0;
      for (let b = 0; b < sequences; b++) {
        const w = steps.weights.subarray((b * shape.heads + h) * n * n, (b * shape.heads + h + 1) * n * n);
        for (let i = 1; i < n; i++) {
          previous += w[i * n + i - 1];
          first += w[i * n];
          if (i >= half) induction += w[i * n + i - half + 1];
        }
      }
      heads.push({
        previousToken: previous / (sequences * (n - 1)),
        induction: induction / (sequences * half),
        firstToken: first / (sequences * (n - 1)),
      });
    }
    return heads;
  });
}

/**
 * @param {import('./workspace.js').Workspace} [work] for `sequences` sequences of 2 half tokens
 * @returns {{ accuracy: number, loss: number }} on the repeat, after its first word
 */
export function evaluateRepeats(attn, shape, params, options, work = undefined) {
  const { sequences, half } = options;
  const n = 2 * half;
  const tokens = repeats(shape, options);
  const pass = forwardPass(attn, shape, params, tokens, sequences, n, { work });
  const rows = [], targets = [];
  for (let b = 0; b < sequences; b++) {
    for (let i = half; i < n - 1; i++) {
      rows.push(b * n + i);
      targets.push(tokens[b * n + i + 1]);
    }
  }
  const logits = logitsAt(attn, shape, params, pass, Int32Array.from(rows));
  const V = shape.vocabSize;
  let right = 0;
  for (let r = 0; r < rows.length; r++) {
    let best = 0;
    for (let j = 1; j < V; j++) if (logits.data[r * V + j] > logits.data[r * V + best]) best = j;
    if (best === targets[r]) right++;
  }
  return { accuracy: right / rows.length, loss: crossEntropy(attn, logits, targets).loss };
}
