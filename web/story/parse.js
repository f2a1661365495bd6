// parse.js - the text of a story's data attributes. Pure: no DOM.
//   data-attention-set="scale=2 causal tokens='the cat sat'"
//   data-attention-highlight="weights cat sat"  (part, row, col; * for all)

/**
 * The settings of a data-attention-set text: attribute name -> text, or
 * null to remove it. "name" alone turns a boolean on, "name=false" turns
 * it off (removes the attribute); values with spaces go in quotes.
 * @returns {Map<string, string | null>}
 */
export function parseSet(text) {
  const out = new Map();
  const words = [...String(text).matchAll(/([\w-]+)(?:=(?:"([^"]*)"|'([^']*)'|(\S*)))?/g)];
  const rest = String(text).replace(/([\w-]+)(?:=(?:"[^"]*"|'[^']*'|\S*))?/g, '').trim();
  if (rest) throw new SyntaxError(`data-attention-set: cannot read "${rest}" in "${text}" (write name=value, name alone for on)`);
  for (const [, name, dq, sq, bare] of words) {
    const value = dq ?? sq ?? bare;
    if (value === undefined) out.set(name, '');
    else if (value === 'false') out.set(name, null);
    else out.set(name, value);
  }
  return out;
}

/**
 * The highlight of a data-attention-highlight text: "<part> [row] [col]"
 * with rows and columns as tokens or indexes, "*" for all, and an optional
 * "head=<index>". An empty text is null (nothing lit).
 * @returns {{ part: string, head?: number, row?: string|number, col?: string|number } | null}
 */
export function parseHighlight(text) {
  const words = String(text).trim().split(/\s+/).filter(Boolean);
  if (words.length === 0) return null;
  const spec = {};
  const plain = [];
  for (const w of words) {
    const m = /^head=(\d+)$/.exec(w);
    if (m) spec.head = Number(m[1]);
    else plain.push(w);
  }
  const [part, row, col] = plain;
  if (plain.length > 3) throw new SyntaxError(`data-attention-highlight: expected "<part> [row] [col]", got "${text}"`);
  spec.part = part;
  // A token, or an index when the sentence has no such token (highlight.js decides).
  if (row !== undefined && row !== '*') spec.row = row;
  if (col !== undefined && col !== '*') spec.col = col;
  return spec;
}
