/* attention-internal.h - what the entry points' units share (private,
 * not installed): size arithmetic that refuses to wrap, a cache's element
 * size, which path and scratch a call of attn_sdpa takes
 * (attention-scratch.c) and RoPE's pre-pass (attention-rope.c). */
#ifndef ATTN_ATTENTION_INTERNAL_H
#define ATTN_ATTENTION_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "attention.h"
#include "kernels/kernels.h"

/* *out = a * b, false on size_t overflow (one multiply's carry). */
static inline int attn__mul(size_t a, size_t b, size_t* out) {
  return !__builtin_mul_overflow(a, b, out);
}

/* *out = a b c d, false on overflow; the count must also fit in bytes of
 * float. */
static inline int attn__count(size_t a, size_t b, size_t c, size_t d, size_t* out) {
  size_t x;
  return attn__mul(a, b, &x) && attn__mul(x, c, &x) && attn__mul(x, d, &x) &&
         attn__mul(x, sizeof(float), out) && ((*out = x), 1);
}

/* Bytes of an element of a cache's dtype, 0 for an unknown dtype. */
static inline size_t attn__kv_bytes(int32_t dtype) {
  switch (dtype) {
    case ATTN_KV_FLOAT32: return 4;
    case ATTN_KV_FLOAT16: return 2;
    case ATTN_KV_INT8: return 1;
    default: return 0;
  }
}

/* Heads of a group that one call of the decode kernel takes at most: their
 * views live on attn_sdpa's stack and their turned query rows in RoPE's
 * q_rot; a compact cache's decode calls take at most this many rows. */
#define ATTN__DECODE_HEADS 64

/* Heads of a group per call of the decode kernel on a compact cache: as
 * many as keep its rows (n_q per head) within ATTN__DECODE_HEADS. */
size_t attn__compact_heads(size_t n_q, size_t group);

/* The path of a call (attention.h, TWO PATHS). */
typedef enum attn__path { ATTN__PATH_DECODE, ATTN__PATH_FUSED, ATTN__PATH_STEPS } attn__path;

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

int attn__scratch_layout(const attn_shape* shape, int32_t dtype, int with_steps, attn__scratch* at);

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

/* Whether the RoPE options are valid for rows of d_k (ATTN_ERR_ROPE). */
int attn__rope_ok(const attn_options* op, int32_t d_k);

/* Floats of the pre-pass's scratch for a shape and options into *floats
 * (0 without RoPE); returns 0 when they are invalid or too many. */
int attn__rope_floats(const attn_shape* sh, const attn_options* op, int backward, int compact, size_t* floats);

/* Sets up the pre-pass of a checked call in scratch `at` (attn__rope_floats
 * of it) and fills the key table; rc->dims is 0 without RoPE. */
void attn__rope_start(const attn_options* op, size_t n_q, size_t n_k, size_t d_k, size_t group, int backward,
                      int compact, float* at, attn__rope_call* rc);

/* The query table of batch entry b: positions off .. off + n_q - 1. */
void attn__rope_batch(const attn_options* op, size_t n_q, const attn__rope_call* rc, size_t b);

/* Turns a kv head's n_k keys (all of the call's: the step path reads them
 * all) into k_rot and points the view there. */
void attn__rope_keys(const attn__rope_call* rc, size_t n_k, attn__head* view);

/* Turns a head's query rows into q_rot from row `slot` on (a decoded
 * group's head r takes slot r) and points the view at them. */
void attn__rope_queries(const attn__rope_call* rc, attn__head* view, size_t slot);

/* The same, and points the view at the keys attn__rope_keys turned. */
void attn__rope_view(const attn__rope_call* rc, attn__head* view, size_t slot);

#endif /* ATTN_ATTENTION_INTERNAL_H */
