// The English encoder in Chromium: a page that loads the induction model
// never fetches english.json; loadModel('english') fetches it once, and the
// deterministic build gives the same bits as Node.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { loadModel } from '../../web/model.js';
import { start } from '../browser.js';

const WORDS = 'the big black cat sat on the mat'.split(' ');

const test = suite('the English encoder in Chromium');
let env;
test.before(async () => {
  env = await start();
});
test.after(async () => {
  await env?.close();
});

test('fetched only when asked for, and computes what Node computes', async () => {
  const { page, problems } = await env.page();
  const fetched = [];
  page.on('request', (request) => fetched.push(new URL(request.url()).pathname));
  await page.goto(`${env.base}/index.html`);
  await page.evaluate(async () => {
    const { loadModel } = await import('/web/model.js');
    await loadModel();
  });
  assert.ok(fetched.includes('/web/model/induction.json'), fetched.join(' '));
  assert.not.ok(fetched.includes('/web/model/english.json'), 'a page that did not ask for the English encoder fetched it');
  const got = await page.evaluate(async (words) => {
    const { loadModel } = await import('/web/model.js');
    const m = await loadModel('english');
    return { kind: m.kind, logits: Array.from(m.forward(words).logits.data), fill: m.fill(words, 3) };
  }, WORDS);
  assert.is(fetched.filter((p) => p === '/web/model/english.json').length, 1);
  const m = await loadModel('english');
  assert.is(got.kind, 'encoder');
  assert.equal(got.logits, Array.from(m.forward(WORDS).logits.data));
  assert.equal(got.fill, m.fill(WORDS, 3));
  assert.equal(problems, []);
});

test.run();
