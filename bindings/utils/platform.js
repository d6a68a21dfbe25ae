// What the bindings need to know about where they run, with no static (nor
// literal dynamic) import of a Node module: browser bundlers (esbuild, Vite,
// webpack, Rollup) then have nothing to resolve or to refuse on the browser path.

/** Node, or a runtime that presents itself as Node (Deno, Bun, workerd's nodejs_compat). */
export const isNode = typeof process === 'object' && process !== null && typeof process.versions?.node === 'string';

/**
 * A Node built-in module (e.g. 'node:fs/promises'), only when it is needed:
 * process.getBuiltinModule where the runtime has it (Node 20.16+, Deno, Bun),
 * else a dynamic import of a computed name, which bundlers leave alone (the
 * comments keep webpack and Vite from trying).
 */
export async function nodeBuiltin(name) {
  const proc = globalThis.process;
  if (typeof proc?.getBuiltinModule === 'function') {
    const m = proc.getBuiltinModule(name);
    if (m) return m;
  }
  const specifier = String(name);
  return import(/* webpackIgnore: true */ /* @vite-ignore */ specifier);
}
