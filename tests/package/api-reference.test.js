// docs/reference/ is what scripts/api-reference.js generates from the .d.ts
// files today: a change to the types without `node scripts/api-reference.js`
// fails here. The pages also name every exported declaration.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { OUT, committed, entries, generate } from '../../scripts/api-reference.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

// At the top level, not in a before hook: uvu reports a throwing hook as 0 of 5 and exits 0.
const pages = generate();
const now = committed();

const test = suite('API reference');

test('the committed reference is the one the .d.ts files generate', () => {
  assert.equal(Object.keys(now).sort(), Object.keys(pages).sort(), `the pages in ${OUT}/ (node scripts/api-reference.js)`);
  for (const [path, text] of Object.entries(pages)) {
    assert.ok(now[path] === text, `${path} is stale: run node scripts/api-reference.js`);
  }
});

test('one page per typed entry point of package.json, each listed in the index', () => {
  const list = entries();
  assert.ok(list.length >= 5, `${list.length} typed entry points`);
  for (const e of list) {
    assert.ok(pages[`${OUT}/${e.page}`], `no page for ${e.entry}`);
    assert.match(pages[`${OUT}/README.md`], `[${e.page}](${e.page})`);
  }
});

test('every exported name of every .d.ts file has a heading on its page', () => {
  const missing = [];
  for (const e of entries()) {
    const source = readFileSync(`${root}${e.types}`, 'utf8');
    const names = [...source.matchAll(/^export (?:declare )?(?:class|interface|type|function|const) (\w+)/gm)].map((m) => m[1]);
    assert.ok(names.length > 0, `${e.types} exports nothing`);
    const headings = new Set([...pages[`${OUT}/${e.page}`].matchAll(/^## (\S+)$/gm)].map((m) => m[1]));
    for (const n of names) if (!headings.has(n)) missing.push(`${e.page}: ${n}`);
  }
  assert.equal(missing, []);
});

test('a member documented in a .d.ts appears with its comment (KVCache#truncate, AttentionPool#threads)', () => {
  assert.match(pages[`${OUT}/attention.md`], 'truncate(length: number): void;');
  assert.match(pages[`${OUT}/attention.md`], 'constant time: the draft tokens speculative decoding rejects.');
  assert.match(pages[`${OUT}/pool.md`], '| `threads` (readonly) | `number` | Number of workers. |');
});

test('an edited page counts as stale (the check can fail)', () => {
  const path = `${OUT}/pool.md`;
  const edited = { ...pages, [path]: pages[path].replace('Number of workers.', 'Workers.') };
  assert.ok(edited[path] !== pages[path]);
});

test.run();
