// scores.js - what the English encoder's heads do, measured on held-out
// grammar sentences whose structure is known (grammar.js), the way Clark et
// al. ("What does BERT look at?", 2019) score BERT's heads:
//   a relation's score: over its cases (a word and its true partner), the
//     fraction where the head's most attended word other than the word itself
//     is the partner;
//   its baseline: the best fixed offset on the same cases - the fraction of
//     cases whose partner stands at that offset, for the offset that makes it
//     largest (chosen on these cases, so the baseline is as strong as an
//     offset can be);
//   positional scores: the mean attention weight on the previous word, the
//     next word, the word itself, the first word (rows that have one).
// A head is labelled with a relation only when its score is at least
// LABEL_MARGIN above that relation's baseline (and at least LABEL_FLOOR);
// otherwise by its largest positional weight ("next word 0.93").
//
// Agreement: for every word whose form another word decides (this / these
// by the noun, sits / sit by the subject), that word alone is masked and the
// model's probability of the right form is compared with the wrong form's.

import { NumpyRandom } from '../../core/numpy-random.js';
import { crossEntropy } from '../transformer.js';
import { encoderForward, encoderLogits } from '../encoder.js';
import { drawBatch, idsOf } from './batch.js';
import { sentence } from './grammar.js';

/** Held-out sentences come from this seed; training never uses it (scripts/train-english.js trains on seed 1). */
export const HELD_OUT_SEED = 20261202;
export const SCORE_SENTENCES = 400;
export const LABEL_MARGIN = 0.1;
export const LABEL_FLOOR = 0.5;

/** The relations scored, with the cases each takes from a sentence. */
export const RELATIONS = Object.freeze({
  detNoun: { name: 'det → noun', cases: (s) => s.det },
  detNounPastAdjectives: { name: 'det → noun past adjectives', cases: (s) => s.det.filter((r) => r.adjectives > 0) },
  adjNoun: { name: 'adj → noun', cases: (s) => s.adj },
  verbSubject: { name: 'verb → subject', cases: (s) => s.subj },
  verbSubjectPastPhrase: { name: 'verb → subject past a phrase or clause', cases: (s) => s.subj.filter((r) => r.between !== null) },
  verbObject: { name: 'verb → object', cases: (s) => s.obj },
  prepObject: { name: 'prep → object', cases: (s) => s.prep },
});

export const POSITIONAL = Object.freeze({ previous: 'previous word', next: 'next word', self: 'itself', first: 'first word' });

/** count held-out sentences (seed HELD_OUT_SEED unless told), at most maxWords long. */
export function heldOut(count = SCORE_SENTENCES, seed = HELD_OUT_SEED, maxWords = 32) {
  const rng = new NumpyRandom(seed);
  return Array.from({ length: count }, () => sentence(rng, { maxWords }));
}

// The forward's attention weights of sentences, chunk by chunk, as
// [sentence][layer] Float32Array (heads, n, n) over that sentence's own n.
function attentionsOf(attn, shape, params, index, list) {
  const out = [];
  const CHUNK = 64;
  for (let start = 0; start < list.length; start += CHUNK) {
    const chunk = list.slice(start, start + CHUNK);
    const n = Math.max(...chunk.map((s) => s.words.length));
    const tokens = new Int32Array(chunk.length * n);
    const lengths = Int32Array.from(chunk, (s) => s.words.length);
    chunk.forEach((s, b) => tokens.set(idsOf(s.words, index), b * n));
    const pass = encoderForward(attn, shape, params, tokens, chunk.length, n, lengths, { steps: true });
    chunk.forEach((s, b) => {
      const m = s.words.length, H = shape.heads;
      out.push(pass.layers.map(({ steps }) => {
        const w = new Float32Array(H * m * m);
        for (let h = 0; h < H; h++) {
          for (let i = 0; i < m; i++) {
            const from = ((b * H + h) * n + i) * n;
            w.set(steps.weights.subarray(from, from + m), (h * m + i) * m);
          }
        }
        return w;
      }));
    });
  }
  return out;
}

/** The best fixed offset on cases [{ from, to }]: { offset, baseline }. */
export function bestOffset(cases) {
  const counts = new Map();
  for (const { from, to } of cases) counts.set(to - from, (counts.get(to - from) ?? 0) + 1);
  let offset = 0, best = 0;
  for (const [o, c] of counts) if (c > best || (c === best && Math.abs(o) < Math.abs(offset))) [offset, best] = [o, c];
  return { offset, baseline: cases.length ? best / cases.length : 0 };
}

// The most attended word of row i other than i itself, in one head's (m, m) weights.
function mostAttendedOther(w, h, m, i) {
  let best = -1, max = -Infinity;
  for (let j = 0; j < m; j++) if (j !== i && w[(h * m + i) * m + j] > max) [best, max] = [j, w[(h * m + i) * m + j]];
  return best;
}

/**
 * Every head's scores on held-out sentences.
 * @returns {{ layer: number, head: number, relations: Record<string, { score: number, baseline: number, offset: number, cases: number }>, positional: Record<string, number>, label: string, relation: string | null, position: string | null }[][]}
 */
export function scoreEncoderHeads(attn, shape, params, index, list) {
  const attentions = attentionsOf(attn, shape, params, index, list);
  const cases = Object.fromEntries(Object.entries(RELATIONS).map(([key, r]) => [key, list.flatMap((s, k) => r.cases(s).map((c) => ({ ...c, k })))]));
  const baselines = Object.fromEntries(Object.entries(cases).map(([key, c]) => [key, bestOffset(c)]));
  const result = [];
  for (let l = 0; l < shape.layers; l++) {
    const layer = [];
    for (let h = 0; h < shape.heads; h++) {
      const relations = {};
      for (const key in cases) {
        let hits = 0;
        for (const { from, to, k } of cases[key]) {
          if (mostAttendedOther(attentions[k][l], h, list[k].words.length, from) === to) hits++;
        }
        const { offset, baseline } = baselines[key];
        relations[key] = { score: cases[key].length ? hits / cases[key].length : 0, baseline, offset, cases: cases[key].length };
      }
      const sums = { previous: [0, 0], next: [0, 0], self: [0, 0], first: [0, 0] };
      list.forEach((s, k) => {
        const m = s.words.length, w = attentions[k][l];
        for (let i = 0; i < m; i++) {
          const row = (h * m + i) * m;
          if (i > 0) { sums.previous[0] += w[row + i - 1]; sums.previous[1]++; sums.first[0] += w[row]; sums.first[1]++; }
          if (i < m - 1) { sums.next[0] += w[row + i + 1]; sums.next[1]++; }
          sums.self[0] += w[row + i]; sums.self[1]++;
        }
      });
      const positional = Object.fromEntries(Object.entries(sums).map(([key, [sum, count]]) => [key, count ? sum / count : 0]));
      layer.push({ layer: l, head: h, relations, positional, ...labelOf(relations, positional) });
    }
    result.push(layer);
  }
  return result;
}

/**
 * A head's label: its relation furthest above baseline (by LABEL_MARGIN, at
 * least LABEL_FLOOR), else its largest positional weight. `relation` is the
 * relation's key (null when the head is labelled by position) and `position`
 * the positional key (null when labelled by a relation), so a reader never
 * has to parse the label's text.
 */
export function labelOf(relations, positional) {
  let best = null;
  for (const key of ['detNoun', 'adjNoun', 'verbSubject', 'verbObject', 'prepObject', 'detNounPastAdjectives', 'verbSubjectPastPhrase']) {
    const r = relations[key];
    if (r.cases > 0 && r.score >= LABEL_FLOOR && r.score - r.baseline >= LABEL_MARGIN && (best === null || r.score - r.baseline > best[1].score - best[1].baseline)) best = [key, r];
  }
  if (best !== null) return { label: `${RELATIONS[best[0]].name} ${best[1].score.toFixed(2)}`, relation: best[0], position: null };
  const [key, value] = Object.entries(positional).sort((a, b) => b[1] - a[1])[0];
  return { label: `${POSITIONAL[key]} ${value.toFixed(2)}`, relation: null, position: key };
}

/**
 * Agreement on held-out sentences: each word whose form depends on another
 * (grammar.js's agree list) masked alone; right beats wrong when its logit is larger.
 * @returns {{ all: { right: number, cases: number, accuracy: number }, attractor: {...}, verbs: {...}, determiners: {...} }}
 */
export function agreement(attn, shape, params, index, maskId, list) {
  const items = list.flatMap((s) => s.agree.map((a) => ({ s, a })));
  const tally = { all: [0, 0], attractor: [0, 0], verbs: [0, 0], determiners: [0, 0] };
  const CHUNK = 64;
  for (let start = 0; start < items.length; start += CHUNK) {
    const chunk = items.slice(start, start + CHUNK);
    const n = Math.max(...chunk.map(({ s }) => s.words.length));
    const tokens = new Int32Array(chunk.length * n);
    const lengths = Int32Array.from(chunk, ({ s }) => s.words.length);
    const rows = Int32Array.from(chunk, ({ a }, b) => b * n + a.at);
    chunk.forEach(({ s, a }, b) => { tokens.set(idsOf(s.words, index), b * n); tokens[b * n + a.at] = maskId; });
    const pass = encoderForward(attn, shape, params, tokens, chunk.length, n, lengths);
    const logits = encoderLogits(attn, shape, params, pass, rows);
    chunk.forEach(({ a }, b) => {
      const row = b * logits.cols;
      const ok = logits.data[row + index.get(a.right)] > logits.data[row + index.get(a.wrong)] ? 1 : 0;
      const keys = ['all', a.kind === 'verb' ? 'verbs' : 'determiners'];
      if (a.attractor) keys.push('attractor');
      for (const key of keys) { tally[key][0] += ok; tally[key][1]++; }
    });
  }
  return Object.fromEntries(Object.entries(tally).map(([key, [right, cases]]) => [key, { right, cases, accuracy: cases ? right / cases : 0 }]));
}

/** The masked-LM loss and accuracy on `batches` held-out batches (masked as training masks). */
export function maskedLoss(attn, shape, params, batchOptions, { batches = 4, seed = HELD_OUT_SEED } = {}) {
  const rng = new NumpyRandom(seed);
  let loss = 0, right = 0, count = 0;
  for (let i = 0; i < batches; i++) {
    const b = drawBatch(rng, batchOptions);
    const pass = encoderForward(attn, shape, params, b.tokens, batchOptions.batch, b.n, b.kvLengths);
    const logits = encoderLogits(attn, shape, params, pass, b.rows);
    const V = logits.cols;
    for (let r = 0; r < b.rows.length; r++) {
      let arg = 0;
      for (let j = 1; j < V; j++) if (logits.data[r * V + j] > logits.data[r * V + arg]) arg = j;
      if (arg === b.targets[r]) right++;
    }
    loss += crossEntropy(attn, logits, b.targets).loss * b.rows.length;
    count += b.rows.length;
  }
  return { loss: loss / count, accuracy: right / count };
}
