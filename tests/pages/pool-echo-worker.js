// A pool worker that answers each job with its message's `value`, after
// keeping its thread busy for the message's `ms`, for tests/pool/workers.test.js:
// the worker layer's handling of answers (one released before it came is
// dropped, not given to the job that worker holds next).
import { parentPort } from 'node:worker_threads';

parentPort.on('message', (data) => {
  if (data.type === 'init') {
    parentPort.postMessage({ type: 'ready' });
    return;
  }
  for (const end = performance.now() + (data.ms ?? 0); performance.now() < end;);
  parentPort.postMessage({ id: data.id, result: data.value });
});
