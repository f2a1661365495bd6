// Every ```js run block in README.md and docs/*.md is a complete program:
// each runs in Node against this checkout and exits 0, so no snippet rots.
// A ```js block without `run` must say why just above it
// (<!-- not run: ... -->): a fragment cannot slip in unmarked.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { ensureBuilt } from '../../scripts/ensure-built.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
// Inside the package, so `import ... from 'attention-wasm'` resolves to this checkout by the
// package's self-reference (its name and exports), as it does for an installed copy.
const work = `${root}tests/output/docs-snippets`;
// The slowest snippet trains a model for 100 steps (a few seconds); a hang must not stall CI.
const TIMEOUT_MS = 120_000;

/** The markdown files whose snippets count. */
function docFiles() {
  const docs = existsSync(`${root}docs`) ? readdirSync(`${root}docs`).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`) : [];
  return ['README.md', ...docs];
}

/** The fenced blocks of a markdown text: { info, code, line, before } (before: the line above the fence). */
function fences(text) {
  const lines = text.split('\n');
  const out = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)(.*)$/.exec(lines[i]);
    if (!open || open[1] === '') continue;
    const start = i;
    const body = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i]); i++) body.push(lines[i]);
    out.push({ lang: open[1], flags: open[2].trim().split(/\s+/).filter(Boolean), code: `${body.join('\n')}\n`, line: start + 1, before: lines[start - 1] ?? '' });
  }
  return out;
}

/** Runs a program in Node from a file in `work`; returns spawnSync's result. */
function runProgram(name, code) {
  const file = `${work}/${name}.mjs`;
  writeFileSync(file, code);
  return spawnSync(process.execPath, [file], { cwd: work, encoding: 'utf8', timeout: TIMEOUT_MS, maxBuffer: 16 << 20 });
}

const snippets = [];
for (const f of docFiles()) {
  for (const b of fences(readFileSync(`${root}${f}`, 'utf8'))) {
    if (b.lang === 'js' && b.flags.includes('run')) snippets.push({ ...b, file: f });
  }
}

ensureBuilt();
rmSync(work, { recursive: true, force: true });
mkdirSync(work, { recursive: true });

const test = suite('docs snippets');

test('the docs have runnable snippets (README, api, kv-cache, pool, model, backward)', () => {
  const files = new Set(snippets.map((s) => s.file));
  for (const f of ['README.md', 'docs/api.md', 'docs/kv-cache.md', 'docs/pool.md', 'docs/model.md', 'docs/backward.md']) {
    assert.ok(files.has(f), `${f} has no \`\`\`js run block`);
  }
});

test('every ```js block is marked run, or says above it why it is not', () => {
  const bare = [];
  for (const f of docFiles()) {
    for (const b of fences(readFileSync(`${root}${f}`, 'utf8'))) {
      if (b.lang === 'js' && !b.flags.includes('run') && !/^<!-- not run: .+ -->$/.test(b.before.trim())) bare.push(`${f}:${b.line}`);
    }
  }
  assert.equal(bare, []);
});

for (const s of snippets) {
  test(`${s.file}:${s.line} runs`, () => {
    const name = `${s.file.replace(/[/.]/g, '-')}-${s.line}`;
    const r = runProgram(name, s.code);
    assert.is(r.error, undefined, `${s.file}:${s.line}: ${r.error?.message}`);
    assert.is(r.status, 0, `${s.file}:${s.line} exited ${r.status}:\n${r.stderr}`);
  });
}

test('a fragment with an undefined name fails (the check can fail)', () => {
  const r = runProgram('fragment', "import { loadAttention } from 'attention-wasm';\nconst attn = await loadAttention();\nattn.attention(q, k, v);\n");
  assert.is.not(r.status, 0);
  assert.match(r.stderr, /q is not defined/);
});

test.run();
