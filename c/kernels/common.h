/* common.h - the tile sizes every kernel shares and the two float rules
 * every kernel applies alike: NaN wins a max, and a row's log-sum-exp
 * (private). */
#ifndef ATTN_KERNELS_COMMON_H
#define ATTN_KERNELS_COMMON_H

#include <math.h>
#include <stddef.h>

/* Query rows per tile of the fused kernel, and keys per key block. */
#define ATTN__MR 4
#define ATTN__KB 256

/* Packing width: the fused kernel reads K and V in panels of this many keys
 * or value columns (zero padded), so the SIMD kernels always read whole
 * vectors from consecutive addresses. */
#define ATTN__PAD 8

static inline size_t attn__round_up(size_t n, size_t m) { return (n + m - 1) / m * m; }

/* max(a, b) where NaN wins, as wasm's f32x4.max: a row with a NaN logit gets
 * a NaN max, so its output is NaN rather than a softmax that skipped it. */
static inline float attn__max_nan(float a, float b) {
  if (a != a || b != b) return a + b;
  return a > b ? a : b;
}

/* The log-sum-exp of a row from its softmax max m and sum l: -Infinity for
 * a row with no allowed key (l = 0). */
static inline float attn__lse(float m, float l) { return l == 0.0f ? -INFINITY : m + logf(l); }

#endif /* ATTN_KERNELS_COMMON_H */
