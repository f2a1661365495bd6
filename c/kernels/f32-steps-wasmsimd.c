/* f32-steps-wasmsimd.c - the step path over the SIMD gemm and softmax
 * kernels; the algorithm is in f32-steps.h. */
#include "f32-steps.h"

void attn__f32_steps_wasmsimd(const attn__steps_args* args) {
  attn__f32_steps(args, attn__f32_gemm_wasmsimd, attn__f32_softmax_wasmsimd);
}
