// loadPretrained: a Hugging Face encoder (its folder, URL, Hub id, dropped
// files, or a swapformer file written by the converter) as an Encoder, its
// tokenizer and its embedding recipe.
//
//   source -> files.js (config.json, weights, tokenizer, sentence-transformers files)
//          -> families.js (config translated, tensors renamed and split)
//          -> a swapformer model file's header (the canonical names, the
//             checkpoint's own dtypes) and its data streamed from the
//             checkpoint's bytes (ModelSource) -> loadModel, the same strict
//             loader as every model, without the file built in memory.
// The converter (bin/swapformer.js convert) writes that file to disk (with
// the tokenizer and the recipe in its metadata).
import { SwapformerError, fail } from './errors.js';
import { createEncoder, loadModel } from './index.js';
import { Tokenizer } from './tokenizer.js';
import { openSource, subSource } from './pretrained/files.js';
import { parseSafetensors, readWeights, toFloat32 } from './pretrained/safetensors.js';
import { readRecipe, pool, applyRecipe } from './pretrained/recipe.js';
import { detectFamily, mapTensors, translateConfig } from './pretrained/families.js';

const own = (o, k) => (o !== null && typeof o === 'object' && Object.hasOwn(o, k) ? o[k] : undefined);
const utf8 = new TextEncoder();

// ------------------------------------------------------------------ model files

/** float32 -> IEEE half bits, round to nearest even (as numpy's astype(float16)). */
const f32scratch = new Float32Array(1), u32scratch = new Uint32Array(f32scratch.buffer);
function f16bits(x) {
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
 * A model file given as its head (the 8-byte length and the header JSON), its
 * length, and read(begin, end): the data bytes [begin, end) (offsets from the
 * data's start, within one tensor, asked in data order). loadModel streams it
 * into wasm memory.
 */
export class ModelSource {
  constructor(head, fileLength, read) {
    this.head = head;
    this.fileLength = fileLength;
    this.read = read;
  }
}

/**
 * A checkpoint's tensors as a ModelSource, without building the file: the
 * data are the tensors' own bytes (views of the downloaded files; F16 and
 * BF16 as they are, the core widens them), F64 narrowed one tensor at a time.
 * The header holds the config alone: the tokenizer and the recipe stay in JS.
 */
function checkpointSource(config, tensors) {
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
function swapformerMetadata(bytes) {
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
function recipeToJSON(recipe) {
  return {
    ...recipe,
    dense: recipe.dense.map((d) => ({ ...d, weight: b64(f32bytes(d.weight)), bias: d.bias && b64(f32bytes(d.bias)) })),
  };
}
function recipeFromJSON(r) {
  const floats = (s) => { const b = unb64(s); return new Float32Array(b.buffer, b.byteOffset, b.length / 4); };
  return { ...r, dense: (r.dense ?? []).map((d) => ({ ...d, weight: floats(d.weight), bias: d.bias ? floats(d.bias) : null })) };
}

// ------------------------------------------------------------------ Pretrained

const EMBED_BATCH = 32; // texts per forward pass: bounds the activations

export class Pretrained {
  #disposed = false;

  #limits;

  constructor({ encoder, tokenizer, recipe, family, hfConfig, limits, label }) {
    /** The Encoder: every method works, and its position plugin can be swapped on the same weights. */
    this.encoder = encoder;
    /** The checkpoint's tokenizer (tokenizer.json). */
    this.tokenizer = tokenizer;
    /** The embedding recipe: pooling modes, Dense layers, normalisation, max sequence length. */
    this.recipe = recipe;
    /** The family it was read as ('bert', 'roberta', 'distilbert', 'nomic-bert', 'jina-bert', 'modernbert', 't5'). */
    this.family = family;
    /** The checkpoint's config.json. */
    this.hfConfig = hfConfig;
    this.source = label;
    this.#limits = limits; // the maxLength option, max_seq_length, model_max_length
  }

  /** Longest input in tokens, special tokens included: the smallest of the maxLength option,
   * the recipe's max_seq_length, the tokenizer's model_max_length and the position plugin's limit. */
  get maxLength() { return smallest(...this.#limits, this.encoder.maxSequenceLength); }

  /**
   * Sentence embeddings: {data, shape: [B, D]} with the checkpoint's recipe,
   * or the last hidden states {data, shape: [B, T, dModel]} with pooling 'none'.
   */
  embed(texts, options) {
    return this.#embed(texts, options, (ids, opts) => this.encoder.forward(ids, opts), (f) => f());
  }

  /**
   * embed without blocking the calling thread where the runtime has threads
   * (the forward passes run in a worker: Encoder.forwardAsync); elsewhere it
   * computes here, as embed does.
   */
  async embedAsync(texts, options) {
    return this.#embed(texts, options, (ids, opts) => this.encoder.forwardAsync(ids, opts), async (f) => {
      const parts = [];
      for await (const part of f()) parts.push(part);
      return parts;
    });
  }

  // The texts -> batches -> pooled recipe, with forward sync or async.
  #embed(texts, options, forward, drive) {
    if (this.#disposed || this.encoder.disposed) fail('DISPOSED', 'this model has been disposed');
    const single = typeof texts === 'string';
    const list = single ? [texts] : texts;
    if (!Array.isArray(list) || list.length === 0) fail('BAD_ARGUMENT', 'texts must be a string or a non-empty array of strings');
    list.forEach((t, i) => { if (typeof t !== 'string') fail('BAD_ARGUMENT', `texts[${i}] must be a string, got ${typeof t}`); });
    const opts = options ?? {};
    if (typeof opts !== 'object' || Array.isArray(opts)) fail('BAD_ARGUMENT', 'options must be an object');
    const pooling = own(opts, 'pooling'), normalize = own(opts, 'normalize'), dimensions = own(opts, 'dimensions');
    const maxLength = this.#maxLength(own(opts, 'maxLength'));
    if (pooling !== undefined && !['mean', 'cls', 'max', 'none'].includes(pooling)) fail('BAD_ARGUMENT', `options.pooling must be 'mean', 'cls', 'max' or 'none', got ${JSON.stringify(pooling)}`);
    if (normalize !== undefined && typeof normalize !== 'boolean') fail('BAD_ARGUMENT', 'options.normalize must be a boolean');
    // as sentence-transformers' Transformer.tokenize: stripped, lowercased when the folder says so
    const prepared = list.map((t) => (this.recipe.doLowerCase ? t.trim().toLowerCase() : t.trim()));
    const encoded = prepared.map((t) => this.tokenizer.encode(t, { maxLength }));
    const inputs = (batch) => [batch.map((e) => e.ids), { typeIds: batch.map((e) => e.typeIds) }];
    if (pooling === 'none') { // the last hidden states, one pass
      const out = forward(...inputs(encoded));
      const shape = (o) => ({ data: o.data, shape: o.shape });
      return out instanceof Promise ? out.then(shape) : shape(out);
    }
    const modes = pooling ? [pooling] : this.recipe.pooling;
    const finish = (hidden, batch) => applyRecipe(pool(hidden, batch.map((e) => e.ids.length), modes), this.recipe,
      { normalize, dimensions, matryoshkaNorm: this.family === 'nomic-bert' && dimensions != null });
    const join = (parts) => {
      const D = parts[0].shape[1], data = new Float32Array(list.length * D);
      let at = 0;
      for (const p of parts) { data.set(p.data, at); at += p.data.length; }
      return { data, shape: [list.length, D] };
    };
    const batches = [];
    for (let s = 0; s < encoded.length; s += EMBED_BATCH) batches.push(encoded.slice(s, s + EMBED_BATCH));
    const result = drive(function* () { // one forward pass per batch of EMBED_BATCH texts
      for (const batch of batches) {
        const out = forward(...inputs(batch));
        yield out instanceof Promise ? out.then((h) => finish(h, batch)) : finish(out, batch);
      }
    });
    return result instanceof Promise ? result.then(join) : join([...result]);
  }

  #maxLength(requested) {
    if (requested === undefined) return this.maxLength;
    if (!Number.isSafeInteger(requested) || requested < 1) fail('BAD_ARGUMENT', `options.maxLength must be a positive integer, got ${String(requested)}`);
    return Math.min(requested, this.maxLength);
  }

  /**
   * The same checkpoint with config fields changed on the same weights: a
   * position plugin swapped or rescaled, e.g. {positionOptions: {...p.encoder.config.positionOptions,
   * scaling: {type: 'yarn', factor: 4, originalMaxLen: 2048}}}. A new Pretrained (dispose both).
   */
  async withConfig(changes, options) {
    if (this.disposed) fail('DISPOSED', 'this model has been disposed');
    if (changes === null || typeof changes !== 'object' || Array.isArray(changes)) fail('BAD_ARGUMENT', 'withConfig takes an object of config fields');
    const encoder = await createEncoder({ ...this.encoder.config, ...changes }, { weights: this.encoder.getWeights(), ...(options ?? {}) });
    return new Pretrained({ encoder, tokenizer: this.tokenizer, recipe: this.recipe, family: this.family, hfConfig: this.hfConfig,
      limits: this.#limits, label: this.source });
  }

  /** Frees the encoder; idempotent. */
  dispose() {
    this.#disposed = true;
    this.encoder.dispose();
  }

  get disposed() { return this.#disposed || this.encoder.disposed; }
}
if (typeof Symbol.dispose === 'symbol') Pretrained.prototype[Symbol.dispose] = Pretrained.prototype.dispose;

/** The smallest of the limits that apply (Infinity: none). */
function smallest(...limits) {
  const ok = limits.filter((n) => Number.isFinite(n) && n > 0);
  return ok.length ? Math.min(...ok) : Infinity;
}

// ------------------------------------------------------------------ loading

/**
 * Everything a checkpoint folder says: the swapformer config, the tensors
 * (canonical names, views of the checkpoint's bytes) and the metadata a
 * model file keeps (tokenizer, recipe, ...). Used by loadPretrained and by the converter.
 */
export async function readCheckpoint(source, options = {}) {
  const files = await openSource(source, options);
  const hfRoot = await files.readJSON('config.json', { optional: true });
  // a sentence-transformers folder may keep the model in a sub-folder (old '0_Transformer')
  let model = files, hf = hfRoot;
  const recipe = await readRecipe(files, { modelType: hf?.model_type, nameOrPath: hf?._name_or_path ?? (typeof source === 'string' ? source : undefined) });
  if (recipe.transformerPath) {
    model = subSource(files, recipe.transformerPath);
    hf = await model.readJSON('config.json');
  }
  if (!hf) fail('NOT_FOUND', `${files.label}: no config.json (a Hugging Face model folder has one)`);
  const family = detectFamily(hf);
  const { tensors } = await readWeights(model);
  const mapped = mapTensors(family, tensors);
  const config = translateConfig(family, hf, mapped.shape);
  const tokenizerJson = await model.readText('tokenizer.json', { optional: true }) ?? await files.readText('tokenizer.json', { optional: true });
  if (tokenizerJson === null) fail('NOT_FOUND', `${files.label}: no tokenizer.json (swapformer reads the fast-tokenizer file; save it with AutoTokenizer.from_pretrained(...).save_pretrained(folder))`);
  const tokenizerConfig = await model.readJSON('tokenizer_config.json', { optional: true });
  const specialTokensMap = await model.readJSON('special_tokens_map.json', { optional: true });
  return {
    label: files.label,
    family: family.name,
    hfConfig: hf,
    config,
    tensors: mapped.tensors,
    metadata: {
      family: family.name,
      hf_config: hf,
      tokenizer: tokenizerJson,
      ...(tokenizerConfig ? { tokenizer_config: tokenizerConfig } : {}),
      ...(specialTokensMap ? { special_tokens_map: specialTokensMap } : {}),
      recipe: recipeToJSON(recipe),
    },
  };
}

/** Reads the bytes of a file source given as a path or URL (for swapformer files). */
async function readSingleFile(source, options) {
  const s = source instanceof URL ? source.href : source;
  const slash = s.lastIndexOf('/');
  const files = await openSource(slash > 0 ? s.slice(0, slash + 1) : './', options);
  return files.read(s.slice(slash + 1));
}

/**
 * A Hugging Face encoder ready to embed: loadPretrained(source, {onProgress,
 * hubUrl, revision, fetch, cache, maxLength, wasm, threads, dtype}) -> Pretrained.
 */
export async function loadPretrained(source, options) {
  const opts = options ?? {};
  if (typeof opts !== 'object' || Array.isArray(opts)) fail('BAD_ARGUMENT', 'options must be an object');
  const fileOptions = {};
  for (const k of ['onProgress', 'hubUrl', 'revision', 'fetch', 'cache']) if (own(opts, k) !== undefined) fileOptions[k] = own(opts, k);
  const wasm = own(opts, 'wasm'), maxLength = own(opts, 'maxLength'), threads = own(opts, 'threads'), dtype = own(opts, 'dtype');
  if (maxLength !== undefined && (!Number.isSafeInteger(maxLength) || maxLength < 2)) fail('BAD_ARGUMENT', `options.maxLength must be an integer >= 2, got ${String(maxLength)}`);

  // a swapformer model file (the converter's output): bytes, or a path / URL ending in .safetensors
  let bytes = source instanceof Uint8Array ? source : source instanceof ArrayBuffer ? new Uint8Array(source) : null;
  if (!bytes && (typeof source === 'string' || source instanceof URL) && /\.safetensors$/i.test(String(source instanceof URL ? source.pathname : source))) {
    bytes = await readSingleFile(source, fileOptions);
  }
  let meta, label, model = bytes;
  if (bytes) {
    meta = swapformerMetadata(bytes);
    if (!meta) fail('BAD_FILE', 'loadPretrained: these bytes are not a swapformer model file (pass a Hugging Face folder, URL or id for a checkpoint)');
    if (!meta.tokenizer || !meta.recipe) fail('BAD_FILE', 'loadPretrained: this swapformer model file has no tokenizer and recipe (write it with `swapformer convert`); use loadModel for a bare encoder');
    label = 'model file';
  } else {
    const ck = await readCheckpoint(source, fileOptions);
    model = checkpointSource(ck.config, ck.tensors); // streamed into wasm: no file built in memory
    meta = Object.fromEntries(Object.entries(ck.metadata).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]));
    label = ck.label;
  }
  let encoder;
  try {
    encoder = await loadModel(model, { wasm, threads, dtype });
  } catch (e) {
    if (e instanceof SwapformerError && (e.code === 'BAD_WEIGHTS' || e.code === 'BAD_CONFIG')) {
      throw new SwapformerError('UNSUPPORTED_MODEL', `${label}: the checkpoint does not fit the ${meta.family} layout swapformer knows: ${e.message}`);
    }
    throw e;
  }
  try {
    const json = (k) => (meta[k] ? JSON.parse(meta[k]) : undefined);
    const tokenizer = Tokenizer.fromJSON(meta.tokenizer, { tokenizerConfig: json('tokenizer_config'), specialTokensMap: json('special_tokens_map') });
    const recipe = recipeFromJSON(json('recipe'));
    const limits = [maxLength, recipe.maxSeqLength, tokenizer.modelMaxLength];
    return new Pretrained({ encoder, tokenizer, recipe, family: meta.family, hfConfig: json('hf_config'), limits, label });
  } catch (e) {
    encoder.dispose();
    throw e;
  }
}

