// popover.js - the inspection popover of <attention-explorer>: the text of
// a number's derivation (text.js writes it), placed beside its cell, or under
// it when the right has no room, and never ending below the window. The
// element decides what is inspected and lights the source cells; this file
// only shows the text and places it.

import { el } from './dom.js';

const MAX_WIDTH = 420; // px: about 60 characters, a derivation on two or three lines
const GAP = 8; // px between the cell and the popover, and kept to the explorer's edges
const GAP_UNDER = 6; // px between a cell and a popover under or above it

/**
 * Where a popover of `width` x `height` goes for a cell: `cell` and `root`
 * are client rectangles (the explorer's box holds the popover),
 * `windowHeight` the viewport's. Returns { left, top } relative to `root`.
 * Beside the cell when there is room on its right, else under it; a popover
 * that would end below the window moves above the cell (under it) or up
 * (beside it, its bottom level with the cell's or lower).
 */
export function placePopover(cell, root, width, height, windowHeight) {
  let left = cell.right - root.left + GAP;
  let top = cell.top - root.top;
  const under = left + width > root.width;
  if (under) {
    left = Math.max(GAP, Math.min(cell.left - root.left, root.width - width - GAP));
    top = cell.bottom - root.top + GAP_UNDER;
  }
  const bottom = windowHeight - GAP - root.top;
  if (top + height > bottom) {
    top = under ? cell.top - root.top - GAP_UNDER - height : Math.max(cell.bottom - root.top - height, bottom - height);
  }
  return { left, top };
}

export class Popover {
  #node = el('div', { class: 'popover', part: 'popover', role: 'status', hidden: true });

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
   * Shows `text` for `cell` (a table cell inside `box`, the explorer's box).
   * With `quiet`, a hidden popover only takes the new text: a repaint keeps
   * an open popover's value current without opening a closed one.
   */
  show(text, cell, box, { quiet = false } = {}) {
    const node = this.#node;
    if (node.textContent !== text) node.textContent = text;
    if (quiet && node.hidden) return;
    node.hidden = false;
    if (!cell) return;
    const root = box.getBoundingClientRect();
    const width = Math.min(MAX_WIDTH, root.width - 2 * GAP);
    node.style.width = `${width}px`;
    // The height follows from the width: set it, then measure.
    const r = cell.getBoundingClientRect();
    const first = placePopover(r, root, width, 0, Infinity);
    node.style.left = `${first.left}px`;
    node.style.top = `${first.top}px`;
    const { top } = placePopover(r, root, width, node.offsetHeight, window.innerHeight);
    if (top !== first.top) node.style.top = `${top}px`;
  }

  /** A short notice where the popover shows ("Copied weights-0 as CSV"). */
  flash(text) {
    this.#node.textContent = text;
    this.#node.hidden = false;
  }
}
