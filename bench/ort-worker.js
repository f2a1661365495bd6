// ort-worker.js - one onnxruntime-web configuration for bench/pool.js and
// bench/pool-kv.js, in a worker thread of its own: onnxruntime-web reads
// env.wasm.numThreads once, when its wasm starts, so each thread count needs
// a fresh JS realm.
//   in:  { type: 'init', numThreads, shape: { heads, nq, nk, d, causal } }
//          a MatMul/Softmax/MatMul graph (onnx-graph.js attentionModel)
//        { type: 'init', numThreads, shape: { kind: 'attention-op', heads, kvHeads, nq, past, d } }
//          the Attention op with past key/value (attentionOpModel): each
//          call feeds the past and gets the present back, as a decode loop does
//        { type: 'init', numThreads, shape: { kind: 'gqa', heads, kvHeads, past, d, constants, dtype } }
//          com.microsoft.GroupQueryAttention (groupQueryAttentionModel), one
//          new token a call: the past fed each call (constants false) or held
//          as initializers (true); dtype 'int8' for its quantized cache
//        { type: 'output' }         the output of one call (to check it)
//        { type: 'round', ms }      run calls for about ms, back to back
//   out: { type: 'ready', threads } | { type: 'round', msPerCall } | { type: 'error', message }
import { parentPort } from 'node:worker_threads';

import { attentionModel, attentionOpModel, groupQueryAttentionModel } from './onnx-graph.js';
import { random } from './random.js';

let session = null;
let feeds = null;

parentPort.on('message', async (m) => {
  try {
    if (m.type === 'init') {
      const ort = await import('onnxruntime-web');
      ort.env.wasm.numThreads = m.numThreads;
      ort.env.logLevel = 'error';
      if (m.shape.kind === 'gqa') {
        const { heads, kvHeads, past, d, constants, dtype = 'float32', seed = 1 } = m.shape;
        const Past = dtype === 'int8' ? Int8Array : Float32Array;
        // The same draws as the caches it is compared with; int8 rounds them
        // at the per-tensor scale 1/127 the model declares.
        const draw = (n, s) => (dtype === 'int8' ? Int8Array.from(random(n, s), (x) => Math.round(x * 127)) : random(n, s));
        const pastKey = draw(kvHeads * past * d, seed + 3), pastValue = draw(kvHeads * past * d, seed + 4);
        const model = groupQueryAttentionModel({ heads, kvHeads, past, d, dtype, constants: constants ? { pastKey, pastValue } : null });
        session = await ort.InferenceSession.create(model, { executionProviders: ['wasm'], logSeverityLevel: 3 });
        feeds = {
          query: new ort.Tensor('float32', random(heads * d, seed), [1, 1, heads * d]),
          key: new ort.Tensor('float32', random(kvHeads * d, seed + 1), [1, 1, kvHeads * d]),
          value: new ort.Tensor('float32', random(kvHeads * d, seed + 2), [1, 1, kvHeads * d]),
        };
        if (!constants) {
          Object.assign(feeds, {
            past_key: new ort.Tensor(dtype, new Past(pastKey), [1, kvHeads, past, d]),
            past_value: new ort.Tensor(dtype, new Past(pastValue), [1, kvHeads, past, d]),
            seqlens_k: new ort.Tensor('int32', Int32Array.of(past), [1]),
            total_sequence_length: new ort.Tensor('int32', Int32Array.of(past + 1), []),
          });
        }
      } else if (m.shape.kind === 'attention-op') {
        const { heads, kvHeads, nq, past, d } = m.shape;
        session = await ort.InferenceSession.create(attentionOpModel({ heads, kvHeads, nq, past, d }), { executionProviders: ['wasm'] });
        feeds = {
          Q: new ort.Tensor('float32', random(heads * nq * d, 1), [1, heads, nq, d]),
          K: new ort.Tensor('float32', random(kvHeads * nq * d, 2), [1, kvHeads, nq, d]),
          V: new ort.Tensor('float32', random(kvHeads * nq * d, 3), [1, kvHeads, nq, d]),
          past_key: new ort.Tensor('float32', random(kvHeads * past * d, 4), [1, kvHeads, past, d]),
          past_value: new ort.Tensor('float32', random(kvHeads * past * d, 5), [1, kvHeads, past, d]),
        };
      } else {
        const { heads, nq, nk, d, causal } = m.shape;
        session = await ort.InferenceSession.create(attentionModel({ heads, nq, nk, d, scale: 1 / Math.sqrt(d), causal }), { executionProviders: ['wasm'] });
        feeds = {
          Q: new ort.Tensor('float32', random(heads * nq * d, 1), [heads, nq, d]),
          K: new ort.Tensor('float32', random(heads * nk * d, 2), [heads, nk, d]),
          V: new ort.Tensor('float32', random(heads * nk * d, 3), [heads, nk, d]),
        };
      }
      // Warm up: its thread pool starts and its kernels are compiled.
      const t0 = performance.now();
      do await session.run(feeds); while (performance.now() - t0 < 300);
      parentPort.postMessage({ type: 'ready', threads: ort.env.wasm.numThreads });
    } else if (m.type === 'output') {
      const { output } = await session.run(feeds);
      parentPort.postMessage({ type: 'output', data: output.data });
    } else if (m.type === 'round') {
      let calls = 0;
      const t0 = performance.now();
      let t = t0;
      do {
        await session.run(feeds);
        calls++;
        t = performance.now();
      } while (t - t0 < m.ms);
      parentPort.postMessage({ type: 'round', msPerCall: (t - t0) / calls });
    }
  } catch (err) {
    parentPort.postMessage({ type: 'error', message: String(err?.message ?? err) });
  }
});
