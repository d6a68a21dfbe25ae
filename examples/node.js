// A tour of swapformer in Node: build an encoder, run it, swap its position
// plugin on the same weights, save and reload it.
//   node examples/node.js
import { createEncoder, loadModel, listPlugins } from '../bindings/index.js';

const config = {
  vocabSize: 1000,
  dModel: 64,
  heads: 4,
  layers: 2,
  ffDim: 256,
  position: 'sinusoidal',
  norm: 'layernorm',
  normPlacement: 'pre',
  activation: 'gelu',
};

console.log('plugins:', await listPlugins());
const enc = await createEncoder(config, { seed: 1 });
const dog = 17,
  bites = 42,
  man = 99;
const a = enc.forward([dog, bites, man]);
const b = enc.forward([man, bites, dog]);
const maxDiff = (x, y) => x.reduce((m, v, i) => Math.max(m, Math.abs(v - y[i])), 0);
const row = (r, t) => r.data.subarray(t * 64, (t + 1) * 64);
console.log(`sinusoidal: 'dog' as subject vs object differs by ${maxDiff(row(a, 0), row(b, 2)).toExponential(3)}`);

// the same weights, without positions: attention is a bag of words
const none = await createEncoder({ ...config, position: 'none' }, { weights: enc.getWeights() });
const [c, d] = [none.forward([dog, bites, man]), none.forward([man, bites, dog])];
console.log(`none:       'dog' as subject vs object differs by ${maxDiff(row(c, 0), row(d, 2))} (bit for bit the same)`);

const t0 = performance.now();
for (let i = 0; i < 20; i++) enc.forward(Array.from({ length: 128 }, (_, t) => (t * 7) % 1000));
console.log(`forward of 128 tokens: ${((performance.now() - t0) / 20).toFixed(2)} ms`);

const file = enc.save();
const back = await loadModel(file);
console.log(`saved ${file.length} bytes; reloaded output identical: ${maxDiff(back.forward([dog, bites, man]).data, a.data) === 0}`);
for (const e of [enc, none, back]) e.dispose();
