// A worker of swapformer's thread pool (runtime/threads.js): it instantiates
// the threaded wasm on the shared memory it is given, takes its own stack and
// thread-local block, says 'ready', and runs parallel regions in
// sf_thread_run (asleep between them) until the pool stops.
// The same file serves Web Workers and Node's worker_threads.
import { isNode, nodeBuiltin } from '../utils/platform.js';

// role 'worker': runs parallel regions until the pool stops. role 'driver':
// runs the calls it is sent ({fn, args} -> {rc}), e.g. sf_forward for
// forwardAsync, as the caller of the pool's regions, off the main thread.
let x = null;

function start({ role, module, memory, stack, tls, id }, post) {
  try {
    const instance = new WebAssembly.Instance(module, { env: { memory } });
    x = instance.exports;
    x.__stack_pointer.value = stack; // the linker's stack belongs to the main instance
    if (tls && typeof x.__wasm_init_tls === 'function') x.__wasm_init_tls(tls);
    post('ready');
    if (role === 'worker') {
      x.sf_thread_run(id); // returns at sf_threads_stop
      post('exit');
    }
  } catch (e) {
    post({ error: String(e?.stack ?? e) });
  }
}

function handle(m, post) {
  if (!x) return start(m, post);
  try {
    x.sf_threads_can_wait(1); // a worker may sleep while the pool's other workers finish
    post({ rc: x[m.fn](...m.args) });
  } catch (e) {
    post({ error: String(e?.stack ?? e) });
  }
}

if (isNode) {
  // no top-level await: bundlers build workers as classic scripts too
  nodeBuiltin('node:worker_threads').then(({ parentPort }) => {
    parentPort.on('message', (m) => handle(m, (reply) => parentPort.postMessage(reply)));
  });
} else {
  self.addEventListener('message', (e) => handle(e.data, (reply) => self.postMessage(reply)));
}
