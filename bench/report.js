// The report of a run (R, bench/.cache/results.json): the tables and the summary
// rows (figure, measured, what limits it) of bench/RESULTS.md and of the README
// block (bench/write.js writes them).
// Pure functions of R.
import * as H from './harness.js';
import { DIST_NAME, ORT_CASES, plural, fmt0 } from './context.js';
import { e2eSection, e2eFailures } from './report-e2e.js';

/** What a forward's rate is against the build's peak, and ORT's: "swapformer G GFLOP/s (P% of peak), ORT G". */
function rateCause(c, s, o, peaks, relaxed, threads = 1) {
  if (!c?.flops || !s || !o) return '';
  const g = (ms) => c.flops / ms / 1e6,
    pk = peaks && H.peakOf(relaxed ? peaks.relaxed : peaks.plain) * threads;
  return `swapformer ${H.fmt.g(g(s.median))} GFLOP/s${pk ? ` (${H.fmt.pct(g(s.median) / pk)} of ${threads > 1 ? `${threads} cores'` : "one core's"} peak)` : ''}, ORT ${H.fmt.g(g(o.median))}`;
}

/** Where swapformer's cold start goes, and ORT's total. */
function coldCause(c) {
  const m = (k) => fmt0(H.median(c.swapformer.map((x) => x[k])));
  return `swapformer ${m('coldMs')} ms = ${m('importMs')} import + ${m('fetchMs')} reading/fetching the model file + ${m('loadMs')} loading it + ${m('firstMs')} first forward; ORT ${fmt0(H.median(c.ort.map((x) => x.coldMs)))} ms`;
}

/** One thread, f32, in figures: speed against ORT, the matrix products, long sequences, the builds, cold start: [figure, measured, what limits it]. */
export function oneThreadSummary(R) {
  const rows = [];
  const find = (cases, shape, T) => cases?.find((c) => c.shape === shape && c.T === T && !c.error);
  const pair = (cases, shape, T, relaxed) => {
    const c = find(cases, shape, T),
      o = c && H.ortBest(c),
      s = c?.results.find((r) => !r.ort && r.relaxed === relaxed);
    return { c, o, s, v: o && s ? o.median / s.median : undefined };
  };
  for (const [shape, T] of [
    ['MiniLM-L6', 128],
    ['MiniLM-L6', 512],
    ['BERT-base', 128],
    ['BERT-base', 512],
  ]) {
    const p = pair(R.node, shape, T, false),
      pr = pair(R.node, shape, T, true);
    rows.push([
      `Node, ${shape} T=${T}: swapformer / ORT`,
      p.v === undefined ? '-' : `${H.fmt.x(p.v)} (SIMD build)` + (pr.v === undefined ? '' : `; the relaxed build (Node 20 with its flag): ${H.fmt.x(pr.v)}`),
      rateCause(p.c, p.s, p.o, R.peaks.node, false),
    ]);
  }
  // matrix products: swapformer's matmul_forward alone (bench/gemm.c), against the peak of the same build
  if (R.gemm) {
    const fp = R.gemm.plain / H.peakOf(R.peaks.node.plain),
      fr = R.gemm.relaxed && R.gemm.relaxed / H.peakOf(R.peaks.node.relaxed);
    rows.push([
      'Node: the matrix products alone, against the peak',
      `${R.gemm.shape}: SIMD ${H.fmt.g(R.gemm.plain)} GFLOP/s = ${H.fmt.pct(fp)} of the mul+add peak` +
        (fr ? `; relaxed ${H.fmt.g(R.gemm.relaxed)} = ${H.fmt.pct(fr)} of the fma peak` : ''),
      `the best L1 micro-kernel V8 leaves room for (${R.peaks.node.plain.gemmKernel}) reaches ${H.fmt.g(R.peaks.node.plain.gemm)} = ${H.fmt.pct(R.peaks.node.plain.gemm / H.peakOf(R.peaks.node.plain))} of it`,
    ]);
  }
  for (const l of (R.long ?? []).filter((x) => x.T > 512)) {
    rows.push([
      `T=${l.T} ${l.shape.includes('ALiBi') ? 'ALiBi' : 'RoPE'}: activation memory`,
      l.error ?? `${H.fmt.mb(l.memAfter - l.memBefore)} growth, ${(l.ms / 1000).toFixed(1)} s`,
      'attention tiled over the keys (online softmax): O(T) memory',
    ]);
  }
  const relaxedRow = R.sizes.find((s) => s.what.includes('relaxed'));
  rows.push([
    'dist/swapformer-relaxed.wasm, chosen by feature detection',
    relaxedRow.missing
      ? 'not built'
      : `built; picked by default where relaxed SIMD validates (Node ${R.features?.relaxedSimd ? 'with the flag: yes' : 'here: no'}${R.browser ? `, Chromium: ${R.browser.relaxed ? 'yes' : 'no'}` : ''})`,
    '',
  ]);
  if (R.browser) {
    for (const [shape, T] of ORT_CASES) {
      const rx = pair(R.browser.cases, shape, T, true).v !== undefined,
        p = pair(R.browser.cases, shape, T, rx);
      rows.push([
        `Chromium, ${shape} T=${T}: swapformer / ORT`,
        p.v === undefined ? '-' : `${H.fmt.x(p.v)}${rx ? ' (relaxed)' : ' (SIMD build)'}`,
        rateCause(p.c, p.s, p.o, R.browser.peaks, rx),
      ]);
    }
  }
  const cold = (env, shape, c) => {
    const cr = H.median(c.ort.map((p) => p.coldMs)) / H.median(c.swapformer.map((p) => p.coldMs));
    rows.push([
      `Cold start, ${env}, ${shape === 'tiny' ? 'tiny model (the runtimes alone)' : shape}: ORT's time / swapformer's`,
      Number.isFinite(cr) ? H.fmt.x(cr) : '-',
      coldCause(c),
    ]);
  };
  for (const [shape, c] of Object.entries(R.cold ?? {})) cold('Node', shape, c);
  for (const [shape, c] of Object.entries(R.browser?.cold ?? {})) cold('Chromium', shape, c);
  return rows;
}

// ------------------------------------------------------------------ threads x dtypes

/** A swapformer result of a threads x dtype case: the build, dtype and thread count asked (default: the case's). */
const swapResult = (c, relaxed, dtype, threads = c.threads) =>
  c.results?.find((r) => !r.ort && r.relaxed === relaxed && r.dtype === dtype && r.threads === threads);

/** The build a summary row leads with: Node the SIMD build (Node 20 needs a flag for relaxed SIMD), Chromium the relaxed one (its default). */
const judged = (env, R) => (env === 'Chromium' ? !!R.browser?.relaxed : false);
const buildName = (relaxed) => (relaxed ? 'relaxed build' : 'SIMD build');

/** The threads x dtype cases of each environment that ran: [[env, cases]]. */
const matrixEnvs = (R) =>
  [
    ['Node', R.matrix?.node],
    ['Chromium', R.browser?.matrix],
  ].filter(([, c]) => c?.length);

/** How a result checked out: rel. diff (f32), row cosine vs f32 (q8), same bits as at the case's thread count. */
function checkCell(r) {
  const parts = [];
  if (r.agree) parts.push(`min row cos ${r.agree.minCos.toFixed(5)} vs ${r.diffRef}`);
  else if (r.diff !== undefined) parts.push(`rel ${H.fmt.e(r.diff)}`);
  if (r.identical !== undefined) parts.push(r.identical ? 'same bits' : 'DIFFERENT bits');
  return parts.join('; ') || '-';
}

/** Rows of the threads x dtype table of one environment (the runners at each case's own thread count). */
export function matrixRows(cases) {
  const rows = [];
  for (const c of cases) {
    const head = `T=${c.T}, ${plural(c.threads)}${c.machine?.foreign !== undefined ? ` (others ${H.fmt.pct(c.machine.foreign)})` : ''}`;
    if (c.error) {
      rows.push([head, '-', c.error, '', '', '', '']);
      continue;
    }
    for (const r of c.results.filter((x) => x.threads === c.threads)) {
      const ort = H.ortBest(c, r.dtype),
        g = c.flops / r.median / 1e6;
      rows.push([head, r.label, r.dtype, H.fmt.ms(r.median), H.fmt.g(g), ort ? H.fmt.x(ort.median / r.median) : '-', checkCell(r), String(r.times.length)]);
    }
  }
  return rows;
}
export const MATRIX_HEAD = ['case', 'runtime', 'dtype', 'median ms', 'GFLOP/s (f32-equivalent)', 'vs ORT (same dtype and threads)', 'check', 'runs'];

/**
 * Thread scaling of one environment: swapformer's runners at fewer threads, timed in the same
 * rounds as their siblings at the case's count; ORT's fastest graph per dtype from the
 * cases of each thread count (separate processes / pages, so less exact).
 */
export function scalingRows(cases) {
  const rows = [];
  for (const c of cases.filter((x) => !x.error)) {
    for (const r of c.results.filter((x) => x.same !== undefined)) {
      const s = c.results.find((x) => x.label === r.same);
      rows.push([
        `T=${c.T}`,
        s.label,
        s.dtype,
        `${H.fmt.ms(r.median)} (${plural(r.threads)})`,
        `${H.fmt.ms(s.median)} (${plural(s.threads)})`,
        H.fmt.x(r.median / s.median),
        r.identical ? 'yes' : 'NO',
      ]);
    }
    const one = cases.find((x) => x.T === c.T && x.threads === 1 && !x.error);
    if (c.threads === 1 || !one) continue;
    for (const dtype of ['f32', 'q8']) {
      const a = H.ortBest(one, dtype),
        b = H.ortBest(c, dtype);
      if (a && b)
        rows.push([
          `T=${c.T}`,
          `${b.label} (separate runs)`,
          dtype,
          `${H.fmt.ms(a.median)} (1 thread)`,
          `${H.fmt.ms(b.median)} (${plural(c.threads)})`,
          H.fmt.x(a.median / b.median),
          '-',
        ]);
    }
  }
  return rows;
}
export const SUMMARY_HEAD = ['figure', 'measured', 'what limits it'];
export const SCALING_HEAD = ['case', 'runtime', 'dtype', 'fewer threads, ms', 'more threads, ms', 'speed-up', 'same bits'];

/** The cost of int8 (accuracyRuns) as table rows. */
const accuracyRows = (R) =>
  (R.accuracy ?? []).map((a) => [
    a.shape,
    a.label,
    `${a.sequences} (${a.lengths.join(', ')} tokens)`,
    a.minCos.toFixed(5),
    a.meanCos.toFixed(5),
    a.minPooled.toFixed(6),
    H.fmt.e(a.rel),
  ]);
const ACCURACY_HEAD = ['model', 'q8 against f32', 'sequences', 'row cosine, min', 'row cosine, mean', 'pooled cosine, min', 'max |q8 - f32| / max |f32|'];

/** The heaviest functions of a Chromium CPU profile, as text. */
const heaviest = (p, n) =>
  p.functions
    .slice(0, n)
    .map((f) => `${f.name} ${H.fmt.pct(f.selfMs / p.ms)}`)
    .join(', ');

/** What disagrees: {f32: f32 outputs beyond 1e-3 of the reference, q8: rows below 0.99 cosine vs f32, bits: thread counts that change bits}. */
export function failures(R) {
  const all = [...(R.node ?? []), ...(R.browser?.cases ?? []), ...(R.matrix?.node ?? []), ...(R.browser?.matrix ?? [])];
  const out = { f32: new Set(), q8: new Set(), bits: new Set() };
  for (const c of all) {
    for (const r of c.results ?? []) {
      const where = `${c.shape} T=${c.T} ${r.label}${c.threads > 1 ? ` (${c.threads}-thread run)` : ''}`;
      if (r.dtype !== 'q8' && r.diff !== undefined && !(r.diff <= 1e-3)) out.f32.add(`${where}: rel. diff ${H.fmt.e(r.diff)}`);
      if (r.dtype === 'q8' && r.agree && !(r.agree.minCos >= 0.99)) out.q8.add(`${where}: row cosine ${r.agree.minCos.toFixed(4)} vs f32`);
      if (r.identical === false) out.bits.add(`${where}: not the same bits as ${r.same}`);
    }
  }
  for (const a of R.accuracy ?? []) if (!(a.minCos >= 0.99)) out.q8.add(`${a.shape} ${a.label}: row cosine ${a.minCos.toFixed(4)}`);
  for (const f of e2eFailures(R)) out.f32.add(f);
  return Object.fromEntries(Object.entries(out).map(([k, v]) => [k, [...v]]));
}

// Why two threads fall short of twice one (docs/performance.md, Threads): a fixed cost per parallel region and a shared 2-core host.
const THREAD_CAUSE = 'a wake-up and a wait per parallel region (9 per 64-row chunk of a layer); two virtual cores that feel every interruption of the host';
const Q8_THREAD_CAUSE = `${THREAD_CAUSE}; a q8 product does about half an f32 one's work, so that fixed cost weighs twice`;

/** Chromium's CPU profile of the relaxed build (MiniLM-L6 T=512, one thread), where it applies: "; where the time goes: ...". */
function profiled(R, env, c, dtype) {
  const prof = env === 'Chromium' && c.T === 512 && c.threads === 1 && R.browser?.profiles?.find((p) => p.dtype === dtype && !p.error);
  return prof ? `; where the time goes (CPU profile): ${heaviest(prof, 4)}` : '';
}

/** Threads, int8 and memory in figures: speed against ORT per thread count and dtype, thread scaling, load memory, sizes, agreement: [figure, measured, what limits it]. */
export function threadsSummary(R) {
  const rows = [];
  for (const [env, cases] of matrixEnvs(R)) {
    const rx = judged(env, R),
      peaks = env === 'Chromium' ? R.browser?.peaks : R.peaks.node;
    for (const c of cases) {
      const what = `${env}, MiniLM-L6 T=${c.T}, ${plural(c.threads)}`;
      for (const dtype of ['f32', 'q8']) {
        const o = !c.error && H.ortBest(c, dtype),
          s = !c.error && swapResult(c, rx, dtype),
          other = !c.error && swapResult(c, !rx, dtype);
        const v = o && s ? o.median / s.median : undefined;
        rows.push([
          `${what}, ${dtype}: swapformer / ORT ${dtype}`,
          c.error ??
            (v === undefined
              ? '-'
              : `${H.fmt.x(v)} (${buildName(rx)} ${H.fmt.ms(s.median)} ms, ${o.label} ${H.fmt.ms(o.median)} ms)` +
                (other ? `; the ${buildName(!rx)}: ${H.fmt.x(o.median / other.median)}` : '')),
          dtype === 'f32' && !c.error ? rateCause(c, s, o, peaks, rx, c.threads) + profiled(R, env, c, dtype) : '',
        ]);
      }
    }
    const two = cases.filter((c) => c.threads === 2 && !c.error);
    for (const c of two) {
      for (const dtype of ['f32', 'q8']) {
        const speed = (relaxed) => {
          const s = swapResult(c, relaxed, dtype),
            one = swapResult(c, relaxed, dtype, 1);
          return s && one ? one.median / s.median : undefined;
        };
        const v = speed(rx),
          w = speed(!rx);
        rows.push([
          `${env}, MiniLM-L6 T=${c.T}, ${dtype}: 2-thread speed-up`,
          v === undefined ? '-' : `${H.fmt.x(v)} (${buildName(rx)})` + (w === undefined ? '' : `; the ${buildName(!rx)}: ${H.fmt.x(w)}`),
          dtype === 'q8' ? Q8_THREAD_CAUSE : THREAD_CAUSE,
        ]);
      }
    }
    if (!two.length) rows.push([`${env}: 2-thread speed-up`, `not measured (${R.machine.cores} core${R.machine.cores > 1 ? 's' : ''})`, '']);
  }
  const load = loadMemory(R);
  if (load) {
    const r = load.swapformer.memAfter / load.weights;
    rows.push([
      'Peak wasm memory, MiniLM-L6 f32 (load + forward T=128), against the weights',
      `${H.fmt.mb(load.swapformer.memAfter)} = ${r.toFixed(2)}x the ${H.fmt.mb(load.weights)} of weights` +
        (load.ort?.memAfter ? `; ORT ${H.fmt.mb(load.ort.memAfter)} = ${(load.ort.memAfter / load.weights).toFixed(2)}x` : ''),
      'the packed weights plus an activation arena sized before the pass',
    ]);
    const q8 = R.loadMemory?.find((x) => x.runtime === 'swapformer' && x.dtype === 'q8' && x.threads === 1);
    rows.push([
      'Peak wasm memory, MiniLM-L6 q8 (load + forward T=128), against the f32 weights',
      !q8 || q8.error ? (q8?.error ?? '-') : `${H.fmt.mb(q8.memAfter)} = ${(q8.memAfter / load.weights).toFixed(2)}x`,
      'int8 weights (a quarter of f32) and one float32 scale per row',
    ]);
    const grew = load.swapformer.memReload - load.swapformer.memAfter;
    rows.push(['Wasm memory growth of a second load after dispose (f32, 1 thread)', Number.isFinite(grew) ? H.fmt.mb(grew) : '-', '']);
  }
  for (const s of R.sizes.filter((x) => x.what.startsWith('swapformer wasm'))) rows.push([`${s.file}, bytes`, s.missing ? 'not built' : H.fmt.kb(s.raw), '']);
  const f = failures(R);
  rows.push(['f32 outputs against the reference (relative max diff; 1e-3 allowed)', f.f32.length ? `differ: ${f.f32.join(', ')}` : 'all cases within', '']);
  rows.push(['q8 against f32: cosine of every row (0.99 allowed)', f.q8.length ? `below: ${f.q8.join(', ')}` : 'all cases and accuracy runs above', '']);
  rows.push(['Outputs at every thread count', f.bits.length ? `differ: ${f.bits.join(', ')}` : 'the same bits (all runners timed at two thread counts)', '']);
  return rows;
}

/** The MiniLM-L6 f32 one-thread load memory probes (swapformer and ORT), or null. */
export function loadMemory(R) {
  const lm = R.loadMemory ?? [],
    pick = (rt, dtype = 'f32', t = 1) => lm.find((x) => x.runtime === rt && x.dtype === dtype && x.threads === t);
  const sw = pick('swapformer'),
    o = pick('ort');
  if (sw?.weightBytes) return { shape: 'MiniLM-L6', T: 128, swapformer: sw, ort: o, graph: o?.graph, weights: sw.weightBytes };
  const m = R.memory?.find((x) => x.shape === 'MiniLM-L6' && x.T === 128 && x.swapformer?.weightBytes); // results.json of an older run
  return m && { ...m, weights: m.swapformer.weightBytes };
}

/** The table of a model's load: wasm memory after the load, after a forward, after dispose + a second load. */
export function loadMemoryTable(load, R) {
  const w = load.weights,
    cell = (b) => (Number.isFinite(b) ? `${H.fmt.mb(b)} (${(b / w).toFixed(2)}x)` : '-');
  const row = (label, m) =>
    !m || m.error ? [label, m?.error?.slice(0, 60) ?? '-', '-', '-'] : [label, cell(m.memLoaded), cell(m.memAfter), cell(m.memReload)];
  const rows = R?.loadMemory?.length
    ? R.loadMemory.map((m) =>
        row(
          m.runtime === 'ort'
            ? `ORT ${m.graph}, ${m.threads} thread${m.threads > 1 ? 's' : ''}`
            : `swapformer ${m.dtype}, ${m.threads > 1 ? `${m.threads} threads (dist/swapformer-mt.wasm)` : '1 thread (dist/swapformer.wasm)'}`,
          m,
        ),
      )
    : [row('swapformer (SIMD build)', load.swapformer), row(`ORT [${load.graph}]`, load.ort)];
  return H.mdTable(['runtime', 'after loading', 'after a forward (T=128): the peak', 'after dispose + the same load + forward'], rows);
}

/** The fastest forward split into the Linear layers (at matmul_forward's best measured speed) and the rest. */
export function timeSplit(R) {
  const c = R.node?.find((x) => x.shape === 'MiniLM-L6' && x.T === 512 && !x.error);
  if (!c || !R.gemm) return [];
  const { layers, dModel: d, ffDim: f } = H.SHAPES['MiniLM-L6'];
  const linear = layers * 2 * 512 * (4 * d * d + 2 * d * f);
  return c.results
    .filter((r) => !r.ort)
    .flatMap((r) => {
      const g = r.relaxed ? R.gemm.relaxed : R.gemm.plain;
      if (!g) return [];
      const ms = linear / g / 1e6,
        fast = Math.min(...r.times); // best against best: both the least disturbed
      return [
        [r.label, `${fmt0(fast)} ms`, `${H.fmt.g(g)} GFLOP/s: ${fmt0(ms)} ms (${H.fmt.pct(ms / fast)})`, `${fmt0(fast - ms)} ms (${H.fmt.pct(1 - ms / fast)})`],
      ];
    });
}

export function report(R) {
  const M = R.machine,
    out = [];
  const p = (s = '') => out.push(s);
  const peakRows = (env, peaks) =>
    Object.entries(peaks ?? {}).map(([k, v]) => [
      `${env}, ${k === 'plain' ? 'SIMD mul+add' : 'relaxed-SIMD fma'}`,
      `${H.fmt.g(v.reg)} (N=${v.regN})`,
      v.all?.gemm
        ? Object.entries(v.all.gemm)
            .map(([shape, g]) => (shape === v.gemmKernel ? `**${shape}: ${H.fmt.g(g)}**` : `${shape}: ${H.fmt.g(g)}`))
            .join(', ')
        : `${H.fmt.g(v.gemm)} (${v.gemmKernel})`,
      `**${H.fmt.g(H.peakOf(v))}**`,
    ]);
  p(
    `Machine: ${M.cpu}, ${M.cores} cores, ${M.memory}; ${M.os}; load average ${M.load?.toFixed(1)} at the start, ${M.loadEnd?.toFixed(1)} at the end` +
      `${M.load > 1.5 ? ' (other work was running at the start: figures are noisy)' : " (the load at the end includes the benchmark's own Chromium)"}`,
  );
  p(
    `Node ${M.node} (V8 ${M.v8}, flags ${M.nodeFlags}); onnxruntime-web ${M.ort}; ${R.browser ? `Chromium ${R.browser.version} (playwright-core ${M.playwright})` : 'Chromium not run'}; swapformer ${M.git}; ${M.date}${R.quick ? '; QUICK RUN (few runs: not for reporting)' : ''}`,
  );
  p(
    `Binaries: ${Object.entries(M.dist)
      .map(([k, v]) => `${DIST_NAME[k] ?? k} sha256 ${v}`)
      .join('; ')}`,
  );
  p();
  const e2e = e2eSection(R);
  if (e2e.length) {
    for (const l of e2e) p(l);
    p();
  }
  p('### Peak (bench/peak.c, GFLOP/s, one core)');
  p();
  p(
    H.mdTable(
      ['', 'register-only, N accumulators', 'L1 gemm micro-kernels (rows x cols: GFLOP/s)', 'peak (the better)'],
      [...peakRows('Node', R.peaks.node), ...peakRows('Chromium', R.browser?.peaks)],
    ),
  );
  p();
  const kernels = [...Object.values(R.peaks.node ?? {}), ...Object.values(R.browser?.peaks ?? {})].filter((v) => v.all?.gemm);
  if (kernels.length && kernels.every((v) => v.gemmKernel === '4x8')) {
    p(
      'The larger register tiles (6 x 8 and 4 x 12, 12 accumulators each) are slower than 4 x 8 in every row. V8 leaves wasm 15 of the ' +
        "16 xmm registers on x64 (xmm15 is its scratch) and loads all of a step's A splats and B vectors before the products, so its code " +
        'for them (`node --print-wasm-code`) moves accumulators to and from the stack inside the inner loop, in both builds; the 4 x 8 loop ' +
        'stays in registers. 4 x 8 is the tile swapformer uses.',
    );
    p();
  }
  for (const [env, cases] of matrixEnvs(R)) {
    p(
      `### ${env}${env === 'Chromium' ? ' (headless)' : ''}: threads x dtypes (MiniLM-L6; ${env === 'Node' ? 'a fresh process' : 'a fresh page'} per thread count)`,
    );
    p();
    p(H.mdTable(MATRIX_HEAD, matrixRows(cases)));
    p();
    const sc = scalingRows(cases);
    if (sc.length) {
      p(`### ${env}: thread scaling`);
      p();
      p(H.mdTable(SCALING_HEAD, sc));
      p();
    }
  }
  if (R.accuracy?.length) {
    p('### int8 accuracy (Node, one thread; q8 against f32 on the same ids, hidden states per token and mean-pooled)');
    p();
    p(H.mdTable(ACCURACY_HEAD, accuracyRows(R)));
    p();
  }
  for (const prof of R.browser?.profiles ?? []) {
    p(`### Where the time goes in Chromium: ${prof.label}, MiniLM-L6 T=${prof.T}, 1 thread (CPU profile)`);
    p();
    if (prof.error) {
      p(`The profile failed: ${prof.error}`);
      p();
      continue;
    }
    p(
      `Chromium's sampling profiler (CDP, every ${prof.interval} us) over ${prof.runs} forwards (${prof.wallMs.map(fmt0).join(', ')} ms) of a build with its ` +
        `name section kept (bench/.cache/swapformer-relaxed-named.wasm: ${prof.sameCode ? "its code section is byte for byte dist/swapformer-relaxed.wasm's" : "its code section DIFFERS from dist/swapformer-relaxed.wasm's: read with care"}); ` +
        `self time of each function, ${prof.samples} samples.`,
    );
    p();
    p(
      H.mdTable(
        ['function', 'self ms per forward', 'share'],
        prof.functions.slice(0, 12).map((f) => [f.name, H.fmt.ms(f.selfMs / prof.runs), H.fmt.pct(f.selfMs / prof.ms)]),
      ),
    );
    p();
  }
  const split = timeSplit(R);
  if (split.length) {
    p('### Where the time goes (Node, MiniLM-L6 T=512)');
    p();
    p(
      "The fastest of the timed forwards, and in it the Linear layers' time: their FLOPs at the best GFLOP/s `matmul_forward` reaches alone on the same shapes (bench/gemm.c, measured in this run); " +
        'the rest of the forward is attention (the q.k and p.v products with 32-wide heads, softmax), the norms, GELU, bias adds and copies.',
    );
    p();
    p(H.mdTable(['build', 'forward (fastest run)', 'Linear layers: GFLOP/s alone, ms', 'the rest, ms'], split));
    p();
  }
  const cmp = (title, cases) => {
    p(`### ${title}`);
    p();
    p(H.mdTable(H.COMPARISON_HEAD, H.comparisonRows(cases, title.startsWith('Node') ? R.peaks.node : R.browser.peaks)));
    p();
  };
  p(
    `FLOPs: ${H.FLOP_FORMULA}. "vs ORT": ORT's median / this median (ORT: the faster of the graphs measured). ` +
      '"% of peak": GFLOP/s of the whole forward / the peak of the same build (SIMD or relaxed; ORT: SIMD) in the same environment. ' +
      '"rel. diff": max |out - ref| / max |ref| against the first runtime of the case (an ORT graph; the swapformer SIMD build when ORT is not run).',
  );
  p();
  cmp('Node, one thread', R.node ?? []);
  if (R.browser) cmp('Chromium (headless), one thread', R.browser.cases);
  if (R.long?.length) {
    p(
      "### Long sequences (swapformer SIMD build, MiniLM-L6 modern shape, Node; one forward in a fresh process after 5 warm-up forwards of 16 tokens, the heap's free space filled first)",
    );
    p();
    p(
      H.mdTable(
        ['case', 'one forward', 'wasm memory before -> after', 'activation memory (growth)'],
        R.long.map((l) => [
          `${l.shape.includes('ALiBi') ? 'ALiBi' : 'RoPE'} T=${l.T}`,
          l.error ?? `${(l.ms / 1000).toFixed(2)} s`,
          l.error ? '-' : `${H.fmt.mb(l.memBefore)} -> ${H.fmt.mb(l.memAfter)}`,
          l.error ? '-' : H.fmt.mb(l.memAfter - l.memBefore),
        ]),
      ),
    );
    p();
  }
  p('### Size');
  p();
  p(
    H.mdTable(
      ['file', 'raw', 'gzip -9'],
      R.sizes.map((s) => [`${s.what}`, s.missing ? 'not built' : H.fmt.kb(s.raw), s.missing ? '-' : H.fmt.kb(s.gzip)]),
    ),
  );
  p();
  if (R.memory) {
    p('### Peak wasm memory (Node, fresh process: load the model, one forward)');
    p();
    const mem = (m) =>
      !m
        ? '-'
        : m.error
          ? m.error.slice(0, 60)
          : m.memAfter === m.memLoaded
            ? H.fmt.mb(m.memAfter)
            : `${H.fmt.mb(m.memAfter)} (${H.fmt.mb(m.memLoaded)} after loading)`;
    p(
      H.mdTable(
        ['case', 'swapformer', ...(R.memory.some((m) => m.relaxed) ? ['swapformer relaxed'] : []), 'ORT'],
        R.memory.map((m) => [
          `${m.shape} T=${m.T}`,
          mem(m.swapformer),
          ...(R.memory.some((x) => x.relaxed) ? [mem(m.relaxed)] : []),
          m.ort ? `${mem(m.ort)} [${m.graph}]` : '-',
        ]),
      ),
    );
    p();
  }
  const load = loadMemory(R);
  if (load) {
    p(`### Load memory (Node, fresh process: MiniLM-L6, ${H.fmt.mb(load.weights)} of f32 weights; in parentheses, wasm memory / the weights)`);
    p();
    p(loadMemoryTable(load, R));
    p();
  }
  if (R.cold || R.browser?.cold) {
    p(
      `### Cold start (T=128; from \`import\` to the first output: import, read (Node) or fetch (Chromium, local server) the model file, compile + instantiate the wasm and load the model, first forward; median of fresh processes / browser contexts)`,
    );
    p();
    const rows = [];
    for (const [shape, c] of Object.entries(R.cold ?? {})) {
      const part = (rt, k) => fmt0(H.median(c[rt].map((x) => x[k])));
      for (const rt of ['swapformer', 'ort']) {
        rows.push([
          `Node, ${shape === 'tiny' ? 'tiny BERT (2 x 64)' : shape}`,
          rt === 'ort' ? `ORT ${c.graph}` : `swapformer${c.build ? ` [${c.build}]` : ''}`,
          `${part(rt, 'coldMs')}`,
          `${part(rt, 'importMs')} / ${part(rt, 'fetchMs')} / ${part(rt, 'loadMs')} / ${part(rt, 'firstMs')}`,
          String(c[rt].length),
        ]);
      }
    }
    for (const [shape, bc] of Object.entries(R.browser?.cold ?? {})) {
      const part = (rt, k) => fmt0(H.median(bc[rt].map((x) => x[k])));
      for (const rt of ['swapformer', 'ort']) {
        rows.push([
          `Chromium, ${shape === 'tiny' ? 'tiny BERT (2 x 64)' : shape}`,
          rt === 'ort'
            ? `ORT ${shape === 'tiny' ? 'fused' : (R.cold?.[shape]?.graph ?? 'fused')}`
            : `swapformer [default${R.browser.relaxed ? ' (relaxed)' : ''}]`,
          part(rt, 'coldMs'),
          `${part(rt, 'importMs')} / ${part(rt, 'fetchMs')} / ${part(rt, 'loadMs')} / ${part(rt, 'firstMs')}`,
          String(bc[rt].length),
        ]);
      }
    }
    p(H.mdTable(['model', 'runtime', 'import to first output, ms', 'import / read or fetch the model file / load / first forward, ms', 'runs'], rows));
    p();
  }
  if (R.sections) {
    p("### The machine while it measured (other processes: CPU time outside the benchmark's own processes, as a share of all cores)");
    p();
    const parts = Object.entries(R.sections);
    if (M.whole) parts.push(['the whole run', { ...M.whole, minutes: M.minutes }]);
    p(
      H.mdTable(
        ['part', 'minutes', 'other processes', '1-min load average'],
        parts.map(([k, x]) => [k, x.minutes.toFixed(1), x.foreign === undefined ? '?' : H.fmt.pct(x.foreign), x.load.map((l) => l.toFixed(2)).join(' -> ')]),
      ),
    );
    if (M.waited) p(`\nThe run waited for the 1-minute load average to fall below ${M.waited.below} first (${M.waited.load.toFixed(2)} when measuring began).`);
    p();
  }
  p('### In figures: threads, int8, memory');
  p();
  p(H.mdTable(SUMMARY_HEAD, threadsSummary(R), ['l', 'l', 'l']));
  p();
  p('### In figures: one thread, f32');
  p();
  p(H.mdTable(SUMMARY_HEAD, oneThreadSummary(R), ['l', 'l', 'l']));
  return out.join('\n');
}
