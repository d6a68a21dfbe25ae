#!/bin/sh
# The benchmark's own dependencies (bench/package.json and its lock: transformers.js
# and the onnxruntime-node it pulls, ~500 MB), for the end-to-end group only; never
# in the root package.json, which CI installs on every run. Installed when missing
# (npm run bench, ./build.sh bench); without them the end-to-end group skips.
# onnxruntime-node ships its CPU binaries in the package: its install script, which
# would fetch the CUDA ones, is told to skip.
cd "$(dirname "$0")" || exit 1
[ -f node_modules/@huggingface/transformers/package.json ] && exit 0
echo "bench: installing bench/package.json's dependencies (transformers.js) into bench/node_modules"
ONNXRUNTIME_NODE_INSTALL=skip npm ci --no-audit --no-fund ||
  echo "bench: bench/node_modules could not be installed: the end-to-end group will skip"
