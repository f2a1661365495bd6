// A pool worker that dies (process.exit in its thread) when a call has
// dk = 13, for tests/pool/pool.test.js: the pool must reject that call and
// replace the worker. It wraps the real worker's message listener, so the
// real worker never answers that call.
import { parentPort } from 'node:worker_threads';

// On the shared-memory path a call is addresses: dk is read from its first
// block's shape struct (attn_shape: batch, heads, kv_heads, n_q, n_k, d_k,
// ...), and the worker claims the front block (the call's first control
// word, CLAIM: front | back << 16) before it dies, as a worker that dies
// while it computes one would.
let memory = null;
const on = parentPort.on.bind(parentPort);
parentPort.on = (type, listener) => on(type, type !== 'message' ? listener : (message) => {
  memory ??= message.shared?.memory ?? null;
  const claim = message.method === 'sdpaClaim';
  const dk = claim ? new Int32Array(memory.buffer)[(message.args[0][0] >>> 2) + 5] : message.options?.dk;
  if (dk === 13) {
    if (claim) Atomics.add(new Int32Array(memory.buffer), message.control >>> 2, 1);
    process.exit(3);
  }
  listener(message);
});
await import('../../web/pool-worker.js');
