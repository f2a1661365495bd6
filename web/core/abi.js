// abi.js - the structs, flags and numbers of c/attention.h as the wasm
// module sees them: one table of each struct's fields in order, with their
// C types, from which every offset is computed by C's layout rule, and the
// writers of those structs that core/instance.js calls. tests/core/abi.test.js compiles c/attention.h natively,
// prints offsetof and sizeof of every field named here and compares them
// to layout() for the native sizes, so a field added, moved or retyped in
// C fails a test instead of writing beside its place. Pure: no wasm.

/**
 * Each struct's fields in declaration order: [name, type], a type being
 * 'i32' (int32_t), 'u32' (uint32_t), 'f32' (float), 'ptr' (any pointer),
 * 'size' (size_t) or another struct of this table.
 */
export const STRUCTS = Object.freeze({
  attn_strides: [['batch_stride', 'size'], ['head_stride', 'size'], ['row_stride', 'size']],
  attn_shape: [
    ['batch', 'i32'], ['heads', 'i32'], ['kv_heads', 'i32'], ['n_q', 'i32'], ['n_k', 'i32'], ['d_k', 'i32'], ['d_v', 'i32'],
    ['q', 'attn_strides'], ['k', 'attn_strides'], ['v', 'attn_strides'], ['out', 'attn_strides'],
  ],
  attn_bcast: [['batch_stride', 'size'], ['head_stride', 'size'], ['row_stride', 'size'], ['cols', 'i32']],
  attn_options: [
    ['scale', 'f32'], ['flags', 'u32'], ['mask', 'ptr'], ['mask_layout', 'attn_bcast'], ['bias', 'ptr'], ['bias_layout', 'attn_bcast'],
    ['softcap', 'f32'], ['window_left', 'i32'], ['window_right', 'i32'], ['query_offset', 'i32'], ['query_offsets', 'ptr'],
    ['kv_lengths', 'ptr'], ['sinks', 'ptr'], ['alibi', 'ptr'], ['rope_theta', 'f32'], ['rope_dims', 'i32'], ['rope_flags', 'u32'],
  ],
  attn_steps: [['scores', 'ptr'], ['scaled', 'ptr'], ['logits', 'ptr'], ['weights', 'ptr'], ['lse', 'ptr']],
  attn_kv: [
    ['dtype', 'i32'], ['k', 'ptr'], ['v', 'ptr'], ['k_scales', 'ptr'], ['v_scales', 'ptr'],
    ['k_scale', 'attn_strides'], ['v_scale', 'attn_strides'],
  ],
  attn_grads: [['dq', 'ptr'], ['dk', 'ptr'], ['dv', 'ptr'], ['dbias', 'ptr'], ['dsinks', 'ptr']],
});

/** The flags and enum values of c/attention.h the JS side writes or reads, by their C names. */
export const CONSTANTS = Object.freeze({
  ATTN_CAUSAL: 1,
  ATTN_WINDOW: 2,
  ATTN_ROPE_INTERLEAVED: 1,
  ATTN_ROPE_QUERIES: 2,
  ATTN_ERR_OVERFLOW: 7,
  ATTN_KV_FLOAT32: 0,
  ATTN_KV_FLOAT16: 1,
  ATTN_KV_INT8: 2,
});

/** attn_kv_dtype by a cache's dtype name. */
export const KV_DTYPE = Object.freeze({ float32: CONSTANTS.ATTN_KV_FLOAT32, float16: CONSTANTS.ATTN_KV_FLOAT16, int8: CONSTANTS.ATTN_KV_INT8 });

/** The sizes of pointers and size_t in wasm32, where every field is 4 bytes. */
export const WASM32 = Object.freeze({ ptr: 4, size: 4 });

/**
 * Every struct's byte layout by C's rule for the given pointer and size_t
 * sizes (each a power of two, its own alignment): { [struct]: { size,
 * align, offsets: { field or 'outer.inner': byte offset } } }.
 */
export function layout(sizes) {
  const scalar = { i32: 4, u32: 4, f32: 4, ptr: sizes.ptr, size: sizes.size };
  const out = {};
  const of = (name) => {
    if (out[name]) return out[name];
    let at = 0, align = 1;
    const offsets = {};
    for (const [field, type] of STRUCTS[name]) {
      const inner = type in scalar ? null : of(type);
      const size = inner ? inner.size : scalar[type], a = inner ? inner.align : scalar[type];
      at = Math.ceil(at / a) * a;
      align = Math.max(align, a);
      offsets[field] = at;
      if (inner) for (const [f, o] of Object.entries(inner.offsets)) offsets[`${field}.${f}`] = at + o;
      at += size;
    }
    out[name] = { size: Math.ceil(at / align) * align, align, offsets };
    return out[name];
  };
  for (const name of Object.keys(STRUCTS)) of(name);
  return out;
}

const WASM = layout(WASM32);

// Offsets in 4-byte words, as the instance indexes its Int32Array and
// Float32Array views; every wasm32 field is a word.
function words(name) {
  const w = {};
  for (const [field, bytes] of Object.entries(WASM[name].offsets)) w[field] = bytes / 4;
  w.WORDS = WASM[name].size / 4;
  return Object.freeze(w);
}

/** Word offsets of each struct's fields in wasm32, and its size in words (WORDS). */
export const SHAPE = words('attn_shape');
export const STRIDES = words('attn_strides');
export const BCAST = words('attn_bcast');
export const OPTIONS = words('attn_options');
export const STEPS = words('attn_steps');
export const KV = words('attn_kv');
export const GRADS = words('attn_grads');

const { ATTN_CAUSAL, ATTN_WINDOW, ATTN_ROPE_INTERLEAVED, ATTN_ROPE_QUERIES } = CONSTANTS;

// The word offsets of structs laid out one after another from 0, each
// 16-byte aligned, by their names in lower case, then `i32` where the
// per-call arrays start.
function regions(...structs) {
  const names = new Map([[SHAPE, 'shape'], [OPTIONS, 'options'], [STEPS, 'steps'], [KV, 'kv'], [GRADS, 'grads']]);
  const r = {};
  let at = 0;
  for (const s of structs) {
    r[names.get(s)] = at;
    at += Math.ceil(s.WORDS / 4) * 4;
  }
  r.i32 = at;
  return Object.freeze(r);
}

// attn_strides (batch, head, row) at int index o; addresses and strides are
// below 2^32 and written as int32 bit patterns.
export function writeStrides(i32, o, s) {
  i32[o + STRIDES.batch_stride] = s[0]; i32[o + STRIDES.head_stride] = s[1]; i32[o + STRIDES.row_stride] = s[2];
}

// attn_bcast at int index o for a checked mask or bias ({ data, strides, cols }).
function writeBcast(i32, o, m) {
  i32[o + BCAST.batch_stride] = m ? m.strides[0] : 0;
  i32[o + BCAST.head_stride] = m ? m.strides[1] : 0;
  i32[o + BCAST.row_stride] = m ? m.strides[2] : 0;
  i32[o + BCAST.cols] = m ? m.cols : 0;
}

// attn_options at int index o for a checked call c (core/calls.js), the one
// place its layout is written (forward and backward): mask and bias at the given byte
// addresses, and the per-batch int32 arrays copied to byte address intsAt
// (16-byte aligned, room for both): queryOffsets first, then kvLengths.
export function writeOptions(f32, i32, o, c, maskAt, biasAt, intsAt) {
  const O = OPTIONS;
  f32[o + O.scale] = c.scale;
  i32[o + O.flags] = (c.causal ? ATTN_CAUSAL : 0) | (c.window ? ATTN_WINDOW : 0);
  i32[o + O.mask] = maskAt;
  writeBcast(i32, o + O.mask_layout, c.mask);
  i32[o + O.bias] = biasAt;
  writeBcast(i32, o + O.bias_layout, c.bias);
  f32[o + O.softcap] = c.softcap;
  i32[o + O.window_left] = c.window ? c.window[0] : -1;
  i32[o + O.window_right] = c.window ? c.window[1] : -1;
  i32[o + O.query_offset] = c.queryOffsets ? 0 : c.queryOffset;
  let ip = intsAt;
  i32[o + O.query_offsets] = c.queryOffsets ? ip : 0;
  if (c.queryOffsets) { i32.set(c.queryOffsets, ip >>> 2); ip += 4 * c.queryOffsets.length; }
  i32[o + O.kv_lengths] = c.kvLengths ? ip : 0;
  if (c.kvLengths) { i32.set(c.kvLengths, ip >>> 2); ip += 4 * c.kvLengths.length; }
  i32[o + O.sinks] = c.sinks ? ip : 0;
  if (c.sinks) { f32.set(c.sinks, ip >>> 2); ip += 4 * c.sinks.length; }
  i32[o + O.alibi] = c.alibi ? ip : 0;
  if (c.alibi) f32.set(c.alibi, ip >>> 2);
  const rope = c.rope;
  f32[o + O.rope_theta] = rope ? rope.theta : 0;
  i32[o + O.rope_dims] = rope ? rope.dims : 0;
  i32[o + O.rope_flags] = rope ? (rope.interleaved ? ATTN_ROPE_INTERLEAVED : 0) | (c.ropeQueries ? ATTN_ROPE_QUERIES : 0) : 0;
}

// Values of the per-call arrays writeOptions copies: per-batch offsets and
// lengths, per-head sinks and ALiBi slopes.
export function perCallLength(c) {
  return (c.queryOffsets ? c.batch : 0) + (c.kvLengths ? c.batch : 0) + (c.sinks ? c.heads : 0) + (c.alibi ? c.heads : 0);
}

/**
 * Word offsets in the arena of a forward call's structs (shape, options,
 * steps, kv) and of a backward call's (shape, options, grads), each 16-byte
 * aligned, then i32: where the per-call int32 and float arrays start.
 */
export const FORWARD = regions(SHAPE, OPTIONS, STEPS, KV);
export const BACKWARD = regions(SHAPE, OPTIONS, GRADS);
