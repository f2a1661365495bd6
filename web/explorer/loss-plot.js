// loss-plot.js - the Train part's loss curve: an SVG with its axes, the
// loss at the top of the y axis and at 0, the steps along the x axis, and
// the curve. Built once; update() redraws it from the list of losses. The
// picture is as wide as its box (a ResizeObserver lays it out again), so a
// wide row gets a long curve while its text keeps its size.

const SVG = 'http://www.w3.org/2000/svg';
const WIDTH = 280; // px, until the box is measured (and where there is no ResizeObserver)
const MIN_WIDTH = 200; // px: narrower boxes scale the picture down
const HEIGHT = 128;
const LEFT = 46; // room for the y axis' numbers
const RIGHT = 8;
const TOP = 8;
const BOTTOM = 20; // room for the x axis' numbers

export class LossPlot {
  #box;
  #svg;
  #line;
  #yTop;
  #xEnd;
  #xAxis;
  #xLabel;
  #width = WIDTH;
  #losses = [];

  /** @param {Document} doc */
  constructor(doc) {
    const make = (tag, attrs = {}, text) => {
      const node = doc.createElementNS(SVG, tag);
      for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
      if (text !== undefined) node.textContent = text;
      return node;
    };
    const x0 = LEFT, y0 = HEIGHT - BOTTOM;
    this.#svg = make('svg', { class: 'train-plot', role: 'img', 'aria-label': 'loss per step' });
    this.#line = make('polyline', { class: 'curve' });
    this.#yTop = make('text', { class: 'tick', x: x0 - 4, y: TOP + 4, 'text-anchor': 'end' }, '');
    this.#xEnd = make('text', { class: 'tick', y: HEIGHT - 6, 'text-anchor': 'end' }, '');
    this.#xAxis = make('line', { class: 'axis', x1: x0, y1: y0, y2: y0 });
    this.#xLabel = make('text', { class: 'label', y: HEIGHT - 6, 'text-anchor': 'middle' }, 'step');
    this.#svg.append(
      make('line', { class: 'axis', x1: x0, y1: TOP, x2: x0, y2: y0 }), this.#xAxis,
      make('text', { class: 'tick', x: x0 - 4, y: y0, 'text-anchor': 'end' }, '0'),
      make('text', { class: 'tick', x: x0, y: HEIGHT - 6, 'text-anchor': 'middle' }, '0'),
      make('text', { class: 'label', x: 4, y: (TOP + y0) / 2 + 4 }, 'loss'),
      this.#xLabel, this.#yTop, this.#xEnd, this.#line);
    this.#box = doc.createElement('figure');
    this.#box.className = 'train-loss';
    this.#box.setAttribute('part', 'train-loss');
    this.#box.append(this.#svg);
    this.#layout(WIDTH);
    if (typeof ResizeObserver !== 'undefined') {
      // The box's width comes from its row (train-styles.js), not from the picture: no feedback.
      new ResizeObserver(([entry]) => {
        const width = Math.max(MIN_WIDTH, Math.floor(entry.contentRect.width));
        if (width !== this.#width) this.#layout(width);
      }).observe(this.#box);
    }
  }

  /** The plot's figure, to be placed in the part's row of grids. */
  get element() {
    return this.#box;
  }

  #layout(width) {
    this.#width = width;
    for (const [k, v] of [['width', width], ['height', HEIGHT], ['viewBox', `0 0 ${width} ${HEIGHT}`]]) this.#svg.setAttribute(k, String(v));
    this.#xAxis.setAttribute('x2', String(width - RIGHT));
    this.#xEnd.setAttribute('x', String(width - RIGHT));
    this.#xLabel.setAttribute('x', String((LEFT + width) / 2));
    this.update(this.#losses);
  }

  /** Draws `losses` (one per step): the y axis runs from 0 to the largest, the x axis over the steps. */
  update(losses) {
    this.#losses = losses;
    const top = Math.max(...losses, 0);
    const w = this.#width - LEFT - RIGHT, h = HEIGHT - TOP - BOTTOM;
    const span = Math.max(losses.length - 1, 1);
    this.#yTop.textContent = losses.length ? top.toFixed(top < 10 ? 3 : 1) : '';
    this.#xEnd.textContent = losses.length ? String(losses.length) : '';
    this.#line.setAttribute('points', losses.map((l, s) => `${(LEFT + (w * s) / span).toFixed(1)},${(TOP + h - (h * l) / (top || 1)).toFixed(1)}`).join(' '));
  }
}
