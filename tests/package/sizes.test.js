// The sizes the docs state (<!-- size:key -->...<!-- /size --> markers) are
// within 5% of what scripts/sizes.js measures from the files: no typed figure
// goes stale. `node scripts/sizes.js --write` rewrites them.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { ensureBuilt } from '../../scripts/ensure-built.js';
import { MARKER, docFiles, format, measure, stated } from '../../scripts/sizes.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
// Sizes move a little with every change of code; 5% lets a page say "86 kB" through
// small edits and still catches a figure from another version (58 kB for 86).
const TOLERANCE = 0.05;

// At the top level, not in a before hook: uvu reports a throwing hook as no test run and exits 0.
ensureBuilt();
const m = await measure();

const test = suite('sizes in the docs');

test('every marked size in README.md and docs/ is within 5% of the measured size', () => {
  const wrong = [];
  let count = 0;
  for (const f of docFiles()) {
    const text = readFileSync(`${root}${f}`, 'utf8');
    for (const [, key, number, unit] of text.matchAll(MARKER)) {
      count++;
      const measured = m.values[key];
      if (measured === undefined) {
        wrong.push(`${f}: size:${key} names no measurement (${Object.keys(m.values).join(', ')})`);
        continue;
      }
      const bytes = stated(number, unit);
      if (Math.abs(bytes - measured) > TOLERANCE * measured) {
        wrong.push(`${f}: size:${key} says ${number} ${unit}, measured ${format(measured, unit)} ${unit} (node scripts/sizes.js --write)`);
      }
    }
  }
  assert.ok(count >= 5, `only ${count} size markers found`);
  assert.equal(wrong, []);
});

test('the README states the tarball, the wasm modules and the explorer page', () => {
  const readme = readFileSync(`${root}README.md`, 'utf8');
  const keys = new Set([...readme.matchAll(MARKER)].map((m) => m[1]));
  for (const key of ['tarball', 'unpacked', 'wasm-relaxed', 'wasm-simd', 'wasm-scalar', 'explorer-page']) {
    assert.ok(keys.has(key), `README.md has no size:${key} marker`);
  }
});

test('a marker with a stale number is caught (the check can fail)', () => {
  const text = `<!-- size:wasm-relaxed -->58 kB<!-- /size -->`;
  const [[, key, number, unit]] = [...text.matchAll(MARKER)];
  const measured = m.values[key];
  assert.ok(Math.abs(stated(number, unit) - measured) > TOLERANCE * measured);
});

test('the measurements add up: the parts make the unpacked tarball, the page includes the wasm', () => {
  const { values, parts, tarball } = m;
  assert.is(parts.reduce((s, p) => s + p.bytes, 0), tarball.files.reduce((s, f) => s + f.size, 0));
  assert.ok(values['explorer-page'] > values['explorer-embed']);
  assert.ok(values['explorer-embed'] > values['library-page']);
  assert.ok(m.pageModules.includes('web/explorer/element.js'));
});

test.run();
