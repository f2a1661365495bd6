#!/usr/bin/env node
// sizes.js - what the package and its pages weigh, measured from the files:
// the npm tarball (npm pack --dry-run), each part of it and who it is for,
// each wasm module, the shipped models, and the bytes a browser downloads for
// the explorer (every file gzipped on its own, as a server compresses them).
//
//   node scripts/sizes.js           print the table
//   node scripts/sizes.js --json    the measurements as JSON
//   node scripts/sizes.js --write   rewrite the marked sizes in README.md and docs/*.md
//
// Docs mark a size so this script and tests/package/sizes.test.js find it:
//   <!-- size:tarball -->465 kB<!-- /size -->
// The key names a measurement below; the unit (B, kB, KiB, MB, MiB) is kept by --write.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const root = fileURLToPath(new URL('..', import.meta.url));

/** Who each file of the tarball is for: the first rule that matches a path names its part. */
export const PARTS = [
  { part: 'types', for: 'TypeScript users (editors read them; nothing loads them at run time)', test: (p) => p.endsWith('.d.ts') },
  { part: 'wasm', for: 'everyone: the three builds of the C core, one loaded per instance', test: (p) => p.startsWith('dist/') && !p.endsWith('-threads.wasm') },
  { part: 'library', for: 'everyone: the JavaScript API (attention-wasm)', test: (p) => p === 'web/attention.js' || p.startsWith('web/core/') },
  { part: 'explorer', for: 'pages with <attention-explorer>, the story API and the full-page explorer', test: (p) => /^web\/(explorer|story)(\.js|\/)/.test(p) || ['web/page.js', 'web/icon.svg', 'index.html'].includes(p) },
  { part: 'pool', for: 'attention-wasm/pool users (several cores)', test: (p) => /^web\/pool(\.js|-worker\.js|\/)/.test(p) || /^dist\/attention-.*-threads\.wasm$/.test(p) },
  { part: 'models', for: 'the model view and attention-wasm/model users: the trained parameters', test: (p) => /^web\/model\/.*\.json$/.test(p) },
  { part: 'model', for: 'attention-wasm/model users and the model view', test: (p) => p === 'web/model.js' || p.startsWith('web/model/') },
  { part: 'cli', for: 'the command line (npx attention-wasm)', test: (p) => p === 'web/cli.js' },
  { part: 'c', for: 'whoever rebuilds the wasm (./build.sh) or reads the C manual (c/attention.h)', test: (p) => p.startsWith('c/') || p === 'build.sh' },
  { part: 'meta', for: 'npm and readers: package.json, README, LICENSE, CHANGELOG, SECURITY', test: () => true },
];

const gzip = (bytes) => gzipSync(bytes).length;   // zlib's default level 6, what servers commonly use
const read = (path) => readFileSync(`${root}${path}`);

/** npm pack --dry-run: the tarball's size, its unpacked size and its files (scripts not run: measure what is built). */
function pack() {
  const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  const [info] = JSON.parse(out);
  return { size: info.size, unpackedSize: info.unpackedSize, files: info.files.map((f) => ({ path: f.path, size: f.size })) };
}

/** The local files a set of ES module entries import, transitively (esbuild's metafile: static and dynamic imports). */
async function importGraph(entries) {
  const { build } = await import('esbuild');
  const result = await build({
    entryPoints: entries.map((e) => `${root}${e}`), bundle: true, write: false, metafile: true, format: 'esm',
    platform: 'browser', logLevel: 'silent', outdir: '/nonexistent', absWorkingDir: root,
  });
  return Object.keys(result.metafile.inputs).map((p) => p.replace(/^\.\//, '')).sort();
}

/** The module scripts an HTML page loads (<script type="module" src>), its icon, and the page itself. */
function pageFiles(html) {
  const text = read(html).toString();
  const scripts = [...text.matchAll(/<script[^>]*type="module"[^>]*src="([^"]+)"/g)].map((m) => m[1]);
  const links = [...text.matchAll(/<link[^>]*rel="icon"[^>]*href="([^"]+)"/g)].map((m) => m[1]);
  return { scripts, links };
}

/** Bytes a browser downloads for these files, each gzipped alone, and their raw size. */
function weigh(files) {
  let raw = 0;
  let gz = 0;
  for (const f of files) {
    const bytes = read(f);
    raw += bytes.length;
    gz += gzip(bytes);
  }
  return { files: files.length, raw, gzip: gz };
}

/** Every measurement, keyed as the docs' size markers name them. */
export async function measure() {
  const tarball = pack();
  const wasm = {};
  for (const name of ['relaxed', 'simd', 'scalar']) {
    const bytes = read(`dist/attention-${name}.wasm`);
    wasm[name] = { raw: bytes.length, gzip: gzip(bytes) };
  }
  const models = {};
  for (const f of readdirSync(`${root}web/model`).filter((n) => n.endsWith('.json')).sort()) {
    const bytes = read(`web/model/${f}`);
    models[f.replace(/\.json$/, '')] = { raw: bytes.length, gzip: gzip(bytes) };
  }
  const parts = PARTS.map((p) => ({ part: p.part, for: p.for, files: 0, bytes: 0 }));
  for (const f of tarball.files) {
    const i = PARTS.findIndex((p) => p.test(f.path));
    parts[i].files++;
    parts[i].bytes += f.size;
  }
  // Chromium validates relaxed SIMD, so the explorer's page loads attention-relaxed.wasm.
  const page = pageFiles('index.html');
  const pageModules = await importGraph(page.scripts);
  const explorerPage = weigh(['index.html', ...page.links, ...pageModules, 'dist/attention-relaxed.wasm']);
  const embedModules = await importGraph(['web/explorer.js']);
  const explorerEmbed = weigh([...embedModules, 'dist/attention-relaxed.wasm']);
  const coreModules = await importGraph(['web/attention.js']);
  const library = weigh([...coreModules, 'dist/attention-relaxed.wasm']);

  const values = {
    tarball: tarball.size,
    unpacked: tarball.unpackedSize,
    'wasm-relaxed': wasm.relaxed.raw,
    'wasm-simd': wasm.simd.raw,
    'wasm-scalar': wasm.scalar.raw,
    'explorer-page': explorerPage.gzip,
    'explorer-embed': explorerEmbed.gzip,
    'library-page': library.gzip,
  };
  for (const [name, m] of Object.entries(models)) values[`model-${name}`] = m.raw;
  for (const p of parts) values[`part-${p.part}`] = p.bytes;
  return { values, tarball, wasm, models, parts, explorerPage, explorerEmbed, library, pageModules };
}

const UNITS = { B: 1, kB: 1e3, KiB: 1024, MB: 1e6, MiB: 1024 * 1024 };
/** A size marker: <!-- size:key -->number unit<!-- /size -->. */
export const MARKER = /<!-- size:([a-z0-9-]+) -->(?:about )?([0-9.]+) ?(B|kB|KiB|MB|MiB)<!-- \/size -->/g;

/** The bytes a marker's text states. */
export function stated(number, unit) {
  return Number(number) * UNITS[unit];
}

/** bytes written in unit with as many digits as the docs use: integers, one decimal below 10. */
export function format(bytes, unit) {
  const v = bytes / UNITS[unit];
  return v >= 10 || unit === 'B' ? String(Math.round(v)) : v.toFixed(1);
}

/** The files whose size markers count: README.md, CONTRIBUTING.md and docs/*.md. */
export function docFiles() {
  const docs = existsSync(`${root}docs`) ? readdirSync(`${root}docs`).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`) : [];
  return ['README.md', 'CONTRIBUTING.md', ...docs].filter((f) => existsSync(`${root}${f}`));
}

const kb = (b) => `${(b / 1000).toFixed(1)} kB`;

async function main() {
  const m = await measure();
  if (process.argv.includes('--json')) {
    process.stdout.write(`${JSON.stringify(m, null, 2)}\n`);
    return;
  }
  if (process.argv.includes('--write')) {
    for (const f of docFiles()) {
      const text = readFileSync(`${root}${f}`, 'utf8');
      const next = text.replace(MARKER, (all, key, number, unit) => {
        if (!(key in m.values)) throw new Error(`${f}: no measurement named ${key}`);
        return all.replace(`${number} ${unit}`, `${format(m.values[key], unit)} ${unit}`).replace(`${number}${unit}`, `${format(m.values[key], unit)}${unit}`);
      });
      if (next !== text) {
        writeFileSync(`${root}${f}`, next);
        console.log(`rewrote the sizes in ${f}`);
      }
    }
    return;
  }
  console.log(`npm tarball: ${kb(m.tarball.size)} packed, ${kb(m.tarball.unpackedSize)} unpacked, ${m.tarball.files.length} files`);
  console.log('\npart        files   unpacked  for');
  for (const p of m.parts) console.log(`${p.part.padEnd(10)} ${String(p.files).padStart(6)} ${kb(p.bytes).padStart(10)}  ${p.for}`);
  console.log('\nwasm module                 raw       gzip');
  for (const [name, w] of Object.entries(m.wasm)) console.log(`dist/attention-${name}.wasm`.padEnd(26), kb(w.raw).padStart(9), kb(w.gzip).padStart(10));
  console.log('\nshipped model               raw       gzip');
  for (const [name, w] of Object.entries(m.models)) console.log(`web/model/${name}.json`.padEnd(26), kb(w.raw).padStart(9), kb(w.gzip).padStart(10));
  console.log('\ndownloaded by a browser (Chromium loads the relaxed-SIMD module), each file gzipped');
  for (const [label, w] of [['the explorer page (index.html)', m.explorerPage], ['an embed (web/explorer.js)', m.explorerEmbed], ['the API alone (web/attention.js)', m.library]]) {
    console.log(`${label.padEnd(34)} ${String(w.files).padStart(3)} files  ${kb(w.raw).padStart(9)} raw  ${kb(w.gzip).padStart(9)} gzip`);
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().catch((e) => {
    console.error(e.message);
    process.exit(1);
  });
}

