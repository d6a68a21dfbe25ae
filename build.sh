#!/usr/bin/env bash
# swapformer's single entry point.
#
#   ./build.sh            set up what is missing, build dist/swapformer.wasm
#   ./build.sh test       set-up (incl. Chromium for the browser test) + build + npm test (what CI runs)
#   ./build.sh demo       set-up + build + run the Node example, then serve the browser demo
#                         (web/ + bindings/ + dist/) on http://localhost:8080 (--port N)
#
# On a fresh Debian machine it installs what is missing (apt-get when run as
# root, npm ci), or stops with one line saying what to install.
set -euo pipefail
cd "$(dirname "$0")"

say() { printf '%s\n' "$*" >&2; }
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
# The files forward spends its time in; the rest is built for size in the relaxed build.
HOT='^(core/kernels|core/encoder|plugins/.*)\.c$'

stale() { [ ! -f "$1" ] || [ -n "$(find core plugins build.sh -newer "$1" -type f | head -1)" ]; }

# dist/swapformer.wasm: wasm SIMD128, emcc + wasm-opt.
build_simd() {
  local out=dist/swapformer.wasm
  stale "$out" || return 0
  say "build.sh: emcc -> $out"
  emcc "${CFLAGS[@]}" -msimd128 "${WASMFLAGS[@]}" "${SOURCES[@]}" -o "$out"
  say "build.sh: $out $(stat -c %s "$out") bytes"
}

# dist/swapformer-relaxed.wasm: the same sources with relaxed-SIMD fused
# multiply-add. emcc 3.1.6's clang 14 has no relaxed SIMD and binaryen 108
# cannot parse it, so: clang-16 against emscripten's sysroot, LTO, wasm-ld-16
# with emscripten's libc, no wasm-opt.
build_relaxed() {
  local out=dist/swapformer-relaxed.wasm
  stale "$out" || return 0
  say "build.sh: clang-16 + wasm-ld-16 -> $out"
  local sys lib obj=build/relaxed f o opt
  sys="$(dirname "$(command -v emcc)")/../share/emscripten/cache/sysroot"
  [ -d "$sys" ] || sys=/usr/share/emscripten/cache/sysroot
  lib="$sys/lib/wasm32-emscripten"
  [ -f "$lib/libemmalloc.a" ] || die "emscripten's sysroot has no libemmalloc.a; run './build.sh' once (emcc builds it)"
  rm -rf "$obj" && mkdir -p "$obj"
  for f in "${SOURCES[@]}"; do
    opt=-Os
    [[ "$f" =~ $HOT ]] && opt=-O3
    o="$obj/$(echo "$f" | tr / _).o"
    clang-16 --target=wasm32-unknown-emscripten --sysroot="$sys" "$opt" -flto -std=c11 -Wall -Wextra -Werror \
      -msimd128 -mrelaxed-simd -mbulk-memory -c "$f" -o "$o"
  done
  wasm-ld-16 -o "$out" "$obj"/*.o "$lib/crt1_reactor.o" -L"$lib" -lstandalonewasm-memgrow -lstubs -lnoexit -lc \
    -lemmalloc -lcompiler_rt --lto-O3 --strip-all --gc-sections --entry=_initialize -z stack-size=262144 \
    --initial-memory=2097152 --max-memory=2147483648 --global-base=1024
  say "build.sh: $out $(stat -c %s "$out") bytes"
}

build() {
  setup_build
  mkdir -p dist
  build_simd
  build_relaxed
}

cmd="${1:-build}"
shift || true
case "$cmd" in
  build) build ;;
  test)
    build
    setup_node
    setup_chromium
    npm test
    ;;
  demo)
    build
    node examples/node.js
    say "build.sh: serving the browser demo (Ctrl-C to stop)"
    exec node web/server.js "$@"
    ;;
  *) die "unknown command '$cmd' (build, test, demo)" ;;
esac
