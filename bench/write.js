// The writers of a run's report: bench/RESULTS.md (the method and the tables of
// bench/report.js) and the README "Performance" block.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as H from './harness.js';
import { ROOT, ORT_SETTINGS, DIST_NAME, plural, fmt0 } from './context.js';
import { e2eHeadline, e2eSection, E2E_BEGIN, E2E_END } from './report-e2e.js';
import {
  MATRIX_HEAD,
  matrixRows,
  scalingRows,
  SCALING_HEAD,
  SUMMARY_HEAD,
  timeSplit,
  loadMemory,
  loadMemoryTable,
  threadsSummary,
  oneThreadSummary,
} from './report.js';

export function resultsMd(R, table) {
  const M = R.machine;
  return `# swapformer benchmark results

Written by \`npm run bench\` (bench/bench.js) on ${M.date}. Do not edit by hand: rerun (the standalone scripts' section at the end excepted).

| | |
|:--|:--|
| CPU | ${M.cpu}, ${M.cores} cores (thread counts measured: ${(R.threadCounts ?? [1]).join(', ')}), ${M.memory}; 1-min load average ${M.load?.toFixed(1)} at the start, ${M.loadEnd?.toFixed(1)} at the end |
| OS | ${M.os} |
| Node | ${M.node} (V8 ${M.v8}), flags \`${M.nodeFlags}\` |
| Chromium | ${R.browser ? `${R.browser.version}, headless, via playwright-core ${M.playwright}` : 'not run'} |
| onnxruntime-web | ${M.ort} |
| swapformer | ${M.git} |
| binaries | ${Object.entries(M.dist)
    .map(([k, v]) => `${DIST_NAME[k] ?? k} sha256 ${v}`)
    .join('<br>')} |

## How it was measured

- **Models**: MiniLM-L6 shape (6 layers, dModel 384, 12 heads, ffDim 1536) and BERT-base shape
  (12, 768, 12, 3072), vocab 30522, learned positions, post-LayerNorm (eps 1e-12), GELU (erf); a
  modern MiniLM variant (RoPE, pre-RMSNorm, SwiGLU) for swapformer alone. Weights from
  \`createEncoder(config, {seed})\` with non-zero biases and norm gains, saved to
  \`bench/.cache/*.safetensors\`; both runtimes load those weights.
- **ONNX**: \`bench/export_onnx.py\` (Debian's PyTorch ${M.torch}, \`torch.onnx.export\`, opset 17,
  dynamic T axis, input int64 \`input_ids\` [1, T]). Two graphs with the same weights: *fused*, the
  graph onnxruntime's offline transformer optimiser produces for BERT (com.microsoft \`Attention\`,
  \`SkipLayerNormalization\`, \`BiasGelu\`), and *plain*, the module exported as is (native
  \`LayerNormalization\`), left to ORT's own graph optimiser. MiniLM runs both; BERT-base runs the
  one that was faster for MiniLM at the same T. "vs ORT" uses the faster ORT graph.
- **ORT settings**: ${ORT_SETTINGS}. In Node \`import * as ort from 'onnxruntime-web'\`
  (\`ort.node.min.mjs\`, which loads \`ort-wasm-simd-threaded.wasm\`); in Chromium \`ort.wasm.min.mjs\`.
- **Builds**: swapformer's SIMD build (\`dist/swapformer.wasm\`) and its relaxed-SIMD build
  (\`dist/swapformer-relaxed.wasm\`), copied at the start of the run (hashes above). The MiniLM shapes run
  both everywhere; BERT-base runs each environment's default only: the SIMD build in Node (relaxed SIMD
  needs \`--experimental-wasm-relaxed-simd\` in Node 20), the relaxed build in Chromium. With more than one
  thread, their threaded twins (\`dist/swapformer-mt.wasm\`, \`dist/swapformer-relaxed-mt.wasm\`).
- **Threads x dtypes** (MiniLM-L6, T=128 and T=512, ${(R.threadCounts ?? [1]).map(plural).join(', ')}): one fresh Node
  process (\`bench/matrix.js\`) and one fresh Chromium page per thread count (onnxruntime-web fixes its threads when
  its wasm starts), the page cross-origin isolated (COOP/COEP) so that it has SharedArrayBuffer. Runners alternate run by run:
  ORT's fused and plain f32 graphs and their q8 versions (\`env.wasm.numThreads\`); swapformer's SIMD and relaxed builds in f32
  and q8, \`loadModel(bytes, {dtype, threads})\` of the f32 file (one thread: \`dist/swapformer.wasm\` /
  \`-relaxed.wasm\`; more: \`dist/swapformer-mt.wasm\` / \`-relaxed-mt.wasm\` and their worker pool). In the process of the most
  threads the swapformer runners run again at each smaller count, in the same rounds: the thread scaling, and
  their outputs must be the same bits. "vs ORT": the fastest ORT graph of the same dtype at the same thread count.
- **q8 ONNX**: \`bench/export_onnx.py --graph plain-q8 / fused-q8\` writes onnxruntime's dynamic quantization of the
  f32 graphs with Debian's \`python3-onnx\`: every MatMul with a constant weight becomes DynamicQuantizeLinear (the
  activation, u8, per tensor) + MatMulInteger with per-column int8 weights (symmetric, zero point 0) + Cast + Mul by
  the scales (ORT's optimiser fuses them into DynamicQuantizeMatMul); the fused graph's Attention becomes com.microsoft
  QAttention on the quantized input and QKV weights. swapformer q8: int8 weights per output row, activations per row (u8 in the SIMD build, u7 in
  the relaxed one), int32 accumulation.
- **int8 accuracy**: q8 against f32 of the same runtime and build, on the timed ids (the "check" column) and on
  ${R.accuracy?.[0] ? `${R.accuracy[0].sequences} other sequences (${R.accuracy[0].lengths.join(', ')} tokens)` : 'other sequences'}: cosine of every row (token) of the
  hidden states (>= 0.99 required), of the mean-pooled embeddings, and max |q8 - f32| / max |f32|.
- **CPU profile** (Chromium): the relaxed build rebuilt with its name section (build.sh's flags, \`bench.js buildNamed\`),
  MiniLM-L6 T=512, one thread, CDP \`Profiler\` sampling over a few forwards after warm-up; self time per function.
- **Other processes**: \`bench/quiet.js\` reads /proc: the CPU time of every process outside the benchmark's own
  tree over each part of the run, as a share of all cores (this machine is shared); \`--wait-quiet[=LOAD]\` waits for
  the 1-minute load average to fall below LOAD (0.5) before measuring.
- **Cross-check**: every f32 output against the first ORT graph's (swapformer-only cases: against the SIMD
  build's): max |a - b| / max |b| (<= 1e-3 required), on the same ids before timing.
- **Timing**: warm-up rounds first (V8 starts wasm in its baseline tier), then the runtimes alternate run
  by run (order reversed every other round), one thread (threads x dtypes: the case's thread count), batch 1; medians. Input copy-in and output
  copy-out are inside the timed call for both (\`forward(ids)\` / \`await session.run(feeds)\`).
- **GFLOP/s**: ${H.FLOP_FORMULA}.
- **Peak**: \`bench/peak.c\` (clang-16, wasm-ld-16): register-only kernels with N independent f32x4
  accumulators, \`acc = acc*a + b\` (SIMD mul + add) or \`relaxed_madd\` (relaxed SIMD), best N; and an
  L1-resident matrix-product micro-kernel (splat-load A, vector-load B, 4 x 8 ... accumulators). The
  peak of a build is the better of the two, measured in the same environment (best of 10 calls each, in Node three passes alternating with the matrix products alone:
  the machine is noisy, the best is the least disturbed). "% of peak" divides the GFLOP/s of the whole
  forward (matrix products only counted) by it, so it is a lower bound for the matrix products.
- **Matrix products alone**: \`bench/gemm.c\` built with \`core/kernels.c\` as each shipped wasm is (emcc;
  clang-16 + wasm-ld-16 with relaxed SIMD) runs \`matmul_forward\` on one MiniLM layer's Linear shapes
  (q, k, v, o: four 384 -> 384, up: 384 -> 1536, down: 1536 -> 384) for T=512 in 64-row chunks as the
  encoder does, weights packed; best of 40 rounds. The peak and this alternate, three passes each, best kept.
- **Memory**: the byte length of each runtime's wasm memory (caught at instantiation; wasm memory
  never grows back, so it is the peak) in a fresh Node process after loading the model and one
  forward. JS-heap copies (the model file bytes, ORT's JS tensors) are not counted for either.
  Each runtime's memory is caught at instantiation: \`bench/probe.js\` wraps \`WebAssembly.instantiate\`
  (and \`instantiateStreaming\`) and keeps every \`WebAssembly.Memory\` the instance exports or imports
  (swapformer exports its memory; onnxruntime-web's module keeps its own private, \`ort.env.wasm\` has no
  handle to it). Load memory (MiniLM-L6): after loading, after one forward of 128 tokens, and after the
  encoder is disposed (ORT: the session released) and the same file loaded again with one forward; the
  weights are the f32 bytes of every tensor (swapformer's \`weightShapes()\`, the same weights in both).
- **Cold start**: fresh Node processes (and fresh Chromium contexts: no HTTP or code cache) from
  \`import\` of the runtime to the first output, including reading the model file.
- **Long sequences**: T=512 and T=${R.long?.at(-1)?.T ?? 8192} with RoPE and ALiBi (same weights), the SIMD build, in a
  fresh process: five forwards of 16 tokens, then the heap's free space is filled with held
  allocations (\`sf_alloc\` in 1 MB ... 256 B blocks until the memory grows), so that the next forward
  must grow the memory for whatever it allocates; one forward of T tokens (timed, a single run), and
  the growth of the wasm memory across it is its activation memory (to within the last growth's
  slack, under 1 MB).

## Results

${table}
${keptStandalone()}`;
}

/** The standalone scripts' section (search, tokenizing, the server; filled by hand from their
 * output, between STANDALONE_BEGIN and STANDALONE_END) of the RESULTS.md on disk, kept by a full run. */
export const STANDALONE_BEGIN = '<!-- standalone:begin -->';
export const STANDALONE_END = '<!-- standalone:end -->';
function keptStandalone(path = join(ROOT, 'bench', 'RESULTS.md')) {
  let md;
  try {
    md = readFileSync(path, 'utf8');
  } catch {
    return '';
  }
  const a = md.indexOf(STANDALONE_BEGIN),
    b = md.indexOf(STANDALONE_END);
  return a >= 0 && b > a ? `\n${md.slice(a, b + STANDALONE_END.length)}\n` : '';
}

/**
 * Puts block between the README's <!-- bench:begin --> and <!-- bench:end --> (true), or
 * leaves a README without them as it is (false: the README is a short front door whose
 * tables live in docs/performance.md; the block stays in bench/.cache/README-performance.md).
 */
export function updateReadme(block, path = join(ROOT, 'README.md')) {
  const md = replaceBetween(readFileSync(path, 'utf8'), '<!-- bench:begin -->', '<!-- bench:end -->', `<!-- bench:begin -->\n${block}\n<!-- bench:end -->`);
  if (md === null) return false;
  writeFileSync(path, md);
  return true;
}

/** The README block: the Node table, sizes, cold start, a pointer to RESULTS.md. */
export function readmeBlock(R) {
  const M = R.machine;
  const lines = [
    `Measured by \`npm run bench\` on ${M.cpu}, ${M.cores} cores, Node ${M.node}, onnxruntime-web ${M.ort}` +
      ` (wasm backend, graph optimisations 'all'), same random weights, batch 1, medians; details and the Chromium figures in` +
      ' [bench/RESULTS.md](https://github.com/swapformer/swapformer/blob/main/bench/RESULTS.md).',
    '',
  ];
  const nodeMatrix = R.matrix?.node ?? [];
  if (nodeMatrix.length) {
    lines.push(
      `MiniLM-L6 with ${R.threadCounts.map(plural).join(' and ')}, f32 and q8 (swapformer \`loadModel(bytes, {dtype, threads})\`; ORT: its f32 graphs and their dynamic quantization), Node:`,
      '',
    );
    lines.push(H.mdTable(MATRIX_HEAD, matrixRows(nodeMatrix)));
    const sc = scalingRows(nodeMatrix);
    if (sc.length) lines.push('', 'Thread scaling, Node:', '', H.mdTable(SCALING_HEAD, sc));
    lines.push('', 'One thread, f32, Node:', '');
  }
  lines.push(H.mdTable(H.COMPARISON_HEAD, H.comparisonRows(R.node ?? [], R.peaks.node)));
  lines.push('');
  lines.push(
    H.mdTable(
      ['file', 'raw', 'gzip -9'],
      R.sizes.filter((s) => s.what.includes('wasm')).map((s) => [s.what, s.missing ? 'not built' : H.fmt.kb(s.raw), s.missing ? '-' : H.fmt.kb(s.gzip)]),
    ),
  );
  const split = timeSplit(R);
  if (split.length) {
    lines.push('', 'Where the time goes (Node, MiniLM-L6 T=512; Linear layers at the speed `matmul_forward` reaches alone on their shapes):', '');
    lines.push(H.mdTable(['build', 'forward (fastest run)', 'Linear layers: GFLOP/s alone, ms', 'the rest, ms'], split));
  }
  for (const [shape, c] of Object.entries(R.cold ?? {})) {
    lines.push('');
    lines.push(
      `Cold start (import to first output, ${shape === 'tiny' ? 'a tiny 2-layer model' : shape}, T=128, Node): swapformer ${fmt0(H.median(c.swapformer.map((p) => p.coldMs)))} ms, ` +
        `onnxruntime-web ${fmt0(H.median(c.ort.map((p) => p.coldMs)))} ms.`,
    );
  }
  const load = loadMemory(R);
  if (load) {
    lines.push('', `Wasm memory loading MiniLM-L6 (${H.fmt.mb(load.weights)} of f32 weights; in parentheses, / the weights), Node:`, '');
    lines.push(loadMemoryTable(load, R));
  }
  lines.push('', 'Threads, int8 and memory in figures (Node and Chromium), and what limits each:', '');
  lines.push(H.mdTable(SUMMARY_HEAD, threadsSummary(R), ['l', 'l', 'l']));
  lines.push('', 'One thread, f32, in figures:', '');
  lines.push(H.mdTable(SUMMARY_HEAD, oneThreadSummary(R), ['l', 'l', 'l']));
  return lines.join('\n');
}

/** md with the text from begin to end replaced by body, or null when md lacks them. */
function replaceBetween(md, begin, end, body) {
  const a = md.indexOf(begin),
    b = md.indexOf(end);
  if (a < 0 || b < a) return null;
  return md.slice(0, a) + body + md.slice(b + end.length);
}

/**
 * The README's end-to-end headline (between <!-- bench:headline:begin --> and
 * <!-- bench:headline:end -->, in "Why it is fast and small"; put before the bench block when absent).
 */
export function updateReadmeHeadline(R, path = join(ROOT, 'README.md')) {
  const line = e2eHeadline(R);
  if (!line) return false;
  const begin = '<!-- bench:headline:begin -->',
    end = '<!-- bench:headline:end -->',
    body = `${begin}\n${line}\n${end}`;
  let md = readFileSync(path, 'utf8');
  const next = replaceBetween(md, begin, end, body);
  if (next !== null) md = next;
  else if (md.includes('<!-- bench:begin -->')) md = md.replace('<!-- bench:begin -->', `${body}\n\n<!-- bench:begin -->`);
  else return false;
  writeFileSync(path, md);
  return true;
}

/**
 * --only=end-to-end without a full run's results.json: the end-to-end section
 * replaced in (or put at the top of the results of) the RESULTS.md on disk, the rest kept.
 */
export function patchResultsMd(R, path = join(ROOT, 'bench', 'RESULTS.md')) {
  const body = e2eSection(R).join('\n');
  let md = readFileSync(path, 'utf8');
  const next = replaceBetween(md, E2E_BEGIN, E2E_END, body);
  if (next !== null) md = next;
  else {
    const at = md.indexOf('## Results\n');
    if (at < 0) return false;
    const after = md.indexOf('\n\n', md.indexOf('\n', at) + 1) + 2; // after the run's header paragraph
    md = `${md.slice(0, after)}${body}\n\n${md.slice(after)}`;
  }
  writeFileSync(path, md);
  return true;
}
