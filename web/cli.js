#!/usr/bin/env node
// cli.js - `attention-wasm` on the command line: prints the handbook's worked
// example (or your variation of it) step by step, as the handbook shows it.

import { parseArgs } from 'node:util';

import { loadAttention } from './attention.js';
import { HANDBOOK, LIMITS, computeExample, normalizeConfig } from './example.js';
import { DIGITS, textTable } from './format.js';

const HELP = `Usage: attention-wasm [options]

Prints scaled dot-product attention step by step: raw scores QK^T, scaled
scores, attention weights and the output. With no options it is the
handbook's worked example ("the cat sat there", seed 7).

Options:
  --tokens "<words>"   the tokens, separated by spaces (default "${HANDBOOK.tokens.join(' ')}"; 1 to ${LIMITS.tokens})
  --seed <n>           numpy seed for X, W_Q, W_K, W_V (default ${HANDBOOK.seed}; 0 to 4294967295)
  --d-model <n>        embedding size, columns of X (default ${HANDBOOK.dModel})
  --dk <n>             query/key size per head (default ${HANDBOOK.dk})
  --dv <n>             value size per head (default: dk)
  --heads <n>          attention heads (default 1; up to ${LIMITS.heads})
  --kv-heads <n>       key/value heads for grouped-query attention (default: heads)
  --scale <x>          multiply scores by x instead of 1/sqrt(dk)
  --causal             each token attends only to itself and earlier tokens
  --scalar             use the scalar WebAssembly build instead of SIMD128
  --help               show this help

Example: attention-wasm --tokens "a b c d e" --heads 2 --causal`;

class UsageError extends Error {}

function integer(value, flag) {
  if (!/^\d+$/.test(value)) throw new UsageError(`${flag} expects a whole number, got "${value}"`);
  return Number(value);
}

function parse(argv) {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        tokens: { type: 'string' },
        seed: { type: 'string' },
        'd-model': { type: 'string' },
        dk: { type: 'string' },
        dv: { type: 'string' },
        heads: { type: 'string' },
        'kv-heads': { type: 'string' },
        scale: { type: 'string' },
        causal: { type: 'boolean' },
        scalar: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    throw new UsageError(err.message);
  }
  const v = parsed.values;
  if (v.help) return { help: true };
  const config = {};
  if (v.tokens !== undefined) {
    config.tokens = v.tokens.split(/\s+/).filter(Boolean);
    if (config.tokens.length === 0) throw new UsageError('--tokens needs at least one word');
  }
  if (v.seed !== undefined) config.seed = integer(v.seed, '--seed');
  if (v['d-model'] !== undefined) config.dModel = integer(v['d-model'], '--d-model');
  if (v.dk !== undefined) config.dk = integer(v.dk, '--dk');
  if (v.dv !== undefined) config.dv = integer(v.dv, '--dv');
  if (v.heads !== undefined) config.heads = integer(v.heads, '--heads');
  if (v['kv-heads'] !== undefined) config.kvHeads = integer(v['kv-heads'], '--kv-heads');
  if (v.scale !== undefined) {
    const x = Number(v.scale);
    if (v.scale.trim() === '' || !Number.isFinite(x)) throw new UsageError(`--scale expects a number, got "${v.scale}"`);
    config.scale = x;
  }
  if (v.causal) config.causal = true;
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
  const { config } = args;
  const attn = await loadAttention(args.scalar ? { simd: false } : {});
  const ex = computeExample(attn, config);
  const t = config.tokens;
  const isHandbook = JSON.stringify({ ...config, scale: undefined }) === JSON.stringify({ ...normalizeConfig(), scale: undefined });
  const out = [];
  out.push(isHandbook ? "The handbook's worked example: scaled dot-product attention" : 'Scaled dot-product attention');
  out.push(`tokens: ${t.join(' ')} (n = ${t.length})   seed ${config.seed}   d_model ${config.dModel}   d_k ${config.dk}   d_v ${config.dv}` +
    `${config.heads > 1 ? `   heads ${config.heads}` : ''}${config.kvHeads !== config.heads ? `   kv-heads ${config.kvHeads}` : ''}` +
    `${config.causal ? '   causal' : ''}`);
  const { dModel, heads, kvHeads, dk, dv } = config;
  out.push(`numpy seed ${config.seed}: X = randn(${t.length}, ${dModel}), then W_Q = randn(${dModel}, ${heads * dk}) * 0.5, ` +
    `W_K = randn(${dModel}, ${kvHeads * dk}) * 0.5, W_V = randn(${dModel}, ${kvHeads * dv}) * 0.5`);
  out.push(`Q = X W_Q, K = X W_K, V = X W_V; float32 in the ${attn.simd ? 'SIMD128' : 'scalar'} WebAssembly build`);
  const sqrt = Math.sqrt(config.dk);
  const scaleText = config.scale === 1 / sqrt ? `/ sqrt(${config.dk}) = / ${sqrt.toFixed(3)}` : `* ${config.scale}`;
  ex.heads.forEach((head, h) => {
    if (config.heads > 1) out.push('', `=== Head ${h + 1} of ${config.heads}${config.kvHeads !== config.heads ? ` (kv head ${head.kvHead + 1})` : ''} ===`);
    out.push('', `Step 1, raw scores QK^T (${DIGITS.scores} decimals)`, '', indent(textTable(head.scores, t, t, DIGITS.scores)));
    out.push('', `Step 2, scaled scores ${scaleText} (${DIGITS.scaled} decimals)`, '', indent(textTable(head.scaled, t, t, DIGITS.scaled)));
    out.push('', `Step 3, attention weights softmax(scaled${config.causal ? ' + causal mask' : ''}), each row sums to 1 (${DIGITS.weights} decimals)`, '',
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
    process.stderr.write(`attention-wasm: ${err.stack ?? err}\n`);
    process.exitCode = 1;
  },
);
