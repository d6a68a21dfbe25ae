// Hugging Face weight files: safetensors, single or sharded.
//
//   [u64 little-endian N][N bytes of JSON header][data]
//   header = {"__metadata__"?: {string: string},
//             "<name>": {"dtype": "F32", "shape": [...], "data_offsets": [begin, end]}, ...}
//
// Everything in a downloaded file is untrusted, so the reader is as strict as
// the C loader (core/modelfile.c): the header lies inside the file and is a
// JSON object without repeated keys; each tensor has exactly dtype, shape and
// data_offsets; offsets lie inside the data and span dtype size x shape
// product bytes; the tensors tile the data exactly (no overlap, no hole).
// Tensors are views into the file's bytes (no copy); toFloat32 widens them.
import { SwapformerError } from '../utils/errors.js';
import { MAX_JSON_DEPTH } from './files.js';

/** Bytes per element of the dtypes the safetensors format defines with whole-byte elements. */
const DTYPE_SIZE = {
  F64: 8,
  F32: 4,
  F16: 2,
  BF16: 2,
  I64: 8,
  I32: 4,
  I16: 2,
  I8: 1,
  U64: 8,
  U32: 4,
  U16: 2,
  U8: 1,
  BOOL: 1,
  F8_E4M3: 1,
  F8_E5M2: 1,
};

const bad = (name, why) => {
  throw new SwapformerError('BAD_FILE', `${name}: ${why}`);
};
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Throws on a key repeated within one JSON object (JSON.parse silently keeps
 * the last). The text must already be valid JSON: this scan only follows
 * strings and brackets.
 */
function checkDuplicateKeys(text, name) {
  const stack = []; // a Set of keys per open object, null per open array
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '{' || c === '[') {
      stack.push(c === '{' ? new Set() : null);
      if (stack.length > MAX_JSON_DEPTH) bad(name, `the header nests more than ${MAX_JSON_DEPTH} deep`);
    } else if (c === '}' || c === ']') stack.pop();
    else if (c === '"') {
      let j = i + 1;
      while (text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      const top = stack[stack.length - 1];
      if (top) {
        let k = j + 1;
        while (k < text.length && ' \t\r\n'.includes(text[k])) k++;
        if (text[k] === ':') {
          const key = JSON.parse(text.slice(i, j + 1)); // decodes escapes: "\u0061" is "a"
          if (top.has(key)) bad(name, `the header has the key '${key}' twice`);
          top.add(key);
        }
      }
      i = j;
    }
  }
}

const isIndex = (v) => Number.isSafeInteger(v) && v >= 0;

/** Checks one header entry; returns {dtype, shape, begin, end}. */
function readEntry(key, entry, dataLength, name) {
  const where = `tensor '${key}'`;
  if (!entry || typeof entry !== 'object' || Array.isArray(entry)) bad(name, `${where} must be an object`);
  for (const k of Object.keys(entry)) if (k !== 'dtype' && k !== 'shape' && k !== 'data_offsets') bad(name, `${where} has an unknown field '${k}'`);
  const { dtype, shape, data_offsets: offsets } = entry;
  if (dtype === undefined || shape === undefined || offsets === undefined) bad(name, `${where} needs dtype, shape and data_offsets`);
  if (typeof dtype !== 'string' || !Object.hasOwn(DTYPE_SIZE, dtype))
    bad(name, `${where} has the unknown dtype ${JSON.stringify(dtype)} (known: ${Object.keys(DTYPE_SIZE).join(', ')})`);
  if (!Array.isArray(shape) || !shape.every(isIndex)) bad(name, `${where}: shape must be an array of non-negative integers`);
  if (!Array.isArray(offsets) || offsets.length !== 2 || !offsets.every(isIndex))
    bad(name, `${where}: data_offsets must be [begin, end], non-negative integers`);
  const [begin, end] = offsets;
  if (end < begin) bad(name, `${where}: data_offsets [${begin}, ${end}] are reversed`);
  if (end > dataLength) bad(name, `${where}: data_offsets end ${end} is past the data (${dataLength} bytes)`);
  // the product stays exact: it stops growing once past the data (which it then cannot match)
  let count = shape.includes(0) ? 0 : 1;
  let exact = true;
  for (const d of shape) {
    if (count > dataLength) exact = false;
    else count *= d;
  }
  const need = count * DTYPE_SIZE[dtype];
  if (need !== end - begin)
    bad(
      name,
      `${where}: data_offsets span ${end - begin} bytes, but ${dtype} x [${shape.join(', ')}] needs ${exact && Number.isSafeInteger(need) ? need : `more than the ${dataLength} bytes of data`}`,
    );
  return { dtype, shape: shape.slice(), begin, end };
}

/**
 * Parses a safetensors file. `name` labels error messages (the file name).
 * Returns {metadata: {string: string} | null, tensors: Map<name, {dtype, shape, bytes}>},
 * tensors in header order, each `bytes` a view into `bytes`.
 */
export function parseSafetensors(bytes, name = 'model.safetensors') {
  if (!(bytes instanceof Uint8Array)) throw new SwapformerError('BAD_ARGUMENT', `parseSafetensors(${name}): bytes must be a Uint8Array`);
  const { metadata, entries, dataStart } = parseHeader(bytes, bytes.length, name);
  const tensors = new Map();
  for (const [key, t] of entries) tensors.set(key, { dtype: t.dtype, shape: t.shape, bytes: bytes.subarray(dataStart + t.begin, dataStart + t.end) });
  return { metadata, tensors };
}

/**
 * The same for a file read at offsets (files.js's open: a folder's weights):
 * only the header is read here. Each tensor has `byteLength`, `bytes` (a
 * getter: its bytes read when asked, a new array each time) and
 * `readRange(begin, end)`: bytes [begin, end) of it in a buffer that the next
 * read reuses (the loader streams the weights through it, never the whole
 * file in memory).
 */
export function parseSafetensorsFile(file, name = 'model.safetensors') {
  if (file.size < 8) bad(name, `${file.size} bytes is too short for a safetensors file`);
  const n = new DataView(file.read(0, 8).buffer);
  const headerLength = n.getUint32(0, true) + n.getUint32(4, true) * 2 ** 32;
  if (headerLength > file.size - 8) bad(name, `the header length ${headerLength} exceeds the file (${file.size} bytes)`);
  const head = file.read(0, 8 + headerLength);
  const { metadata, entries, dataStart } = parseHeader(head, file.size, name);
  const tensors = new Map();
  for (const [key, t] of entries) {
    const at = dataStart + t.begin,
      length = t.end - t.begin;
    tensors.set(key, {
      dtype: t.dtype,
      shape: t.shape,
      byteLength: length,
      get bytes() {
        return file.read(at, length);
      },
      readRange: (begin, end) => file.readShared(at + begin, end - begin),
    });
  }
  return { metadata, tensors };
}

/** The header of a safetensors file of `length` bytes, from its first bytes (at least the header's): checked. */
function parseHeader(bytes, length, name) {
  if (length < 8) bad(name, `${length} bytes is too short for a safetensors file`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLength = view.getUint32(0, true) + view.getUint32(4, true) * 2 ** 32;
  if (headerLength > length - 8) bad(name, `the header length ${headerLength} exceeds the file (${length} bytes)`);
  let text, header;
  try {
    text = utf8.decode(bytes.subarray(8, 8 + headerLength));
  } catch {
    bad(name, 'the header is not valid UTF-8');
  }
  try {
    header = JSON.parse(text);
  } catch (e) {
    bad(name, `the header is not valid JSON (${e.message})`);
  }
  if (!header || typeof header !== 'object' || Array.isArray(header)) bad(name, 'the header must be a JSON object');
  checkDuplicateKeys(text, name);

  const dataStart = 8 + headerLength;
  const dataLength = length - dataStart;
  let metadata = null;
  const entries = [];
  for (const [key, value] of Object.entries(header)) {
    if (key === '__metadata__') {
      if (!value || typeof value !== 'object' || Array.isArray(value)) bad(name, '__metadata__ must be an object');
      for (const [k, v] of Object.entries(value)) if (typeof v !== 'string') bad(name, `__metadata__.${k} must be a string`);
      metadata = { ...value };
      continue;
    }
    entries.push([key, readEntry(key, value, dataLength, name)]);
  }

  // the tensors must tile the data exactly
  const sorted = entries.slice().sort((a, b) => a[1].begin - b[1].begin || a[1].end - b[1].end);
  let at = 0;
  for (const [key, t] of sorted) {
    if (t.begin !== at) bad(name, `tensor '${key}': data_offsets begin at ${t.begin}, expected ${at} (tensors ${t.begin < at ? 'overlap' : 'leave a hole'})`);
    at = t.end;
  }
  if (at !== dataLength) bad(name, `${dataLength - at} bytes of data after the last tensor`);
  return { metadata, entries, dataStart };
}

// ---------------------------------------------------------------------------
// Widening to float32

const littleEndian = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

let f16Table = null;
/** The float32 bits of every float16 value (256 kB, built on first use): exact widening. */
function halfTable() {
  if (f16Table) return f16Table;
  f16Table = new Uint32Array(65536);
  for (let h = 0; h < 65536; h++) {
    const sign = (h & 0x8000) << 16;
    let exp = (h >> 10) & 0x1f;
    let man = h & 0x3ff;
    let bits;
    if (exp === 0x1f)
      bits = sign | 0x7f800000 | (man << 13); // inf, nan
    else if (exp) bits = sign | ((exp + 112) << 23) | (man << 13);
    else if (!man) bits = sign;
    else {
      // subnormal: renormalise
      exp = 113;
      while (!(man & 0x400)) {
        man <<= 1;
        exp--;
      }
      bits = sign | (exp << 23) | ((man & 0x3ff) << 13);
    }
    f16Table[h] = bits >>> 0;
  }
  return f16Table;
}

/**
 * The tensor's values as a Float32Array. F32 is a view of the file's bytes when
 * aligned (a copy otherwise); F16 and BF16 are widened exactly; F64 is rounded
 * to the nearest float32. Other dtypes (integers, BOOL, F8) cannot be used as
 * weights: UNSUPPORTED_MODEL naming the tensor.
 */
export function toFloat32(tensor, name = 'tensor') {
  const { dtype, bytes } = tensor;
  const count = bytes.length / (DTYPE_SIZE[dtype] ?? NaN);
  if (dtype === 'F32') {
    if (littleEndian && bytes.byteOffset % 4 === 0) return new Float32Array(bytes.buffer, bytes.byteOffset, count);
    const out = new Float32Array(count);
    const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    for (let i = 0; i < count; i++) out[i] = v.getFloat32(4 * i, true);
    return out;
  }
  if (dtype === 'F16' || dtype === 'BF16') {
    const out = new Float32Array(count);
    const bits = new Uint32Array(out.buffer);
    if (littleEndian) {
      // bits[] is read back as floats in host order
      if (dtype === 'F16') {
        const table = halfTable();
        for (let i = 0; i < count; i++) bits[i] = table[bytes[2 * i] | (bytes[2 * i + 1] << 8)];
      } else {
        for (let i = 0; i < count; i++) bits[i] = ((bytes[2 * i] | (bytes[2 * i + 1] << 8)) << 16) >>> 0;
      }
    } else {
      const v = new DataView(out.buffer);
      const table = dtype === 'F16' ? halfTable() : null;
      for (let i = 0; i < count; i++) {
        const h = bytes[2 * i] | (bytes[2 * i + 1] << 8);
        v.setUint32(4 * i, table ? table[h] : (h << 16) >>> 0, false);
      }
    }
    return out;
  }
  if (dtype === 'F64') {
    const out = new Float32Array(count);
    const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    for (let i = 0; i < count; i++) out[i] = v.getFloat64(8 * i, true); // Float32Array rounds to nearest even
    return out;
  }
  throw new SwapformerError('UNSUPPORTED_MODEL', `tensor '${name}' has dtype ${dtype}; swapformer reads float weights only (F32, F16, BF16, F64)`);
}

// ---------------------------------------------------------------------------
// A model's weights: model.safetensors or an index with shards

/** The message for a folder that has only PyTorch pickles. */
export function binHint(what, label) {
  return (
    `${what} in ${label} is a PyTorch pickle (pytorch_model.bin), which swapformer never unpickles (loading a pickle can run arbitrary code). ` +
    'Convert it to model.safetensors, e.g. in Python with transformers: ' +
    'AutoModel.from_pretrained(path).save_pretrained(out, safe_serialization=True)'
  );
}

/** The most shards an index may name (real checkpoints have tens). */
export const MAX_SHARDS = 1000;
/** Shards downloaded at once. */
export const SHARD_CONCURRENCY = 4;

/** Reads the shard list of model.safetensors.index.json: {shards: [file], where: Map<tensor, file>}. */
function readIndex(index, file) {
  const map = index !== null && typeof index === 'object' && Object.hasOwn(index, 'weight_map') ? index.weight_map : undefined;
  if (!map || typeof map !== 'object' || Array.isArray(map)) bad(file, 'no weight_map object');
  const shards = new Set();
  const where = new Map();
  for (const [tensor, shard] of Object.entries(map)) {
    if (typeof shard !== 'string') bad(file, `weight_map['${tensor}'] must be a file name`);
    shards.add(shard);
    if (shards.size > MAX_SHARDS) bad(file, `weight_map names more than ${MAX_SHARDS} shard files`);
    where.set(tensor, shard);
  }
  if (!shards.size) bad(file, 'weight_map is empty');
  return { shards: [...shards], where };
}

/**
 * read(item, signal) for every item, at most `concurrency` at once, results
 * in order. The first failure aborts the signal (the reads in flight stop),
 * starts no other, and is thrown once every read has settled: nothing is
 * still downloading when this rejects.
 */
export async function eachLimited(items, concurrency, read) {
  const controller = new AbortController();
  const results = new Array(items.length);
  let next = 0,
    failure = null;
  const worker = async () => {
    while (failure === null && next < items.length) {
      const i = next++;
      try {
        results[i] = await read(items[i], controller.signal);
      } catch (e) {
        if (failure === null) {
          failure = e;
          controller.abort(e);
        }
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  if (failure !== null) throw failure;
  return results;
}

/**
 * Reads a model's weights from a source (files.js openSource):
 * model.safetensors, else model.safetensors.index.json and each shard it names
 * (each read once, SHARD_CONCURRENCY at a time, the rest cancelled when one
 * fails). Resolves to {tensors: Map<name, tensor>, files: [file names read],
 * close()}. A folder on disk (a source with open) keeps its files open and
 * reads each tensor when it is used (parseSafetensorsFile): close() when done.
 * Only pytorch_model.bin: UNSUPPORTED_MODEL with the conversion hint; nothing: NOT_FOUND.
 */
export async function readWeights(source) {
  // a folder on disk: the files opened, their headers read, the data read as it is loaded
  const opened = [];
  const close = () => {
    for (const f of opened.splice(0)) f.close();
  };
  const parseOpened = (file, name) => {
    opened.push(file);
    return parseSafetensorsFile(file, name).tensors;
  };
  try {
    const single = source.open
      ? await source.open('model.safetensors', { optional: true }).then((f) => f && parseOpened(f, 'model.safetensors'))
      : await source.read('model.safetensors', { optional: true }).then((b) => b && parseSafetensors(b, 'model.safetensors').tensors);
    if (single) return { tensors: single, files: ['model.safetensors'], close };
    const sharded = await readShards(source, parseOpened);
    if (sharded) return { ...sharded, close };
  } catch (e) {
    close();
    throw e;
  }
  for (const file of ['pytorch_model.bin', 'pytorch_model.bin.index.json'])
    if (await source.has(file)) throw new SwapformerError('UNSUPPORTED_MODEL', binHint('the model', source.label));
  // offline, a partial cache: say that the weights are not cached, not that the model has none
  const offline = source.whyMissing?.('model.safetensors');
  if (offline) throw new SwapformerError('NOT_FOUND', `${source.label}: no weights cached: ${offline}`);
  throw new SwapformerError(
    'NOT_FOUND',
    `no weights in ${source.label}: looked for model.safetensors, model.safetensors.index.json, pytorch_model.bin and pytorch_model.bin.index.json`,
  );
}

/** The shards of model.safetensors.index.json, or null when there is no index. */
async function readShards(source, parseOpened) {
  const INDEX = 'model.safetensors.index.json';
  const index = await source.readJSON(INDEX, { optional: true });
  if (index) {
    const { shards, where } = readIndex(index, INDEX);
    const parsed = await eachLimited(shards, SHARD_CONCURRENCY, async (file, signal) =>
      source.open
        ? parseOpened(await source.open(file, { from: INDEX, signal }), file)
        : parseSafetensors(await source.read(file, { from: INDEX, signal }), file).tensors,
    );
    const tensors = new Map();
    const owner = new Map();
    shards.forEach((file, i) => {
      for (const [name, t] of parsed[i]) {
        if (owner.has(name)) bad(INDEX, `tensor '${name}' is in both ${owner.get(name)} and ${file}`);
        owner.set(name, file);
        tensors.set(name, t);
      }
    });
    for (const [name, file] of where)
      if (owner.get(name) !== file)
        bad(INDEX, `tensor '${name}' should be in ${file}, ${owner.has(name) ? `but is in ${owner.get(name)}` : 'but it is not there'}`);
    return { tensors, files: shards };
  }
  return null;
}
