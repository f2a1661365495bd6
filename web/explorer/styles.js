// styles.js - the shadow-root stylesheet of <attention-explorer>.
// Themable from the page through CSS custom properties (see README), light
// and dark by prefers-color-scheme; motion only when the reader allows it.

import { HEAD_COLORS, heatmapRules } from './colors.js';
import { LIMITS } from '../worked/computation.js';
import { DERIVATION_STYLES } from './derivation-view.js';
import { HEATMAP_STYLES } from './heatmap.js';
import { TOKENS_STYLES } from './tokens-view.js';

// The palettes, but for ink and panel (a figure takes the page's ink and has
// no panel): the app's by prefers-color-scheme, a figure's by its page's
// ground (ground.js; the host's data-attn-ground).
const PALETTE = {
  light: `--attn-bg: #ffffff;
  --attn-heat: light; /* the palette a canvas heatmap draws in (heatmap.js), as the tables' classes do */
  --attn-muted: #57606a;
  --attn-border: #d0d7de;
  --attn-accent: #0550ae;
  --attn-select: #bf3989;
  --attn-focus: #1b1f24;
  --attn-source: #bf3989;
  /* Thin stripes on a pale ground: the 0.0000 on a masked cell stays readable. */
  --attn-masked: repeating-linear-gradient(45deg, #b6bec7 0 2px, #eef1f4 2px 7px);
  ${HEAD_COLORS.light.map((c, h) => `--attn-head-${h}: ${c};`).join('\n  ')}`,
  dark: `--attn-bg: #0d1117;
  --attn-heat: dark;
  --attn-muted: #9aa5b1;
  --attn-border: #30363d;
  --attn-accent: #79c0ff;
  --attn-select: #ff9bce;
  --attn-focus: #ffffff;
  --attn-source: #ff9bce;
  --attn-masked: repeating-linear-gradient(45deg, #484f58 0 2px, #161b22 2px 7px);
  ${HEAD_COLORS.dark.map((c, h) => `--attn-head-${h}: ${c};`).join('\n  ')}`,
};

// A figure in an article (appearance="figure", or a compact embed): the
// page's font, size and colours, no panel or box of its own, flush with the
// text column; the lines view narrows its span before it leaves the weights' side.
const FIGURE = ':host([appearance="figure"]), :host([controls="minimal"]:not([appearance="app"])), :host([controls="none"]:not([appearance="app"]))';
const FIGURE_STYLES = `
${FIGURE} {
  --attn-fg: currentColor;
  --attn-panel: transparent;
  --attn-font: inherit;
  color: inherit;
  background: transparent;
  font-size: inherit;
  line-height: inherit;
}
.root[data-appearance="figure"] { padding: 0; }
/* A figure has no ground of its own, but its popover floats over the article's
   text: it takes the article's ground (popover.js finds it) and its colours. */
.root[data-appearance="figure"] .popover { background: var(--attn-ground, Canvas); }
.root[data-appearance="figure"] .toolbar { position: static; margin: 0 0 6px; padding: 0; border: none; background: none; }
.root[data-appearance="figure"] .attention-row { gap: 12px 16px; }
.root[data-appearance="figure"] .attention-row > .matrices { flex: 0 1 auto; min-width: 0; }
.root[data-appearance="figure"] td.sum { padding: 2px 2px; }
/* Numbers follow the article's type but stay table-sized, and columns are as
   wide as what they hold (tables.js counts the characters): a 20 px serif
   body still gets a 4-token table, its sums included, into a 390 px column. */
.root[data-appearance="figure"] table { font-size: clamp(11px, 0.8em, 13px);
  --cell: var(--attn-cell-width, calc(var(--cell-chars, 7) * 0.62em + 6px));
  --label: var(--attn-label-width, calc(var(--label-chars, 6) * 0.62em + 14px)); }
.root[data-appearance="figure"] td { padding: 2px 3px; }
.root[data-appearance="figure"] .caption { margin-top: 6px; color: var(--attn-muted); font-size: 0.92em; }
.root[data-appearance="app"] .caption { display: none; }
/* The full page uses a wide screen: sections sit side by side where they fit.
   Only with small tables (.view.flow): laying out a wrapping row re-measures
   every section, which at 32 tokens costs more than the tables' numbers. */
.root[data-appearance="app"] .view.flow { display: flex; flex-wrap: wrap; gap: 0 40px; align-items: flex-start; }
.root[data-appearance="app"] .view.flow > section.step { flex: 1 1 26em; min-width: 0; max-width: 100%; }
.root[data-appearance="app"] .view.flow > section.step.lead, .root[data-appearance="app"] .view.flow > section.step-inputs { flex-basis: 100%; }
`;

export const STYLES = `

:host {
  --attn-fg: #1b1f24;
  --attn-panel: #f6f8fa;
  ${PALETTE.light}
  --attn-font: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  --attn-mono: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
  --attn-toolbar-top: 0px;
  display: block;
  color: var(--attn-fg);
  background: var(--attn-bg);
  font-family: var(--attn-font);
  font-size: 15px;
  line-height: 1.45;
  min-width: 0;
}
@media (prefers-color-scheme: dark) {
  :host {
    --attn-fg: #e6edf3;
    --attn-panel: #161b22;
    ${PALETTE.dark}
  }
}
:host([hidden]) { display: none; }
* { box-sizing: border-box; }
.root { position: relative; padding: 0 12px 12px; }
.sr-only { position: absolute; width: 1px; height: 1px; margin: -1px; padding: 0; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; border: 0; }
.toolbar { position: sticky; top: var(--attn-toolbar-top); z-index: 4; display: flex; flex-wrap: wrap; gap: 6px 16px; align-items: center;
  margin: 0 -12px; padding: 8px 12px; background: var(--attn-panel); border-bottom: 1px solid var(--attn-border); }
.root[data-controls="none"] .toolbar, .root[data-controls="none"] .full-only, .root[data-controls="minimal"] .full-only { display: none; }
.settings { margin: 8px 0 0; padding: 6px 10px; background: var(--attn-panel); border: 1px solid var(--attn-border); border-radius: 8px; }
.settings > summary { border: none; background: none; padding: 2px 0; color: var(--attn-accent); }
.settings .row { margin-top: 8px; }
.row { display: flex; flex-wrap: wrap; gap: 8px 14px; align-items: center; }
.field { display: inline-flex; gap: 6px; align-items: center; min-width: 0; }
.field span { color: var(--attn-muted); font-size: 0.9em; }
.field.check span { color: var(--attn-fg); }
.field.tokens { flex: 1 1 16em; }
.field.tokens input { flex: 1; min-width: 0; width: 100%; }
.spacer { flex: 1; }
input, button, summary, select { font: inherit; color: var(--attn-fg); }
input[type="text"] { font-family: var(--attn-mono); }
input[type="number"] { width: 6em; }
input.tiny { width: 4.5em; }
input.short { width: 7em; }
input[type="text"], input[type="number"], select { background: var(--attn-bg); border: 1px solid var(--attn-border); border-radius: 4px; padding: 3px 6px; }
input[type="range"] { width: 12em; max-width: 40vw; accent-color: var(--attn-accent); }
.field.scale { flex-wrap: wrap; }
.scale-readout { display: inline-flex; gap: 6px; align-items: center; }
/* The readout has one width whatever it says ("0.577 = 1/√3" or "0.111 = 1/5.19 × 1/√3"):
   a width that followed the text would move the slider's track under the pointer mid-drag. */
.scale-text { font-family: var(--attn-mono); font-size: 0.85em; width: 23ch; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
button, summary { background: var(--attn-bg); border: 1px solid var(--attn-border); border-radius: 6px; padding: 3px 10px; cursor: pointer; }
button:disabled { opacity: 0.55; cursor: default; }
/* At the default scale there is nothing to reset: the button keeps its place (no shift mid-drag) but is not drawn. */
.scale-reset:disabled { visibility: hidden; }
button[aria-pressed="true"] { border-color: var(--attn-accent); background: var(--attn-accent); color: var(--attn-bg); }
:focus-visible { outline: 3px solid var(--attn-accent); outline-offset: 1px; }
/* The settings' summary and, beside it, random or trained weights: two halves of one control, the one in use filled. */
.settings-row { display: flex; flex-wrap: wrap; gap: 0 14px; align-items: flex-start; }
.settings-row > .settings { flex: 1 1 20em; min-width: 0; }
.weights-switch { margin-top: 8px; gap: 0; }
.weights-switch[hidden], .root[data-model="external"] .weights-switch { display: none; }
.weights-switch > span { margin-right: 6px; }
.weights-switch button { border-radius: 0; min-height: 2.25em; }
.weights-switch button:first-of-type { border-radius: 6px 0 0 6px; }
.weights-switch button:last-of-type { border-radius: 0 6px 6px 0; border-left: none; }
.step-nav { display: inline-flex; gap: 6px; }
.step-nav[hidden], .root .step-nav[hidden] { display: none; }
.message { margin: 10px 0 0; padding: 8px 12px; border-left: 4px solid #cf222e; background: var(--attn-panel); white-space: pre-wrap; overflow-wrap: anywhere; }
.message[data-kind="info"] { border-left-color: var(--attn-accent); }
.message[hidden], .copy-fallback[hidden], .popover[hidden] { display: none; }
.copy-fallback { margin-top: 10px; }
.copy-fallback textarea { width: 100%; font-family: var(--attn-mono); }
.popover { position: absolute; z-index: 5; max-width: calc(100% - 16px); padding: 8px 12px; background: var(--attn-panel); color: var(--attn-fg);
  border: 1px solid var(--attn-source); border-radius: 8px; box-shadow: 0 4px 14px rgb(0 0 0 / 0.2);
  font-family: var(--attn-mono); font-size: 0.85em; overflow-wrap: anywhere; pointer-events: none; }
.popover .formula { margin: 0; }
${DERIVATION_STYLES}
${HEATMAP_STYLES}
${TOKENS_STYLES}
h2 { font-size: 1.1em; margin: 18px 0 4px; }
.explanation { margin: 0 0 8px; max-width: 60em; color: var(--attn-fg); }
.attention-row { display: flex; flex-wrap: wrap; gap: 14px 28px; align-items: flex-start; }
.attention-row > .matrices { flex: 0 1 auto; }
${Array.from({ length: LIMITS.heads }, (_, h) => `.view[data-head="${h}"] .matrices.heads > figure.matrix:not([data-head="${h}"])`).join(',\n')} { display: none; }
.field.head-pick[hidden] { display: none; }
.matrices { display: flex; flex-wrap: wrap; gap: 14px 22px; align-items: flex-start; min-width: 0; }
/* As wide as its table (or its box), so the Copy button sits by the table it copies. */
figure.matrix { margin: 0; min-width: 0; max-width: 100%; width: fit-content; }
figure.lines { margin: 0; max-width: 100%; }
/* Beside a table the lines view narrows its span down to --lines-min (lines.js
   fits the picture to the box), then wraps under it: its labels never shrink
   there. Only a column narrower than --lines-min scales the picture down. */
.attention-row > figure.lines { flex: 1 1 var(--lines-min); min-width: min(100%, var(--lines-min)); max-width: min(100%, var(--lines-max)); }
figure.lines svg { display: block; max-width: 100%; height: auto; overflow: visible; }
figure.lines path { stroke-linecap: round; }
${HEAD_COLORS.light.map((_, h) => `.head-${h} path { stroke: var(--attn-head-${h}); } .head-toggle.head-${h} { border-left: 8px solid var(--attn-head-${h}); }`).join('\n')}
figure.lines text { font-family: var(--attn-mono); font-size: 13px; fill: var(--attn-fg); }
figure.lines text.query { cursor: pointer; }
figure.lines text.query.on { font-weight: 700; fill: var(--attn-select); }
figure.lines text:focus { outline: none; }
figure.lines text:focus-visible { fill: var(--attn-select); text-decoration: underline; font-weight: 700; }
.head-toggles { display: flex; flex-wrap: wrap; gap: 4px; margin: 0 0 6px; }
.head-toggle[aria-pressed="true"] { background: var(--attn-bg); color: var(--attn-fg); font-weight: 600; }
.head-toggle[aria-pressed="false"] { color: var(--attn-muted); text-decoration: line-through; }
figcaption { display: flex; align-items: baseline; gap: 6px; margin-bottom: 4px; }
figcaption .name { font-weight: 600; }
figcaption .shape { color: var(--attn-muted); font-size: 0.85em; }
/* Beside a table the lines view can be narrow: its name and "query → key"
   each stay whole, the second under the first when they do not fit side by side. */
figure.lines figcaption { flex-wrap: wrap; row-gap: 0; }
figure.lines figcaption > span { white-space: nowrap; }
details.copy { margin-left: auto; position: relative; font-size: 0.85em; }
details.copy summary { list-style: none; padding: 1px 8px; }
details.copy summary::-webkit-details-marker { display: none; }
details.copy[open] { z-index: 3; }
details.copy > button { display: block; width: 100%; margin-top: 2px; }
.scroll { overflow-x: auto; max-width: 100%; }
figure.overflowing:not(.scrolled-end) > .scroll { mask-image: linear-gradient(to right, #000 calc(100% - 32px), rgb(0 0 0 / 0.25)); }
figure.overflowing figcaption .shape::after { content: " · scroll →"; color: var(--attn-accent); }
/* --attn-cell-width and --attn-label-width are the author's; --cell and --label what a table uses. */
table { --cell: var(--attn-cell-width, 4.6em); --label: var(--attn-label-width, 6.5em);
  border-collapse: separate; border-spacing: 2px; font-family: var(--attn-mono); font-size: 0.85em;
  table-layout: fixed; width: calc(var(--label) + var(--cols) * (var(--cell) + 2px) + 4px); }
th.corner, tbody th { width: var(--label); }
th { font-weight: 500; color: var(--attn-muted); padding: 0 4px; white-space: nowrap; }
thead th { text-align: center; max-width: var(--cell); overflow: hidden; text-overflow: ellipsis; }
/* The corner sets the label column's width (a fixed layout reads the first row): a cell's cap would cut the labels under it. */
thead th.corner { max-width: none; }
tbody th { text-align: right; overflow: hidden; text-overflow: ellipsis; }
th .token { border: none; background: none; padding: 0 2px; color: var(--attn-fg); font-family: var(--attn-mono); max-width: 100%; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
th .token[aria-pressed="true"] { color: var(--attn-select); background: none; font-weight: 700; text-decoration: underline; }
/* Plain cells (no rounded clip, no own stacking): with 32 tokens a drag repaints a thousand of them a frame. */
td { width: var(--cell); padding: 2px 6px; text-align: right; cursor: default; white-space: nowrap; }
td[data-i] { cursor: pointer; }
td[data-i], th .token, figure.lines text.query, .model-grid button.thumb, .mask-words button { scroll-margin-top: calc(var(--attn-toolbar-top) + var(--attn-toolbar-height, 0px) + 8px); }
.view.masking table[data-id^="weights-"] td[data-i] { cursor: crosshair; }
td.sum { background: none; color: var(--attn-muted); font-weight: 600; cursor: default; }
td.masked { background: var(--attn-masked) !important; color: var(--attn-fg) !important; }
td.edited { box-shadow: inset 0 0 0 2px var(--attn-accent); }
td.src { box-shadow: inset 0 0 0 2px var(--attn-source), inset 0 0 0 3px var(--attn-bg); }
td.target { box-shadow: inset 0 0 0 3px var(--attn-source); }
/* A two-colour ring inside the cell: the focus colour (the text colour) on
   the outside, the background colour inside it, visible on every cell colour. */
td:focus-visible, th .token:focus-visible { outline: 3px solid var(--attn-focus); outline-offset: -3px; box-shadow: inset 0 0 0 5px var(--attn-bg); }
tr.selected td[data-i] { box-shadow: inset 0 -3px 0 var(--attn-select); }
/* "Play softmax": the row being played is marked. */
.softmax-play { display: flex; flex-wrap: wrap; gap: 6px 12px; align-items: baseline; margin-top: 8px; }
.root[data-appearance="figure"] .softmax-play { margin-top: 4px; font-size: 0.85em; }
.softmax-status { font-family: var(--attn-mono); font-size: 0.85em; }
tr.playing th { color: var(--attn-select); font-weight: 700; }
tr.playing td[data-i] { box-shadow: inset 0 2px 0 var(--attn-select), inset 0 -2px 0 var(--attn-select); }
@media (prefers-reduced-motion: no-preference) {
  tr.playing td[data-i] { transition: background-color 0.4s; }
}
/* What a story lights (el.highlight): its cells ringed, the rest of the table quieter. */
table.storied td[data-i]:not(.story) { opacity: 0.35; }
td.story { box-shadow: inset 0 0 0 3px var(--attn-select); }
td:hover { filter: brightness(0.93); }
.cell-edit { width: 6em; font-family: var(--attn-mono); }
@media (prefers-reduced-motion: no-preference) {
  section.enter h2, section.enter .explanation { animation: attn-fade 0.6s both; }
  section.enter tbody tr { animation: attn-fade 0.5s both; }
  @keyframes attn-fade { from { opacity: 0; transform: translateY(4px); } to { opacity: 1; transform: none; } }
}
@media (max-width: 520px) {
  /* A cell holds seven monospace characters ("-0.4659", 4.2em) and a little padding. */
  :host { font-size: 14px; }
  table { --cell: var(--attn-cell-width, 4.7em); --label: var(--attn-label-width, 4.4em); }
  td { padding: 2px 3px; }
  input[type="range"] { width: 9em; }
}
${FIGURE_STYLES}
${heatmapRules('light')}
@media (prefers-color-scheme: dark) {
${heatmapRules('dark')}
}
:host([data-attn-ground="light"]) { ${PALETTE.light} }
:host([data-attn-ground="dark"]) { ${PALETTE.dark} }
${heatmapRules('light', ':host([data-attn-ground="light"]) ')}
${heatmapRules('dark', ':host([data-attn-ground="dark"]) ')}
`;
