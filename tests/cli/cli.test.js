// The command line as a newcomer reads it: --help in two aligned columns, the
// build it names is the one that ran, step 3 names what it takes the
// softmax of, negative values and wide tokens, --rope (and --rope 0 refused),
// and --version.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

const bin = fileURLToPath(new URL('../../web/cli.js', import.meta.url));
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

cli('a scale no float32 holds is a usage error (exit 2, one line), not a stack trace', () => {
  for (const args of [['--scale', '1e39'], ['--softcap', '1e-46']]) {
    const r = run(args);
    assert.is(r.status, 2, args.join(' '));
    assert.match(r.stderr, /^attention-wasm: --(scale|softcap) must be .*float32/);
    assert.not.match(r.stderr, /\n\s+at /);
  }
});

cli('negative values as the help says: --window "-1 0" and --query-offset -3', () => {
  const w = run(['--window', '-1 0']);
  assert.is(w.status, 0, w.stderr);
  assert.match(w.stdout, /window unbounded back, 0 ahead/);
  const q = run(['--query-offset', '-3', '--causal']);
  assert.is(q.status, 0, q.stderr);
  assert.match(q.stdout, /query offset -3/);
});

cli('CJK and emoji tokens keep the columns aligned (a wide character takes two)', () => {
  const r = run(['--tokens', '猫 🐱 the é']);
  assert.is(r.status, 0, r.stderr);
  const step1 = r.stdout.split('Step 1')[1].split('Step 2')[0];
  const table = step1.split('\n').filter((l) => /^ {4}\S/.test(l));
  assert.is(table.length, 4);
  // Every row ends its last number in the same terminal column as the header's last label.
  const header = step1.split('\n').find((l) => /^ {5,}猫/.test(l));
  const widthOf = (s) => [...s].reduce((w, ch) => w + (/\p{Extended_Pictographic}|[\u4e00-\u9fff]/u.test(ch) ? 2 : 1), 0);
  const ends = new Set([header, ...table].map(widthOf));
  assert.is(ends.size, 1, [header, ...table].join('\n'));
});

cli('a row with no allowed key is named in step 3, and the usual slips get a hint', () => {
  assert.match(run(['--query-offset', '-3', '--causal']).stdout, /each row sums to 1, but the, cat, sat have no allowed key: all 0/);
  assert.not.match(run([]).stdout, /no allowed key/);
  assert.match(run(['--window', '-1', '0']).stderr, /goes in quotes: --window "-1 0"/);
  assert.match(run(['--casual']).stderr, /Did you mean --causal\?/);
  assert.match(run(['--seed', '-1']).stderr, /--seed expects a whole number \(0 or more\)/);
});

cli('--rope [theta]: bare it is theta 10000, before another flag too; the header says what turns; step 1 names the turned q and k', () => {
  const bare = run(['--rope', '--tokens', 'a b c']);
  assert.is(bare.status, 0, bare.stderr);
  assert.match(bare.stdout, /^rope: q and k turned by RoPE at their positions before the scores \(theta 10000, the first 2 dimensions in one pair \(0, 1\); d_k = 3 is odd and RoPE turns pairs, so dimension 2 is not turned; one pair turns 1 radian a position whatever theta is, which sets the slower pairs from d_k = 4\), in the kernel$/m);
  assert.match(bare.stdout, /^Step 1, raw scores QK\^T of q and k after RoPE/m);
  assert.match(run(['--tokens', 'a b c', '--rope']).stdout, /^rope: .*theta 10000/m);
  const theta = run(['--rope', '500', '--dk', '4']);
  assert.match(theta.stdout, /\(theta 500, all 4 dimensions in 2 pairs \(c, c \+ 2\)\)/);
  // The weights differ from the same call without RoPE.
  assert.not.equal(theta.stdout.split('Step 3')[1], run(['--dk', '4']).stdout.split('Step 3')[1]);
  const bad = run(['--rope', 'fast']);
  assert.is(bad.status, 2);
  assert.match(bad.stderr, /--rope expects nothing \(theta 10000\) or RoPE's theta/);
  assert.match(run(['--rope', '--dk', '1']).stderr, /--rope turns pairs of dimensions: it needs dk of 2 or more, got 1/);
});

cli('--rope 0 and --rope false are usage errors naming the option and what it takes (leaving --rope out is no RoPE)', () => {
  for (const value of ['0', 'false', ' 0 ']) {
    const r = run(['--rope', value]);
    assert.is(r.status, 2, `--rope "${value}": ${r.stdout.slice(0, 80)}`);
    assert.match(r.stderr, /^attention-wasm: --rope takes nothing \(theta 10000\) or RoPE's theta, a number of 1 or more; got "[^"]*"\. Leave --rope out for no RoPE\.$/m);
    assert.is(r.stdout, '');
  }
});

cli('--version prints the version in package.json and exits 0', () => {
  const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
  const r = run(['--version']);
  assert.is(r.status, 0, r.stderr);
  assert.is(r.stdout, `attention-wasm ${version}\n`);
  assert.match(run(['--help']).stdout, /^ {2}--version +print the version of attention-wasm$/m);
});

cli.run();
