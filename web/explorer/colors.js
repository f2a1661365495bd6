// colors.js - colour scales for the heatmaps. Pure functions, no DOM.
// Both palettes are colour-blind safe: the sequential one is viridis (ordered
// in lightness for every kind of colour vision), the diverging one runs
// blue - near white - orange (PuOr-like), which keeps its two sides apart
// under deuteranopia, protanopia and tritanopia.

const VIRIDIS = [
  [68, 1, 84], [72, 40, 120], [62, 74, 137], [49, 104, 142], [38, 130, 142],
  [31, 158, 137], [53, 183, 121], [109, 205, 89], [180, 222, 44], [253, 231, 37],
];
// Light end first so small weights stay quiet: reversed viridis from pale yellow-white.
const SEQUENTIAL = [[250, 250, 245], ...VIRIDIS.slice().reverse().slice(1)];
const DIVERGING_NEG = [[33, 102, 172], [103, 169, 207], [209, 229, 240]];
const DIVERGING_MID = [247, 247, 247];
const DIVERGING_POS = [[253, 219, 199], [244, 165, 130], [214, 96, 77], [178, 24, 43]];

function mix(stops, t) {
  const x = Math.min(1, Math.max(0, t)) * (stops.length - 1);
  const i = Math.min(stops.length - 2, Math.floor(x));
  const f = x - i;
  return stops[i].map((c, k) => Math.round(c + (stops[i + 1][k] - c) * f));
}

// Dark theme: the same emphasis as the light one, so large magnitudes stand
// out and values near zero sink into the background. Sequential is viridis
// from a near-background blue-black up to yellow; diverging runs from a
// near-background grey out to bright blue and bright orange-red.
const SEQUENTIAL_DARK = [[22, 27, 34], [52, 18, 72], ...VIRIDIS.slice(1)];
const DIVERGING_NEG_DARK = [[38, 70, 110], [60, 130, 200], [120, 190, 255]];
const DIVERGING_MID_DARK = [30, 34, 42];
const DIVERGING_POS_DARK = [[110, 50, 40], [200, 90, 60], [255, 140, 90], [255, 190, 140]];

/** Sequential colour for t in [0, 1] (NaN gives grey), as [r, g, b]; theme 'light' or 'dark'. */
export function sequential(t, theme = 'light') {
  if (Number.isNaN(t)) return [160, 160, 160];
  return mix(theme === 'dark' ? SEQUENTIAL_DARK : SEQUENTIAL, t);
}

/** Diverging colour for t in [-1, 1]: blue below 0, the background at 0, orange-red above. */
export function diverging(t, theme = 'light') {
  if (Number.isNaN(t)) return [160, 160, 160];
  const [mid, neg, pos] = theme === 'dark' ? [DIVERGING_MID_DARK, DIVERGING_NEG_DARK, DIVERGING_POS_DARK] : [DIVERGING_MID, DIVERGING_NEG, DIVERGING_POS];
  if (t < 0) return mix([mid, ...(theme === 'dark' ? neg : neg.slice().reverse())], -t);
  return mix([mid, ...pos], t);
}

/**
 * One colour per head for the lines view (Okabe-Ito, told apart under every
 * kind of colour vision), light and dark variants; head h uses h mod 8.
 */
export const HEAD_COLORS = Object.freeze({
  light: Object.freeze(['#0072b2', '#d55e00', '#009e73', '#cc79a7', '#8a6100', '#0a7fa8', '#6a3d9a', '#444444']),
  dark: Object.freeze(['#56b4e9', '#ff9e4a', '#3fd0a0', '#f0a0d0', '#f0e442', '#9ad8ff', '#c5a3ff', '#dddddd']),
});

/** WCAG relative luminance of an sRGB colour. */
export function luminance([r, g, b]) {
  const lin = (c) => {
    const s = c / 255;
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
}

/** Black or white text, whichever contrasts more with the background. */
export function textOn(rgb) {
  const l = luminance(rgb);
  return (l + 0.05) / 0.05 >= 1.05 / (l + 0.05) ? '#000' : '#fff';
}

export const css = ([r, g, b]) => `rgb(${r}, ${g}, ${b})`;

/** Largest finite |x| of an array (1 when there is none, so t stays finite). */
export function maxAbs(data) {
  let m = 0;
  // An index loop: a canvas heatmap asks this of a quarter of a million numbers.
  for (let k = 0; k < data.length; k++) {
    const a = Math.abs(data[k]);
    if (a > m && a !== Infinity) m = a;
  }
  return m || 1;
}

/** Levels of the quantized heatmaps in the explorer (per palette side). */
export const LEVELS = 48;

/** The level of t in [0, 1] (sequential) or [-1, 1] (diverging), or -1 for NaN. */
export function level(t, kind) {
  if (Number.isNaN(t)) return -1;
  const c = Math.min(1, Math.max(kind === 'seq' ? 0 : -1, t));
  return kind === 'seq' ? Math.round(c * LEVELS) : Math.round((c + 1) * LEVELS);
}

/**
 * Class names and CSS rules for every level: .hs0 .. .hs48, .hd0 .. .hd96,
 * .hnan, in one theme; `scope` (a selector and a space) narrows them.
 */
export function heatmapRules(theme = 'light', scope = '') {
  const rule = (name, rgb) => `${scope}.${name} { background-color: ${css(rgb)}; color: ${textOn(rgb)}; }`;
  const rules = [rule('hnan', sequential(NaN, theme))];
  for (let i = 0; i <= LEVELS; i++) rules.push(rule(`hs${i}`, sequential(i / LEVELS, theme)));
  for (let i = 0; i <= 2 * LEVELS; i++) rules.push(rule(`hd${i}`, diverging(i / LEVELS - 1, theme)));
  return rules.join('\n');
}

/** The class of a value's colour: kind 'seq' for t in [0, 1], 'div' for [-1, 1]. */
export function heatClass(t, kind) {
  const l = level(t, kind);
  return l < 0 ? 'hnan' : `${kind === 'seq' ? 'hs' : 'hd'}${l}`;
}
