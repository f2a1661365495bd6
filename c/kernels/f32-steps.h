/* f32-steps.h - the step path of one (batch, head): every step matrix
 * written in the textbook order (attention.h). One algorithm for both
 * builds: the twins f32-steps-scalar.c and f32-steps-wasmsimd.c pass their
 * gemm and softmax kernels, which the compiler inlines as constants. The
 * logits pass is plain C in both, so the twins differ only where their gemm
 * and softmax do (kernels.h says which of those give the same bits). */
#ifndef ATTN_F32_STEPS_H
#define ATTN_F32_STEPS_H

#include <assert.h>
#include <math.h>

#include "f32-exp.h"
#include "f32-tanh.h"
#include "kernels.h"

static inline void attn__f32_steps(const attn__steps_args* args, attn__f32_gemm_fn gemm,
                                   void (*softmax)(size_t n, const float* x, float* y)) {
  assert(args != NULL && args->kt != NULL);
  const attn__rows* rw = &args->rows;
  const size_t n_q = rw->n_q, n_cols = args->n_cols, d_k = rw->d_k, d_v = rw->d_v;
  const size_t kt_stride = attn__round_up(n_cols, ATTN__PAD);
  /* kt (d_k, kt_stride) = K^T, columns past n_cols zeroed. */
  for (size_t p = 0; p < d_k; p++) {
    float* kt_row = args->kt + p * kt_stride;
    for (size_t j = 0; j < n_cols; j++) kt_row[j] = args->k[j * args->k_stride + p];
    for (size_t j = n_cols; j < kt_stride; j++) kt_row[j] = 0.0f;
  }
  gemm(n_q, n_cols, d_k, rw->q, rw->q_stride, args->kt, kt_stride, args->scores, n_cols);
  for (size_t i = 0; i < n_q; i++) {
    const float* scores_row = args->scores + i * n_cols; /* (n_cols) */
    float* scaled_row = args->scaled + i * n_cols;       /* (n_cols) */
    float* weights_row = args->weights + i * n_cols;     /* (n_cols) logits, then weights */
    size_t lo, hi;
    attn__key_range(rw, i, &lo, &hi);
    float m = -INFINITY;
    for (size_t j = 0; j < n_cols; j++) {
      const float zs = scores_row[j] * rw->scale;
      scaled_row[j] = zs;
      float z = zs;
      if (rw->softcap > 0.0f) z = attn__softcapf(z, rw->softcap);
      /* Bias and mask exist only below rows.n_k (their cols). */
      if (j < lo || j >= hi || (rw->mask != NULL && rw->mask[i * rw->mask_stride + j] == 0)) {
        z = -INFINITY;
      } else if (rw->bias != NULL) {
        z = z + rw->bias[i * rw->bias_stride + j];
      }
      weights_row[j] = z;
      m = attn__max_nan(m, z);
    }
    if (args->logits != NULL) {
      for (size_t j = 0; j < n_cols; j++) args->logits[i * n_cols + j] = weights_row[j];
    }
    if (rw->lse != NULL) {
      /* log-sum-exp in the definition's order: the max, then the sum of exp. */
      float l = 0.0f;
      if (m != -INFINITY) {
        for (size_t j = 0; j < n_cols; j++) l = l + attn__expf_nonpos(weights_row[j] - m);
      }
      rw->lse[i] = m == -INFINITY ? -INFINITY : m + logf(l);
    }
    softmax(n_cols, weights_row, weights_row);
  }
  /* output row i = weights V over the row's key range [lo, hi) only, as the
   * fused kernels: keys outside it (causal frontier, window, kv_lengths, a
   * short mask) are not read, so NaN or Infinity in V there cannot reach the
   * output through 0 * NaN. A row with no allowed key is 0 even where V holds
   * Infinity or NaN (0 * Inf would make it NaN), as the fused path gives. */
  for (size_t i = 0; i < n_q; i++) {
    const float* weights_row = args->weights + i * n_cols; /* (n_cols) */
    float* out_row = rw->out + i * rw->out_stride;         /* (d_v) */
    size_t lo, hi;
    attn__key_range(rw, i, &lo, &hi);
    size_t j = lo;
    while (j < hi && weights_row[j] == 0.0f) j++;
    if (j == hi) {
      for (size_t c = 0; c < d_v; c++) out_row[c] = 0.0f;
    } else {
      gemm(1, d_v, hi - lo, weights_row + lo, n_cols, args->v + lo * args->v_stride, args->v_stride, out_row,
           rw->out_stride);
    }
  }
}

#endif /* ATTN_F32_STEPS_H */
