/* attention-scratch.c - which path a call of attn_sdpa takes and the
 * scratch it needs there (attention-internal.h declares them), and the
 * scratch-size entry points. */
#include <stddef.h>
#include <stdint.h>

#include "attention-internal.h"

/* The decode kernel reads K and V unpacked, one query row at a time; the
 * fused kernel packs them and works on ATTN__MR rows at once. Decode takes
 * the calls where packing and a tile's setup do not pay for themselves
 * (bench/RESULTS.md): fewer than ATTN__MR query rows, and tiny problems,
 * n_q n_k d_k <= 2048. */
int32_t attn_sdpa_kernel(int32_t n_q, int32_t n_k, int32_t d_k, int32_t group) {
  if (n_q < 1 || n_k < 1 || d_k < 1 || group < 1) return ATTN_KERNEL_INVALID;
  const size_t nq = (size_t)n_q, nk = (size_t)n_k, dk = (size_t)d_k;
  /* n_q n_k d_k <= 2048, without a product that could wrap (size_t is 32 bits). */
  const int tiny = nk <= 2048 && dk <= 2048 / nk && nq <= 2048 / (nk * dk);
  if (nq >= ATTN__MR && !tiny) return ATTN_KERNEL_FUSED;
  return n_q == 1 && group > 1 ? ATTN_KERNEL_GROUPED_DECODE : ATTN_KERNEL_DECODE;
}

/* The path of a call: the step path when it gives step buffers; else the
 * decode kernel for few rows (a compact cache up to ATTN_KV_DECODE_ROWS:
 * converting its K and V for the fused kernel costs more than the decode
 * kernel's rows) and tiny problems; else the fused kernel. */
static attn__path attn__choose_path(const attn_shape* shape, size_t group, int32_t dtype, int with_steps) {
  if (with_steps) return ATTN__PATH_STEPS;
  if (dtype != ATTN_KV_FLOAT32 && shape->n_q <= ATTN_KV_DECODE_ROWS) return ATTN__PATH_DECODE;
  return attn_sdpa_kernel(shape->n_q, shape->n_k, shape->d_k, (int32_t)group) == ATTN_KERNEL_FUSED ? ATTN__PATH_FUSED
                                                                                                  : ATTN__PATH_DECODE;
}

size_t attn__compact_heads(size_t n_q, size_t group) {
  const size_t fit = n_q < ATTN__DECODE_HEADS ? ATTN__DECODE_HEADS / n_q : 1;
  return fit < group ? fit : group;
}

/* *at = the running total, then the total grows by n floats; 0 on overflow. */
static int attn__part(size_t* total, size_t n, size_t* at) {
  *at = *total;
  return !__builtin_add_overflow(*total, n, total) && *total <= SIZE_MAX / sizeof(float);
}

int attn__scratch_layout(const attn_shape* shape, int32_t dtype, int with_steps, attn__scratch* at) {
  if (shape->n_q < 1 || shape->n_k < 1 || shape->d_k < 1 || shape->d_v < 1 || attn__kv_bytes(dtype) == 0) return 0;
  const size_t n_q = (size_t)shape->n_q, n_k = (size_t)shape->n_k, d_k = (size_t)shape->d_k, d_v = (size_t)shape->d_v;
  const size_t group = shape->heads > 0 && shape->kv_heads > 0 && shape->heads % shape->kv_heads == 0
                           ? (size_t)(shape->heads / shape->kv_heads) : 1;
  const int compact = dtype != ATTN_KV_FLOAT32;
  size_t total = 0, n;
  *at = (attn__scratch){.path = attn__choose_path(shape, group, dtype, with_steps)};
  if (at->path == ATTN__PATH_DECODE) {
    size_t rows = n_q == 1 && group > 2 ? (group < ATTN__DECODE_HEADS ? group : ATTN__DECODE_HEADS) : 2;
    if (compact) rows = attn__compact_heads(n_q, group) * n_q;
    if (rows < 2) rows = 2;
    /* A block of K or V as float32, or an int8 K's query rows rounded to
     * 16 bits with their scales (attn__i8_queries). */
    size_t kb_d = ATTN__DECODE_KB * (d_k > d_v ? d_k : d_v);
    if (rows * (d_k / 2 + 1) > kb_d) kb_d = rows * (d_k / 2 + 1);
    /* float16: and the rows' queries times 2^112 (attn__decode_compact_wasmsimd). */
    if (dtype == ATTN_KV_FLOAT16 && (!attn__count(rows, d_k, 1, 1, &n) || __builtin_add_overflow(kb_d, n, &kb_d))) {
      return 0;
    }
    if (!attn__count(rows, attn__round_up(n_k, 4) + 2, 1, 1, &n) || !attn__part(&total, n, &at->logits) ||
        !attn__part(&total, compact ? kb_d : 0, &at->kv_tile)) {
      return 0;
    }
  } else if (at->path == ATTN__PATH_FUSED) {
    if (!attn__count(d_k, attn__round_up(n_k, ATTN__PAD), 1, 1, &n) || !attn__part(&total, n, &at->k_panels) ||
        !attn__count(n_k, attn__round_up(d_v, ATTN__PAD), 1, 1, &n) || !attn__part(&total, n, &at->v_col_panels) ||
        !attn__part(&total, attn__flash_tile_floats(d_k, d_v), &at->tile)) {
      return 0;
    }
  } else if (!attn__count(d_k, attn__round_up(n_k, ATTN__PAD), 1, 1, &n) || !attn__part(&total, n, &at->k_t)) {
    return 0;
  }
  if (compact && at->path != ATTN__PATH_DECODE &&
      (!attn__count(n_k, d_k, 1, 1, &n) || !attn__part(&total, n, &at->k_rows) ||
       !attn__count(n_k, d_v, 1, 1, &n) || !attn__part(&total, n, &at->v_rows))) {
    return 0;
  }
  at->total = total;
  return 1;
}

size_t attn_sdpa_call_scratch_size(const attn_shape* shape, int32_t kv_dtype, int32_t with_steps) {
  attn__scratch at;
  return shape != NULL && attn__scratch_layout(shape, kv_dtype, with_steps != 0, &at) ? at.total : 0;
}

size_t attn_sdpa_scratch_size(const attn_shape* shape) {
  attn__scratch plain, steps;
  if (shape == NULL || !attn__scratch_layout(shape, ATTN_KV_FLOAT32, 0, &plain) ||
      !attn__scratch_layout(shape, ATTN_KV_FLOAT32, 1, &steps)) {
    return 0;
  }
  return plain.total > steps.total ? plain.total : steps.total;
}

size_t attn_sdpa_backward_scratch_size(const attn_shape* shape) {
  if (shape == NULL) return 0;
  const int32_t n_q = shape->n_q, n_k = shape->n_k, d_k = shape->d_k, d_v = shape->d_v;
  if (n_q < 1 || n_k < 1 || d_k < 1 || d_v < 1) return 0;
  /* (d_k + d_v, n_k rounded up to 8) packed K and V, 2 n_q of lse and
   * delta, and the kernels' per-head space (at most 2 (n_q + 8) (d_k + d_v)
   * plus fixed tiles, checked here against overflow first). */
  size_t kv, rows;
  if (!attn__count((size_t)d_k + (size_t)d_v, attn__round_up((size_t)n_k, ATTN__PAD), 1, 1, &kv)) return 0;
  if (!attn__count((size_t)n_q + ATTN__PAD, (size_t)d_k + (size_t)d_v, 4, 1, &rows)) return 0;
  const size_t parts[] = {kv, 2 * (size_t)n_q, attn__bwd_tile_floats((size_t)n_q, (size_t)d_k, (size_t)d_v)};
  size_t total = 0;
  for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
    if (total + parts[i] < total || total + parts[i] > SIZE_MAX / sizeof(float)) return 0;
    total += parts[i];
  }
  return total;
}

/* base floats and RoPE's pre-pass after them, 0 when either is invalid or
 * the sum does not fit. */
static size_t attn__with_rope(size_t base, const attn_shape* shape, const attn_options* options, int backward,
                              int compact) {
  size_t rope;
  if (base == 0 || options == NULL || !attn__rope_floats(shape, options, backward, compact, &rope)) return 0;
  return base + rope > SIZE_MAX / sizeof(float) ? 0 : base + rope;
}

size_t attn_sdpa_scratch_size_with(const attn_shape* shape, const attn_options* options) {
  return attn__with_rope(attn_sdpa_scratch_size(shape), shape, options, 0, 0);
}

size_t attn_sdpa_call_scratch_size_with(const attn_shape* shape, const attn_options* options, int32_t kv_dtype,
                                        int32_t with_steps) {
  return attn__with_rope(attn_sdpa_call_scratch_size(shape, kv_dtype, with_steps), shape, options, 0,
                         kv_dtype != ATTN_KV_FLOAT32);
}

size_t attn_sdpa_backward_scratch_size_with(const attn_shape* shape, const attn_options* options) {
  return attn__with_rope(attn_sdpa_backward_scratch_size(shape), shape, options, 1, 0);
}
