// semanticSearch over a 100k x 384 float32 corpus and over its ubinary form
// (quantizeEmbeddings: 48 bytes a row, Hamming distance), top 10:
//
//   node tools/node.mjs bench/search.mjs [--rows 100000] [--dims 384] [--queries 10]
//
// Each query is its own call (the corpus copied into wasm every call, as the API
// takes it), timed by the wall clock and by the process's CPU time (user + system:
// this machine is shared); the medians of the queries are reported, and the same
// queries as one call: what each further query costs (its scan alone). Prints a markdown header and row for
// bench/RESULTS.md. The corpus is seeded noise (mulberry32 + Box-Muller): the
// figures depend on the sizes, not on the values.
import { semanticSearch, quantizeEmbeddings, runtimeInfo } from '../bindings/index.js';

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const N = arg('rows', 100000),
  D = arg('dims', 384),
  Q = arg('queries', 10),
  K = 10;

function gaussian(n, seed) {
  let a = seed >>> 0;
  const u = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t ^= t + Math.imul(t ^ (t >>> 7), 61 | t);
    return (((t ^ (t >>> 14)) >>> 0) + 0.5) / 4294967296;
  };
  const out = new Float32Array(n);
  for (let i = 0; i < n; i += 2) {
    const r = Math.sqrt(-2 * Math.log(u())),
      th = 2 * Math.PI * u();
    out[i] = r * Math.cos(th);
    if (i + 1 < n) out[i + 1] = r * Math.sin(th);
  }
  return out;
}

const median = (xs) => {
  const s = [...xs].sort((x, y) => x - y);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** {wall, cpu} in ms of one awaited call. */
async function time(fn) {
  const c0 = process.cpuUsage(),
    t0 = performance.now();
  const out = await fn();
  const wall = performance.now() - t0,
    c = process.cpuUsage(c0);
  return { wall, cpu: (c.user + c.system) / 1000, out };
}

const corpus = { data: gaussian(N * D, 1), shape: [N, D] };
const queries = { data: gaussian(Q * D, 2), shape: [Q, D] };
const one = (rows, i, width) => ({ data: rows.data.subarray(i * width, (i + 1) * width), shape: [1, width] });

await semanticSearch(one(queries, 0, D), corpus, { topK: K }); // warm: the wasm compiled, its memory grown
const float = [];
for (let i = 0; i < Q; i++) float.push(await time(() => semanticSearch(one(queries, i, D), corpus, { topK: K })));
const floatBatch = await time(() => semanticSearch(queries, corpus, { topK: K }));

const quantize = await time(() => quantizeEmbeddings(corpus, 'ubinary'));
const packed = quantize.out,
  packedQ = await quantizeEmbeddings(queries, 'ubinary');
await semanticSearch(one(packedQ, 0, D / 8), packed, { topK: K });
const ham = [];
for (let i = 0; i < Q; i++) ham.push(await time(() => semanticSearch(one(packedQ, i, D / 8), packed, { topK: K })));
const hamBatch = await time(() => semanticSearch(packedQ, packed, { topK: K }));

// a call pays once for reading (the finite check), copying and (cosine) the norms of the corpus; each
// further query of a call only for its scan: (10-query call - one-query call) / 9
const further = (batch, single) => (batch.cpu - median(single.map((t) => t.cpu))) / (Q - 1); // CPU time: steadier on a shared machine
const f = (x) => x.toFixed(x < 10 ? 2 : 1);
const { build } = await runtimeInfo();
const load = (await import('node:os')).loadavg()[0].toFixed(1);
console.log(
  '| corpus | build | float32 cosine: a one-query call, ms (wall / CPU) | each further query of a 10-query call, CPU ms | ubinary Hamming: a one-query call, ms (wall / CPU) | each further query, CPU ms | quantize the corpus to ubinary, ms (wall / CPU) |',
);
console.log('|:--|:--|--:|--:|--:|--:|--:|');
console.log(
  `| ${N} x ${D} (${((N * D * 4) / 1e6).toFixed(1)} MB f32, ${((N * D) / 8 / 1e6).toFixed(1)} MB packed), top ${K}, median of ${Q} | ${build}, 1 thread (load ${load}) | ${f(median(float.map((t) => t.wall)))} / ${f(median(float.map((t) => t.cpu)))} | ${f(further(floatBatch, float))} | ${f(median(ham.map((t) => t.wall)))} / ${f(median(ham.map((t) => t.cpu)))} | ${f(further(hamBatch, ham))} | ${f(quantize.wall)} / ${f(quantize.cpu)} |`,
);
