// rope.js - RoPE for keys already in wasm memory: a KV cache turns the keys
// it appends at their positions (attn_rope in c/attention.h), so attend
// only turns the queries. The turn itself is C's; this only lays out the call.

/**
 * Turns t rows per (batch, kv head) of the keys at byte address kAt in
 * place: rows at positions position .. position + t - 1, strides (batch,
 * head, row) in elements, rope a checked { theta, dims, interleaved }. The
 * rows start at row firstRow of each head (a cache's: its length; keys
 * staged on their own, as a compact cache's are before being written: 0).
 */
export function ropeKeys(wasm, kAt, strides, { batch, kvHeads, dk }, t, position, rope, firstRow = position) {
  const ex = wasm.live();
  const scratchFloats = t * rope.dims;
  const scratch = wasm.malloc(scratchFloats * 4);
  if (scratch === 0) throw new RangeError(`kvCache.append: RoPE needs ${scratchFloats * 4} bytes of wasm memory for its table, and the memory could not grow`);
  try {
    const [batchStride, headStride, rowStride] = strides;
    for (let b = 0; b < batch; b++) {
      const at = kAt + 4 * (b * batchStride + firstRow * rowStride);
      const status = ex.attn_rope(at, kvHeads, headStride, t, rowStride, dk, position, rope.theta, rope.dims, rope.interleaved ? 1 : 0, scratch, scratchFloats);
      if (status !== 0) throw new Error(`kvCache.append: attn_rope failed with status ${status}`);
    }
  } finally {
    wasm.free(scratch);
  }
}
