// The seed experiments, one function each. Pure computation over the
// swapformer API (no DOM), so they run the same in the page and in Node:
//
//   const result = await permutation({api, base, ...});
//   result = {pass: boolean, summary: string, ...live numbers for the card}
//
// `api` is the module bindings/index.js ({createEncoder, SwapformerError});
// `base` is the current model's config without its position fields, plus its
// seed; experiments build their own small encoders from it (weights from the
// seed) and dispose them.
import { createTokenizer } from './tokenizer.js';
import { random, sampleInputs, score } from '../models/tasks.js';

/** Builds an encoder, runs fn(encoder) and always disposes it. */
async function withEncoder(api, config, options, fn) {
  const enc = await api.createEncoder(config, options);
  try {
    return await fn(enc);
  } finally {
    enc.dispose();
  }
}

/** The options object a position plugin accepts (others refuse any). */
export function positionOptionsFor(position, options = {}) {
  if (position === 'sinusoidal') return options.base !== undefined ? { base: options.base } : {};
  if (position === 'rope') {
    const o = {};
    if (options.base !== undefined) o.base = options.base;
    if (options.style !== undefined) o.style = options.style;
    return o;
  }
  return {};
}

/** A deterministic generator of N(0, 1) numbers (mulberry32 + Box-Muller). */
export function gaussian(seed) {
  const uniform = random((seed >>> 0) ^ 0x9e3779b9);
  return () => Math.sqrt(-2 * Math.log(1 - uniform())) * Math.cos(2 * Math.PI * uniform());
}

const rowOf = (out, t) => {
  const C = out.shape[2];
  return out.data.subarray(t * C, (t + 1) * C);
};

/** For each position t of `to`, an unused position of `from` holding the same id. */
export function matchPermutation(from, to) {
  if (from.length !== to.length) return null;
  const used = new Array(from.length).fill(false);
  const perm = [];
  for (const id of to) {
    const s = from.findIndex((f, i) => !used[i] && f === id);
    if (s < 0) return null;
    used[s] = true;
    perm.push(s);
  }
  return perm;
}

/** max |a[perm[t]] - b[t]| over rows, and whether they are identical bit for bit. */
function permutedDiff(a, b, perm) {
  let max = 0,
    bitIdentical = true;
  perm.forEach((s, t) => {
    const ra = rowOf(a, s),
      rb = rowOf(b, t);
    const ua = new Uint32Array(ra.buffer, ra.byteOffset, ra.length),
      ub = new Uint32Array(rb.buffer, rb.byteOffset, rb.length);
    for (let i = 0; i < ra.length; i++) {
      if (ua[i] !== ub[i]) bitIdentical = false;
      max = Math.max(max, Math.abs(ra[i] - rb[i]));
    }
  });
  return { max, bitIdentical };
}

// ------------------------------------------------------------------ 1

export const SENTENCES = { a: 'dog bites man', b: 'man bites dog', rotated: 'bites man dog' };

/**
 * 1. Permutation equivariance. With position 'none', "man bites dog" gives
 * the rows of "dog bites man" permuted, bit for bit; every position plugin
 * makes them differ. Symmetric ALiBi sees only |i - j|, so for this reversed
 * sentence it gives the mirror image (equal up to rounding); a rotation
 * ("bites man dog") shows that it does see order.
 */
export async function permutation({ api, base, positions }) {
  const words = createTokenizer('words');
  const [a, b, r] = [SENTENCES.a, SENTENCES.b, SENTENCES.rotated].map((s) => words.encode(s).map((t) => t.id));
  const permB = matchPermutation(a, b),
    permR = matchPermutation(a, r);
  const rows = [];
  for (const position of positions) {
    const config = { ...base.config, vocabSize: words.vocabSize, position, positionOptions: positionOptionsFor(position, base.positionOptions?.[position]) };
    const row = await withEncoder(api, config, { seed: base.seed }, (enc) => {
      const [oa, ob, or] = [enc.forward(a), enc.forward(b), enc.forward(r)];
      const swap = permutedDiff(oa, ob, permB),
        rot = permutedDiff(oa, or, permR);
      return { position, swap: swap.max, swapBitIdentical: swap.bitIdentical, rotation: rot.max, rotationBitIdentical: rot.bitIdentical };
    });
    if (position === 'none') {
      row.expect = 'identical rows, permuted, bit for bit';
      row.pass = row.swapBitIdentical && row.rotationBitIdentical;
    } else if (position === 'alibi') {
      row.expect = 'mirror image for a reversed sentence; differs for a rotation';
      row.pass = row.swap < 1e-4 && row.rotation > 1e-3;
    } else {
      row.expect = 'differs';
      row.pass = row.swap > 1e-3 && row.rotation > 1e-3;
    }
    rows.push(row);
  }
  const none = rows.find((x) => x.position === 'none');
  const others = rows.filter((x) => x.position !== 'none' && x.position !== 'alibi');
  const alibi = rows.find((x) => x.position === 'alibi');
  const parts = [];
  if (none) parts.push(`'none': max |Δ| = ${none.swap} (${none.swapBitIdentical ? 'bit for bit' : 'NOT bit for bit'})`);
  if (others.length) parts.push(others.map((x) => `${x.position} ${fmt(x.swap)}`).join(', '));
  if (alibi) parts.push(`alibi ${fmt(alibi.swap)} (mirror), rotated ${fmt(alibi.rotation)}`);
  return { pass: rows.length > 0 && rows.every((x) => x.pass), summary: parts.join('; '), sentences: SENTENCES, ids: { a, b, rotated: r }, rows };
}

// ------------------------------------------------------------------ 2

/**
 * 2. Sinusoidal: PE_t . PE_(t+k) = sum_i cos(k / base^(2i/d)) depends on k
 * only. Measured over t for several k from the plugin's own table, plus the
 * seed's d = 4 worked example (PE1.PE2 = PE2.PE3 = 1.54025).
 */
export async function sinusoidal({ api, base, ks = [1, 2, 4, 8, 16], tMax = 48 }) {
  const d = base.config.dModel,
    b = base.positionOptions?.sinusoidal?.base ?? 10000;
  const config = { ...base.config, layers: 0, position: 'sinusoidal', positionOptions: { base: b } };
  const T = tMax + Math.max(...ks);
  const pe = await withEncoder(api, config, { seed: base.seed }, (enc) => enc.positionVectors(T));
  const dot = (s, t) => {
    let sum = 0;
    for (let c = 0; c < d; c++) sum += pe.data[s * d + c] * pe.data[t * d + c];
    return sum;
  };
  const curves = ks.map((k) => {
    const ts = Array.from({ length: tMax }, (_, t) => t);
    const values = ts.map((t) => dot(t, t + k));
    let analytic = 0;
    for (let i = 0; i < d / 2; i++) analytic += Math.cos(k / b ** ((2 * i) / d));
    const spread = Math.max(...values) - Math.min(...values);
    const vsFormula = Math.max(...values.map((v) => Math.abs(v - analytic)));
    return { k, t: ts, values, analytic, spread, vsFormula };
  });
  const small = await withEncoder(api, { ...config, dModel: 4, heads: 1, ffDim: 4 }, { seed: base.seed }, (enc) => enc.positionVectors(4));
  const sdot = (s, t) => [0, 1, 2, 3].reduce((acc, c) => acc + small.data[s * 4 + c] * small.data[t * 4 + c], 0);
  const worked = { pe12: sdot(1, 2), pe23: sdot(2, 3), want: Math.cos(1) + Math.cos(0.01) };
  const tol = 1e-4 * d;
  const pass = curves.every((c) => c.spread < tol && c.vsFormula < tol) && worked.pe12.toFixed(5) === '1.54025' && worked.pe23.toFixed(5) === '1.54025';
  return {
    pass,
    summary: `d = ${d}: ${curves.map((c) => `k=${c.k}: ${c.analytic.toFixed(3)}`).join(', ')}; spread over t ≤ ${fmt(Math.max(...curves.map((c) => c.spread)))}; d = 4: PE1·PE2 = ${worked.pe12.toFixed(5)}, PE2·PE3 = ${worked.pe23.toFixed(5)}`,
    dModel: d,
    base: b,
    curves,
    worked,
    tolerance: tol,
  };
}

// ------------------------------------------------------------------ 3

/**
 * 3. The learned table has maxLen rows: a sequence of maxLen tokens runs, one
 * of maxLen + 1 is refused with SEQUENCE_TOO_LONG (no wrap, no clamp), while
 * sinusoidal, RoPE and ALiBi carry on far past maxLen.
 */
export async function learnedLimit({ api, base, ids, maxLen = 16, longLength = 64 }) {
  const seq = (n) => Array.from({ length: n }, (_, t) => (ids.length ? ids[t % ids.length] : 1));
  const config = { ...base.config, maxLen, position: 'learned', positionOptions: {} };
  const learned = await withEncoder(api, config, { seed: base.seed }, (enc) => {
    const out = { maxSequenceLength: enc.maxSequenceLength };
    out.atMaxLen = enc.forward(seq(maxLen)).shape;
    try {
      enc.forward(seq(maxLen + 1));
      out.error = null;
    } catch (e) {
      if (!(e instanceof api.SwapformerError)) throw e;
      out.error = { code: e.code, message: e.message };
    }
    out.stillUsable = enc.forward(seq(3)).shape;
    return out;
  });
  const others = [];
  for (const position of ['sinusoidal', 'rope', 'alibi']) {
    const c = { ...base.config, maxLen, position, positionOptions: positionOptionsFor(position, base.positionOptions?.[position]) };
    others.push(
      await withEncoder(api, c, { seed: base.seed }, (enc) => {
        try {
          return { position, shape: enc.forward(seq(longLength)).shape, maxSequenceLength: enc.maxSequenceLength };
        } catch (e) {
          if (!(e instanceof api.SwapformerError)) throw e;
          return { position, error: { code: e.code, message: e.message } };
        }
      }),
    );
  }
  const pass = learned.error?.code === 'SEQUENCE_TOO_LONG' && learned.atMaxLen[1] === maxLen && others.every((o) => o.shape && o.shape[1] === longLength);
  return {
    pass,
    summary: `learned, maxLen ${maxLen}: ${maxLen} tokens run; ${maxLen + 1} tokens → ${learned.error ? `${learned.error.code}: ${learned.error.message}` : 'no error (!)'}; ${others.map((o) => `${o.position} ${o.shape ? `runs ${o.shape[1]} tokens` : o.error.code}`).join(', ')}`,
    maxLen,
    longLength,
    learned,
    others,
  };
}

// ------------------------------------------------------------------ 4

/**
 * 4. RoPE: with the same q and k at every position, the score of a query at m
 * and a key at n depends only on n - m (both pair styles). q and k are fixed
 * random vectors from the seed.
 */
export async function rope({ api, base, length = 24, queries = [0, 6, 12, 18] }) {
  const { dModel: d, heads: H } = base.config;
  const rnd = gaussian(base.seed + 1);
  const q = Array.from({ length: d }, rnd),
    k = Array.from({ length: d }, rnd);
  const opts = base.positionOptions?.rope ?? {};
  const styles = [];
  for (const style of ['interleaved', 'half']) {
    const config = { ...base.config, layers: 0, position: 'rope', positionOptions: { ...positionOptionsFor('rope', opts), style } };
    const S = await withEncoder(api, config, { seed: base.seed }, (enc) => enc.positionScores({ q, k, length }));
    const at = (h, m, n) => S.data[(h * length + m) * length + n];
    let spread = 0,
      scale = 0,
      range = 0;
    for (let h = 0; h < H; h++) {
      const byOffset = new Map();
      for (let m = 0; m < length; m++)
        for (let n = 0; n < length; n++) {
          const v = at(h, m, n);
          scale = Math.max(scale, Math.abs(v));
          const o = byOffset.get(n - m) ?? { lo: v, hi: v };
          o.lo = Math.min(o.lo, v);
          o.hi = Math.max(o.hi, v);
          byOffset.set(n - m, o);
        }
      for (const o of byOffset.values()) spread = Math.max(spread, o.hi - o.lo);
      const diag = [...byOffset.values()].map((o) => o.lo);
      range = Math.max(range, Math.max(...diag) - Math.min(...diag));
    }
    const curves = queries
      .filter((m) => m < length)
      .map((m) => ({
        m,
        offsets: Array.from({ length }, (_, n) => n - m),
        scores: Array.from({ length }, (_, n) => at(0, m, n)),
      }));
    styles.push({ style, spread, scale, range, pairs: { s37: at(0, 3, 7), s1014: at(0, 10, 14) }, curves });
  }
  const pass = styles.every((s) => s.spread <= 1e-5 * Math.max(1, s.scale) && s.range > 1e-3);
  const main = styles.find((s) => s.style === (opts.style ?? 'interleaved')) ?? styles[0];
  return {
    pass,
    summary: `head 0: score(3, 7) = ${main.pairs.s37.toFixed(5)}, score(10, 14) = ${main.pairs.s1014.toFixed(5)}; largest spread at one offset: ${styles.map((s) => `${s.style} ${fmt(s.spread)}`).join(', ')} (scores span ${main.range.toFixed(3)})`,
    length,
    heads: H,
    dModel: d,
    styles,
    mainStyle: main.style,
  };
}

// ------------------------------------------------------------------ 5

/** ALiBi's slopes (Press et al.): 2^(-8i/n) for n a power of two; otherwise
 * those of the nearest lower power of two, then every other slope of twice it. */
export function alibiSlopes(n) {
  const pow2 = (m) => Array.from({ length: m }, (_, i) => 2 ** ((-8 * (i + 1)) / m));
  const p = 2 ** Math.floor(Math.log2(n));
  if (p === n) return pow2(n);
  return [
    ...pow2(p),
    ...pow2(2 * p)
      .filter((_, i) => i % 2 === 0)
      .slice(0, n - p),
  ];
}

/**
 * 5. ALiBi: the bias matrix is -slope_h * |i - j| with the paper's slopes,
 * for 8 heads, 12 heads (not a power of two) and the current head count.
 */
export async function alibi({ api, base, length = 10, headCounts }) {
  const counts = headCounts ?? [...new Set([8, 12, base.config.heads])];
  const models = [];
  for (const heads of counts) {
    const config = { ...base.config, heads, dModel: heads * 2, ffDim: 4, layers: 0, position: 'alibi', positionOptions: {} };
    const S = await withEncoder(api, config, { seed: base.seed }, (enc) => enc.positionScores({ length }));
    const want = alibiSlopes(heads);
    const slopes = Array.from({ length: heads }, (_, h) => -S.data[h * length * length + 1]);
    let maxError = 0;
    for (let h = 0; h < heads; h++) {
      for (let i = 0; i < length; i++)
        for (let j = 0; j < length; j++) {
          maxError = Math.max(maxError, Math.abs(S.data[(h * length + i) * length + j] + want[h] * Math.abs(i - j)));
        }
    }
    const bias = Array.from({ length: heads }, (_, hd) => Array.from(S.data.subarray(hd * length * length, (hd + 1) * length * length)));
    models.push({ heads, slopes, want, maxError, bias });
  }
  const pass = models.every((m) => m.maxError < 1e-5);
  return {
    pass,
    summary:
      models.map((m) => `${m.heads} heads: ${m.slopes.map(slopeLabel).join(', ')}`).join('; ') +
      `; max |bias − (−slope·|i−j|)| = ${fmt(Math.max(...models.map((m) => m.maxError)))}`,
    length,
    models,
  };
}

/** 1/2, 1/256, 2^-0.5 ... */
export function slopeLabel(s) {
  const e = -Math.log2(s);
  if (Math.abs(e - Math.round(e)) < 1e-6) return `1/${2 ** Math.round(e)}`;
  return `2^-${Number(e.toFixed(3))}`;
}

// ------------------------------------------------------------------ 6

/**
 * 6. Depth: the residual-stream norm (mean over tokens of |x_t|) after the
 * embeddings and after each layer, for pre-norm with and without its final
 * norm and for post-norm. Pre-norm's stream is never normalised, so it grows;
 * the final norm brings the output back to sqrt(dModel); without it (the
 * "missing final LayerNorm" bug) the output keeps the grown scale. Post-norm
 * ends every layer on a norm.
 */
export async function depth({ api, base, ids, layers = 12 }) {
  const d = base.config.dModel;
  const seq = ids.length ? ids.slice(0, 64) : [1, 2, 3];
  const norms = (t) => {
    const [, T, C] = t.shape;
    let sum = 0;
    for (let i = 0; i < T; i++) {
      let s = 0;
      for (let c = 0; c < C; c++) s += t.data[i * C + c] ** 2;
      sum += Math.sqrt(s);
    }
    return sum / T;
  };
  const variants = [
    { id: 'pre', label: 'pre-norm + final norm', normPlacement: 'pre', finalNorm: true },
    { id: 'pre-nofinal', label: 'pre-norm, no final norm', normPlacement: 'pre', finalNorm: false },
    { id: 'post', label: 'post-norm', normPlacement: 'post', finalNorm: false },
  ];
  const position = base.position === 'learned' && seq.length > (base.config.maxLen ?? 512) ? 'sinusoidal' : base.position;
  for (const v of variants) {
    const config = {
      ...base.config,
      layers,
      position,
      positionOptions: positionOptionsFor(position, base.positionOptions?.[position]),
      normPlacement: v.normPlacement,
      finalNorm: v.finalNorm,
    };
    await withEncoder(api, config, { seed: base.seed }, (enc) => {
      const r = enc.forward(seq, { outputHiddenStates: true });
      v.stream = r.hiddenStates.map(norms);
      v.output = norms(r);
      const last = r.hiddenStates[layers].data;
      v.outputIsLastStream = r.data.length === last.length && r.data.every((x, i) => Object.is(x, last[i]));
    });
  }
  const [pre, noFinal, post] = variants;
  const sqrtD = Math.sqrt(d);
  const near = (x) => Math.abs(x - sqrtD) <= 2e-3 * sqrtD;
  const checks = {
    preGrows: pre.stream[layers] > pre.stream[0],
    finalNormRestores: near(pre.output),
    noFinalKeepsGrowth: noFinal.outputIsLastStream && noFinal.output > 1.05 * sqrtD,
    postNormalisedEveryLayer: post.stream.slice(1).every(near) && near(post.output),
  };
  return {
    pass: Object.values(checks).every(Boolean),
    summary: `${layers} layers, √d = ${sqrtD.toFixed(2)}: pre-norm stream ${pre.stream[0].toFixed(2)} → ${pre.stream[layers].toFixed(2)}; output with final norm ${pre.output.toFixed(2)}, without ${noFinal.output.toFixed(2)} (×${(noFinal.output / sqrtD).toFixed(2)} √d); post-norm every layer ${post.stream
      .slice(1)
      .map((x) => x.toFixed(2))
      .filter((x, i, a) => a.indexOf(x) === i)
      .join('/')}`,
    layers,
    dModel: d,
    sqrtD,
    position,
    variants,
    checks,
  };
}

// ------------------------------------------------------------------ 7

/** Mean over the tokens of ‖x_t‖ for a [B, T, C] tensor (rows of one sequence). */
function meanRowNorm(t) {
  const [, T, C] = t.shape;
  let sum = 0;
  for (let i = 0; i < T; i++) {
    let s = 0;
    for (let c = 0; c < C; c++) s += t.data[i * C + c] ** 2;
    sum += Math.sqrt(s);
  }
  return sum / T;
}

/**
 * 7. The stream grows with depth, and two mitigations: 24 layers of the current
 * model's size, the mean ‖x_t‖ after the embeddings and after every layer
 * (forward's hiddenStates) for pre-norm with the plain seed initialisation,
 * pre-norm with attn.o and ffn.down scaled by 1/√(2L) (createEncoder's
 * init: {outputScale: 'depth'}), and DeepNorm (post-norm, x = N(αx + f(x)),
 * α = (2L)^(1/4), with DeepNet's β = (8L)^(−1/4) on v, o and the FFN).
 */
export async function streamGrowth({ api, base, ids, layers = 24, maxTokens = 32 }) {
  const seq = ids.length ? ids.slice(0, maxTokens) : [1, 2, 3];
  const position = base.position === 'learned' && seq.length > (base.config.maxLen ?? 512) ? 'sinusoidal' : base.position;
  const common = { ...base.config, layers, position, positionOptions: positionOptionsFor(position, base.positionOptions?.[position]) };
  const variants = [
    { id: 'plain', label: 'pre-norm, plain init', config: { ...common, normPlacement: 'pre', finalNorm: true } },
    { id: 'depth', label: 'pre-norm, o and down × 1/√(2L)', config: { ...common, normPlacement: 'pre', finalNorm: true }, init: { outputScale: 'depth' } },
    { id: 'deepnorm', label: 'DeepNorm (post-norm, α, β)', config: { ...common, normPlacement: 'post', finalNorm: false, residualScale: 'deepnorm' } },
  ];
  for (const v of variants) {
    await withEncoder(api, v.config, { seed: base.seed, ...(v.init ? { init: v.init } : {}) }, (enc) => {
      v.stream = enc.forward(seq, { outputHiddenStates: true }).hiddenStates.map(meanRowNorm);
    });
    v.growth = v.stream[layers] / v.stream[0];
    // the spread over the layers: largest / smallest stream after a layer
    const after = v.stream.slice(1);
    v.spread = Math.max(...after) / Math.min(...after);
  }
  const [plain, depth, deep] = variants;
  const sq = (g) => g * g - 1; // growth of ‖x‖²: what the layers add
  const checks = {
    // the lesson: the pre-norm stream's magnitude grows with depth
    plainGrows: plain.growth > 1.1 && plain.stream[layers] > plain.stream[layers >> 1] && plain.stream[layers >> 1] > plain.stream[0],
    // 1/√(2L) on the output projections: each layer adds 1/(2L) of the variance, so far less growth
    depthBounded: sq(depth.growth) < sq(plain.growth) / 10,
    // DeepNorm: normalised after every sub-layer, the same size at every depth, at most √d × the norm's gain (1)
    deepnormBounded: deep.spread < 1.01 && deep.stream.slice(1).every((x) => x <= 1.001 * Math.sqrt(base.config.dModel)),
  };
  const g = (v) => `${v.stream[0].toFixed(2)} → ${v.stream[layers].toFixed(2)} (×${v.growth.toFixed(2)})`;
  return {
    pass: Object.values(checks).every(Boolean),
    summary:
      `${layers} layers, dModel ${base.config.dModel}, mean ‖x_t‖ from the embeddings to layer ${layers}: pre-norm, plain init ${g(plain)}; ` +
      `o and down × 1/√${2 * layers} ${g(depth)}; DeepNorm post-norm ${g(deep)}, every layer within ×${deep.spread.toFixed(3)} of the others (√dModel = ${Math.sqrt(base.config.dModel).toFixed(2)})`,
    layers,
    dModel: base.config.dModel,
    position,
    tokens: seq.length,
    variants,
    checks,
    alpha: Math.sqrt(Math.sqrt(2 * layers)),
    beta: 1 / Math.sqrt(Math.sqrt(8 * layers)),
    outputScale: 1 / Math.sqrt(2 * layers),
  };
}

// ------------------------------------------------------------------ 8

function normVector(kind, x, w, b, eps) {
  const n = x.length;
  let mean = 0;
  if (kind === 'layernorm') for (const v of x) mean += v / n;
  let ss = 0;
  for (const v of x) ss += (v - mean) ** 2;
  const r = 1 / Math.sqrt(ss / n + eps);
  return Array.from(x, (v, i) => (v - mean) * r * w[i] + (b ? b[i] : 0));
}

/**
 * Layer 0's raw attention logits (q·k · attnScale per head), computed here from
 * the layer's input (hiddenStates[0]) and the encoder's weights: the attention
 * norm (pre-norm), the q and k projections, the QK-norm. For positions that only
 * add to the embeddings (no RoPE rotation, no ALiBi bias). [H][T][T].
 */
export function layerZeroLogits(enc, x0) {
  const c = enc.config,
    W = enc.getWeights(),
    [, T, C] = x0.shape;
  const H = c.heads,
    D = c.headDim ?? C / H,
    A = H * D,
    scale = c.attnScale ?? 1 / Math.sqrt(D);
  const rows = Array.from({ length: T }, (_, t) => x0.data.subarray(t * C, (t + 1) * C));
  const input =
    c.normPlacement === 'pre' && W['layers.0.norm1.weight']
      ? rows.map((x) => normVector(c.norm, x, W['layers.0.norm1.weight'], W['layers.0.norm1.bias'], c.eps))
      : rows;
  const project = (name) =>
    input.map((x) => {
      const w = W[`layers.0.attn.${name}.weight`],
        b = W[`layers.0.attn.${name}.bias`],
        y = new Array(A);
      for (let o = 0; o < A; o++) {
        let s = b ? b[o] : 0;
        for (let i = 0; i < C; i++) s += w[o * C + i] * x[i];
        y[o] = s;
      }
      if (c.qkNorm && c.qkNorm !== 'none') {
        const g = W[`layers.0.attn.${name}_norm.weight`],
          bb = W[`layers.0.attn.${name}_norm.bias`];
        for (let h = 0; h < H; h++) y.splice(h * D, D, ...normVector(c.qkNorm, y.slice(h * D, (h + 1) * D), g, bb, c.eps));
      }
      return y;
    });
  const q = project('q'),
    k = project('k');
  return Array.from({ length: H }, (_, h) =>
    Array.from({ length: T }, (_, i) =>
      Array.from({ length: T }, (_, j) => {
        let s = 0;
        for (let d = 0; d < D; d++) s += q[i][h * D + d] * k[j][h * D + d];
        return s * scale;
      }),
    ),
  );
}

/** Mean entropy (nats) of the attention rows of every layer and head (real rows of one sequence). */
function meanEntropy(attentions) {
  let sum = 0,
    rows = 0;
  for (const a of attentions) {
    const T = a.shape[3];
    for (let r = 0; r < a.data.length / T; r++) {
      let e = 0;
      for (let j = 0; j < T; j++) {
        const p = a.data[r * T + j];
        if (p > 0) e -= p * Math.log(p);
      }
      sum += e;
      rows++;
    }
  }
  return sum / rows;
}

/**
 * 8. QK-norm bounds the logits: the current model's size with position
 * 'sinusoidal' (nothing rotates or biases the scores), seed weights, then the
 * q and k projections (weights and biases) multiplied by s = 1, 4, 16, 64. The
 * largest |logit| of layer 0 (computed from its input and the weights, checked
 * against the model's own attention probabilities) grows as s² without a
 * QK-norm; with one (the model's norm, per head) it stays within
 * max|g_q| · max|g_k| · √headDim (seed gains 1, no bias), and the attention
 * entropy does not collapse.
 */
export async function qkNormLogits({ api, base, ids, scales = [1, 4, 16, 64], maxTokens = 32 }) {
  const seq = ids.length > 1 ? ids.slice(0, maxTokens) : [1, 2, 3, 4];
  const qkNorm = ['layernorm', 'rmsnorm'].includes(base.config.norm) ? base.config.norm : 'layernorm';
  const config0 = {
    ...base.config,
    layers: Math.max(1, base.config.layers),
    position: 'sinusoidal',
    positionOptions: positionOptionsFor('sinusoidal', base.positionOptions?.sinusoidal),
  };
  const T = seq.length,
    D = config0.headDim ?? config0.dModel / config0.heads;
  const runs = [];
  for (const norm of ['none', qkNorm]) {
    const config = { ...config0, qkNorm: norm };
    const seeded = await withEncoder(api, config, { seed: base.seed }, (enc) => enc.getWeights());
    const row = { qkNorm: norm, config, maxLogit: [], entropy: [], softmaxError: [] };
    for (const s of scales) {
      const weights = {};
      for (const [name, w] of Object.entries(seeded)) weights[name] = /\.attn\.[qk]\.(weight|bias)$/.test(name) ? w.map((x) => x * s) : w;
      await withEncoder(api, config, { weights }, (enc) => {
        const out = enc.forward(seq, { outputAttentions: true, outputHiddenStates: true });
        const logits = layerZeroLogits(enc, out.hiddenStates[0]);
        let max = 0,
          err = 0;
        logits.forEach((rowsH, h) =>
          rowsH.forEach((r, i) => {
            const m = Math.max(...r),
              e = r.map((v) => Math.exp(v - m)),
              z = e.reduce((a, b) => a + b, 0);
            r.forEach((v, j) => {
              max = Math.max(max, Math.abs(v));
              err = Math.max(err, Math.abs(e[j] / z - out.attentions[0].data[(h * T + i) * T + j]));
            });
          }),
        );
        row.maxLogit.push(max);
        row.entropy.push(meanEntropy(out.attentions));
        row.softmaxError.push(err);
      });
    }
    if (norm !== 'none') {
      const amax = (a) => (a ? Math.max(...Array.from(a, Math.abs)) : 0),
        l2 = (a) => (a ? Math.sqrt(a.reduce((t, v) => t + v * v, 0)) : 0);
      let bound = 0;
      for (let l = 0; l < config.layers; l++) {
        const qn = amax(seeded[`layers.${l}.attn.q_norm.weight`]) * Math.sqrt(D) + l2(seeded[`layers.${l}.attn.q_norm.bias`]);
        const kn = amax(seeded[`layers.${l}.attn.k_norm.weight`]) * Math.sqrt(D) + l2(seeded[`layers.${l}.attn.k_norm.bias`]);
        bound = Math.max(bound, qn * kn * (config.attnScale ?? 1 / Math.sqrt(D)));
      }
      row.bound = bound;
    }
    runs.push(row);
  }
  const [plain, normed] = runs;
  const last = scales.length - 1;
  const checks = {
    // the logits are the model's: their softmax is its attention (layer 0)
    logitsAreTheModels: runs.every((r) => r.softmaxError.every((e) => e < 1e-3)),
    // without QK-norm the largest logit grows as s² (seed biases 0): ×s_max² / 4 at least
    unboundedWithout: plain.maxLogit[last] / plain.maxLogit[0] > (scales[last] / scales[0]) ** 2 / 4,
    // with it: within the norms' gains × √headDim, at every scale
    boundedWith: normed.maxLogit.every((m) => m <= normed.bound * (1 + 1e-4)),
    // the attention entropy collapses without it and stays with it
    entropyCollapsesWithout: plain.entropy[last] < 0.25 * plain.entropy[0],
    entropyKeptWith: Math.max(...normed.entropy) - Math.min(...normed.entropy) < 0.01 * normed.entropy[0],
  };
  const list = (a, f) => a.map(f).join(', ');
  return {
    pass: Object.values(checks).every(Boolean),
    summary:
      `q, k × ${scales.join(', ')}: largest layer-0 logit without QK-norm ${list(plain.maxLogit, (x) => fmt(x))}; with ${qkNorm} QK-norm ${list(normed.maxLogit, (x) => x.toFixed(3))} ` +
      `(bound: gains × √${D} = ${normed.bound.toFixed(3)}); mean attention entropy without ${list(plain.entropy, (x) => x.toFixed(3))}, with ${list(normed.entropy, (x) => x.toFixed(3))} nats (uniform: ln ${T} = ${Math.log(T).toFixed(3)})`,
    scales,
    headDim: D,
    tokens: T,
    qkNorm,
    runs,
    checks,
    uniformEntropy: Math.log(T),
  };
}

// ------------------------------------------------------------------ 9

const LAYER_REMOVAL_SENTENCES = ['The sun is shining.', 'A man plays the guitar on a stage.', 'I like green tea.', 'The weather is awful today.'];
const trainedCache = new Map(); // model file -> {full, without: [...], identity}

/** Accuracy over content positions of an output-head model's forward (logits' argmax). */
function accuracyOf(task, inputs, out) {
  const [, T, V] = out.logits.shape;
  let right = 0,
    total = 0;
  inputs.forEach((ids, b) => {
    const pred = Array.from({ length: ids.length }, (_, t) => {
      let best = 0;
      const at = (b * T + t) * V;
      for (let v = 1; v < V; v++) if (out.logits.data[at + v] > out.logits.data[at + best]) best = v;
      return best;
    });
    const s = score(task, ids, pred);
    right += s.right;
    total += s.total;
  });
  return right / total;
}

/** 1 − the mean cosine similarity of two [B, T, C] outputs over the real rows (lens). */
function outputChange(a, b, lens) {
  const [, T, C] = a.shape;
  let sum = 0,
    n = 0;
  lens.forEach((L, s) => {
    for (let t = 0; t < L; t++) {
      let ab = 0,
        aa = 0,
        bb = 0;
      for (let c = 0; c < C; c++) {
        const x = a.data[(s * T + t) * C + c],
          y = b.data[(s * T + t) * C + c];
        ab += x * y;
        aa += x * x;
        bb += y * y;
      }
      sum += ab / Math.sqrt(aa * bb);
      n++;
    }
  });
  return 1 - sum / n;
}

/**
 * 9. Remove one layer (forward's skipLayers: the stream passes through it). On
 * the trained models (models/*.safetensors, every task with a position plugin;
 * `trained` = {index, bytes(file)}, index = models/index.json): the accuracy on
 * 64 random inputs of 32 tokens with each single layer removed, against the
 * full model's. On the "Your model" checkpoint when one is loaded (`pretrained`
 * = {label, p}): 1 − the mean cosine between the token outputs with and without
 * each layer, on four sentences.
 */
export async function layerRemoval({ api, trained, pretrained, inputCount = 64, length = 32, seed = 14 }) {
  const index = await trained.index();
  const models = index.models.filter((m) => m.position !== 'none');
  const symbolCount = index.symbols.tokens.length;
  const inputs = sampleInputs(inputCount, length, symbolCount, seed);
  const rows = [];
  for (const m of models) {
    if (!trainedCache.has(m.file)) {
      const enc = await api.loadModel(await trained.bytes(m.file));
      try {
        const L = enc.config.layers,
          full = accuracyOf(m.task, inputs, enc.forward(inputs));
        const without = Array.from({ length: L }, (_, l) => accuracyOf(m.task, inputs, enc.forward(inputs, { skipLayers: [l] })));
        // the mechanics: a removed layer's hidden state repeats the one before it, bit for bit
        const hs = enc.forward(inputs.slice(0, 2), { outputHiddenStates: true, skipLayers: [L - 1] }).hiddenStates;
        const identity = hs[L].data.every((x, i) => Object.is(x, hs[L - 1].data[i]));
        trainedCache.set(m.file, { full, without, identity });
      } finally {
        enc.dispose();
      }
    }
    rows.push({ name: m.name, task: m.task, position: m.position, ...trainedCache.get(m.file) });
  }
  const removals = rows.flatMap((r) => r.without.map((a, l) => ({ name: r.name, layer: l, accuracy: a, full: r.full, kept: a / r.full })));
  const graceful = removals.filter((x) => x.kept >= 0.75),
    collapsed = removals.filter((x) => x.accuracy <= 0.25);
  const chance = 1 / symbolCount;
  let deep = null;
  if (pretrained?.p && !pretrained.p.encoder.disposed) {
    const p = pretrained.p,
      enc = p.encoder;
    const encoded = LAYER_REMOVAL_SENTENCES.map((t) => p.tokenizer.encode(p.recipe.doLowerCase ? t.toLowerCase() : t, { maxLength: p.maxLength }));
    const run = (skip) =>
      enc.forward(
        encoded.map((e) => e.ids),
        { typeIds: encoded.map((e) => e.typeIds), ...(skip ? { skipLayers: skip } : {}) },
      );
    const full = run(null),
      lens = encoded.map((e) => e.ids.length);
    const change = Array.from({ length: enc.config.layers }, (_, l) => outputChange(full, run([l]), lens));
    const order = change.map((c, l) => l).sort((a, b) => change[a] - change[b]);
    deep = {
      label: pretrained.label,
      family: p.family,
      layers: enc.config.layers,
      change,
      gentlest: order[0],
      hardest: order[order.length - 1],
      gentle: change.filter((c) => c <= 0.05).length,
      sentences: LAYER_REMOVAL_SENTENCES,
      tokens: lens.reduce((a, b) => a + b, 0),
    };
  }
  const checks = {
    identity: rows.every((r) => r.identity),
    // every layer of a trained 2-layer model does work: removing one never helps
    everyLayerCounts: removals.every((x) => x.accuracy < x.full),
    // not for all: some removals fall to near chance ...
    notForAll: collapsed.length > 0,
    // ... while some degrade gracefully (keep 3/4 of the accuracy)
    gracefulSomewhere: graceful.length > 0,
    pretrainedChanges: !deep || deep.change.every((c) => Number.isFinite(c) && c > 0),
  };
  const pctOf = (x) => `${Math.round(100 * x)}%`;
  const byLayer = (l) => removals.filter((x) => x.layer === l);
  const meanOf = (a) => a.reduce((s, x) => s + x.accuracy, 0) / a.length;
  const L = rows[0]?.without.length ?? 0;
  return {
    pass: Object.values(checks).every(Boolean),
    summary:
      `${rows.length} trained ${L}-layer models, ${inputCount} inputs of ${length} tokens: full accuracy ${pctOf(Math.min(...rows.map((r) => r.full)))}–${pctOf(Math.max(...rows.map((r) => r.full)))}; ` +
      Array.from({ length: L }, (_, l) => `without layer ${l} ${pctOf(meanOf(byLayer(l)))} on average`).join(', ') +
      ` (chance ${pctOf(chance)}); ` +
      `${graceful.length} of ${removals.length} removals keep ≥ 75% of the accuracy (${graceful.map((x) => `${x.name} −${x.layer}: ${pctOf(x.accuracy)}`).join(', ') || 'none'}), ${collapsed.length} fall to ≤ 25%` +
      (deep
        ? `; ${deep.label} (${deep.layers} layers): output change 1 − cos ${deep.change.map((c) => c.toFixed(3)).join(', ')} — gentlest without layer ${deep.gentlest}, hardest without layer ${deep.hardest}`
        : '; load a checkpoint in “Your model” to see a deeper one'),
    rows,
    removals,
    graceful: graceful.length,
    collapsed: collapsed.length,
    chance,
    inputs: inputCount,
    length,
    deep,
    checks,
  };
}

// ------------------------------------------------------------------ the list

/** The experiment cards, in order: id, title, one-line explanation, function. */
export const EXPERIMENTS = [
  {
    id: 'permutation',
    title: '“dog bites man” vs “man bites dog”',
    run: permutation,
    explanation:
      'Without positions attention is a bag of words: permuting the input permutes the output rows, bit for bit. Any position plugin breaks the tie.',
  },
  {
    id: 'sinusoidal',
    title: 'Sinusoidal: PE_t · PE_(t+k) depends only on k',
    run: sinusoidal,
    explanation:
      'Each sin/cos pair turns by a fixed angle per step, so the dot product of two positions is Σ cos(k / base^(2i/d)): a function of the offset k alone.',
  },
  {
    id: 'learned',
    title: 'Learned table: no row past maxLen',
    run: learnedLimit,
    explanation:
      'A learned table has maxLen rows and no formula for the next one: a longer sequence is refused, not wrapped or clamped. Formula-based schemes carry on.',
  },
  {
    id: 'rope',
    title: 'RoPE: the score depends only on n − m',
    run: rope,
    explanation: 'RoPE rotates q by mθ and k by nθ; ⟨R_m q, R_n k⟩ = ⟨q, R_(n−m) k⟩, so a query at m and a key at n score by their offset alone.',
  },
  {
    id: 'alibi',
    title: 'ALiBi: one slope per head',
    run: alibi,
    explanation:
      'ALiBi adds −slope·|i − j| to the scores; the slopes are a geometric sequence, and a head count that is not a power of two borrows every other slope of the next power.',
  },
  {
    id: 'depth',
    title: 'Depth: pre-norm, post-norm and the missing final norm',
    run: depth,
    explanation: 'Pre-norm never normalises the residual stream, so it grows with depth and needs a final norm; post-norm normalises after every sublayer.',
  },
  {
    id: 'stream',
    title: 'The stream grows with depth',
    run: streamGrowth,
    explanation:
      'Every pre-norm layer adds to x and nothing shrinks it, so ‖x‖ grows with depth. Scaling the output projections by 1/√(2L) makes each addition small; DeepNorm (post-norm with x = N(αx + f(x))) normalises it at every layer.',
  },
  {
    id: 'qknorm',
    title: 'QK-norm bounds the logits',
    run: qkNormLogits,
    explanation:
      'A logit is q·k/√d: scale q and k by s and it grows as s², until the softmax is one-hot. Normalising each head’s q and k first (QK-norm) caps |q·k| at the norms’ gains × d, whatever the weights.',
  },
  {
    id: 'layers',
    title: 'Remove one layer',
    run: layerRemoval,
    explanation:
      'Each layer only adds to the residual stream, so one can be skipped and the rest still runs (forward’s skipLayers); the lesson says a deep model often degrades gracefully. These trained models have only 2 layers, each half the network: measured, most removals are not graceful. A checkpoint loaded in “Your model” adds its own layers.',
  },
];

function fmt(x) {
  if (x === 0) return '0';
  if (Math.abs(x) < 1e-3 || Math.abs(x) >= 1e4) return x.toExponential(2);
  return x.toPrecision(3);
}
export { fmt as formatNumber };
