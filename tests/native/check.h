/* check.h - what every native test file shares: the pass and fail counts
 * behind its closing "native: N passed, N failed" line, check(), and
 * deterministic inputs (xorshift32 to uniform [-1, 1)). */
#include <stdint.h>
#include <stdio.h>

static int passed, failed;

static void check(int ok, const char* name) {
  if (ok) {
    passed++;
  } else {
    failed++;
    printf("FAIL %s\n", name);
  }
}

static uint32_t rng_state = 12345u;
static float uniform(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 17;
  rng_state ^= rng_state << 5;
  return (float)((rng_state >> 8) * (1.0 / 8388608.0) - 1.0);
}
