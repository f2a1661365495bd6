/* attention-isa.c - which instruction set this module was compiled for:
 *   int32_t attn_isa(void): 2 relaxed SIMD (with SIMD128), 1 SIMD128, 0 scalar.
 * web/attention.js asks the module itself (attn.isa), so a module passed to
 * loadAttention({ wasm }) reports truly. A wasm-only export: attention.h
 * declares attn_simd_enabled for C callers, which covers them. */
#include <stdint.h>

int32_t attn_isa(void);

int32_t attn_isa(void) {
#if defined(__wasm_relaxed_simd__)
  return 2;
#elif defined(__wasm_simd128__)
  return 1;
#else
  return 0;
#endif
}
