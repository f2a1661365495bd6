// A pool worker that loads and listens but never answers (not even the
// init message), for tests/pool/workers.test.js: createAttentionPool must
// reject, saying the worker did not answer, instead of waiting forever.
import { parentPort } from 'node:worker_threads';

parentPort.on('message', () => {});
