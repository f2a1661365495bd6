// highlight.js - the story API's pure half: what el.highlight({ part,
// head, row, col }) lights, checked and resolved against the tokens on
// screen into table ids and the rows and columns of each (steps-view.js
// marks the cells), and el.set({ ... }).

/** The parts a highlight may name: a step's table, an input or projection, or the lines view alone. */
export const HIGHLIGHT_PARTS = Object.freeze(['scores', 'scaled', 'weights', 'output', 'X', 'Q', 'K', 'V', 'lines']);

// Tables whose columns are the tokens (the others number theirs).
const TOKEN_COLUMNS = new Set(['scores', 'scaled', 'weights']);

/**
 * Resolves a highlight for `config` (tokens, heads): rows and columns by
 * index or token (a token names every place it occurs; an array names
 * several), absent for the whole row or column. Throws TypeError or
 * RangeError naming what is wrong. Returns null for null.
 * @param {{ part: string, head?: number, row?: number|string|(number|string)[], col?: number|string|(number|string)[] } | null} spec
 * @param {{ tokens: string[], heads: number }} config
 * @returns {{ ids: string[], rows: Set<number> | null, cols: Set<number> | null, query: number } | null}
 *   query: the row the lines view selects (-1: none)
 */
export function resolveHighlight(spec, config) {
  if (spec === null || spec === undefined) return null;
  if (typeof spec !== 'object') throw new TypeError('highlight expects { part, head?, row?, col? } or null');
  const { part, head = 0 } = spec;
  if (!HIGHLIGHT_PARTS.includes(part)) throw new RangeError(`highlight: part must be one of ${HIGHLIGHT_PARTS.join(', ')}; got ${JSON.stringify(part)}`);
  if (!Number.isInteger(head) || head < 0 || head >= config.heads) throw new RangeError(`highlight: head must be a head index from 0 to ${config.heads - 1}; got ${JSON.stringify(head)}`);
  const t = config.tokens;
  const indexes = (value, name, count, byToken) => {
    if (value === undefined || value === null || value === '*') return null;
    const out = new Set();
    for (const v of Array.isArray(value) ? value : [value]) {
      if (Number.isInteger(v) && v >= 0 && v < count) out.add(v);
      else if (typeof v === 'string' && byToken && t.includes(v)) t.forEach((w, k) => { if (w === v) out.add(k); });
      else if (typeof v === 'string' && /^\d+$/.test(v) && Number(v) < count) out.add(Number(v));
      else throw new RangeError(`highlight: ${name} ${JSON.stringify(v)} is neither ${byToken ? 'a token of the sentence nor ' : ''}an index from 0 to ${count - 1}`);
    }
    return out;
  };
  const rows = indexes(spec.row, 'row', t.length, true);
  const perHead = ['scores', 'scaled', 'weights', 'output'].includes(part);
  const cols = indexes(spec.col, 'col', perHead && part !== 'output' ? t.length : Infinity, TOKEN_COLUMNS.has(part));
  const ids = part === 'lines' ? [] : [perHead ? `${part}-${head}` : part];
  const query = (part === 'lines' || part === 'weights') && rows?.size === 1 ? [...rows][0] : -1;
  return { ids, rows, cols, query };
}

/**
 * Gives the element's prototype set(values): several properties at once
 * ({ scale: 2, causal: true, ... }). Properties set in one task make one
 * recompute anyway (the element updates once per microtask); set() also
 * checks the names and resolves once that update has run. Unknown keys
 * throw TypeError.
 * @param {object} proto AttentionExplorer.prototype
 * @param {string[]} keys the properties set() accepts
 */
export function installSet(proto, keys) {
  const known = new Set(keys);
  Object.defineProperty(proto, 'set', {
    configurable: true,
    writable: true,
    value(values) {
      if (values === null || typeof values !== 'object') throw new TypeError('set expects an object of properties, e.g. { scale: 2, causal: true }');
      for (const key of Object.keys(values)) if (!known.has(key)) throw new TypeError(`set: unknown property "${key}" (use ${[...known].join(', ')})`);
      for (const [key, value] of Object.entries(values)) this[key] = value;
      // The update was queued by the first property set: a microtask queued now runs after it.
      return new Promise((resolve) => queueMicrotask(resolve));
    },
  });
}
