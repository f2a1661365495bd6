// bind.js - binds a page's prose to its figures. An element with
// data-attention-for="<id of an attention-explorer>" applies its
// data-attention-set and data-attention-highlight to that figure: on click
// (links and buttons, the default) or while it is in view
// (data-attention-on="view", scrollytelling). A step that ends (it leaves
// the view, or a second click) is undone.
//
// Each figure keeps the attributes it had before any step (its base); the
// figure always shows the base with every active step applied in the order
// they began, and the highlight of the last of them. So steps may overlap
// as blocks scroll past, and end in any order.
//
// A step sets only the explorer's own settings (its observed attributes).
// The prose may hold user content that a sanitizer let through, and
// sanitizers keep data-* attributes: copying any name would let
// data-attention-set="onmouseover=..." or "style=..." put script or style on
// the figure. Other names are dropped with a console warning rather than
// refused with an error, so one bad paragraph cannot stop the rest of the
// story from binding.

import { SETTING, SETTINGS } from '../worked/settings.js';
import { parseHighlight, parseSet } from './parse.js';

/** The settings of a data-attention-set text, without the names that are not the explorer's settings. */
function settingsOf(trigger) {
  const set = parseSet(trigger.dataset.attentionSet);
  const out = new Map();
  const refused = [];
  for (const [name, value] of set) {
    // HTML attribute names are case-insensitive; the settings are lower case.
    const attr = name.toLowerCase();
    if (Object.hasOwn(SETTING, attr)) out.set(attr, value);
    else refused.push(`"${name}"`);
  }
  if (refused.length > 0) {
    console.warn(`data-attention-set: ${refused.join(', ')} ${refused.length === 1 ? 'is not a setting' : 'are not settings'} of <attention-explorer>, ignored ` +
      `(its settings: ${SETTINGS.map((s) => s.attr).join(', ')})`, trigger);
  }
  return out;
}

/**
 * Binds every [data-attention-for] under `root`. Returns unbind(), which
 * removes the listeners and observers and undoes the active steps.
 * @param {Document | Element} [root]
 * @param {{ threshold?: number }} [options] threshold: the share of a
 *   block in view that starts its step (default 0.5; a block taller than
 *   the window starts when it fills half of it)
 */
export function bindStory(root = document, { threshold = 0.5 } = {}) {
  const doc = root.ownerDocument ?? root;
  const figures = new Map(); // figure element -> { base: Map<attr, string|null>, active: step[] }
  const cleanup = [];
  const figureState = (el) => {
    if (!figures.has(el)) figures.set(el, { base: new Map(), active: [] });
    return figures.get(el);
  };
  const apply = (el) => {
    const state = figureState(el);
    const want = new Map(state.base);
    for (const step of state.active) {
      for (const [attr, value] of step.set) {
        if (!state.base.has(attr)) {
          state.base.set(attr, el.getAttribute(attr));
          want.set(attr, el.getAttribute(attr));
        }
        want.set(attr, value);
      }
    }
    for (const [attr, value] of want) {
      if (value === null) el.removeAttribute(attr);
      else if (el.getAttribute(attr) !== value) el.setAttribute(attr, value);
    }
    const lit = [...state.active].reverse().find((s) => s.highlight !== undefined);
    // The highlight waits for the attributes' update (new tokens, new heads).
    const spec = lit ? lit.highlight : null;
    (el.set ? el.set({}) : Promise.resolve()).then(() => el.highlight?.(spec));
  };
  const start = (step) => {
    const state = figureState(step.figure);
    if (!state.active.includes(step)) state.active.push(step);
    step.trigger.dataset.attentionActive = '';
    apply(step.figure);
  };
  const end = (step) => {
    const state = figureState(step.figure);
    state.active = state.active.filter((s) => s !== step);
    delete step.trigger.dataset.attentionActive;
    apply(step.figure);
  };
  const steps = [];
  for (const trigger of root.querySelectorAll('[data-attention-for]')) {
    const figure = doc.getElementById(trigger.dataset.attentionFor);
    if (!figure) throw new RangeError(`data-attention-for="${trigger.dataset.attentionFor}": no element with that id`);
    const step = {
      trigger, figure,
      set: trigger.dataset.attentionSet ? settingsOf(trigger) : new Map(),
      ...(trigger.dataset.attentionHighlight !== undefined ? { highlight: parseHighlight(trigger.dataset.attentionHighlight) } : {}),
    };
    steps.push(step);
    if (trigger.dataset.attentionOn === 'view') continue;
    const onClick = (e) => {
      if (trigger.matches('a[href="#"], a:not([href])')) e.preventDefault();
      if (figureState(figure).active.includes(step)) end(step);
      else start(step);
    };
    trigger.addEventListener('click', onClick);
    cleanup.push(() => trigger.removeEventListener('click', onClick));
  }
  const viewed = steps.filter((s) => s.trigger.dataset.attentionOn === 'view');
  if (viewed.length > 0 && typeof IntersectionObserver !== 'undefined') {
    const byTrigger = new Map(viewed.map((s) => [s.trigger, s]));
    const observer = new IntersectionObserver((entries) => {
      for (const e of entries) {
        const step = byTrigger.get(e.target);
        const shown = e.isIntersecting && (e.intersectionRatio >= threshold || e.intersectionRect.height >= threshold * (e.rootBounds?.height ?? Infinity));
        const active = figureState(step.figure).active.includes(step);
        if (shown && !active) start(step);
        else if (!shown && active) end(step);
      }
    }, { threshold: [0, 0.25, threshold, 0.75, 1] });
    for (const t of byTrigger.keys()) observer.observe(t);
    cleanup.push(() => observer.disconnect());
  }
  return function unbind() {
    for (const undo of cleanup) undo();
    for (const step of steps) if (figureState(step.figure).active.includes(step)) end(step);
  };
}
