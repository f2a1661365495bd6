/* attention-count.h - size arithmetic that refuses to wrap, for the entry
 * points (private; attention-scratch.h uses attn__count too). */
#ifndef ATTN_ATTENTION_COUNT_H
#define ATTN_ATTENTION_COUNT_H

#include <stddef.h>

/* *out = a * b, false on size_t overflow. The builtin (gcc and clang) checks
 * the carry of one multiply; a division-based check cost more than the whole
 * attention of a few tokens. */
static inline int attn__mul(size_t a, size_t b, size_t* out) {
  return !__builtin_mul_overflow(a, b, out);
}

/* Element counts must also fit in bytes of float. */
static inline int attn__count(size_t a, size_t b, size_t c, size_t d, size_t* out) {
  size_t x;
  return attn__mul(a, b, &x) && attn__mul(x, c, &x) && attn__mul(x, d, &x) &&
         attn__mul(x, sizeof(float), out) && ((*out = x), 1);
}

#endif /* ATTN_ATTENTION_COUNT_H */
