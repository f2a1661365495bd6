// loss-plot.js - the Train part's loss curve: an SVG with its axes, the
// loss at the top of the y axis and at 0, the steps along the x axis, and
// the curve. Built once; update() redraws it from the list of losses.

const SVG = 'http://www.w3.org/2000/svg';
const WIDTH = 280; // px, the drawing's own size: text keeps its shape
const HEIGHT = 96;
const LEFT = 46; // room for the y axis' numbers
const RIGHT = 8;
const TOP = 8;
const BOTTOM = 20; // room for the x axis' numbers

export class LossPlot {
  #svg;
  #line;
  #yTop;
  #xEnd;

  /** @param {Document} doc */
  constructor(doc) {
    const make = (tag, attrs = {}, text) => {
      const node = doc.createElementNS(SVG, tag);
      for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
      if (text !== undefined) node.textContent = text;
      return node;
    };
    const x0 = LEFT, y0 = HEIGHT - BOTTOM;
    this.#svg = make('svg', { class: 'train-plot', width: WIDTH, height: HEIGHT, viewBox: `0 0 ${WIDTH} ${HEIGHT}`, role: 'img', 'aria-label': 'loss per step' });
    this.#line = make('polyline', { class: 'curve' });
    this.#yTop = make('text', { class: 'tick', x: x0 - 4, y: TOP + 4, 'text-anchor': 'end' }, '');
    this.#xEnd = make('text', { class: 'tick', x: WIDTH - RIGHT, y: HEIGHT - 6, 'text-anchor': 'end' }, '');
    this.#svg.append(
      make('line', { class: 'axis', x1: x0, y1: TOP, x2: x0, y2: y0 }),
      make('line', { class: 'axis', x1: x0, y1: y0, x2: WIDTH - RIGHT, y2: y0 }),
      make('text', { class: 'tick', x: x0 - 4, y: y0, 'text-anchor': 'end' }, '0'),
      make('text', { class: 'tick', x: x0, y: HEIGHT - 6, 'text-anchor': 'middle' }, '0'),
      make('text', { class: 'label', x: 4, y: (TOP + y0) / 2 + 4 }, 'loss'),
      make('text', { class: 'label', x: (LEFT + WIDTH) / 2, y: HEIGHT - 6, 'text-anchor': 'middle' }, 'step'),
      this.#yTop, this.#xEnd, this.#line);
  }

  get element() {
    return this.#svg;
  }

  /** Draws `losses` (one per step): the y axis runs from 0 to the largest, the x axis over the steps. */
  update(losses) {
    const top = Math.max(...losses, 0);
    const w = WIDTH - LEFT - RIGHT, h = HEIGHT - TOP - BOTTOM;
    const span = Math.max(losses.length - 1, 1);
    this.#yTop.textContent = losses.length ? top.toFixed(top < 10 ? 3 : 1) : '';
    this.#xEnd.textContent = losses.length ? String(losses.length) : '';
    this.#line.setAttribute('points', losses.map((l, s) => `${(LEFT + (w * s) / span).toFixed(1)},${(TOP + h - (h * l) / (top || 1)).toFixed(1)}`).join(' '));
  }
}
