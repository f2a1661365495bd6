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

/**
 * A plain-text table: row labels, optional column labels, right-aligned cells.
 * @param {import('../core/matrix.js').Matrix} m
 */
export function textTable(m, rowLabels, colLabels, digits) {
  const cells = m.toArray().map((row) => row.map((x) => fixed(x, digits)));
  const labelWidth = Math.max(...rowLabels.map((l) => l.length));
  const width = Math.max(...cells.flat().map((c) => c.length), ...(colLabels ?? []).map((l) => l.length));
  const lines = [];
  if (colLabels) lines.push(`${' '.repeat(labelWidth)}  ${colLabels.map((l) => l.padStart(width)).join(' ')}`);
  cells.forEach((row, i) => lines.push(`${rowLabels[i].padEnd(labelWidth)}  ${row.map((c) => c.padStart(width)).join(' ')}`));
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
