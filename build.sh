#!/usr/bin/env bash
# build.sh - compile c/ into three standalone WebAssembly modules:
#   dist/attention-relaxed.wasm SIMD128 kernels with relaxed SIMD (fused multiply-add)
#   dist/attention-simd.wasm    SIMD128 kernels (c/kernels/*-wasmsimd.c)
#   dist/attention-scalar.wasm  scalar kernels  (c/kernels/*-scalar.c)
# ./build.sh debug builds the SIMD128 and scalar modules into dist/debug/ with the kernels'
# asserts on (a failed one traps: c/debug-assert.c); tests/debug.test.js
# runs the fixtures on them.
# No Emscripten JS glue: web/attention.js instantiates them itself.
# Works with Debian's emscripten 3.1.6 and with a current emsdk. The relaxed
# module needs a compiler and linker that know the final relaxed-SIMD opcodes:
# emcc 3.1.40 or newer, else clang-19 and wasm-ld-19 (Debian: clang-19 lld-19);
# without either it is skipped with a notice and the other two still build.
set -euo pipefail
cd "$(dirname "$0")"

if ! command -v emcc >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && [ "${ATTN_NO_INSTALL:-}" = "" ]; then
    echo "build.sh: emcc not found; installing Debian's emscripten package (apt-get install -y emscripten)" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y emscripten >&2
  else
    cat >&2 <<'MSG'
build.sh: emcc (Emscripten) is not on PATH.
  Debian/Ubuntu:  sudo apt-get install -y emscripten
  elsewhere:      git clone https://github.com/emscripten-core/emsdk && cd emsdk &&
                  ./emsdk install latest && ./emsdk activate latest && source ./emsdk_env.sh
Then run ./build.sh again (or npm test / npm start, which call it).
MSG
    exit 127
  fi
fi

mode=${1:-release}
case "$mode" in
  release) outdir=dist ;;
  debug) outdir=dist/debug ;;
  *) echo "usage: ./build.sh [debug]" >&2; exit 2 ;;
esac
mkdir -p "$outdir"

exports=(
  attn_sdpa
  attn_sdpa_backward
  attn_sdpa_backward_scratch_size
  attn_sdpa_scratch_size
  attn_sdpa_scratch_size_with
  attn_sdpa_backward_scratch_size_with
  attn_rope
  attn_sdpa_call_scratch_size
  attn_sdpa_call_scratch_size_with
  attn_sdpa_kernel
  attn_sdpa_kv
  attn_kv_write
  attn_kv_read
  attn_matmul
  attn_softmax
  attn_matmul_scratch_floats
  attn_matmul_ex
  attn_matmul_backward
  attn_layer_norm
  attn_layer_norm_backward
  attn_rms_norm
  attn_rms_norm_backward
  attn_gelu
  attn_gelu_backward
  attn_status_string
  attn_default_scale
  attn_simd_enabled
  attn_isa
  malloc
  free
)
if [ "$mode" = debug ]; then exports+=(attn__debug_asserts); fi
exported_functions=$(printf '_%s,' "${exports[@]}")
exported_functions=${exported_functions%,}

# Every c/*.c but the two that only some links take: attention-alloc.c
# (malloc for the clang link below) and debug-assert.c (the debug build).
sources=()
for src in c/*.c; do
  case "$src" in c/attention-alloc.c | c/debug-assert.c) ;; *) sources+=("$src") ;; esac
done
if [ "$mode" = debug ]; then sources+=(c/debug-assert.c); fi

# Compiling: warnings are errors here, where they are ours.
cflags=(
  -std=c11
  -O3
  -Wall -Wextra -Werror
  -ffp-contract=off               # no fused multiply-add: same bits on every engine
)
if [ "$mode" = release ]; then
  cflags+=(-DNDEBUG)              # kernels' asserts would import an abort handler
else
  cflags+=(-g)                    # function names in traps' stack traces
fi

# Linking: no -Werror, so a newer emsdk that deprecates a setting name still links.
ldflags=(
  -O3
  --no-entry                      # a library: no main
  -sSTANDALONE_WASM=1             # no JS glue; imports at most emscripten_notify_memory_growth
  -sEXPORTED_FUNCTIONS="$exported_functions"
  -sALLOW_MEMORY_GROWTH=1         # step matrices are n_q * n_k; grow instead of failing early
  -sINITIAL_MEMORY=2MB            # small start: most calls are small
  -sMAXIMUM_MEMORY=4GB            # all of wasm32; bigger requests fail with a status, not a trap
  -sTOTAL_STACK=256KB             # explicit (3.1.6 knows TOTAL_STACK, not STACK_SIZE; newer accept both)
  -sABORTING_MALLOC=0             # malloc returns NULL when memory cannot grow; JS turns it into RangeError
  -sFILESYSTEM=0                  # nothing here touches files
)

if [ "$mode" = debug ]; then
  ldflags+=(--profiling-funcs)    # keep function names (traps name the kernel)
fi

objdir=$(mktemp -d)
trap 'rm -rf "$objdir"' EXIT

build() {
  local out=$1 isa=$2; shift 2
  local objects=()
  for src in "${sources[@]}" "$@"; do
    local obj="$objdir/${isa// /}-$(basename "${src%.c}").o"
    emcc "${cflags[@]}" $isa -c "$src" -o "$obj"
    objects+=("$obj")
  done
  emcc "${ldflags[@]}" $isa "${objects[@]}" -o "$out"
  printf '%-28s %7d bytes\n' "$out" "$(wc -c < "$out")" >&2  # stderr: keeps npm pack --json clean
}

# The relaxed module without Emscripten: clang compiles against Emscripten's
# C headers (math.h, string.h, assert.h), and wasm-ld links
# c/attention-alloc.c for malloc and free, and takes the few math functions
# the core calls (logf) from Emscripten's libc.a: wasm-ld pulls only the
# archive members that define an undefined symbol, and these are pure code.
build_relaxed_llvm() {
  local out=$1 clang=$2 wasm_ld=$3; shift 3
  local sysroot
  sysroot=$(emcc --cflags | tr ' ' '\n' | sed -n 's/^--sysroot=//p')
  local objects=()
  for src in "${sources[@]}" c/attention-alloc.c "$@"; do
    local obj="$objdir/relaxed-llvm-$(basename "${src%.c}").o"
    "$clang" "${cflags[@]}" "${relaxed[@]}" \
      --target=wasm32 \
      --sysroot="$sysroot" \
      -mbulk-memory \
      -c "$src" -o "$obj"             # bulk memory: memcpy and memset become memory.copy/fill
    objects+=("$obj")
  done
  local exports_ld=()
  for e in "${exports[@]}"; do exports_ld+=(--export="$e"); done
  # Flags as the Emscripten link above: memory 2 MiB growing to 4 GiB, 256 KiB stack.
  "$wasm_ld" \
    --no-entry \
    "${exports_ld[@]}" \
    --initial-memory=2097152 \
    --max-memory=4294967296 \
    -z stack-size=262144 \
    --stack-first \
    --strip-all \
    "${objects[@]}" \
    "$sysroot/lib/wasm32-emscripten/libc.a" \
    -o "$out"
  printf '%-28s %7d bytes (clang + wasm-ld)\n' "$out" "$(wc -c < "$out")" >&2
}

# emcc knows the final relaxed-SIMD opcodes from 3.1.40 (older ones emit
# prototype opcodes or cannot link them).
emcc_relaxed() {
  local version
  version=$(emcc --version | sed -n '1s/.* \([0-9][0-9]*\.[0-9][0-9]*\.[0-9][0-9]*\).*/\1/p')
  [ -n "$version" ] && printf '%s\n%s\n' 3.1.40 "$version" | sort -V -C
}

# Relaxed SIMD: relaxed_madd (f32-madd-wasmsimd.h) in every hot loop.
relaxed=(-msimd128 -mrelaxed-simd)

build "$outdir/attention-simd.wasm" -msimd128 c/kernels/*-wasmsimd.c
build "$outdir/attention-scalar.wasm" '' c/kernels/*-scalar.c
# The relaxed module: release only (the debug build checks the asserts of the
# same kernels in the two deterministic modules).
if [ "$mode" = release ]; then
  if emcc_relaxed; then
    build dist/attention-relaxed.wasm "${relaxed[*]}" c/kernels/*-wasmsimd.c
  elif command -v "${ATTN_CLANG:-clang-19}" >/dev/null 2>&1 && command -v "${ATTN_WASM_LD:-wasm-ld-19}" >/dev/null 2>&1; then
    build_relaxed_llvm dist/attention-relaxed.wasm "${ATTN_CLANG:-clang-19}" "${ATTN_WASM_LD:-wasm-ld-19}" c/kernels/*-wasmsimd.c
  else
    echo "build.sh: skipped dist/attention-relaxed.wasm (needs emcc >= 3.1.40, or clang-19 and wasm-ld-19: apt-get install -y clang-19 lld-19)" >&2
  fi
fi
