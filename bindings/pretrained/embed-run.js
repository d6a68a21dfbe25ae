// Pretrained.embed from text to vectors, as sentence-transformers' encode:
//
//   texts -> prompt prepended (prompt, promptName, default_prompt_name)
//         -> stripped, lowercased where the folder says (Transformer.tokenize)
//         -> grouped by length, longest first, batches of batchSize
//         -> tokenized (truncated at maxLength, or SEQUENCE_TOO_LONG with truncate: false)
//         -> forward -> Pooling (the prompt's tokens left out with include_prompt: false)
//         -> Dense, Matryoshka dimensions, Normalize (recipe.js)
//         -> back in input order -> precision (quantize_embeddings over the call)
//
// chunking splits texts longer than the model into token windows at word
// boundaries (chunk) and pools their embeddings. Like task-runs.js, a run is
// a generator of forward requests: embed drives it with forward, embedAsync
// with the passes of one exclusive job.
import { fail } from '../utils/errors.js';
import { readOptions, own } from '../utils/options.js';
import { pool, applyRecipe } from './recipe.js';

const POOLINGS = ['mean', 'cls', 'max', 'none'];
const CHUNK_POOLS = ['mean', 'max', 'none'];

/** The texts as a plain array of strings, each element read once (a hole or a non-string refused, naming texts[i]). */
export function readTexts(texts, { empty = true } = {}) {
  if (typeof texts === 'string') return { list: [texts], single: true };
  if (!Array.isArray(texts) || (!empty && texts.length === 0)) fail('BAD_ARGUMENT', 'texts must be a string or an array of strings');
  const n = texts.length,
    list = new Array(n);
  for (let i = 0; i < n; i++) {
    if (!Object.hasOwn(texts, i)) fail('BAD_ARGUMENT', `texts[${i}] is a hole in the array: every text must be a string`);
    const t = texts[i];
    if (typeof t !== 'string') fail('BAD_ARGUMENT', `texts[${i}] must be a string, got ${t === null ? 'null' : typeof t}`);
    list[i] = t;
  }
  return { list, single: false };
}

const positiveInt = (v, what) => {
  if (!Number.isSafeInteger(v) || v < 1) fail('BAD_ARGUMENT', `${what} must be a positive integer, got ${String(v)}`);
  return v;
};

/**
 * The prompt of a call, as SentenceTransformer.encode picks it: `prompt`
 * (wins over promptName), else prompts[promptName] (an unknown name is
 * refused, naming the known ones), else the default prompt; '' for none.
 */
export function resolvePrompt(recipe, prompt, promptName) {
  if (prompt !== undefined) {
    if (typeof prompt !== 'string') fail('BAD_ARGUMENT', 'options.prompt must be a string');
    return prompt;
  }
  const prompts = recipe.prompts ?? {};
  if (promptName !== undefined) {
    if (typeof promptName !== 'string') fail('BAD_ARGUMENT', 'options.promptName must be a string');
    if (!Object.hasOwn(prompts, promptName)) {
      fail(
        'BAD_ARGUMENT',
        `options.promptName '${promptName}' is not one of this model's prompts (${Object.keys(prompts).join(', ') || 'it has none: config_sentence_transformers.json lists them'})`,
      );
    }
    return prompts[promptName];
  }
  return recipe.defaultPromptName ? prompts[recipe.defaultPromptName] : '';
}

const OUTPUTS = ['dense', 'sparse', 'colbert'];

/**
 * options.output: the default (`fallback`), one output or a list of them, each
 * one the model gives (`outputs`); returns {outputs: Set, single}.
 */
function readOutput(output, outputs, fallback) {
  const list = output === undefined ? [fallback] : typeof output === 'string' ? [output] : output;
  if (!Array.isArray(list) || !list.length || list.some((x, i) => !OUTPUTS.includes(x) || list.indexOf(x) !== i))
    fail('BAD_ARGUMENT', `options.output must be one of ${OUTPUTS.join(', ')}, or a list of them, got ${JSON.stringify(output)}`);
  for (const x of list) {
    if (outputs.includes(x)) continue;
    const why = {
      dense: 'it gives no sentence embedding (a SparseEncoder gives sparse vectors, a ColBERT model token vectors)',
      sparse: "sparse vectors need a masked-LM head (…ForMaskedLM, as SPLADE models have) or bge-m3's sparse_linear",
      colbert: "token vectors need a ColBERT model (PyLate's Dense or colbert-ai's linear projection) or bge-m3's colbert_linear",
    }[x];
    fail('UNSUPPORTED_MODEL', `options.output '${x}': ${why}; this model gives ${outputs.join(', ')}`);
  }
  return { outputs: new Set(list), single: typeof output === 'string' || output === undefined };
}

/** The call's settings, every option checked before any pass (an unknown key named). */
export function embedSettings(model, options, call = 'embed', { outputs = ['dense'], fallback = 'dense' } = {}) {
  const o = readOptions(options, call);
  const out = readOutput(own(o, 'output'), outputs, fallback);
  const dense = out.outputs.size === 1 && out.outputs.has('dense');
  if (!dense) {
    for (const k of ['pooling', 'chunking'])
      if (own(o, k) !== undefined)
        fail('BAD_ARGUMENT', `options.${k} applies to dense embeddings, not to output ${JSON.stringify([...out.outputs].join(', '))}`);
    if ((own(o, 'precision') ?? 'float32') !== 'float32') fail('BAD_ARGUMENT', 'options.precision applies to dense embeddings alone');
  }
  if (!out.outputs.has('dense'))
    for (const k of ['normalize', 'dimensions']) if (own(o, k) !== undefined) fail('BAD_ARGUMENT', `options.${k} applies to dense embeddings`);
  const maxActiveDims = own(o, 'maxActiveDims');
  if (maxActiveDims !== undefined) {
    if (!out.outputs.has('sparse')) fail('BAD_ARGUMENT', "options.maxActiveDims applies to output 'sparse'");
    positiveInt(maxActiveDims, 'options.maxActiveDims');
  }
  const isQuery = own(o, 'isQuery');
  if (isQuery !== undefined) {
    if (typeof isQuery !== 'boolean') fail('BAD_ARGUMENT', 'options.isQuery must be true or false');
    if (!(out.outputs.has('colbert') && model.retrieval?.kind === 'colbert'))
      fail('BAD_ARGUMENT', "options.isQuery applies to a ColBERT model's output 'colbert' (bge-m3 encodes queries and documents alike)");
  }
  const pooling = own(o, 'pooling');
  if (pooling !== undefined && !POOLINGS.includes(pooling))
    fail('BAD_ARGUMENT', `options.pooling must be one of ${POOLINGS.join(', ')}, got ${JSON.stringify(pooling)}`);
  const normalize = own(o, 'normalize');
  if (normalize !== undefined && typeof normalize !== 'boolean') fail('BAD_ARGUMENT', 'options.normalize must be true or false');
  const dimensions = own(o, 'dimensions');
  if (dimensions !== undefined) positiveInt(dimensions, 'options.dimensions');
  const truncate = own(o, 'truncate') ?? true;
  if (typeof truncate !== 'boolean') fail('BAD_ARGUMENT', 'options.truncate must be true or false');
  const batchSize = own(o, 'batchSize') === undefined ? 32 : positiveInt(own(o, 'batchSize'), 'options.batchSize');
  const onProgress = own(o, 'onProgress');
  if (onProgress !== undefined && typeof onProgress !== 'function') fail('BAD_ARGUMENT', 'options.onProgress must be a function');
  const precision = own(o, 'precision') ?? 'float32';
  const precisions = call === 'embedStream' ? ['float32', 'binary', 'ubinary'] : ['float32', 'int8', 'uint8', 'binary', 'ubinary'];
  if (!precisions.includes(precision)) {
    fail(
      'BAD_ARGUMENT',
      `options.precision must be one of ${precisions.join(', ')}, got ${JSON.stringify(precision)}${call === 'embedStream' && ['int8', 'uint8'].includes(precision) ? ' (int8 and uint8 need ranges over the whole corpus: quantizeEmbeddings with ranges)' : ''}`,
    );
  }
  if (precision !== 'float32' && pooling === 'none') fail('BAD_ARGUMENT', "options.precision applies to sentence embeddings, not to pooling: 'none'");
  const chunking = own(o, 'chunking');
  let chunks = null;
  if (chunking !== undefined) {
    const c = readOptions(chunking, 'chunking', 'options.chunking');
    chunks = { maxTokens: own(c, 'maxTokens'), overlap: own(c, 'overlap'), pool: own(c, 'pool') ?? 'mean' };
    if (!CHUNK_POOLS.includes(chunks.pool)) fail('BAD_ARGUMENT', `options.chunking.pool must be one of ${CHUNK_POOLS.join(', ')}`);
    if (pooling === 'none') fail('BAD_ARGUMENT', "options.chunking embeds each chunk: it does not go with pooling: 'none'");
    if (chunks.pool === 'none' && precision !== 'float32')
      fail('BAD_ARGUMENT', "options.chunking.pool 'none' returns float chunks with their offsets: no precision");
  }
  return {
    pooling,
    normalize,
    dimensions,
    truncate,
    batchSize,
    onProgress,
    precision,
    chunks,
    prompt: resolvePrompt(model.recipe, own(o, 'prompt'), own(o, 'promptName')),
    maxLength: own(o, 'maxLength'),
    outputs: out.outputs,
    singleOutput: out.single,
    maxActiveDims,
    isQuery: isQuery ?? true, // PyLate's encode: is_query=True
  };
}

/** Python's str.isspace (what str.strip removes): JS's trim differs (it keeps \x1c-\x1f and \x85, strips \ufeff). */
const isPySpace = (c) =>
  (c >= 0x09 && c <= 0x0d) ||
  (c >= 0x1c && c <= 0x20) ||
  c === 0x85 ||
  c === 0xa0 ||
  c === 0x1680 ||
  (c >= 0x2000 && c <= 0x200a) ||
  c === 0x2028 ||
  c === 0x2029 ||
  c === 0x202f ||
  c === 0x205f ||
  c === 0x3000;

/** str.strip() as Transformer.tokenize applies it. */
function pyStrip(s) {
  let a = 0,
    b = s.length;
  while (a < b && isPySpace(s.charCodeAt(a))) a++;
  while (b > a && isPySpace(s.charCodeAt(b - 1))) b--;
  return s.slice(a, b);
}

/** Python's len(): code points (a surrogate pair counts once). */
function codePoints(s) {
  let n = s.length;
  for (let i = 0; i + 1 < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c < 0xdc00 && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n--;
      i++;
    }
  }
  return n;
}

/** A text as sentence-transformers tokenizes it: the prompt prepended, stripped, lowercased where the folder says. */
export const prepareText = (model, text, prompt = '') => {
  const t = pyStrip(prompt + text);
  return model.recipe.doLowerCase ? t.toLowerCase() : t;
};

/**
 * _get_prompt_length: the prompt tokenized alone as any text is (stripped,
 * truncated at maxLength), minus one when its last id is one of the
 * tokenizer's special tokens (all_special_ids: the pad, cls, sep, unk, mask,
 * bos, eos tokens the configs name).
 */
function promptLength(model, prompt, cut) {
  if (!prompt) return 0;
  const { ids } = model.tokenizer.encode(prepareText(model, prompt), { maxLength: cut });
  const t = model.tokenizer;
  const special = [t.padTokenId, t.clsTokenId, t.sepTokenId, t.unkTokenId, t.maskTokenId, t.bosTokenId, t.eosTokenId];
  return ids.length - (ids.length && special.includes(ids[ids.length - 1]) ? 1 : 0);
}

/**
 * A text's token windows at word boundaries: [{text, start, end, tokens}],
 * each at most maxTokens tokens with the special tokens, consecutive windows
 * sharing `overlap` tokens (0 by default), offsets into `text` (UTF-16).
 * A word is never split between windows unless it alone is longer than one.
 */
export function chunkText(model, text, options, where = 'chunk', limit = model.maxLength, why = 'maxLength') {
  if (typeof text !== 'string') fail('BAD_ARGUMENT', 'text must be a string');
  const o = options && typeof options === 'object' && !Array.isArray(options) && Object.hasOwn(options, 'pool') ? { ...options } : options;
  if (o && Object.hasOwn(o, 'pool')) delete o.pool; // chunking's pool is embed's business
  const c = readOptions(o, 'chunk', where === 'chunk' ? 'options' : 'options.chunking');
  const specials = model.tokenizer.encode('').ids.length;
  const maxTokens =
    own(c, 'maxTokens') === undefined ? limit : positiveInt(own(c, 'maxTokens'), `${where === 'chunk' ? 'options' : 'options.chunking'}.maxTokens`);
  if (!Number.isFinite(maxTokens)) fail('BAD_ARGUMENT', `${where}: this model has no length limit; give maxTokens`);
  if (maxTokens > limit) fail('SEQUENCE_TOO_LONG', `maxTokens = ${maxTokens}: this model takes at most ${limit} tokens (${why})`);
  const room = maxTokens - specials;
  if (room < 1) fail('BAD_ARGUMENT', `maxTokens = ${maxTokens} leaves no room besides the ${specials} special tokens`);
  const overlap = own(c, 'overlap') ?? 0;
  if (!Number.isSafeInteger(overlap) || overlap < 0 || overlap >= room)
    fail('BAD_ARGUMENT', `overlap must be an integer in [0, ${room - 1}], got ${String(overlap)}`);
  const { offsets } = model.tokenizer.encode(text, { addSpecialTokens: false });
  const n = offsets.length;
  if (n === 0) return [{ text, start: 0, end: text.length, tokens: specials }];
  // a token starts a word when a gap separates it from the one before
  const wordStart = Array.from({ length: n }, (_, i) => i === 0 || offsets[i][0] > offsets[i - 1][1]);
  const chunks = [];
  for (let s = 0; s < n;) {
    let e = Math.min(n, s + room);
    if (e < n) {
      // back off to the last word start inside the window, unless the window is one word
      let w = e;
      while (w > s && !wordStart[w]) w--;
      if (w > s) e = w;
    }
    const start = offsets[s][0],
      end = offsets[e - 1][1];
    chunks.push({ text: text.slice(start, end), start, end, tokens: e - s + specials });
    if (e >= n) break;
    // overlaps start on a word too: the last word start at or before e - overlap, else (a
    // window of few words) the first after it; inside a word longer than a window, e - overlap
    const want = Math.max(s + 1, e - overlap);
    let next = want;
    while (next > s + 1 && !wordStart[next]) next--;
    if (!wordStart[next]) {
      next = want;
      while (next < e && !wordStart[next]) next++;
      if (!wordStart[next]) next = want;
    }
    s = next;
  }
  return chunks;
}

/** The width of a call's vectors without running it: pooled modes x dModel, the Dense layers, dimensions. */
function outputWidth(model, s) {
  const modes = s.pooling ? [s.pooling] : model.recipe.pooling;
  let D = modes.length * model.encoder.config.dModel;
  for (const d of model.recipe.dense) D = d.outFeatures;
  if (s.dimensions !== undefined) {
    if (s.dimensions > D) fail('BAD_ARGUMENT', `options.dimensions must be an integer in [1, ${D}], got ${s.dimensions}`);
    D = s.dimensions;
  }
  return D;
}

/**
 * Yields the forward passes that embed `list` with settings `s`; returns
 * {data: Float32Array, shape} (float32; the caller quantizes), or for
 * pooling 'none' the last hidden states [B, T, dModel].
 */
export function* embedRun(model, list, s, first = 0) {
  // first: list[0]'s index in the caller's texts (embedStream's batches)
  const cut = Number.isFinite(s.maxLength) ? s.maxLength : undefined; // resolved by the caller (Pretrained)
  const { typeVocabSize } = model.encoder.config;
  const prompt = s.prompt,
    skip = model.recipe.includePrompt ? 0 : promptLength(model, prompt, cut);
  const prepared = list.map((t) => prepareText(model, t, prompt));
  // longest first, as encode's np.argsort(-lengths) (code points of prompt + text, before the strip), restored at the end
  const chars = list.map((t) => codePoints(prompt + t));
  const order = chars.map((_, i) => i).sort((a, b) => chars[b] - chars[a] || a - b);
  const modes = s.pooling && s.pooling !== 'none' ? [s.pooling] : model.recipe.pooling;
  const N = list.length,
    C = model.encoder.config.dModel;
  let D = s.pooling === 'none' ? 0 : outputWidth(model, s),
    data = null,
    T = 0;
  const rows = new Array(N); // pooling 'none': each text's [length, C] rows
  let done = 0;
  if (s.pooling !== 'none') data = new Float32Array(N * D);
  for (let b = 0; b < N; b += s.batchSize) {
    const idx = order.slice(b, b + s.batchSize);
    const enc = idx.map((i) => {
      if (!s.truncate) {
        const whole = model.tokenizer.encode(prepared[i]);
        if (cut !== undefined && whole.ids.length > cut) {
          fail(
            'SEQUENCE_TOO_LONG',
            `texts[${first + i}] has ${whole.ids.length} tokens; the model takes at most ${cut} (maxLength): truncate: true cuts it, chunking splits it`,
          );
        }
        return whole;
      }
      return model.tokenizer.encode(prepared[i], { maxLength: cut });
    });
    const opts = typeVocabSize > 0 ? { typeIds: enc.map((e) => e.typeIds) } : {};
    const hidden = yield [enc.map((e) => e.ids), opts];
    const lengths = enc.map((e) => e.ids.length);
    if (s.pooling === 'none') {
      const [, Tb] = hidden.shape;
      idx.forEach((i, k) => {
        rows[i] = hidden.data.slice(k * Tb * C, (k * Tb + lengths[k]) * C);
        T = Math.max(T, lengths[k]);
      });
    } else {
      const pooled = pool(hidden, lengths, modes, skip ? { promptLengths: skip } : {});
      const out = applyRecipe(pooled, model.recipe, {
        normalize: s.normalize,
        dimensions: s.dimensions,
        matryoshkaNorm: model.family === 'nomic-bert' && s.dimensions != null,
      });
      D = out.shape[1];
      idx.forEach((i, k) => data.set(out.data.subarray(k * D, (k + 1) * D), i * D));
    }
    done += idx.length;
    s.onProgress?.({ done, total: N });
  }
  if (s.pooling !== 'none') return { data, shape: [N, D] };
  const out = new Float32Array(N * T * C); // rows past a text's end 0
  rows.forEach((r, i) => out.set(r, i * T * C));
  return { data: out, shape: [N, T, C] };
}

/**
 * embed with chunking: every text's chunks embedded (one run over all of
 * them), then pooled per text (mean or max of the chunk vectors, normalised
 * again when the recipe normalises), or returned with their offsets (pool 'none').
 */
export function* embedChunkedRun(model, list, s) {
  // windows that fit the call's maxLength with the prompt prepended: a longer one would be truncated, its tail lost
  const prompt = s.prompt ? model.tokenizer.encode(prepareText(model, s.prompt), { addSpecialTokens: false }).ids.length : 0;
  const why = prompt ? `maxLength ${s.maxLength} less the prompt's ${prompt}` : 'maxLength';
  const pieces = list.map((t) => chunkText(model, t, s.chunks, 'chunking', s.maxLength - prompt, why));
  const flat = pieces.flat();
  const total = flat.length;
  const inner = { ...s, chunks: null, onProgress: s.onProgress && (({ done }) => s.onProgress({ done, total, unit: 'chunks' })) };
  const all = yield* embedRun(
    model,
    flat.map((p) => p.text),
    inner,
  );
  const D = all.shape[1];
  if (s.chunks.pool === 'none') {
    let at = 0;
    return pieces.map((ps) => {
      const emb = { data: all.data.slice(at * D, (at + ps.length) * D), shape: [ps.length, D] };
      const chunks = ps.map(({ text, start, end }) => ({ text, start, end }));
      at += ps.length;
      return { embeddings: emb, chunks };
    });
  }
  const data = new Float32Array(list.length * D);
  let at = 0;
  pieces.forEach((ps, i) => {
    const row = data.subarray(i * D, (i + 1) * D);
    for (let d = 0; d < D; d++) {
      let v = s.chunks.pool === 'max' ? -Infinity : 0;
      for (let k = 0; k < ps.length; k++) {
        const x = all.data[(at + k) * D + d];
        v = s.chunks.pool === 'max' ? Math.max(v, x) : v + x;
      }
      row[d] = s.chunks.pool === 'max' ? v : v / ps.length;
    }
    if (s.normalize ?? model.recipe.normalize) {
      let ss = 0;
      for (let d = 0; d < D; d++) ss += row[d] * row[d];
      const inv = 1 / Math.max(Math.sqrt(ss), 1e-12);
      for (let d = 0; d < D; d++) row[d] *= inv;
    }
    at += ps.length;
  });
  return { data, shape: [list.length, D] };
}
