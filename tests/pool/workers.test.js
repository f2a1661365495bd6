// The pool's worker layer (web/pool/workers.js) as Node meets it: a worker
// that loads but never answers makes createAttentionPool reject within
// WORKER_START_MS, saying so; an idle pool never keeps Node running, also
// when Node was started with flags a worker refuses (`node --input-type=module
// -e`, whose flags the workers would inherit); and what the workers are not
// given of the main thread's flags. Node 20 needs a flag for relaxed SIMD:
// without it this file runs itself again with it.
import { spawnSync } from 'node:child_process';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { loadAttention } from '../../web/attention.js';
import { createAttentionPool } from '../../web/pool.js';
import { WORKER_START_MS, workerExecArgv } from '../../web/pool/workers.js';
import { RELAXED_FLAG, assertClose, rejects, runWithRelaxedSimd } from '../helpers.js';

runWithRelaxedSimd(import.meta.url);

// How long a child node that should exit by itself gets (a pool of two
// workers and one call take about a second; a slow shared machine, more).
const EXIT_WITHIN_MS = 60000;

const test = suite('pool workers');

test(`a worker that never answers: createAttentionPool rejects after ${WORKER_START_MS / 1000} s, saying the worker did not answer`, async () => {
  const worker = new URL('../pages/pool-silent-worker.js', import.meta.url);
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error('createAttentionPool still pending')), WORKER_START_MS + 20000);
  });
  try {
    await rejects(Promise.race([createAttentionPool({ threads: 2, worker }), late]), Error,
      new RegExp(`^createAttentionPool: a worker did not answer within ${WORKER_START_MS / 1000} s of starting`));
  } finally {
    clearTimeout(timer);
  }
});

test('the workers do not inherit the flags that name the main program (-e, -p, --input-type, --test, --watch); without those, Node\'s inheritance', () => {
  assert.equal(workerExecArgv(['--input-type=module', '-e', 'code', '--experimental-wasm-relaxed-simd']), ['--experimental-wasm-relaxed-simd']);
  assert.equal(workerExecArgv(['--input-type', 'module', '--eval', 'code', '--no-warnings']), ['--no-warnings']);
  assert.equal(workerExecArgv(['-p', '1 + 1', '--max-old-space-size=100']), ['--max-old-space-size=100']);
  assert.equal(workerExecArgv(['--eval=code', '--print=x', '--test', '--watch', '--watch-path', 'src', '-i', '--check']), []);
  assert.is(workerExecArgv(['--experimental-wasm-relaxed-simd', '--no-warnings']), undefined);
  assert.is(workerExecArgv([]), undefined);
});

test('node --experimental-wasm-relaxed-simd --input-type=module -e (a V8 flag beside): a pool that is never disposed gives the right result and Node exits by itself', async () => {
  const pool = new URL('../../web/pool.js', import.meta.url).href;
  // Large enough to split over the worker and the calling thread.
  const [heads, n, d] = [4, 256, 64];
  const fill = (seed) => Float32Array.from({ length: heads * n * d }, (_, i) => Math.sin(i * 0.37 + seed) / 2);
  const script = `
    import { createAttentionPool } from ${JSON.stringify(pool)};
    const fill = ${fill.toString()};
    const [heads, n, d] = [${heads}, ${n}, ${d}];
    const p = await createAttentionPool({ threads: 2 });
    const out = await p.sdpa(fill(1), fill(2), fill(3), { heads, nq: n, nk: n, dk: d, dv: d, causal: true });
    console.log(JSON.stringify({ isa: p.isa, stats: p.stats, out: Array.from(out) }));
  `;
  const r = spawnSync(process.execPath, [...process.execArgv, RELAXED_FLAG, '--input-type=module', '-e', script], { encoding: 'utf8', timeout: EXIT_WITHIN_MS, maxBuffer: 64 << 20 });
  assert.is(r.error?.code, undefined, `node did not exit by itself within ${EXIT_WITHIN_MS} ms`);
  assert.is(r.status, 0, r.stderr);
  const { isa, stats, out } = JSON.parse(r.stdout);
  assert.is(stats.split, 1, `split over the worker and the caller: ${JSON.stringify(stats)}`);
  const attn = await loadAttention();
  assert.is(isa, attn.isa, 'the same build as here');
  const want = attn.sdpa(fill(1), fill(2), fill(3), { heads, nq: n, nk: n, dk: d, dv: d, causal: true });
  // JSON keeps every float32 exactly; no tolerance: the same bits as one instance.
  assertClose(out, want, { what: 'pool output' });
  attn.dispose();
});

test.run();
