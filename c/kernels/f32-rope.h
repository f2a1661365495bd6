/* f32-rope.h - rotary position embeddings (RoPE): the cos and sin table
 * that attention.c computes once per call and the rotation kernels apply
 * (f32-rope-scalar.c, f32-rope-wasmsimd.c).
 *
 * Pair c of a row (c < dims / 2) turns by the angle p w_c at position p,
 * w_c = theta^(-2c / dims) (Su et al., RoFormer; Hugging Face's inv_freq).
 * The pairs are (c, c + dims / 2) (rotate_half, Llama, the default) or
 * (2c, 2c + 1) (interleaved, GPT-J); elements from dims on stay as they are
 * (partial rotary).
 *
 * The table holds cos(p w_c) and sin(p w_c) rounded to float32 from float64
 * values: w_c = pow(theta, -2c / dims) in float64, then, per pair, the angle
 * at each multiple of ATTN__ROPE_ANCHOR positions from the C library's cos
 * and sin of (double)p * w_c, and the positions between by angle addition in
 * float64 (at most ATTN__ROPE_ANCHOR - 1 steps of a unit rotation, each
 * adding about 1e-16 of relative error, far below float32's 6e-8). A value
 * depends on the position only, not on where a table starts, so a cache
 * that rotates its keys one append at a time gets the bits of one call over
 * all of them. */
#ifndef ATTN_F32_ROPE_H
#define ATTN_F32_ROPE_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#define ATTN__ROPE_ANCHOR 64

/* Flags of the rotation kernels. */
#define ATTN__ROPE_PAIRS_INTERLEAVED 1u  /* pairs (2c, 2c + 1); else (c, c + dims / 2) */
#define ATTN__ROPE_INVERSE 2u            /* turn back by the angle (R^T, for gradients) */

/* table (n, dims): row r, for position pos0 + r, holds cos(p w_c) at [c]
 * and sin(p w_c) at [dims / 2 + c], c < dims / 2. */
static inline void attn__rope_table(double theta, size_t dims, int64_t pos0, size_t n, float* table) {
  const size_t half = dims / 2;
  for (size_t c = 0; c < half; c++) {
    const double w = pow(theta, -2.0 * (double)c / (double)dims);
    const double step_cos = cos(w), step_sin = sin(w);
    double cos_p = 0.0, sin_p = 0.0;
    for (size_t r = 0; r < n; r++) {
      const int64_t p = pos0 + (int64_t)r;
      const int64_t from_anchor = ((p % ATTN__ROPE_ANCHOR) + ATTN__ROPE_ANCHOR) % ATTN__ROPE_ANCHOR;
      if (from_anchor == 0 || r == 0) {
        /* An anchor, or the first row: from the anchor at or before p. */
        const double anchor = (double)(p - from_anchor) * w;
        cos_p = cos(anchor), sin_p = sin(anchor);
        for (int64_t s = 0; s < from_anchor; s++) {
          const double next_cos = cos_p * step_cos - sin_p * step_sin;
          sin_p = sin_p * step_cos + cos_p * step_sin;
          cos_p = next_cos;
        }
      } else {
        const double next_cos = cos_p * step_cos - sin_p * step_sin;
        sin_p = sin_p * step_cos + cos_p * step_sin;
        cos_p = next_cos;
      }
      table[r * dims + c] = (float)cos_p;
      table[r * dims + half + c] = (float)sin_p;
    }
  }
}

#endif /* ATTN_F32_ROPE_H */
