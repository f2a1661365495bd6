// batch.js - masked-language-model batches of grammar sentences (grammar.js)
// for the English encoder. Each sentence's words are chosen for prediction
// at a rate that depends on what they are, then each chosen word is hidden
// BERT's way (Devlin et al. 2019): 80% replaced by '<mask>', 10% by a random
// word of the lexicon, 10% left as it is; the loss is the cross-entropy of the
// original word at every chosen position.
//
// Determiners and verbs are chosen more often than other words (focusRate
// against baseRate): their form is the one a word elsewhere decides (this /
// these by the noun, sits / sit by the subject), so the more of them the loss
// asks for, the more every determiner needs a head that finds its noun and
// every verb one that finds its subject. Overall about 20% of the words are
// chosen. A sentence with none chosen gets one, so no sentence is wasted.
//
// Before BERT's 80/10/10, a chosen determiner is swapped for another
// determiner (determinerSwap) and a chosen verb whose form shows its
// subject's number for its other form (verbSwap, sits for sit), the original
// still the target. Masking alone lets a model leave a word that is present
// alone: only a masked word needs its partner, and the model can bring the
// partner's number to it step by step (a previous-word head copies the
// subject into "that", the verb reads it there). When the word's own token
// may be the wrong one, every determiner and verb must check its noun or
// subject, so the heads that find them are trained on the words as a reader
// sees them. The swap never says where to look; docs/model-english.md
// measures what it changes.
//
// Sentences of a batch are padded with id 0 to the longest; the attention
// masks the padding through sdpa's kvLengths, and the padding never enters
// the loss.

import { sentence } from './grammar.js';
import { DETERMINERS } from './lexicon.js';

const ALL_DETERMINERS = Object.values(DETERMINERS).flat();

export const MASK_DEFAULTS = Object.freeze({ baseRate: 0.12, focusRate: 0.35, determinerSwap: 0.5, verbSwap: 0.5, maskShare: 0.8, randomShare: 0.1 });

/**
 * Ids of a sentence's words (punctuation included), by the vocabulary's index.
 * @param {string[]} words
 * @param {Map<string, number>} index
 */
export function idsOf(words, index) {
  return Int32Array.from(words, (w) => index.get(w) ?? 0);
}

/**
 * One batch: `batch` sentences drawn from rng, chosen positions and their targets.
 * @param {import('../../core/numpy-random.js').NumpyRandom} rng
 * @param {{ batch: number, context: number, index: Map<string, number>, maskId: number, firstWord: number, vocabSize: number, rates?: object }} options
 *   firstWord: the smallest id a random replacement may take (after the special tokens and punctuation)
 * @returns {{ tokens: Int32Array, n: number, kvLengths: Int32Array, rows: Int32Array, targets: Int32Array, sentences: object[] }}
 *   tokens (batch, n) padded with 0; rows: flat positions b * n + i of the chosen words
 */
export function drawBatch(rng, { batch, context, index, maskId, firstWord, vocabSize, rates = MASK_DEFAULTS }) {
  const drawn = Array.from({ length: batch }, () => sentence(rng, { maxWords: context }));
  const n = Math.max(...drawn.map((s) => s.words.length));
  const tokens = new Int32Array(batch * n);
  const kvLengths = new Int32Array(batch);
  const rows = [], targets = [];
  drawn.forEach((s, b) => {
    const ids = idsOf(s.words, index);
    tokens.set(ids, b * n);
    kvLengths[b] = ids.length;
    const dets = new Set(s.det.map((r) => r.from));
    const focus = new Set([...dets, ...s.subj.map((r) => r.from)]);
    const verbWrong = new Map(s.agree.filter((a) => a.kind === 'verb').map((a) => [a.at, a.wrong]));
    const chosen = [];
    for (let i = 0; i < ids.length; i++) if (rng.random() < (focus.has(i) ? rates.focusRate : rates.baseRate)) chosen.push(i);
    if (chosen.length === 0) chosen.push(Math.floor(rng.random() * ids.length));
    for (const i of chosen) {
      rows.push(b * n + i);
      targets.push(ids[i]);
      if (dets.has(i) && rates.determinerSwap > 0 && rng.random() < rates.determinerSwap) {
        const others = ALL_DETERMINERS.filter((d) => d !== s.words[i]);
        tokens[b * n + i] = index.get(others[Math.floor(rng.random() * others.length)]);
        continue;
      }
      if (verbWrong.has(i) && rates.verbSwap > 0 && rng.random() < rates.verbSwap) {
        tokens[b * n + i] = index.get(verbWrong.get(i));
        continue;
      }
      const u = rng.random();
      if (u < rates.maskShare) tokens[b * n + i] = maskId;
      else if (u < rates.maskShare + rates.randomShare) tokens[b * n + i] = firstWord + Math.floor(rng.random() * (vocabSize - firstWord));
    }
  });
  return { tokens, n, kvLengths, rows: Int32Array.from(rows), targets: Int32Array.from(targets), sentences: drawn };
}
