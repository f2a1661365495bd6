// The parts an author can style with ::part(), in Chromium: docs/styling.md's part
// table names exactly the part names the explorer's shadow root carries
// (the full page with the Train part, where every part is present).
import { readFileSync } from 'node:fs';

import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { EXPLORER as E, settled, start } from '../browser.js';

/** The part names docs/styling.md's ::part() table lists (its first column, one or more `names` a row). */
function readmeParts(readme) {
  const start = readme.indexOf('| part | what |');
  assert.ok(start >= 0, 'docs/styling.md has a "| part | what |" table');
  const rows = readme.slice(start).split('\n').slice(2);
  const names = [];
  for (const row of rows) {
    if (!row.startsWith('|')) break;
    const first = row.split('|')[1];
    names.push(...[...first.matchAll(/`([^`]+)`/g)].map((m) => m[1]));
  }
  return names;
}

const test = suite('::part() names in Chromium');
test.before(async (ctx) => {
  ctx.env = await start();
});
test.after(async ({ env }) => env?.close());

test('docs/styling.md\'s part table lists every part the explorer carries, and no other', async ({ env }) => {
  const listed = readmeParts(readFileSync(new URL('../../docs/styling.md', import.meta.url), 'utf8'));
  assert.ok(listed.length > 10, `${listed.length} parts read`);
  assert.is(new Set(listed).size, listed.length, 'each part once');
  const { page, problems, context } = await env.page({ viewport: { width: 1366, height: 900 } });
  await page.goto(`${env.base}/?tokens=the+cat+sat+on+the+mat&train=1`);
  await settled(page);
  await page.waitForFunction((sel) => document.querySelector(sel).shadowRoot.querySelector('.train-target td[data-i]'), E);
  const carried = await page.$eval(E, (el) => [...new Set([...el.shadowRoot.querySelectorAll('[part]')].flatMap((n) => n.getAttribute('part').split(/\s+/)))]);
  assert.equal([...carried].sort(), [...listed].sort());
  assert.equal(problems, []);
  await context.close();
});

test.run();
