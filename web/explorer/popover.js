// popover.js - the inspection popover of <attention-explorer>: a number's
// derivation (its formula from text.js, its operands drawn by
// derivation.js), placed where it covers neither the row nor the column of
// the number it explains, and never ending below the window. The element
// decides what is inspected and lights the source cells; this file only
// shows the derivation and places it.

import { el } from './dom.js';
import { groundColor } from './ground.js';

const MAX_WIDTH = 420; // px: about 60 characters, a derivation on two or three lines
const GAP = 8; // px between the table and the popover, and kept to the explorer's edges

/**
 * Where a popover of `width` x `height` goes for a cell of a table: `cell`,
 * `table` and `root` are client rectangles (the explorer's box holds the
 * popover), `windowHeight` the viewport's. Returns { left, top } relative
 * to `root`. Right of the table when it fits there, else left of it (both
 * level with the cell, moved up to end inside the window); else under the
 * table, or above it when under it would end below the window. Beside or
 * over and under the table, it covers none of the cell's row or column.
 * A table too big for any of these (taller than the window) gets the
 * popover above the cell's row (else under it), on the side of its column
 * with more room.
 */
export function placePopover(cell, table, root, width, height, windowHeight) {
  const bottom = windowHeight - GAP - root.top; // the window's bottom, relative to root
  const top = -root.top + GAP; // the window's top
  const level = Math.max(top, Math.min(cell.top - root.top, bottom - height));
  if (table.right - root.left + GAP + width <= root.width) return { left: table.right - root.left + GAP, top: level };
  if (table.left - root.left - GAP - width >= 0) return { left: table.left - root.left - GAP - width, top: level };
  const left = Math.max(GAP, Math.min(table.left - root.left, root.width - width - GAP));
  if (table.bottom - root.top + GAP + height <= bottom) return { left, top: table.bottom - root.top + GAP };
  if (table.top - root.top - GAP - height >= top) return { left, top: table.top - root.top - GAP - height };
  // A table bigger than the window: beside the cell's column (on its roomier
  // side) and above or under its row, so the quadrant it covers holds neither.
  const rightRoom = root.right - cell.right, leftRoom = cell.left - root.left;
  const side = rightRoom >= leftRoom ? Math.min(cell.right - root.left + GAP, root.width - width - GAP) : Math.max(GAP, cell.left - root.left - GAP - width);
  if (cell.top - root.top - GAP - height >= top) return { left: side, top: cell.top - root.top - GAP - height };
  return { left: side, top: Math.min(cell.bottom - root.top + GAP, bottom - height) };
}

export class Popover {
  #formula = el('p', { class: 'formula' });
  #figure = el('div', { class: 'figure' });
  #node = el('div', { class: 'popover', part: 'popover', role: 'status', hidden: true }, this.#formula, this.#figure);

  /** The popover's element, to be placed in the explorer's box (position: relative). */
  get element() {
    return this.#node;
  }

  get hidden() {
    return this.#node.hidden;
  }

  hide() {
    this.#node.hidden = true;
  }

  /**
   * Shows `text` (the formula) and `figure` (the operands, a node or null)
   * for `cell` (a table cell inside `box`, the explorer's box). With
   * `quiet`, a hidden popover only takes the new text: a repaint keeps an
   * open popover's value current without opening a closed one.
   */
  show(text, cell, box, { quiet = false, figure = null } = {}) {
    const node = this.#node;
    if (this.#formula.textContent !== text) this.#formula.textContent = text;
    if (figure) this.#figure.replaceChildren(figure);
    else this.#figure.replaceChildren();
    if (quiet && node.hidden) return;
    node.hidden = false;
    node.style.setProperty('--attn-ground', groundColor(box));
    if (!cell) return;
    const root = box.getBoundingClientRect();
    const width = Math.min(MAX_WIDTH, root.width - 2 * GAP);
    node.style.width = `${width}px`;
    const r = cell.getBoundingClientRect();
    const table = (cell.closest('figure') ?? cell.closest('table') ?? cell).getBoundingClientRect();
    // The height follows from the width: set it, then measure.
    const { left, top } = placePopover(r, table, root, width, node.offsetHeight, window.innerHeight);
    node.style.left = `${left}px`;
    node.style.top = `${top}px`;
  }

  /** A short notice where the popover shows ("Copied weights-0 as CSV"). */
  flash(text) {
    this.#formula.textContent = text;
    this.#figure.replaceChildren();
    this.#node.hidden = false;
  }
}
