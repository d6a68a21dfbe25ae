// A worker of swapformer's thread pool (bindings/threads.js): it instantiates
// the threaded wasm on the shared memory it is given, takes its own stack and
// thread-local block, says 'ready', and runs parallel regions in
// sf_thread_run (asleep between them) until the pool stops.
// The same file serves Web Workers and Node's worker_threads.
import { isNode, nodeBuiltin } from './platform.js';

function run({ module, memory, stack, tls, id }, post) {
  try {
    const instance = new WebAssembly.Instance(module, { env: { memory } });
    const x = instance.exports;
    x.__stack_pointer.value = stack; // the linker's stack belongs to the main instance
    if (tls && typeof x.__wasm_init_tls === 'function') x.__wasm_init_tls(tls);
    post('ready');
    x.sf_thread_run(id); // returns at sf_threads_stop
    post('exit');
  } catch (e) {
    post({ error: String(e?.stack ?? e) });
  }
}

if (isNode) { // no top-level await: bundlers build workers as classic scripts too
  nodeBuiltin('node:worker_threads').then(({ parentPort }) => {
    parentPort.once('message', (m) => run(m, (reply) => parentPort.postMessage(reply)));
  });
} else {
  self.addEventListener('message', (e) => run(e.data, (reply) => self.postMessage(reply)), { once: true });
}
