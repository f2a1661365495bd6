// The shipped code (every module under web/, in every room) never evaluates
// strings and never writes markup from strings: page input cannot become
// script or markup through the library.
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

const root = fileURLToPath(new URL('../..', import.meta.url));

test('shipped code never evaluates strings or writes markup from data', () => {
  // Every module under web/, in every room.
  const files = readdirSync(`${root}web`, { recursive: true }).filter((f) => f.endsWith('.js'));
  assert.ok(files.some((f) => f.includes('/')), 'the scan reaches the folders of web/');
  for (const file of files) {
    const text = readFileSync(`${root}web/${file}`, 'utf8');
    assert.not.match(text, /\beval\s*\(|new\s+Function\s*\(|\bFunction\s*\(|setTimeout\s*\(\s*['"`]|setInterval\s*\(\s*['"`]/, `${file}: string evaluation`);
    assert.not.match(text, /\.innerHTML\s*=|\.outerHTML\s*=|insertAdjacentHTML|document\.write/, `${file}: markup from strings`);
  }
});

test.run();
