// The end-to-end group's part of the report (R.endToEnd): its table, the ratios,
// the README's headline line and the method. Pure functions of R.
import * as H from './harness.js';

const ENVS = [
  ['Node', 'node'],
  ['Chromium', 'browser'],
];
const major = (x) => Number(x.nodeVersion?.replace(/^v/, '').split('.')[0]);
/** A Node run's name: "Node 20" (a run of an older version of this file: "Node"). */
const nodeName = (x) => (x.nodeVersion ? `Node ${major(x)}` : 'Node');

/**
 * The environments that ran: [[name, {results, checks, machine, versions}]], every
 * Node major measured (this run's and those carried over, E.otherNodes) by version, then Chromium.
 */
const envs = (E) => [
  ...[E?.node, ...(E?.otherNodes ?? [])]
    .filter((x) => x?.results?.length)
    .sort((a, b) => major(a) - major(b))
    .map((x) => [nodeName(x), x]),
  ...(E?.browser?.results?.length ? [['Chromium', E.browser]] : []),
];
const isNode = (env) => env.startsWith('Node');

const pick = (x, runtime, dtype, sorted) => x.results.find((r) => r.runtime === runtime && r.dtype === dtype && (sorted === undefined || r.sorted === sorted));

/** Texts per CPU second (Node): texts/s / the process's CPU time over wall time. */
const perCpu = (r) => (r?.cpuPerWall ? r.textsPerSec / r.cpuPerWall : undefined);

/** swapformer against transformers.js per environment and dtype: [{env, dtype, swap, sorted, input, cpu}] (texts/s; cpu: per CPU second). */
export function e2eRatios(R) {
  const out = [];
  for (const [env, x] of envs(R.endToEnd)) {
    for (const dtype of ['f32', 'q8']) {
      const s = pick(x, 'swapformer', dtype),
        a = pick(x, 'transformers.js', dtype, true),
        b = pick(x, 'transformers.js', dtype, false);
      if (s)
        out.push({
          env,
          dtype,
          swap: s.textsPerSec,
          sorted: a?.textsPerSec,
          input: b?.textsPerSec,
          cpu: { swap: perCpu(s), sorted: perCpu(a), input: perCpu(b) },
        });
    }
  }
  return out;
}

const others = (m) => (m?.foreign === undefined ? '?' : H.fmt.pct(m.foreign));
const tps = (x) => (Number.isFinite(x) ? x.toFixed(1) : '-');
const ratio = (a, b) => (Number.isFinite(a) && Number.isFinite(b) ? H.fmt.x(a / b) : '-');

/** The RESULTS.md section. */
export function e2eSection(R) {
  const E = R.endToEnd;
  if (!E || E.skipped) return E?.skipped ? ['### End to end', '', `Not run: ${E.skipped}.`, ''] : [];
  const C = E.corpus,
    lines = [];
  lines.push(`### End to end: texts/s embedding ${C.texts} real sentences (tokenization and pooling included), one thread`, '');
  const M = R.machine.endToEnd ?? R.machine,
    sec = R.sections?.['end-to-end'];
  lines.push(
    `Measured ${M.date} on ${M.cpu}, Node ${M.node}${M.chromium ? `, Chromium ${M.chromium}` : ''}, swapformer ${M.git}` +
      `${M.waited ? ` (after waiting for the 1-minute load average to fall below ${M.waited.below}: ${M.waited.load.toFixed(2)})` : ''}; ` +
      `1-minute load average ${sec ? sec.load.map((l) => l.toFixed(2)).join(' -> ') : '?'}, other processes ${others(sec)} of the CPUs over the latest run of the group (each environment's share is in the table).`,
    '',
  );
  const runs = envs(E)
    .filter(([, x]) => x.date)
    .map(
      ([env, x]) =>
        `${env}${x.nodeVersion ? ` (${x.nodeVersion}, swapformer's ${x.build} build, the one it picks with no flag)` : ''} on ${x.date.replace(/\.\d+Z$/, 'Z')}`,
    );
  if (runs.length) lines.push(`Runs: ${runs.join('; ')}.`, '');
  lines.push(
    `Corpus: ${C.texts} sentences of ${C.min} to ${C.max} tokens (median ${C.median}; ${C.tokens} tokens in all, [CLS] and [SEP] included) from ${C.source}. ` +
      `In calls of 32, transformers.js computes ${C.padded.input.tokens} tokens in input order (each call padded to its longest) and ${C.padded.sorted.tokens} length-sorted; ` +
      `swapformer's embed groups by length itself. ${E.model}; medians of ${E.runs} alternating runs over the whole corpus. ` +
      `GFLOP/s: the matrix products (${H.FLOP_FORMULA}) of the tokens each computes (swapformer: the real ones, a lower bound; transformers.js: with its padding) / its median time. ` +
      "In Node, the process's CPU time over each run / its wall time (median): below 1, the process waited for a core (others' load); texts per CPU second = texts/s / that share.",
    '',
  );
  const rows = [];
  for (const [env, x] of envs(E)) {
    const ref = pick(x, 'swapformer', 'f32');
    for (const r of x.results) {
      const c = x.checks.find((k) => k.test === r.label && k.ref === ref?.label);
      const flops = r.runtime === 'swapformer' ? C.flops : C.padded[r.sorted ? 'sorted' : 'input'].flops;
      rows.push([
        `${env} (others ${others(x.machine)})`,
        r.label,
        tps(r.textsPerSec),
        (r.median / 1000).toFixed(2),
        H.fmt.g(flops / r.median / 1e6),
        r.cpuPerWall === undefined ? '-' : `${r.cpuPerWall.toFixed(2)} (${tps(perCpu(r))})`,
        r.times.map((t) => (t / 1000).toFixed(2)).join(' '),
        c ? `${c.min.toFixed(6)} / ${c.mean.toFixed(6)}` : '-',
      ]);
    }
  }
  for (const [env, k] of ENVS) if (E[k]?.error) rows.push([env, '-', E[k].error, '', '', '', '', '']);
  lines.push(
    H.mdTable(
      [
        'environment',
        'runtime',
        'texts/s',
        'median s',
        'GFLOP/s',
        'Node: CPU time / wall time (texts per CPU second)',
        'runs, s',
        'cosine vs swapformer f32, min / mean',
      ],
      rows,
    ),
    '',
  );
  const ratios = e2eRatios(R);
  if (ratios.length) {
    lines.push(
      H.mdTable(
        [
          'environment',
          'dtype',
          'swapformer texts/s',
          'transformers.js length-sorted',
          'swapformer / it',
          'transformers.js input order',
          'swapformer / it',
          'per CPU second (Node): swapformer / length-sorted, / input order',
        ],
        ratios.map((q) => [
          q.env,
          q.dtype,
          tps(q.swap),
          tps(q.sorted),
          ratio(q.swap, q.sorted),
          tps(q.input),
          ratio(q.swap, q.input),
          q.cpu.swap ? `${ratio(q.cpu.swap, q.cpu.sorted)}, ${ratio(q.cpu.swap, q.cpu.input)}` : '-',
        ]),
      ),
      '',
    );
  }
  const q8 = envs(E).flatMap(([env, x]) =>
    x.checks.filter((k) => k.what !== 'f32 agreement').map((k) => [env, `${k.test} vs ${k.ref}`, k.min.toFixed(6), k.mean.toFixed(6)]),
  );
  if (q8.length)
    lines.push(
      'int8 against f32 (and the two q8 against each other), per-text cosine of the embeddings:',
      '',
      H.mdTable(['environment', 'pair', 'min', 'mean'], q8),
      '',
    );
  for (const p of E.profiles ?? []) {
    const v = p.nodeVersion ?? E.node?.nodeVersion; // a carried-over profile keeps the Node it ran on
    lines.push(...profileLines(v ? { ...p, label: p.label.replace(/^Node\b/, nodeName({ nodeVersion: v })) } : p));
  }
  lines.push('How it was measured:', '', e2eMethod(R));
  return [E2E_BEGIN, ...lines, E2E_END];
}

export const E2E_BEGIN = '<!-- e2e:begin -->',
  E2E_END = '<!-- e2e:end -->';

/** A CPU profile of the slower side's hot path, when swapformer was slower somewhere. */
function profileLines(p) {
  if (p.error) return [`CPU profile (${p.label}): ${p.error}`, ''];
  return [
    `Where swapformer's time goes (${p.label}: ${(p.wallMs / 1000).toFixed(2)} s; V8's sampling profiler, self time of each function` +
      `${p.sameCode === false ? "; this build's code section differs from dist/swapformer-relaxed.wasm's: read the shares as indicative" : ''}):`,
    '',
    H.mdTable(
      ['function', 'share'],
      p.functions.slice(0, 6).map((f) => [f.name, H.fmt.pct(f.selfMs / p.ms)]),
    ),
    '',
  ];
}

/** The README's headline: texts/s, swapformer vs transformers.js, each Node and Chromium, f32 and q8, one thread, and what shapes the ratios. */
export function e2eHeadline(R) {
  const E = R.endToEnd,
    ratios = e2eRatios(R);
  if (!ratios.length) return null;
  const M = R.machine,
    C = E.corpus;
  const cell = (q) =>
    `${q.dtype} ${tps(q.swap)} vs ${tps(q.sorted)} length-sorted (${ratio(q.swap, q.sorted)}), ${tps(q.input)} in input order (${ratio(q.swap, q.input)})`;
  const load = envs(E)
    .map(([env, x]) => `${env} ${others(x.machine)}`)
    .join(', ');
  const byEnv = envs(E)
    .map(([env, x]) => [env, x, ratios.filter((q) => q.env === env)])
    .filter(([, , q]) => q.length);
  const where = (env, x) =>
    isNode(env) ? [x.build && `swapformer's ${x.build} build`, 'transformers.js on onnxruntime-node'].filter(Boolean).join('; ') : 'both on WebAssembly';
  return (
    `**End to end, texts/s, swapformer vs transformers.js ${E.tjs ?? '(not installed)'}, one thread** ` +
    `(${C.texts} real sentences of ${C.min}-${C.max} tokens, median ${C.median}, from Node.js's API documentation; all-MiniLM-L6-v2's shape, random weights; ` +
    `tokenization and mean pooling included, calls of 32; medians of ${E.runs} alternating runs):\n\n` +
    byEnv.map(([env, x, q]) => `- ${env} (${where(env, x)}): ${q.map(cell).join('; ')}.`).join('\n') +
    `\n\nIn these wasm runs, transformers.js in Node runs ONNX Runtime's native CPU kernels where swapformer runs WebAssembly; in Chromium both run WebAssembly. ` +
    (byEnv.some(([, x]) => x.build === 'SIMD')
      ? "Node 20 picks swapformer's SIMD128 build (relaxed SIMD needs a flag there), whose int8 product widens to 16 bits; " +
        'Node 22+ and Chromium pick the relaxed build and its int8 dot product. '
      : '') +
    `transformers.js pads each call to its longest text: ${C.padded.input.tokens} tokens computed in input order, ${C.padded.sorted.tokens} length-sorted, ` +
    `where swapformer computes the ${C.tokens} real ones. ${M.cpu}${R.machine.chromium ? `, Chromium ${R.machine.chromium}` : ''}; ` +
    `other processes' share of the CPUs meanwhile: ${load} ([bench/RESULTS.md](https://github.com/swapformer/swapformer/blob/main/bench/RESULTS.md)).`
  );
}

/** The method, as a list item. */
function e2eMethod(R) {
  const E = R.endToEnd;
  if (!E || E.skipped) return '';
  const v = E.node?.versions ?? {},
    b = E.browser?.versions ?? {};
  return `- **End to end** (\`bench/groups/end-to-end.js\`): the texts/s of embedding the corpus, tokenization, batching, the forward and
  mean pooling + L2 normalisation included. The model: ${E.model}, written as a Hugging Face sentence-transformers folder
  (\`${E.folder}/\`: config.json, model.safetensors with BertModel's names, bert-base-uncased's tokenizer.json, tokenizer_config.json,
  modules.json, 1_Pooling, 2_Normalize) with transformers.js's \`onnx/model.onnx\` and \`onnx/model_quantized.onnx\` from
  \`bench/export_hf.py\` (a transcription of transformers' BertModel exported by \`torch.onnx.export\`, opset 14, inputs
  input_ids / attention_mask / token_type_ids [batch, sequence]; q8: onnxruntime's dynamic quantization with the settings of
  transformers.js's conversion script: int8 weights with one scale per MatMul, uint8 activations, the embedding Gathers on uint8 tables).
  swapformer: \`loadPretrained(folder, {dtype, threads: 1, wasm})\` then \`embed(texts, {batchSize: 32})\` (Node: the build it picks
  with no flag, the SIMD build on Node 20 and the relaxed one on Node 22 and later; Chromium: the relaxed build, its default). transformers.js ${E.tjs ?? '(not installed)'} (bench/package.json):
  \`env.allowRemoteModels = false\`, \`env.localModelPath\`, \`pipeline('feature-extraction', name, {dtype: 'fp32' | 'q8', device})\`, then
  \`extractor(batch, {pooling: 'mean', normalize: true})\` per call of 32 texts, in input order and after sorting by length (longest first);
  in Node its default backend, onnxruntime-node${v.onnxruntimeNode ? ` ${v.onnxruntimeNode}` : ''}, \`device: 'cpu'\`, \`session_options: {intraOpNumThreads: 1,
  interOpNumThreads: 1}\`; in Chromium its browser bundle (dist/transformers.min.js), \`device: 'wasm'\`,
  \`env.backends.onnx.wasm.numThreads = 1\`, onnxruntime-web${b.onnxruntimeWeb ? ` ${b.onnxruntimeWeb}` : ''}'s asyncify build (the files it fetches from its CDN by
  default, served locally). Each contender first embeds the first 64 texts twice (warm-up); then ${E.runs} rounds in which each embeds the whole
  corpus, the order reversed every other round; texts/s = texts / median time. The embeddings of the last round are compared text by text (cosine).
`;
}

/** End-to-end f32 embeddings that disagree (cosine below 0.999 against swapformer f32). */
export function e2eFailures(R) {
  return envs(R.endToEnd).flatMap(([env, x]) =>
    x.checks.filter((k) => k.what === 'f32 agreement' && !(k.min > 0.999)).map((k) => `${env} end to end: ${k.test} vs ${k.ref}: cosine ${k.min.toFixed(5)}`),
  );
}
