// The end-to-end comparison in Node, in a fresh process (bench/groups/end-to-end.js
// runs it as a child). Prints log lines, then one JSON line: {results, checks, versions}.
//
//   node tools/node.mjs bench/e2e.js '{"folder": PATH, "corpus": PATH,
//        "wasm": PATH, "runs": 5, "tjs": true, "profileWasm": PATH?}'
//
// swapformer: loadPretrained(folder, {dtype, threads: 1, wasm}) and embed(texts,
// {batchSize: 32}); transformers.js (bench/node_modules, its default Node backend,
// onnxruntime-node): env.allowRemoteModels = false, env.localModelPath = the folder's
// parent, pipeline('feature-extraction', name, {dtype: 'fp32' | 'q8', device: 'cpu',
// session_options: {intraOpNumThreads: 1, interOpNumThreads: 1}}).
// With profileWasm (a build with its name section), afterwards a CPU profile
// (node:inspector) of swapformer embedding the whole corpus, f32 and q8.
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { Session } from 'node:inspector/promises';
import { openContenders, timeCorpus, BATCH, importTransformers } from './e2e-harness.js';
import { selfTimes } from './harness.js';
import { cpuMeter } from './quiet.js';

const spec = JSON.parse(process.argv[2]);
const texts = JSON.parse(readFileSync(spec.corpus, 'utf8')).texts;
const sf = await import('../bindings/index.js');
const tjs = spec.tjs ? await importTransformers(spec.folder) : null;
const SESSION = { intraOpNumThreads: 1, interOpNumThreads: 1 };
const contenders = await openContenders({
  sf,
  tjs,
  swapSource: spec.folder,
  swapWasm: await WebAssembly.compile(readFileSync(spec.wasm)),
  tjsId: basename(spec.folder),
  device: 'cpu',
  sessionOptions: SESSION,
});
const meter = cpuMeter();
const out = await timeCorpus(contenders, texts, { runs: spec.runs, log: (s) => console.log(s) });
out.machine = meter.stop();
for (const c of contenders) await c.close();
if (spec.profileWasm) out.profiles = await profiles(await WebAssembly.compile(readFileSync(spec.profileWasm)));
out.versions = tjs
  ? {
      transformers: tjs.env.version,
      onnxruntimeNode: tjs.env.backends.onnx?.versions?.node ?? null,
      onnxruntimeCommon: tjs.env.backends.onnx?.versions?.common ?? null,
    }
  : null;
out.sessionOptions = SESSION;
console.log(JSON.stringify(out));

/** swapformer's embed of the corpus under V8's sampling profiler, f32 and q8: self time per function. */
async function profiles(wasm) {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 200 });
  const res = [];
  for (const dtype of ['f32', 'q8']) {
    const p = await sf.loadPretrained(spec.folder, { dtype, threads: 1, wasm });
    p.embed(texts.slice(0, 64), { batchSize: BATCH });
    await session.post('Profiler.start');
    const t0 = performance.now();
    p.embed(texts, { batchSize: BATCH });
    const wallMs = performance.now() - t0;
    const { profile } = await session.post('Profiler.stop');
    p.dispose();
    const r = { label: `Node, swapformer ${dtype}, the relaxed build with its name section, embed of the corpus`, dtype, wallMs, ...selfTimes(profile) };
    r.functions = r.functions.slice(0, 20);
    console.log(
      `    profile ${dtype}: ${r.functions
        .slice(0, 6)
        .map((f) => `${f.name} ${((100 * f.selfMs) / r.ms).toFixed(0)}%`)
        .join(', ')}`,
    );
    res.push(r);
  }
  session.disconnect();
  return res;
}
process.exit(0);
