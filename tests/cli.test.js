// The command line as a newcomer reads it: --help in two aligned columns, the
// build it names is the one that ran, and step 3 names what it takes the
// softmax of.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

const bin = fileURLToPath(new URL('../web/cli.js', import.meta.url));
const run = (args, nodeFlags = []) => spawnSync(process.execPath, [...nodeFlags, bin, ...args], { encoding: 'utf8' });

const cli = suite('command line');

cli('--help: every option\'s text starts in the same column', () => {
  const r = run(['--help']);
  assert.is(r.status, 0, r.stderr);
  const options = r.stdout.split('\n').filter((l) => /^ {2}--/.test(l));
  assert.ok(options.length >= 16, `${options.length} option lines`);
  // The flag, then two or more spaces, then its text (a flag holds single spaces at most).
  const columns = new Set(options.map((l) => l.match(/^ {2}\S+(?: \S+)*? {2,}/)[0].length));
  assert.is(columns.size, 1, `descriptions start at columns ${[...columns]}:\n${options.join('\n')}`);
});

cli('it names the build that ran: relaxed SIMD when Node has it, scalar with --scalar', () => {
  const relaxed = run([], ['--experimental-wasm-relaxed-simd']);
  assert.is(relaxed.status, 0, relaxed.stderr);
  assert.match(relaxed.stdout, /float32 in the relaxed SIMD WebAssembly build/);
  assert.match(run(['--scalar']).stdout, /float32 in the scalar WebAssembly build/);
});

cli('with a window or softcap step 3 is the softmax of the logits step 2 printed', () => {
  const r = run(['--tokens', 'a b c', '--window', '1', '--softcap', '3']);
  assert.is(r.status, 0, r.stderr);
  assert.match(r.stdout, /Step 2, logits/);
  assert.match(r.stdout, /Step 3, attention weights softmax\(logits\)/);
  assert.match(run(['--causal']).stdout, /Step 3, attention weights softmax\(scaled \+ causal mask\)/);
});

cli('step 2 says what it divides: "scaled scores = scores / sqrt(3) = scores / 1.732"', () => {
  assert.match(run([]).stdout, /^Step 2, scaled scores = scores \/ sqrt\(3\) = scores \/ 1\.732 \(3 decimals\)$/m);
  assert.match(run(['--scale', '2']).stdout, /^Step 2, scaled scores = scores \* 2 \(3 decimals\)$/m);
});

cli('--embeddings word says how a word\'s seed is made', () => {
  assert.match(run(['--embeddings', 'word']).stdout, /FNV-1a hash of "7 " and the token/);
});

cli.run();
