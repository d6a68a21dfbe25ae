// onnxruntime-web's dynamically quantized graphs (bench/export_onnx.py --graph
// plain-q8 / fused-q8) next to its f32 ones, on the benchmark's model files:
// they load, they agree with f32 within quantization error, and how fast each is
// at one thread. Swapformer's f32 forward (dist/) runs alongside for scale.
//
//   node tools/node.mjs bench/ort-q8.mjs [--dir bench/.cache] [--models minilm-l6,bert-base]
//        [--T 128,512] [--runs 10] [--graphs plain,plain-q8,fused,fused-q8]
//
// --dir holds <stem>.safetensors as bench/bench.js writes them (ensureModel);
// the ONNX files <stem>-<graph>.onnx are exported there when missing
// (/usr/bin/python3 bench/export_onnx.py). ORT settings as bench/bench.js:
// env.wasm.numThreads = 1, executionProviders ['wasm'], graphOptimizationLevel
// 'all'. Timing: warm-up runs, then rounds alternating every session, each run
// timed by the process's CPU time (user + system: the machine is shared) and by
// the wall clock; median and best reported. Agreement: max |q8 - f32| / max |f32|
// and the smallest cosine similarity of a row (token), q8 against the f32 graph.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as H from './harness.js';
import { importOrtWeb } from './context.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const arg = (name, def) => {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? def : process.argv[i + 1];
};
const DIR = arg('dir', join(ROOT, 'bench', '.cache'));
const STEMS = arg('models', 'minilm-l6,bert-base').split(',');
const TS = arg('T', '128,512').split(',').map(Number);
const RUNS = +arg('runs', 10);
const GRAPHS = arg('graphs', 'plain,plain-q8,fused,fused-q8').split(',');
const SHAPE_OF = Object.fromEntries(Object.keys(H.SHAPES).map((s) => [H.stem(s), s]));

function onnxFile(stem, graph) {
  const out = join(DIR, `${stem}-${graph}.onnx`),
    model = join(DIR, `${stem}.safetensors`);
  if (existsSync(out)) return out;
  if (!existsSync(model)) throw new Error(`no ${model}: run npm run bench once (or bench/bench.js) to write the model files`);
  console.log(`export: ${out}`);
  const r = spawnSync('/usr/bin/python3', [join(ROOT, 'bench', 'export_onnx.py'), model, out, '--graph', graph], { stdio: ['ignore', 'inherit', 'inherit'] });
  if (r.status !== 0) throw new Error(`export_onnx.py --graph ${graph} failed`);
  return out;
}

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e3;
};
const median = (xs) => H.median(xs);
const fmt = (v, d = 1) => (Number.isFinite(v) ? v.toFixed(d) : '-');

const ort = await importOrtWeb();
ort.env.wasm.numThreads = 1;
const sf = await import('../bindings/index.js');

for (const stem of STEMS) {
  const shape = SHAPE_OF[stem],
    cfg = H.SHAPES[shape];
  const sessions = {};
  for (const g of GRAPHS)
    sessions[g] = await ort.InferenceSession.create(readFileSync(onnxFile(stem, g)), { executionProviders: ['wasm'], graphOptimizationLevel: 'all' });
  const enc = await sf.loadModel(readFileSync(join(DIR, `${stem}.safetensors`)), { wasm: readFileSync(join(ROOT, 'dist', 'swapformer.wasm')) });
  for (const T of TS) {
    const ids = H.makeIds(T, cfg.vocabSize);
    const feeds = { input_ids: new ort.Tensor('int64', BigInt64Array.from(ids, BigInt), [1, T]) };
    const runners = Object.fromEntries(Object.entries(sessions).map(([g, s]) => [`ORT ${g}`, async () => (await s.run(feeds)).last_hidden_state.data]));
    runners['swapformer f32 (SIMD)'] = async () => enc.forward(ids).data;
    // agreement, against each graph's f32 sibling
    const outs = {};
    for (const [k, run] of Object.entries(runners)) outs[k] = await run();
    const C = cfg.dModel;
    const agree = (a, b) => {
      let e = 0,
        m = 0,
        cmin = 1;
      for (let i = 0; i < a.length; i++) ((e = Math.max(e, Math.abs(a[i] - b[i]))), (m = Math.max(m, Math.abs(b[i]))));
      for (let t = 0; t < T; t++) {
        let ab = 0,
          aa = 0,
          bb = 0;
        for (let c = t * C; c < (t + 1) * C; c++) ((ab += a[c] * b[c]), (aa += a[c] * a[c]), (bb += b[c] * b[c]));
        cmin = Math.min(cmin, ab / Math.sqrt(aa * bb));
      }
      return { rel: e / m, cmin };
    };
    // timing
    const times = Object.fromEntries(Object.keys(runners).map((k) => [k, { cpu: [], wall: [] }]));
    for (let w = 0; w < 2; w++) for (const run of Object.values(runners)) await run();
    for (let r = 0; r < RUNS; r++) {
      const keys = Object.keys(runners);
      for (const k of r % 2 ? keys.reverse() : keys) {
        const c = cpuMs(),
          t = performance.now();
        await runners[k]();
        (times[k].cpu.push(cpuMs() - c), times[k].wall.push(performance.now() - t));
      }
    }
    console.log(`${shape}, T=${T} (onnxruntime-web ${ort.env.versions?.web ?? ''}, 1 thread; ${RUNS} runs each, alternating):`);
    console.log('  runtime                  CPU ms median (best)   wall ms median   GFLOP/s   vs ORT plain   vs ORT fused   agreement with its f32 graph');
    const flops = H.flops(cfg, T);
    for (const k of Object.keys(runners)) {
      const cm = median(times[k].cpu),
        best = Math.min(...times[k].cpu);
      const base = k.startsWith('ORT ') && k.endsWith('-q8') ? `ORT ${k.slice(4, -3)}` : null;
      const a = base ? agree(outs[k], outs[base]) : k.startsWith('swapformer') ? agree(outs[k], outs['ORT plain'] ?? outs[k]) : null;
      const vs = (g) => (times[g] ? `${fmt(median(times[g].cpu) / cm, 2)}x` : '-');
      console.log(
        `  ${k.padEnd(24)} ${fmt(cm).padStart(8)} (${fmt(best)})      ${fmt(median(times[k].wall)).padStart(8)}      ${fmt(flops / cm / 1e6).padStart(6)}    ${vs('ORT plain').padStart(8)}       ${vs('ORT fused').padStart(8)}       ` +
          (a ? `max|d|/max|ref| ${a.rel.toExponential(2)}, min row cosine ${a.cmin.toFixed(5)}${base ? '' : ' (vs ORT plain)'}` : ''),
      );
    }
  }
  for (const s of Object.values(sessions)) await s.release();
  enc.dispose();
}
