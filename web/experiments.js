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
import { random } from '../models/tasks.js';

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
  let max = 0, bitIdentical = true;
  perm.forEach((s, t) => {
    const ra = rowOf(a, s), rb = rowOf(b, t);
    const ua = new Uint32Array(ra.buffer, ra.byteOffset, ra.length), ub = new Uint32Array(rb.buffer, rb.byteOffset, rb.length);
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
  const permB = matchPermutation(a, b), permR = matchPermutation(a, r);
  const rows = [];
  for (const position of positions) {
    const config = { ...base.config, vocabSize: words.vocabSize, position, positionOptions: positionOptionsFor(position, base.positionOptions?.[position]) };
    const row = await withEncoder(api, config, { seed: base.seed }, (enc) => {
      const [oa, ob, or] = [enc.forward(a), enc.forward(b), enc.forward(r)];
      const swap = permutedDiff(oa, ob, permB), rot = permutedDiff(oa, or, permR);
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
  const d = base.config.dModel, b = base.positionOptions?.sinusoidal?.base ?? 10000;
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
  const pass = curves.every((c) => c.spread < tol && c.vsFormula < tol)
    && worked.pe12.toFixed(5) === '1.54025' && worked.pe23.toFixed(5) === '1.54025';
  return {
    pass,
    summary: `d = ${d}: ${curves.map((c) => `k=${c.k}: ${c.analytic.toFixed(3)}`).join(', ')}; spread over t ≤ ${fmt(Math.max(...curves.map((c) => c.spread)))}; d = 4: PE1·PE2 = ${worked.pe12.toFixed(5)}, PE2·PE3 = ${worked.pe23.toFixed(5)}`,
    dModel: d, base: b, curves, worked, tolerance: tol,
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
    others.push(await withEncoder(api, c, { seed: base.seed }, (enc) => {
      try {
        return { position, shape: enc.forward(seq(longLength)).shape, maxSequenceLength: enc.maxSequenceLength };
      } catch (e) {
        if (!(e instanceof api.SwapformerError)) throw e;
        return { position, error: { code: e.code, message: e.message } };
      }
    }));
  }
  const pass = learned.error?.code === 'SEQUENCE_TOO_LONG' && learned.atMaxLen[1] === maxLen
    && others.every((o) => o.shape && o.shape[1] === longLength);
  return {
    pass,
    summary: `learned, maxLen ${maxLen}: ${maxLen} tokens run; ${maxLen + 1} tokens → ${learned.error ? `${learned.error.code}: ${learned.error.message}` : 'no error (!)'}; ${others.map((o) => `${o.position} ${o.shape ? `runs ${o.shape[1]} tokens` : o.error.code}`).join(', ')}`,
    maxLen, longLength, learned, others,
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
  const q = Array.from({ length: d }, rnd), k = Array.from({ length: d }, rnd);
  const opts = base.positionOptions?.rope ?? {};
  const styles = [];
  for (const style of ['interleaved', 'half']) {
    const config = { ...base.config, layers: 0, position: 'rope', positionOptions: { ...positionOptionsFor('rope', opts), style } };
    const S = await withEncoder(api, config, { seed: base.seed }, (enc) => enc.positionScores({ q, k, length }));
    const at = (h, m, n) => S.data[(h * length + m) * length + n];
    let spread = 0, scale = 0, range = 0;
    for (let h = 0; h < H; h++) {
      const byOffset = new Map();
      for (let m = 0; m < length; m++) for (let n = 0; n < length; n++) {
        const v = at(h, m, n);
        scale = Math.max(scale, Math.abs(v));
        const o = byOffset.get(n - m) ?? { lo: v, hi: v };
        o.lo = Math.min(o.lo, v); o.hi = Math.max(o.hi, v);
        byOffset.set(n - m, o);
      }
      for (const o of byOffset.values()) spread = Math.max(spread, o.hi - o.lo);
      const diag = [...byOffset.values()].map((o) => o.lo);
      range = Math.max(range, Math.max(...diag) - Math.min(...diag));
    }
    const curves = queries.filter((m) => m < length).map((m) => ({
      m, offsets: Array.from({ length }, (_, n) => n - m), scores: Array.from({ length }, (_, n) => at(0, m, n)),
    }));
    styles.push({ style, spread, scale, range, pairs: { s37: at(0, 3, 7), s1014: at(0, 10, 14) }, curves });
  }
  const pass = styles.every((s) => s.spread <= 1e-5 * Math.max(1, s.scale) && s.range > 1e-3);
  const main = styles.find((s) => s.style === (opts.style ?? 'interleaved')) ?? styles[0];
  return {
    pass,
    summary: `head 0: score(3, 7) = ${main.pairs.s37.toFixed(5)}, score(10, 14) = ${main.pairs.s1014.toFixed(5)}; largest spread at one offset: ${styles.map((s) => `${s.style} ${fmt(s.spread)}`).join(', ')} (scores span ${main.range.toFixed(3)})`,
    length, heads: H, dModel: d, styles, mainStyle: main.style,
  };
}

// ------------------------------------------------------------------ 5

/** ALiBi's slopes (Press et al.): 2^(-8i/n) for n a power of two; otherwise
 * those of the nearest lower power of two, then every other slope of twice it. */
export function alibiSlopes(n) {
  const pow2 = (m) => Array.from({ length: m }, (_, i) => 2 ** ((-8 * (i + 1)) / m));
  const p = 2 ** Math.floor(Math.log2(n));
  if (p === n) return pow2(n);
  return [...pow2(p), ...pow2(2 * p).filter((_, i) => i % 2 === 0).slice(0, n - p)];
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
    const slopes = Array.from({ length: heads }, (_, h) => -S.data[(h * length) * length + 1]);
    let maxError = 0;
    for (let h = 0; h < heads; h++) {
      for (let i = 0; i < length; i++) for (let j = 0; j < length; j++) {
        maxError = Math.max(maxError, Math.abs(S.data[(h * length + i) * length + j] + want[h] * Math.abs(i - j)));
      }
    }
    const bias = Array.from({ length: heads }, (_, hd) => Array.from(S.data.subarray(hd * length * length, (hd + 1) * length * length)));
    models.push({ heads, slopes, want, maxError, bias });
  }
  const pass = models.every((m) => m.maxError < 1e-5);
  return {
    pass,
    summary: models.map((m) => `${m.heads} heads: ${m.slopes.map(slopeLabel).join(', ')}`).join('; ') + `; max |bias − (−slope·|i−j|)| = ${fmt(Math.max(...models.map((m) => m.maxError)))}`,
    length, models,
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
    const config = { ...base.config, layers, position, positionOptions: positionOptionsFor(position, base.positionOptions?.[position]), normPlacement: v.normPlacement, finalNorm: v.finalNorm };
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
    summary: `${layers} layers, √d = ${sqrtD.toFixed(2)}: pre-norm stream ${pre.stream[0].toFixed(2)} → ${pre.stream[layers].toFixed(2)}; output with final norm ${pre.output.toFixed(2)}, without ${noFinal.output.toFixed(2)} (×${(noFinal.output / sqrtD).toFixed(2)} √d); post-norm every layer ${post.stream.slice(1).map((x) => x.toFixed(2)).filter((x, i, a) => a.indexOf(x) === i).join('/')}`,
    layers, dModel: d, sqrtD, position, variants, checks,
  };
}

// ------------------------------------------------------------------ the list

/** The experiment cards, in order: id, title, one-line explanation, function. */
export const EXPERIMENTS = [
  {
    id: 'permutation', title: '“dog bites man” vs “man bites dog”', run: permutation,
    explanation: 'Without positions attention is a bag of words: permuting the input permutes the output rows, bit for bit. Any position plugin breaks the tie.',
  },
  {
    id: 'sinusoidal', title: 'Sinusoidal: PE_t · PE_(t+k) depends only on k', run: sinusoidal,
    explanation: 'Each sin/cos pair turns by a fixed angle per step, so the dot product of two positions is Σ cos(k / base^(2i/d)): a function of the offset k alone.',
  },
  {
    id: 'learned', title: 'Learned table: no row past maxLen', run: learnedLimit,
    explanation: 'A learned table has maxLen rows and no formula for the next one: a longer sequence is refused, not wrapped or clamped. Formula-based schemes carry on.',
  },
  {
    id: 'rope', title: 'RoPE: the score depends only on n − m', run: rope,
    explanation: 'RoPE rotates q by mθ and k by nθ; ⟨R_m q, R_n k⟩ = ⟨q, R_(n−m) k⟩, so a query at m and a key at n score by their offset alone.',
  },
  {
    id: 'alibi', title: 'ALiBi: one slope per head', run: alibi,
    explanation: 'ALiBi adds −slope·|i − j| to the scores; the slopes are a geometric sequence, and a head count that is not a power of two borrows every other slope of the next power.',
  },
  {
    id: 'depth', title: 'Depth: pre-norm, post-norm and the missing final norm', run: depth,
    explanation: 'Pre-norm never normalises the residual stream, so it grows with depth and needs a final norm; post-norm normalises after every sublayer.',
  },
];

function fmt(x) {
  if (x === 0) return '0';
  if (Math.abs(x) < 1e-3 || Math.abs(x) >= 1e4) return x.toExponential(2);
  return x.toPrecision(3);
}
export { fmt as formatNumber };
