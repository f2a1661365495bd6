// task.js - the sequences the model learns from and is scored on. No corpus:
// random words with a repeated stretch, so the only way to predict is to look
// back for the current word and copy what followed it (induction).
//
// Training draws: a sequence of `context` random ids (1 .. vocabSize - 1; the
// unknown word 0 never appears), in which a segment of 5 to 16 words (at most
// half the context) starting at a random place is copied right after itself.
// The segment's length and place vary, so no fixed look-back distance solves
// the task: a single positional head cannot, the two-head induction circuit can.
// The loss counts the predictions that the earlier occurrence decides (from
// the repeat's first word to its second-to-last word, each predicting the
// next word of the repeat) with weight 1, and every other prediction with
// weight `otherWeight`. Those words are random: their loss only teaches the
// model to be unsure there, and slows the learning of induction, so the
// default weight is 0.
//
// Scoring draws: `half` distinct random ids, then the same ids again
// (2 x half words). Distinct, so each word of the repeat has exactly one
// earlier occurrence and "the position after it" is one position.
//
// All draws come from a NumpyRandom, so they are the same in every engine.

export const MIN_SEGMENT = 5;
export const MAX_SEGMENT = 16;

/** A random id in [1, vocabSize). */
function drawId(rng, vocabSize) {
  return 1 + Math.floor(rng.random() * (vocabSize - 1));
}

/**
 * One training batch of the repeat task.
 * @param {import('../core/numpy-random.js').NumpyRandom} rng
 * @param {number} batch sequences
 * @param {number} context length of each sequence (>= 2 * MIN_SEGMENT)
 * @param {number} vocabSize ids drawn from [1, vocabSize)
 * @param {number} [otherWeight] the weight of predictions outside the repeat
 * @returns {{ tokens: Int32Array, rows: Int32Array, targets: Int32Array, weights: Float32Array | null }}
 *   tokens (batch * context) row-major; rows the flat positions whose next
 *   word the loss counts, targets those next words, weights theirs (null:
 *   all 1, with otherWeight 0)
 */
export function drawBatch(rng, batch, context, vocabSize, otherWeight = 0) {
  const tokens = new Int32Array(batch * context);
  const rows = [];
  const targets = [];
  const weights = [];
  const longest = Math.min(MAX_SEGMENT, Math.floor(context / 2));
  for (let b = 0; b < batch; b++) {
    const base = b * context;
    for (let i = 0; i < context; i++) tokens[base + i] = drawId(rng, vocabSize);
    const length = MIN_SEGMENT + Math.floor(rng.random() * (longest - MIN_SEGMENT + 1));
    const start = Math.floor(rng.random() * (context - 2 * length + 1));
    for (let j = 0; j < length; j++) tokens[base + start + length + j] = tokens[base + start + j];
    for (let i = 0; i < context - 1; i++) {
      const repeat = i >= start + length && i < start + 2 * length - 1;
      if (!repeat && otherWeight === 0) continue;
      rows.push(base + i);
      targets.push(tokens[base + i + 1]);
      weights.push(repeat ? 1 : otherWeight);
    }
  }
  return {
    tokens, rows: Int32Array.from(rows), targets: Int32Array.from(targets),
    weights: otherWeight === 0 ? null : Float32Array.from(weights),
  };
}

/**
 * Repeated random sequences for scoring: `count` rows of `half` distinct ids
 * followed by the same ids.
 * @param {import('../core/numpy-random.js').NumpyRandom} rng
 * @returns {Int32Array} (count, 2 * half) row-major
 */
export function drawRepeats(rng, count, half, vocabSize) {
  const n = 2 * half;
  const tokens = new Int32Array(count * n);
  for (let b = 0; b < count; b++) {
    const seen = new Set();
    for (let i = 0; i < half; i++) {
      let id;
      do id = drawId(rng, vocabSize); while (seen.has(id));
      seen.add(id);
      tokens[b * n + i] = tokens[b * n + half + i] = id;
    }
  }
  return tokens;
}
