// swapformer model files written from a checkpoint, and a checkpoint's tensors
// streamed to the loader as if they were one (checkpointSource): the converter
// (bin/swapformer.js convert) writes the file to disk, loadPretrained streams it.
//
//   file = [u64 header length][header JSON: __metadata__ {format, config,
//          family, hf_config, tokenizer, recipe, ...} + tensors][data]
// README "File format" describes it.
import { SwapformerError } from '../utils/errors.js';
import { ModelSource, loadModel } from '../runtime/encoder.js';
import { parseSafetensors, toFloat32 } from './safetensors.js';
import { parseJSON } from './files.js';
import { checkRecipe } from './recipe.js';
import { FAMILIES } from './families.js';
import { checkRetrieval } from './retrieval.js';

const own = (o, k) => (o !== null && typeof o === 'object' && Object.hasOwn(o, k) ? o[k] : undefined);
const utf8 = new TextEncoder();
const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const bad = (where, why) => {
  throw new SwapformerError('BAD_FILE', `${where}: ${why}`);
};

/** Metadata values as a file keeps them: strings as they are, anything else as JSON text. */
export const metadataStrings = (extra) => Object.fromEntries(Object.entries(extra).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]));

// ------------------------------------------------------------------ model files

/**
 * float32 bits -> IEEE half bits, round to nearest even, as numpy's
 * astype(float16) (npy_floatbits_to_halfbits): overflow to infinity, NaN
 * keeping the top bits of its payload (and staying a NaN). Works on the bits,
 * so a signalling NaN is converted as numpy converts it.
 */
export function f16FromBits(u) {
  const sign = (u >>> 16) & 0x8000,
    exp = (u >>> 23) & 0xff,
    man = u & 0x7fffff;
  if (exp === 0xff) return sign | (man ? 0x7c00 | (man >>> 13 || 1) : 0x7c00);
  const e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00; // overflow: inf (refused by the loader as non-finite)
  if (e <= 0) {
    // subnormal or zero
    if (e < -10) return sign;
    const m = man | 0x800000,
      shift = 14 - e,
      half = 1 << (shift - 1);
    let r = m >>> shift;
    const rest = m & ((1 << shift) - 1);
    if (rest > half || (rest === half && r & 1)) r++;
    return sign | r;
  }
  let r = (e << 10) | (man >>> 13);
  const rest = man & 0x1fff;
  if (rest > 0x1000 || (rest === 0x1000 && r & 1)) r++; // a carry into the exponent is right (up to inf)
  return sign | r;
}

/** A number (rounded to float32 first) -> IEEE half bits, as f16FromBits. */
const f32scratch = new Float32Array(1),
  u32scratch = new Uint32Array(f32scratch.buffer);
export function f16bits(x) {
  f32scratch[0] = x;
  return f16FromBits(u32scratch[0]);
}

/** The dtype a tensor is written as: 'source' keeps F32/F16/BF16 (F64 narrows to F32). */
const writtenDtype = (t, dtype) => (dtype !== 'source' ? dtype.toUpperCase() : t.dtype === 'F64' ? 'F32' : t.dtype);

/** A tensor's bytes in the file's dtype (writtenDtype). */
function encodeTensor(t, dtype) {
  const want = writtenDtype(t, dtype);
  if (want === t.dtype) return { dtype: want, bytes: t.bytes };
  const values = toFloat32(t, t.source ?? t.name);
  if (want === 'F32') return { dtype: want, bytes: new Uint8Array(values.buffer, values.byteOffset, values.byteLength) };
  const bits = new Uint32Array(values.buffer, values.byteOffset, values.length);
  const half = new Uint16Array(values.length);
  for (let i = 0; i < values.length; i++) half[i] = f16FromBits(bits[i]);
  return { dtype: 'F16', bytes: new Uint8Array(half.buffer) };
}

const FLOAT_SIZE = { F64: 8, F32: 4, F16: 2, BF16: 2 };

/** The dtype a tensor is written as, and its length in bytes then (without encoding it). */
function encodedLayout(t, dtype) {
  const want = writtenDtype(t, dtype);
  if (want === t.dtype) return { dtype: want, length: t.byteLength ?? t.bytes.length }; // byteLength: bytes computed when read (lora.js)
  if (!FLOAT_SIZE[t.dtype]) toFloat32(t, t.source ?? t.name); // UNSUPPORTED_MODEL naming the tensor
  return { dtype: want, length: ((t.byteLength ?? t.bytes.length) / FLOAT_SIZE[t.dtype]) * FLOAT_SIZE[want] };
}

/**
 * The layout of a swapformer model file: its head (the 8-byte length and the
 * header: __metadata__ {format, config, ...extra}, every value a string, and
 * the tensors in order, data 8-byte aligned) and where each tensor's bytes go.
 */
function modelLayout(config, tensors, extra = {}, dtype = 'source') {
  const header = { __metadata__: { format: 'swapformer', config: JSON.stringify(config), ...metadataStrings(extra) } };
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
  let i = 0,
    bytes = null,
    encoded = -1;
  return new ModelSource(head, head.length + dataLength, (begin, end) => {
    if (i >= parts.length || parts[i].begin > begin) i = 0;
    while (parts[i].end <= begin) i++;
    const t = parts[i].tensor;
    // a tensor of a file on disk, kept as it is: read by ranges as the loader asks for them
    if (t.readRange && writtenDtype(t, 'source') === t.dtype) return t.readRange(begin - parts[i].begin, end - parts[i].begin);
    if (encoded !== i) {
      bytes = encodeTensor(t, 'source').bytes;
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
/** base64 float32 values -> a Float32Array; BAD_FILE naming `where` when the text is not that. */
function floatsFromBase64(text, where) {
  let bytes;
  try {
    if (typeof text !== 'string') throw new TypeError();
    bytes = Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
  } catch {
    bad(where, 'must be base64 text of float32 values');
  }
  if (bytes.length % 4) bad(where, `has ${bytes.length} bytes, not a whole number of float32 values`);
  return new Float32Array(bytes.buffer, 0, bytes.length / 4);
}
const f32bytes = (a) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);

/** The recipe as JSON for the model file's metadata (Dense weights as base64 float32). */
export function recipeToJSON(recipe) {
  return {
    ...recipe,
    dense: recipe.dense.map((d) => ({ ...d, weight: b64(f32bytes(d.weight)), bias: d.bias && b64(f32bytes(d.bias)) })),
  };
}
/** A recipe read back from a model file's metadata: the Dense weights decoded, every field checked (recipe.js checkRecipe). */
export function recipeFromJSON(r, { dModel, where = 'model file __metadata__.recipe' } = {}) {
  if (!isObject(r)) bad(where, 'must be a JSON object');
  const layers = Object.hasOwn(r, 'dense') ? r.dense : undefined;
  if (!Array.isArray(layers)) bad(where, 'dense must be an array');
  const dense = layers.map((d, i) => {
    if (!isObject(d)) return d; // checkRecipe names it
    const bias = own(d, 'bias') ?? null;
    return {
      ...d,
      weight: floatsFromBase64(own(d, 'weight'), `${where}: dense[${i}].weight`),
      bias: bias === null ? null : floatsFromBase64(bias, `${where}: dense[${i}].bias`),
    };
  });
  return checkRecipe({ ...r, dense }, { dModel, where });
}

/** The file each metadata field comes from in a checkpoint folder. */
const FOLDER_FILES = {
  retrieval: 'the retrieval settings',
  hf_config: 'config.json',
  tokenizer: 'tokenizer.json',
  tokenizer_config: 'tokenizer_config.json',
  special_tokens_map: 'special_tokens_map.json',
};

/**
 * What loadPretrained reads from a swapformer file's __metadata__ (all
 * strings), each checked: family a known name; hf_config, tokenizer and
 * recipe (optional: tokenizer_config, special_tokens_map) JSON objects within
 * the depth limit; the recipe as recipeFromJSON, chained from dModel.
 * BAD_FILE naming the field, or, for a checkpoint's metadata (`folder`: its
 * label), the file it was read from.
 */
export function pretrainedMetadata(meta, { dModel, folder, head }) {
  const where = (k) => (folder === undefined ? `model file __metadata__.${k}` : `${FOLDER_FILES[k] ?? k} (in ${folder})`);
  const object = (k, optional = false) => {
    if (!Object.hasOwn(meta, k)) return optional ? undefined : bad(where(k), 'is missing');
    const v = parseJSON(meta[k], where(k));
    if (!isObject(v)) bad(where(k), 'must be a JSON object');
    return v;
  };
  const family = own(meta, 'family');
  if (!FAMILIES.some((f) => f.name === family)) bad(where('family'), `${JSON.stringify(family)} is not one of ${FAMILIES.map((f) => f.name).join(', ')}`);
  return {
    family,
    hfConfig: object('hf_config'),
    tokenizer: object('tokenizer'),
    tokenizerConfig: object('tokenizer_config', true),
    specialTokensMap: object('special_tokens_map', true),
    recipe: recipeFromJSON(object('recipe'), { dModel, where: where('recipe') }),
    retrieval: checkRetrieval(object('retrieval', true) ?? null, head, where('retrieval')),
  };
}
