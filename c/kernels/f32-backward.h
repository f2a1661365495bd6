/* f32-backward.h - the backward kernels' arguments and the per-element
 * rules both twins share: the recomputed logit and weight, the score's
 * gradient and delta (private). */
#ifndef ATTN_KERNELS_F32_BACKWARD_H
#define ATTN_KERNELS_F32_BACKWARD_H

#include <stddef.h>

#include "f32-tanh.h"
#include "keys.h"

/* The backward pass (FlashAttention-2 order) for one (batch, query head).
 * Keys go in blocks of BWD_BC; for each block, the query rows that may see
 * one of its keys go in blocks of BWD_BR (tiles of MR in the scalar twin).
 * Per block the weights are recomputed from the saved row log-sum-exp,
 * never stored for the whole head:
 *   p[i][j]  = exp(z_ij - lse_i)                    allowed keys, else 0
 *   dp[i][j] = dout_i . v_j
 *   dz[i][j] = p (dp - delta_i), 0 where p is 0     delta_i = dout_i . out_i
 *   ds[i][j] = dz * (1 - tanh^2(s_ij / c)) * scale  (the softcap factor when c > 0)
 * and the gradients are added into the outputs:
 *   dv_j += sum_i p dout_i,  dk_j += sum_i ds q_i,  dq_i += sum_j ds k_j,
 *   dbias_ij += dz.
 * A row whose lse is -Infinity (no allowed key) adds nothing anywhere. */
#define ATTN__BWD_BC 32
#define ATTN__BWD_BR 64

/* Each gradient has the strides of what it is the gradient of: dout out's,
 * dq q's, dk k's, dv v's, dbias the bias's. */
typedef struct attn__bwd_args {
  attn__head head;            /* q, k, out (or NULL), lse (-Infinity: no allowed key), mask, bias */
  const float* k_panels;      /* (n_k_pad / 8, d_k, 8) K in panels of 8 keys (pack_rows) */
  const float* v_key_panels;  /* (n_k_pad / 8, d_v, 8) V in panels of 8 keys (pack_rows) */
  const float* dout;          /* (n_q, d_v) gradient of the output */
  float* delta;               /* (n_q) dout_i . out_i (attn__f32_backward_rows writes it) */
  float* dq;                  /* (n_q, d_k) added to */
  float* dk;                  /* (n_k, d_k) added to */
  float* dv;                  /* (n_k, d_v) added to */
  float* dbias;               /* (n_q, >= n_k) added to, or NULL */
  float* scratch;             /* attn__bwd_tile_floats(n_q, d_k, d_v) floats */
} attn__bwd_args;

/* Scratch of the backward kernels for one head: lse and delta padded to
 * n_q rounded up to 8; q and dout copied with empty rows zeroed, (n_q, d_k)
 * and (n_q, d_v); the same in panels of 8 rows (pack_rows layout); three
 * (BWD_BC, BWD_BR) tiles and three BWD_BR rows of running row statistics.
 * The scalar twin uses the same size (and less of it). */
static inline size_t attn__bwd_tile_floats(size_t n_q, size_t d_k, size_t d_v) {
  const size_t q_pad = attn__round_up(n_q, ATTN__PAD);
  return 2 * q_pad + n_q * (d_k + d_v) + q_pad * (d_k + d_v) + 3 * ATTN__BWD_BC * ATTN__BWD_BR +
         3 * ATTN__BWD_BR;
}

/* The logit of a scaled score s for (i, j) and, with a softcap, th =
 * tanh(s / c) for the gradient: the forward's tanh (f32-tanh.h), so the
 * recomputed weights match the forward's lse. -Infinity when the key is not
 * allowed. */
static inline float attn__bwd_logit(const attn__head* h, size_t i, size_t j, float s, float* th) {
  float z = s;
  *th = 0.0f;
  if (h->softcap > 0.0f) {
    *th = attn__tanhf(s / h->softcap);
    z = h->softcap * *th;
  }
  if (h->bias != NULL) z = z + h->bias[i * h->bias_stride + j];
  if (h->alibi != 0.0f) z = z + attn__alibi_bias(h, i, j);
  return attn__key_allowed(h, attn__key_span(h, i), i, j) ? z : -INFINITY;
}

/* p_ij = exp(z - lse_i) for the scaled score s, in a row with an allowed
 * key (finite lse_i); 0 where key j is not allowed. lse >= every allowed z
 * of its row, but a caller's lse may have summed in another order and sit
 * a few ulp below: the argument is clamped to 0, so p <= 1 (NaN stays NaN). */
static inline float attn__bwd_weight(const attn__head* h, size_t i, size_t j, float s, float lse, float* th) {
  const float z = attn__bwd_logit(h, i, j, s, th);
  if (z == -INFINITY) return 0.0f;
  float arg = z - lse;
  if (arg > 0.0f) arg = 0.0f;
  return attn__expf_nonpos(arg);
}

/* ds_ij * scale from a weight p != 0, dp = dout_i . v_j, delta_i and th;
 * adds dz to dbias when there is one. */
static inline float attn__bwd_score_grad(const attn__bwd_args* a, size_t i, size_t j, float p, float dp,
                                         float delta, float th) {
  const float dz = p * (dp - delta);
  if (a->dbias != NULL) a->dbias[i * a->head.bias_stride + j] = a->dbias[i * a->head.bias_stride + j] + dz;
  float ds = dz;
  if (a->head.softcap > 0.0f) ds = ds * (1.0f - th * th);
  return ds * a->head.scale;
}

/* delta_i = dout_i . out_i, summed over d_v in order, from the forward's
 * output. */
static inline void attn__bwd_delta(const attn__bwd_args* a) {
  const attn__head* h = &a->head;
  for (size_t i = 0; i < h->n_q; i++) {
    float d = 0.0f;
    for (size_t c = 0; c < h->d_v; c++) d = d + a->dout[i * h->out_stride + c] * h->out[i * h->out_stride + c];
    a->delta[i] = d;
  }
}

#endif /* ATTN_KERNELS_F32_BACKWARD_H */
