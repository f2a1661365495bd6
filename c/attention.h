/* attention.h - scaled dot-product attention over float32 buffers.
 *
 * This is the only public C header of attention-wasm. The same sources build
 * a WebAssembly module with SIMD128 kernels, a scalar WebAssembly module, and
 * a native library (scalar) used by the sanitizer tests and the fuzzer.
 *
 * WHAT IS COMPUTED
 *
 *   output = softmax(Q K^T * scale + bias, over allowed keys) V
 *
 *   Q  (batch, heads,    n_q, d_k)   row-major, contiguous (PyTorch layout)
 *   K  (batch, kv_heads, n_k, d_k)
 *   V  (batch, kv_heads, n_k, d_v)
 *   O  (batch, heads,    n_q, d_v)
 *
 *   Grouped-query attention: query head h reads kv head h / (heads / kv_heads)
 *   (integer division; heads must be a multiple of kv_heads). kv_heads ==
 *   heads is ordinary multi-head attention, kv_heads == 1 is multi-query.
 *
 *   Key j is ALLOWED for query i when all of these hold:
 *     - not ATTN_CAUSAL, or j <= i (top-left aligned, like PyTorch's
 *       is_causal, also when n_q != n_k);
 *     - mask is NULL, or mask[i * n_k + j] != 0          mask: (n_q, n_k)
 *     - scaled[i][j] + bias[i][j] is not -Infinity       bias: (n_q, n_k)
 *   Mask and bias are broadcast over batch and heads.
 *
 *   A row with no allowed key gets weights 0 and output 0, never NaN (as
 *   PyTorch >= 2.5 and ONNX do). NaN in an input reaches only the outputs
 *   that depend on it (a NaN in row i of Q makes output row i NaN).
 *
 * TWO PATHS
 *
 *   Output path (no step buffers): a fused kernel in the FlashAttention style.
 *   Keys are visited in blocks with a running row max and sum (online
 *   softmax), so working memory is O(n_k * d_k + d_v), never O(n_q * n_k).
 *   With ATTN_CAUSAL, key blocks wholly in the future are skipped.
 *   With fewer than 4 query rows (decoding a token at a time), and for tiny
 *   problems, a decode kernel reads K and V in place instead: packing them
 *   for the fused kernel would cost more than the attention. Same results
 *   up to rounding.
 *
 *   Step path (scores, scaled and weights given): the textbook order, writing every step:
 *     scores  = Q K^T                      (batch, heads, n_q, n_k)
 *     scaled  = scores * scale             before mask and bias
 *     weights = softmax over allowed keys of (scaled + bias); 0 elsewhere
 *     output  = weights V
 *
 * NUMERICS
 *
 *   Everything is float32, accumulated in float32, products rounded before
 *   the add (no FMA, no relaxed SIMD): results are deterministic, the same
 *   bits on every engine for a given module. Softmax subtracts the row max
 *   before exp, so finite logits of any size give finite weights.
 *   exp is a polynomial after range reduction (XNNPACK's rr2-p5 scheme) on
 *   [-87.34, 0], used by both builds; measured max relative error 1.7e-7
 *   (about 1.4 ulp), see tests/native/test_attention.c and
 *   c/kernels/f32-exp.h. Below -87.34 it returns 0 (the true value
 *   is below FLT_MIN and cannot change a softmax sum of at least 1).
 *   Against a float64 reference the outputs agree to about 1e-6 times the
 *   largest magnitude at the sizes tested; the tests use 2e-5.
 *   The SIMD and scalar builds sum in different orders, so they agree to
 *   rounding, not bit for bit. The output path and the step path likewise.
 *
 * SIMD
 *
 *   Chosen at compile time: compiled with -msimd128 (__wasm_simd128__) the
 *   kernels in c/kernels/ *-wasmsimd.c are used, otherwise their scalar twins
 *   in *-scalar.c. The JavaScript loader picks a module by probing
 *   WebAssembly.validate.
 *
 * ERRORS
 *
 *   Every function checks its arguments and returns an attn_status; nothing
 *   calls exit or abort, and nothing is written when a check fails.
 *   attn_status_string() turns a status into a message.
 *
 * MEMORY
 *
 *   No function allocates. The caller provides the scratch buffer sized by
 *   attn_sdpa_scratch_size(); buffers must not overlap except where stated.
 */
#ifndef ATTN_ATTENTION_H
#define ATTN_ATTENTION_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum attn_status {
  ATTN_OK = 0,
  ATTN_ERR_NULL = 1,      /* a required pointer is NULL */
  ATTN_ERR_SHAPE = 2,     /* a size is zero, negative or too large */
  ATTN_ERR_HEADS = 3,     /* heads is not a multiple of kv_heads */
  ATTN_ERR_SCALE = 4,     /* scale is NaN or infinite */
  ATTN_ERR_FLAGS = 5,     /* unknown bits in flags */
  ATTN_ERR_SCRATCH = 6,   /* scratch buffer NULL or smaller than required */
  ATTN_ERR_OVERFLOW = 7,  /* an element count does not fit in size_t */
  ATTN_ERR_STEPS = 8,     /* some but not all of scores, scaled, weights */
} attn_status;

/* Flags for attn_sdpa. */
#define ATTN_CAUSAL 1u

/* A short English message for a status, never NULL. */
const char* attn_status_string(int32_t status);

/* 1 when this build uses the SIMD128 kernels, 0 for the scalar kernels. */
int32_t attn_simd_enabled(void);

/* The default scale 1 / sqrt(d_k), rounded to float32. 0 when d_k < 1. */
float attn_default_scale(int32_t d_k);

/* Floats of scratch that attn_sdpa needs for these sizes: d_k * n_k for the
 * packed K^T plus a few small tiles. Returns 0 when the sizes are invalid or
 * the count overflows. */
size_t attn_sdpa_scratch_size(int32_t n_q, int32_t n_k, int32_t d_k, int32_t d_v);

/* Scaled dot-product attention, shapes and semantics above.
 * q, k, v, out, scratch: required. mask (uint8, (n_q, n_k)) and bias (float,
 * (n_q, n_k)): optional (NULL). out must not overlap the inputs.
 * scores, scaled, weights: the step matrices, each (batch, heads, n_q, n_k);
 * pass all three to take the step path, or all NULL for the output path.
 * scale: any finite float; attn_default_scale(d_k) is the usual choice. */
attn_status attn_sdpa(const float* q, const float* k, const float* v, float* out,
                      int32_t batch, int32_t heads, int32_t kv_heads,
                      int32_t n_q, int32_t n_k, int32_t d_k, int32_t d_v,
                      const uint8_t* mask, const float* bias, float scale, uint32_t flags,
                      float* scores, float* scaled, float* weights,
                      float* scratch, size_t scratch_floats);

/* c (m, n) = a (m, k) b (k, n), all row-major and contiguous. c must not
 * overlap a or b. */
attn_status attn_matmul(const float* a, const float* b, float* c, int32_t m, int32_t k,
                        int32_t n);

/* Row-wise numerically stable softmax of x (rows, cols) into y (same shape;
 * y may equal x). -Infinity entries get weight 0; a row of only -Infinity
 * becomes all 0. */
attn_status attn_softmax(const float* x, float* y, int32_t rows, int32_t cols);

/* BACKWARD PASS
 *
 * attn_sdpa_backward gives the gradients of a loss L with respect to Q, K,
 * V (and the bias) from dout = dL/dO, as PyTorch's autograd of
 * scaled_dot_product_attention does:
 *
 *   P = the weights (softmax over allowed keys),  D_i = dout_i . out_i
 *   dV = P^T dout                      (kv heads sum their query heads)
 *   dZ = P * (dout V^T - D)            dbias = dZ summed over batch, heads
 *   dS = dZ * (1 - tanh^2(scaled / softcap)) when softcap > 0, else dZ
 *   dQ = scale dS K,  dK = scale dS^T Q
 *
 * Logits are softcap ? softcap tanh(scaled / softcap) : scaled, plus bias.
 * Positions: query i sits at p = i + query_offset; ATTN_CAUSAL allows keys
 * j <= p, a window allows p - window_left <= j <= p + window_right (-1: no
 * bound on that side); mask and -Infinity logits as above.
 *
 * P is recomputed block by block from the row log-sum-exp (FlashAttention-2),
 * never stored for the whole problem: working memory is
 * attn_sdpa_backward_scratch_size() floats, O((n_k + n_q) (d_k + d_v)).
 * lse (batch, heads, n_q), natural log, and out are optional: pass the
 * forward's, or NULL. Without lse, or without out (D_i is then
 * sum_j P_ij dout_i . v_j), one more pass over the keys computes them.
 * A given lse must come from the same logits: for logits of magnitude M, an
 * lse that summed in another order shifts the weights by about ulp(M)
 * relatively (1e-3 at M = 1e4), where the recomputed one cancels exactly.
 *
 * A row with no allowed key adds nothing: its dq row is 0 and it adds 0 to
 * dk, dv and dbias, never NaN. NaN in q, dout or out row i makes dq row i
 * NaN and may reach all of dk, dv and dbias of its head (a masked weight 0
 * times NaN), as in PyTorch; other rows of dq stay clean.
 *
 * Numerics: float32 as the forward; the weights are recomputed with the
 * same exp. Against float64 analytic gradients the results agree to about
 * 1e-6 times the largest gradient at the sizes tested (tests use 5e-6).
 * The SIMD and scalar kernels keep the same summation order. */

/* Floats of scratch that attn_sdpa_backward needs: the packed K and V of one
 * kv head, 2 n_q and a few tiles. 0 when the sizes are invalid. */
size_t attn_sdpa_backward_scratch_size(int32_t n_q, int32_t n_k, int32_t d_k, int32_t d_v);

/* Gradients of attn_sdpa, shapes as attn_sdpa:
 *   inputs  q, k, v, out (the forward's output, or NULL), dout (like out);
 *   outputs dq (like q), dk (like k), dv (like v), dbias ((n_q, n_k) or NULL),
 *           overwritten (not added to); must not overlap the inputs.
 * lse: (batch, heads, n_q) or NULL. mask, bias: as attn_sdpa.
 * softcap: 0 (none) or a finite positive float. window_left/right: -1 or
 * >= 0. Errors as attn_sdpa; a negative or non-finite softcap gives
 * ATTN_ERR_SCALE, a window below -1 ATTN_ERR_SHAPE. */
attn_status attn_sdpa_backward(const float* q, const float* k, const float* v, const float* out,
                               const float* dout, const float* lse, float* dq, float* dk, float* dv,
                               float* dbias, int32_t batch, int32_t heads, int32_t kv_heads,
                               int32_t n_q, int32_t n_k, int32_t d_k, int32_t d_v,
                               const uint8_t* mask, const float* bias, float scale, float softcap,
                               int32_t window_left, int32_t window_right, int32_t query_offset,
                               uint32_t flags, float* scratch, size_t scratch_floats);

#ifdef __cplusplus
}
#endif

#endif /* ATTN_ATTENTION_H */
