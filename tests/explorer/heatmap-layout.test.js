// The canvas heatmaps' pure half (web/explorer/heatmap-layout.js): when a
// view switches from tables to canvas, where cells go, which cell a point
// is over, how the zoom window moves, the palettes against the tables'
// classes, and the thumbnails of long patterns; the text view's shading.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { LEVELS, diverging, heatClass, sequential } from '../../web/explorer/colors.js';
import {
  CELL_MAX, MIN_WINDOW, TABLE_MAX_TOKENS, cellBox, fillCells, followCell, fullWindow, hitTest, labelWidth, layoutHeatmap,
  paletteWords, panWindow, shortLabel, thumbnailAlpha, usesCanvas, zoomWindow,
} from '../../web/explorer/heatmap-layout.js';
import { shades } from '../../web/explorer/tokens-view.js';

const test = suite('heatmap layout');

test('tables up to 16 tokens, canvas past', () => {
  assert.is(TABLE_MAX_TOKENS, 16);
  assert.not.ok(usesCanvas(16));
  assert.ok(usesCanvas(17));
  assert.ok(usesCanvas(512));
});

test('cells are square, at most CELL_MAX, and fill the width given', () => {
  const small = layoutHeatmap({ rows: 20, cols: 20, width: 2000, labels: 40 });
  assert.is(small.cell, CELL_MAX);
  assert.ok(small.font >= 9, 'a cell at its natural size holds a number');
  const big = layoutHeatmap({ rows: 512, cols: 512, width: 1240, labels: 40 });
  assert.ok(Math.abs(big.cell - 1200 / 512) < 1e-9);
  assert.is(big.font, 0, 'a 2 px cell shows its colour only');
  assert.is(big.width, 1240);
  assert.is(big.height, big.top + Math.ceil(512 * big.cell));
  assert.ok(big.rowStride * big.cell >= 13, 'row labels never overlap');
});

test('hitTest and cellBox agree, with the row labels as column -1', () => {
  const L = layoutHeatmap({ rows: 100, cols: 100, width: 840, labels: 40, win: { r0: 10, c0: 20, size: 20 } });
  assert.is(L.cell, 40);
  for (const [i, j] of [[10, 20], [29, 39], [15, 33]]) {
    const b = cellBox(L, i, j);
    assert.equal(hitTest(L, b.x + b.w / 2, b.y + b.h / 2), { i, j });
  }
  assert.equal(hitTest(L, 5, L.top + 1), { i: 10, j: -1 });
  assert.is(hitTest(L, 100, 2), null, 'the column labels are no cell');
  assert.is(cellBox(L, 9, 20), null, 'a row above the window has no box');
  assert.is(cellBox(L, 10, 40), null, 'a column right of the window has none');
});

test('zoom keeps the anchor cell in place and stays inside the matrix', () => {
  const n = 512;
  const a = zoomWindow(fullWindow(n), 2, n, 100.5, 300.5);
  assert.is(a.size, 256);
  assert.ok(a.r0 <= 100 && 100 < a.r0 + a.size && a.c0 <= 300 && 300 < a.c0 + a.size);
  assert.ok(Math.abs((100.5 - a.r0) / a.size - 100.5 / 512) < 0.01, 'the anchor keeps its share of the height');
  let w = fullWindow(n);
  for (let k = 0; k < 20; k++) w = zoomWindow(w, 2, n, 511.5, 511.5);
  assert.is(w.size, MIN_WINDOW);
  assert.equal([w.r0, w.c0], [n - MIN_WINDOW, n - MIN_WINDOW]);
  assert.equal(zoomWindow(w, 0.001, n), fullWindow(n), 'zooming out ends at the whole matrix');
  assert.equal(panWindow({ r0: 0, c0: 0, size: 8 }, -5, 1000, n), { r0: 0, c0: n - 8, size: 8 });
  assert.equal(followCell({ r0: 0, c0: 0, size: 8 }, 8, 3, n), { r0: 1, c0: 0, size: 8 });
  assert.equal(followCell({ r0: 10, c0: 10, size: 8 }, 12, -1, n), { r0: 10, c0: 10, size: 8 }, 'a row label moves no column');
});

test('the palettes are the tables\' classes, colour for colour', () => {
  for (const theme of ['light', 'dark']) {
    const seq = paletteWords('seq', theme), div = paletteWords('div', theme);
    assert.is(seq.words.length, LEVELS + 1);
    assert.is(div.words.length, 2 * LEVELS + 1);
    const unpack = (w) => [w & 255, (w >>> 8) & 255, (w >>> 16) & 255, w >>> 24];
    assert.equal(unpack(seq.words[LEVELS]), [...sequential(1, theme), 255]);
    assert.equal(unpack(div.words[0]), [...diverging(-1, theme), 255]);
    const data = Float32Array.from([0, 0.5, 1, NaN]);
    const out = fillCells(new Uint32Array(4), data, 2, 2, 'seq', 1, seq, (i, j) => i === 1 && j === 1, 7);
    assert.is(out[0], seq.words[Number(heatClass(0, 'seq').slice(2))]);
    assert.is(out[1], seq.words[Number(heatClass(0.5, 'seq').slice(2))]);
    assert.is(out[2], seq.words[LEVELS]);
    assert.is(out[3], 7, 'a blocked pair gets the blocked colour');
  }
});

test('labels: a width by the longest, cut with an ellipsis, hostile text kept as text', () => {
  assert.is(shortLabel('internationalization'), 'internati…');
  assert.is(shortLabel('<img src=x>', 20), '<img src=x>');
  assert.ok(labelWidth(['a', 'bb']) < labelWidth(['a much longer word']));
});

test('a long pattern\'s thumbnail keeps a one-token diagonal as dark as a short one\'s', () => {
  const n = 512;
  const data = new Float32Array(n * n);
  for (let i = 0; i < n; i++) data[i * n + Math.max(0, i - 1)] = 1;
  const { size, alpha } = thumbnailAlpha(data, n);
  assert.is(size, 64);
  for (let p = 1; p < size; p++) assert.is(alpha[p * size + p], 255, `block (${p}, ${p}) holds the diagonal`);
  assert.is(alpha[10], 0, 'off the diagonal stays clear');
  const short = thumbnailAlpha(Float32Array.from([0.5, 0.5, 1, 0]), 2);
  assert.equal([short.size, [...short.alpha]], [2, [128, 128, 255, 0]]);
});

test('the text view shades by the chosen row over its largest weight', () => {
  const { t, max } = shades(Float32Array.from([0.1, 0.3, 0.6, 0.2, 0.2, 0.6]), 3, 0);
  assert.is(max, Float32Array.from([0.6])[0]);
  assert.equal([...t].map((x) => Number(x.toFixed(4))), [0.1667, 0.5, 1]);
});

test.run();
