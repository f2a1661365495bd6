// A pool worker that dies (process.exit in its thread) when a call has
// dk = 13, for tests/pool/pool.test.js: the pool must reject that call and
// replace the worker. It wraps the real worker's message listener, so the
// real worker never answers that call.
import { parentPort } from 'node:worker_threads';

const on = parentPort.on.bind(parentPort);
parentPort.on = (type, listener) => on(type, type !== 'message' ? listener : (message) => {
  if (message.options?.dk === 13) process.exit(3);
  listener(message);
});
await import('../../web/pool-worker.js');
