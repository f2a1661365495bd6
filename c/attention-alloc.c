/* attention-alloc.c - malloc, free, memcpy and memset for a module linked
 * without a C library (the relaxed-SIMD build: clang and wasm-ld directly,
 * see build.sh). Emscripten builds use Emscripten's own and skip this file.
 *
 * The only callers are web/attention.js, which keeps one arena per instance
 * and frees it after calls above 16 MiB, and the compiler's memset/memcpy
 * calls for zeroing loops. So this is the plainest allocator that reuses
 * memory: one address-ordered free list, first fit, blocks split on malloc
 * and merged with free neighbours on free, the heap grown with memory.grow
 * when no free block fits. Blocks and payloads are 16-byte aligned.
 * malloc returns NULL when the memory cannot grow (the loader turns that
 * into a RangeError); nothing here traps. Memory is never given back: wasm
 * memory cannot shrink. */
#include <stddef.h>
#include <stdint.h>

void* malloc(size_t size);
void free(void* ptr);
void* memcpy(void* restrict dst, const void* restrict src, size_t n);
void* memset(void* dst, int c, size_t n);
void* memmove(void* dst, const void* src, size_t n);

#define ATTN__ALIGN 16
#define ATTN__PAGE 65536u

/* One block: this header, then its payload. size counts both. */
typedef struct attn__block {
  size_t size;               /* bytes, a multiple of ATTN__ALIGN */
  struct attn__block* next;  /* free list: the next free block by address */
  size_t pad[2];             /* header of ATTN__ALIGN bytes keeps payloads aligned */
} attn__block;

extern unsigned char __heap_base;  /* from wasm-ld: the first byte past data and stack */

static attn__block* attn__free_list;  /* free blocks in address order */
static uint64_t attn__top;            /* end of the blocks handed out so far (0: not started) */

/* Grows the heap so that [attn__top, attn__top + bytes) is memory. */
static int attn__grow(uint64_t bytes) {
  const uint64_t end = (uint64_t)__builtin_wasm_memory_size(0) * ATTN__PAGE;
  if (attn__top + bytes <= end) return 1;
  const uint64_t pages = (attn__top + bytes - end + ATTN__PAGE - 1) / ATTN__PAGE;
  if (pages > 65536) return 0;
  return __builtin_wasm_memory_grow(0, (size_t)pages) != (size_t)-1;
}

void* malloc(size_t size) {
  if (attn__top == 0) attn__top = ((uintptr_t)&__heap_base + ATTN__ALIGN - 1) / ATTN__ALIGN * ATTN__ALIGN;
  if (size > SIZE_MAX - 2 * ATTN__ALIGN) return NULL;
  const size_t need = (size + sizeof(attn__block) + ATTN__ALIGN - 1) / ATTN__ALIGN * ATTN__ALIGN;
  attn__block** link = &attn__free_list;
  attn__block* last = NULL;  /* the free block before *link */
  for (attn__block* b = attn__free_list; b != NULL; last = b, link = &b->next, b = b->next) {
    if (b->size < need) continue;
    if (b->size - need >= 2 * sizeof(attn__block)) {  /* split: the tail stays free */
      attn__block* rest = (attn__block*)((unsigned char*)b + need);
      rest->size = b->size - need;
      rest->next = b->next;
      b->size = need;
      *link = rest;
    } else {
      *link = b->next;
    }
    return b + 1;
  }
  /* No fit: a free block at the top grows, else a new block is added there. */
  if (last != NULL && (uint64_t)(uintptr_t)last + last->size == attn__top) {
    if (!attn__grow(need - last->size)) return NULL;
    attn__top += need - last->size;
    last->size = need;
    attn__block** at = &attn__free_list;
    while (*at != last) at = &(*at)->next;
    *at = NULL;  /* it was the last free block */
    return last + 1;
  }
  if (attn__top + need > UINT32_MAX || !attn__grow(need)) return NULL;
  attn__block* b = (attn__block*)(uintptr_t)attn__top;
  b->size = need;
  attn__top += need;
  return b + 1;
}

void free(void* ptr) {
  if (ptr == NULL) return;
  attn__block* b = (attn__block*)ptr - 1;
  attn__block* prev = NULL;
  attn__block* next = attn__free_list;
  while (next != NULL && next < b) {
    prev = next;
    next = next->next;
  }
  b->next = next;
  if (next != NULL && (unsigned char*)b + b->size == (unsigned char*)next) {
    b->size += next->size;
    b->next = next->next;
  }
  if (prev != NULL && (unsigned char*)prev + prev->size == (unsigned char*)b) {
    prev->size += b->size;
    prev->next = b->next;
  } else if (prev != NULL) {
    prev->next = b;
  } else {
    attn__free_list = b;
  }
}

/* Built with bulk memory: the builtins are memory.copy and memory.fill. */
void* memcpy(void* restrict dst, const void* restrict src, size_t n) {
  return __builtin_memcpy(dst, src, n);
}

void* memmove(void* dst, const void* src, size_t n) {
  return __builtin_memmove(dst, src, n);
}

void* memset(void* dst, int c, size_t n) {
  return __builtin_memset(dst, c, n);
}
