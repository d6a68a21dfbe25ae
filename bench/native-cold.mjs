// Cold start and memory of one contender, in a fresh process (bench/native.mjs runs one per
// contender). Prints one JSON line.
//
//   node tools/node.mjs bench/native-cold.mjs '{"runtime": "swapformer"|"transformers.js",
//        "backend": "native"|"wasm", "dtype": "f32"|"q8", "folder": PATH, "text": "..."}'
//
// coldMs: from just before importing the library to the first embedding in hand (reading
// the model, compiling the wasm or loading the addon, the first pass). rss: the process's
// resident memory before the model is loaded, after it is loaded, and after one embedding;
// weights: the bytes of the model's weights as stored (f32 safetensors; q8: what the q8
// storage holds: int8 panels and scales, the rest f32, from the saved q8 model file).
import { statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { createRequire } from 'node:module';

const spec = JSON.parse(process.argv[2]);
const rss = () => process.memoryUsage().rss;
const base = rss();
const t0 = performance.now();
let embed, loadedRss, weights;
if (spec.runtime === 'swapformer') {
  if (spec.backend) process.env.SWAPFORMER_BACKEND = spec.backend;
  const sf = await import('../bindings/index.js');
  const p = await sf.loadPretrained(spec.folder, { dtype: spec.dtype, threads: 1 });
  loadedRss = rss();
  embed = () => p.embed([spec.text]).data;
  // the weights as stored, from the saved file: after the timing and the memory readings
  weights = () => {
    const file = p.encoder.save();
    const v = new DataView(file.buffer, file.byteOffset, 8);
    return file.length - 8 - (v.getUint32(0, true) + v.getUint32(4, true) * 2 ** 32);
  };
} else {
  const require = createRequire(new URL('./package.json', import.meta.url));
  const tjs = await import(require.resolve('@huggingface/transformers'));
  tjs.env.allowRemoteModels = false;
  tjs.env.localModelPath = `${dirname(spec.folder)}/`;
  const extractor = await tjs.pipeline('feature-extraction', basename(spec.folder), {
    dtype: spec.dtype === 'f32' ? 'fp32' : 'q8',
    device: 'cpu',
    session_options: { intraOpNumThreads: 1, interOpNumThreads: 1 },
  });
  loadedRss = rss();
  embed = async () => (await extractor([spec.text], { pooling: 'mean', normalize: true })).data;
  weights = () => statSync(join(spec.folder, 'onnx', spec.dtype === 'f32' ? 'model.onnx' : 'model_quantized.onnx')).size;
}
const first = await embed();
const coldMs = performance.now() - t0;
const after = rss();
console.log(JSON.stringify({ ...spec, text: undefined, coldMs, rss: { base, loaded: loadedRss, afterEmbed: after }, weights: weights(), dims: first.length }));
process.exit(0);
