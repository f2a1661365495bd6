// train-styles.js - the stylesheet of the Train part (train-view.js), added
// to the explorer's shadow root when the part first shows. The explorer's
// own table rules (fixed layout, columns sized for its heatmaps) are undone
// here: the part's small grids size their columns by what they hold.

export const TRAIN_STYLES = `
.train { border-top: 1px solid var(--attn-border, #ccc); margin-top: 1rem; padding-top: 0.5rem; }
.train h3 { font-size: 1rem; margin: 0 0 0.5rem; }
.train-controls { display: flex; flex-wrap: wrap; gap: 0.5rem 1rem; align-items: center; }
.train-controls label { display: inline-flex; gap: 0.3rem; align-items: center; }
/* Step, Play and Reset wrap as one group: none is left alone on a row. */
.train-buttons { display: inline-flex; gap: 0.5rem; }
.train-status { margin: 0.5rem 0; font-variant-numeric: tabular-nums; }
.train-status .matched { color: var(--attn-accent, #1a7f37); font-weight: 600; }
/* The loss plot takes the room its row leaves (loss-plot.js draws it at its box's width). */
.train-grids { display: flex; flex-wrap: wrap; gap: 0.75rem 1.5rem; align-items: flex-start; }
.train-grids figure { margin: 0; }
/* A grid's caption wraps to the grid's width rather than widening its figure. */
.train-grids figure:not(.train-loss) { width: min-content; }
.train-grids figcaption { display: block; font-size: 0.85rem; margin-bottom: 0.25rem; }
.train-grids > figure.train-loss { flex: 1 1 260px; min-width: min(100%, 220px); max-width: 560px; }
.train-plot { display: block; max-width: 100%; height: auto; } /* a box narrower than the picture's least width scales it */
.train-plot .curve { fill: none; stroke: var(--attn-select, #c2410c); stroke-width: 1.5; }
.train-plot .axis { stroke: var(--attn-muted, #666); stroke-width: 1; }
.train-plot text { fill: var(--attn-muted, #666); font-size: 11px; font-family: var(--attn-mono, monospace); }
.train-plot .label { font-family: inherit; }
/* The gradients stay side by side while they fit, and wrap together. */
.train-gradients { display: flex; flex-wrap: wrap; gap: 0.75rem; align-items: flex-start; }
.train table { border-collapse: collapse; border-spacing: 0; table-layout: auto; width: auto; font-size: 0.75rem; font-variant-numeric: tabular-nums; }
.train th { width: auto; max-width: none; font-weight: normal; padding: 0 0.3rem; text-align: right; }
.train td { width: 2.6rem; min-width: 2.6rem; height: 1.4rem; text-align: center; padding: 0 3px; }
.train td.goal { cursor: pointer; }
/* Dragging across the target paints it: it must not select the labels' text. */
.train-target { user-select: none; -webkit-user-select: none; touch-action: none; }
.train td.goal.on { box-shadow: inset 0 0 0 2px var(--attn-select, #111); }
/* In a figure the article names the part; the grids sit closer. */
.root[data-appearance="figure"] .train { border-top: none; margin-top: 0.5rem; padding-top: 0; }
.root[data-appearance="figure"] .train h3 { display: none; }
/* A figure's own table size (styles.js) is for the explorer's heatmaps, not these grids. */
.root[data-appearance="figure"] .train table { font-size: 0.75rem; }
.root[data-appearance="figure"] .train td { width: 2.3rem; min-width: 2.3rem; height: 1.15rem; padding: 0 3px; }
.train-derivation { font-size: 0.8rem; min-height: 1.2em; overflow-wrap: anywhere; margin-bottom: 0; }
.train-derivation-figure { max-width: 420px; font-family: var(--attn-mono, monospace); font-size: 0.8rem; }
.train-notice { margin: 0 0 0.5rem; padding: 4px 8px; border-left: 3px solid var(--attn-warn, #bf8700); }
.train [hidden] { display: none; }
`;
