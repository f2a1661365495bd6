/* debug-assert.c - only in ./build.sh debug: a failed assert traps.
 * The C library's handler prints through WASI imports (fd_write,
 * proc_exit) that the loader does not provide; a trap needs no import and
 * reaches JavaScript as a WebAssembly.RuntimeError ("unreachable") with the
 * kernel's name in the stack trace. The linker takes this definition over
 * the library's. attn__debug_asserts, exported by the debug build only,
 * lets a test see which build it has. */
#include <assert.h>

_Noreturn void __assert_fail(const char* expr, const char* file, int line, const char* func);

_Noreturn void __assert_fail(const char* expr, const char* file, int line, const char* func) {
  (void)expr, (void)file, (void)line, (void)func;
  __builtin_trap();
}

int attn__debug_asserts(void);

int attn__debug_asserts(void) { return 1; }
