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
  assert(args != NULL && args->k_t != NULL);
  const attn__head* h = &args->head;
  const size_t n_q = h->n_q, n_cols = args->n_cols, d_k = h->d_k, d_v = h->d_v;
  const size_t k_t_stride = attn__round_up(n_cols, ATTN__PAD);
  /* k_t (d_k, k_t_stride) = K^T, columns past n_cols zeroed. */
  for (size_t p = 0; p < d_k; p++) {
    float* k_t_row = args->k_t + p * k_t_stride;
    for (size_t j = 0; j < n_cols; j++) k_t_row[j] = h->k[j * h->k_stride + p];
    for (size_t j = n_cols; j < k_t_stride; j++) k_t_row[j] = 0.0f;
  }
  gemm(n_q, n_cols, d_k, h->q, h->q_stride, args->k_t, k_t_stride, args->scores, n_cols);
  for (size_t i = 0; i < n_q; i++) {
    const float* scores_row = args->scores + i * n_cols; /* (n_cols) */
    float* scaled_row = args->scaled + i * n_cols;       /* (n_cols) */
    float* weights_row = args->weights + i * n_cols;     /* (n_cols) logits, then weights */
    const attn__span span = attn__key_span(h, i);
    float m = -INFINITY;
    for (size_t j = 0; j < n_cols; j++) {
      const float zs = scores_row[j] * h->scale;
      scaled_row[j] = zs;
      float z = zs;
      if (h->softcap > 0.0f) z = attn__softcapf(z, h->softcap);
      /* Bias and mask exist only below the head's n_k (their cols). */
      if (!attn__key_allowed(h, span, i, j)) {
        z = -INFINITY;
      } else {
        if (h->bias != NULL) z = z + h->bias[i * h->bias_stride + j];
        if (h->alibi != 0.0f) z = z + attn__alibi_bias(h, i, j);
      }
      weights_row[j] = z;
      m = attn__max_nan(m, z);
    }
    if (args->logits != NULL) {
      const float shift = attn__alibi_shift(h, i);  /* the logits as defined: ALiBi from p */
      for (size_t j = 0; j < n_cols; j++) args->logits[i * n_cols + j] = h->alibi == 0.0f ? weights_row[j] : weights_row[j] + shift;
    }
    float l = 0.0f, alpha = 1.0f;
    if (h->lse != NULL || h->sink != -INFINITY) {
      /* log-sum-exp in the definition's order: the max, then the sum of exp;
       * then the sink joins them. */
      if (m != -INFINITY) {
        for (size_t j = 0; j < n_cols; j++) l = l + attn__expf_nonpos(weights_row[j] - m);
      }
      const float l_keys = l;
      alpha = attn__sink_join(attn__row_sink(h, i), &m, &l);
      alpha = l_keys == 0.0f ? 0.0f : alpha * l_keys / l;  /* the sink's share off every weight */
      if (h->lse != NULL) h->lse[i] = attn__row_lse(h, i, m, l);
    }
    softmax(n_cols, weights_row, weights_row);
    if (h->sink != -INFINITY) {
      for (size_t j = 0; j < n_cols; j++) weights_row[j] = weights_row[j] * alpha;
    }
  }
  /* output row i = weights V over the row's key span only, as the fused
   * kernels: keys outside it (causal frontier, window, kv_lengths, a short
   * mask) are not read, so NaN or Infinity in V there cannot reach the
   * output through 0 * NaN. A row with no allowed key is 0 even where V holds
   * Infinity or NaN (0 * Inf would make it NaN), as the fused path gives. */
  for (size_t i = 0; i < n_q; i++) {
    const float* weights_row = args->weights + i * n_cols; /* (n_cols) */
    float* out_row = h->out + i * h->out_stride;           /* (d_v) */
    const attn__span span = attn__key_span(h, i);
    size_t j = span.lo;
    while (j < span.hi && weights_row[j] == 0.0f) j++;
    if (j == span.hi) {
      for (size_t c = 0; c < d_v; c++) out_row[c] = 0.0f;
    } else {
      gemm(1, d_v, span.hi - span.lo, weights_row + span.lo, n_cols, h->v + span.lo * h->v_stride, h->v_stride,
           out_row, h->out_stride);
    }
  }
}

#endif /* ATTN_F32_STEPS_H */
