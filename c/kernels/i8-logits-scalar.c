/* i8-logits-scalar.c - the decode kernel's logits from an int8 K, the
 * readable spec of i8-logits-wasmsimd.c (kernels.h states the contract):
 * each row's q rounded to 16 bits (attn__q16_row), each key's logit an
 * exact integer dot product scaled twice (attn__i8_logit). */
#include "kernels.h"

void attn__i8_f32_logits_scalar(const attn__decode_args* args, size_t lo, size_t hi, float* z, size_t z_stride,
                                void* space) {
  const attn__head* h0 = &args->heads[0];
  const size_t n_rows = attn__decode_rows(args), d_k = h0->d_k;
  int16_t* qi = space;                        /* (n_rows, d_k) */
  const float* qs = attn__i8_queries(args, space);  /* (n_rows) */
  for (size_t r = 0; r < n_rows; r++) {
    size_t i;
    const attn__head* h = attn__decode_head(args, r, &i);
    const attn__span s = attn__key_span(h, i);
    const size_t a = s.lo > lo ? s.lo : lo, b = s.hi < hi ? s.hi : hi;
    for (size_t j = a; j < b; j++) z[r * z_stride + (j - s.lo)] = attn__i8_logit(&h0->k_rows, j, qi + r * d_k, d_k, qs[r]);
  }
}
