// tables.js - the heatmap tables of <attention-explorer>: built once
// per structure (tokens, sizes, heads, parts shown), then repainted in place
// on every recompute, and the highlight of the cells a number comes from.

import { heatClass, maxAbs } from './colors.js';
import { el } from './dom.js';
import { displayWidth, fixed } from '../worked/format.js';

/** Characters of a row label a figure's table makes room for; longer ones end in an ellipsis. */
const LABEL_CHARS = 10;

/** Shown for a logit that may not attend. */
export const MINUS_INFINITY = '−∞';

/**
 * Builds an empty table (numbers come from paintTable) in a captioned figure.
 * Row labels are buttons (select the token as the query) when `selectable`.
 * `head` (a number) marks the figure of one head, for the head picker.
 * One cell holds the table's tab stop: `focus` ({ i, j }, j = -1 for a row
 * label) or the first cell.
 * @returns {{ figure: HTMLElement, entry: object }}
 */
export function buildTable({ id, title, rows, cols, kind, step, head = null, editable = false, selectable = false, withSums = false, focus = null }) {
  const nr = rows.length, nc = cols.length;
  const table = el('table', { role: 'grid', 'data-id': id, 'aria-label': `${title}, ${nr} by ${nc}${editable ? ', editable' : ''}` });
  // A fixed layout sizes columns from the first row instead of measuring
  // every cell: with 32 tokens that is most of a rebuild's layout time.
  table.style.setProperty('--cols', String(nc + (withSums ? 1 : 0)));
  // A figure sizes its columns by what they hold (styles.js): the longest row
  // label, and numbers of six characters ("0.2808") or seven ("-0.4659").
  table.style.setProperty('--label-chars', String(Math.min(LABEL_CHARS, Math.max(3, ...rows.map(displayWidth)))));
  table.style.setProperty('--cell-chars', kind === 'seq' ? '6' : '7');
  const headRow = el('tr', {}, el('th', { scope: 'col', class: 'corner' }));
  for (const col of cols) headRow.append(el('th', { scope: 'col', text: col, title: col }));
  if (withSums) headRow.append(el('th', { scope: 'col', class: 'sum', text: 'Σ row', title: 'Each row of weights sums to 1 (0 when every key is masked)' }));
  table.append(el('thead', {}, headRow));
  const body = el('tbody');
  const at = focus ?? { i: 0, j: 0 };
  const entry = { id, rows, cols, kind, step, table, tds: [], painted: [], sums: withSums ? [] : null, trs: [], buttons: selectable ? [] : null, lit: [] };
  const cellTitle = editable ? 'Enter or a digit edits this number' : undefined;
  for (let i = 0; i < nr; i++) {
    let rowHeader;
    if (selectable) {
      const button = el('button', { type: 'button', class: 'token', 'data-select': i, 'data-i': i, 'data-j': -1, tabindex: at.i === i && at.j === -1 ? 0 : -1, text: rows[i], title: `Show what “${rows[i]}” attends to` });
      entry.buttons.push(button);
      rowHeader = el('th', { scope: 'row' }, button);
    } else {
      rowHeader = el('th', { scope: 'row', text: rows[i], title: rows[i] });
    }
    const tr = el('tr', {}, rowHeader);
    entry.trs.push(tr);
    for (let j = 0; j < nc; j++) {
      const td = el('td', { role: 'gridcell', 'data-i': i, 'data-j': j, tabindex: at.i === i && at.j === j ? 0 : -1, title: cellTitle });
      entry.tds.push(td);
      tr.append(td);
    }
    if (withSums) {
      const sum = el('td', { class: 'sum' });
      entry.sums.push(sum);
      tr.append(sum);
    }
    body.append(tr);
  }
  table.append(body);
  const copy = el('details', { class: 'copy' },
    el('summary', { text: 'Copy', 'aria-label': `Copy ${title}` }),
    ...['numpy', 'CSV', 'Markdown'].map((format) => el('button', { type: 'button', text: format, 'data-copy': format, 'data-table': id })));
  const figure = el('figure', { class: 'matrix', 'data-id': id, 'data-head': head },
    el('figcaption', {}, el('span', { class: 'name', text: title }), el('span', { class: 'shape', text: ` (${nr} × ${nc})` }), copy),
    el('div', { class: 'scroll', part: 'table' }, table));
  return { figure, entry };
}

/**
 * Writes numbers, colours, blocked pairs, edits and the selected row into a
 * table built by buildTable. Only what changed is written: DOM writes are
 * most of a repaint's cost, and colours are classes of a quantized palette
 * so no CSS is parsed per cell. A table whose numbers and `how.key` (what
 * blocked, edited and selected depend on) are those it last painted is left
 * alone without formatting a cell: a scale change leaves the inputs,
 * projections and raw scores as they are.
 * With `how.region` ([row from, row to, col from, col to]) only those cells
 * are written (a drag paints what is in view); the table then counts as
 * not painted, so the next paint without a region writes the rest.
 * @param {{ key: string, digits: number, blocked: (i: number, j: number) => string, edited: (i: number, j: number) => boolean, selected: number, minusInfinity: boolean, region?: number[] | null }} how
 */
export function paintTable(entry, matrix, how) {
  if (entry.key === how.key && sameData(entry.data, matrix.data)) return;
  const region = how.region ?? null;
  // A table painted only in part is not current: the next paint looks at every cell.
  entry.key = region ? null : how.key;
  entry.data = region ? null : matrix.data.slice();
  const { kind, tds, sums, trs, buttons } = entry;
  const nc = matrix.cols;
  const scale = kind === 'seq' ? 1 : maxAbs(matrix.data);
  const [r0, r1, c0, c1] = region ?? [0, matrix.rows, 0, nc];
  for (let i = r0; i < r1; i++) {
    let total = 0;
    for (let k = i * nc, end = k + nc; k < end; k++) total += matrix.data[k];
    for (let j = c0; j < c1; j++) {
      const k = i * nc + j;
      const td = tds[k];
      const v = matrix.data[k];
      if (td.firstElementChild) {
        entry.painted[k] = ''; // being edited: repaint when done
        entry.data = null;
        continue;
      }
      const blocked = how.blocked(i, j);
      const edited = how.edited(i, j);
      const text = blocked && how.minusInfinity ? MINUS_INFINITY : fixed(v, how.digits);
      const className = `${blocked && how.minusInfinity ? '' : heatClass(kind === 'seq' ? v : v / scale, kind)}${blocked ? ' masked' : ''}${edited ? ' edited' : ''}`;
      const key = `${text}|${className}`;
      const was = entry.painted[k];
      if (was === key) continue;
      entry.painted[k] = key;
      const node = td.firstChild;
      if (node?.nodeType === 3 && node.nextSibling === null) {
        if (node.data !== text) node.data = text;
      } else {
        td.textContent = text;
      }
      // A new class invalidates the cell's style: only when the colour or a mark changed.
      if (!was || was.slice(was.indexOf('|') + 1) !== className) td.className = className;
      // The spoken label is written when the cell takes focus (cellLabel):
      // one attribute per changed cell per frame is too much during a drag.
      if (td.hasAttribute('aria-label')) td.setAttribute('aria-label', cellLabel(entry, i, j, text, blocked, edited));
    }
    if (sums) {
      const text = fixed(total, 4);
      if (sums[i].textContent !== text) sums[i].textContent = text;
    }
    if (buttons) {
      const selected = i === how.selected;
      if (trs[i].classList.contains('selected') !== selected) {
        trs[i].classList.toggle('selected', selected);
        buttons[i].setAttribute('aria-pressed', String(selected));
      } else if (!buttons[i].hasAttribute('aria-pressed')) {
        buttons[i].setAttribute('aria-pressed', String(selected));
      }
    }
  }
}

function sameData(a, b) {
  if (!a || a.length !== b.length) return false;
  for (let k = 0; k < a.length; k++) if (!Object.is(a[k], b[k])) return false;
  return true;
}

/** What a screen reader says for a cell: "row cat, column sat: 0.0806 (masked)". */
export function cellLabel(entry, i, j, text, blocked = '', edited = false) {
  const value = text === MINUS_INFINITY ? 'minus infinity' : text;
  return `row ${entry.rows[i]}, column ${entry.cols[j]}: ${value}${blocked ? ` (${blocked})` : ''}${edited ? ' (edited)' : ''}`;
}

/**
 * Marks the cells a number is computed from: `sources` are rectangles
 * { id, rows: [from, to), cols: [from, to) } of the tables in `tables`
 * (a Map id -> entry); tables not shown are skipped. Clears the last marks.
 */
export function highlight(tables, sources, target = null) {
  for (const entry of tables.values()) {
    if (entry.heatmap) {
      // A canvas outlines its rectangles itself.
      entry.heatmap.highlight(sources.filter((s) => s.id === entry.id), target?.id === entry.id ? target : null);
      continue;
    }
    for (const td of entry.lit) td.classList.remove('src', 'target');
    entry.lit = [];
  }
  for (const { id, rows, cols } of sources) {
    const entry = tables.get(id);
    if (!entry || entry.heatmap) continue;
    const nc = entry.cols.length;
    for (let i = rows[0]; i < rows[1]; i++) {
      for (let j = cols[0]; j < cols[1]; j++) {
        const td = entry.tds[i * nc + j];
        td.classList.add('src');
        entry.lit.push(td);
      }
    }
  }
  if (target && !tables.get(target.id)?.heatmap) {
    const entry = tables.get(target.id);
    const td = entry?.tds[target.i * entry.cols.length + target.j];
    if (td) {
      td.classList.add('target');
      entry.lit.push(td);
    }
  }
}

/**
 * The rows and columns of a table inside the window and its scroll box,
 * as [row from, row to, col from, col to] (a margin of one either side),
 * read from the first and last cells' boxes (the layout is fixed: every
 * row and column has one size).
 */
export function visibleRegion(entry) {
  const nr = entry.rows.length, nc = entry.cols.length;
  const first = entry.tds[0].getBoundingClientRect(), last = entry.tds[nr * nc - 1].getBoundingClientRect();
  const box = entry.table.parentElement.getBoundingClientRect();
  const pitchY = nr > 1 ? (last.top - first.top) / (nr - 1) : first.height;
  const pitchX = nc > 1 ? (last.left - first.left) / (nc - 1) : first.width;
  const top = Math.max(0, box.top), bottom = Math.min(window.innerHeight, box.bottom);
  const left = Math.max(0, box.left), right = Math.min(window.innerWidth, box.right);
  if (bottom <= top || right <= left) return [0, 0, 0, 0];
  const clamp = (x, n) => Math.min(n, Math.max(0, x));
  return [
    clamp(Math.floor((top - first.top) / pitchY) - 1, nr), clamp(Math.ceil((bottom - first.top) / pitchY) + 1, nr),
    clamp(Math.floor((left - first.left) / pitchX) - 1, nc), clamp(Math.ceil((right - first.left) / pitchX) + 1, nc),
  ];
}

/**
 * Scrolls the table's own scroll box (not the page) sideways so the lit
 * cells show: centred when they fit, else from their first column. A phone's
 * narrow table hides most columns, and "look at the column of mat" must not
 * point at nothing.
 */
export function scrollIntoBox(cells) {
  const box = cells[0].closest('.scroll');
  if (!box || box.scrollWidth <= box.clientWidth + 1) return;
  const b = box.getBoundingClientRect();
  const left = Math.min(...cells.map((td) => td.getBoundingClientRect().left)) - b.left + box.scrollLeft;
  const right = Math.max(...cells.map((td) => td.getBoundingClientRect().right)) - b.left + box.scrollLeft;
  const room = box.clientWidth;
  if (left >= box.scrollLeft && right <= box.scrollLeft + room) return;
  const target = right - left <= room ? left - (room - (right - left)) / 2 : left;
  box.scrollLeft = Math.max(0, Math.min(box.scrollWidth - box.clientWidth, target));
}
