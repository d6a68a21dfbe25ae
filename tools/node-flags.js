// The V8 flags a Node process needs to run every build of swapformer: Node 20 (V8 11.3)
// validates relaxed SIMD only behind --experimental-wasm-relaxed-simd; Node 22 and later
// (V8 12.4+) ship it on and refuse the flag as a bad option. The tests, the benchmark and
// the tools pass these to the Node processes they start; tools/node.mjs runs npm's scripts.
export const NODE_FLAGS = Number(process.versions.node.split('.')[0]) < 22 ? ['--experimental-wasm-relaxed-simd'] : [];
