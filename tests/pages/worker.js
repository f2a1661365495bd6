// A module worker with its own attention-wasm instance (tests/explorer/embed.test.js).
import { loadAttention } from '../../web/attention.js';
import { computeExample, normalizeConfig } from '../../web/worked/computation.js';

self.onmessage = async (event) => {
  const attn = await loadAttention();
  const ex = computeExample(attn, normalizeConfig({ seed: event.data.seed }));
  self.postMessage({ simd: attn.simd, weights: Array.from(ex.heads[0].weights.data) });
};
