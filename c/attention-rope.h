/* attention-rope.h - RoPE's pre-pass for attention.c (private): the part
 * of the scratch it uses and the turns of q and k rows before the kernels
 * read them (attention.h, POSITIONS AND SINKS). The kernels never see the
 * difference: a view's q and k point at the turned rows. */
#ifndef ATTN_ATTENTION_ROPE_H
#define ATTN_ATTENTION_ROPE_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "attention.h"
#include "kernels/f32-rope.h"
#include "kernels/kernels.h"

/* Grouped-query decoding takes at most this many heads of a group per
 * call: their views live on the stack (attn_sdpa), their turned query rows
 * in q_rot. */
#define ATTN__DECODE_HEADS 64

/* Whether the RoPE options are valid for rows of d_k (ATTN_ERR_ROPE). */
static int attn__rope_ok(const attn_options* op, int32_t d_k) {
  if (op->rope_dims == 0) return 1;
  return op->rope_dims > 0 && op->rope_dims % 2 == 0 && op->rope_dims <= d_k && isfinite(op->rope_theta) &&
         op->rope_theta >= 1.0f && (op->rope_flags & ~(ATTN_ROPE_INTERLEAVED | ATTN_ROPE_QUERIES)) == 0;
}

/* The pre-pass's scratch, after the rest of the call's, in this order:
 *   q_table  (n_q, dims)   cos and sin at one batch entry's query positions;
 *   k_table  (n_k, dims)   the same at key positions 0 .. n_k - 1 (not with
 *                          ATTN_ROPE_QUERIES or a compact cache);
 *   q_rot    (rows, d_k)   turned q rows: a head's n_q rows, or one row per
 *                          head of a decoded group, or a compact cache's
 *                          decoded heads' n_q rows each (the forward);
 *   k_rot    (n_k, d_k)    one kv head's turned keys (not with ATTN_ROPE_QUERIES
 *                          or a compact cache), or in grouped-query decoding
 *                          the decode kernel's block of them (its tile);
 *   dq_rot   (n_q, d_k)    the backward: gradients of the turned q and k rows,
 *   dk_rot   (n_k, d_k)    turned back into dq and dk at the end. */
typedef struct attn__rope_call {
  size_t dims;     /* 0: no RoPE */
  uint32_t flags;  /* ATTN__ROPE_PAIRS_INTERLEAVED */
  double theta;
  float *q_table, *k_table, *q_rot, *k_rot, *dq_rot, *dk_rot;
} attn__rope_call;

/* Rows of q_rot: a backward call's n_q; a decode call's heads of a group
 * (at most ATTN__DECODE_HEADS, one row each), or with a compact cache
 * (`compact`) as many heads of n_q rows as attention.c's
 * attn__compact_heads takes at once; at least n_q. */
static size_t attn__rope_rows(size_t n_q, size_t group, int backward, int compact) {
  if (backward) return n_q;
  if (compact) {
    const size_t fit = n_q < ATTN__DECODE_HEADS ? ATTN__DECODE_HEADS / n_q : 1;
    return (fit < group ? fit : group) * n_q;
  }
  const size_t rows = group < ATTN__DECODE_HEADS ? group : ATTN__DECODE_HEADS;
  return rows < n_q ? n_q : rows;
}

/* Floats of the pre-pass's scratch for a shape and options into *floats
 * (0 without RoPE); returns 0 when they are invalid or too many. */
static int attn__rope_floats(const attn_shape* sh, const attn_options* op, int backward, int compact, size_t* floats) {
  *floats = 0;
  if (op->rope_dims == 0) return 1;
  if (!attn__rope_ok(op, sh->d_k) || sh->n_q < 1 || sh->n_k < 1 || sh->heads < 1 || sh->kv_heads < 1) return 0;
  const size_t nq = (size_t)sh->n_q, nk = (size_t)sh->n_k, dk = (size_t)sh->d_k, dims = (size_t)op->rope_dims;
  const size_t rows = attn__rope_rows(nq, (size_t)(sh->heads / sh->kv_heads), backward, compact);
  const int keys = (op->rope_flags & ATTN_ROPE_QUERIES) == 0 && !compact;
  const size_t parts[6][2] = {{nq, dims}, {keys ? nk : 0, dims}, {rows, dk}, {keys ? nk : 0, dk},
                              {backward ? nq : 0, dk}, {backward && keys ? nk : 0, dk}};
  for (size_t i = 0; i < 6; i++) {
    size_t n;
    if (__builtin_mul_overflow(parts[i][0], parts[i][1], &n) || __builtin_add_overflow(*floats, n, floats) ||
        *floats > SIZE_MAX / sizeof(float)) {
      *floats = 0;
      return 0;
    }
  }
  return 1;
}

/* Sets up the pre-pass of a checked call in scratch `at` (attn__rope_floats
 * of it) and fills the key table; rc->dims is 0 without RoPE. */
static void attn__rope_start(const attn_options* op, size_t n_q, size_t n_k, size_t d_k, size_t group,
                             int backward, int compact, float* at, attn__rope_call* rc) {
  *rc = (attn__rope_call){.dims = (size_t)op->rope_dims, .theta = op->rope_theta,
                          .flags = (op->rope_flags & ATTN_ROPE_INTERLEAVED) != 0 ? ATTN__ROPE_PAIRS_INTERLEAVED : 0u};
  if (rc->dims == 0) return;
  const int keys = (op->rope_flags & ATTN_ROPE_QUERIES) == 0 && !compact;
  rc->q_table = at;
  rc->k_table = rc->q_table + n_q * rc->dims;
  rc->q_rot = rc->k_table + (keys ? n_k * rc->dims : 0);
  float* next = rc->q_rot + attn__rope_rows(n_q, group, backward, compact) * d_k;
  if (keys) rc->k_rot = next, next += n_k * d_k;
  if (backward) rc->dq_rot = next, next += n_q * d_k;
  if (backward && keys) rc->dk_rot = next;
  if (keys) attn__rope_table(rc->theta, rc->dims, 0, n_k, rc->k_table);
}

/* The query table of batch entry b: positions off .. off + n_q - 1. */
static void attn__rope_batch(const attn_options* op, size_t n_q, const attn__rope_call* rc, size_t b) {
  if (rc->dims == 0) return;
  const int64_t off = op->query_offsets != NULL ? op->query_offsets[b] : op->query_offset;
  attn__rope_table(rc->theta, rc->dims, off, n_q, rc->q_table);
}

/* Turns a kv head's n_k keys (all of the call's: the step path reads them
 * all) into k_rot and points the view there. */
static void attn__rope_keys(const attn__rope_call* rc, size_t n_k, attn__head* view) {
  if (rc->k_rot == NULL) return;
  ATTN__KERNEL(rope)(view->k, view->k_stride, n_k, view->d_k, rc->k_table, rc->dims, rc->flags, rc->k_rot, view->d_k);
  view->k = rc->k_rot;
  view->k_stride = view->d_k;
}

/* Turns a head's query rows into q_rot from row `slot` on (a decoded
 * group's head r takes slot r) and points the view at them. */
static void attn__rope_queries(const attn__rope_call* rc, attn__head* view, size_t slot) {
  if (rc->dims == 0) return;
  float* q_rot = rc->q_rot + slot * view->d_k;
  ATTN__KERNEL(rope)(view->q, view->q_stride, view->n_q, view->d_k, rc->q_table, rc->dims, rc->flags, q_rot, view->d_k);
  view->q = q_rot;
  view->q_stride = view->d_k;
}

/* The same, and points the view at the keys attn__rope_keys turned. */
static void attn__rope_view(const attn__rope_call* rc, attn__head* view, size_t slot) {
  attn__rope_queries(rc, view, slot);
  if (rc->k_rot != NULL) view->k = rc->k_rot, view->k_stride = view->d_k;
}

#endif /* ATTN_ATTENTION_ROPE_H */
