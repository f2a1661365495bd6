// tokenize.js - the English encoder's tokenizer, apart from the lexicon so a
// page that only splits text loads no word list. Word-level: text is
// lower-cased and split into words (letters and digits, with an apostrophe
// inside a word kept: "don't") and punctuation marks, each mark a token of its
// own.

const TOKEN = /[\p{L}\p{N}]+(?:['\u2019][\p{L}]+)*|[^\s\p{L}\p{N}]/gu;

/**
 * Words and punctuation of a text, lower-cased: "The cat sat." ->
 * ['the', 'cat', 'sat', '.'].
 * @param {string} text
 * @returns {string[]}
 */
export function tokenize(text) {
  if (typeof text !== 'string') throw new TypeError(`tokenize: text must be a string, got ${text === null ? 'null' : typeof text}`);
  return splitWords(text.toLowerCase());
}

/**
 * The same split with the text's case kept, for showing the words as they
 * were typed: "The cat sat." -> ['The', 'cat', 'sat', '.']. The encoder's
 * encode() lower-cases, so these read as tokenize's words do.
 * @param {string} text
 * @returns {string[]}
 */
export function splitWords(text) {
  return (text.match(TOKEN) ?? []).map((t) => t.replace('\u2019', "'"));
}
