// The npm package as users meet it: `npm pack`, the tarball installed offline
// into a fresh project, then Node ESM, require(), strict TypeScript, publint,
// and a Vite build and an esbuild bundle of a page with the explorer, shown
// in Chromium under the strict CSP.
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { start } from '../browser.js';
import { handbookTables } from '../helpers.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const work = `${root}tests/output/package`;
const consumer = `${work}/consumer`;
const bin = (name) => `${root}node_modules/.bin/${name}`;
const expected = handbookTables();
// Three wasm modules and the pool's two threads builds, the C sources (so users can rebuild; about
// 340 KB), the explorer (with the model view, the canvas heatmaps and the story API) and the two
// models with their trained parameters (the induction model about 100 KB, the English encoder about
// 330 KB) fit in this (2.2 MB today); the budget catches stray files (fixtures, outputs, examples,
// docs images), not growth of the code itself.
const MAX_UNPACKED = 2.5 * 1024 * 1024;

function sh(cmd, args, options = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 << 20, ...options });
  if (r.error) throw r.error;
  return r;
}

const test = suite('npm package');
test.before(async (ctx) => {
  rmSync(work, { recursive: true, force: true });
  mkdirSync(consumer, { recursive: true });
  const packed = JSON.parse(execFileSync('npm', ['pack', '--json', '--pack-destination', work], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }));
  ctx.pack = packed[0];
  ctx.tarball = `${work}/${packed[0].filename}`;
  cpSync(`${root}tests/consumers`, consumer, { recursive: true });
  writeFileSync(`${consumer}/package.json`, JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  const install = sh('npm', ['install', ctx.tarball, '--offline', '--no-audit', '--no-fund', '--no-package-lock'], { cwd: consumer });
  assert.is(install.status, 0, install.stderr);
});

test('the tarball holds what users need and nothing else, under 2.5 MiB unpacked', ({ pack }) => {
  const files = pack.files.map((f) => f.path);
  assert.ok(pack.unpackedSize <= MAX_UNPACKED, `${pack.unpackedSize} bytes unpacked`);
  for (const need of ['web/attention.js', 'web/attention.d.ts', 'web/explorer.js', 'web/explorer.d.ts', 'web/model.js', 'web/model.d.ts', 'web/model/induction.json', 'web/model/english.json', 'web/cli.js', 'dist/attention-relaxed.wasm', 'dist/attention-simd.wasm', 'dist/attention-scalar.wasm', 'README.md', 'LICENSE']) {
    assert.ok(files.includes(need), need);
  }
  for (const f of files) assert.not.match(f, /^(tests|bench|scripts|\.ci)\/|fixtures|\.test\.js$|corpus/, f);
});

const checkHandbook = (stdout) => {
  const got = JSON.parse(stdout);
  assert.equal(got.weights, expected.weights.map((r) => r.cells));
  assert.equal(got.output, expected.output.map((r) => r.cells));
  return got;
};

test('Node ESM consumer computes the handbook numbers (SIMD build)', () => {
  const r = sh(process.execPath, ['esm.mjs'], { cwd: consumer });
  assert.is(r.status, 0, r.stderr);
  assert.is(checkHandbook(r.stdout).simd, true);
});

test('Node require() consumer computes the handbook numbers (scalar build)', () => {
  const r = sh(process.execPath, ['--no-warnings', 'cjs.cjs'], { cwd: consumer });
  assert.is(r.status, 0, r.stderr);
  assert.is(checkHandbook(r.stdout).simd, false);
});

test('the pool runs from the installed package: workers found in node_modules, same bits, pool.array in place', () => {
  const r = sh(process.execPath, ['pool.mjs'], { cwd: consumer });
  assert.is(r.status, 0, r.stderr);
  assert.equal(JSON.parse(r.stdout), { same: true, split: 1, here: 1, sameIsa: true, memory: 'shared', inPlace: true, shared: true });
});

test('the CLI runs from the installed package', () => {
  const r = sh(process.execPath, [`${consumer}/node_modules/attention-wasm/web/cli.js`], { cwd: consumer });
  assert.is(r.status, 0, r.stderr);
  assert.match(r.stdout, /cat\s+0\.2617\s+0\.3769\s+0\.0806\s+0\.2808/);
});

test('strict TypeScript type-checks a consumer and catches a deliberate error', () => {
  const good = sh(bin('tsc'), ['--pretty', 'false', '-p', `${consumer}/ts/tsconfig.json`]);
  assert.is(good.status, 0, good.stdout + good.stderr);
  const bad = sh(bin('tsc'), ['--pretty', 'false', '-p', `${consumer}/ts/tsconfig.bad.json`]);
  assert.is.not(bad.status, 0);
  // TS2769 ("no overload matches"): attention() has a float16 overload.
  assert.match(bad.stdout, /bad\.mts\(5,\d+\): error TS(2322|2769)/);
});

test('the types check in a Node-only project: lib ES2022, types node, no DOM, no skipLibCheck', () => {
  const r = sh(bin('tsc'), ['--pretty', 'false', '-p', `${consumer}/ts/tsconfig.node.json`]);
  assert.is(r.status, 0, r.stdout + r.stderr);
});

test('React 19 + TypeScript: <attention-explorer> in JSX with typed properties and events', () => {
  const r = sh(bin('tsc'), ['--pretty', 'false', '-p', `${consumer}/ts/tsconfig.react.json`]);
  // The file's two @ts-expect-error lines (a wrong type, a misspelt setting) fail the check if
  // the element were typed loosely, so a pass means both the good and the bad props are seen.
  assert.is(r.status, 0, r.stdout + r.stderr);
});

test('publint reports no errors', () => {
  const r = sh(bin('publint'), ['run', `${consumer}/node_modules/attention-wasm`, '--level', 'error']);
  assert.is(r.status, 0, r.stdout + r.stderr);
  assert.not.match(r.stdout, /Errors:/);
});

async function showsHandbook(dir, path = '/') {
  const env = await start({ dir });
  try {
    const { page, problems } = await env.page();
    await page.goto(`${env.base}${path}`);
    await page.waitForFunction(() => document.querySelector('attention-explorer')?.state, null, { timeout: 20000 });
    const weights = await page.$$eval('attention-explorer table[data-id="weights-0"] tbody tr', (rows) =>
      rows.map((r) => [...r.querySelectorAll('td[data-i]')].map((td) => td.textContent)));
    assert.equal(weights, expected.weights.map((r) => r.cells));
    assert.equal(problems, []);
  } finally {
    await env.close();
  }
}

test('a Vite build of a page using the explorer shows the handbook numbers in Chromium', async () => {
  const dir = `${consumer}/vite`;
  cpSync(`${consumer}/page`, dir, { recursive: true });
  const r = sh(bin('vite'), ['build', '--logLevel', 'error', '--outDir', 'dist', '--emptyOutDir'], { cwd: dir });
  assert.is(r.status, 0, r.stdout + r.stderr);
  const html = readFileSync(`${dir}/dist/index.html`, 'utf8');
  assert.not.match(html, /<script(?![^>]*\bsrc=)[^>]*>/, 'no inline scripts (the CSP forbids them)');
  await showsHandbook(`${dir}/dist`);
});

test('an esbuild bundle of a page using the explorer shows the handbook numbers in Chromium', async () => {
  const dir = `${consumer}/esbuild`;
  mkdirSync(`${dir}/dist`, { recursive: true });
  writeFileSync(`${dir}/index.html`, readFileSync(`${consumer}/page/index.html`, 'utf8').replace('./main.js', './build/main.js'));
  const r = sh(bin('esbuild'), [`${consumer}/page/main.js`, '--bundle', '--format=esm', '--outdir=build', '--log-level=error'], { cwd: dir });
  assert.is(r.status, 0, r.stdout + r.stderr);
  // The documented esbuild recipe: the bundle looks for ../dist/*.wasm beside itself.
  for (const f of ['attention-relaxed.wasm', 'attention-simd.wasm', 'attention-scalar.wasm']) copyFileSync(`${consumer}/node_modules/attention-wasm/dist/${f}`, `${dir}/dist/${f}`);
  await showsHandbook(dir);
});

test.run();
