// vocab.js - the English encoder's words and its tokenizer. Word-level:
// text is lower-cased and split into words (letters and digits, with an
// apostrophe inside a word kept: "don't") and punctuation marks, each mark a
// token of its own. A word not in the vocabulary is id 0, UNKNOWN.
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

const TOKEN = /[\p{L}\p{N}]+(?:['\u2019][\p{L}]+)*|[^\s\p{L}\p{N}]/gu;

/**
 * Words and punctuation of a text, lower-cased: "The cat sat." ->
 * ['the', 'cat', 'sat', '.'].
 * @param {string} text
 * @returns {string[]}
 */
export function tokenize(text) {
  if (typeof text !== 'string') throw new TypeError(`tokenize: text must be a string, got ${text === null ? 'null' : typeof text}`);
  return (text.toLowerCase().match(TOKEN) ?? []).map((t) => t.replace('\u2019', "'"));
}
