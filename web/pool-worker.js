// pool-worker.js - one worker of an attention pool (web/pool/): a Node
// worker thread or a browser module Worker with its own instance of the
// module the pool compiled. It answers each call with its result, or with
// the error's name and message so the pool can rethrow the same TypeError or
// RangeError the synchronous API throws.
//
// Messages in:  { type: 'init', module }
//               { id, method: 'sdpa', q, k, v, options }
//               { id, method: 'multiHeadAttention', x, options }
// Messages out: { type: 'ready', isa } | { type: 'failed', name, message }
//               { id, result } | { id, error: { name, message } }

import { loadAttention } from './attention.js';

// Node: worker_threads' parentPort; browser: the worker's global scope. The
// specifier is in a variable so browser bundlers do not try to resolve it.
const isNode = typeof WorkerGlobalScope === 'undefined';
const nodeWorkers = 'node:worker_threads';
const port = isNode ? (await import(/* webpackIgnore: true */ /* @vite-ignore */ nodeWorkers)).parentPort : self;

let attn = null;

function post(message, transfer = []) {
  port.postMessage(message, transfer);
}

function handle(data) {
  if (data.type === 'init') {
    loadAttention({ wasm: data.module }).then(
      (instance) => {
        attn = instance;
        post({ type: 'ready', isa: attn.isa });
      },
      (err) => post({ type: 'failed', name: err.name, message: err.message }),
    );
    return;
  }
  const { id, method } = data;
  try {
    let result;
    if (method === 'sdpa') {
      result = attn.sdpa(data.q, data.k, data.v, data.options);
    } else if (method === 'multiHeadAttention') {
      const r = attn.multiHeadAttention(data.x, data.options);
      result = { output: { rows: r.output.rows, cols: r.output.cols, data: r.output.data } };
    } else {
      throw new Error(`attention-wasm pool worker: unknown method ${JSON.stringify(method)}`);
    }
    // Results are fresh arrays (or objects of them): moved, not copied.
    const transfer = ArrayBuffer.isView(result) ? [result.buffer]
      : Object.values(result).flatMap((x) => (ArrayBuffer.isView(x) ? [x.buffer] : ArrayBuffer.isView(x?.data) ? [x.data.buffer] : []));
    post({ id, result }, [...new Set(transfer)]);
  } catch (err) {
    post({ id, error: { name: err?.name ?? 'Error', message: String(err?.message ?? err) } });
  }
}

if (isNode) port.on('message', handle);
else port.onmessage = (event) => handle(event.data);
