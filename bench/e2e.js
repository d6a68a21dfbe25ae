// The end-to-end comparison in Node, in a fresh process (bench/groups/end-to-end.js
// runs it as a child). Prints log lines, then one JSON line: {results, checks, versions}.
//
//   node --experimental-wasm-relaxed-simd bench/e2e.js '{"folder": PATH, "corpus": PATH,
//        "wasm": PATH, "runs": 5, "tjs": true}'
//
// swapformer: loadPretrained(folder, {dtype, threads: 1, wasm}) and embed(texts,
// {batchSize: 32}); transformers.js (bench/node_modules, its default Node backend,
// onnxruntime-node): env.allowRemoteModels = false, env.localModelPath = the folder's
// parent, pipeline('feature-extraction', name, {dtype: 'fp32' | 'q8', device: 'cpu',
// session_options: {intraOpNumThreads: 1, interOpNumThreads: 1}}).
import { readFileSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { openContenders, timeCorpus } from './e2e-harness.js';
import { cpuMeter } from './quiet.js';

const spec = JSON.parse(process.argv[2]);
const texts = JSON.parse(readFileSync(spec.corpus, 'utf8')).texts;
const sf = await import('../bindings/index.js');
let tjs = null;
if (spec.tjs) {
  tjs = await import('@huggingface/transformers');
  tjs.env.allowRemoteModels = false;
  tjs.env.allowLocalModels = true;
  tjs.env.localModelPath = `${dirname(spec.folder)}/`;
}
const SESSION = { intraOpNumThreads: 1, interOpNumThreads: 1 };
const contenders = await openContenders({
  sf, tjs, swapSource: spec.folder, swapWasm: await WebAssembly.compile(readFileSync(spec.wasm)),
  tjsId: basename(spec.folder), device: 'cpu', sessionOptions: SESSION,
});
const meter = cpuMeter();
const out = await timeCorpus(contenders, texts, { runs: spec.runs, log: (s) => console.log(s) });
out.machine = meter.stop();
for (const c of contenders) await c.close();
out.versions = tjs ? { transformers: tjs.env.version, onnxruntimeNode: tjs.env.backends.onnx?.versions?.node ?? null, onnxruntimeCommon: tjs.env.backends.onnx?.versions?.common ?? null } : null;
out.sessionOptions = SESSION;
console.log(JSON.stringify(out));
process.exit(0);
