/* f32-flash-scalar.c - fused attention for one (batch, head), the readable
 * spec of f32-flash-wasmsimd.c.
 *
 * Queries go in tiles of MR rows; for each tile the keys are visited in
 * blocks of KB. Per query row r the loop keeps
 *   m[r]   = max of the allowed logits seen so far (-Infinity if none),
 *   l[r]   = sum over those keys of exp(z_j - m[r]),
 *   acc[r] = sum over those keys of exp(z_j - m[r]) v_j          (d_v)
 * When a block raises the max to m', the old terms are multiplied by
 * alpha = exp(m - m') <= 1 before the block's terms are added, which keeps
 * every exp argument <= 0 (no overflow, whatever the logits). At the end
 * out[r] = acc[r] / l[r], or 0 when no key was allowed (l = 0).
 * With causal, a tile needs keys only up to its last query, so later blocks
 * are never visited. */
#include <assert.h>
#include <math.h>

#include "f32-exp.h"
#include "kernels.h"

void attn__f32_flash_scalar(const attn__head_args* args) {
  assert(args != NULL && args->scratch != NULL);
  const size_t n_q = args->n_q, n_k = args->n_k, d_k = args->d_k, d_v = args->d_v;
  const size_t v_stride = args->v_stride;
  float* s = args->scratch;                        /* (MR, KB) logits, then exp */
  float* acc = s + ATTN__MR * ATTN__KB;         /* (MR, v_stride) */
  float* m = acc + ATTN__MR * v_stride;         /* (MR) running max */
  float* l = m + ATTN__MR;                      /* (MR) running sum */

  for (size_t i0 = 0; i0 < n_q; i0 += ATTN__MR) {
    const size_t rows = n_q - i0 < ATTN__MR ? n_q - i0 : ATTN__MR;
    for (size_t r = 0; r < ATTN__MR; r++) {
      m[r] = -INFINITY;
      l[r] = 0.0f;
      for (size_t c = 0; c < v_stride; c++) acc[r * v_stride + c] = 0.0f;
    }
    const size_t k_end = args->causal && i0 + rows < n_k ? i0 + rows : n_k;
    for (size_t j0 = 0; j0 < k_end; j0 += ATTN__KB) {
      const size_t nb = k_end - j0 < ATTN__KB ? k_end - j0 : ATTN__KB;
      for (size_t r = 0; r < rows; r++) {
        const size_t i = i0 + r;
        const float* q_row = args->q + i * d_k;  /* (d_k) */
        float* z = s + r * ATTN__KB;             /* (nb) this row's logits */
        /* Scores q_i . k_j, summed over d_k in order. */
        for (size_t jj = 0; jj < nb; jj++) z[jj] = 0.0f;
        for (size_t p = 0; p < d_k; p++) {
          for (size_t jj = 0; jj < nb; jj++) {
            const size_t j = j0 + jj;
            const float k_jp = args->kp[((j / ATTN__PAD) * d_k + p) * ATTN__PAD + j % ATTN__PAD];
            z[jj] = z[jj] + q_row[p] * k_jp;
          }
        }
        /* Logits: scaled score plus bias, -Infinity where not allowed. */
        float block_max = -INFINITY;
        for (size_t jj = 0; jj < nb; jj++) {
          const size_t j = j0 + jj;
          float zj = z[jj] * args->scale;
          if (args->bias != NULL) zj = zj + args->bias[i * n_k + j];
          if ((args->causal && j > i) || (args->mask != NULL && args->mask[i * n_k + j] == 0)) {
            zj = -INFINITY;
          }
          z[jj] = zj;
          block_max = attn__max_nan(block_max, zj);
        }
        /* Online softmax update. */
        const float m_new = attn__max_nan(m[r], block_max);
        const float m_sub = m_new == -INFINITY ? 0.0f : m_new;  /* nothing allowed yet */
        const float alpha = attn__expf_nonpos(m[r] - m_sub);
        float block_sum = 0.0f;
        for (size_t jj = 0; jj < nb; jj++) {
          z[jj] = attn__expf_nonpos(z[jj] - m_sub);
          block_sum = block_sum + z[jj];
        }
        l[r] = l[r] * alpha + block_sum;
        m[r] = m_new;
        float* acc_row = acc + r * v_stride;  /* (v_stride) */
        for (size_t c = 0; c < v_stride; c++) acc_row[c] = acc_row[c] * alpha;
        for (size_t jj = 0; jj < nb; jj++) {
          const size_t j = j0 + jj;
          for (size_t c = 0; c < v_stride; c++) {
            const float v_jc = args->vp[((c / ATTN__PAD) * n_k + j) * ATTN__PAD + c % ATTN__PAD];
            acc_row[c] = acc_row[c] + z[jj] * v_jc;
          }
        }
      }
    }
    for (size_t r = 0; r < rows; r++) {
      float* out_row = args->out + (i0 + r) * d_v;  /* (d_v) */
      const float* acc_row = acc + r * v_stride;
      for (size_t c = 0; c < d_v; c++) out_row[c] = l[r] == 0.0f ? 0.0f : acc_row[c] / l[r];
    }
  }
}
