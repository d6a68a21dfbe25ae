// The native backend end to end in Node, in a fresh process (bench/native.mjs runs it as a
// child per corpus and thread count). Prints log lines, then one JSON line: {results, checks, versions}.
//
//   node tools/node.mjs bench/native-e2e.js '{"folder": PATH, "corpus": PATH, "wasm": PATH,
//        "runs": 5, "threads": 1, "tjs": true}'
//
// Contenders: swapformer on the native backend (loadPretrained(folder, {dtype, threads})) and on
// the wasm (the same with the wasm file of the build this Node picks), embed(texts, {batchSize: 32});
// transformers.js (bench/node_modules, onnxruntime-node) with session_options {intraOpNumThreads:
// threads, interOpNumThreads: 1}, in input order and length-sorted (bench/e2e-harness.js).
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { openContenders, timeCorpus, importTransformers } from './e2e-harness.js';
import { cpuMeter } from './quiet.js';

const spec = JSON.parse(process.argv[2]);
const texts = JSON.parse(readFileSync(spec.corpus, 'utf8')).texts;
const sf = await import('../bindings/index.js');
const info = await sf.runtimeInfo({ threads: spec.threads });
if (info.backend !== 'native') throw new Error(`the native backend does not run here: ${info.backendFallback}`);
const tjs = spec.tjs ? await importTransformers(spec.folder) : null;
const SESSION = { intraOpNumThreads: spec.threads, interOpNumThreads: 1 };
const contenders = await openContenders({
  sf,
  tjs,
  swapSource: spec.folder,
  tjsId: basename(spec.folder),
  device: 'cpu',
  sessionOptions: SESSION,
  threads: spec.threads,
  // the wasm beside it where given (one thread: a call's wasm option names a single-threaded build)
  swapBackends: [{ name: 'native', wasm: undefined }, ...(spec.wasm ? [{ name: 'wasm', wasm: await WebAssembly.compile(readFileSync(spec.wasm)) }] : [])],
});
const meter = cpuMeter();
const out = await timeCorpus(contenders, texts, { runs: spec.runs, log: (s) => console.log(s) });
out.machine = meter.stop();
for (const c of contenders) await c.close();
out.native = { isa: info.isa, q8Kernel: info.q8Kernel, threads: info.threads };
out.versions = tjs ? { transformers: tjs.env.version, onnxruntimeNode: tjs.env.backends.onnx?.versions?.node ?? null } : null;
out.sessionOptions = SESSION;
console.log(JSON.stringify(out));
process.exit(0);
