// steps-view.js - the view of <attention-explorer> under its toolbar: one
// section per step shown: steps 1 to 4 in order (scores, logits, the weights
// beside the lines view, output; the weights' section is the `lead`, what a
// compact embed shows), then the inputs and projections they start from, each with its explanation
// slot and its tables. Built when the structure changes (tokens, sizes,
// heads, parts, step), repainted in place for new numbers; the tables are
// keyboard grids (grid.js) whose pointer and key events become the
// element's intents: inspect a number, edit an input, mask a pair, copy a
// table. The element owns the state; `context()` hands it over on each paint.

import { el } from './dom.js';
import { cellAt, moveTabStop, nextCell } from './grid.js';
import { LinesView } from './lines.js';
import { TEXT_VIEW_MIN_TOKENS, TokensView } from './tokens-view.js';
import { SoftmaxPlay, playSources } from './softmax-play.js';
import { buildTable, cellLabel, highlight, paintTable, scrollIntoBox, visibleRegion } from './tables.js';
import { Heatmap } from './heatmap.js';
import { usesCanvas } from './heatmap-layout.js';
import { EDITABLE, headTableSpecs, inputTableSpecs, matrixOf, projectionTableSpecs } from './step-tables.js';
import { DEFAULT_EXPLANATIONS, defaultExplanation, leadTitle, ropeExplanation, sectionTitle } from '../worked/text.js';
import { DIGITS } from '../worked/format.js';
import { isFigure } from '../worked/settings.js';

// A pause this long in slider input ends a drag.
const DRAG_PAUSE_MS = 200;
// Up to this many tokens the sections flow side by side on a wide screen (styles.js).
const FLOW_MAX_TOKENS = 12;
// Past this many tokens the sections off screen skip their layout (content-visibility, styles of heatmap.js).
const LONG_MIN_TOKENS = 64;
// Keys that zoom a heatmap: closer, farther, every token.
const HEAT_KEYS = { '+': 2, '=': 2, '-': 0.5, '0': 0 };
// Tables with more cells than this write only the cells in view during a drag.
const REGION_MIN_CELLS = 256;

export class StepsView {
  #node = el('div', { class: 'view', part: 'view' });
  #context;
  #intents;
  #structure = ''; // what the built view shows; see render
  #lastStep = 'all';
  #tables = new Map(); // id -> the entry of one built table
  #lines = null; // LinesView when the lines part is shown
  #linesView = null; // the LinesView, kept while the lines part comes and goes
  #text = null; // TokensView of a long input, shaded by the selected query's weights
  #selected = -1; // the query whose lines alone are drawn; -1: all
  #focus = null; // { id, i, j } of the table's tab stop, kept across rebuilds
  #overflow = null; // ResizeObserver marking tables wider than their box
  #visibility = null; // IntersectionObserver marking tables off screen
  #softmax = null; // SoftmaxPlay on the weights step
  #linesStale = false; // the lines view waits for the drag's end (off screen)
  #linesOff = false; // the lines view is off screen (the IntersectionObserver says: asking the layout each frame forces one)
  #story = null; // what the page's story lights (setStory)
  #storyLit = []; // the cells it lit
  #storyScroll = false; // the next paint scrolls the lit cells into their tables' boxes
  #paintKey = ''; // what the marks of the last repaint depended on (see repaint)
  #dragTimer = 0; // nonzero while the scale slider is dragged
  #hovered = ''; // "id:i:j" of the cell the pointer is over
  #hasCanvas = false; // the token-by-token steps are canvases

  /**
   * @param {() => { config: object, view: object, example: object, explanations: object, scaleIsDefault: boolean,
   *   blocked: (i: number, j: number) => string, edits: Map<string, number>, mask: Uint8Array | null }} context
   *   the element's current state
   * @param {{ inspect: (target: { id: string, i: number, j: number } | null) => void,
   *   edit: (td: HTMLElement, id: string, i: number, j: number, firstKey: string | null) => void,
   *   toggleMask: (i: number, j: number) => void, copy: (id: string, format: string) => void,
   *   masking: () => boolean, painted: () => void }} intents what the element does on the reader's input;
   *   `painted` after every repaint
   */
  constructor(context, intents) {
    this.#context = context;
    this.#intents = intents;
    const node = this.#node;
    if (typeof window !== 'undefined') window.addEventListener('scroll', () => this.#paintStale(), { passive: true });
    node.addEventListener('keydown', (e) => this.#onKeyDown(e));
    node.addEventListener('click', (e) => this.#onClick(e));
    node.addEventListener('focusin', (e) => this.#onFocus(e));
    node.addEventListener('pointerover', (e) => this.#onHover(e));
    // A canvas is one element: the cell under the pointer changes as it moves.
    node.addEventListener('pointermove', (e) => e.target.tagName === 'CANVAS' && this.#onHover(e));
    node.addEventListener('pointerout', () => { this.#hovered = ''; });
    node.addEventListener('pointerleave', () => {
      if (!this.#active()?.matches?.('[role="gridcell"][data-i]')) intents.inspect(null);
    });
    // Focus leaving the tables (Tab, a script's focus(), a click elsewhere)
    // closes the popover of the cell it left, unless the pointer still
    // rests on a number, which keeps its own derivation open.
    node.addEventListener('focusout', (e) => {
      if (!node.contains(e.relatedTarget) && !this.#hovered) intents.inspect(null);
    });
  }

  get element() {
    return this.#node;
  }

  /** The heads the lines view draws (for the exported picture). */
  get enabledHeads() {
    return this.#lines?.enabled ?? [];
  }

  /** Whether a table with this id is shown. */
  has(id) {
    return this.#tables.has(id);
  }

  /** The focusable element of a table at (i, j) (j = -1: the row label), or null. */
  cell({ id, i, j }) {
    const entry = this.#tables.get(id);
    if (entry?.heatmap) return entry.heatmap.cellElement(i, j);
    return entry ? cellAt(entry, i, j) : null;
  }

  /** Lights the cells a number comes from (tables.js highlight). */
  highlight(sources, target = null) {
    highlight(this.#tables, sources, target);
  }

  /** The next render rebuilds every section (their texts changed). */
  invalidate() {
    this.#structure = '';
  }

  #active() {
    return this.#node.getRootNode().activeElement;
  }

  // Rebuilds the view when its structure (tokens, sizes, heads, parts, step)
  // changed; otherwise repaints the existing cells and lines in place, which
  // keeps focus, scroll and layout and costs a fraction of a rebuild.
  render() {
    const { config: c, view, example: ex } = this.#context();
    if (this.#selected >= c.tokens.length) this.#selected = -1;
    const structure = JSON.stringify([c.tokens, c.dModel, c.dk, c.dv, c.heads, c.kvHeads, c.rope && [c.rope.theta, c.queryOffset], view.step, [...view.show], view.controls, isFigure(view)]);
    if (structure === this.#structure) {
      this.repaint();
      return;
    }
    this.#structure = structure;
    const hadFocus = this.#active()?.closest?.('.view') != null;
    const t = ex.tokens;
    const step = view.step;
    const animate = step !== this.#lastStep && step !== 'all';
    this.#lastStep = step;
    for (const entry of this.#tables.values()) entry.heatmap?.disconnect();
    this.#tables = new Map();
    const sections = [];
    const show = (s) => view.show.has(s) && (step === 'all' || step === s);
    const table = (spec) => {
      const { figure, entry } = buildTable({ ...spec, focus: this.#focus?.id === spec.id ? this.#focus : null });
      this.#tables.set(spec.id, entry);
      if (spec.name) figure.querySelector('table')?.setAttribute('aria-label', `${spec.name}, ${spec.rows.length} by ${spec.cols.length}`);
      return figure;
    };
    // Past TABLE_MAX_TOKENS the token-by-token steps are canvases (heatmap.js).
    const canvas = usesCanvas(t.length);
    this.#hasCanvas = canvas;
    const heatmap = (spec) => this.#tables.set(spec.id, new Heatmap({ ...spec, focus: this.#focus?.id === spec.id ? this.#focus : null })).get(spec.id).figure;
    const heads = (key) => el('div', { class: `matrices heads${canvas && key !== 'output' ? ' heat' : ''}` },
      ...headTableSpecs(c, ex, key, canvas).map((spec) => (spec.heatmap ? heatmap : table)(spec)));
    // Steps 1 to 4 in order, the lines view beside the weights, so at 1366 px
    // the first screen reaches the weights; then where Q, K and V come from.
    const lines = view.show.has('lines') && (step === 'all' || step === 'weights');
    for (const key of ['scores', 'scaled']) {
      if (show(key)) sections.push(this.#section(key, [heads(key)]));
    }
    this.#lines = null;
    if (show('weights') || lines) {
      const parts = [];
      if (lines) {
        this.#lines = this.#linesView ??= new LinesView({ onSelect: (i) => this.#select(i) });
        this.#lines.build(t, c.heads, this.#selected);
        parts.push(this.#lines.element);
      }
      if (show('weights')) parts.push(heads('weights'));
      this.#text = t.length > TEXT_VIEW_MIN_TOKENS ? (this.#text ?? new TokensView({ onSelect: (i) => this.#select(i) })) : null;
      this.#text?.build(t, this.#selected);
      this.#softmax?.stop();
      // Weights computed elsewhere come without their logits: nothing to play.
      // Played row by row into a table's cells: a canvas of hundreds of rows has none to play into.
      this.#softmax = show('weights') && view.controls !== 'none' && !canvas && !this.#context().example.external ? new SoftmaxPlay(() => this.#softmaxSource(), () => this.repaint()) : null;
      sections.push(this.#section('weights', [...(this.#text ? [this.#text.element] : []), el('div', { class: 'attention-row' }, ...parts), ...(this.#softmax ? [this.#softmax.element] : [])], { lead: true }));
    }
    if (show('output')) sections.push(this.#section('output', [heads('output')]));
    if (show('inputs')) sections.push(this.#section('inputs', [el('div', { class: 'matrices' }, ...inputTableSpecs(c, t).map(table))]));
    if (show('projections')) sections.push(this.#section('projections', [el('div', { class: 'matrices' }, ...projectionTableSpecs(c, t).map(table))]));
    this.#node.classList.toggle('flow', t.length <= FLOW_MAX_TOKENS);
    this.#node.classList.toggle('long', t.length > LONG_MIN_TOKENS);
    if (animate) for (const s of sections) s.classList.add('enter');
    this.#node.replaceChildren(...sections);
    this.#watchOverflow();
    this.#watchSkipped();
    this.repaint();
    if (hadFocus && this.#focus) this.#focusable(this.#focus)?.focus({ preventScroll: true });
  }

  #section(step, children, { lead = false } = {}) {
    const { config, view, explanations, scaleIsDefault } = this.#context();
    const title = lead ? leadTitle(view.show, config, scaleIsDefault) : sectionTitle(step, config, scaleIsDefault);
    const slot = el('slot', { name: `explain-${step}` });
    // Texts set through `explanations` are the page's own; the defaults fit the controls shown.
    const own = explanations[step] !== DEFAULT_EXPLANATIONS[step];
    slot.textContent = own ? explanations[step] : defaultExplanation(step, view.controls) + ropeExplanation(step, config);
    // A figure's words are the author's: no heading or text of its own (the section keeps its name for screen readers).
    const words = isFigure(view) ? [] : [el('h2', { text: title }), el('p', { class: 'explanation' }, slot)];
    return el('section', { class: `step step-${step}${lead ? ' lead' : ''}`, 'data-step': step, 'aria-label': title, part: lead ? 'attention' : `step-${step}` },
      ...words, ...children);
  }

  // A table wider than its box scrolls; its figure is marked so the caption
  // says so and the cut edge fades (nothing is cut off without a sign).
  #watchOverflow() {
    this.#overflow?.disconnect();
    if (typeof ResizeObserver === 'undefined') return;
    const mark = (box) => {
      const figure = box.closest('figure');
      const over = box.scrollWidth > box.clientWidth + 1;
      figure.classList.toggle('overflowing', over);
      figure.classList.toggle('scrolled-end', over && box.scrollLeft + box.clientWidth >= box.scrollWidth - 1);
    };
    this.#overflow = new ResizeObserver((entries) => {
      for (const e of entries) mark(e.target);
    });
    for (const box of this.#node.querySelectorAll('figure.matrix > .scroll')) {
      this.#overflow.observe(box);
      box.addEventListener('scroll', () => {
        mark(box);
        this.#paintStale();
      }, { passive: true });
    }
  }

  // Tables off screen are marked (an IntersectionObserver) so a drag can
  // leave them for later; they are painted when they come on screen or the
  // drag ends. Their layout is real, so the page's height never jumps.
  #watchSkipped() {
    this.#visibility?.disconnect();
    if (typeof IntersectionObserver === 'undefined') return;
    const byFigure = new Map();
    for (const entry of this.#tables.values()) byFigure.set(entry.table.closest('figure'), entry);
    this.#linesOff = false;
    this.#visibility = new IntersectionObserver((records) => {
      for (const r of records) {
        if (r.target === this.#lines?.element) {
          this.#linesOff = !r.isIntersecting;
          if (!this.#linesOff && this.#linesStale) this.#paintLines(false);
          continue;
        }
        const entry = byFigure.get(r.target);
        if (!entry) continue;
        entry.skipped = !r.isIntersecting;
        if (!entry.skipped && entry.stale) this.#paintEntry(entry);
      }
    }, { rootMargin: '200px 0px' });
    for (const figure of byFigure.keys()) this.#visibility.observe(figure);
    if (this.#lines) this.#visibility.observe(this.#lines.element);
  }

  /**
   * Writes every number, colour, mask mark, selection and line of the
   * current state into the built view, then tells the element (which
   * refreshes the popover, so it always shows the current value).
   */
  repaint() {
    if (this.#softmax?.playing) this.#softmax.stop(); // new numbers end a play (its stop repaints)
    const { config: c, example, scaleIsDefault, mask, edits } = this.#context();
    // Everything the blocked, edited and selected marks depend on besides the numbers.
    // A canvas draws in its theme's palette (a table's classes follow the theme by themselves).
    const theme = this.#hasCanvas ? getComputedStyle(this.#node).getPropertyValue('--attn-heat') : '';
    this.#paintKey = JSON.stringify([c.causal, c.window, c.queryOffset, this.#selected, mask ? mask.join('') : '', [...edits.keys()], theme]);
    for (const entry of this.#tables.values()) {
      // While the slider is dragged, a table the browser skips (off screen)
      // waits: it is painted when it comes on screen or the drag ends.
      entry.stale = Boolean(entry.skipped && this.#dragTimer);
      if (!entry.stale) this.#paintEntry(entry);
    }
    const scaled = this.#node.querySelector('section.step-scaled');
    if (scaled) {
      const title = sectionTitle('scaled', c, scaleIsDefault);
      const h2 = scaled.querySelector('h2');
      if (h2 && h2.textContent !== title) {
        h2.textContent = title;
        scaled.setAttribute('aria-label', title);
      }
    }
    this.#paintStory();
    // During a drag the lines in view follow every frame; lines off screen and what they say follow when it ends.
    this.#linesStale = Boolean(this.#lines && this.#dragTimer && this.#linesOff);
    if (!this.#linesStale) this.#lines?.update(example.heads.map((h) => h.weights), { spoken: !this.#dragTimer });
    this.syncHead();
    this.#intents.painted();
  }

  #paintEntry(entry) {
    const { config: c, example, blocked, edits, mask } = this.#context();
    const { id, step } = entry;
    // A heatmap asks every cell: with nothing that blocks a pair, it asks none.
    const blocks = (step === 'weights' || step === 'scaled') && !(entry.heatmap && !c.causal && !c.window && !mask?.includes(0));
    const edited = EDITABLE.has(id) && edits.size > 0 ? (i, j) => edits.has(`${id}:${i}:${j}`) : () => false;
    // During a drag a large table writes only the cells in view; the rest
    // follow when the drag ends or the reader scrolls.
    const region = !entry.heatmap && this.#dragTimer && entry.tds.length > REGION_MIN_CELLS ? visibleRegion(entry) : null;
    entry.stale = region !== null;
    (entry.heatmap ? (m, how) => entry.heatmap.paint(m, how) : (m, how) => paintTable(entry, m, how))(matrixOf(example, id), {
      region,
      key: this.#paintKey,
      digits: DIGITS[step ?? id] ?? 4,
      blocked: blocks ? blocked : entry.heatmap ? null : () => '',
      edited,
      selected: this.#selected,
      minusInfinity: step === 'scaled',
    });
  }

  /**
   * What the page's story lights (resolveHighlight in highlight.js, or
   * null): the cells get .story, the rest of their table dims, and a single
   * query row selects its lines. Kept across rebuilds.
   */
  setStory(resolved, { quiet = false } = {}) {
    const was = this.#story;
    this.#story = resolved;
    // A story's new highlight is brought into its table's scroll box (painted next).
    if (!quiet) this.#storyScroll = true;
    const query = resolved?.query ?? -1;
    if (query === (was?.query ?? -1)) {
      if (!quiet) this.repaint();
      return;
    }
    if (query >= 0) this.#selected = query;
    else if (this.#selected === was.query) this.#selected = -1;
    this.#lines?.select(this.#selected);
    if (!quiet) this.repaint();
  }

  #paintStory() {
    for (const td of this.#storyLit) td.classList.remove('story');
    this.#storyLit = [];
    for (const entry of this.#tables.values()) {
      entry.table.classList.remove('storied');
      if (entry.heatmap && !this.#story?.ids.includes(entry.id)) entry.heatmap.setStory(null);
    }
    const story = this.#story;
    if (!story) return;
    for (const id of story.ids) {
      const entry = this.#tables.get(id);
      if (!entry) continue;
      if (entry.heatmap) {
        entry.heatmap.setStory({ rows: story.rows, cols: story.cols });
        continue;
      }
      const nc = entry.cols.length;
      entry.table.classList.add('storied');
      entry.tds.forEach((td, k) => {
        const i = Math.floor(k / nc), j = k % nc;
        if ((story.rows === null || story.rows.has(i)) && (story.cols === null || story.cols.has(j))) {
          td.classList.add('story');
          this.#storyLit.push(td);
        }
      });
    }
    if (this.#storyScroll) {
      this.#storyScroll = false;
      for (const id of story.ids) {
        // A heatmap shows its lit cells itself (setStory above); a table scrolls them into its box.
        const lit = this.#tables.get(id)?.tds?.filter((td) => td.classList.contains('story'));
        if (lit?.length) scrollIntoBox(lit);
      }
    }
  }

  // A drag is a run of slider input events; it ends on change (pointer
  // released, or a key) or after a pause, and then the waiting tables are painted.
  dragStep() {
    clearTimeout(this.#dragTimer);
    this.#dragTimer = setTimeout(() => this.dragEnd(), DRAG_PAUSE_MS);
  }

  // What "Play softmax" plays on: the head picked (data-head), else every head shown.
  #softmaxSource() {
    const { example, blocked } = this.#context();
    return playSources(this.#tables, example, blocked, Number(this.#node.dataset.head ?? -1));
  }

  // Tables painted in part (a drag) repaint what is now in view.
  #paintStale() {
    if (!this.#dragTimer) return;
    for (const entry of this.#tables.values()) if (entry.stale && !entry.skipped) this.#paintEntry(entry);
    if (this.#linesStale && !this.#linesOff) this.#paintLines(false);
  }

  #paintLines(spoken) {
    this.#linesStale = false;
    this.#lines?.update(this.#context().example.heads.map((h) => h.weights), { spoken });
  }

  dragEnd() {
    clearTimeout(this.#dragTimer);
    this.#dragTimer = 0;
    for (const entry of this.#tables.values()) if (entry.stale) this.#paintEntry(entry);
    if (this.#linesStale) this.#paintLines(true);
    else this.#lines?.speak();
  }

  /** The text view shades by the head picked (or the first): after a pick, and on every repaint. */
  syncHead() {
    if (!this.#text) return;
    const heads = this.#context().example.heads;
    const h = Math.min(heads.length - 1, Math.max(0, Number(this.#node.dataset.head ?? 0)));
    this.#text.update(heads[h].weights, this.#selected);
  }

  /** Stops watching the tables (the element left the page). */
  disconnect() {
    this.#overflow?.disconnect();
    this.#visibility?.disconnect();
    this.#linesView?.disconnect();
    for (const entry of this.#tables.values()) entry.heatmap?.disconnect();
    this.dragEnd();
  }

  /** After an edit of (i, j) ends: the cell is written again and takes focus back. */
  editDone(id, i, j) {
    this.#focus = { id, i, j };
    const entry = this.#tables.get(id);
    if (entry && !entry.heatmap) {
      entry.painted[i * entry.cols.length + j] = '';
      entry.data = null;
    }
    this.repaint();
    this.#focusable(this.#focus)?.focus();
  }

  // What takes focus for (i, j): a table's cell, or a heatmap's keyboard cell moved there.
  #focusable({ id, i, j }) {
    const entry = this.#tables.get(id);
    if (!entry) return null;
    return entry.heatmap ? entry.heatmap.cursorAt(i, j) : cellAt(entry, i, j);
  }

  // ---- the reader's input --------------------------------------------------

  // The cell an event is about: a table's, a heatmap's keyboard cell, or the heatmap cell under the pointer (map set).
  #targetOf(e) {
    const node = e.target;
    const map = node.tagName === 'CANVAS' ? this.#tables.get(node.dataset.id)?.heatmap : null;
    if (map) {
      const at = map.hit(e);
      return at && { id: map.id, i: at.i, j: at.j, td: null, map };
    }
    const td = node.closest?.('[role="gridcell"][data-i]');
    if (!td) return null;
    return { id: td.closest('[role="grid"]').dataset.id, i: Number(td.dataset.i), j: Number(td.dataset.j), td };
  }

  #select(i) {
    this.selectQuery(this.#selected === i ? -1 : i);
  }

  /** Selects query i (its lines alone, its row marked; -1: every query), as a press on its word does. */
  selectQuery(i) {
    if (i === this.#selected) return;
    this.#selected = i;
    this.#lines?.select(this.#selected);
    this.repaint();
  }

  #onKeyDown(e) {
    if (e.target.tagName === 'INPUT') return;
    if (e.key === 'Escape') {
      this.#intents.inspect(null);
      return;
    }
    const node = e.target.closest?.('[data-i]');
    const table = node?.closest('[role="grid"]');
    if (!table) return;
    const id = table.dataset.id;
    const entry = this.#tables.get(id);
    const i = Number(node.dataset.i), j = Number(node.dataset.j);
    const map = entry.heatmap;
    if (map && HEAT_KEYS[e.key] !== undefined) {
      e.preventDefault();
      return map.zoom(HEAT_KEYS[e.key]);
    }
    const to = nextCell(e.key, e.ctrlKey, i, j, entry.rows.length, entry.cols.length, entry.buttons !== null);
    if (to && map) {
      // One element is the heatmap's keyboard cell: it moves, so focus fires no event; say where it is.
      e.preventDefault();
      this.#focus = { id, i: to[0], j: to[1] };
      this.#focusCell({ id, i: to[0], j: to[1], td: map.cursorAt(to[0], to[1]) }, true);
      return;
    }
    if (map && j < 0 && (e.key === 'Enter' || e.key === ' ')) {
      e.preventDefault();
      return this.#select(i);
    }
    if (to) {
      e.preventDefault();
      const next = cellAt(entry, to[0], to[1]);
      if (next) {
        this.#focus = { id, i: to[0], j: to[1] };
        moveTabStop(entry, next);
      }
      return;
    }
    if (j < 0) return; // a row label: Enter and Space press the button
    if (EDITABLE.has(id) && (e.key === 'Enter' || e.key === 'F2' || /^[-+.\d]$/.test(e.key))) {
      e.preventDefault();
      this.#intents.edit(node, id, i, j, /^[-+.\d]$/.test(e.key) ? e.key : null);
    } else if (id.startsWith('weights-') && (e.key === ' ' || e.key === 'Enter')) {
      // Space on a weight masks the pair: a key of its own, never a side effect of inspecting.
      e.preventDefault();
      this.#intents.toggleMask(i, j);
    }
  }

  #onClick(e) {
    const copy = e.target.closest?.('[data-copy]');
    if (copy) {
      this.#intents.copy(copy.dataset.table, copy.dataset.copy);
      return;
    }
    const select = e.target.closest?.('[data-select]');
    if (select) {
      this.#select(Number(select.dataset.select));
      return;
    }
    const target = this.#targetOf(e);
    if (!target) {
      // A tap beside the tables closes the popover (touch has no pointer leaving).
      if (!e.target.closest?.('figure.lines, details, button, input, canvas')) this.#intents.inspect(null);
      return;
    }
    const { id, i, j, map } = target;
    if (map && j < 0) return this.#select(i);
    this.#focus = { id, i, j };
    const entry = this.#tables.get(id);
    const td = map ? map.cursorAt(i, j) : target.td;
    if (map) td.focus({ preventScroll: true });
    else if (entry) moveTabStop(entry, td);
    if (id.startsWith('weights-') && this.#intents.masking()) {
      this.#intents.toggleMask(i, j);
    } else if (EDITABLE.has(id)) {
      this.#intents.edit(td, id, i, j, null);
    } else {
      // A tap on a touch screen lands here: it inspects, as hover does.
      this.#intents.inspect({ id, i, j });
    }
  }

  #onFocus(e) {
    const target = this.#targetOf(e);
    // Focus on something that is not a number (a row label, a query token, a
    // Copy menu) closes the popover: it would explain a cell no longer focused.
    if (!target) {
      if (!this.#active()?.matches?.('td[data-i] input')) this.#intents.inspect(null);
      return;
    }
    if (e.target.tagName === 'INPUT') return;
    this.#focusCell(target);
  }

  // The focused cell's spoken label (a heatmap's also said through its live region) and its derivation.
  #focusCell({ id, i, j, td }, announce = false) {
    const entry = this.#tables.get(id);
    const map = entry?.heatmap;
    if (entry) {
      const { blocked, edits } = this.#context();
      const why = j >= 0 && (entry.step === 'weights' || entry.step === 'scaled') ? blocked(i, j) : '';
      const label = map ? map.label(i, j, why) : cellLabel(entry, i, j, td.textContent, why, EDITABLE.has(id) && edits.has(`${id}:${i}:${j}`));
      td.setAttribute('aria-label', label);
      if (announce) map?.announce(label);
    }
    this.#focus = { id, i, j };
    this.#intents.inspect(j >= 0 ? this.#focus : null);
  }

  #onHover(e) {
    if (e.pointerType === 'touch') return; // a tap inspects through click
    const target = this.#targetOf(e);
    const key = target ? `${target.id}:${target.i}:${target.j}` : '';
    if (!target || target.j < 0 || key === this.#hovered) return;
    this.#hovered = key;
    this.#intents.inspect({ id: target.id, i: target.i, j: target.j });
  }
}
