// text.js - every text the explorer writes about the numbers: step
// titles and explanations, why a pair is not allowed, the derivation of a
// single number with the cells it is computed from, the lines view's
// summaries and the title of an exported picture. Pure: no DOM, no wasm,
// tested in Node (tests/explorer-text.test.js).

import { blockedBy } from '../core/options.js';
import { defaultScale } from './computation.js';
import { fixed } from './format.js';

export const STEP_TITLES = Object.freeze({
  inputs: 'Inputs: X and the projection weights',
  projections: 'Projections: Q, K, V',
  scores: 'Step 1: raw scores Q Kᵀ',
  scaled: 'Step 2: scaled scores',
  weights: 'Step 3: attention weights',
  output: 'Step 4: output = weights × V',
});

export const DEFAULT_EXPLANATIONS = Object.freeze({
  inputs: 'Each token is one row of X, its embedding. By default row i is random draw i of numpy’s generator (its seed is under “Settings”), exactly as in the handbook; with embeddings “word” the same word always gets the same embedding (and, without positions, the same row). W_Q, W_K and W_V are the projections a model would learn, random here and scaled by 0.5. Click any number and type to change it.',
  projections: 'Q = X W_Q, K = X W_K, V = X W_V. Every token gets a query (what it is looking for), a key (what it offers to others) and a value (what it passes on when attended to).',
  scores: 'Row i, column j is the dot product of token i’s query with token j’s key: how well they match. Hover or tap a number to see the sum and the cells it comes from.',
  scaled: 'Scores times the scale, 1/√d_k by default: without it, scores grow with d_k and the softmax saturates into a one-hot row. A pair that may not attend (causal, masked) gets −∞ here, so the softmax gives it exactly 0. Drag the scale slider: larger sharpens the weights, smaller flattens them.',
  weights: 'Softmax of each row: every row is positive and sums to 1, the share of attention token i pays to each token j. Hatched cells are pairs that may not attend; turn on “Mask pairs” and click cells to mask pairs yourself.',
  output: 'Each token’s output is the weighted average of the value vectors, with its row of weights: a blend of the tokens it attends to.',
});

/**
 * The default explanation of a step for the controls shown: it points to no
 * control the reader cannot see ("Mask pairs" and "Settings" are in the
 * full controls only, the scale slider is in all but "none").
 */
export function defaultExplanation(step, controls = 'full') {
  let text = DEFAULT_EXPLANATIONS[step];
  // A part with no default text here (a view plugged in later) keeps its own.
  if (controls === 'full' || typeof text !== 'string') return text;
  text = text
    .replace(' (its seed is under “Settings”)', '')
    .replace('; turn on “Mask pairs” and click cells to mask pairs yourself.', '.');
  if (controls === 'none') text = text.replace(' Drag the scale slider: larger sharpens the weights, smaller flattens them.', ' A larger scale sharpens the weights, a smaller one flattens them.');
  return text;
}

/** The title of the section that opens the view: the lines view and the weights. */
export function leadTitle(show, config, scaleIsDefault) {
  if (!show.has('weights')) return 'Who attends to whom';
  // "Step 3" only reads right where steps 1 and 2 are shown too.
  if (!show.has('scores') && !show.has('scaled')) return 'Attention weights';
  return sectionTitle('weights', config, scaleIsDefault);
}

/** The word for each table id in labels and derivations. */
const NAMES = { X: 'X', WQ: 'W_Q', WK: 'W_K', WV: 'W_V', Q: 'Q', K: 'K', V: 'V' };
const MAX_TERMS = 8; // terms of a sum spelled out in a derivation

const BLOCKED = { causal: 'causal: a later token', window: 'outside the window' };

/**
 * Why query i may not attend to key j, or '' when it may: the kernels' rule
 * (blockedBy, web/core/options.js) with query i at position
 * p = i + queryOffset among the keys, then the explorer's mask.
 * @param {{ causal: boolean, window?: number[]|null, queryOffset?: number }} config
 * @param {Uint8Array|null} mask keep-mask (n, n), 1 = may attend
 */
export function blockedReason(config, mask, n, i, j) {
  const rule = blockedBy(config, i, j);
  if (rule) return BLOCKED[rule];
  if (mask && mask[i * n + j] === 0) return 'masked';
  return '';
}

/** The title of the scaled-scores step, with the scale (and softcap) in use. */
export function sectionTitle(step, config, scaleIsDefault) {
  if (step === 'projections' && config.rope) return 'Projections: Q, K, V, then q and k after RoPE';
  if (step !== 'scaled') return STEP_TITLES[step];
  const how = scaleIsDefault ? ` (÷ √${config.dk} = ${Math.sqrt(config.dk).toFixed(3)})` : '';
  if (config.softcap > 0) return `Step 2: logits = ${config.softcap}·tanh(score × ${config.scale.toFixed(3)} / ${config.softcap})`;
  return `Step 2: scaled scores × ${config.scale.toFixed(3)}${how}`;
}

/** Which dimensions RoPE turns, in words (an odd d_k leaves its last one). */
export function ropeDims({ dk, rope }) {
  const pairs = rope.dims === 2 ? 'one pair (0, 1)' : `${rope.dims / 2} pairs (c, c + ${rope.dims / 2})`;
  // Pair c turns theta^(-2c/dims) radians a position: pair 0 turns 1 whatever theta is.
  const one = rope.dims === 2 ? '; one pair turns 1 radian a position whatever theta is, which sets the slower pairs from d_k = 4' : '';
  if (rope.dims === dk) return `all ${dk} dimensions in ${pairs}${one}`;
  return `the first ${rope.dims} dimensions in ${pairs}; d_k = ${dk} is odd and RoPE turns pairs, so dimension ${dk - 1} is not turned${one}`;
}

/**
 * What RoPE adds to a step's explanation ('' when it is off or the step
 * does not change): the projections gain q and k after RoPE, the scores
 * are their dot products.
 */
export function ropeExplanation(step, config) {
  const r = config.rope;
  if (!r) return '';
  const where = config.queryOffset ? `q of token i at position i + ${config.queryOffset} (the query offset)` : 'q of token i at position i';
  if (step === 'projections') return ` RoPE is on: q after RoPE and k after RoPE are q and k with each pair of dimensions turned by an angle that grows with the position, ${where} and k of token j at j (theta ${r.theta}; ${ropeDims(config)}).`;
  if (step === 'scores') return ' RoPE is on, so these are dot products of q after RoPE with k after RoPE: a score depends on how far apart the two tokens are, not only on what they are.';
  return '';
}

/** The window in words: "window 2 back, 2 ahead". */
export function windowText(w) {
  if (!w) return 'no window';
  const side = (x, word) => (x < 0 ? `unbounded ${word}` : `${x} ${word}`);
  return `window ${side(w[0], 'back')}, ${side(w[1], 'ahead')}`;
}

/** What the scale is, in words: "0.577 = 1/√3" or "2.000 (16 × 1/√3)". */
export function scaleText(config, scaleIsDefault) {
  if (scaleIsDefault) return `${config.scale.toFixed(3)} = 1/√${config.dk}`;
  const ratio = config.scale / defaultScale(config.dk);
  return `${config.scale.toFixed(3)} = ${ratio >= 1 ? `${Number(ratio.toPrecision(3))} ×` : `1/${Number((1 / ratio).toPrecision(3))} ×`} 1/√${config.dk}`;
}

/**
 * The title of a saved picture: the sentence and every setting that changes
 * which pairs attend or how sharply (causal, mask, window, scale).
 */
export function snapshotTitle(config, { maskedPairs = 0, scaleIsDefault = true, model = null } = {}) {
  if (model) {
    // A model's numbers: no seed, sizes or masks of the reader's, only which head and which word it hides.
    const masked = model.masked ? `, “${model.masked}” masked` : '';
    return `Attention in ${model.head} of ${model.name}: “${config.tokens.join(' ')}” (d_k ${config.dk}, ${config.causal ? 'causal' : 'both ways'}${masked}, scale ${scaleText(config, true)}, the model's)`;
  }
  const parts = [`seed ${config.seed}`, `d_k ${config.dk}`];
  if (config.heads > 1) parts.push(`${config.heads} heads`);
  parts.push(config.causal ? 'causal' : 'not causal');
  parts.push(maskedPairs > 0 ? `mask: ${maskedPairs} pair${maskedPairs === 1 ? '' : 's'} masked` : 'no mask');
  parts.push(windowText(config.window));
  if (config.queryOffset) parts.push(`query offset ${config.queryOffset}`);
  parts.push(`scale ${scaleText(config, scaleIsDefault)}`);
  if (config.softcap > 0) parts.push(`softcap ${config.softcap}`);
  return `Scaled dot-product attention: “${config.tokens.join(' ')}” (${parts.join(', ')})`;
}

/**
 * The key query i attends to most and its weight, in words:
 * "cat attends most to there, 0.2808".
 */
export function attendsMost(tokens, weights, i) {
  let best = -1, w = -Infinity;
  for (let j = 0; j < weights.cols; j++) {
    const x = weights.data[i * weights.cols + j];
    if (x > w) {
      w = x;
      best = j;
    }
  }
  if (!(w > 0)) return `${tokens[i]} attends to nothing (every key is masked)`;
  return `${tokens[i]} attends most to ${tokens[best]}, ${fixed(w, 4)}`;
}

const f4 = (x) => fixed(x, 4);
// "a − b" written as a reader would: "-0.396 + 0.396", never "-0.396 − -0.396".
const minus = (a, b, digits) => (b < 0 ? `${a} + ${fixed(-b, digits)}` : `${a} − ${fixed(b, digits)}`);
const paren = (x) => (x < 0 ? `(${f4(x)})` : f4(x));
const sum = (terms) => (terms.length > MAX_TERMS ? `${terms.slice(0, MAX_TERMS).join(' + ')} + … (${terms.length - MAX_TERMS} more terms)` : terms.join(' + '));

/**
 * The derivation of the number at (i, j) of table `id` and the cells it is
 * computed from. Ids: X, WQ, WK, WV, Q, K, V, and "<step>-<head>" for
 * scores, scaled, weights, output. Sources are rectangles of other tables:
 * { id, rows: [from, to), cols: [from, to) }.
 * @param {{ config, example, mask: Uint8Array|null, edits: Map<string, number>, inputs: object, scaleIsDefault: boolean,
 *   origin?: Record<string, string> }} ctx origin: where X and the weights come from when a model gives them
 * @returns {{ text: string, sources: { id: string, rows: number[], cols: number[] }[] }}
 */
export function explain(ctx, id, i, j) {
  const { config: c, example: ex } = ctx;
  const t = c.tokens, n = t.length;
  const all = (rows) => [0, rows];
  if (id === 'X' || id === 'WQ' || id === 'WK' || id === 'WV') {
    const m = ex[id];
    const where = id === 'X' ? `token “${t[i]}”, dimension ${j}` : `row x${i}, column ${j}`;
    const value = `${NAMES[id]}[${where}] = ${f4(m.get(i, j))}`;
    let text;
    // "Undo edits" is under "Settings, steps and export"; what it restores is the draw or the model's own number.
    if (ctx.edits.has(`${id}:${i}:${j}`)) text = `${value}, typed in (“Undo edits”, under “Settings, steps and export”, goes back to ${ctx.origin?.[id] ? 'the model’s number' : 'the draw'}).`;
    else if (ctx.inputs[id]) text = `${value}, from the inputs property.`;
    else if (ctx.origin?.[id]) text = `${value}: ${ctx.origin[id]}.`;
    else if (id === 'X' && c.embeddings === 'word' && c.positions) text = `${value}: the embedding of the word “${t[i]}” (np.random.randn with a seed made of ${c.seed} and the word, the same for every “${t[i]}”) plus the sinusoidal position encoding of position ${i}, so each “${t[i]}” gets a row of its own.`;
    else if (id === 'X' && c.embeddings === 'word') text = `${value}: the embedding of the word “${t[i]}”, np.random.randn with a seed made of ${c.seed} and the word; every “${t[i]}” gets this row.`;
    else if (id === 'X') text = `${value}: np.random.randn with seed ${c.seed}, row ${i} of the draw${c.positions ? `, plus the sinusoidal position encoding of position ${i}` : ''}.`;
    else text = `${value}: 0.5 × np.random.randn with seed ${c.seed}, drawn after X in the order W_Q, W_K, W_V.`;
    return { text, sources: [] };
  }
  if (id === 'QR' || id === 'KR') {
    const r = ropeTurn(c, ex, id, i, j);
    const name = `${id === 'QR' ? 'q' : 'k'} after RoPE[${t[i]}][${r.col}]`;
    const src = [{ id: r.from, rows: [i, i + 1], cols: r.partner < 0 ? [j, j + 1] : [Math.min(j, r.partnerCol), Math.min(j, r.partnerCol) + 1] }];
    if (r.partner >= 0) src.push({ id: r.from, rows: [i, i + 1], cols: [Math.max(j, r.partnerCol), Math.max(j, r.partnerCol) + 1] });
    if (r.partner < 0) return { text: `${name} = ${r.from}[${t[i]}][${j}] = ${f4(r.x)}: RoPE turns pairs and d_k = ${c.dk} is odd, so dimension ${r.col} is not turned.`, sources: src };
    const turn = r.first ? `${paren(r.x)}·cos(${fixed(r.angle, 4)}) − ${paren(r.y)}·sin(${fixed(r.angle, 4)})` : `${paren(r.x)}·cos(${fixed(r.angle, 4)}) + ${paren(r.y)}·sin(${fixed(r.angle, 4)})`;
    return {
      text: `${name} = ${turn} = ${f4(r.value)}: dimensions ${Math.min(r.col, r.partner)} and ${Math.max(r.col, r.partner)} of ${r.from}[${t[i]}] turned by angle ${r.position} × ${r.theta}^(−${2 * r.pair}/${r.dims}) = ${fixed(r.angle, 4)} rad (position ${r.position}).`,
      sources: src,
    };
  }
  if (id === 'Q' || id === 'K' || id === 'V') {
    const W = ex[`W${id}`];
    const terms = Array.from({ length: c.dModel }, (_, p) => `${paren(ex.X.get(i, p))}×${paren(W.get(p, j))}`);
    return {
      text: `${id}[${t[i]}][${j}] = Σ_t X[${t[i]}][t] · W_${id}[t][${j}] = ${sum(terms)} = ${f4(ex[id].get(i, j))}`,
      sources: [{ id: 'X', rows: [i, i + 1], cols: all(c.dModel) }, { id: `W${id}`, rows: all(c.dModel), cols: [j, j + 1] }],
    };
  }
  const [key, hText] = id.split('-');
  const h = Number(hText);
  const head = ex.heads[h];
  const g = head.kvHead;
  const headText = c.heads > 1 ? ` (head ${h + 1})` : '';
  const blocked = blockedReason(c, ctx.mask, n, i, j);
  if (key === 'scores') {
    const terms = Array.from({ length: c.dk }, (_, p) => `${paren(head.q.get(i, p))}×${paren(head.k.get(j, p))}`);
    // With RoPE the dot product is of the turned q and k (head.q and head.k are those).
    const [q, k, after] = c.rope ? ['QR', 'KR', ' after RoPE'] : ['Q', 'K', ''];
    return {
      text: `score(${t[i]} → ${t[j]})${headText} = q_${t[i]}${after} · k_${t[j]}${after} = ${sum(terms)} = ${fixed(head.scores.get(i, j), 3)}`,
      sources: [{ id: q, rows: [i, i + 1], cols: [h * c.dk, (h + 1) * c.dk] }, { id: k, rows: [j, j + 1], cols: [g * c.dk, (g + 1) * c.dk] }],
    };
  }
  if (key === 'scaled') {
    const score = head.scores.get(i, j);
    const how = ctx.scaleIsDefault ? `${fixed(score, 3)} / √${c.dk} = ${fixed(score, 3)} / ${Math.sqrt(c.dk).toFixed(3)}` : `${fixed(score, 3)} × ${c.scale}`;
    const sources = [{ id: `scores-${h}`, rows: [i, i + 1], cols: [j, j + 1] }];
    const logit = logitOf(ctx, h, i, j);
    if (blocked) {
      return { text: `logit(${t[i]} → ${t[j]})${headText} = −∞: the pair may not attend (${blocked}), so the softmax gives it 0. (score × scale would be ${how} = ${fixed(score * c.scale, 3)}.)`, sources };
    }
    if (c.softcap) {
      const x = head.scaled.get(i, j);
      return { text: `logit(${t[i]} → ${t[j]})${headText} = c·tanh(x / c) with c = ${c.softcap} and x = score × scale = ${how} = ${fixed(x, 3)}: ${c.softcap}·tanh(${fixed(x / c.softcap, 4)}) = ${fixed(logit, 3)}`, sources };
    }
    return { text: `scaled(${t[i]} → ${t[j]})${headText} = score × scale = ${how} = ${fixed(head.scaled.get(i, j), 3)}`, sources };
  }
  if (key === 'weights') {
    const sources = [{ id: `scaled-${h}`, rows: [i, i + 1], cols: all(n) }];
    if (blocked) return { text: `weight(${t[i]} → ${t[j]})${headText} = 0: not allowed (${blocked}), its logit is −∞, so it is left out of the softmax.`, sources };
    const zs = [];
    for (let k = 0; k < n; k++) if (!blockedReason(c, ctx.mask, n, i, k)) zs.push(logitOf(ctx, h, i, k));
    const zmax = Math.max(...zs);
    const total = zs.reduce((a, z) => a + Math.exp(z - zmax), 0);
    const z = logitOf(ctx, h, i, j);
    const e = Math.exp(z - zmax);
    return {
      text: `weight(${t[i]} → ${t[j]})${headText} = exp(z − max) / Σ exp(z_k − max) = exp(${minus(fixed(z, 3), zmax, 3)}) / ${f4(total)} = ${f4(e)} / ${f4(total)} = ${f4(head.weights.get(i, j))}`,
      sources,
    };
  }
  const terms = Array.from({ length: n }, (_, k) => `${f4(head.weights.get(i, k))}×${paren(head.v.get(k, j))}`);
  return {
    text: `output[${t[i]}][v${j}]${headText} = Σ_j weight(${t[i]} → j) · v_j[${j}] = ${sum(terms)} = ${f4(head.output.get(i, j))}`,
    sources: [{ id: `weights-${h}`, rows: [i, i + 1], cols: all(n) }, { id: 'V', rows: all(n), cols: [g * c.dv + j, g * c.dv + j + 1] }],
  };
}

/** The logit of (i, j) in head h: the core's logits row when it returns one, else the scaled score. */
export function logitOf(ctx, h, i, j) {
  const head = ctx.example.heads[h];
  return (head.logits ?? head.scaled).get(i, j);
}

/**
 * How entry (i, j) of QR or KR (Q or K after RoPE, heads side by side) is
 * turned: the library's number (value), the operands x (the entry of Q or
 * K), y (its pair's), the angle position × theta^(−2 pair / dims) and
 * whether it is the first of its pair (x cos − y sin) or the second
 * (x cos + y sin); partner -1 for a dimension RoPE leaves (odd d_k). The
 * angle and its cos and sin are for the text: the turn itself is the
 * library's (computeExample).
 */
export function ropeTurn(config, example, id, i, j) {
  const { dk, rope } = config;
  const from = id === 'QR' ? 'Q' : 'K';
  const col = j % dk, base = j - col, half = rope.dims / 2;
  const position = i + (id === 'QR' ? config.queryOffset : 0);
  const x = example[from].get(i, j), value = example[id].get(i, j);
  if (col >= rope.dims) return { from, col, partner: -1, x, value };
  const first = col < half, pair = col % half;
  const partner = first ? col + half : col - half;
  const angle = position * rope.theta ** (-2 * pair / rope.dims);
  return { from, col, partner, partnerCol: base + partner, first, pair, position, angle, theta: rope.theta, dims: rope.dims, x, y: example[from].get(i, base + partner), value };
}
