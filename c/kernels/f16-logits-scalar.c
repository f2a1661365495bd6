/* f16-logits-scalar.c - four rows' logits from a float16 K read in place,
 * the readable spec of f16-logits-wasmsimd.c (kernels.h states the
 * contract): each key's value as its bits' float32 (attn__f16_f32_bits,
 * the value times 2^-112) against q rows that carry the 2^112, the dot in
 * attn__f32_logits_scalar's order. */
#include "kernels.h"

int attn__f16_f32_logits4_scalar(const float* q, const uint16_t* k, size_t k_stride, size_t j0, size_t j1, size_t d_k,
                                 const float scale[4], float* const z[4]) {
  int finite = 1;
  for (size_t j = j0; j < j1; j++) {
    const uint16_t* k_row = k + j * k_stride;  /* (d_k) bits */
    for (size_t p = 0; p < d_k; p++) finite = finite && (k_row[p] & 0x7c00) != 0x7c00;
    for (size_t t = 0; t < 4; t++) {
      const float* q_row = q + t * d_k;  /* (d_k) */
      float s[4] = {0.0f, 0.0f, 0.0f, 0.0f};
      for (size_t p = 0; p < d_k; p++) s[p % 4] = s[p % 4] + q_row[p] * attn__f16_f32_bits(k_row[p]);
      z[t][j - j0] = ((s[0] + s[2]) + (s[1] + s[3])) * scale[t];
    }
  }
  return finite;
}
