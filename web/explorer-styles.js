// explorer-styles.js - the shadow-root stylesheet of <attention-explorer>.
// Themable from the page through CSS custom properties (see README), light
// and dark by prefers-color-scheme; motion only when the reader allows it.

import { heatmapRules } from './colors.js';

export const STYLES = `
:host {
  --attn-bg: #ffffff;
  --attn-fg: #1b1f24;
  --attn-muted: #57606a;
  --attn-panel: #f6f8fa;
  --attn-border: #d0d7de;
  --attn-accent: #0550ae;
  --attn-select: #bf3989;
  --attn-masked: repeating-linear-gradient(45deg, #8c959f 0 3px, #d0d7de 3px 6px);
  --attn-font: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  --attn-mono: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
  --attn-cell-width: 4.6em;
  --attn-label-width: 6.5em;
  display: block;
  color: var(--attn-fg);
  background: var(--attn-bg);
  font-family: var(--attn-font);
  font-size: 15px;
  line-height: 1.45;
  contain: content;
}
@media (prefers-color-scheme: dark) {
  :host {
    --attn-bg: #0d1117;
    --attn-fg: #e6edf3;
    --attn-muted: #9aa5b1;
    --attn-panel: #161b22;
    --attn-border: #30363d;
    --attn-accent: #79c0ff;
    --attn-select: #ff9bce;
  }
}
:host([hidden]) { display: none; }
* { box-sizing: border-box; }
.root { padding: 12px; }
.controls { display: grid; gap: 8px; padding: 10px 12px; background: var(--attn-panel); border: 1px solid var(--attn-border); border-radius: 8px; }
.row { display: flex; flex-wrap: wrap; gap: 8px 14px; align-items: center; }
.field { display: inline-flex; gap: 6px; align-items: center; }
.field span { color: var(--attn-muted); font-size: 0.9em; }
.field.check span { color: var(--attn-fg); }
.help { color: var(--attn-muted); font-size: 0.85em; }
.spacer { flex: 1; }
input, button, summary { font: inherit; color: var(--attn-fg); }
input[type="text"] { width: min(32em, 80vw); font-family: var(--attn-mono); }
input[type="number"] { width: 6.5em; }
input[type="text"], input[type="number"] { background: var(--attn-bg); border: 1px solid var(--attn-border); border-radius: 4px; padding: 3px 6px; }
input[type="range"] { width: 14em; accent-color: var(--attn-accent); }
.scale-text { font-family: var(--attn-mono); min-width: 9em; }
button, summary { background: var(--attn-bg); border: 1px solid var(--attn-border); border-radius: 6px; padding: 3px 10px; cursor: pointer; }
button:disabled { opacity: 0.55; cursor: default; }
button[aria-pressed="true"] { border-color: var(--attn-accent); }
:focus-visible { outline: 3px solid var(--attn-accent); outline-offset: 1px; }
.step-nav { display: inline-flex; gap: 6px; }
.step-nav[hidden] { display: none; }
.message { margin: 10px 0 0; padding: 8px 12px; border-left: 4px solid #cf222e; background: var(--attn-panel); white-space: pre-wrap; overflow-wrap: anywhere; }
.message[hidden], .copy-fallback[hidden] { display: none; }
.copy-fallback { margin-top: 10px; }
.copy-fallback textarea { width: 100%; font-family: var(--attn-mono); }
.explain { position: sticky; bottom: 0; z-index: 2; margin: 10px 0; min-height: 2.6em; padding: 8px 12px; background: var(--attn-panel); border: 1px solid var(--attn-border); border-radius: 8px; font-family: var(--attn-mono); font-size: 0.85em; overflow-wrap: anywhere; }
.explain:empty::before { content: "Hover or focus any number to see where it comes from."; color: var(--attn-muted); font-family: var(--attn-font); }
h2 { font-size: 1.1em; margin: 18px 0 4px; }
.explanation { margin: 0 0 8px; max-width: 60em; color: var(--attn-fg); }
.matrices { display: flex; flex-wrap: wrap; gap: 14px 22px; align-items: flex-start; }
.matrices.heads { flex-wrap: nowrap; overflow-x: auto; padding-bottom: 6px; }
figure.matrix { margin: 0; min-width: 0; }
figcaption { display: flex; align-items: baseline; gap: 6px; margin-bottom: 4px; }
figcaption .name { font-weight: 600; }
figcaption .shape { color: var(--attn-muted); font-size: 0.85em; }
details.copy { margin-left: auto; position: relative; font-size: 0.85em; }
details.copy summary { list-style: none; padding: 1px 8px; }
details.copy summary::-webkit-details-marker { display: none; }
details.copy[open] { z-index: 3; }
details.copy[open] > :not(summary) { display: block; }
details.copy > button { display: block; width: 100%; margin-top: 2px; }
.scroll { overflow-x: auto; max-width: 100%; }
table { border-collapse: separate; border-spacing: 2px; font-family: var(--attn-mono); font-size: 0.85em;
  table-layout: fixed; width: calc(var(--attn-label-width) + var(--cols) * (var(--attn-cell-width) + 2px) + 4px); }
th.corner, tbody th { width: var(--attn-label-width); }
section.step { content-visibility: auto; contain-intrinsic-size: auto 600px; }
th { font-weight: 500; color: var(--attn-muted); padding: 0 4px; white-space: nowrap; }
thead th { text-align: center; max-width: var(--attn-cell-width); overflow: hidden; text-overflow: ellipsis; }
tbody th { text-align: right; overflow: hidden; text-overflow: ellipsis; }
th .token { border: none; background: none; padding: 0 2px; color: var(--attn-fg); font-family: var(--attn-mono); max-width: 100%; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
th .token[aria-pressed="true"] { color: var(--attn-select); font-weight: 700; text-decoration: underline; }
td { width: var(--attn-cell-width); padding: 2px 6px; text-align: right; border-radius: 3px; cursor: default; overflow: hidden; }
td[data-i] { cursor: pointer; }
td.sum { background: none; color: var(--attn-muted); font-weight: 600; cursor: default; }
td.masked { background: var(--attn-masked) !important; color: #000 !important; }
td.edited { box-shadow: inset 0 0 0 2px var(--attn-accent); }

tr.selected td[data-i] { box-shadow: inset 0 0 0 2px var(--attn-select); }
td:hover { filter: brightness(0.93); }
.cell-edit { width: 6em; font-family: var(--attn-mono); }
.with-bars { display: flex; flex-wrap: wrap; gap: 12px; align-items: flex-start; }
.bars-box { min-width: 16em; }
.bars-title { margin: 0 0 4px; font-weight: 600; font-size: 0.9em; }
.bars { list-style: none; margin: 0; padding: 0; font-family: var(--attn-mono); font-size: 0.85em; }
.bars li { display: grid; grid-template-columns: 6em 10em 4.5em; gap: 6px; align-items: center; }
.bar-label { text-align: right; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.bar-track { height: 0.9em; background: var(--attn-panel); border: 1px solid var(--attn-border); border-radius: 2px; }
.bar { display: block; height: 100%; background: var(--attn-accent); }
@media (prefers-reduced-motion: no-preference) {
  .bar { transition: width 0.35s ease; }
  section.enter h2, section.enter .explanation { animation: attn-fade 0.6s both; }
  section.enter tbody tr { animation: attn-fade 0.5s both; animation-delay: calc(0.25s + var(--row, 0) * 0.18s); }
  @keyframes attn-fade { from { opacity: 0; transform: translateY(4px); } to { opacity: 1; transform: none; } }
}
${heatmapRules()}
`;
