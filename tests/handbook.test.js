// The handbook's worked example, every printed value, both builds, through
// the same code the explorer and the command line use; and the CLI itself.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { loadAttention } from '../web/attention.js';
import { computeExample, normalizeConfig } from '../web/worked/computation.js';
import { DIGITS, fixed } from '../web/worked/format.js';
import { handbookTables } from './helpers.js';

const expected = handbookTables();

for (const simd of [true, false]) {
  const s = suite(`handbook example, ${simd ? 'SIMD' : 'scalar'} build`);
  s.before(async (ctx) => {
    ctx.attn = await loadAttention({ simd });
    ctx.ex = computeExample(ctx.attn, normalizeConfig());
  });
  s('runs the build it was asked for', ({ attn }) => assert.is(attn.simd, simd));
  for (const step of ['scores', 'scaled', 'weights', 'output']) {
    s(`step ${step}: every value at printed precision`, ({ ex }) => {
      const m = ex.heads[0][step];
      const rows = expected[step];
      assert.is(m.rows, 4);
      assert.is(m.cols, rows[0].cells.length);
      rows.forEach(({ label, cells }, i) => {
        assert.is(ex.tokens[i], label);
        cells.forEach((cell, j) => assert.is(fixed(m.get(i, j), DIGITS[step]), cell, `${step}[${label}][${j}]`));
      });
    });
  }
  s('weight rows sum to 1', ({ ex }) => {
    for (const row of ex.heads[0].weights.toArray()) assert.ok(Math.abs(row.reduce((a, b) => a + b) - 1) < 1e-6);
  });
  s('the fused output path gives the same printed output', ({ attn, ex }) => {
    const { q, k, v } = ex.heads[0];
    const out = attn.attention(q, k, v).output;
    expected.output.forEach(({ cells }, i) => cells.forEach((cell, j) => assert.is(fixed(out.get(i, j), 4), cell)));
  });
  s.run();
}

const cli = suite('command line');
const bin = fileURLToPath(new URL('../web/cli.js', import.meta.url));
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
