// export.js - what "Save PNG", "Save SVG" and toSVG() write: the
// parts on screen (lines view, step tables) with hatched disallowed pairs,
// −∞ logits, and a title that states causal, mask, window and scale; and
// where a copied table's text goes.

import { HEAD_COLORS } from './colors.js';
import { el } from './dom.js';
import { lineStyle, linesLayout } from './lines.js';
import { STEP_TITLES, snapshotTitle } from '../worked/text.js';
import { DIGITS } from '../worked/format.js';
import { layout, paint, toSVG } from './snapshot.js';

/**
 * The laid-out picture of the current view.
 * @param {{ config, example, parts: Set<string>, step: string, blocked: (i: number, j: number) => string, maskedPairs: number, scaleIsDefault: boolean, enabledHeads: boolean[],
 *   model?: { name: string, head: string, masked: string | null } | null }} s model: the head shown, when a model's
 */
export function snapshotView(s) {
  const c = s.config, ex = s.example, t = c.tokens;
  const dims = (prefix, count) => Array.from({ length: count }, (_, j) => `${prefix}${j}`);
  const wanted = (part) => s.parts.has(part) && (s.step === 'all' || s.step === part || (part === 'lines' && s.step === 'weights'));
  const tables = [];
  if (wanted('inputs')) {
    for (const id of ['X', 'WQ', 'WK', 'WV']) tables.push({ title: id, matrix: ex[id], rows: id === 'X' ? t : dims('x', c.dModel), cols: dims('', ex[id].cols), digits: 4, kind: 'div' });
  }
  if (wanted('projections')) {
    for (const id of ['Q', 'K', 'V']) tables.push({ title: id, matrix: ex[id], rows: t, cols: dims('', ex[id].cols), digits: 4, kind: 'div' });
  }
  for (const key of ['scores', 'scaled', 'weights', 'output']) {
    if (!wanted(key)) continue;
    ex.heads.forEach((head, h) => tables.push({
      title: `${key === 'scaled' && head.logits ? 'Step 2: logits' : STEP_TITLES[key]}${c.heads > 1 ? ` — head ${h + 1}` : ''}`,
      matrix: key === 'scaled' && head.logits ? head.logits : head[key],
      rows: t,
      cols: key === 'output' ? dims('v', c.dv) : t,
      digits: DIGITS[key],
      kind: key === 'weights' ? 'seq' : 'div',
      blocked: key === 'scaled' || key === 'weights' ? s.blocked : undefined,
      minusInfinity: key === 'scaled',
    }));
  }
  let lines;
  if (wanted('lines')) {
    const on = ex.heads.map((_, h) => s.enabledHeads[h] !== false);
    lines = {
      layout: linesLayout(t),
      weights: ex.heads.filter((_, h) => on[h]).map((head) => head.weights),
      colors: ex.heads.map((_, h) => HEAD_COLORS.light[h % HEAD_COLORS.light.length]).filter((_, h) => on[h]),
      style: lineStyle,
    };
  }
  return layout({ title: snapshotTitle(c, { maskedPairs: s.maskedPairs, scaleIsDefault: s.scaleIsDefault, model: s.model }), lines, tables });
}

export { toSVG };

/**
 * Saves a laid-out view as attention.svg or attention.png through a download
 * link inside `root`; resolves to the Blob.
 */
export async function save(format, view, root) {
  let blob;
  if (format === 'svg') {
    blob = new Blob([toSVG(view)], { type: 'image/svg+xml' });
  } else {
    const canvas = document.createElement('canvas');
    canvas.width = view.width;
    canvas.height = view.height;
    paint(canvas.getContext('2d'), view);
    blob = await new Promise((resolve) => canvas.toBlob(resolve, 'image/png'));
  }
  const url = URL.createObjectURL(blob);
  const a = el('a', { href: url, download: `attention.${format}` });
  root.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
  return blob;
}

/**
 * Puts a copied table's text on the clipboard and says so (`flash`); where
 * the clipboard is refused or missing, into a text box in `area` to copy
 * from, with a Close button. `what` names it ("WQ as CSV").
 */
export function copyOut(text, what, area, flash) {
  const fallback = () => {
    const box = el('textarea', { readonly: true, rows: 6, 'aria-label': what });
    box.value = text;
    area.replaceChildren(el('p', { text: `Copy ${what} from here:` }), box,
      el('button', { type: 'button', text: 'Close', onclick: () => { area.hidden = true; } }));
    area.hidden = false;
    box.select();
  };
  if (navigator.clipboard?.writeText) navigator.clipboard.writeText(text).then(() => flash(`Copied ${what}`), fallback);
  else fallback();
}
