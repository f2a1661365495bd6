// Setting a property or attribute of <attention-explorer> to the value it
// already has (equal by value for mask, inputs and explanations) neither
// recomputes nor fires attention-change, so a framework that sets every prop
// on each render, and updates its state in the event's handler, settles.
// A real change still fires exactly one event. Chromium (playwright-core).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { EXPLORER as E, openWith, settled, start } from '../browser.js';

const test = suite('explorer: nothing happens for nothing');
test.before(async (ctx) => {
  ctx.env = await start();
});
test.after(async ({ env }) => env?.close());

// Runs `change` in the page after the element has settled; the events it fired, two frames later.
async function eventsAfter(page, change) {
  return page.evaluate(async ([sel, body]) => {
    const el = document.querySelector(sel);
    let count = 0;
    const count1 = () => count++;
    el.addEventListener('attention-change', count1);
    new Function('el', body)(el);
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(r, 0))));
    el.removeEventListener('attention-change', count1);
    return count;
  }, [E, change]);
}

test('equal values: no event; a real change: one', async ({ env }) => {
  const { page, problems } = await openWith(env, 'heads="2" tokens="the cat sat there"');
  await settled(page);
  const same = {
    'el.heads = el.heads': 0,
    'el.tokens = el.tokens': 0,
    "el.setAttribute('tokens', el.getAttribute('tokens'))": 0,
    'el.causal = el.causal': 0,
    'el.mask = null': 0,
    'el.mask = el.mask': 0,
    'el.inputs = {}': 0,
    'el.inputs = el.inputs': 0,
    'el.explanations = el.explanations': 0,
    'el.heads = 2; el.tokens = "the cat sat there"; el.mask = [[1,1,1,1],[1,1,1,1],[1,1,1,1],[1,1,1,1]].map((r) => r.map(Boolean))': 0,
  };
  for (const [change, want] of Object.entries(same)) {
    assert.is(await eventsAfter(page, change), want, change);
  }
  assert.is(await eventsAfter(page, 'el.heads = 3'), 1, 'heads 2 -> 3');
  assert.is(await eventsAfter(page, 'el.mask = [[1,0,0,0],[1,1,0,0],[1,1,1,0],[1,1,1,1]].map((r) => r.map(Boolean))'), 1, 'a new mask');
  assert.is(await eventsAfter(page, 'el.mask = [[1,0,0,0],[1,1,0,0],[1,1,1,0],[1,1,1,1]].map((r) => r.map(Boolean))'), 0, 'the same mask again');
  // Inputs equal to the draw change what the event reports (edited: true): one event, then none.
  assert.is(await eventsAfter(page, 'el.inputs = { WQ: el.state.WQ }'), 1, 'inputs {} -> { WQ }');
  assert.is(await eventsAfter(page, 'el.inputs = { WQ: el.state.WQ }'), 0, 'the same inputs again');
  assert.equal(problems, []);
});

test('a handler that sets the state it was given settles instead of looping', async ({ env }) => {
  const { page, problems } = await openWith(env, 'tokens="a b c"');
  await settled(page);
  const fired = await page.evaluate(async (sel) => {
    const el = document.querySelector(sel);
    let count = 0;
    // What a React component with mask={[...]} and setState in onattention-change does.
    el.addEventListener('attention-change', (e) => {
      count++;
      el.tokens = e.detail.tokens.join(' ');
      el.mask = [[true, false, false], [true, true, false], [true, true, true]];
    });
    el.mask = [[true, false, false], [true, true, false], [true, true, true]];
    await new Promise((r) => setTimeout(r, 1000));
    return count;
  }, E);
  assert.is(fired, 1);
  assert.equal(problems, []);
});

test.run();
