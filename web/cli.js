#!/usr/bin/env node
// cli.js - `attention-wasm` on the command line: prints the handbook's worked
// example (or your variation of it) step by step, as the handbook shows it.

import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

import { loadAttention } from './attention.js';
import { HANDBOOK, computeExample, normalizeConfig } from './worked/computation.js';
import { SETTINGS, parseSetting } from './worked/settings.js';
import { ropeDims, windowText } from './worked/text.js';
import { DIGITS, textTable } from './worked/format.js';

const FLAGS = SETTINGS.filter((s) => s.cli);
const usage = (s) => `--${s.attr}${s.kind === 'bool' ? '' : ` ${s.arg ?? '<n>'}`}`;

const OPTIONS = [...FLAGS.map((s) => [usage(s), s.help]), ['--scalar', 'use the scalar WebAssembly build instead of a SIMD one'],
  ['--version', 'print the version of attention-wasm'], ['--help', 'show this help']];
const FLAG_WIDTH = Math.max(...OPTIONS.map(([flag]) => flag.length));

/** What attn.isa names, in the words of the output. */
const ISA_NAMES = { 'relaxed-simd': 'relaxed SIMD', simd128: 'SIMD128', scalar: 'scalar' };

const HELP = `Usage: attention-wasm [options]

Prints scaled dot-product attention step by step: raw scores QK^T, scaled
scores, attention weights and the output. With no options it is the
handbook's worked example ("${HANDBOOK.tokens.join(' ')}", seed ${HANDBOOK.seed}).

Options:
${OPTIONS.map(([flag, help]) => `  ${flag.padEnd(FLAG_WIDTH)}  ${help}`).join('\n')}

Example: attention-wasm --tokens "a b c d e" --heads 2 --causal`;

class UsageError extends Error {}

// parseArgs reads "--window -1" as a flag missing its value; the settings
// take negative numbers (-1: unbounded), so a value flag followed by a
// number is joined into "--window=-1" first.
function joinNegatives(argv, options) {
  const out = [];
  for (let i = 0; i < argv.length; i++) {
    const name = argv[i].startsWith('--') ? argv[i].slice(2) : null;
    if (name && options[name]?.type === 'string' && i + 1 < argv.length && /^-\d/.test(argv[i + 1])) {
      out.push(`${argv[i]}=${argv[++i]}`);
    } else {
      out.push(argv[i]);
    }
  }
  return out;
}

// What to try instead, for the two slips a newcomer makes: a two-number
// value without quotes, and a misspelt flag.
function hint(message, options) {
  if (/Unexpected argument '-?\d/.test(message)) return '\n(A value of two numbers goes in quotes: --window "-1 0".)';
  const unknown = /Unknown option '--([^']+)'/.exec(message);
  if (!unknown) return '';
  const near = Object.keys(options).find((name) => editDistance(name, unknown[1]) <= 2);
  return near ? `\n(Did you mean --${near}?)` : '';
}

function editDistance(a, b) {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) next[j] = Math.min(row[j] + 1, next[j - 1] + 1, row[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    row = next;
  }
  return row[b.length];
}

// The package's own package.json, beside web/ in the repository and in the installed package.
const version = () => JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version;

// --rope takes its theta or nothing: bare, it becomes "--rope=" (theta 10000).
const bareRope = (argv) => argv.map((a, i) => (a === '--rope' && (i + 1 === argv.length || argv[i + 1].startsWith('--')) ? '--rope=' : a));

function parse(argv) {
  let parsed;
  const options = { scalar: { type: 'boolean' }, version: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } };
  for (const s of FLAGS) options[s.attr] = { type: s.kind === 'bool' ? 'boolean' : 'string' };
  try {
    parsed = parseArgs({ args: joinNegatives(bareRope(argv), options), strict: true, allowPositionals: false, options });
  } catch (err) {
    throw new UsageError(`${err.message}${hint(err.message, options)}`);
  }
  const v = parsed.values;
  if (v.help) return { help: true };
  if (v.version) return { version: true };
  const config = {};
  try {
    for (const s of FLAGS) {
      if (v[s.attr] === undefined) continue;
      // The attribute reads "0" and "false" as off, as for a boolean; on the
      // command line the flag's presence asks for RoPE, so they are refused
      // rather than silently meaning none.
      if (s.kind === 'rope' && ['0', 'false'].includes(v[s.attr].trim())) {
        throw new UsageError(`--${s.attr} takes nothing (theta 10000) or RoPE's theta, a number of 1 or more; got "${v[s.attr]}". Leave --${s.attr} out for no RoPE.`);
      }
      config[s.key] = s.kind === 'bool' ? v[s.attr] : parseSetting(s, v[s.attr], `--${s.attr}`);
    }
  } catch (err) {
    throw new UsageError(err.message);
  }
  try {
    return { config: normalizeConfig(config), scalar: v.scalar === true };
  } catch (err) {
    throw new UsageError(`--${err.message}`);
  }
}

async function main(argv) {
  let args;
  try {
    args = parse(argv);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`attention-wasm: ${err.message}\nRun attention-wasm --help for the options.\n`);
    return 2;
  }
  if (args.help) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  if (args.version) {
    process.stdout.write(`attention-wasm ${version()}\n`);
    return 0;
  }
  const { config } = args;
  const attn = await loadAttention(args.scalar ? { simd: false } : {});
  const ex = computeExample(attn, config);
  const t = config.tokens;
  const isHandbook = JSON.stringify(config) === JSON.stringify(normalizeConfig());
  const out = [];
  out.push(isHandbook ? "The handbook's worked example: scaled dot-product attention" : 'Scaled dot-product attention');
  out.push(`tokens: ${t.join(' ')} (n = ${t.length})   seed ${config.seed}   d_model ${config.dModel}   d_k ${config.dk}   d_v ${config.dv}` +
    `${config.heads > 1 ? `   heads ${config.heads}` : ''}${config.kvHeads !== config.heads ? `   kv-heads ${config.kvHeads}` : ''}` +
    `${config.causal ? '   causal' : ''}${config.window ? `   ${windowText(config.window)}` : ''}` +
    `${config.queryOffset ? `   query offset ${config.queryOffset}` : ''}${config.softcap > 0 ? `   softcap ${config.softcap}` : ''}`);
  const { dModel, heads, kvHeads, dk, dv } = config;
  out.push(`numpy seed ${config.seed}: X = randn(${t.length}, ${dModel}), then W_Q = randn(${dModel}, ${heads * dk}) * 0.5, ` +
    `W_K = randn(${dModel}, ${kvHeads * dk}) * 0.5, W_V = randn(${dModel}, ${kvHeads * dv}) * 0.5`);
  if (config.embeddings === 'word') out.push(`embeddings "word": row i of X is randn(${dModel}) with numpy seed wordSeed(${config.seed}, token i) (the 32-bit FNV-1a hash of "${config.seed} " and the token), the same for a repeated word`);
  if (config.positions) out.push(`positions: sinusoidal position encodings added to X`);
  if (config.rope) out.push(`rope: q and k turned by RoPE at their positions before the scores (theta ${config.rope.theta}, ${ropeDims(config)}), in the kernel`);
  out.push(`Q = X W_Q, K = X W_K, V = X W_V; float32 in the ${ISA_NAMES[attn.isa] ?? attn.isa} WebAssembly build`);
  const sqrt = Math.sqrt(config.dk);
  const scaleText = config.scaleIsDefault ? `scores / sqrt(${config.dk}) = scores / ${sqrt.toFixed(3)}` : `scores * ${config.scale}`;
  ex.heads.forEach((head, h) => {
    if (config.heads > 1) out.push('', `=== Head ${h + 1} of ${config.heads}${config.kvHeads !== config.heads ? ` (kv head ${head.kvHead + 1})` : ''} ===`);
    out.push('', `Step 1, raw scores QK^T${config.rope ? ' of q and k after RoPE' : ''} (${DIGITS.scores} decimals)`, '', indent(textTable(head.scores, t, t, DIGITS.scores)));
    const logits = config.softcap > 0 || config.window || config.queryOffset;
    if (logits) {
      const how = `${config.softcap > 0 ? `${config.softcap} * tanh(scaled / ${config.softcap})` : 'scaled'}, -Inf where not allowed`;
      out.push('', `Step 2, logits ${how}; scaled = ${scaleText} (${DIGITS.scaled} decimals)`, '', indent(textTable(head.logits, t, t, DIGITS.scaled)));
    } else {
      out.push('', `Step 2, scaled scores = ${scaleText} (${DIGITS.scaled} decimals)`, '', indent(textTable(head.scaled, t, t, DIGITS.scaled)));
    }
    // A row with no allowed key has no softmax: its weights and output are 0 (c/attention.h).
    const empty = t.filter((_, i) => head.weights.data.subarray(i * t.length, (i + 1) * t.length).every((w) => w === 0));
    const sums = empty.length === 0 ? 'each row sums to 1'
      : `each row sums to 1, but ${empty.join(', ')} ${empty.length === 1 ? 'has' : 'have'} no allowed key: all 0, and so ${empty.length === 1 ? 'is its output' : 'are their outputs'}`;
    out.push('', `Step 3, attention weights softmax(${logits ? 'logits' : `scaled${config.causal ? ' + causal mask' : ''}`}), ${sums} (${DIGITS.weights} decimals)`, '',
      indent(textTable(head.weights, t, t, DIGITS.weights)));
    const vCols = Array.from({ length: config.dv }, (_, c) => `v${c}`);
    out.push('', `Step 4, output A @ V, shape (${t.length}, ${config.dv}) (${DIGITS.output} decimals)`, '', indent(textTable(head.output, t, vCols, DIGITS.output)));
  });
  process.stdout.write(`${out.join('\n')}\n`);
  attn.dispose();
  return 0;
}

function indent(text) {
  return text.split('\n').map((l) => `    ${l}`).join('\n');
}

main(process.argv.slice(2)).then(
  (code) => { process.exitCode = code; },
  (err) => {
    // Bad flags are usage errors (exit 2); this is anything else, said
    // plainly; ATTN_DEBUG=1 adds the stack for a bug report.
    process.stderr.write(`attention-wasm: ${process.env.ATTN_DEBUG ? err.stack : err.message ?? err}\n`);
    process.exitCode = 1;
  },
);
