// swapformer model files written from a checkpoint, and a checkpoint's tensors
// streamed to the loader as if they were one (checkpointSource): the converter
// (bin/swapformer.js convert) writes the file to disk, loadPretrained streams it.
//
//   file = [u64 header length][header JSON: __metadata__ {format, config,
//          family, hf_config, tokenizer, recipe, ...} + tensors][data]
// README "File format" describes it.
import { ModelSource, loadModel } from '../runtime/encoder.js';
import { parseSafetensors, toFloat32 } from './safetensors.js';

const own = (o, k) => (o !== null && typeof o === 'object' && Object.hasOwn(o, k) ? o[k] : undefined);
const utf8 = new TextEncoder();

// ------------------------------------------------------------------ model files

/** float32 -> IEEE half bits, round to nearest even (as numpy's astype(float16)). */
const f32scratch = new Float32Array(1), u32scratch = new Uint32Array(f32scratch.buffer);
export function f16bits(x) {
  f32scratch[0] = x;
  const u = u32scratch[0];
  const sign = (u >>> 16) & 0x8000, exp = (u >>> 23) & 0xff, man = u & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (man ? 0x200 : 0);
  const e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00; // overflow: inf (refused by the loader as non-finite)
  if (e <= 0) { // subnormal or zero
    if (e < -10) return sign;
    const m = man | 0x800000, shift = 14 - e, half = 1 << (shift - 1);
    let r = m >>> shift;
    const rest = m & ((1 << shift) - 1);
    if (rest > half || (rest === half && (r & 1))) r++;
    return sign | r;
  }
  let r = (e << 10) | (man >>> 13);
  const rest = man & 0x1fff;
  if (rest > 0x1000 || (rest === 0x1000 && (r & 1))) r++;
  return sign | r;
}

/** A tensor's bytes in the file's dtype: 'source' keeps F32/F16/BF16 (F64 narrows to F32). */
function encodeTensor(t, dtype) {
  const want = dtype === 'source' ? (t.dtype === 'F64' ? 'F32' : t.dtype) : dtype.toUpperCase();
  if (want === t.dtype) return { dtype: want, bytes: t.bytes };
  const values = toFloat32(t, t.source ?? t.name);
  if (want === 'F32') return { dtype: want, bytes: new Uint8Array(values.buffer, values.byteOffset, values.byteLength) };
  const half = new Uint16Array(values.length);
  for (let i = 0; i < values.length; i++) half[i] = f16bits(values[i]);
  return { dtype: 'F16', bytes: new Uint8Array(half.buffer) };
}

const FLOAT_SIZE = { F64: 8, F32: 4, F16: 2, BF16: 2 };

/** The dtype a tensor is written as, and its length in bytes then (without encoding it). */
function encodedLayout(t, dtype) {
  const want = dtype === 'source' ? (t.dtype === 'F64' ? 'F32' : t.dtype) : dtype.toUpperCase();
  if (want === t.dtype) return { dtype: want, length: t.bytes.length };
  if (!FLOAT_SIZE[t.dtype]) toFloat32(t, t.source ?? t.name); // UNSUPPORTED_MODEL naming the tensor
  return { dtype: want, length: (t.bytes.length / FLOAT_SIZE[t.dtype]) * FLOAT_SIZE[want] };
}

/**
 * The layout of a swapformer model file: its head (the 8-byte length and the
 * header: __metadata__ {format, config, ...extra}, every value a string, and
 * the tensors in order, data 8-byte aligned) and where each tensor's bytes go.
 */
function modelLayout(config, tensors, extra = {}, dtype = 'source') {
  const metadata = { format: 'swapformer', config: JSON.stringify(config) };
  for (const [k, v] of Object.entries(extra)) metadata[k] = typeof v === 'string' ? v : JSON.stringify(v);
  const header = { __metadata__: metadata };
  const parts = [];
  let at = 0;
  for (const t of tensors) {
    const { dtype: dt, length } = encodedLayout(t, dtype);
    header[t.name] = { dtype: dt, shape: t.shape, data_offsets: [at, at + length] };
    parts.push({ tensor: t, begin: at, end: at + length });
    at += length;
  }
  let text = JSON.stringify(header);
  text += ' '.repeat((8 - ((8 + utf8.encode(text).length) % 8)) % 8);
  const h = utf8.encode(text);
  const head = new Uint8Array(8 + h.length);
  new DataView(head.buffer).setBigUint64(0, BigInt(h.length), true);
  head.set(h, 8);
  return { head, dataLength: at, parts };
}

/**
 * A swapformer model file: safetensors with __metadata__ {format, config, ...extra}
 * (every value a string) and the tensors in order, 8-byte aligned data.
 */
export function writeModelFile(config, tensors, extra = {}, dtype = 'source') {
  const { head, dataLength, parts } = modelLayout(config, tensors, extra, dtype);
  const out = new Uint8Array(head.length + dataLength);
  out.set(head);
  for (const p of parts) out.set(encodeTensor(p.tensor, dtype).bytes, head.length + p.begin); // one tensor encoded at a time
  return out;
}

/**
 * The converter's int8 file: the checkpoint loaded as dtype 'q8' (the core
 * quantizes each Linear weight per output row and the token table per row,
 * as createEncoder's q8 does) and saved: "<name>.scale" F32 + "<name>" I8 for
 * those, F32 for the rest, with the checkpoint's metadata. Loads back bit for
 * bit (loadModel / loadPretrained read its dtype).
 */
export async function writeQ8ModelFile(ck, options) {
  const encoder = await loadModel(checkpointSource(ck.config, ck.tensors), { dtype: 'q8', threads: 1, wasm: own(options, 'wasm') });
  try {
    const saved = parseSafetensors(encoder.save(), 'q8 model');
    const tensors = [...saved.tensors].map(([name, t]) => ({ name, dtype: t.dtype, shape: t.shape, bytes: t.bytes }));
    return writeModelFile(ck.config, tensors, { ...ck.metadata, dtype: 'q8' }, 'source');
  } finally {
    encoder.dispose();
  }
}

/**
 * A checkpoint's tensors as a ModelSource, without building the file: the
 * data are the tensors' own bytes (views of the downloaded files; F16 and
 * BF16 as they are, the core widens them), F64 narrowed one tensor at a time.
 * The header holds the config alone: the tokenizer and the recipe stay in JS.
 */
export function checkpointSource(config, tensors) {
  const { head, dataLength, parts } = modelLayout(config, tensors);
  let i = 0, bytes = null, encoded = -1;
  return new ModelSource(head, head.length + dataLength, (begin, end) => {
    if (i >= parts.length || parts[i].begin > begin) i = 0;
    while (parts[i].end <= begin) i++;
    if (encoded !== i) {
      bytes = encodeTensor(parts[i].tensor, 'source').bytes;
      encoded = i;
    }
    return bytes.subarray(begin - parts[i].begin, end - parts[i].begin);
  });
}

/** The __metadata__ of a swapformer model file, or null when bytes are not one. */
export function swapformerMetadata(bytes) {
  if (bytes.length < 8) return null;
  let meta;
  try {
    meta = parseSafetensors(bytes, 'model file').metadata;
  } catch {
    return null;
  }
  return meta?.format === 'swapformer' ? meta : null;
}

// ------------------------------------------------------------------ recipes in files

const b64 = (bytes) => {
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
};
const unb64 = (s) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
const f32bytes = (a) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);

/** The recipe as JSON for the model file's metadata (Dense weights as base64 float32). */
export function recipeToJSON(recipe) {
  return {
    ...recipe,
    dense: recipe.dense.map((d) => ({ ...d, weight: b64(f32bytes(d.weight)), bias: d.bias && b64(f32bytes(d.bias)) })),
  };
}
export function recipeFromJSON(r) {
  const floats = (s) => { const b = unb64(s); return new Float32Array(b.buffer, b.byteOffset, b.length / 4); };
  return { ...r, dense: (r.dense ?? []).map((d) => ({ ...d, weight: floats(d.weight), bias: d.bias ? floats(d.bias) : null })) };
}
