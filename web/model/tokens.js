// tokens.js - a model's words to ids and the one check of its input tokens,
// shared by the induction model and the English encoder: words (encoded by
// the model) or ids, 1 to the model's context of them, each an id of its
// vocabulary.
import { describe } from '../core/matrix.js';

/**
 * The tokens as an Int32Array of ids, or a TypeError/RangeError naming `name`.
 * @param {{ encode(words: string[]): Int32Array, context: number, vocab: string[] }} model
 * @param {unknown} tokens string[] or ids
 * @param {string} name the calling method, for the message
 * @returns {Int32Array}
 */
export function checkTokens(model, tokens, name) {
  if (Array.isArray(tokens) && tokens.every((t) => typeof t === 'string')) tokens = model.encode(tokens);
  if (!Array.isArray(tokens) && !ArrayBuffer.isView(tokens)) {
    throw new TypeError(`${name}: tokens must be an array of words or an Int32Array of ids, got ${describe(tokens)}`);
  }
  if (tokens.length < 1 || tokens.length > model.context) {
    throw new RangeError(`${name}: tokens must hold 1 to ${model.context} (the model's context) tokens, got ${tokens.length}`);
  }
  return Int32Array.from(tokens, (id, i) => {
    if (!Number.isInteger(id) || id < 0 || id >= model.vocab.length) {
      throw new RangeError(`${name}: tokens[${i}] must be a word or an id in [0, ${model.vocab.length}), got ${describe(id)}`);
    }
    return id;
  });
}

/**
 * Ids of words (lower-cased, trimmed); a word not in the vocabulary is 0.
 * @param {Map<string, number>} index word -> id
 * @param {unknown} words
 * @returns {Int32Array}
 */
export function encodeWords(index, words) {
  if (!Array.isArray(words)) throw new TypeError(`encode: words must be an array of strings, got ${describe(words)}`);
  return Int32Array.from(words, (w, i) => {
    if (typeof w !== 'string') throw new TypeError(`encode: words[${i}] must be a string, got ${describe(w)}`);
    return index.get(w.trim().toLowerCase()) ?? 0;
  });
}
