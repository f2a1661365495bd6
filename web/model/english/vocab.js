// vocab.js - the English encoder's words (its tokenizer is tokenize.js). A
// word not in the vocabulary is id 0, UNKNOWN.
//
// Ids: 0 '<unk>', 1 '<mask>' (what a masked word is replaced with), then the
// punctuation, then every form of the lexicon in lexicon.js's order. The order
// is the ids: changing the lexicon changes what a trained model means, so the
// shipped model carries its own vocabulary and that list is what it uses.

import { PUNCTUATION, allForms } from './lexicon.js';

export const UNKNOWN = '<unk>';
export const MASK = '<mask>';

/** The vocabulary a new English encoder is made with. */
export function englishVocab() {
  return Object.freeze([UNKNOWN, MASK, ...PUNCTUATION, ...allForms()]);
}

export { tokenize } from './tokenize.js';
