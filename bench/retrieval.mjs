// Sparse and ColBERT encoding beside dense encoding on the same model, and
// MaxSim search over a ColBERT corpus:
//
//   node tools/node.mjs bench/retrieval.mjs [--texts 64] [--tokens 128] [--docs 10000] [--doc-tokens 48] [--threads 1]
//
// Two encoders of realistic size, random weights (the speed depends on the
// sizes, not the values), through the public forward:
//  - SPLADE-sized: 6 layers, 384 hidden, 12 heads, FFN 1536, vocabulary 30522,
//    a tied masked-LM head (naver/splade-v3-distilbert and the MiniLM SPLADEs
//    have this shape): dense = the hidden states mean-pooled in JS (what embed
//    does), sparse = forward's SPLADE pooling in the core (every token's logits
//    over the vocabulary, pooled as they come) plus the non-zeros as
//    {indices, values};
//  - answerai-colbert-small-v1-sized: 12 layers, 384 hidden, a colbert head of
//    96: dense = hidden states mean-pooled, colbert = the head's normalised rows.
// Then MaxSim of a 32-token query against `docs` documents of `doc-tokens`
// vectors of 96 (unit noise), top 10: one query a call, and nine (the scan alone
// per further query). Medians of 3 runs; wall clock and
// process CPU time (user + system: the machine may be shared). Prints markdown
// rows for bench/RESULTS.md.
import { createEncoder, maxSimSearch, runtimeInfo } from '../bindings/index.js';
import { sparseRowsOn } from '../bindings/runtime/embeddings.js';
import { defaultRuntime } from '../bindings/runtime/encoder.js';

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const TEXTS = arg('texts', 64),
  TOKENS = arg('tokens', 128),
  DOCS = arg('docs', 10000),
  DOC_TOKENS = arg('doc-tokens', 48),
  THREADS = arg('threads', 1);

let seed = 1;
const rand = () => {
  seed = (seed * 1103515245 + 12345) >>> 0;
  return seed / 4294967296;
};
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
async function time(fn, reps = 3) {
  const walls = [],
    cpus = [];
  for (let r = 0; r < reps; r++) {
    const c0 = process.cpuUsage(),
      t0 = performance.now();
    await fn();
    walls.push(performance.now() - t0);
    const c = process.cpuUsage(c0);
    cpus.push((c.user + c.system) / 1000);
  }
  return { wall: median(walls), cpu: median(cpus) };
}

const base = {
  dModel: 384,
  heads: 12,
  ffDim: 1536,
  maxLen: 512,
  position: 'learned',
  norm: 'layernorm',
  normPlacement: 'post',
  embedNorm: true,
  activation: 'gelu',
  typeVocabSize: 2,
};
const batch = Array.from({ length: TEXTS }, () => Array.from({ length: TOKENS }, () => 1000 + Math.floor(rand() * 29000)));
const meanPool = (out) => {
  const [B, T, C] = out.shape,
    v = new Float32Array(B * C);
  for (let b = 0; b < B; b++) for (let t = 0; t < T; t++) for (let c = 0; c < C; c++) v[b * C + c] += out.data[(b * T + t) * C + c] / T;
  return v;
};
const row = (name, t) => `| ${name} | ${TEXTS} x ${TOKENS} | ${((TEXTS * 1000) / t.cpu).toFixed(1)} | ${t.wall.toFixed(0)} | ${t.cpu.toFixed(0)} |`;

const info = await runtimeInfo({ threads: THREADS });
console.log(`backend ${info.backend} (${info.isa}), threads ${THREADS}\n`);
console.log('| model, output | texts x tokens | texts per CPU second | wall ms | cpu ms |\n|:--|--:|--:|--:|--:|');

const splade = await createEncoder(
  { ...base, vocabSize: 30522, layers: 6, head: { task: 'mlm', dense: true, activation: 'gelu', norm: 'layernorm' } },
  { seed: 1, threads: THREADS },
);
const rt = await defaultRuntime();
splade.forward(batch.slice(0, 2)); // warm
console.log(row('SPLADE-sized (6 x 384, V 30522), dense', await time(() => meanPool(splade.forward(batch)))));
console.log(row('SPLADE-sized, sparse (SPLADE pooling + non-zeros)', await time(() => sparseRowsOn(rt, splade.forward(batch, { sparse: true }).sparse))));
splade.dispose();

const colbert = await createEncoder({ ...base, vocabSize: 30522, layers: 12, head: { task: 'colbert', labels: 96 } }, { seed: 2, threads: THREADS });
colbert.forward(batch.slice(0, 2));
console.log(row('ColBERT-sized (12 x 384, dim 96), dense', await time(() => meanPool(colbert.forward(batch)))));
console.log(row('ColBERT-sized, colbert (token vectors)', await time(() => colbert.forward(batch, { head: true }))));
colbert.dispose();

// MaxSim search: unit vectors of 96
const unit = (n, d) => {
  const a = new Float32Array(n * d);
  for (let i = 0; i < n; i++) {
    let s = 0;
    for (let k = 0; k < d; k++) s += (a[i * d + k] = rand() - 0.5) ** 2;
    const inv = 1 / Math.sqrt(s);
    for (let k = 0; k < d; k++) a[i * d + k] *= inv;
  }
  return a;
};
const docs = Array.from({ length: DOCS }, () => ({ data: unit(DOC_TOKENS, 96), shape: [DOC_TOKENS, 96] }));
const queries9 = Array.from({ length: 9 }, () => ({ data: unit(32, 96), shape: [32, 96] }));
await maxSimSearch([queries9[0]], docs.slice(0, 10));
// one query, then nine in one call: the corpus copied in once either way, so the difference is eight scans
const one = await time(() => maxSimSearch([queries9[0]], docs, { topK: 10 }));
const nine = await time(() => maxSimSearch(queries9, docs, { topK: 10 }));
const scan = { wall: (nine.wall - one.wall) / 8, cpu: (nine.cpu - one.cpu) / 8 };
const flops = 2 * 32 * 96 * DOCS * DOC_TOKENS;
console.log(`\n| MaxSim search, top 10 | documents x vectors | query | wall ms | cpu ms | GFLOP/s (cpu) |\n|:--|--:|--:|--:|--:|--:|`);
console.log(
  `| one call, one query (the corpus read and copied in) | ${DOCS} x ${DOC_TOKENS} x 96 | 32 x 96 | ${one.wall.toFixed(0)} | ${one.cpu.toFixed(0)} | |`,
);
console.log(
  `| each further query of a call (the scan) | ${DOCS} x ${DOC_TOKENS} x 96 | 32 x 96 | ${scan.wall.toFixed(0)} | ${scan.cpu.toFixed(0)} | ${(flops / scan.cpu / 1e6).toFixed(1)} |`,
);
