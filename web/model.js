// model.js - attention-wasm/model: a tiny decoder-only, attention-only
// transformer that learns induction (copying what followed the last
// occurrence of the current word), over the Attention API's wasm calls.
//
//   const m = await loadModel();          // the shipped trained model
//   m.forward(['the', 'cat', 'sat']).attentions[1][2]  // a head's weights
//   const fresh = await createModel({ seed: 1 });
//   fresh.trainStep();                    // one Adam step, returns the loss
//
// createModel and loadModel are async because they load the wasm module
// (the SIMD128 build with `deterministic: true`, so a seed gives the same
// loss curve on every machine); pass `attention` to share an instance.

import { NumpyRandom, loadAttention } from './attention.js';
import { describe } from './core/matrix.js';
import { checkBetween, checkInteger, checkKnownKeys, checkPositive } from './core/options.js';
import { Model } from './model/model.js';
import { initParams } from './model/transformer.js';
import { FORMAT, VERSION, paramsFromJSON } from './model/serialize.js';
import { MIN_SEGMENT } from './model/task.js';
import { UNKNOWN, WORDS } from './model/words.js';
import { EncoderModel, ENCODER_KIND, encoderParamsFromJSON } from './model/encoder-model.js';
import { initEncoderParams } from './model/encoder.js';
import { englishVocab, tokenize } from './model/english/vocab.js';

export { Model, EncoderModel, WORDS, UNKNOWN, tokenize };

/** The architecture createModel builds unless told otherwise. */
export const MODEL_DEFAULTS = Object.freeze({ layers: 2, heads: 4, dModel: 64, dHead: 16, context: 32 });

/** The training settings trainStep uses unless told otherwise. */
export const TRAIN_DEFAULTS = Object.freeze({
  batch: 16,
  learningRate: 0.01,
  warmup: 100,
  decaySteps: 0,
  otherWeight: 0,
  beta1: 0.9,
  beta2: 0.99,
  epsilon: 1e-8,
});

/** The architecture createEncoder builds unless told otherwise: the shipped English encoder's. */
export const ENCODER_DEFAULTS = Object.freeze({ layers: 3, heads: 4, dModel: 64, dHead: 16, mlp: 256, context: 32 });

/** The training settings an encoder's trainStep uses unless told otherwise. */
export const ENCODER_TRAIN_DEFAULTS = Object.freeze({
  batch: 64,
  learningRate: 0.002,
  warmup: 200,
  decaySteps: 0,
  beta1: 0.9,
  beta2: 0.99,
  epsilon: 1e-8,
});

// The largest of each size createModel accepts: a model the page can train.
const LIMITS = { layers: 8, heads: 16, dModel: 512, dHead: 128, mlp: 2048, context: 256, batch: 1024 };

let sharedAttention = null;

function defaultAttention() {
  sharedAttention ??= loadAttention({ deterministic: true }).catch((error) => {
    sharedAttention = null;
    throw error;
  });
  return sharedAttention;
}

// A model to train needs room for the task's shortest repeat (2 x MIN_SEGMENT);
// a loaded model may have any context.
function checkConfig(source, name, defaults, minContext, keys = Object.keys(MODEL_DEFAULTS)) {
  const config = {};
  for (const key of keys) {
    const min = key === 'context' ? minContext : 1;
    config[key] = checkInteger(source[key] ?? defaults[key], `${name}: ${key}`, min, LIMITS[key]);
  }
  return config;
}

function checkTraining(source, name, defaults = TRAIN_DEFAULTS) {
  const t = { ...defaults };
  t.batch = checkInteger(source.batch ?? t.batch, `${name}: batch`, 1, LIMITS.batch);
  t.learningRate = checkPositive(source.learningRate ?? t.learningRate, `${name}: learningRate`);
  t.warmup = checkInteger(source.warmup ?? t.warmup, `${name}: warmup`, 0, 2 ** 31 - 1);
  t.decaySteps = checkInteger(source.decaySteps ?? t.decaySteps, `${name}: decaySteps`, 0, 2 ** 31 - 1);
  if ('otherWeight' in t) t.otherWeight = checkBetween(source.otherWeight ?? t.otherWeight, `${name}: otherWeight`, 0, 1);
  for (const key of ['beta1', 'beta2']) t[key] = checkBetween(source[key] ?? t[key], `${name}: ${key}`, 0, 1, true);
  t.epsilon = checkPositive(source.epsilon ?? t.epsilon, `${name}: epsilon`);
  return t;
}

function checkVocab(vocab, name) {
  if (!Array.isArray(vocab) || vocab.length < 2) {
    throw new TypeError(`${name}: vocab must be an array of at least 2 words (id 0 the unknown word), got ${describe(vocab)}`);
  }
  const seen = new Set();
  vocab.forEach((w, i) => {
    if (typeof w !== 'string' || w === '') throw new TypeError(`${name}: vocab[${i}] must be a non-empty string, got ${describe(w)}`);
    if (i > 0 && w !== w.trim().toLowerCase()) throw new RangeError(`${name}: vocab[${i}] (${JSON.stringify(w)}) must be lower-case without spaces at the ends`);
    if (seen.has(w)) throw new RangeError(`${name}: vocab[${i}] (${JSON.stringify(w)}) appears twice`);
    seen.add(w);
  });
  return vocab;
}

function checkSeed(seed, name) {
  return checkInteger(seed, `${name}: seed`, 0, 0xffffffff);
}

async function checkAttention(attention, name) {
  if (attention == null) return defaultAttention();
  if (typeof attention.sdpa !== 'function' || typeof attention.matmul !== 'function') {
    throw new TypeError(`${name}: attention must be an Attention from loadAttention(), got ${describe(attention)}`);
  }
  return attention;
}

const TRAIN_KEYS = [...Object.keys(TRAIN_DEFAULTS), 'seed', 'attention'];
const ENCODER_TRAIN_KEYS = [...Object.keys(ENCODER_TRAIN_DEFAULTS), 'seed', 'attention'];
const KNOWN = {
  createModel: [...Object.keys(MODEL_DEFAULTS), 'vocab', ...TRAIN_KEYS],
  createEncoder: [...Object.keys(ENCODER_DEFAULTS), 'vocab', ...ENCODER_TRAIN_KEYS],
  loadModel: TRAIN_KEYS,
};

const ALLOWED = Object.fromEntries(Object.entries(KNOWN).map(([call, keys]) => [call, new Set(keys)]));

// An options object whose keys the call knows: a typo is a TypeError naming
// the known keys, by the Attention calls' rule.
function checkOptions(options, name) {
  if (Array.isArray(options)) throw new TypeError(`${name}: options must be an object, got ${describe(options)}`);
  checkKnownKeys(options, ALLOWED[name], KNOWN[name], name);
  return options;
}

/**
 * A fresh, untrained model; the seed decides its parameters and the batches
 * trainStep draws, so the same seed gives the same loss curve.
 * @param {object} [options] seed (default 0), the architecture (MODEL_DEFAULTS),
 *   vocab (default WORDS), the training settings (TRAIN_DEFAULTS), attention
 * @returns {Promise<Model>}
 */
export async function createModel(options = {}) {
  const name = 'createModel';
  checkOptions(options, name);
  const seed = checkSeed(options.seed ?? 0, name);
  const config = checkConfig(options, name, MODEL_DEFAULTS, 2 * MIN_SEGMENT);
  const training = checkTraining(options, name);
  const vocab = checkVocab(options.vocab ?? WORDS, name);
  const attention = await checkAttention(options.attention, name);
  const rng = new NumpyRandom(seed);
  const params = initParams({ ...config, vocabSize: vocab.length }, rng);
  return new Model(attention, { config, vocab, params, training, rng });
}

/**
 * A fresh, untrained English encoder (masked-LM), deterministic from options.seed.
 * @param {object} [options] seed (default 0), the architecture (ENCODER_DEFAULTS),
 *   vocab (default the English lexicon's), the training settings (ENCODER_TRAIN_DEFAULTS), attention
 * @returns {Promise<EncoderModel>}
 */
export async function createEncoder(options = {}) {
  const name = 'createEncoder';
  checkOptions(options, name);
  const seed = checkSeed(options.seed ?? 0, name);
  const config = checkConfig(options, name, ENCODER_DEFAULTS, 1, Object.keys(ENCODER_DEFAULTS));
  const training = checkTraining(options, name, ENCODER_TRAIN_DEFAULTS);
  const vocab = checkVocab(options.vocab ?? [...englishVocab()], name);
  const attention = await checkAttention(options.attention, name);
  const rng = new NumpyRandom(seed);
  const params = initEncoderParams({ ...config, vocabSize: vocab.length }, rng);
  return new EncoderModel(attention, { config, vocab, params, training, rng });
}

// The shipped models, beside this file; literal URLs so bundlers copy them,
// and functions so a page fetches only the one it asks for.
const SHIPPED = {
  induction: () => new URL('./model/induction.json', import.meta.url),
  english: () => new URL('./model/english.json', import.meta.url),
};

// The JSON at a URL; a file that is missing or not JSON is an Error naming
// the call and the URL, not the file system's or the parser's own.
async function fetchJSON(url, name) {
  let text;
  if (url.protocol === 'file:') {
    // A specifier in a variable, so browser bundlers do not try to resolve it.
    const fsName = 'node:fs/promises';
    const fs = await import(/* webpackIgnore: true */ /* @vite-ignore */ fsName);
    try {
      text = await fs.readFile(url, 'utf8');
    } catch (error) {
      throw new Error(`${name}: cannot read ${url.href} (${error.code ?? error.message}); the source is 'induction', 'english', a URL or path of a saved model, JSON text or an object`);
    }
  } else {
    const response = await fetch(url);
    if (!response.ok) throw new Error(`${name}: fetching ${url} failed with HTTP ${response.status}`);
    text = await response.text();
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new TypeError(`${name}: ${url.href} is not JSON (a saved model is what toJSON() returns)`);
  }
}

/**
 * A saved model: 'induction' (the default, shipped with the package), a URL
 * (or a string that is one, relative to the page), JSON text, or the object
 * toJSON() returns.
 * @param {string | URL | object} [source]
 * @param {object} [options] attention, seed (for trainStep's batches), the training settings
 * @returns {Promise<Model>}
 */
export async function loadModel(source = 'induction', options = {}) {
  const name = 'loadModel';
  checkOptions(options, name);
  let json = source;
  if (typeof source === 'string' && Object.hasOwn(SHIPPED, source)) {
    json = await fetchJSON(SHIPPED[source](), name);
  } else if (typeof source === 'string' && source.trimStart().startsWith('{')) {
    try {
      json = JSON.parse(source);
    } catch (error) {
      throw new TypeError(`${name}: source looks like JSON text but does not parse: ${error.message}`);
    }
  } else if (typeof source === 'string' || source instanceof URL) {
    const base = globalThis.location?.href ?? `file://${globalThis.process?.cwd?.() ?? ''}/`;
    json = await fetchJSON(new URL(source, base), name);
  }
  if (json === null || typeof json !== 'object' || json.format !== FORMAT) {
    throw new TypeError(`${name}: source must be 'induction', 'english', a URL, JSON text or an object with format '${FORMAT}', got ${describe(json)}`);
  }
  if (json.version !== VERSION) throw new RangeError(`${name}: format version ${describe(json.version)} is not supported (expected ${VERSION})`);
  if (json.config === null || typeof json.config !== 'object') throw new TypeError(`${name}: config must be an object, got ${describe(json.config)}`);
  const steps = Number.isInteger(json.steps) && json.steps >= 0 ? json.steps : 0;
  if (json.kind === ENCODER_KIND) {
    const config = checkConfig(json.config, `${name}: config`, {}, 1, Object.keys(ENCODER_DEFAULTS));
    const vocab = checkVocab(json.vocab, name);
    const params = encoderParamsFromJSON(json, { ...config, vocabSize: vocab.length }, name);
    const training = checkTraining(options, name, ENCODER_TRAIN_DEFAULTS);
    const seed = checkSeed(options.seed ?? 0, name);
    const attention = await checkAttention(options.attention, name);
    const card = json.card !== null && typeof json.card === 'object' ? json.card : null;
    return new EncoderModel(attention, { config, vocab, params, training, rng: new NumpyRandom(seed), steps, card });
  }
  if (json.kind !== undefined && json.kind !== 'decoder') throw new RangeError(`${name}: kind must be 'decoder' or '${ENCODER_KIND}', got ${describe(json.kind)}`);
  const config = checkConfig(json.config, `${name}: config`, {}, 1);
  const vocab = checkVocab(json.vocab, name);
  const params = paramsFromJSON(json, { ...config, vocabSize: vocab.length }, name);
  const training = checkTraining(options, name);
  const seed = checkSeed(options.seed ?? 0, name);
  const attention = await checkAttention(options.attention, name);
  return new Model(attention, { config, vocab, params, training, rng: new NumpyRandom(seed), steps });
}

/**
 * Head scores: of the induction model on repeated random sequences, [layer][head]
 * { previousToken, induction, firstToken }; of an encoder on held-out grammar
 * sentences, [layer][head] { relations, positional, label }.
 */
export function headScores(model, options) {
  if (!(model instanceof Model) && !(model instanceof EncoderModel)) throw new TypeError(`headScores: model must be a Model or an EncoderModel, got ${describe(model)}`);
  return model.headScores(options);
}
