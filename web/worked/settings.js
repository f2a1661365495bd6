// settings.js - the one table of the explorer's settings and their
// parsing. It drives the attributes of <attention-explorer>, the URL of
// index.html (web/page.js), the options of the command line (web/cli.js) and
// the attribute list on the page. Pure: no DOM, no wasm.

import { EMBEDDINGS, HANDBOOK, LIMITS, defaultScale, normalizeConfig } from './computation.js';

/** The steps in the order they are computed. */
export const STEPS = Object.freeze(['inputs', 'projections', 'scores', 'scaled', 'weights', 'output']);

/** What `show` may list: the steps' tables, the lines view and the model view (shown when there is a model). */
export const PARTS = Object.freeze([...STEPS, 'lines', 'model']);

/** What `controls` may be: every control, the toolbar only (scale, causal, heads), or none. */
export const CONTROLS = Object.freeze(['full', 'minimal', 'none']);

/** What `appearance` may be: see isFigure. */
export const APPEARANCES = Object.freeze(['auto', 'figure', 'app']);

/**
 * Whether the element draws as a figure in someone's article (the page's
 * font and colours, no box, no heading or text of its own): with
 * appearance "figure", or "auto" (the default) in a compact embed.
 */
export function isFigure(view) {
  return view.appearance === 'figure' || (view.appearance !== 'app' && view.controls !== 'full');
}

// A setting's property and config field are its attribute in camelCase
// ("d-model" is dModel), as the element's properties mirror its attributes.
const camel = (attr) => attr.replace(/-([a-z])/g, (_, c) => c.toUpperCase());

// A setting that changes the numbers: the command line takes it and the
// page's address keeps it, so a shared link or a command gives the same numbers.
const numbers = (attr, kind, help, more = {}) => ({ attr, key: camel(attr), kind, compute: true, cli: true, url: true, ...more, help });

// A setting of what the element shows (`url` where the page's address keeps it).
const shows = (attr, kind, help, more = {}) => ({ attr, key: camel(attr), kind, ...more, help });

/**
 * One row per setting. `attr` names the attribute, URL parameter and
 * command-line flag; `key` the property and config field; `kind` how its
 * text is read; `compute` marks the settings that change the numbers
 * (the rest change only what the element shows); `cli` the ones the command
 * line takes; `url` the ones index.html keeps in its address.
 */
export const SETTINGS = Object.freeze([
  numbers('tokens', 'tokens', `the tokens, separated by spaces (default "${HANDBOOK.tokens.join(' ')}"; 1 to ${LIMITS.tokens})`, { arg: '"<words>"' }),
  numbers('seed', 'int', `numpy seed for X, W_Q, W_K, W_V (default ${HANDBOOK.seed}; 0 to 4294967295)`, { min: 0, max: 0xffffffff }),
  numbers('d-model', 'int', `embedding size, columns of X (default ${HANDBOOK.dModel})`, { min: 1, max: LIMITS.dModel }),
  numbers('dk', 'int', `query/key size per head (default ${HANDBOOK.dk})`, { min: 1, max: LIMITS.d }),
  numbers('dv', 'int', 'value size per head (default: dk)', { min: 1, max: LIMITS.d }),
  numbers('heads', 'int', `attention heads (default 1; up to ${LIMITS.heads})`, { min: 1, max: LIMITS.heads }),
  numbers('kv-heads', 'int', 'key/value heads for grouped-query attention (default: heads)', { min: 1, max: LIMITS.heads }),
  numbers('causal', 'bool', 'each token attends only to itself and earlier tokens'),
  numbers('scale', 'number', 'multiply scores by x instead of 1/sqrt(dk)', { arg: '<x>' }),
  numbers('embeddings', 'enum', 'rows of X: "position" (row i = draw i, the handbook) or "word" (one draw per distinct word)', { values: EMBEDDINGS, arg: '<kind>' }),
  numbers('positions', 'bool', 'add sinusoidal position encodings to X'),
  numbers('window', 'window', 'sliding window: a query sees at most left keys before it and right after it ("2" is 2 each side; -1 unbounded)', { arg: '"<left> [<right>]"' }),
  numbers('softcap', 'number', 'soft-cap the logits to c * tanh(x / c), as Gemma 2 does (0 or absent: none)', { arg: '<c>' }),
  numbers('query-offset', 'signed', 'position of the first query among the keys: shifts the causal frontier and the window (default 0)', { arg: '<n>' }),
  numbers('rope', 'rope', 'turn q and k by RoPE at their positions before the scores (theta 10000, or the number given); with an odd dk the last dimension is not turned', { arg: '[<theta>]' }),
  shows('step', 'enum', 'step mode: show one step at a time', { values: ['all', ...STEPS], url: true }),
  shows('show', 'list', 'the parts to show, separated by spaces (default all)', { values: PARTS }),
  shows('controls', 'enum', 'full, minimal (scale, causal, heads) or none', { values: CONTROLS }),
  shows('appearance', 'enum', 'figure (the page\'s font and colours, no heading or text of its own: a caption slot instead), app (the explorer\'s own look) or auto (default: figure when controls is minimal or none)', { values: APPEARANCES }),
  shows('train', 'bool', 'show the Train part: gradient descent on W_Q and W_K of head 1 toward a target pattern', { url: true }),
  shows('train-target', 'text', 'the Train part\'s target: previous-token, first-token, same-word, attend-to:<word> or paint:<row>-<col>,...', { url: true }),
  shows('train-optimizer', 'enum', 'the Train part\'s optimizer: adam (default) or sgd (with momentum 0.9)', { values: ['adam', 'sgd'], url: true }),
  shows('train-lr', 'number', 'the Train part\'s learning rate (default 0.02)', { url: true }),
  shows('model', 'text', 'show a trained model\'s heads: "english" (an encoder trained on English), "induction" (a tiny transformer) or the URL of a saved one; its chosen head\'s numbers fill the view', { url: true }),
  shows('model-head', 'text', 'the model\'s head shown in the lines and tables: "layer head", counted from 1 (default: the strongest induction head; for "english", the best determiner-to-noun head)', { url: true }),
  shows('model-mask', 'int', 'with model="english": the word masked, counted from 0; the model guesses it and the view shows where it looks', { url: true, min: 0, max: LIMITS.tokens - 1 }),
  shows('attentions-src', 'text', 'the URL of a JSON file { tokens, attention } of attention computed elsewhere, attention[layer][head] (n, n)'),
]);

export const SETTING = Object.freeze(Object.fromEntries(SETTINGS.map((s) => [s.attr, s])));

/** Tokens from text: words separated by white space. */
export function parseTokens(text, name = 'tokens') {
  const tokens = text.split(/\s+/).filter(Boolean);
  if (tokens.length === 0) throw new RangeError(`${name} needs at least one word`);
  if (tokens.length > LIMITS.tokens) throw new RangeError(`${name} takes at most ${LIMITS.tokens} tokens, got ${tokens.length}`);
  return tokens;
}

/** A whole number written in decimal digits (ranges are checked by normalizeConfig). */
export function parseWhole(text, name) {
  if (!/^\s*\d+\s*$/.test(text)) throw new RangeError(`${name} expects a whole number (0 or more), got "${text}"`);
  return Number(text);
}

/** A whole number that may be negative. */
export function parseSigned(text, name) {
  if (!/^\s*-?\d+\s*$/.test(text)) throw new RangeError(`${name} expects a whole number (may be negative), got "${text}"`);
  return Number(text);
}

/** A window: "w" (w keys on each side) or "left right"; -1 leaves a side unbounded. */
export function parseWindow(text, name) {
  const parts = text.trim().split(/[\s,]+/).filter(Boolean);
  if (parts.length < 1 || parts.length > 2 || parts.some((p) => !/^-?\d+$/.test(p))) {
    throw new RangeError(`${name} expects "left right" or one number for both sides (whole numbers, -1 unbounded), got "${text}"`);
  }
  const [left, right = left] = parts.map(Number);
  return [left, right];
}

/** A finite number. */
export function parseNumber(text, name) {
  const x = Number(text);
  if (text.trim() === '' || !Number.isFinite(x)) throw new RangeError(`${name} expects a number, got "${text}"`);
  return x;
}

/**
 * RoPE's theta from the `rope` attribute: present with no value (or "true")
 * is the usual 10000, a number is theta, "false" or "0" is off (null), as
 * for the boolean settings. normalizeConfig checks the range.
 */
export function parseRope(text, name) {
  const t = text.trim();
  if (t === '' || t === 'true') return true;
  if (t === 'false' || t === '0') return null;
  const x = Number(t);
  if (!Number.isFinite(x)) throw new RangeError(`${name} expects nothing (theta 10000) or RoPE's theta, a number of 1 or more; got "${text}"`);
  return x;
}

/**
 * The value of one setting from its text; `name` is how errors call it
 * ("seed" for an attribute, "--seed" on the command line). For a boolean,
 * any text but "0" and "false" is true (an attribute that is present is on).
 */
export function parseSetting(setting, text, name = setting.attr) {
  switch (setting.kind) {
    case 'tokens': return parseTokens(text, name);
    case 'int': return parseWhole(text, name);
    case 'signed': return parseSigned(text, name);
    case 'window': return parseWindow(text, name);
    case 'number': return parseNumber(text, name);
    case 'rope': return parseRope(text, name);
    case 'bool': return text !== '0' && text !== 'false';
    case 'text': return text.trim();
    case 'enum':
      if (!setting.values.includes(text)) throw new RangeError(`${name} must be one of ${setting.values.join(', ')}; got "${text}"`);
      return text;
    case 'list': {
      const items = text.split(/[\s,]+/).filter(Boolean);
      const bad = items.find((x) => !setting.values.includes(x));
      if (bad !== undefined) throw new RangeError(`${name} lists parts from ${setting.values.join(', ')}; got "${bad}"`);
      return items.length === 0 ? [...setting.values] : items;
    }
    default: throw new TypeError(`unknown setting kind ${setting.kind}`);
  }
}

/**
 * Reads every setting through `read(attr)` (the text, or null when absent)
 * and returns { config, view }: config is checked and completed by
 * normalizeConfig, view holds step, show (a Set) and controls.
 * Throws RangeError naming the first bad setting.
 */
export function readSettings(read, name = (attr) => attr) {
  const config = {};
  const view = { step: 'all', show: new Set(PARTS), controls: 'full', appearance: 'auto' };
  for (const setting of SETTINGS) {
    const text = read(setting.attr);
    if (text === null || text === undefined) continue;
    if ((setting.kind === 'number' || setting.kind === 'window') && text.trim() === '') continue; // scale="" means the default
    const value = parseSetting(setting, text, name(setting.attr));
    if (setting.compute) config[setting.key] = value;
    else view[setting.key] = setting.kind === 'list' ? new Set(value) : value;
  }
  return { config: normalizeConfig(config), view };
}

/**
 * The settings to draw when readSettings refuses them and nothing was drawn
 * yet (a mistyped link opened cold): every setting that is valid on its own
 * kept, the others at their defaults; all defaults when the valid ones still
 * clash (heads not a multiple of kvHeads).
 */
export function salvageSettings(read) {
  const bad = new Set();
  for (const setting of SETTINGS) {
    try {
      readSettings((attr) => (attr === setting.attr ? read(attr) : null));
    } catch {
      bad.add(setting.attr);
    }
  }
  try {
    return readSettings((attr) => (bad.has(attr) ? null : read(attr)));
  } catch {
    return readSettings(() => null);
  }
}

// ---- the scale slider -----------------------------------------------------------

/**
 * The slider runs over log2(scale / defaultScale(dk)) from -4 to 4, that is
 * from 1/16 to 16 times 1/sqrt(d_k), in steps of an eighth of an octave
 * (about 9 %): the same range on every drag, whatever the scale was.
 */
export const SCALE_SLIDER = Object.freeze({ min: -4, max: 4, step: 0.125 });

/** The slider position of a scale (clamped to the range; 0 for scale <= 0). */
export function scaleToSlider(scale, dk) {
  if (!(scale > 0)) return SCALE_SLIDER.min;
  const p = Math.log2(scale / defaultScale(dk));
  return Math.min(SCALE_SLIDER.max, Math.max(SCALE_SLIDER.min, p));
}

/** The scale at a slider position, rounded to 4 significant digits; null at the default. */
export function sliderToScale(position, dk) {
  if (Math.abs(position) < 1e-9) return null;
  return Number((defaultScale(dk) * 2 ** position).toPrecision(4));
}
