// derivation.js - a number's computation with its operands, for the
// popover: the reader sees why a number is what it is without finding its
// sources elsewhere on the page (BertViz's neuron view and llm-viz put the
// operands beside the result). Pure (tested in Node): the popover draws a
// derivation with web/explorer/derivation-view.js.
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
