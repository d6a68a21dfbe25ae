// swapformer embed <model> <input> -o <output>
//
// A corpus of any size embedded batch by batch with Pretrained.embedStream
// (memory bounded by a batch), written as it goes (outputs.js: whole records
// to <out>.partial, <out> complete at the end, --resume after a kill).
// Every text's vector is the one model.embed gives it in-process, bit for bit:
// the batches (their size, what they hold) never change a text's output.
// --resume continues only from the same input (its size, time and the digest
// of the bytes the records were made from) and the same weights (their digest).
import { createHash } from 'node:crypto';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { loadPretrained } from '../../bindings/index.js';
import { UsageError } from './args.js';
import { CliError, Interrupted } from './errors.js';
import { INPUT_FORMATS, inputFormat, readRecords } from './inputs.js';
import { Sink, outputFormat, checkOutputLibrary, partialFiles, savedSettings } from './outputs.js';
import { progress } from './progress.js';
import { count, downloadProgress, fileId, sameFile, stdinId, HUB_OPTIONS, version } from './io.js';

const PRECISIONS = ['float32', 'int8', 'uint8', 'binary', 'ubinary'];

export const spec = {
  name: 'embed',
  summary: 'Embeds a corpus with a model, as sentence-transformers encode does, into a file of vectors (dense, sparse or ColBERT).',
  args: [
    { name: 'model', help: 'a Hugging Face model folder, Hub id (owner/name) or URL, or a file written by swapformer convert' },
    { name: 'input', help: '.txt (a text a line), .jsonl (a JSON object a line), .csv (RFC 4180, a header row),\nor - for standard input (with --format)' },
  ],
  options: [
    {
      name: 'output',
      short: 'o',
      value: 'FILE',
      required: true,
      help:
        '.jsonl ({"id", "embedding"} a line), .npy (numpy [N, D]),\n.arrow (Arrow IPC file) or .parquet (columns id, embedding);\n' +
        'sparse and colbert vectors: .jsonl or .parquet',
    },
    {
      name: 'vectors',
      value: 'dense|sparse|colbert',
      choices: ['dense', 'sparse', 'colbert'],
      help: "dense (one vector a text), sparse (SPLADE, bge-m3: {indices, values}) or colbert\n(a vector a token: ColBERT, bge-m3); default: the model's own",
    },
    { name: 'query', help: "colbert: encode the texts as queries (PyLate's is_query; default: documents)" },
    { name: 'max-active-dims', value: 'N', int: { min: 1 }, help: 'sparse: keep the N largest weights of each vector' },
    { name: 'format', value: 'txt|jsonl|csv', choices: INPUT_FORMATS, help: "the input's format (default: from its extension; stdin: txt)" },
    { name: 'field', value: 'NAME', help: 'jsonl: the field holding the text (default: text)' },
    { name: 'column', value: 'NAME|INDEX', help: 'csv: the column holding the text, by header name or 0-based index\n(default: text, or the only column)' },
    { name: 'id-field', value: 'NAME', help: "jsonl field / csv column whose value is each record's id in the output\n(default: the record's number from 0)" },
    { name: 'prompt-name', value: 'NAME', help: "one of the model's prompts (config_sentence_transformers.json), e.g. query" },
    { name: 'prompt', value: 'TEXT', help: 'a prompt put before every text (wins over --prompt-name)' },
    { name: 'dtype', value: 'f32|q8', choices: ['f32', 'q8'], help: 'the weights: f32, or q8 (int8 kernels); default: as the model file is' },
    {
      name: 'threads',
      value: 'N',
      int: { min: 1 },
      help: "threads of the model's forward pass (default: the physical cores with the native backend, else the cores, at most 8)",
    },
    { name: 'batch-size', value: 'N', int: { min: 1 }, default: 32, help: 'texts per forward pass (the vectors do not depend on it)' },
    { name: 'normalize', negatable: true, help: "L2-normalize the vectors, or not (default: the model's recipe)" },
    { name: 'dimensions', value: 'N', int: { min: 1 }, help: 'keep the first N dimensions (Matryoshka), before normalizing' },
    {
      name: 'precision',
      value: 'float32|int8|uint8|binary|ubinary',
      choices: PRECISIONS,
      default: 'float32',
      help: 'as quantize_embeddings: int8 / uint8 with per-dimension ranges of the whole\ncorpus (set at the end), binary / ubinary as packed bits (D / 8 bytes)',
    },
    { name: 'max-length', value: 'N', int: { min: 2 }, help: "tokens per text, longer ones truncated (default: the model's limit)" },
    ...HUB_OPTIONS,
    { name: 'resume', help: 'continue an interrupted run from <output>.partial (the same settings are required)' },
    { name: 'progress-every', value: 'N', int: { min: 1 }, default: 1000, help: 'without a terminal: a progress line every N texts (and every 10 s)' },
    { name: 'quiet', short: 'q', help: 'no progress display' },
  ],
  details: [
    'The output appears complete at the end (renamed into place); until then the records are in',
    '<output>.partial, written a whole record at a time, with the settings in <output>.partial.json.',
    'After a kill or Ctrl-C, the same command with --resume continues where it stopped (a record cut',
    'by the kill is dropped and computed again); the result is the bytes an uninterrupted run writes.',
    'int8 / uint8 keep float32 rows until the end, then quantize with the ranges of the whole corpus.',
    "--resume refuses an input or weights that changed since (the input's size, time and the SHA-256 of",
    'the bytes the records were made from; the SHA-256 of the weights as loaded), naming what changed.',
    '.arrow and .parquet are written at the end with packages swapformer does not install: .arrow needs',
    'apache-arrow (npm install apache-arrow), .parquet needs hyparquet-writer (npm install hyparquet-writer).',
    '--vectors sparse writes {"id", "indices", "values"} lines (.parquet: columns id, indices, values);',
    '--vectors colbert writes {"id", "embedding": [[...], ...]} lines, a vector a kept token (.parquet:',
    'an embedding column of lists of vectors).',
  ].join('\n'),
  examples: [
    'swapformer embed BAAI/bge-small-en-v1.5 corpus.txt -o corpus.npy',
    'swapformer embed minilm.safetensors docs.jsonl --field body --id-field doc_id -o docs.jsonl',
    'swapformer embed nomic-ai/nomic-embed-text-v1.5 papers.csv --column abstract --prompt-name search_document \\\n      --dimensions 256 -o papers.parquet',
    'cat queries.txt | swapformer embed minilm.safetensors - --precision binary -o queries.npy',
    'swapformer embed naver/splade-v3-distilbert docs.jsonl --vectors sparse --max-active-dims 256 -o docs-sparse.jsonl',
    'swapformer embed answerdotai/answerai-colbert-small-v1 docs.txt --vectors colbert -o docs-colbert.parquet',
  ],
};

/** The options checked against each other before anything is read or loaded (a UsageError naming the clash). */
function checkOptions(input, out, o) {
  const format = inputFormat(input, o.format);
  if (!format) throw new UsageError(`cannot tell the format of '${input}' from its name: give --format txt, jsonl or csv`, spec);
  const output = outputFormat(out);
  if (!output) throw new UsageError(`cannot tell the output format of '${out}' from its name: end it in .jsonl, .npy, .arrow or .parquet`, spec);
  if (o.field !== undefined && format !== 'jsonl')
    throw new UsageError(`--field is for .jsonl input; ${format === 'csv' ? 'a csv column is --column' : 'a .txt line is the text'}`, spec);
  if (o.column !== undefined && format !== 'csv')
    throw new UsageError(`--column is for .csv input${format === 'jsonl' ? '; a jsonl field is --field' : ''}`, spec);
  if (o.idField !== undefined && format === 'txt') throw new UsageError('--id-field needs .jsonl or .csv input (a .txt line has no fields)', spec);
  if (o.idField !== undefined && output === 'npy')
    throw new UsageError('--id-field: a .npy holds the vectors alone (row n is record n): write .jsonl, .arrow or .parquet for ids', spec);
  if (o.dimensions !== undefined && (o.precision === 'binary' || o.precision === 'ubinary') && o.dimensions % 8)
    throw new UsageError(`--precision ${o.precision} packs 8 dimensions a byte: --dimensions ${o.dimensions} is not a multiple of 8`, spec);
  if (o.query && o.vectors !== undefined && o.vectors !== 'colbert')
    throw new UsageError("--query applies to --vectors colbert (a ColBERT model's queries)", spec);
  if (o.maxActiveDims !== undefined && o.vectors !== undefined && o.vectors !== 'sparse')
    throw new UsageError('--max-active-dims applies to --vectors sparse', spec);
  if (o.vectors === 'sparse' || o.vectors === 'colbert') checkVectorOptions(o.vectors, output, o);
  return { format, output };
}

/** Sparse and ColBERT vectors have no fixed width: JSON lines or Parquet, float32, no dense options. */
function checkVectorOptions(vectors, output, o) {
  if (output !== 'jsonl' && output !== 'parquet')
    throw new UsageError(`--vectors ${vectors} has no fixed width: write .jsonl or .parquet, not .${output}`, spec);
  for (const [flag, set] of [
    ['--dimensions', o.dimensions !== undefined],
    ['--normalize', o.normalize !== undefined],
    ['--precision', o.precision !== 'float32'],
  ])
    if (set) throw new UsageError(`${flag} applies to dense vectors, not to --vectors ${vectors}`, spec);
}

/**
 * Refuses (a usage error naming both) an output, or a file the run writes
 * beside it, that is the input: the same file after links (symlinks, hard
 * links: the same device and inode, or the same real path), standard input
 * redirected from it included. The temporary file of the end is created new
 * (it never opens an existing file), so it cannot be the input.
 */
async function refuseInputAsOutput(input, out) {
  const inputId = input === '-' ? stdinId() : await fileId(input);
  if (!inputId) return;
  const where = input === '-' ? 'the input (standard input reads it)' : `the input ${input}`;
  if (sameFile(await fileId(out), inputId))
    throw new UsageError(`the output ${out} is ${where}: embed would overwrite its own input; write the output to another file`, spec);
  for (const f of Object.values(partialFiles(out))) {
    if (sameFile(await fileId(f), inputId))
      throw new UsageError(
        `the output ${out} keeps its partial records in ${f}, which is ${where}: embed would overwrite its own input; write the output to another file`,
        spec,
      );
  }
}

/** The file-system checks that make a later failure unlikely: the input a file, the output's folder there. */
async function checkPaths(input, out) {
  if (input !== '-') {
    const info = await stat(input); // ENOENT: one line naming it
    if (!info.isFile()) throw new CliError(`${input}: is ${info.isDirectory() ? 'a directory' : 'not a regular file'}, not a corpus file`);
  }
  const dir = await stat(path.dirname(path.resolve(out))).catch(() => null);
  if (!dir?.isDirectory()) throw new CliError(`${path.dirname(out)}: no such directory (for the output ${out})`);
  const target = await stat(out).catch(() => null);
  if (target?.isDirectory()) throw new CliError(`${out}: is a directory, not a file`);
}

/** A model argument as the settings record it: a local path absolute, anything else as given. */
async function modelKey(model) {
  return (await stat(model).catch(() => null)) ? path.resolve(model) : model;
}

/**
 * The SHA-256 of the input's first bytes: feed(chunk) gets every byte read,
 * in order; advance(offset) hashes them up to offset; state() is the hash so
 * far (a copy: digest('hex') later).
 */
class InputDigest {
  #hash = createHash('sha256');
  #queue = [];
  #hashed = 0;
  feed = (chunk) => {
    this.#queue.push(chunk);
  };
  advance(offset) {
    while (this.#hashed < offset) {
      const c = this.#queue[0];
      const take = Math.min(c.length, offset - this.#hashed);
      this.#hash.update(take === c.length ? c : c.subarray(0, take));
      this.#hashed += take;
      if (take === c.length) this.#queue.shift();
      else this.#queue[0] = c.subarray(take);
    }
  }
  state() {
    return this.#hash.copy();
  }
}

/**
 * The texts of records after the `resumed.records` the partial output holds,
 * whose input bytes are checked against the checkpoint's (their length and
 * SHA-256), verified() called once they are; each text's {id, end, state}
 * pushed on `queue` (taken off as the batches come back: end and state say
 * what of the input the records up to it were made from).
 */
async function* textsOf(records, { resumed, digest, queue, label, partial, verified, signal }) {
  let n = 0;
  const skip = resumed.records;
  for await (const r of records) {
    digest.advance(r.end);
    if (n < skip) {
      if (++n === skip && (r.end !== resumed.bytes || digest.state().digest('hex') !== resumed.sha256))
        throw new CliError(
          `--resume: the first ${count(skip, 'record')} of ${label} are not the ones ${partial} was made from (${r.end === resumed.bytes ? `the SHA-256 of their ${count(r.end, 'byte')} differs` : `${count(r.end, 'byte')} now, ${resumed.bytes} then`}): the input changed; delete ${partial} to start over`,
        );
      if (n === skip) verified();
      continue;
    }
    if (signal?.aborted) return;
    queue.push({ id: r.id, end: r.end, state: digest.state() });
    n++;
    yield r.text;
  }
  if (n < skip) throw new CliError(`--resume: ${partial} holds ${count(skip, 'record')}, ${label} has ${n}: not the same input`);
}

/**
 * The SHA-256 of what makes a model's vectors, as loaded: the encoder's config
 * and every weight (name, shape, float32 values; a q8 encoder's as it runs
 * them), the recipe with its Dense layers' weights, and the tokenizer's
 * vocabulary. Whatever the source (a folder, a file, a Hub id, a URL).
 */
function modelDigest(model) {
  const hash = createHash('sha256');
  const bytes = (a) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
  hash.update(`${JSON.stringify(model.encoder.config)}\n`);
  const weights = model.encoder.getWeights(),
    shapes = model.encoder.weightShapes();
  for (const [name, shape] of Object.entries(shapes)) {
    hash.update(`${name} ${shape.join('x')}\n`);
    hash.update(bytes(weights[name]));
  }
  const { dense, ...recipe } = model.recipe;
  hash.update(`${JSON.stringify(recipe)}\n`);
  for (const d of dense) {
    hash.update(`dense ${d.weight.length} ${d.bias?.length ?? 0} ${d.activation}\n`);
    hash.update(bytes(d.weight));
    if (d.bias) hash.update(bytes(d.bias));
  }
  const t = model.tokenizer;
  for (let id = 0; id < t.vocabSize; id++) hash.update(`${t.idToToken(id)}\n`);
  return hash.digest('hex');
}

/** An input's size and modification time (null for standard input): what a resumed run checks first. */
async function inputStamp(input) {
  if (input === '-') return { inputSize: null, inputModified: null };
  const info = await stat(input);
  return { inputSize: info.size, inputModified: info.mtimeMs };
}

/** Refuses to resume from an input whose size or modification time changed since the partial output was started. */
function checkInputStamp(saved, now, input, partial) {
  const changed =
    saved.inputSize !== now.inputSize
      ? `its size was ${count(saved.inputSize, 'byte')}, now ${now.inputSize}`
      : saved.inputModified !== now.inputModified
        ? `it was modified at ${new Date(saved.inputModified).toISOString()}, now at ${new Date(now.inputModified).toISOString()}`
        : null;
  if (changed !== null && saved.input === path.resolve(input))
    throw new CliError(
      `--resume: ${input} changed since ${partial} was started (${changed}): its records may not be the ones in ${partial}; delete ${partial} to start over`,
    );
}

// the flags of the options the library names (options.dimensions -> --dimensions)
const FLAGS = {
  maxActiveDims: '--max-active-dims',
  isQuery: '--query',
  output: '--vectors',
  dimensions: '--dimensions',
  promptName: '--prompt-name',
  prompt: '--prompt',
  maxLength: '--max-length',
  batchSize: '--batch-size',
  normalize: '--normalize',
  precision: '--precision',
  threads: '--threads',
  dtype: '--dtype',
  revision: '--revision',
  hubUrl: '--hub-url',
};

/** A library error with the options it names said as the command's flags. */
function asFlags(e) {
  if (e?.name === 'SwapformerError' && typeof e.message === 'string') e.message = e.message.replace(/\boptions\.(\w+)( =)?/g, (m, k) => FLAGS[k] ?? m); // 'options.maxLength = 9' -> '--max-length 9'
  return e;
}

async function countRecords(records, signal) {
  let n = 0;
  for await (const _ of records) {
    if ((++n & 0x3fff) === 0 && signal?.aborted) throw signal.reason;
  }
  return n;
}

export async function run({ args, options: o }, { signal }) {
  const { model: modelArg, input } = args;
  const out = o.output;
  const { format, output } = checkOptions(input, out, o);
  await refuseInputAsOutput(input, out);
  await checkPaths(input, out);
  await checkOutputLibrary(output);
  const readOpts = { format, field: o.field ?? 'text', column: o.column, idField: o.idField };
  const withIds = o.idField !== undefined;
  const { partial } = partialFiles(out);
  const label = input === '-' ? '<stdin>' : input;

  if (o.resume && !(await stat(partial).catch(() => null)) && (await stat(out).catch(() => null))) {
    process.stderr.write(`${out}: complete (no ${partial} to resume): nothing to do\n`);
    return 0;
  }
  // resuming: the input as it was when the partial output was started (its size and time; its bytes are checked as they are read again)
  const stamp = await inputStamp(input);
  const saved = o.resume ? await savedSettings(out) : null;
  if (saved && !['weights', 'inputSize', 'inputModified'].every((k) => Object.hasOwn(saved, k)))
    throw new CliError(
      `--resume: ${partial} was written by an earlier swapformer, which kept no record of its input and weights; delete ${partial} to start over`,
    );
  if (saved) checkInputStamp(saved, stamp, input, partial);
  // the input read through once first (not stdin): every record checked, and the total for the progress
  const total = input === '-' ? null : await countRecords(readRecords(input, readOpts), signal);

  const downloads = downloadProgress();
  let model;
  try {
    model = await loadPretrained(modelArg, {
      dtype: o.dtype,
      threads: o.threads,
      maxLength: o.maxLength,
      revision: o.revision,
      hubUrl: o.hubUrl,
      signal,
      onProgress: downloads.update,
    });
  } catch (e) {
    throw asFlags(e);
  }
  downloads.done();
  try {
    const vectors = o.vectors ?? model.defaultOutput;
    if (!o.vectors && vectors !== 'dense') checkVectorOptions(vectors, output, o);
    if (o.query && vectors !== 'colbert') throw new UsageError(`--query applies to ColBERT vectors; this model gives ${vectors} vectors`, spec);
    if (o.maxActiveDims !== undefined && vectors !== 'sparse')
      throw new UsageError(`--max-active-dims applies to sparse vectors; this model gives ${vectors} vectors`, spec);
    if (!model.outputs.includes(vectors))
      throw new CliError(`--vectors ${vectors}: this model gives ${model.outputs.join(', ')} vectors (${model.retrieval?.kind ?? model.task})`);
    const packed = o.precision === 'binary' || o.precision === 'ubinary';
    const embedOptions =
      vectors === 'dense'
        ? { batchSize: o.batchSize, normalize: o.normalize, dimensions: o.dimensions, prompt: o.prompt, promptName: o.promptName }
        : {
            batchSize: o.batchSize,
            prompt: o.prompt,
            promptName: o.promptName,
            output: vectors,
            ...(vectors === 'sparse' && o.maxActiveDims !== undefined ? { maxActiveDims: o.maxActiveDims } : {}),
            ...(vectors === 'colbert' && model.retrieval?.kind === 'colbert' ? { isQuery: Boolean(o.query) } : {}),
          };
    if (o.query && model.retrieval?.kind !== 'colbert')
      throw new CliError('--query: this model encodes queries and documents alike (bge-m3), or is no ColBERT model');
    let D = null;
    try {
      if (vectors === 'dense') {
        const width = model.embed([], { ...embedOptions, dimensions: undefined }).shape[1]; // every option checked by the model before any text
        if (o.dimensions > width) throw new UsageError(`--dimensions ${o.dimensions} is more than the model's ${count(width, 'dimension')}`, spec);
        D = model.embed([], embedOptions).shape[1];
      } else model.embed([], embedOptions); // the options checked before any text
    } catch (e) {
      throw asFlags(e);
    }
    if (packed && D % 8) throw new CliError(`--precision ${o.precision} packs 8 dimensions a byte: these vectors have ${D}`);
    const cols = vectors === 'dense' ? (packed ? D / 8 : D) : null;
    const weights = modelDigest(model);
    if (saved && saved.weights !== weights && saved.model === (await modelKey(modelArg)))
      throw new CliError(
        `--resume: the model's weights changed since ${partial} was started (their SHA-256 was ${String(saved.weights).slice(0, 12)}..., now ${weights.slice(0, 12)}...): its records were made with the old ones; delete ${partial} to start over`,
      );
    const settings = {
      swapformer: version(),
      model: await modelKey(modelArg),
      weights,
      revision: o.revision ?? null,
      input: input === '-' ? '-' : path.resolve(input),
      ...stamp,
      ...readOpts,
      idField: o.idField ?? null,
      column: o.column ?? null,
      prompt: o.prompt ?? null,
      promptName: o.promptName ?? null,
      dtype: model.encoder.dtype,
      normalize: o.normalize ?? null,
      dimensions: o.dimensions ?? null,
      maxLength: model.maxLength,
      precision: o.precision,
      output,
      dimensionsOut: cols,
      ...(vectors !== 'dense' ? { vectors, query: Boolean(o.query), maxActiveDims: o.maxActiveDims ?? null } : {}),
    };
    const sink = new Sink(out, { format: output, precision: o.precision, cols, withIds, settings, record: vectors });
    const resumed = await sink.open({ resume: Boolean(o.resume) });
    const skip = resumed.records;
    try {
      if (total !== null && skip > total) throw new CliError(`--resume: ${partial} holds ${count(skip, 'record')}, ${input} has ${total}: not the same input`);
      const shown = progress({ total, start: skip, every: o.progressEvery, quiet: o.quiet });
      const digest = new InputDigest();
      const queue = [];
      const verified = () => !o.quiet && process.stderr.write(`resuming: ${count(skip, 'record')} already in ${partial}\n`);
      const texts = textsOf(readRecords(input, readOpts, digest.feed), { resumed, digest, queue, label, partial, verified, signal });
      const streamOptions = vectors === 'dense' ? { ...embedOptions, precision: packed ? o.precision : 'float32' } : embedOptions;
      for await (const { index, embeddings } of model.embedStream(texts, streamOptions)) {
        const n = vectors === 'dense' ? embeddings.shape[0] : embeddings.length;
        const batch = queue.splice(0, n);
        const ids = withIds ? batch.map((b) => b.id) : batch.map((_, k) => String(skip + index + k));
        await sink.add(ids, embeddings, { bytes: batch[n - 1].end, sha256: batch[n - 1].state.digest('hex') });
        shown.tick(n);
        if (signal?.aborted) break;
      }
      if (signal?.aborted) throw signal.reason;
      shown.end();
      if (total !== null && sink.count !== total)
        throw new CliError(`${input}: read ${count(sink.count, 'record')}, counted ${total} before: the input changed while it was read`);
    } catch (e) {
      await sink.close();
      if (e instanceof Interrupted) {
        process.stderr.write(`swapformer: ${e.message}: ${count(sink.count, 'record')} in ${partial}; the same command with --resume continues\n`);
        e.reported = true;
      }
      throw e;
    }
    await sink.finish();
    if (!o.quiet)
      process.stderr.write(
        vectors === 'dense'
          ? `${out}: ${count(sink.count, 'record')} x ${count(cols, packed ? 'byte' : 'dimension')}, ${o.precision}\n`
          : `${out}: ${count(sink.count, 'record')}, ${vectors} vectors\n`,
      );
    return 0;
  } finally {
    model.dispose();
  }
}
