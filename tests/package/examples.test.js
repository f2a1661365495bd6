// Every program in examples/ as a user runs it, against the packed tarball
// (installed into a copy of the example, the bundlers and React taken from
// this repository's devDependencies): the Node programs' output, the pages
// with no build step, and Vite, webpack 5 (production, default minimizer),
// esbuild (as examples/esbuild/build.mjs does it) and React builds, each
// shown in Chromium: the pool's result has one instance's bits, the
// explorer's model view starts a training worker, the handbook's numbers.
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { ensureBuilt } from '../../scripts/ensure-built.js';
import { EXPLORER as E, start } from '../browser.js';
import { handbookTables } from '../helpers.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const work = `${root}tests/output/examples`;
const bin = (name) => `${root}node_modules/.bin/${name}`;
const handbook = handbookTables();
// Bundles and a cold Chromium on a shared 2-core machine: generous, as a
// wait, never as a claim about speed.
const WAIT_MS = 120_000;

function sh(cmd, args, options = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 << 20, ...options });
  if (r.error) throw r.error;
  return r;
}

// examples/<name> copied to tests/output/examples/<name> with the tarball unpacked as its attention-wasm.
function install(name, tarball) {
  const dir = `${work}/${name}`;
  rmSync(dir, { recursive: true, force: true });
  cpSync(`${root}examples/${name}`, dir, { recursive: true, filter: (src) => !src.includes('node_modules') });
  mkdirSync(`${dir}/node_modules/attention-wasm`, { recursive: true });
  execFileSync('tar', ['-xzf', tarball, '-C', `${dir}/node_modules/attention-wasm`, '--strip-components=1']);
  return dir;
}

const test = suite('examples/ against the packed tarball');
test.before(async (ctx) => {
  ensureBuilt();
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const packed = JSON.parse(execFileSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }));
  ctx.tarball = `${work}/${packed[0].filename}`;
  ctx.env = await start({ dir: work });
});
test.after(async ({ env }) => env?.close());

// A page of the served examples folder, with the problems it reported.
async function open(env, path) {
  const { page, problems } = await env.page();
  await page.goto(`${env.base}/${path}`);
  return { page, problems };
}

// The pool's line on a bundled page, then the model view's training worker.
async function poolAndTraining(env, path) {
  const { page, problems } = await open(env, path);
  await page.waitForFunction(() => !/working/.test(document.querySelector('#pool').textContent), null, { timeout: WAIT_MS });
  assert.match(await page.textContent('#pool'), /^the same bits \(2 workers, /);
  const shadow = page.locator(E);
  await shadow.locator('.model-train button:text("Train from scratch")').click({ timeout: WAIT_MS });
  await page.waitForFunction((sel) => /^step \d+/.test(document.querySelector(sel).shadowRoot.querySelector('.model-status')?.textContent ?? ''), E, { timeout: WAIT_MS });
  assert.equal(problems, []);
}

test('node/attention.mjs prints the handbook numbers', ({ tarball }) => {
  const dir = install('node', tarball);
  const r = sh(process.execPath, ['attention.mjs'], { cwd: dir });
  assert.is(r.status, 0, r.stderr);
  for (const [i, token] of ['the', 'cat', 'sat', 'there'].entries()) {
    assert.match(r.stdout, new RegExp(`${token}\\s+${handbook.weights[i].cells.join('\\s+')}\\n`), `weights row of ${token}`);
  }
});

test('node/decode.mjs: the cache loop equals full causal attention', () => {
  const r = sh(process.execPath, ['decode.mjs'], { cwd: `${work}/node` });
  assert.is(r.status, 0, r.stderr);
  const diff = Number(/largest difference (\S+)/.exec(r.stdout)?.[1]);
  // Both sides compute in float32, the same sums in another order.
  assert.ok(diff < 1e-5, r.stdout);
});

test('node/pool.mjs: two workers, the same bits', () => {
  const r = sh(process.execPath, ['pool.mjs'], { cwd: `${work}/node` });
  assert.is(r.status, 0, r.stderr);
  assert.match(r.stdout, /^2 workers, .*same bits: true$/m);
});

test('node/backward.mjs: the gradient equals a central difference', () => {
  const r = sh(process.execPath, ['backward.mjs'], { cwd: `${work}/node` });
  assert.is(r.status, 0, r.stderr);
  const [, analytic, numeric] = /backward pass (\S+), central difference (\S+)/.exec(r.stdout);
  assert.ok(Math.abs(analytic - numeric) < 1e-3, r.stdout);
});

test('browser/: no build step, the weights table and the explorer', async ({ tarball, env }) => {
  install('browser', tarball);
  const { page, problems } = await open(env, 'browser/index.html');
  await page.waitForFunction((sel) => document.querySelector('#weights tr:nth-child(2)') && document.querySelector(sel)?.state, E, { timeout: WAIT_MS });
  assert.is(await page.$$eval('#weights tr', (rows) => rows.length), 5);
  const handbookRow = await page.$eval(E, (el) => el.state.weights.toArray()[0].map((x) => x.toFixed(4)));
  assert.equal(handbookRow, handbook.weights[0].cells);
  assert.equal(problems, []);
});

test('vite/: vite build; the pool and the model worker run from the bundle', async ({ tarball, env }) => {
  const dir = install('vite', tarball);
  const r = sh(bin('vite'), ['build', '--logLevel', 'error', '--base', './'], { cwd: dir });
  assert.is(r.status, 0, r.stdout + r.stderr);
  await poolAndTraining(env, 'vite/dist/index.html');
});

test('webpack/: a production build with the default minimizer; the pool and the model worker run', async ({ tarball, env }) => {
  const dir = install('webpack', tarball);
  const require = createRequire(`${root}package.json`);
  const webpack = require('webpack');
  const config = { ...require(`${dir}/webpack.config.js`), context: dir };
  const stats = await new Promise((resolve, reject) => webpack(config, (err, s) => (err ? reject(err) : resolve(s))));
  assert.not.ok(stats.hasErrors(), stats.toString({ colors: false, all: false, errors: true }));
  await poolAndTraining(env, 'webpack/index.html');
});

test('esbuild/: node build.mjs; the pool and the model worker run', async ({ tarball, env }) => {
  const dir = install('esbuild', tarball);
  const r = sh(process.execPath, ['build.mjs'], { cwd: dir });
  assert.is(r.status, 0, r.stdout + r.stderr);
  await poolAndTraining(env, 'esbuild/index.html');
});

test('react/: a Vite build of a React 19 app; props and events, no render loop', async ({ tarball, env }) => {
  const dir = install('react', tarball);
  const r = sh(bin('vite'), ['build', '--logLevel', 'error', '--base', './'], { cwd: dir });
  assert.is(r.status, 0, r.stdout + r.stderr);
  const { page, problems } = await open(env, 'react/dist/index.html');
  await page.waitForFunction(() => document.querySelector('#row')?.textContent !== '', null, { timeout: WAIT_MS });
  assert.is(await page.textContent('#row'), handbook.weights[0].cells.join(' '));
  const settle = async () => {
    await page.waitForTimeout(1000);
    return Number(await page.textContent('#changes'));
  };
  const first = await settle();
  assert.ok(first >= 1 && first <= 2, `${first} changes after the first render`);
  await page.check('input[type="checkbox"]');
  const causal = await settle();
  assert.is(causal, first + 1, 'one change for the mask');
  assert.is(await settle(), causal, 'no more changes without input: no render loop');
  assert.equal(await page.$eval(E, (el) => el.mask[0]), [true, false, false, false]);
  assert.equal(problems, []);
});

test('article/: figures and the story API, no build step', async ({ tarball, env }) => {
  install('article', tarball);
  const { page, problems } = await open(env, 'article/index.html');
  await page.waitForFunction(() => [...document.querySelectorAll('attention-explorer')].every((el) => el.state), null, { timeout: WAIT_MS });
  assert.is(await page.$eval('#fig1', (el) => el.causal), false);
  await page.click('#causal');
  await page.waitForFunction(() => document.querySelector('#fig1').causal, null, { timeout: WAIT_MS });
  assert.is(await page.$eval('#fig2', (el) => el.heads), 2);
  assert.equal(problems, []);
});

test('every example folder is run by a test here', () => {
  const source = readFileSync(fileURLToPath(import.meta.url), 'utf8');
  const run = new Set([...source.matchAll(/install\('([a-z]+)'/g)].map((m) => m[1]));
  const folders = readdirSync(`${root}examples`, { withFileTypes: true }).filter((f) => f.isDirectory()).map((f) => f.name);
  assert.equal([...run].sort(), folders.sort());
});

test.run();
