/* attention-rope.c - RoPE for the entry points: attn_rope, and the
 * pre-pass of attn_sdpa and attn_sdpa_backward (attention-internal.h
 * declares it): the part of the scratch it uses and the turns of q and k
 * rows before the kernels read them (attention.h, POSITIONS AND SINKS).
 * The kernels never see the difference: a view's q and k point at the
 * turned rows. The pre-pass turns each head's q rows into scratch, and each
 * kv head's k rows before the kernels read or pack them; in grouped-query
 * decoding (one query row, heads > kv_heads) the decode kernel turns the
 * keys itself as it reads them, once for the group's heads: in registers,
 * straight into the logits, for up to 4 heads with rotate_half pairs and
 * rope_dims / 2 and d_k multiples of 4 (f32-rope-logits-*.c); else 16 keys
 * at a time into a tile. The bits are the same every way. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "attention-internal.h"
#include "kernels/f32-rope.h"

int attn__rope_ok(const attn_options* op, int32_t d_k) {
  if (op->rope_dims == 0) return 1;
  return op->rope_dims > 0 && op->rope_dims % 2 == 0 && op->rope_dims <= d_k && isfinite(op->rope_theta) &&
         op->rope_theta >= 1.0f && (op->rope_flags & ~(ATTN_ROPE_INTERLEAVED | ATTN_ROPE_QUERIES)) == 0;
}

/* Rows of q_rot: a backward call's n_q; a decode call's heads of a group
 * (at most ATTN__DECODE_HEADS, one row each), or with a compact cache
 * (`compact`) as many heads of n_q rows as attn__compact_heads takes at
 * once; at least n_q. */
static size_t attn__rope_rows(size_t n_q, size_t group, int backward, int compact) {
  if (backward) return n_q;
  if (compact) return attn__compact_heads(n_q, group) * n_q;
  const size_t rows = group < ATTN__DECODE_HEADS ? group : ATTN__DECODE_HEADS;
  return rows < n_q ? n_q : rows;
}

int attn__rope_floats(const attn_shape* sh, const attn_options* op, int backward, int compact, size_t* floats) {
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

void attn__rope_start(const attn_options* op, size_t n_q, size_t n_k, size_t d_k, size_t group,
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

void attn__rope_batch(const attn_options* op, size_t n_q, const attn__rope_call* rc, size_t b) {
  if (rc->dims == 0) return;
  const int64_t off = op->query_offsets != NULL ? op->query_offsets[b] : op->query_offset;
  attn__rope_table(rc->theta, rc->dims, off, n_q, rc->q_table);
}

void attn__rope_keys(const attn__rope_call* rc, size_t n_k, attn__head* view) {
  if (rc->k_rot == NULL) return;
  ATTN__KERNEL(rope)(view->k, view->k_stride, n_k, view->d_k, rc->k_table, rc->dims, rc->flags, rc->k_rot, view->d_k);
  view->k = rc->k_rot;
  view->k_stride = view->d_k;
}

void attn__rope_queries(const attn__rope_call* rc, attn__head* view, size_t slot) {
  if (rc->dims == 0) return;
  float* q_rot = rc->q_rot + slot * view->d_k;
  ATTN__KERNEL(rope)(view->q, view->q_stride, view->n_q, view->d_k, rc->q_table, rc->dims, rc->flags, q_rot, view->d_k);
  view->q = q_rot;
  view->q_stride = view->d_k;
}

void attn__rope_view(const attn__rope_call* rc, attn__head* view, size_t slot) {
  attn__rope_queries(rc, view, slot);
  if (rc->k_rot != NULL) view->k = rc->k_rot, view->k_stride = view->d_k;
}

attn_status attn_rope(float* x, int32_t heads, size_t head_stride, int32_t n, size_t row_stride, int32_t d,
                      int32_t position, float theta, int32_t dims, uint32_t flags, float* scratch,
                      size_t scratch_floats) {
  if (x == NULL) return ATTN_ERR_NULL;
  if (heads < 1 || n < 1 || d < 1) return ATTN_ERR_SHAPE;
  const attn_options op = {.rope_theta = theta, .rope_dims = dims, .rope_flags = flags};
  if (dims == 0 || !attn__rope_ok(&op, d) || (flags & ATTN_ROPE_QUERIES) != 0) return ATTN_ERR_ROPE;
  size_t need;
  if (!attn__count((size_t)n, (size_t)dims, 1, 1, &need)) return ATTN_ERR_OVERFLOW;
  if (scratch == NULL || scratch_floats < need) return ATTN_ERR_SCRATCH;
  attn__rope_table(theta, (size_t)dims, position, (size_t)n, scratch);
  const uint32_t kflags = (flags & ATTN_ROPE_INTERLEAVED) != 0 ? ATTN__ROPE_PAIRS_INTERLEAVED : 0u;
  for (size_t g = 0; g < (size_t)heads; g++) {
    float* rows = x + g * head_stride;
    ATTN__KERNEL(rope)(rows, row_stride, (size_t)n, (size_t)d, scratch, (size_t)dims, kflags, rows, row_stride);
  }
  return ATTN_OK;
}
