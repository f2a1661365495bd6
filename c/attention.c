/* attention.c - the public entry points: check arguments, pick a kernel,
 * return a status. No intrinsics here; the manual is attention.h. */
#include "attention.h"

#include <math.h>

#include "kernels/kernels.h"

const char* attn_status_string(int32_t status) {
  switch (status) {
    case ATTN_OK: return "ok";
    case ATTN_ERR_NULL: return "a required buffer is missing (NULL pointer)";
    case ATTN_ERR_SHAPE: return "a size is not a positive integer in range";
    case ATTN_ERR_HEADS: return "heads must be a multiple of kv_heads";
    case ATTN_ERR_SCALE: return "scale must be a finite number";
    case ATTN_ERR_FLAGS: return "unknown flag bits";
    case ATTN_ERR_SCRATCH: return "scratch buffer missing or too small";
    case ATTN_ERR_OVERFLOW: return "the sizes are too large for this address space";
    case ATTN_ERR_STEPS: return "scores, scaled and weights must be given together";
    default: return "unknown status";
  }
}

int32_t attn_simd_enabled(void) {
#ifdef __wasm_simd128__
  return 1;
#else
  return 0;
#endif
}

float attn_default_scale(int32_t d_k) {
  if (d_k < 1) return 0.0f;
  return (float)(1.0 / sqrt((double)d_k));
}

/* *out = a * b, false on size_t overflow. The builtin (gcc and clang) checks
 * the carry of one multiply; a division-based check cost more than the whole
 * attention of a few tokens. */
static int attn__mul(size_t a, size_t b, size_t* out) {
  return !__builtin_mul_overflow(a, b, out);
}

/* Element counts must also fit in bytes of float. */
static int attn__count(size_t a, size_t b, size_t c, size_t d, size_t* out) {
  size_t x;
  return attn__mul(a, b, &x) && attn__mul(x, c, &x) && attn__mul(x, d, &x) &&
         attn__mul(x, sizeof(float), out) && ((*out = x), 1);
}

size_t attn_sdpa_scratch_size(int32_t n_q, int32_t n_k, int32_t d_k, int32_t d_v) {
  if (n_q < 1 || n_k < 1 || d_k < 1 || d_v < 1) return 0;
  size_t kt, v, total;
  if (!attn__count((size_t)d_k, attn__round_up((size_t)n_k, ATTN__PAD), 1, 1, &kt)) return 0;
  if (!attn__count((size_t)n_k, attn__round_up((size_t)d_v, ATTN__PAD), 1, 1, &v)) return 0;
  total = kt + v;
  if (total < kt) return 0;
  const size_t tile = attn__flash_tile_floats((size_t)d_k, (size_t)d_v);
  if (total + tile < total || total + tile > SIZE_MAX / sizeof(float)) return 0;
  return total + tile;
}

/* kt (d_k, kt_stride) = k (n_k, d_k)^T, columns past n_k zeroed. */
static void attn__pack_kt(const float* k, size_t n_k, size_t d_k, float* kt, size_t kt_stride) {
  for (size_t p = 0; p < d_k; p++) {
    float* kt_row = kt + p * kt_stride;
    for (size_t j = 0; j < n_k; j++) kt_row[j] = k[j * d_k + p];
    for (size_t j = n_k; j < kt_stride; j++) kt_row[j] = 0.0f;
  }
}

/* vp (v_stride / 8, n_k, 8) = v (n_k, d_v) in panels of 8 columns, the
 * layout of attn__head_args.vp; columns past d_v are zero. V is read once,
 * row by row (a panel at a time would re-read every row for each panel), and
 * each panel is written sequentially. */
static void attn__pack_v_panels(const float* v, size_t n_k, size_t d_v, float* vp) {
  const size_t full = d_v / ATTN__PAD;  /* panels with 8 real columns */
  for (size_t j = 0; j < n_k; j++) {
    const float* row = v + j * d_v;  /* (d_v) */
    for (size_t s = 0; s < full; s++) {
      float* dst = vp + (s * n_k + j) * ATTN__PAD;  /* (8) */
      for (size_t cc = 0; cc < ATTN__PAD; cc++) dst[cc] = row[s * ATTN__PAD + cc];
    }
    if (full * ATTN__PAD < d_v) {
      float* dst = vp + (full * n_k + j) * ATTN__PAD;  /* (8) */
      for (size_t cc = 0; cc < ATTN__PAD; cc++) {
        const size_t c = full * ATTN__PAD + cc;
        dst[cc] = c < d_v ? row[c] : 0.0f;
      }
    }
  }
}

/* The step path for one (batch, head); kt is this head's packed K^T. */
static void attn__steps_head(const float* q, const float* kt, size_t kt_stride, const float* v,
                             float* out, size_t n_q, size_t n_k, size_t d_k, size_t d_v,
                             const uint8_t* mask, const float* bias, float scale, int causal,
                             float* scores, float* scaled, float* weights) {
  ATTN__KERNEL(gemm)(n_q, n_k, d_k, q, d_k, kt, kt_stride, scores, n_k);
  for (size_t i = 0; i < n_q; i++) {
    const float* scores_row = scores + i * n_k;  /* (n_k) */
    float* scaled_row = scaled + i * n_k;        /* (n_k) */
    float* weights_row = weights + i * n_k;      /* (n_k) logits, then weights */
    for (size_t j = 0; j < n_k; j++) {
      const float zs = scores_row[j] * scale;
      scaled_row[j] = zs;
      float z = bias != NULL ? zs + bias[i * n_k + j] : zs;
      if ((causal && j > i) || (mask != NULL && mask[i * n_k + j] == 0)) z = -INFINITY;
      weights_row[j] = z;
    }
    ATTN__KERNEL(softmax)(n_k, weights_row, weights_row);
  }
  ATTN__KERNEL(gemm)(n_q, d_v, n_k, weights, n_k, v, d_v, out, d_v);
  /* A row with no allowed key is 0 even where V holds Infinity or NaN
   * (0 * Inf would make it NaN), as the fused path gives. */
  for (size_t i = 0; i < n_q; i++) {
    const float* weights_row = weights + i * n_k;
    size_t j = 0;
    while (j < n_k && weights_row[j] == 0.0f) j++;
    if (j == n_k) {
      for (size_t c = 0; c < d_v; c++) out[i * d_v + c] = 0.0f;
    }
  }
}

/* Which kernel takes the output path. The decode kernel reads K and V
 * unpacked, one query row at a time; the fused kernel packs them and works
 * on 4 rows at once, 1.4-1.7x faster from 64 x 64 x 64 up. Decode wins where
 * packing and a tile's setup do not pay for themselves, measured side by
 * side (SIMD build, V8, raw calls):
 *   - fewer than 4 query rows: nq = 1, nk = 4096 runs 5x faster;
 *   - tiny problems, n_q n_k d_k <= 2048: 4 x 4 x 3 in 1.0 us (fused 1.4),
 *     4 x 4 x 64 in 0.7 us (2.5), 8 x 8 x 32 in 1.2 us (1.6); at 4096
 *     (16 x 16 x 16) the fused kernel is ahead again. */
static int attn__use_decode(size_t n_q, size_t n_k, size_t d_k) {
  /* n_q n_k d_k <= 2048, without a product that could wrap (size_t is 32 bits). */
  const int tiny = n_k <= 2048 && d_k <= 2048 / n_k && n_q <= 2048 / (n_k * d_k);
  return n_q < ATTN__MR || tiny;
}

attn_status attn_sdpa(const float* q, const float* k, const float* v, float* out,
                      int32_t batch, int32_t heads, int32_t kv_heads,
                      int32_t n_q, int32_t n_k, int32_t d_k, int32_t d_v,
                      const uint8_t* mask, const float* bias, float scale, uint32_t flags,
                      float* scores, float* scaled, float* weights,
                      float* scratch, size_t scratch_floats) {
  if (q == NULL || k == NULL || v == NULL || out == NULL) return ATTN_ERR_NULL;
  if (batch < 1 || heads < 1 || kv_heads < 1 || n_q < 1 || n_k < 1 || d_k < 1 || d_v < 1) {
    return ATTN_ERR_SHAPE;
  }
  if (heads % kv_heads != 0) return ATTN_ERR_HEADS;
  if (!isfinite(scale)) return ATTN_ERR_SCALE;
  if ((flags & ~ATTN_CAUSAL) != 0) return ATTN_ERR_FLAGS;
  const int with_steps = scores != NULL;
  if ((scaled != NULL) != with_steps || (weights != NULL) != with_steps) return ATTN_ERR_STEPS;
  size_t count;
  if (!attn__count((size_t)batch, (size_t)heads, (size_t)n_q, (size_t)d_k, &count) ||
      !attn__count((size_t)batch, (size_t)heads, (size_t)n_q, (size_t)d_v, &count) ||
      !attn__count((size_t)batch, (size_t)kv_heads, (size_t)n_k, (size_t)d_k, &count) ||
      !attn__count((size_t)batch, (size_t)kv_heads, (size_t)n_k, (size_t)d_v, &count) ||
      !attn__count((size_t)batch, (size_t)heads, (size_t)n_q, (size_t)n_k, &count)) {
    return ATTN_ERR_OVERFLOW;
  }
  const size_t need = attn_sdpa_scratch_size(n_q, n_k, d_k, d_v);
  if (need == 0) return ATTN_ERR_OVERFLOW;
  if (scratch == NULL || scratch_floats < need) return ATTN_ERR_SCRATCH;

  const size_t nq = (size_t)n_q, nk = (size_t)n_k, dk = (size_t)d_k, dv = (size_t)d_v;
  const size_t group = (size_t)(heads / kv_heads);  /* query heads per kv head */
  const size_t kt_stride = attn__round_up(nk, ATTN__PAD);
  const size_t v_stride = attn__round_up(dv, ATTN__PAD);
  float* kt = scratch;                   /* (d_k, kt_stride) K^T, step path; or K panels */
  float* vp = kt + dk * kt_stride;       /* (v_stride / 8, n_k, 8) V panels */
  float* tile = vp + nk * v_stride;      /* attn__flash_tile_floats(d_k, d_v) */
  const int causal = (flags & ATTN_CAUSAL) != 0;
  /* With the decode kernel nothing is packed, and the scratch from kt on
   * holds two rows of logits (kt and vp hold at least 2 n_k rounded up to 4
   * floats). */
  const int decode = !with_steps && attn__use_decode(nq, nk, dk);
  const attn__head_fn kernel = decode ? ATTN__KERNEL(decode) : ATTN__KERNEL(flash);

  for (size_t b = 0; b < (size_t)batch; b++) {
    for (size_t g = 0; g < (size_t)kv_heads; g++) {
      const size_t kv = b * (size_t)kv_heads + g;  /* index of this kv head */
      const float* k_head = k + kv * nk * dk;      /* (n_k, d_k) */
      const float* v_head = v + kv * nk * dv;      /* (n_k, d_v) */
      if (with_steps) {
        attn__pack_kt(k_head, nk, dk, kt, kt_stride);
      } else if (!decode) {
        ATTN__KERNEL(pack_k)(k_head, nk, dk, kt);
        attn__pack_v_panels(v_head, nk, dv, vp);
      }
      if (decode && nq == 1 && group > 1) {
        /* Grouped-query decoding: with one query row per head, the group's
         * rows are contiguous in q and out, and the decode kernel takes them
         * as one call that reads this K and V once per pair of heads. */
        const size_t qh = b * (size_t)heads + g * group;  /* the group's first query head */
        const attn__head_args args = {
            .q = q + qh * dk, .k = k_head, .v = v_head, .out = out + qh * dv,
            .mask = mask, .bias = bias, .scratch = kt,
            .n_q = group, .n_k = nk, .d_k = dk, .d_v = dv,
            .scale = scale, .causal = causal, .one_query = 1,
        };
        kernel(&args);
        continue;
      }
      /* The query heads that share this kv head reuse the packed K^T and V. */
      for (size_t h = g * group; h < (g + 1) * group; h++) {
        const size_t qh = b * (size_t)heads + h;  /* index of this query head */
        const float* q_head = q + qh * nq * dk;   /* (n_q, d_k) */
        float* out_head = out + qh * nq * dv;     /* (n_q, d_v) */
        if (with_steps) {
          const size_t off = qh * nq * nk;  /* (n_q, n_k) step matrices */
          attn__steps_head(q_head, kt, kt_stride, v_head, out_head, nq, nk, dk, dv, mask, bias,
                           scale, causal, scores + off, scaled + off, weights + off);
        } else {
          const attn__head_args args = {
              .q = q_head, .k = k_head, .v = v_head, .kp = kt, .vp = vp, .out = out_head,
              .mask = mask, .bias = bias, .scratch = decode ? kt : tile,
              .n_q = nq, .n_k = nk, .d_k = dk, .d_v = dv, .v_stride = v_stride,
              .scale = scale, .causal = causal,
          };
          kernel(&args);
        }
      }
    }
  }
  return ATTN_OK;
}

attn_status attn_matmul(const float* a, const float* b, float* c, int32_t m, int32_t k,
                        int32_t n) {
  if (a == NULL || b == NULL || c == NULL) return ATTN_ERR_NULL;
  if (m < 1 || k < 1 || n < 1) return ATTN_ERR_SHAPE;
  size_t count;
  if (!attn__count((size_t)m, (size_t)k, 1, 1, &count) ||
      !attn__count((size_t)k, (size_t)n, 1, 1, &count) ||
      !attn__count((size_t)m, (size_t)n, 1, 1, &count)) {
    return ATTN_ERR_OVERFLOW;
  }
  ATTN__KERNEL(gemm)((size_t)m, (size_t)n, (size_t)k, a, (size_t)k, b, (size_t)n, c, (size_t)n);
  return ATTN_OK;
}

attn_status attn_softmax(const float* x, float* y, int32_t rows, int32_t cols) {
  if (x == NULL || y == NULL) return ATTN_ERR_NULL;
  if (rows < 1 || cols < 1) return ATTN_ERR_SHAPE;
  size_t count;
  if (!attn__count((size_t)rows, (size_t)cols, 1, 1, &count)) return ATTN_ERR_OVERFLOW;
  for (size_t i = 0; i < (size_t)rows; i++) {
    ATTN__KERNEL(softmax)((size_t)cols, x + i * (size_t)cols, y + i * (size_t)cols);
  }
  return ATTN_OK;
}

size_t attn_sdpa_backward_scratch_size(int32_t n_q, int32_t n_k, int32_t d_k, int32_t d_v) {
  if (n_q < 1 || n_k < 1 || d_k < 1 || d_v < 1) return 0;
  const size_t k_pad = attn__round_up((size_t)n_k, ATTN__PAD);
  size_t kp, vp;
  if (!attn__count((size_t)d_k, k_pad, 1, 1, &kp) || !attn__count((size_t)d_v, k_pad, 1, 1, &vp)) {
    return 0;
  }
  size_t qd;  /* the block loop's copies of q and dout, four times n_q (d_k + d_v) at most */
  if (!attn__count((size_t)n_q + ATTN__PAD, (size_t)d_k + (size_t)d_v, 4, 1, &qd)) return 0;
  const size_t parts[] = {kp, vp, 2 * (size_t)n_q,
                          attn__bwd_tile_floats((size_t)n_q, (size_t)d_k, (size_t)d_v)};
  size_t total = 0;
  for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
    if (total + parts[i] < total || total + parts[i] > SIZE_MAX / sizeof(float)) return 0;
    total += parts[i];
  }
  return total;
}

static void attn__zero(float* x, size_t n) {
  for (size_t i = 0; i < n; i++) x[i] = 0.0f;
}

attn_status attn_sdpa_backward(const float* q, const float* k, const float* v, const float* out,
                               const float* dout, const float* lse, float* dq, float* dk, float* dv,
                               float* dbias, int32_t batch, int32_t heads, int32_t kv_heads,
                               int32_t n_q, int32_t n_k, int32_t d_k, int32_t d_v,
                               const uint8_t* mask, const float* bias, float scale, float softcap,
                               int32_t window_left, int32_t window_right, int32_t query_offset,
                               uint32_t flags, float* scratch, size_t scratch_floats) {
  if (q == NULL || k == NULL || v == NULL || dout == NULL || dq == NULL ||
      dk == NULL || dv == NULL) {
    return ATTN_ERR_NULL;
  }
  if (batch < 1 || heads < 1 || kv_heads < 1 || n_q < 1 || n_k < 1 || d_k < 1 || d_v < 1 ||
      window_left < -1 || window_right < -1) {
    return ATTN_ERR_SHAPE;
  }
  if (heads % kv_heads != 0) return ATTN_ERR_HEADS;
  if (!isfinite(scale) || !isfinite(softcap) || softcap < 0.0f) return ATTN_ERR_SCALE;
  if ((flags & ~ATTN_CAUSAL) != 0) return ATTN_ERR_FLAGS;
  size_t count;
  if (!attn__count((size_t)batch, (size_t)heads, (size_t)n_q, (size_t)d_k, &count) ||
      !attn__count((size_t)batch, (size_t)heads, (size_t)n_q, (size_t)d_v, &count) ||
      !attn__count((size_t)batch, (size_t)kv_heads, (size_t)n_k, (size_t)d_k, &count) ||
      !attn__count((size_t)batch, (size_t)kv_heads, (size_t)n_k, (size_t)d_v, &count) ||
      !attn__count((size_t)n_q, (size_t)n_k, 1, 1, &count)) {
    return ATTN_ERR_OVERFLOW;
  }
  const size_t need = attn_sdpa_backward_scratch_size(n_q, n_k, d_k, d_v);
  if (need == 0) return ATTN_ERR_OVERFLOW;
  if (scratch == NULL || scratch_floats < need) return ATTN_ERR_SCRATCH;

  const size_t nq = (size_t)n_q, nk = (size_t)n_k, dkk = (size_t)d_k, dvv = (size_t)d_v;
  const size_t group = (size_t)(heads / kv_heads);  /* query heads per kv head */
  const size_t k_pad = attn__round_up(nk, ATTN__PAD);
  float* kp = scratch;                 /* (k_pad / 8, d_k, 8) K panels */
  float* vp = kp + dkk * k_pad;        /* (k_pad / 8, d_v, 8) V panels */
  float* lse_head = vp + dvv * k_pad;  /* (n_q) this head's lse, when not given */
  float* delta = lse_head + nq;        /* (n_q) dout_i . out_i */
  float* tile = delta + nq;            /* attn__bwd_tile_floats(n_q, d_k, d_v) */
  /* The kernels add into the gradients: they start at 0. */
  attn__zero(dq, (size_t)batch * (size_t)heads * nq * dkk);
  attn__zero(dk, (size_t)batch * (size_t)kv_heads * nk * dkk);
  attn__zero(dv, (size_t)batch * (size_t)kv_heads * nk * dvv);
  if (dbias != NULL) attn__zero(dbias, nq * nk);

  for (size_t b = 0; b < (size_t)batch; b++) {
    for (size_t g = 0; g < (size_t)kv_heads; g++) {
      const size_t kv = b * (size_t)kv_heads + g;  /* index of this kv head */
      const float* k_head = k + kv * nk * dkk;     /* (n_k, d_k) */
      ATTN__KERNEL(pack_k)(k_head, nk, dkk, kp);
      ATTN__KERNEL(pack_k)(v + kv * nk * dvv, nk, dvv, vp);
      /* The query heads that share this kv head add into its dk and dv. */
      for (size_t h = g * group; h < (g + 1) * group; h++) {
        const size_t qh = b * (size_t)heads + h;  /* index of this query head */
        attn__bwd_args args = {
            .q = q + qh * nq * dkk, .k = k_head, .kp = kp, .vp = vp,
            .dout = dout + qh * nq * dvv, .lse = lse != NULL ? lse + qh * nq : lse_head,
            .delta = delta, .dq = dq + qh * nq * dkk, .dk = dk + kv * nk * dkk,
            .dv = dv + kv * nk * dvv, .dbias = dbias, .mask = mask, .bias = bias,
            .scratch = tile, .n_q = nq, .n_k = nk, .d_k = dkk, .d_v = dvv,
            .scale = scale, .softcap = softcap, .causal = (flags & ATTN_CAUSAL) != 0,
            .query_offset = query_offset, .window_left = window_left,
            .window_right = window_right,
        };
        const float* out_head = out != NULL ? out + qh * nq * dvv : NULL;  /* (n_q, d_v) */
        ATTN__KERNEL(backward_rows)(&args, out_head, lse != NULL ? NULL : lse_head, delta);
        ATTN__KERNEL(backward)(&args);
      }
    }
  }
  return ATTN_OK;
}
