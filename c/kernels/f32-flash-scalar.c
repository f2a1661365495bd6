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
 * out[r] = acc[r] / l[r], or 0 when no key was allowed (l = 0), and
 * lse[r] = m[r] + log(l[r]).
 * A tile visits only the keys from the first any of its rows may see
 * (rounded down to a panel of 8) to the last (attn__key_range: causal
 * frontier, window, n_k); keys of that span outside a row's own range are
 * cut to -Infinity. */
#include <assert.h>
#include <math.h>

#include "f32-exp.h"
#include "f32-tanh.h"
#include "kernels.h"

void attn__f32_flash_scalar(const attn__flash_args* args) {
  assert(args != NULL && args->tile != NULL);
  const attn__rows* rw = &args->rows;
  const size_t n_q = rw->n_q, n_k = rw->n_k, d_k = rw->d_k, d_v = rw->d_v;
  const size_t v_stride = args->v_stride;
  float* s = args->tile;                     /* (MR, KB) logits, then exp */
  float* acc = s + ATTN__MR * ATTN__KB;      /* (MR, v_stride) */
  float* m = acc + ATTN__MR * v_stride;      /* (MR) running max */
  float* l = m + ATTN__MR;                   /* (MR) running sum */
  size_t lo[ATTN__MR], hi[ATTN__MR];         /* each row's key range */

  for (size_t i0 = 0; i0 < n_q; i0 += ATTN__MR) {
    const size_t rows = n_q - i0 < ATTN__MR ? n_q - i0 : ATTN__MR;
    size_t k_begin = n_k, k_end = 0;
    for (size_t r = 0; r < ATTN__MR; r++) {
      m[r] = -INFINITY;
      l[r] = 0.0f;
      for (size_t c = 0; c < v_stride; c++) acc[r * v_stride + c] = 0.0f;
      if (r < rows) {
        attn__key_range(rw, i0 + r, &lo[r], &hi[r]);
        if (lo[r] < hi[r]) {
          k_begin = lo[r] < k_begin ? lo[r] : k_begin;
          k_end = hi[r] > k_end ? hi[r] : k_end;
        }
      }
    }
    k_begin = k_begin / ATTN__PAD * ATTN__PAD;  /* panels start at multiples of 8 */
    for (size_t j0 = k_begin; j0 < k_end; j0 += ATTN__KB) {
      const size_t nb = k_end - j0 < ATTN__KB ? k_end - j0 : ATTN__KB;
      for (size_t r = 0; r < rows; r++) {
        const size_t i = i0 + r;
        const float* q_row = rw->q + i * rw->q_stride;  /* (d_k) */
        float* z = s + r * ATTN__KB;                    /* (nb) this row's logits */
        /* Scores q_i . k_j, summed over d_k in order. */
        for (size_t jj = 0; jj < nb; jj++) z[jj] = 0.0f;
        for (size_t p = 0; p < d_k; p++) {
          for (size_t jj = 0; jj < nb; jj++) {
            const size_t j = j0 + jj;
            const float k_jp = args->kp[((j / ATTN__PAD) * d_k + p) * ATTN__PAD + j % ATTN__PAD];
            z[jj] = z[jj] + q_row[p] * k_jp;
          }
        }
        /* Logits: softcap of the scaled score plus bias, -Infinity where not
         * allowed. */
        float block_max = -INFINITY;
        for (size_t jj = 0; jj < nb; jj++) {
          const size_t j = j0 + jj;
          float zj = z[jj] * rw->scale;
          if (rw->softcap > 0.0f) zj = attn__softcapf(zj, rw->softcap);
          if (rw->bias != NULL) zj = zj + rw->bias[i * rw->bias_stride + j];
          if (j < lo[r] || j >= hi[r] || (rw->mask != NULL && rw->mask[i * rw->mask_stride + j] == 0)) {
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
      float* out_row = rw->out + (i0 + r) * rw->out_stride;  /* (d_v) */
      const float* acc_row = acc + r * v_stride;
      for (size_t c = 0; c < d_v; c++) out_row[c] = l[r] == 0.0f ? 0.0f : acc_row[c] / l[r];
      if (rw->lse != NULL) rw->lse[i0 + r] = l[r] == 0.0f ? -INFINITY : m[r] + logf(l[r]);
    }
  }
}
