// format.js - number and table formatting shared by the command line and the
// explorer. Pure functions: no DOM, no wasm memory.

const NEGATIVE_ZERO = Array.from({ length: 21 }, (_, d) => (-0.0001).toFixed(d).replace(/[1-9]/g, '0'));

/** Fixed decimals as the handbook prints them; "-0.000" becomes "0.000". */
export function fixed(x, digits) {
  if (Number.isNaN(x)) return 'NaN';
  if (x === Infinity) return 'Inf';
  if (x === -Infinity) return '-Inf';
  const s = x.toFixed(digits);
  return s.charCodeAt(0) === 45 && s === NEGATIVE_ZERO[digits] ? s.slice(1) : s;
}

/** Decimals per step, as in the handbook: 3 for scores, 4 for weights and outputs. */
export const DIGITS = Object.freeze({ X: 4, WQ: 4, WK: 4, WV: 4, Q: 4, K: 4, V: 4, scores: 3, scaled: 3, weights: 4, output: 4 });

// Characters a terminal draws two columns wide (East Asian Wide and
// Fullwidth, and emoji presentation), and those it draws over the previous
// one (combining marks, joiners, variation selectors).
const WIDE = /\p{Extended_Pictographic}|\p{Emoji_Presentation}|[\u1100-\u115f\u2e80-\u303e\u3041-\u33ff\u3400-\u4dbf\u4e00-\u9fff\ua000-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6\u{20000}-\u{3fffd}]/u;
const ZERO = /[\p{Mn}\p{Me}\u200b-\u200f\ufe00-\ufe0f\u{e0100}-\u{e01ef}]/u;

/** The columns a terminal gives `text`: wide characters 2, combining ones 0. */
export function displayWidth(text) {
  let width = 0;
  for (const ch of text) {
    if (ZERO.test(ch)) continue;
    width += ch.codePointAt(0) >= 0x1100 && WIDE.test(ch) ? 2 : 1;
  }
  return width;
}

const padStart = (s, w) => ' '.repeat(Math.max(0, w - displayWidth(s))) + s;
const padEnd = (s, w) => s + ' '.repeat(Math.max(0, w - displayWidth(s)));

/**
 * A plain-text table: row labels, optional column labels, right-aligned
 * cells, aligned by the columns a terminal draws (CJK and emoji take two).
 * @param {import('../core/matrix.js').Matrix} m
 */
export function textTable(m, rowLabels, colLabels, digits) {
  const cells = m.toArray().map((row) => row.map((x) => fixed(x, digits)));
  const labelWidth = Math.max(...rowLabels.map(displayWidth));
  // A label at least one column wider than its word, so neighbouring words never touch.
  const width = Math.max(...cells.flat().map((c) => c.length), ...(colLabels ?? []).map((l) => displayWidth(l) + 1));
  const lines = [];
  if (colLabels) lines.push(`${' '.repeat(labelWidth)}  ${colLabels.map((l) => padStart(l, width)).join(' ')}`);
  cells.forEach((row, i) => lines.push(`${padEnd(rowLabels[i], labelWidth)}  ${row.map((c) => padStart(c, width)).join(' ')}`));
  return lines.join('\n');
}

/** numpy literal, e.g. np.array([[1.0, 2.0], [3.0, 4.0]]). */
export function toNumpy(m, digits = 6) {
  const rows = m.toArray().map((row) => `[${row.map((x) => numpyNumber(x, digits)).join(', ')}]`);
  return `np.array([${rows.join(',\n          ')}])`;
}

function numpyNumber(x, digits) {
  if (Number.isNaN(x)) return 'np.nan';
  if (x === Infinity) return 'np.inf';
  if (x === -Infinity) return '-np.inf';
  return fixed(x, digits);
}

/** CSV with a header row of column labels and the row label first. */
export function toCSV(m, rowLabels, colLabels, digits = 6) {
  const quote = (s) => (/[",\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s);
  const lines = [['', ...colLabels].map(quote).join(',')];
  m.toArray().forEach((row, i) => lines.push([quote(rowLabels[i]), ...row.map((x) => fixed(x, digits))].join(',')));
  return lines.join('\n');
}

/** A GitHub Markdown table. */
export function toMarkdown(m, rowLabels, colLabels, digits = 4) {
  const esc = (s) => s.replaceAll('|', '\\|');
  const lines = [`| | ${colLabels.map(esc).join(' | ')} |`, `|---|${colLabels.map(() => '---:').join('|')}|`];
  m.toArray().forEach((row, i) => lines.push(`| ${esc(rowLabels[i])} | ${row.map((x) => fixed(x, digits)).join(' | ')} |`));
  return lines.join('\n');
}
