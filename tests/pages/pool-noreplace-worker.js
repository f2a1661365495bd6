// A pool worker that dies (process.exit in its thread) on a shared-memory
// claim whose first block has dk = 13, as pool-crash-worker.js does, and
// whose replacement exits while it starts, so the pool is left without a
// worker: for tests/pool/kvcache.test.js. The file named by the
// ATTN_TEST_NO_REPLACE environment variable marks that one died.
import { existsSync, writeFileSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';

const flag = process.env.ATTN_TEST_NO_REPLACE;
let memory = null;
const on = parentPort.on.bind(parentPort);
parentPort.on = (type, listener) => on(type, type !== 'message' ? listener : (message) => {
  if (message.type === 'init' && existsSync(flag)) process.exit(4);
  memory ??= message.shared?.memory ?? null;
  if (message.method === 'sdpaClaim' && new Int32Array(memory.buffer)[(message.args[0][0] >>> 2) + 5] === 13) {
    writeFileSync(flag, 'died');
    process.exit(3);
  }
  listener(message);
});
await import('../../web/pool-worker.js');
