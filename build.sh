#!/usr/bin/env bash
# swapformer's single entry point.
#
#   ./build.sh            set up what is missing, build dist/swapformer.wasm
#   ./build.sh test       set-up + build + npm test (what CI runs)
#   ./build.sh demo       set-up + build + run the Node example (the demo server comes with the demo)
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
  command -v emcc >/dev/null || apt_install emscripten
}

setup_node() {
  if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    say "build.sh: npm ci"
    npm ci --no-audit --no-fund --loglevel=error >/dev/null
  fi
}

SOURCES=(core/*.c plugins/position/*.c plugins/norm/*.c)
CFLAGS=(-O3 -std=c11 -Wall -Wextra -Werror)
WASMFLAGS=(-sSTANDALONE_WASM --no-entry -sALLOW_MEMORY_GROWTH -sABORTING_MALLOC=0
           -sTOTAL_STACK=256KB -sINITIAL_MEMORY=2MB -sMAXIMUM_MEMORY=2GB)

build() {
  setup_build
  mkdir -p dist
  local out=dist/swapformer.wasm
  if [ -f "$out" ] && [ -z "$(find core plugins build.sh -newer "$out" -type f | head -1)" ]; then return; fi
  say "build.sh: emcc -> $out"
  emcc "${CFLAGS[@]}" -msimd128 "${WASMFLAGS[@]}" "${SOURCES[@]}" -o "$out"
  say "build.sh: $out $(stat -c %s "$out") bytes"
}

cmd="${1:-build}"
shift || true
case "$cmd" in
  build) build ;;
  test)
    build
    setup_node
    npm test
    ;;
  demo)
    build
    node examples/node.js "$@"
    ;;
  *) die "unknown command '$cmd' (build, test, demo)" ;;
esac
