// derivation.js - a number's computation with its operands, for the
// popover: the reader sees why a number is what it is without finding its
// sources elsewhere on the page (BertViz's neuron view and llm-viz put the
// operands beside the result). derive() is pure (tested in Node); render()
// builds the DOM, text through textContent only.
//
// A derivation is { rows, steps, result }:
//   rows: the terms of a sum, each { label, a?, b?, value, on? } drawn as a
//         signed bar (value) with its operands a and b; `on` marks the term
//         the number is about (a weight's own exp);
//   steps: what happens after the sum, in order: [label, value text];
//   result: [label, value text], the number in the cell.

import { blockedReason, logitOf, ropeTurn } from './text.js';
import { fixed } from './format.js';
import { gradientTerms } from './train.js';

const MAX_ROWS = 16; // terms drawn as bars; a longer sum shows its largest terms

/**
 * The derivation of (i, j) of table `id`, or null for an input (it has none).
 * @param {{ config, example, mask: Uint8Array|null, scaleIsDefault: boolean }} ctx
 */
export function derive(ctx, id, i, j) {
  const { config: c, example: ex } = ctx;
  const t = c.tokens, n = t.length;
  if (id === 'QR' || id === 'KR') {
    // An entry after RoPE: its own entry times cos, its pair's times ∓sin.
    const r = ropeTurn(c, ex, id, i, j);
    const name = `${id === 'QR' ? 'q' : 'k'} after RoPE[${t[i]}][${r.col}]`;
    if (r.partner < 0) return { head: `d${r.col} is not turned (odd d_k)`, rows: [], steps: [[`${r.from}[${t[i]}][${j}]`, fixed(r.x, 4)]], result: [name, fixed(r.value, 4)] };
    const cos = Math.cos(r.angle), sin = r.first ? -Math.sin(r.angle) : Math.sin(r.angle);
    const rows = [
      { label: `d${r.col}`, a: r.x, b: cos, value: r.x * cos, on: true },
      { label: `d${r.partner}`, a: r.y, b: sin, value: r.y * sin },
    ];
    return { head: `turned at position ${r.position}: angle ${fixed(r.angle, 4)} rad`, ops: [r.from, r.first ? 'cos, −sin' : 'cos, sin'], rows, steps: [], result: [name, fixed(r.value, 4)] };
  }
  if (id === 'Q' || id === 'K' || id === 'V') {
    const W = ex[`W${id}`];
    const rows = Array.from({ length: c.dModel }, (_, p) => ({ label: `x${p}`, a: ex.X.get(i, p), b: W.get(p, j), value: ex.X.get(i, p) * W.get(p, j) }));
    return { head: `X[${t[i]}] × W_${id}[:, ${j}]`, ops: ['x', `w`], rows, steps: [], result: [`${id}[${t[i]}][${j}]`, fixed(ex[id].get(i, j), 4)] };
  }
  const [key, hText] = id.split('-');
  const h = Number(hText);
  const head = ex.heads[h];
  if (!head) return null;
  const blocked = blockedReason(c, ctx.mask, n, i, j);
  if (key === 'scores') {
    const rows = Array.from({ length: c.dk }, (_, p) => ({ label: `d${p}`, a: head.q.get(i, p), b: head.k.get(j, p), value: head.q.get(i, p) * head.k.get(j, p) }));
    const after = c.rope ? ' after RoPE' : '';
    return { head: `q_${t[i]}${after} · k_${t[j]}${after}`, ops: [`q_${t[i]}`, `k_${t[j]}`], rows, steps: [], result: ['score', fixed(head.scores.get(i, j), 3)] };
  }
  if (key === 'scaled') {
    const score = head.scores.get(i, j);
    const steps = [['score q·k', fixed(score, 3)]];
    steps.push([ctx.scaleIsDefault ? `× 1/√${c.dk}` : `× scale ${Number(c.scale.toPrecision(4))}`, fixed(score * c.scale, 3)]);
    if (c.softcap > 0) steps.push([`${c.softcap}·tanh(x / ${c.softcap})`, fixed(c.softcap * Math.tanh((score * c.scale) / c.softcap), 3)]);
    if (blocked) steps.push([`${blocked}: may not attend`, '−∞']);
    return { head: `logit(${t[i]} → ${t[j]})`, rows: [], steps, result: ['logit', blocked ? '−∞' : fixed(logitOf(ctx, h, i, j), 3)] };
  }
  if (key === 'weights') {
    const zs = Array.from({ length: n }, (_, k) => (blockedReason(c, ctx.mask, n, i, k) ? -Infinity : logitOf(ctx, h, i, k)));
    const zmax = Math.max(...zs);
    const exps = zs.map((z) => (z === -Infinity ? 0 : Math.exp(z - zmax)));
    const total = exps.reduce((a, e) => a + e, 0);
    const rows = exps.map((e, k) => ({ label: t[k], a: zs[k], value: e, on: k === j }));
    const steps = [
      [`max logit of the row`, fixed(zmax, 3)],
      [`exp(z − max), ${t[j]}`, fixed(exps[j], 4)],
      ['Σ exp over the row', fixed(total, 4)],
    ];
    if (blocked) steps.splice(1, 1, [`${blocked}: exp(−∞)`, '0']);
    return { head: `softmax over the row of ${t[i]}`, ops: ['z'], rows, steps, result: [`weight ${fixed(exps[j], 4)} / ${fixed(total, 4)}`, fixed(head.weights.get(i, j), 4)] };
  }
  if (key === 'output') {
    const rows = Array.from({ length: n }, (_, k) => ({ label: t[k], a: head.weights.get(i, k), b: head.v.get(k, j), value: head.weights.get(i, k) * head.v.get(k, j) }));
    return { head: `Σ_k w(${t[i]} → k) · v_k[${j}]`, ops: ['w', 'v'], rows, steps: [], result: [`output[${t[i]}][v${j}]`, fixed(head.output.get(i, j), 4)] };
  }
  return null;
}

/**
 * The terms of a gradient entry dW[a][c] = Σ_i x[i][a] dM[i][c] as a
 * derivation (the Train part's dW_Q and dW_K).
 */
export function deriveGradient(x, dm, a, c, { name = 'dW_Q', tokens = [] } = {}) {
  const { value, terms } = gradientTerms(x, dm, a, c, { name, tokens });
  const rows = terms.map((t) => ({ label: t.token, a: t.x, b: t.g, value: t.product }));
  const d = name.replace(/^dW_/, 'd');
  return { head: `Σ over tokens of X[token, ${a}] · ${d}[token, ${c}]`, ops: ['x', d], rows, steps: [], result: [`${name}[${a}, ${c}]`, fixed(value, 4)] };
}

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
