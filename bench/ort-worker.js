// ort-worker.js - one onnxruntime-web configuration for bench/pool.js, in a
// worker thread of its own: onnxruntime-web reads env.wasm.numThreads once,
// when its wasm starts, so each thread count needs a fresh JS realm.
//   in:  { type: 'init', numThreads, shape: { heads, nq, nk, d, causal } }
//        { type: 'round', ms }      run calls for about ms, back to back
//   out: { type: 'ready', threads } | { type: 'round', msPerCall } | { type: 'error', message }
import { parentPort } from 'node:worker_threads';

import { attentionModel } from './onnx-graph.js';
import { random } from './random.js';

let session = null;
let feeds = null;

parentPort.on('message', async (m) => {
  try {
    if (m.type === 'init') {
      const ort = await import('onnxruntime-web');
      ort.env.wasm.numThreads = m.numThreads;
      ort.env.logLevel = 'error';
      const { heads, nq, nk, d, causal } = m.shape;
      session = await ort.InferenceSession.create(attentionModel({ heads, nq, nk, d, scale: 1 / Math.sqrt(d), causal }), { executionProviders: ['wasm'] });
      feeds = {
        Q: new ort.Tensor('float32', random(heads * nq * d, 1), [heads, nq, d]),
        K: new ort.Tensor('float32', random(heads * nk * d, 2), [heads, nk, d]),
        V: new ort.Tensor('float32', random(heads * nk * d, 3), [heads, nk, d]),
      };
      // Warm up: its thread pool starts and its kernels are compiled.
      const t0 = performance.now();
      while (performance.now() - t0 < 300) await session.run(feeds);
      parentPort.postMessage({ type: 'ready', threads: ort.env.wasm.numThreads });
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
