#!/usr/bin/env node
// api-reference.js - writes docs/reference/*.md, the API reference, from the
// .d.ts files the package's exports name (package.json "exports" ... "types"):
// one page per entry point, every exported name with its signature and its
// JSDoc, and docs/reference/README.md listing them.
//
//   node scripts/api-reference.js           write docs/reference/
//   node scripts/api-reference.js --check   exit 1 when the committed pages differ
//
// The .d.ts files are parsed with @babel/parser (a devDependency): TypeDoc
// needs TypeScript 5's compiler API, which the repo's TypeScript 7 does not
// offer (it has only an unstable client of its native compiler), and the
// reference needs no type checking, only each declaration's text and comment.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
export const OUT = 'docs/reference';

function parser() {
  try {
    return createRequire(import.meta.url)('@babel/parser');
  } catch {
    throw new Error('api-reference: @babel/parser is not installed; run `npm ci` (it is a devDependency)');
  }
}

/** The package's entry points that have types: { entry: 'attention-wasm/pool', types: 'web/pool.d.ts', page: 'pool.md' }. */
export function entries() {
  const pkg = JSON.parse(readFileSync(`${root}package.json`, 'utf8'));
  return Object.entries(pkg.exports)
    .filter(([, v]) => typeof v === 'object' && v.types)
    .map(([key, v]) => {
      const types = v.types.replace(/^\.\//, '');
      return { entry: key === '.' ? pkg.name : `${pkg.name}/${key.replace(/^\.\//, '')}`, types, page: `${types.split('/').pop().replace(/\.d\.ts$/, '')}.md` };
    });
}

/** The text of a /** ... *\/ comment, its lines joined as paragraphs; '' for none. */
function jsdoc(node) {
  const c = (node.leadingComments ?? []).filter((x) => x.type === 'CommentBlock' && x.value.startsWith('*')).pop();
  if (!c) return '';
  return c.value.replace(/^\*/, '').split('\n').map((l) => l.replace(/^\s*\* ?/, '').trimEnd()).join('\n').trim();
}

/** One line for a table cell: whitespace collapsed, pipes escaped. */
const cell = (text) => text.replace(/\s+/g, ' ').trim().replace(/\|/g, '\\|');

/** The source text of a node with its comments removed and its indentation evened out. */
function text(source, node, comments) {
  let out = '';
  let at = node.start;
  for (const c of comments) {
    if (c.start < node.start || c.end > node.end) continue;
    out += source.slice(at, c.start);
    at = c.end;
  }
  out += source.slice(at, node.end);
  // Later lines keep their indentation relative to the node's own column.
  const column = node.loc.start.column;
  const lines = out.split('\n').filter((l) => l.trim() !== '');
  return lines.map((l, i) => (i === 0 ? l.trim() : l.slice(Math.min(column, /^ */.exec(l)[0].length)).trimEnd())).join('\n');
}

const memberName = (m) => (m.key ? (m.computed ? `[${m.key.type === 'MemberExpression' ? `${m.key.object.name}.${m.key.property.name}` : m.key.name}]` : m.key.name ?? m.key.value) : m.kind === 'constructor' ? 'constructor' : '');

/** A class's or interface's members as markdown: a table of properties, then the methods with their overloads. */
function members(source, list, comments) {
  const props = [];
  const methods = new Map();
  for (const m of list) {
    if (m.accessibility === 'private') continue;
    const isMethod = m.type === 'TSMethodSignature' || m.type === 'TSDeclareMethod' || m.type === 'ClassMethod';
    if (isMethod) {
      const name = memberName(m);
      if (!methods.has(name)) methods.set(name, { sigs: [], docs: [] });
      const entry = methods.get(name);
      entry.sigs.push(text(source, m, comments).replace(/;$/, '') + ';');
      const d = jsdoc(m);
      if (d) entry.docs.push(d);
    } else if (m.type === 'TSIndexSignature') {
      props.push({ name: text(source, m, comments).replace(/:[^:]*$/, ''), type: text(source, m.typeAnnotation.typeAnnotation, comments), doc: jsdoc(m) });
    } else {
      const ann = m.typeAnnotation?.typeAnnotation;
      const mods = [m.static ? 'static' : '', m.readonly ? 'readonly' : ''].filter(Boolean).join(' ');
      props.push({ name: `${memberName(m)}${m.optional ? '?' : ''}`, mods, type: ann ? text(source, ann, comments) : 'unknown', doc: jsdoc(m) });
    }
  }
  const out = [];
  if (props.length) {
    out.push('| property | type | |', '|---|---|---|');
    for (const p of props) out.push(`| \`${p.name}\`${p.mods ? ` (${p.mods})` : ''} | \`${cell(p.type)}\` | ${cell(p.doc)} |`);
    out.push('');
  }
  for (const [name, m] of methods) {
    out.push(`### ${name}`, '', '```ts', ...m.sigs, '```', '');
    for (const d of m.docs) out.push(d, '');
  }
  return out;
}

/** A declaration's kind as the page names it. */
function kindOf(d) {
  switch (d.type) {
    case 'ClassDeclaration': return 'class';
    case 'TSInterfaceDeclaration': return 'interface';
    case 'TSTypeAliasDeclaration': return 'type';
    case 'TSDeclareFunction': return 'function';
    case 'VariableDeclaration': return 'const';
    default: return d.type;
  }
}

/** The parsed .d.ts file of an entry point. */
function parse(types) {
  const source = readFileSync(`${root}${types}`, 'utf8');
  return { source, ast: parser().parse(source, { sourceType: 'module', plugins: [['typescript', { dts: true }]], attachComment: true }) };
}

/** The exported names of an entry point's .d.ts file. */
function exportedNames(types) {
  return parse(types).ast.program.body
    .filter((n) => n.type === 'ExportNamedDeclaration' && n.declaration)
    .map((n) => n.declaration.id?.name ?? n.declaration.declarations?.[0]?.id?.name);
}

const anchor = (name) => name.toLowerCase().replace(/ /g, '-');

/** "Uses" links: the exported types a declaration's text names, each to its section (here or on another page). */
function uses(item, links, pageName) {
  const names = new Set();
  for (const m of item.text.matchAll(/\b[A-Z]\w*\b/g)) if (links.has(m[0]) && m[0] !== item.name) names.add(m[0]);
  if (names.size === 0) return [];
  const refs = [...names].sort().map((n) => {
    const target = links.get(n);
    return `[${n}](${target === pageName ? '' : target}#${anchor(n)})`;
  });
  return [`Uses: ${refs.join(', ')}.`, ''];
}

/** The markdown page of one entry point; links maps every exported name to its page. */
export function page({ entry, types, page: pageName }, links = new Map()) {
  const { source, ast } = parse(types);
  const comments = ast.comments;
  const items = [];
  for (const node of ast.program.body) {
    if (node.type === 'ExportNamedDeclaration' && node.declaration) {
      const d = node.declaration;
      const doc = jsdoc(node) || jsdoc(d);
      const name = d.id?.name ?? d.declarations?.[0]?.id?.name;
      const last = items[items.length - 1];
      if (d.type === 'TSDeclareFunction' && last?.name === name && last.kind === 'function') {
        last.sigs.push(text(source, node, comments));
        last.text += `\n${text(source, node, comments)}`;
        if (doc) last.docs.push(doc);
        continue;
      }
      items.push({ name, kind: kindOf(d), node, decl: d, sigs: [text(source, node, comments)], docs: doc ? [doc] : [], text: text(source, node, comments) });
    } else if (node.type === 'TSModuleDeclaration' && node.global) {
      items.push({ name: 'declare global', kind: 'global declarations', node, decl: node, sigs: [text(source, node, comments)], docs: [], text: text(source, node, comments) });
    }
  }
  const out = [`# ${entry}`, '', `Generated from \`${types}\` by \`scripts/api-reference.js\`; do not edit by hand.`, `\`import { ... } from '${entry}'\`.`, ''];
  out.push(items.map((i) => `[${i.name}](#${anchor(i.name)})`).join(' · '), '');
  for (const item of items) {
    out.push(`## ${item.name}`, '', `*${item.kind}*`, '');
    if (item.kind === 'class' || item.kind === 'interface') {
      const d = item.decl;
      const head = source.slice(item.node.start, (d.body ?? d).start).replace(/\s+/g, ' ').trim();
      out.push('```ts', `${head} { ... }`, '```', '');
      for (const doc of item.docs) out.push(doc, '');
      out.push(...uses(item, links, pageName));
      out.push(...members(source, d.body.body, comments));
    } else {
      out.push('```ts', ...item.sigs, '```', '');
      for (const doc of item.docs) out.push(doc, '');
      out.push(...uses(item, links, pageName));
    }
  }
  return `${out.join('\n').replace(/\n{3,}/g, '\n\n').trimEnd()}\n`;
}

/** Every page of the reference: { 'docs/reference/attention.md': text, ... }. */
export function generate() {
  const list = entries();
  const links = new Map();
  for (const e of list) for (const n of exportedNames(e.types)) if (!links.has(n)) links.set(n, e.page);
  const pages = {};
  for (const e of list) pages[`${OUT}/${e.page}`] = page(e, links);
  const index = ['# API reference', '', 'Generated from the `.d.ts` files by `scripts/api-reference.js` (`node scripts/api-reference.js`', 'rewrites it; a test fails when it is stale). The guides are one level up, in [docs/](../).', '', '| import | types | page |', '|---|---|---|'];
  for (const e of list) index.push(`| \`${e.entry}\` | \`${e.types}\` | [${e.page}](${e.page}) |`);
  pages[`${OUT}/README.md`] = `${index.join('\n')}\n`;
  return pages;
}

/** The pages on disk: { path: text }. */
export function committed() {
  const dir = `${root}${OUT}`;
  if (!existsSync(dir)) return {};
  return Object.fromEntries(readdirSync(dir).filter((f) => f.endsWith('.md')).map((f) => [`${OUT}/${f}`, readFileSync(`${dir}/${f}`, 'utf8')]));
}

function main() {
  const pages = generate();
  if (process.argv.includes('--check')) {
    const now = committed();
    const stale = [...new Set([...Object.keys(pages), ...Object.keys(now)])].filter((p) => pages[p] !== now[p]);
    if (stale.length) {
      console.error(`stale: ${stale.join(', ')} (node scripts/api-reference.js rewrites them)`);
      process.exit(1);
    }
    console.log('docs/reference is current');
    return;
  }
  rmSync(`${root}${OUT}`, { recursive: true, force: true });
  mkdirSync(`${root}${OUT}`, { recursive: true });
  for (const [path, t] of Object.entries(pages)) writeFileSync(`${root}${path}`, t);
  console.log(`wrote ${Object.keys(pages).length} pages in ${OUT}/`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main();
