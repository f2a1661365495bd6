// index.html leads to every part: the four steps, the lines view, Train, the
// model view, a gallery of figures and the story page, each link opening
// (served by what npm start serves); the introduction follows the mode, so
// in model mode it no longer speaks of the handbook's "the cat sat there".
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { serve } from '../../scripts/serve.js';
import { settled, start } from '../browser.js';

const test = suite('the front page in Chromium');
test.before(async (ctx) => {
  ctx.env = await start();
  // What npm start serves: the project folder with its public paths only.
  ctx.server = await serve({ port: 0 });
});
test.after(async ({ env, server }) => {
  await env?.close();
  await new Promise((resolve) => server?.close(resolve));
});

test('a link to every part, each one served by npm start', async ({ env, server }) => {
  const { page, problems } = await env.page();
  await page.goto(`${env.base}/`);
  await settled(page);
  const links = await page.$$eval('nav.parts a', (as) => as.map((a) => ({ text: a.textContent, href: a.getAttribute('href') })));
  const hrefs = links.map((l) => l.href).join(' ');
  for (const want of [/\?step=scores/, /train=1/, /model=induction/, /story\.html/, /article\.html/, /train-figure\.html/]) {
    assert.match(hrefs, want);
  }
  const base = `http://127.0.0.1:${server.address().port}/`;
  for (const { href } of links) {
    const res = await fetch(new URL(href, base));
    assert.is(res.status, 200, `${href}: HTTP ${res.status} from npm start's server`);
  }
  assert.equal(problems, []);
});

test('the introduction follows the mode: the handbook example, or the trained model', async ({ env }) => {
  const { page, problems } = await env.page();
  await page.goto(`${env.base}/`);
  await settled(page);
  const shown = () => page.$$eval('.lede', (ps) => ps.filter((p) => !p.hidden).map((p) => p.textContent));
  assert.match((await shown()).join(' '), /the cat sat there/);
  await page.goto(`${env.base}/?model=induction`);
  await page.waitForFunction(() => document.querySelector('attention-explorer').shadowRoot.querySelector('.model-part:not([hidden])'), null, { timeout: 60_000 });
  await page.waitForFunction(() => !document.querySelector('.lede[data-mode="model:induction"]').hidden);
  const text = (await shown()).join(' ');
  assert.not.match(text, /the cat sat there/);
  assert.match(text, /tiny two-layer transformer/);
  assert.equal(problems, []);
});

test('a model the page cannot load gets the generic introduction and a message that says what model takes', async ({ env }) => {
  const { page } = await env.page();
  await page.goto(`${env.base}/?model=bogus`);
  await page.waitForFunction(() => /could not be loaded/.test(document.querySelector('attention-explorer').shadowRoot.querySelector('.message').textContent), null, { timeout: 60_000 });
  const shown = await page.$$eval('.lede', (ps) => ps.filter((p) => !p.hidden).map((p) => p.dataset.mode));
  assert.equal(shown, ['model']);
  const lede = await page.$eval('.lede[data-mode="model"]', (p) => p.textContent);
  assert.not.match(lede, /Repeat|Train from scratch/);
  const message = await page.$eval('attention-explorer', (el) => el.shadowRoot.querySelector('.message').textContent);
  assert.match(message, /^model="bogus" could not be loaded \(model takes "english", "induction" or the address of a saved model\): /);
});

test.run();
