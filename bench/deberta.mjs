#!/usr/bin/env node
// DeBERTa-v3-xsmall's shape (384 wide, 12 layers, 6 heads of 64, ffDim 1536, the
// disentangled scheme with buckets 256 over 512: c2p and p2c) against the same
// shape with BERT's attention (learned positions, no relative terms): one
// sequence of T tokens, the forward pass alone (no tokenizer, no head), f32 and
// q8, in the native addon and the wasm, one thread. Random weights (seed 1); a
// vocabulary of 8,192 rows instead of 128,100 (the embedding is a lookup: its
// size does not change the time, only the memory and the set-up).
//
//   node tools/node.mjs bench/deberta.mjs [--runs 7] [--lengths 128,512]
//
// Prints the median milliseconds of `runs` timed passes after one warm-up (the two
// models' passes alternated), and
// DeBERTa's time over BERT's: what the two extra terms of every score cost.
import { createEncoder, configure, runtimeInfo } from '../bindings/index.js';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const RUNS = Number(arg('runs', 7));
const LENGTHS = arg('lengths', '128,512').split(',').map(Number);

const SHAPE = {
  vocabSize: 8192,
  dModel: 384,
  heads: 6,
  layers: 12,
  ffDim: 1536,
  norm: 'layernorm',
  normPlacement: 'post',
  activation: 'gelu',
  embedNorm: true,
  eps: 1e-7,
};
const MODELS = {
  'deberta-v3-xsmall': {
    ...SHAPE,
    position: 'none',
    relativeBias: 'disentangled',
    relativeBiasOptions: { buckets: 256, maxDistance: 512, terms: ['c2p', 'p2c'], shareKey: true, normTable: true },
    attnScale: 1 / Math.sqrt(64 * 3),
  },
  'bert (same shape)': { ...SHAPE, position: 'learned', maxLen: 512, typeVocabSize: 2 },
};

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

/** Median ms of one forward of T tokens for each config, their passes alternated (the same load on both). */
async function time(configs, dtype, T) {
  const encoders = await Promise.all(configs.map((c) => createEncoder(c, { seed: 1, dtype, threads: 1 })));
  try {
    const ids = Array.from({ length: T }, (_, t) => 1 + ((t * 7919) % 8000));
    for (const e of encoders) e.forward(ids); // warm-up: reserves, projects the disentangled tables once
    const ms = encoders.map(() => []);
    for (let r = 0; r < RUNS; r++)
      encoders.forEach((e, k) => {
        const t0 = performance.now();
        e.forward(ids);
        ms[k].push(performance.now() - t0);
      });
    return ms.map(median);
  } finally {
    for (const e of encoders) e.dispose();
  }
}

for (const backend of ['native', 'wasm']) {
  configure({ backend });
  let info;
  try {
    info = await runtimeInfo();
  } catch (e) {
    console.log(`${backend}: ${e.message}`);
    continue;
  }
  console.log(`\n${backend} (${info.isa}), ${RUNS} runs, median ms of one forward`);
  console.log('dtype  T     deberta-v3-xsmall  bert (same shape)  ratio');
  for (const dtype of ['f32', 'q8'])
    for (const T of LENGTHS) {
      const [d, b] = await time([MODELS['deberta-v3-xsmall'], MODELS['bert (same shape)']], dtype, T);
      console.log(`${dtype.padEnd(6)} ${String(T).padEnd(5)} ${d.toFixed(1).padStart(17)}  ${b.toFixed(1).padStart(17)}  ${(d / b).toFixed(2).padStart(5)}`);
    }
}
configure({ backend: undefined });
