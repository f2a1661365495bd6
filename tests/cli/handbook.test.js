// The command line's worked example: with no arguments it prints the
// handbook's four tables, --scalar the same, flags change the computation,
// --help, and bad input named on stderr with exit code 2.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { handbookTables } from '../helpers.js';

const expected = handbookTables();

const cli = suite('command line');
const bin = fileURLToPath(new URL('../../web/cli.js', import.meta.url));
const run = (...args) => spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8' });

cli('with no arguments prints the four handbook tables with token labels', () => {
  const r = run();
  assert.is(r.status, 0, r.stderr);
  for (const [step, rows] of Object.entries(expected)) {
    for (const { label, cells } of rows) {
      const pattern = new RegExp(`^\\s*${label}\\s+${cells.map((c) => c.replace('.', '\\.')).join('\\s+')}\\s*$`, 'm');
      assert.match(r.stdout, pattern, `${step} row ${label}`);
    }
  }
  assert.match(r.stdout, /Step 1, raw scores/);
  assert.match(r.stdout, /Step 4, output A @ V, shape \(4, 3\)/);
});

cli('--scalar prints the same tables', () => {
  const a = run(), b = run('--scalar');
  assert.is(b.status, 0);
  assert.is(b.stdout.replace('scalar', 'SIMD128'), a.stdout);
});

cli('flags change the computation: --causal zeroes future weights, --heads prints each head', () => {
  const r = run('--tokens', 'a b c', '--causal', '--heads', '2', '--kv-heads', '1', '--seed', '3', '--dk', '4', '--dv', '2', '--d-model', '5');
  assert.is(r.status, 0, r.stderr);
  assert.match(r.stdout, /=== Head 2 of 2 \(kv head 1\) ===/);
  assert.match(r.stdout, /^\s+a\s+1\.0000\s+0\.0000\s+0\.0000$/m);
  assert.match(r.stdout, /shape \(3, 2\)/);
});

cli('--help prints usage and exits 0', () => {
  const r = run('--help');
  assert.is(r.status, 0);
  assert.match(r.stdout, /Usage: attention-wasm/);
  for (const flag of ['--tokens', '--seed', '--d-model', '--dk', '--dv', '--heads', '--causal', '--help']) assert.ok(r.stdout.includes(flag), flag);
});

for (const [args, message] of [
  [['--bogus'], /Unknown option '--bogus'/],
  [['--dk', 'x'], /--dk expects a whole number \(0 or more\), got "x"/],
  [['--seed', '-1'], /--seed/],
  [['--seed', '4294967296'], /seed must be an integer from 0 to 4294967295/],
  [['--heads', '3', '--kv-heads', '2'], /multiple of kv-heads/],
  [['--tokens', '   '], /--tokens needs at least one word/],
  [['--d-model', '0'], /d-model must be an integer from 1 to 512/],
  [['--scale', 'abc'], /--scale expects a number/],
  [['extra'], /Unexpected argument|positional/i],
]) {
  cli(`bad input ${JSON.stringify(args)} says what is wrong and exits 2`, () => {
    const r = run(...args);
    assert.is(r.status, 2, r.stdout);
    assert.match(r.stderr, message);
    assert.is(r.stdout, '');
  });
}
cli.run();
