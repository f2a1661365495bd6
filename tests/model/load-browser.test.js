// The model in Chromium: loadModel() finds the shipped file beside
// web/model.js by fetch (no network beyond the page's own server), and the
// deterministic build gives the same bits as Node.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { createModel, loadModel } from '../../web/model.js';
import { start } from '../browser.js';

const SENTENCE = 'a big dog went home after school with my friend'.split(' ');

const test = suite('the model in Chromium');
let env;
test.before(async () => {
  env = await start();
});
test.after(async () => {
  await env?.close();
});

test('loads the shipped model and computes what Node computes; a seed trains the same', async () => {
  const { page, problems } = await env.page();
  await page.goto(`${env.base}/index.html`);
  const got = await page.evaluate(async (words) => {
    const { createModel, loadModel } = await import('/web/model.js');
    const m = await loadModel();
    const fresh = await createModel({ seed: 3 });
    const losses = [];
    for (let i = 0; i < 5; i++) losses.push(fresh.trainStep());
    return { logits: Array.from(m.forward([...words, ...words]).logits.data), accuracy: m.evaluate({ sequences: 16 }).accuracy, losses };
  }, SENTENCE);
  const m = await loadModel();
  const fresh = await createModel({ seed: 3 });
  const losses = [];
  for (let i = 0; i < 5; i++) losses.push(fresh.trainStep());
  assert.equal(got.logits, Array.from(m.forward([...SENTENCE, ...SENTENCE]).logits.data));
  assert.is(got.accuracy, m.evaluate({ sequences: 16 }).accuracy);
  assert.equal(got.losses, losses);
  assert.equal(problems, []);
});

test.run();
