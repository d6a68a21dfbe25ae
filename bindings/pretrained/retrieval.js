// Sparse and late-interaction retrieval models, read from their folders the
// way their libraries read them (shared/reference/retrieval-and-qa.md):
//
//   splade   sentence-transformers' SparseEncoder: modules.json MLMTransformer
//            (or Transformer) + SpladePooling (1_SpladePooling/config.json:
//            pooling_strategy max | sum, activation_function relu | log1p_relu)
//            over the checkpoint's masked-LM head. Without modules.json any
//            …ForMaskedLM gives SPLADE vectors with max and relu, as
//            SparseEncoder does.
//   colbert  PyLate (modules.json Transformer + pylate.models.Dense.Dense,
//            config_sentence_transformers.json's query_prefix, document_prefix,
//            query_length, document_length, do_query_expansion,
//            attend_to_expansion_tokens, skiplist_words) or colbert-ai's
//            HF_ColBERT (linear.weight beside the encoder, artifact.metadata),
//            read with PyLate's defaults. The Dense layers (identity
//            activation, residual or not) are one linear map, folded into one
//            matrix here: config.head {task: 'colbert'}, whose rows the core
//            L2-normalises.
//   bge-m3   FlagEmbedding's M3: colbert_linear and sparse_linear beside the
//            checkpoint (.pt, read by torch-pt.js without unpickling; or
//            .safetensors), one head of 1 + dim outputs: column 0 the sparse
//            token weight (relu), the rest the ColBERT vector.
//
// The result is config.head and its tensors, and `retrieval`, the settings
// the model file keeps in its metadata (checkRetrieval reads them back).
import { SwapformerError } from '../utils/errors.js';
import { readModuleList } from './recipe.js';
import { parseSafetensors, toFloat32, binHint } from './safetensors.js';
import { readTorchStateDict } from './torch-pt.js';

const badFile = (file, why) => {
  throw new SwapformerError('BAD_FILE', `${file}: ${why}`);
};
const unsupported = (msg) => {
  throw new SwapformerError('UNSUPPORTED_MODEL', msg);
};
const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const own = (o, k) => (isObject(o) && Object.hasOwn(o, k) ? o[k] : undefined);
const join = (dir, file) => (dir ? `${dir}/${file}` : file);

/** Python's string.punctuation: PyLate's skiplist_words when the config has none. */
export const PUNCTUATION = [...'!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~'];

// ------------------------------------------------------------------ SPLADE

/** 1_SpladePooling/config.json -> {pooling, activation}. */
async function readSpladePooling(source, dir) {
  const file = join(dir, 'config.json');
  const config = await source.readJSON(file);
  if (!isObject(config)) badFile(file, 'must be a JSON object');
  const known = ['pooling_strategy', 'activation_function', 'word_embedding_dimension', 'embedding_dimension', 'chunk_size'];
  for (const k of Object.keys(config)) if (!known.includes(k)) unsupported(`${file}: unknown SpladePooling option '${k}'`);
  const pooling = own(config, 'pooling_strategy') ?? 'max',
    activation = own(config, 'activation_function') ?? 'relu';
  if (pooling !== 'max' && pooling !== 'sum') badFile(file, `pooling_strategy ${JSON.stringify(pooling)} is not 'max' or 'sum'`);
  if (activation !== 'relu' && activation !== 'log1p_relu') badFile(file, `activation_function ${JSON.stringify(activation)} is not 'relu' or 'log1p_relu'`);
  if (pooling === 'max' && activation === 'log1p_relu') unsupported(`${file}: max pooling with log1p_relu is not supported (opensearch's models sum)`);
  return { kind: 'splade', pooling, activation };
}

// ------------------------------------------------------------------ ColBERT

/** A float tensor's values as float64, checked finite. */
function values(t, name) {
  const v = toFloat32(t, name);
  for (let i = 0; i < v.length; i++) if (!Number.isFinite(v[i])) throw new SwapformerError('BAD_WEIGHTS', `${name}[${i}] is ${v[i]}: weights must be finite`);
  return Float64Array.from(v);
}

/** PyLate's Dense module: config.json + model.safetensors (linear.weight, linear.bias?, residual.weight?) as {W (out x in), b, in, out}. */
async function readPylateDense(source, dir, width) {
  const file = join(dir, 'config.json');
  const config = await source.readJSON(file);
  if (!isObject(config)) badFile(file, 'must be a JSON object');
  const inF = own(config, 'in_features'),
    outF = own(config, 'out_features'),
    bias = own(config, 'bias') ?? true,
    act = own(config, 'activation_function') ?? 'torch.nn.modules.linear.Identity',
    residual = own(config, 'use_residual') ?? false;
  if (!Number.isSafeInteger(inF) || !Number.isSafeInteger(outF) || inF < 1 || outF < 1) badFile(file, 'in_features and out_features must be positive integers');
  if (inF !== width) badFile(file, `in_features is ${inF}, but the module before it gives ${width} features`);
  if (typeof bias !== 'boolean' || typeof residual !== 'boolean') badFile(file, 'bias and use_residual must be true or false');
  if (!/^torch\.nn\.(modules\.linear\.)?Identity$/.test(act))
    unsupported(`${file}: activation_function '${act}': PyLate's Dense layers run here with the identity only`);
  const weights = join(dir, 'model.safetensors');
  const bytes = await source.read(weights, { optional: true });
  if (!bytes) {
    if (await source.has(join(dir, 'pytorch_model.bin'))) unsupported(binHint(`PyLate's Dense module ${dir}`, source.label));
    throw new SwapformerError('NOT_FOUND', `no ${weights} in ${source.label} (PyLate's Dense module)`);
  }
  const { tensors } = parseSafetensors(bytes, weights);
  const expected = ['linear.weight', ...(bias ? ['linear.bias'] : []), ...(residual && inF !== outF ? ['residual.weight'] : [])];
  for (const name of tensors.keys()) if (!expected.includes(name)) badFile(weights, `unexpected tensor '${name}' (a Dense module has ${expected.join(', ')})`);
  for (const name of expected) if (!tensors.has(name)) badFile(weights, `no tensor '${name}'`);
  const shape = (name, want) => {
    const t = tensors.get(name);
    if (t.shape.length !== want.length || t.shape.some((d, i) => d !== want[i])) badFile(weights, `${name} has the shape [${t.shape}], expected [${want}]`);
    return values(t, `${weights}: ${name}`);
  };
  const W = shape('linear.weight', [outF, inF]);
  const b = bias ? shape('linear.bias', [outF]) : new Float64Array(outF);
  if (residual) {
    // act(linear(h)) + h, or + residual(h): with the identity, one linear map
    if (inF === outF) for (let i = 0; i < outF; i++) W[i * inF + i] += 1;
    else {
      const R = shape('residual.weight', [outF, inF]);
      for (let i = 0; i < W.length; i++) W[i] += R[i];
    }
  }
  return { W, b, inF, outF };
}

/** Folds Dense layers into one: y = W_n (... (W_1 h + b_1) ...) + b_n, in float64. */
function fold(layers) {
  let { W, b, inF } = layers[0];
  for (const L of layers.slice(1)) {
    const W2 = new Float64Array(L.outF * inF),
      b2 = Float64Array.from(L.b);
    for (let o = 0; o < L.outF; o++)
      for (let k = 0; k < L.inF; k++) {
        const w = L.W[o * L.inF + k];
        b2[o] += w * b[k];
        for (let i = 0; i < inF; i++) W2[o * inF + i] += w * W[k * inF + i];
      }
    W = W2;
    b = b2;
  }
  return { W, b, out: b.length };
}

const f32Tensor = (name, shape, v) => {
  const data = Float32Array.from(v);
  return { name, dtype: 'F32', shape, bytes: new Uint8Array(data.buffer), source: name };
};

/** PyLate's ColBERT settings from config_sentence_transformers.json, with its defaults. */
async function readPylateSettings(source) {
  const FILE = 'config_sentence_transformers.json';
  const c = (await source.readJSON(FILE, { optional: true })) ?? {};
  if (!isObject(c)) badFile(FILE, 'must be a JSON object');
  return colbertSettings(
    {
      queryPrefix: own(c, 'query_prefix'),
      documentPrefix: own(c, 'document_prefix'),
      queryLength: own(c, 'query_length'),
      documentLength: own(c, 'document_length'),
      doQueryExpansion: own(c, 'do_query_expansion'),
      attendToExpansionTokens: own(c, 'attend_to_expansion_tokens'),
      skiplistWords: own(c, 'skiplist_words'),
    },
    'pylate',
    FILE,
  );
}

/** The ColBERT settings with PyLate's defaults (models/colbert.py __init__), checked. */
function colbertSettings(c, layout, file) {
  const s = {
    kind: 'colbert',
    layout,
    queryPrefix: c.queryPrefix ?? '[Q] ',
    documentPrefix: c.documentPrefix ?? '[D] ',
    queryLength: c.queryLength ?? 32,
    documentLength: c.documentLength ?? 180,
    doQueryExpansion: c.doQueryExpansion ?? true,
    attendToExpansionTokens: c.attendToExpansionTokens ?? false,
    skiplistWords: c.skiplistWords ?? PUNCTUATION,
  };
  for (const k of ['queryPrefix', 'documentPrefix']) if (typeof s[k] !== 'string') badFile(file, `${k} must be a string`);
  for (const k of ['queryLength', 'documentLength'])
    if (!Number.isSafeInteger(s[k]) || s[k] < 3 || s[k] > 1 << 20) badFile(file, `${k} must be an integer of at least 3 tokens`);
  for (const k of ['doQueryExpansion', 'attendToExpansionTokens']) if (typeof s[k] !== 'boolean') badFile(file, `${k} must be true or false`);
  if (!Array.isArray(s.skiplistWords) || s.skiplistWords.length > 4096 || s.skiplistWords.some((w) => typeof w !== 'string'))
    badFile(file, 'skiplist_words must be a list of strings');
  if (!s.doQueryExpansion) s.attendToExpansionTokens = false; // PyLate forces it
  s.skiplistWords = s.skiplistWords.slice();
  return s;
}

/** colbert-ai's artifact.metadata, read as PyLate reads it (prefixes [unused0] / [unused1] when absent). */
async function readStanfordSettings(source) {
  const FILE = 'artifact.metadata';
  const m = (await source.readJSON(FILE, { optional: true })) ?? {};
  if (!isObject(m)) badFile(FILE, 'must be a JSON object');
  const similarity = own(m, 'similarity') ?? 'cosine';
  if (similarity !== 'cosine') unsupported(`${FILE}: similarity '${similarity}': swapformer scores ColBERT by MaxSim of dot products (cosine)`);
  return colbertSettings(
    {
      queryPrefix: own(m, 'query_token_id') ?? '[unused0]',
      documentPrefix: own(m, 'doc_token_id') ?? '[unused1]',
      queryLength: own(m, 'query_maxlen'),
      documentLength: own(m, 'doc_maxlen'),
      attendToExpansionTokens: own(m, 'attend_to_mask_tokens'),
    },
    'stanford',
    FILE,
  );
}

// ------------------------------------------------------------------ bge-m3

/** One of bge-m3's Linear heads: <name>.pt (torch.save) or <name>.safetensors, as {W, b, out}. */
async function readM3Linear(source, name, width) {
  let file = `${name}.safetensors`,
    tensors;
  const st = await source.read(file, { optional: true });
  if (st) tensors = parseSafetensors(st, file).tensors;
  else {
    file = `${name}.pt`;
    tensors = readTorchStateDict(await source.read(file), file);
  }
  for (const k of tensors.keys())
    if (k !== 'weight' && k !== 'bias') badFile(file, `unexpected tensor '${k}' (a Linear layer's state dict has weight and bias)`);
  if (!tensors.has('weight') || !tensors.has('bias')) badFile(file, 'needs weight and bias (nn.Linear with bias)');
  const w = tensors.get('weight'),
    b = tensors.get('bias');
  const rows = w.shape.length === 1 ? 1 : w.shape[0];
  if (w.shape.length > 2 || w.shape[w.shape.length - 1] !== width) badFile(file, `weight has the shape [${w.shape}]; the encoder's hidden size is ${width}`);
  if (b.shape.reduce((a, d) => a * d, 1) !== rows || b.shape.length > 1) badFile(file, `bias has the shape [${b.shape}], the weight ${rows} rows`);
  return { W: values(w, `${file}: weight`), b: values(b, `${file}: bias`), out: rows, file };
}

// ------------------------------------------------------------------ the folder

/**
 * The retrieval model a folder holds, from its files and weights: {retrieval,
 * head, tensors} (retrieval null for none; head the config.head it needs
 * beside the encoder, with tensors its canonical head tensors). `files` is the
 * folder, `model` the Transformer's (sub)folder, `weights` its tensors (an
 * HF_ColBERT's linear.weight among them); customTransformer as readModuleList's.
 */
export async function readRetrieval(files, model, hf, weights, dModel, customTransformer = false) {
  const none = { retrieval: null, head: null, tensors: [] };
  const { kind, modules } = await readModuleList(files, customTransformer);
  if (kind === 'splade') return { ...none, retrieval: await readSpladePooling(files, modules[1].path) };
  if (kind === 'colbert') {
    const layers = [];
    let width = dModel;
    for (const m of modules.slice(1)) {
      layers.push(await readPylateDense(files, m.path, width));
      width = layers.at(-1).outF;
    }
    const { W, b, out } = fold(layers);
    return {
      retrieval: await readPylateSettings(files),
      head: { task: 'colbert', labels: out },
      tensors: [f32Tensor('head.out.weight', [out, dModel], W), ...(b.some((x) => x !== 0) ? [f32Tensor('head.out.bias', [out], b)] : [])],
    };
  }
  const archs = Array.isArray(own(hf, 'architectures')) ? hf.architectures : [];
  if (kind === null && archs.includes('HF_ColBERT')) {
    const t = weights.get('linear.weight');
    if (!t || t.shape.length !== 2 || t.shape[1] !== dModel)
      unsupported(`an HF_ColBERT checkpoint needs linear.weight [dim, ${dModel}] beside the encoder (colbert-ai's projection)`);
    return {
      retrieval: await readStanfordSettings(model),
      head: { task: 'colbert', labels: t.shape[0] },
      tensors: [f32Tensor('head.out.weight', t.shape, values(t, 'linear.weight'))],
    };
  }
  const m3 = await Promise.all(['colbert_linear', 'sparse_linear'].map(async (n) => (await files.has(`${n}.pt`)) || (await files.has(`${n}.safetensors`))));
  if (m3[0] || m3[1]) {
    if (!m3[0] || !m3[1])
      unsupported(`${files.label}: bge-m3 needs both colbert_linear and sparse_linear (.pt or .safetensors); FlagEmbedding leaves both random otherwise`);
    const colbert = await readM3Linear(files, 'colbert_linear', dModel),
      sparse = await readM3Linear(files, 'sparse_linear', dModel);
    if (sparse.out !== 1) badFile(sparse.file, `has ${sparse.out} outputs; sparse_linear gives one weight a token`);
    const W = new Float64Array((1 + colbert.out) * dModel),
      b = new Float64Array(1 + colbert.out);
    W.set(sparse.W);
    W.set(colbert.W, dModel);
    b[0] = sparse.b[0];
    b.set(colbert.b, 1);
    return {
      retrieval: { kind: 'bge-m3', colbertDim: colbert.out },
      head: { task: 'colbert', labels: 1 + colbert.out, tokenWeights: true },
      tensors: [f32Tensor('head.out.weight', [1 + colbert.out, dModel], W), f32Tensor('head.out.bias', [1 + colbert.out], b)],
    };
  }
  return none;
}

// ------------------------------------------------------------------ checking it (a model file's metadata)

const RETRIEVAL_KEYS = {
  splade: ['kind', 'pooling', 'activation'],
  colbert: ['kind', 'layout', 'queryPrefix', 'documentPrefix', 'queryLength', 'documentLength', 'doQueryExpansion', 'attendToExpansionTokens', 'skiplistWords'],
  'bge-m3': ['kind', 'colbertDim'],
};

/** Checks retrieval settings (readRetrieval's, or a model file's metadata) against the head: a plain copy, or null. */
export function checkRetrieval(r, head, where = 'retrieval') {
  if (r === null || r === undefined) return null;
  const kind = own(r, 'kind');
  if (!isObject(r) || !Object.hasOwn(RETRIEVAL_KEYS, kind)) badFile(where, "kind must be 'splade', 'colbert' or 'bge-m3'");
  for (const k of Object.keys(r)) if (!RETRIEVAL_KEYS[kind].includes(k)) badFile(where, `unknown field '${k}'`);
  if (kind === 'splade') {
    const { pooling, activation } = r;
    if (!['max', 'sum'].includes(pooling) || !['relu', 'log1p_relu'].includes(activation) || (pooling === 'max' && activation === 'log1p_relu'))
      badFile(where, 'pooling and activation are not a SpladePooling pair');
    if (head?.task !== 'mlm')
      unsupported(
        `a SparseEncoder (SPLADE) needs its checkpoint's masked-LM head (…ForMaskedLM with its tensors); this one has ${head ? `a ${head.task} head` : 'none'}`,
      );
    return { kind, pooling, activation };
  }
  if (kind === 'colbert') {
    if (!['pylate', 'stanford'].includes(r.layout)) badFile(where, "layout must be 'pylate' or 'stanford'");
    if (head?.task !== 'colbert' || head.tokenWeights) badFile(where, 'a ColBERT model needs its colbert head');
    return { ...colbertSettings(r, r.layout, where), layout: r.layout };
  }
  if (!Number.isSafeInteger(r.colbertDim) || head?.task !== 'colbert' || !head.tokenWeights || head.labels !== 1 + r.colbertDim)
    badFile(where, 'bge-m3 needs its colbert head with token weights of 1 + colbertDim outputs');
  return { kind, colbertDim: r.colbertDim };
}
