// jina-embeddings-v3's task adapters, merged into the weights at load. The
// checkpoint (jinaai/xlm-roberta-flash-implementation, modeling_lora.py) keeps
// every Linear and Embedding as a torch parametrization: `X.parametrizations.
// weight.original` and, per task t of config.json's lora_adaptations,
// `X.parametrizations.weight.0.lora_A[t]`, `lora_B[t]`; the task's forward uses
//   Linear     W + B[t] A[t] x scale   (W [out, in], B [n, out, r], A [n, r, in])
//   Embedding  W + A[t] B[t] x scale   (W [V, C],    A [n, V, r],   B [n, r, C])
// with scale = lora_alpha / lora_rank. Without a task the original weights run
// (encode(task=None)). The merge is one rank-r update per tensor, computed when
// the loader streams that tensor (one merged tensor alive at a time, never
// the whole model in float32): it runs once per load, at the speed of reading
// the weights.
import { SwapformerError } from '../utils/errors.js';
import { toFloat32 } from './safetensors.js';

const unsupported = (message) => new SwapformerError('UNSUPPORTED_MODEL', message);
const ORIGINAL = '.parametrizations.weight.original';
const LORA = /^(.*)\.parametrizations\.weight\.0\.lora_(A|B)$/;

/** The adapter names of a config.json (lora_adaptations), or null. */
export function loraTasks(hf) {
  const t = hf?.lora_adaptations;
  return Array.isArray(t) && t.length && t.every((x) => typeof x === 'string') ? t : null;
}

// one merged tensor kept: the parts of a fused tensor (Wqkv -> q, k, v) are streamed one after the other
let cache = { key: null, values: null };

/** W + low-rank update, float32 (k = the task's index, s = the scale). */
function merge(w, a, b, k, s, embedding) {
  const W = toFloat32(w.tensor, w.source),
    A = toFloat32(a.tensor, a.source),
    B = toFloat32(b.tensor, b.source);
  const [rows, cols] = w.tensor.shape,
    r = w.rank;
  const out = Float32Array.from(W);
  // row o += sum_j left[o][j] x right[j][:], left (rows, r) and right (r, cols) of task k
  const [left, right] = embedding ? [A, B] : [B, A];
  const lo = k * rows * r,
    ro = k * r * cols;
  for (let o = 0; o < rows; o++) {
    const row = o * cols;
    for (let j = 0; j < r; j++) {
      const c = left[lo + o * r + j] * s;
      if (c === 0) continue;
      const from = ro + j * cols;
      for (let i = 0; i < cols; i++) out[row + i] += c * right[from + i];
    }
  }
  return out;
}

/**
 * Renames a checkpoint's parametrized tensors (Map name -> {dtype, shape,
 * bytes, source}) to plain `X.weight`: the original weights, or with `task`
 * the task's adapter merged in (an F32 tensor whose bytes are computed when
 * read). Every lora_A / lora_B must belong to a parametrized weight and agree
 * with config.json's lora_rank and lora_adaptations.
 */
export function mergeAdapters(renamed, hf, task) {
  const tasks = loraTasks(hf);
  const k = task === undefined ? -1 : tasks ? tasks.indexOf(task) : -1;
  if (task !== undefined && k < 0)
    throw new SwapformerError(
      'BAD_ARGUMENT',
      `options.task = ${JSON.stringify(task)} is not one of this checkpoint's adapters (config.json lora_adaptations: ${JSON.stringify(tasks)})`,
    );
  const rank = hf.lora_rank ?? 4,
    alpha = hf.lora_alpha ?? 1;
  if (!Number.isInteger(rank) || rank < 1) throw unsupported(`config.json: lora_rank = ${JSON.stringify(rank)} is not a positive integer`);
  if (typeof alpha !== 'number' || !Number.isFinite(alpha)) throw unsupported(`config.json: lora_alpha = ${JSON.stringify(alpha)} is not a number`);
  const loras = new Map();
  for (const [name, t] of renamed) {
    const m = LORA.exec(name);
    if (!m) continue;
    if (!loras.has(m[1])) loras.set(m[1], {});
    loras.get(m[1])[m[2]] = { tensor: t, source: t.source };
    renamed.delete(name);
  }
  for (const [name, t] of [...renamed]) {
    if (!name.endsWith(ORIGINAL)) continue;
    const base = name.slice(0, -ORIGINAL.length),
      lora = loras.get(base);
    loras.delete(base);
    renamed.delete(name);
    const [rows, cols] = t.shape;
    if (!lora?.A || !lora?.B || t.shape.length !== 2) throw unsupported(`weight '${t.source}' is parametrized without its lora_A and lora_B`);
    const embedding = /embeddings\.\w+$/.test(base);
    const n = tasks?.length ?? 0;
    const [a, b] = [lora.A.tensor.shape, lora.B.tensor.shape];
    const want = embedding
      ? [
          [n, rows, rank],
          [n, rank, cols],
        ]
      : [
          [n, rank, cols],
          [n, rows, rank],
        ];
    if (JSON.stringify([a, b]) !== JSON.stringify(want))
      throw unsupported(
        `weights '${lora.A.source}' [${a}] and '${lora.B.source}' [${b}] are not ${tasks ? `${n} adapters` : 'adapters named by lora_adaptations'} of rank ${rank} (lora_rank) for [${t.shape}]`,
      );
    if (k < 0) {
      renamed.set(`${base}.weight`, t);
      continue;
    }
    const w = { tensor: t, source: t.source, rank };
    const key = {};
    renamed.set(`${base}.weight`, {
      dtype: 'F32',
      shape: t.shape,
      source: t.source,
      byteLength: rows * cols * 4,
      get bytes() {
        if (cache.key !== key) cache = { key, values: merge(w, lora.A, lora.B, k, alpha / rank, embedding) };
        return new Uint8Array(cache.values.buffer);
      },
    });
  }
  const stray = [...loras.values()][0];
  if (stray) throw unsupported(`weight '${(stray.A ?? stray.B).source}' adapts a weight the checkpoint does not have`);
}
