// derivation-view.js - a derivation (web/worked/derivation.js) as DOM for
// the popover and the Train part: the terms of its sum as signed bars with
// their operands, the steps after the sum, the result. Text through
// textContent only.

import { fixed } from '../worked/format.js';

const MAX_ROWS = 16; // terms drawn as bars; a longer sum shows its largest terms

/** The derivation as DOM (a figure of signed bars, the steps, the result), made with `doc`. */
export function render(model, doc = globalThis.document) {
  const node = (tag, cls, text) => {
    const e = doc.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  };
  const box = node('div', 'derivation');
  box.append(node('div', 'd-head', model.head));
  let rows = model.rows;
  if (rows.length > MAX_ROWS) {
    // The largest terms carry the sum; the rest are counted.
    const keep = new Set(rows.map((r, k) => [Math.abs(r.value), k]).sort((x, y) => y[0] - x[0]).slice(0, MAX_ROWS).map(([, k]) => k));
    rows = rows.filter((_, k) => keep.has(k));
  }
  if (rows.length > 0) {
    const big = Math.max(...rows.map((r) => Math.abs(r.value)), 1e-12);
    const grid = node('div', 'd-rows');
    if (model.ops) {
      grid.append(node('span', 'd-label', ''), ...model.ops.map((o) => node('span', 'd-op d-col', o)));
      if (model.ops.length < 2) grid.append(node('span', 'd-op d-col', ''));
      grid.append(node('span', 'd-col', model.ops.length === 2 ? 'product' : 'exp(z − max)'), node('span', 'd-col', ''));
    }
    for (const r of rows) {
      const bar = node('span', `d-bar ${r.value < 0 ? 'neg' : 'pos'}${r.on ? ' on' : ''}`);
      bar.style.width = `${((50 * Math.abs(r.value)) / big).toFixed(1)}%`;
      const track = node('span', 'd-track');
      track.append(bar);
      grid.append(node('span', `d-label${r.on ? ' on' : ''}`, r.label),
        node('span', 'd-op', r.a === undefined ? '' : r.a === -Infinity ? '−∞' : fixed(r.a, 3)),
        node('span', 'd-op', r.b === undefined ? '' : fixed(r.b, 3)),
        track, node('span', 'd-value', fixed(r.value, 4)));
    }
    box.append(grid);
    if (model.rows.length > rows.length) box.append(node('div', 'd-more', `… and ${model.rows.length - rows.length} smaller terms`));
  }
  for (const [label, value] of model.steps) {
    const row = node('div', 'd-step');
    row.append(node('span', '', label), node('span', 'd-value', value));
    box.append(row);
  }
  const result = node('div', 'd-step d-result');
  result.append(node('span', '', `= ${model.result[0]}`), node('span', 'd-value', model.result[1]));
  box.append(result);
  return box;
}

/** Styles of a rendered derivation (the host adds them to its stylesheet). */
export const DERIVATION_STYLES = `
.derivation { margin-top: 8px; padding-top: 6px; border-top: 1px solid var(--attn-border); font-size: 0.95em; }
.d-head { color: var(--attn-muted); margin-bottom: 4px; }
.d-rows { display: grid; grid-template-columns: auto auto auto minmax(60px, 1fr) auto; gap: 1px 8px; align-items: center; }
.d-col { color: var(--attn-muted); font-size: 0.85em; }
.d-op, .d-value { text-align: right; font-variant-numeric: tabular-nums; }
.d-label { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; max-width: 7em; }
.d-label.on { font-weight: 700; color: var(--attn-source); }
/* A signed bar grows from the track's middle: right for a positive term, left for a negative one. */
.d-track { position: relative; height: 10px; }
.d-track::before { content: ""; position: absolute; left: 50%; top: -1px; bottom: -1px; border-left: 1px solid var(--attn-muted); }
.d-bar { position: absolute; top: 1px; bottom: 1px; }
.d-bar.pos { left: 50%; background: var(--attn-accent); }
.d-bar.neg { right: 50%; background: var(--attn-select); }
.d-bar.on { outline: 2px solid var(--attn-source); }
.d-more { color: var(--attn-muted); font-size: 0.85em; }
.d-step { display: flex; justify-content: space-between; gap: 12px; }
.d-result { font-weight: 700; border-top: 1px solid var(--attn-border); margin-top: 2px; }
`;
