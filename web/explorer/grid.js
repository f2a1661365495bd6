// grid.js - the tables as keyboard grids and the editing of a cell.
// Each table is one tab stop (roving tabindex): arrows move between cells
// and, left of the first column, the row labels; Home/End go to the ends of
// a row (with Ctrl, of the table).

import { el } from './dom.js';

const MOVES = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };

/**
 * Where a navigation key moves from (i, j) in a table of `rows` x `cols`
 * whose row labels are focusable (column -1) when `labels`; null when the
 * key is not a navigation key.
 */
export function nextCell(key, ctrl, i, j, rows, cols, labels) {
  const first = labels ? -1 : 0;
  if (MOVES[key]) {
    return [Math.min(rows - 1, Math.max(0, i + MOVES[key][0])), Math.min(cols - 1, Math.max(first, j + MOVES[key][1]))];
  }
  if (key === 'Home') return [ctrl ? 0 : i, first];
  if (key === 'End') return [ctrl ? rows - 1 : i, cols - 1];
  return null;
}

/** The focusable element at (i, j) of a table entry (j = -1: the row label). */
export function cellAt(entry, i, j) {
  return j < 0 ? entry.buttons?.[i] ?? null : entry.tds[i * entry.cols.length + j] ?? null;
}

/** Moves the table's one tab stop to `next` and focuses it. */
export function moveTabStop(entry, next) {
  for (const node of entry.table.querySelectorAll('[tabindex="0"]')) node.tabIndex = -1;
  next.tabIndex = 0;
  next.focus();
}

/**
 * Replaces a cell's text by an input. Enter or leaving the input commits,
 * Escape cancels; `done(text | null)` gets the typed text, or null when
 * cancelled.
 */
export function startEdit(td, { label, value, firstKey, done }) {
  const input = el('input', { type: 'text', inputmode: 'decimal', class: 'cell-edit', 'aria-label': `Edit ${label}` });
  input.value = firstKey ?? value;
  // Wide enough for the whole number, sign included: a narrower box scrolls its start out of sight.
  input.style.width = `${Math.max(6, input.value.length) + 2}ch`;
  let finished = false;
  const finish = (commit) => {
    if (finished) return;
    finished = true;
    const text = input.value.trim();
    td.replaceChildren(); // the next repaint writes the number back
    done(commit ? text : null);
  };
  input.addEventListener('keydown', (e) => {
    e.stopPropagation();
    if (e.key === 'Enter') finish(true);
    else if (e.key === 'Escape') finish(false);
  });
  input.addEventListener('blur', () => finish(true));
  td.replaceChildren(input);
  input.focus();
  if (firstKey === null || firstKey === undefined) input.select();
}

/**
 * Checks typed text for a cell: a finite number within ±1e6, rounded to
 * float32. Returns { value } or { error } naming the cell and what it keeps.
 */
export function parseCellValue(text, where, keeps) {
  const value = Number(text);
  if (text === '' || !Number.isFinite(value)) return { error: `“${text}” is not a number; ${where} keeps ${keeps}` };
  if (Math.abs(value) > 1e6) return { error: `${where}: keep values within ±1e6, got ${text}` };
  return { value: Math.fround(value) };
}
