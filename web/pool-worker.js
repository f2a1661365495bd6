// pool-worker.js - one worker of an attention pool (web/pool/): a Node
// worker thread or a browser module Worker with its own instance of the
// module the pool compiled. It answers each call with its result, or with
// the error's name and message so the pool can rethrow the same TypeError or
// RangeError the synchronous API throws.
//
// Messages in:  { type: 'init', module, shared? }   shared: { module, memory, stack }
//                 a threads build on the pool's shared memory, its stack's top
//               { id, method: 'sdpa', q, k, v, options }
//               { id, method: 'sdpaClaim', args, control, scratch }   blocks of a
//                 split call in the shared memory, claimed one at a time
//                 (web/pool/shared.js lays them out); answers the blocks done here
//               { id, method: 'multiHeadAttention', x, options }
//               { id, method: 'matmul', a, b }   a block of rows of a times b
//               { id, method: 'kv', op, cache, ... }   a pool KV cache's part here
//                 (web/pool/kvcache.js): op 'create' { spec }, 'append'
//                 { start, k, v, rope?, position? }, 'attend' { q, calls, shape }, 'read'
//                 { which, starts }, 'truncate' { start, length }, 'clear', 'dispose'
// Messages out: { type: 'ready', isa } | { type: 'failed', name, message }
//               { id, result } | { id, error: { name, message } }

import { loadAttention } from './attention.js';
import { Shard } from './pool/kvshard.js';
import { claimBlocks } from './pool/shared.js';

// Node: worker_threads' parentPort; browser: the worker's global scope. The
// specifier is in a variable so browser bundlers do not try to resolve it.
// No top-level await, so a bundler may emit this worker as a classic script
// (Vite's default worker format): Node's parentPort queues what arrives
// before its listener is set.
const isNode = typeof WorkerGlobalScope === 'undefined';
const nodeWorkers = 'node:worker_threads';
let port = isNode ? null : self;

let attn = null;
// The threads build's exports on the pool's shared memory, when it has one.
let shared = null;
// The parts of pool KV caches this worker holds, by cache id.
const shards = new Map();

function post(message, transfer = []) {
  port.postMessage(message, transfer);
}

function handle(data) {
  if (data.type === 'init') {
    Promise.all([loadAttention({ wasm: data.module }), data.shared && instantiateShared(data.shared)]).then(
      ([instance]) => {
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
    if (method === 'sdpaClaim') {
      result = claimBlocks(shared, shared.memory, data.args, data.control, data.scratch, (status) => {
        throw new Error(`attention-wasm: attention: ${statusString(status)} (status ${status})`);
      });
    } else if (method === 'sdpa') {
      result = attn.sdpa(data.q, data.k, data.v, data.options);
    } else if (method === 'multiHeadAttention') {
      const r = attn.multiHeadAttention(data.x, data.options);
      result = { output: { rows: r.output.rows, cols: r.output.cols, data: r.output.data } };
    } else if (method === 'matmul') {
      result = attn.matmul(data.a, data.b).data;
    } else if (method === 'kv') {
      result = kv(data);
    } else {
      throw new Error(`attention-wasm pool worker: unknown method ${JSON.stringify(method)}`);
    }
    // Results are fresh arrays (or objects and arrays of them): moved, not copied.
    const transfer = new Set();
    buffers(result, transfer, 3);
    post({ id, result }, [...transfer]);
  } catch (err) {
    post({ id, error: { name: err?.name ?? 'Error', message: String(err?.message ?? err) } });
  }
}

// The threads module on the shared memory: its data is in place already
// (the pool's first instance filled it); its stack is the one the pool
// allocated for this worker, set before any call.
async function instantiateShared({ module, memory, stack }) {
  const instance = await WebAssembly.instantiate(module, { env: { memory } });
  instance.exports.__stack_pointer.value = stack;
  shared = { ...instance.exports, memory };
}

function statusString(status) {
  const bytes = new Uint8Array(shared.memory.buffer), at = shared.attn_status_string(status) >>> 0;
  return new TextDecoder().decode(bytes.slice(at, bytes.indexOf(0, at)));
}

function kv(data) {
  const { op, cache } = data;
  if (op === 'create') {
    shards.set(cache, new Shard(attn, data.spec));
    return true;
  }
  const shard = shards.get(cache);
  if (shard === undefined) throw new Error(`attention-wasm pool worker: no cache ${cache} here`);
  switch (op) {
    case 'append': shard.append(data.start, data.k, data.v, data.rope, data.position); return true;
    case 'attend': return shard.attend(data.q, data.calls, data.shape);
    case 'read': return shard.read(data.which, data.starts);
    case 'truncate': shard.truncate(data.start, data.length); return true;
    case 'clear': shard.clear(); return true;
    case 'dispose': shard.dispose(); shards.delete(cache); return true;
    default: throw new Error(`attention-wasm pool worker: unknown cache operation ${JSON.stringify(op)}`);
  }
}

// The buffers of the typed arrays in a result, down to `depth` levels of objects and arrays.
function buffers(x, into, depth) {
  if (ArrayBuffer.isView(x)) into.add(x.buffer);
  else if (depth > 0 && x !== null && typeof x === 'object') for (const y of Object.values(x)) buffers(y, into, depth - 1);
}

if (isNode) {
  import(/* webpackIgnore: true */ /* @vite-ignore */ nodeWorkers).then(({ parentPort }) => {
    port = parentPort;
    port.on('message', handle);
  });
} else {
  port.onmessage = (event) => handle(event.data);
}
