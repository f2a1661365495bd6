// step-tables.js - what each table of the steps view holds: its id, title,
// row and column labels, and which matrix of a computation it shows. Pure
// (no DOM): StepsView (steps-view.js) builds and paints the tables from these
// specs; the element reads a table's matrix for editing and copying.

import { STEP_TITLES } from '../worked/text.js';

/** The matrices a reader can type into. */
export const EDITABLE = new Set(['X', 'WQ', 'WK', 'WV']);

// The per-token matrices a table can show besides the editable ones.
const PROJECTIONS = new Set(['Q', 'K', 'V', 'QR', 'KR']);

// What one head's table of each step holds, for its accessible name.
const HEAD_TABLE_NAMES = Object.freeze({ scores: 'raw scores', scaled: 'scaled scores', weights: 'weights', output: 'output' });

/** The matrix a table shows: an input or projection by name, else "<step>-<head>". */
export function matrixOf(example, id) {
  if (EDITABLE.has(id) || PROJECTIONS.has(id)) return example[id];
  const [key, h] = id.split('-');
  const head = example.heads[Number(h)];
  return key === 'scaled' && head.logits ? head.logits : head[key];
}

// Column labels: one per dimension ("x0"), or per head and dimension ("q1.0") when several heads sit side by side.
const dims = (prefix, count) => Array.from({ length: count }, (_, j) => `${prefix}${j}`);
const headCols = (letter, d, heads) => (heads === 1 ? dims(letter, d) : Array.from({ length: heads * d }, (_, j) => `${letter}${Math.floor(j / d) + 1}.${j % d}`));

/**
 * One table per head of a token-by-token step (scores, scaled, weights) or
 * of the output. `heatmap` is true where the step is drawn as a canvas
 * (canvas: past heatmap-layout's TABLE_MAX_TOKENS); the output stays a table.
 */
export function headTableSpecs(config, example, key, canvas = false) {
  const c = config, t = example.tokens;
  return example.heads.map((head, h) => ({
    id: `${key}-${h}`,
    title: c.heads === 1 ? STEP_TITLES[key].replace(/^Step \d: /, '') : `Head ${h + 1}${c.kvHeads < c.heads ? ` (K, V of kv head ${head.kvHead + 1})` : ''}`,
    // A head's caption is "Head 1" under its step's heading; read alone, its table says which step too.
    ...(c.heads === 1 ? {} : { name: `Head ${h + 1} ${HEAD_TABLE_NAMES[key]}` }),
    rows: t, cols: key === 'output' ? dims('v', c.dv) : t, kind: key === 'weights' ? 'seq' : 'div', step: key,
    selectable: true, withSums: key === 'weights', head: h, heatmap: canvas && key !== 'output',
  }));
}

/** The inputs' tables: X and the three projection matrices, all editable. */
export function inputTableSpecs(config, tokens) {
  const c = config, x = dims('x', c.dModel);
  return [
    { id: 'X', title: 'X', rows: tokens, cols: x, kind: 'div', editable: true },
    { id: 'WQ', title: 'W_Q', rows: x, cols: headCols('q', c.dk, c.heads), kind: 'div', editable: true },
    { id: 'WK', title: 'W_K', rows: x, cols: headCols('k', c.dk, c.kvHeads), kind: 'div', editable: true },
    { id: 'WV', title: 'W_V', rows: x, cols: headCols('v', c.dv, c.kvHeads), kind: 'div', editable: true },
  ];
}

/** The projections' tables: Q, K, V, and with RoPE each turned table after the one it turns. */
export function projectionTableSpecs(config, tokens) {
  const c = config, t = tokens;
  const q = headCols('q', c.dk, c.heads), k = headCols('k', c.dk, c.kvHeads);
  return [
    { id: 'Q', title: 'Q = X W_Q', rows: t, cols: q, kind: 'div' },
    ...(c.rope ? [{ id: 'QR', title: 'q after RoPE', rows: t, cols: q, kind: 'div' }] : []),
    { id: 'K', title: 'K = X W_K', rows: t, cols: k, kind: 'div' },
    ...(c.rope ? [{ id: 'KR', title: 'k after RoPE', rows: t, cols: k, kind: 'div' }] : []),
    { id: 'V', title: 'V = X W_V', rows: t, cols: headCols('v', c.dv, c.kvHeads), kind: 'div' },
  ];
}

/**
 * The row and column labels of a table copied as text: tokens where the
 * table's rows or columns are tokens, else the dimensions by number.
 */
export function copyLabels(id, matrix, tokens) {
  const rows = EDITABLE.has(id) && id !== 'X' ? dims('x', matrix.rows) : tokens;
  const cols = /^(scores|scaled|weights)-/.test(id) ? tokens : dims('c', matrix.cols);
  return { rows, cols };
}
