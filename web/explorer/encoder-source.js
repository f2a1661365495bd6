// encoder-source.js - the explorer's numbers from a trained encoder
// (model="english", an EncoderModel of attention-wasm/model): the chosen
// head's input X (the layer's LayerNorm'd residual stream, what W_Q, W_K and
// W_V multiply), its W_Q, W_K, W_V, a masked word's guesses, the words the
// model does not know, and the texts that say what the view shows. Pure
// (no DOM): ModelSource (model-source.js) calls it on every update.

import { fixed } from '../worked/format.js';
import { normalizeConfig } from '../worked/computation.js';
import { splitWords } from '../model/english/tokenize.js';
import { headName } from './attentions.js';

/** The token an encoder reads in place of a masked word. */
export const MASK_TOKEN = '<mask>';

/** The relation the view opens on: the handbook's point is "the" looking at "cat". */
export const DEFAULT_RELATION = 'detNoun';

/**
 * The relations' names as the model view writes them, by headScores' keys.
 * A head labelled with one (headScores' `relation`) shows that relation's
 * offset baseline beside its score.
 */
export const RELATION_NAMES = Object.freeze({
  detNoun: 'det → noun',
  detNounPastAdjectives: 'det → noun past adjectives',
  adjNoun: 'adj → noun',
  verbSubject: 'verb → subject',
  verbSubjectPastPhrase: 'verb → subject past a phrase or clause',
  verbObject: 'verb → object',
  prepObject: 'prep → object',
});

/**
 * Every head's scores as headScores gives them, from the model card the
 * shipped JSON carries (measured on those weights when the file was made:
 * `heads[layer][head]` { label, relation, position, relations: { key:
 * [score, baseline, offset] }, positional }), or null when the card has none. Scoring in the page takes
 * seconds on the held-out sentences; the card's numbers are the same ones.
 */
export function cardScores(card) {
  const heads = card?.heads;
  if (!Array.isArray(heads) || !heads.every((row) => Array.isArray(row) && row.every((h) => typeof h?.label === 'string' && h.relations))) return null;
  return heads.map((row) => row.map((h) => ({
    label: h.label,
    relation: typeof h.relation === 'string' ? h.relation : null,
    position: typeof h.position === 'string' ? h.position : null,
    positional: { ...h.positional },
    relations: Object.fromEntries(Object.entries(h.relations).map(([k, r]) => [k, Array.isArray(r) ? { score: r[0], baseline: r[1], offset: r[2] } : r])),
  })));
}

/** The relations' names: the card's (the model's own), else the view's. */
export function relationNames(card) {
  const names = card?.relations;
  return names && typeof names === 'object' && Object.values(names).every((n) => typeof n === 'string') ? names : RELATION_NAMES;
}

/** The head with the highest score for a relation, [layer, head]. */
export function bestHead(scores, relation = DEFAULT_RELATION) {
  let best = [0, 0], top = -Infinity;
  scores.forEach((row, l) => row.forEach((s, h) => {
    const score = s.relations?.[relation]?.score ?? -Infinity;
    if (score > top) [best, top] = [[l, h], score];
  }));
  return best;
}

const signed = (offset) => (offset > 0 ? `+${offset}` : String(offset));

/**
 * A head's label for the model view: `text` (headScores' label), `baseline`
 * (for a head labelled with a relation, that relation's best fixed offset
 * and its score: what a skeptic asks, since looking a fixed number of words
 * over already finds most partners in English; '' for a head labelled by
 * position), `detail` for its spoken label and tooltip (a positional head's
 * names its best relation against that relation's baseline too).
 */
export function encoderLabel(s, names = RELATION_NAMES) {
  const relations = s.relations ?? {};
  const keys = Object.keys(names).filter((k) => relations[k] && (relations[k].cases ?? 1) > 0);
  const named = keys.includes(s.relation) ? s.relation : undefined;
  const margin = (k) => relations[k].score - relations[k].baseline;
  const best = named ?? keys.sort((a, b) => margin(b) - margin(a))[0];
  if (!best) return { text: s.label, baseline: '', detail: s.label };
  const r = relations[best];
  if (named) {
    const cases = r.cases ? `, on ${r.cases} held-out cases` : ', on held-out sentences';
    return {
      text: s.label, baseline: `vs offset ${signed(r.offset)}: ${fixed(r.baseline, 2)}`,
      detail: `${s.label}, against ${fixed(r.baseline, 2)} for always looking ${signed(r.offset)} words over (the best fixed offset)${cases}`,
    };
  }
  return {
    text: s.label, baseline: '',
    detail: `${s.label}; its best relation, ${names[best]}, ${fixed(r.score, 2)} against ${fixed(r.baseline, 2)} for the best fixed offset (${signed(r.offset)})`,
  };
}

/**
 * The masked word from `model-mask` (read as a whole number by the settings
 * table) against the sentence: its index, or null for none.
 * @throws {RangeError} naming the attribute and the range
 */
export function maskIndex(value, n) {
  if (value === null || value === undefined) return null;
  if (!Number.isInteger(value) || value < 0 || value >= n) {
    throw new RangeError(`model-mask expects the index of a word, 0 to ${n - 1} for these ${n} words (counted from 0); got ${value}`);
  }
  return value;
}

/** The sentence saying which words the model does not know (plain text; words quoted, never markup). */
export function unknownText(unknown) {
  if (unknown.length === 0) return '';
  const words = [...new Set(unknown.map((u) => u.word))].map((w) => `“${w}”`);
  return `The model does not know ${words.length === 1 ? 'the word' : 'the words'} ${words.join(', ')}: it reads ${words.length === 1 ? 'it' : 'each'} as the unknown word, so its attention there says nothing about ${words.length === 1 ? 'that word' : 'those words'}.`;
}

/**
 * What the element shows for an encoder: the config and inputs of the head
 * chosen (X = that layer's LayerNorm'd stream, W_Q, W_K, W_V of the head),
 * the forward pass on the sentence (with the masked word replaced by
 * MASK_TOKEN), the masked word's guesses (model.fill) and a note for the
 * element's message line (unknown words, a mask outside the sentence).
 */
export function prepareEncoder({ model, scores, name }, config, view, pick) {
  // The sentence as the model's tokenizer splits it ("cat," is "cat" and ","), case kept for the page.
  const all = config.tokens.flatMap((t) => splitWords(t));
  const words = all.slice(0, model.context);
  const notes = [];
  let masked = null, maskError = false;
  try {
    masked = maskIndex(view.modelMask, words.length);
  } catch (err) {
    notes.push(`${err.message}; shown unmasked`);
    maskError = true;
  }
  const unknown = model.unknownWords(words);
  if (unknown.length) notes.push(unknownText(unknown));
  const cut = all.length - words.length;
  if (cut > 0) notes.push(`The model reads at most ${model.context} words; ${cut === 1 ? 'the last word is' : `the last ${cut} are`} left out`);
  const ids = model.encode(words);
  if (masked !== null) ids[masked] = model.vocab.indexOf(MASK_TOKEN);
  const forward = model.forward(ids);
  const layer = forward.layers[pick.layer];
  const w = model.head(pick.layer, pick.head);
  return {
    kind: 'model', encoder: true, pick, model, scores, forward, masked,
    guesses: masked === null ? null : model.fill(words, masked),
    unknown,
    note: notes.join('. '),
    // Unknown words and a cut sentence are facts about the text, not mistakes: said as a note.
    noteKind: maskError ? 'error' : 'info',
    config: normalizeConfig({
      // Bidirectional and at the model's scale, 1/sqrt(d_head): the numbers are the model's own.
      tokens: words, seed: config.seed, dModel: model.dModel, dk: model.dHead, dv: model.dHead, heads: 1, kvHeads: 1, causal: false,
    }),
    view,
    inputs: { X: layer.xNorm, WQ: w.wq, WK: w.wk, WV: w.wv },
    origin: encoderOrigin(pick, masked, words),
    explanations: {
      inputs: encoderInputsText(pick, masked, words),
      scaled: `Scores times the model's scale, 1/√${model.dHead}: the one it was trained at, so there is no slider. The encoder reads the sentence both ways, so no pair is masked: every word may look at every word.`,
      weights: 'Softmax of each row: every row is positive and sums to 1, the share of attention word i pays to each word j. No pair is hatched: the encoder reads both ways. A trained head often puts most of a row on one word; its label in the model view says which relation it follows, measured on held-out sentences.',
    },
    truncated: cut,
    key: `encoder:${name}:${model.steps}:${pick.layer}:${pick.head}:${masked ?? '-'}`,
  };
}

// Where the chosen head's inputs come from, for the derivations.
function encoderOrigin({ layer, head }, masked, words) {
  const learned = (w) => `${w} of ${headName(layer, head)}, learned by filling in masked English words`;
  const stream = layer === 0
    ? 'the word’s embedding plus its position’s, both learned'
    : `the residual stream entering layer ${layer + 1}: the embeddings plus what the layer${layer > 1 ? 's' : ''} before added`;
  const mask = masked === null ? '' : ` (row ${masked + 1}, “${words[masked]}”, is masked: the model reads ${MASK_TOKEN} there)`;
  return { X: `the LayerNorm of ${stream}${mask}; W_Q, W_K and W_V multiply this`, WQ: learned('W_Q'), WK: learned('W_K'), WV: learned('W_V') };
}

// The inputs step's text for an encoder's head (the default speaks of random draws).
function encoderInputsText({ layer, head }, masked, words) {
  const mask = masked === null ? '' : ` “${words[masked]}” is masked: its row is what the model makes of ${MASK_TOKEN} at that position.`;
  return `Each row of X is what ${headName(layer, head)} of the trained encoder reads for a word: the LayerNorm of the residual stream entering layer ${layer + 1}. W_Q, W_K and W_V are that head's learned projections, not random draws.${mask} Click any number and type to see what it changes; the model's guesses stay the model's own.`;
}

/** The model view's sentence for an encoder: what changed from the handbook's random weights, and why. */
export function encoderViewText({ layers, heads, steps }) {
  return `An encoder trained${steps ? ` for ${steps} steps` : ''} to fill in masked English words (${layers} layers × ${heads} heads), on the same sentence. ` +
    'With the handbook’s random weights the patterns only show the mechanics; here W_Q and W_K were learned, and filling in a word needs its grammar, so some heads learned to follow it. ' +
    'Each label is scored on held-out sentences beside the best fixed offset. Choose a head to see its numbers below; press a word to mask it.';
}
