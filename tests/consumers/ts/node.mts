// A Node-only TypeScript project (no DOM lib, no skipLibCheck): the core, the pool and the model type-check.
import { loadAttention, Matrix } from 'attention-wasm';
import { createAttentionPool } from 'attention-wasm/pool';
import { loadModel } from 'attention-wasm/model';
const attn = await loadAttention();
const m = attn.matmul(Matrix.from([[1]]), Matrix.from([[2]]));
const pool = await createAttentionPool({ threads: 1 });
const model = await loadModel();
console.log(m.rows, pool.threads, model.layers, attn.memory.buffer.byteLength);
const product = await pool.matmul(m, m);
pool[Symbol.dispose]();
console.log(product.dims);
