// Every relative link in the README and the docs reaches a file of the
// repository, and every #anchor a heading of its page (GitHub's slugs), so
// moving a section or a page cannot leave a dead link behind.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

const root = fileURLToPath(new URL('../..', import.meta.url));
const md = (dir) => (existsSync(`${root}${dir}`) ? readdirSync(`${root}${dir}`).filter((f) => f.endsWith('.md')).map((f) => `${dir}/${f}`) : []);
const FILES = ['README.md', 'CONTRIBUTING.md', 'CHANGELOG.md', 'SECURITY.md', ...md('docs'), ...md('docs/reference'), 'bench/RESULTS.md'];

const prose = (text) => text.replace(/```[\s\S]*?```/g, '');
/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
const slug = (heading) => heading.replace(/`/g, '').trim().toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, '').replace(/ /g, '-');

/** The anchors of a markdown page; a repeated heading gets -1, -2, ... as on GitHub. */
function anchors(file) {
  const seen = new Map();
  const out = new Set();
  for (const m of prose(readFileSync(`${root}${file}`, 'utf8')).matchAll(/^#+ (.*)$/gm)) {
    const s = slug(m[1]);
    const n = seen.get(s);
    seen.set(s, n === undefined ? 0 : n + 1);
    out.add(n === undefined ? s : `${s}-${n + 1}`);
  }
  return out;
}

/** Dead links of one page: 'file: link (why)'. */
function deadLinks(file) {
  const dead = [];
  for (const m of prose(readFileSync(`${root}${file}`, 'utf8')).matchAll(/\]\(([^)\s]+)\)/g)) {
    const url = m[1];
    if (/^[a-z]+:/.test(url)) continue;
    const [path, hash] = url.split('#');
    const target = path ? normalize(join(dirname(file), path)) : file;
    if (!existsSync(`${root}${target}`)) dead.push(`${file}: ${url} (no such file)`);
    else if (hash && target.endsWith('.md') && !anchors(target).has(hash)) dead.push(`${file}: ${url} (no such heading)`);
  }
  return dead;
}

const test = suite('links in the docs');

test('every relative link and anchor resolves', () => {
  assert.equal(FILES.filter((f) => existsSync(`${root}${f}`)).flatMap(deadLinks), []);
});

test('the README links every page in docs/', () => {
  const readme = readFileSync(`${root}README.md`, 'utf8');
  const missing = md('docs').filter((f) => !readme.includes(`](${f})`));
  assert.equal(missing, []);
});

test('slugs follow GitHub: punctuation dropped, spaces to hyphens (the check can fail)', () => {
  assert.is(slug('Let your prose drive the figure (attention-wasm/story)'), 'let-your-prose-drive-the-figure-attention-wasmstory');
  assert.is(slug('Compact caches: float16 and int8'), 'compact-caches-float16-and-int8');
  assert.not.ok(anchors('README.md').has('no-such-heading'));
});

test.run();
