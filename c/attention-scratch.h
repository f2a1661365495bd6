/* attention-scratch.h - which path a call of attn_sdpa takes and the
 * scratch it needs there, for attention.c (private). */
#ifndef ATTN_ATTENTION_SCRATCH_H
#define ATTN_ATTENTION_SCRATCH_H

#include <stddef.h>
#include <stdint.h>

#include "attention.h"
#include "attention-count.h"
#include "attention-rope.h"
#include "kernels/kernels.h"

/* Bytes of an element of a cache's dtype, 0 for an unknown dtype. */
static size_t attn__kv_bytes(int32_t dtype) {
  switch (dtype) {
    case ATTN_KV_FLOAT32: return 4;
    case ATTN_KV_FLOAT16: return 2;
    case ATTN_KV_INT8: return 1;
    default: return 0;
  }
}

/* Which kernel takes the output path. The decode kernel reads K and V
 * unpacked, one query row at a time; the fused kernel packs them and works
 * on 4 rows at once, faster from 64 x 64 x 64 up. Decode wins where packing
 * and a tile's setup do not pay for themselves (measured side by side, see
 * bench/RESULTS.md): fewer than 4 query rows, and tiny problems,
 * n_q n_k d_k <= 2048. */
static int attn__use_decode(size_t n_q, size_t n_k, size_t d_k) {
  /* n_q n_k d_k <= 2048, without a product that could wrap (size_t is 32 bits). */
  const int tiny = n_k <= 2048 && d_k <= 2048 / n_k && n_q <= 2048 / (n_k * d_k);
  return n_q < ATTN__MR || tiny;
}

/* Grouped-query decoding takes at most this many heads of a group per
 * call (their views live on the stack); a compact cache's decode calls at
 * most this many rows: ATTN__DECODE_HEADS, defined in attention-rope.h
 * (its q_rot holds as many rows). */

/* The path of a call (attention.h, TWO PATHS): the step path when it
 * gives step buffers; else the decode kernel for few rows (a compact cache
 * up to ATTN_KV_DECODE_ROWS: converting its K and V for the fused kernel
 * costs more than the decode kernel's rows) and tiny problems; else the
 * fused kernel. */
typedef enum attn__path { ATTN__PATH_DECODE, ATTN__PATH_FUSED, ATTN__PATH_STEPS } attn__path;

static attn__path attn__choose_path(size_t n_q, size_t n_k, size_t d_k, int32_t dtype, int with_steps) {
  if (with_steps) return ATTN__PATH_STEPS;
  if (dtype != ATTN_KV_FLOAT32 && n_q <= ATTN_KV_DECODE_ROWS) return ATTN__PATH_DECODE;
  return attn__use_decode(n_q, n_k, d_k) ? ATTN__PATH_DECODE : ATTN__PATH_FUSED;
}

/* Heads of a group per call of the decode kernel on a compact cache: as
 * many as keep its rows (n_q per head) within ATTN__DECODE_HEADS. */
static size_t attn__compact_heads(size_t n_q, size_t group) {
  const size_t fit = n_q < ATTN__DECODE_HEADS ? ATTN__DECODE_HEADS / n_q : 1;
  return fit < group ? fit : group;
}

/* The scratch of one call, as float offsets from its start; each path
 * reserves only its own parts, named for what they hold:
 *   decode:  logits    attn__decode_scratch_floats(rows, n_k), rows: the
 *                      group's heads (grouped-query, at most 64), two
 *                      rows, or a compact cache's heads x n_q;
 *            kv_tile   a compact cache: (ATTN__DECODE_KB, max(d_k, d_v)), or
 *                      more: rows x (d_k / 2 + 1), int8 K's rounded queries;
 *                      float16: and then (rows, d_k), the queries times 2^112;
 *   fused:   k_panels  (n_k rounded up to 8, d_k) K in panels of 8 keys;
 *            v_col_panels (d_v rounded up to 8, n_k) V in panels of 8 columns;
 *            tile      attn__flash_tile_floats;
 *   steps:   k_t       (d_k, n_k rounded up to 8) K^T;
 *   fused and steps on a compact cache:
 *            k_rows, v_rows  (n_k, d_k), (n_k, d_v) one kv head's K and V as float32.
 * Nothing is (n_q, n_k): the step matrices are the caller's. 0 when the
 * sizes are invalid or the count overflows. */
typedef struct attn__scratch {
  attn__path path;
  size_t logits, kv_tile, k_panels, v_col_panels, tile, k_t, k_rows, v_rows, total;
} attn__scratch;

/* *at = the running total, then the total grows by n floats; 0 on overflow. */
static int attn__part(size_t* total, size_t n, size_t* at) {
  *at = *total;
  return !__builtin_add_overflow(*total, n, total) && *total <= SIZE_MAX / sizeof(float);
}

static int attn__scratch_layout(const attn_shape* shape, int32_t dtype, int with_steps, attn__scratch* at) {
  if (shape->n_q < 1 || shape->n_k < 1 || shape->d_k < 1 || shape->d_v < 1 || attn__kv_bytes(dtype) == 0) return 0;
  const size_t n_q = (size_t)shape->n_q, n_k = (size_t)shape->n_k, d_k = (size_t)shape->d_k, d_v = (size_t)shape->d_v;
  const size_t group = shape->heads > 0 && shape->kv_heads > 0 && shape->heads % shape->kv_heads == 0
                           ? (size_t)(shape->heads / shape->kv_heads) : 1;
  const int compact = dtype != ATTN_KV_FLOAT32;
  size_t total = 0, n;
  *at = (attn__scratch){.path = attn__choose_path(n_q, n_k, d_k, dtype, with_steps)};
  if (at->path == ATTN__PATH_DECODE) {
    size_t rows = n_q == 1 && group > 2 ? (group < ATTN__DECODE_HEADS ? group : ATTN__DECODE_HEADS) : 2;
    if (compact) rows = attn__compact_heads(n_q, group) * n_q;
    if (rows < 2) rows = 2;
    /* A block of K or V as float32, or an int8 K's query rows rounded to
     * 16 bits with their scales (attn__i8_logits_wasmsimd). */
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

#endif
