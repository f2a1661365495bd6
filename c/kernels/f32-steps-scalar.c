/* f32-steps-scalar.c - the step path over the scalar gemm and softmax
 * kernels; the algorithm is in f32-steps.h. */
#include "f32-steps.h"

void attn__f32_steps_scalar(const attn__steps_args* args) {
  attn__f32_steps(args, attn__f32_gemm_scalar, attn__f32_softmax_scalar);
}
