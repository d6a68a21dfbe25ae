// swapformer embed <model> <input> -o <output>
//
// A corpus of any size embedded batch by batch with Pretrained.embedStream
// (memory bounded by a batch), written as it goes (outputs.js: whole records
// to <out>.partial, <out> complete at the end, --resume after a kill).
// Every text's vector is the one model.embed gives it in-process, bit for bit:
// the batches (their size, what they hold) never change a text's output.
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { loadPretrained } from '../../bindings/index.js';
import { UsageError } from './args.js';
import { CliError, Interrupted } from './errors.js';
import { INPUT_FORMATS, inputFormat, readRecords } from './inputs.js';
import { Sink, outputFormat, checkOutputLibrary } from './outputs.js';
import { progress } from './progress.js';
import { downloadProgress, HUB_OPTIONS, version } from './io.js';

const PRECISIONS = ['float32', 'int8', 'uint8', 'binary', 'ubinary'];

export const spec = {
  name: 'embed',
  summary: 'Embeds a corpus with a model, as sentence-transformers encode does, into a file of vectors.',
  args: [
    { name: 'model', help: 'a Hugging Face model folder, Hub id (owner/name) or URL, or a file written by swapformer convert' },
    { name: 'input', help: '.txt (a text a line), .jsonl (a JSON object a line), .csv (RFC 4180, a header row),\nor - for standard input (with --format)' },
  ],
  options: [
    { name: 'output', short: 'o', value: 'FILE', required: true,
      help: '.jsonl ({"id", "embedding"} a line), .npy (numpy [N, D]),\n.arrow (Arrow IPC file) or .parquet (columns id, embedding)' },
    { name: 'format', value: 'txt|jsonl|csv', choices: INPUT_FORMATS, help: "the input's format (default: from its extension; stdin: txt)" },
    { name: 'field', value: 'NAME', help: 'jsonl: the field holding the text (default: text)' },
    { name: 'column', value: 'NAME|INDEX', help: 'csv: the column holding the text, by header name or 0-based index\n(default: text, or the only column)' },
    { name: 'id-field', value: 'NAME', help: "jsonl field / csv column whose value is each record's id in the output\n(default: the record's number from 0)" },
    { name: 'prompt-name', value: 'NAME', help: "one of the model's prompts (config_sentence_transformers.json), e.g. query" },
    { name: 'prompt', value: 'TEXT', help: 'a prompt put before every text (wins over --prompt-name)' },
    { name: 'dtype', value: 'f32|q8', choices: ['f32', 'q8'], help: 'the weights: f32, or q8 (int8 kernels); default: as the model file is' },
    { name: 'threads', value: 'N', int: { min: 1 }, help: "threads of the model's forward pass (default: the machine's cores, at most 8)" },
    { name: 'batch-size', value: 'N', int: { min: 1 }, default: 32, help: 'texts per forward pass (the vectors do not depend on it)' },
    { name: 'normalize', negatable: true, help: "L2-normalize the vectors, or not (default: the model's recipe)" },
    { name: 'dimensions', value: 'N', int: { min: 1 }, help: 'keep the first N dimensions (Matryoshka), before normalizing' },
    { name: 'precision', value: 'float32|int8|uint8|binary|ubinary', choices: PRECISIONS, default: 'float32',
      help: 'as quantize_embeddings: int8 / uint8 with per-dimension ranges of the whole\ncorpus (set at the end), binary / ubinary as packed bits (D / 8 bytes)' },
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
    '.arrow and .parquet are written at the end with apache-arrow / hyparquet-writer, which swapformer',
    'does not install: npm install apache-arrow (or hyparquet-writer) where you run it.',
  ].join('\n'),
  examples: [
    'swapformer embed BAAI/bge-small-en-v1.5 corpus.txt -o corpus.npy',
    'swapformer embed minilm.safetensors docs.jsonl --field body --id-field doc_id -o docs.jsonl',
    'swapformer embed nomic-ai/nomic-embed-text-v1.5 papers.csv --column abstract --prompt-name search_document \\\n      --dimensions 256 -o papers.parquet',
    'cat queries.txt | swapformer embed minilm.safetensors - --precision binary -o queries.npy',
  ],
};

/** The options checked against each other before anything is read or loaded (a UsageError naming the clash). */
function checkOptions(input, out, o) {
  const format = inputFormat(input, o.format);
  if (!format) throw new UsageError(`cannot tell the format of '${input}' from its name: give --format txt, jsonl or csv`, spec);
  const output = outputFormat(out);
  if (!output) throw new UsageError(`cannot tell the output format of '${out}' from its name: end it in .jsonl, .npy, .arrow or .parquet`, spec);
  if (o.field !== undefined && format !== 'jsonl') throw new UsageError(`--field is for .jsonl input; ${format === 'csv' ? 'a csv column is --column' : 'a .txt line is the text'}`, spec);
  if (o.column !== undefined && format !== 'csv') throw new UsageError(`--column is for .csv input${format === 'jsonl' ? '; a jsonl field is --field' : ''}`, spec);
  if (o.idField !== undefined && format === 'txt') throw new UsageError('--id-field needs .jsonl or .csv input (a .txt line has no fields)', spec);
  if (o.idField !== undefined && output === 'npy') throw new UsageError('--id-field: a .npy holds the vectors alone (row n is record n): write .jsonl, .arrow or .parquet for ids', spec);
  return { format, output };
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

/** The texts of records, their ids kept in order in `ids` (shifted as the batches come back). */
async function* textsOf(records, skip, ids, withIds, signal) {
  let n = 0;
  for await (const r of records) {
    if (n++ < skip) continue;
    if (signal?.aborted) return;
    if (withIds) ids.push(r.id);
    yield r.text;
  }
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
  await checkPaths(input, out);
  await checkOutputLibrary(output);
  const readOpts = { format, field: o.field ?? 'text', column: o.column, idField: o.idField };
  const withIds = o.idField !== undefined;

  if (o.resume && !(await stat(`${out}.partial`).catch(() => null)) && (await stat(out).catch(() => null))) {
    process.stderr.write(`${out}: complete (no ${out}.partial to resume): nothing to do\n`);
    return 0;
  }
  // the input read through once first (not stdin): every record checked, and the total for the progress
  const total = input === '-' ? null : await countRecords(readRecords(input, readOpts), signal);

  const downloads = downloadProgress();
  const model = await loadPretrained(modelArg, {
    dtype: o.dtype, threads: o.threads, maxLength: o.maxLength, revision: o.revision, hubUrl: o.hubUrl, signal, onProgress: downloads.update,
  });
  downloads.done();
  try {
    const packed = o.precision === 'binary' || o.precision === 'ubinary';
    const embedOptions = { batchSize: o.batchSize, normalize: o.normalize, dimensions: o.dimensions, prompt: o.prompt, promptName: o.promptName };
    const D = model.embed([], embedOptions).shape[1]; // every option checked by the model before any text
    if (packed && D % 8) throw new CliError(`--precision ${o.precision} packs 8 dimensions a byte: these vectors have ${D}`);
    const cols = packed ? D / 8 : D;
    const settings = {
      swapformer: version(), model: await modelKey(modelArg), revision: o.revision ?? null, input: input === '-' ? '-' : path.resolve(input), ...readOpts,
      idField: o.idField ?? null, column: o.column ?? null, prompt: o.prompt ?? null, promptName: o.promptName ?? null, dtype: model.encoder.dtype,
      normalize: o.normalize ?? null, dimensions: o.dimensions ?? null, maxLength: model.maxLength, precision: o.precision, output, dimensionsOut: cols,
    };
    const sink = new Sink(out, { format: output, precision: o.precision, cols, withIds, settings });
    const skip = await sink.open({ resume: Boolean(o.resume) });
    if (total !== null && skip > total) throw new CliError(`--resume: ${out}.partial holds ${skip} records, ${input} has ${total}: not the same input`);
    const shown = progress({ total, start: skip, every: o.progressEvery, quiet: o.quiet });
    if (skip > 0 && !o.quiet) process.stderr.write(`resuming: ${skip} records already in ${out}.partial\n`);
    const ids = [];
    try {
      const texts = textsOf(readRecords(input, readOpts), skip, ids, withIds, signal);
      for await (const { index, embeddings } of model.embedStream(texts, { ...embedOptions, precision: packed ? o.precision : 'float32' })) {
        const n = embeddings.shape[0];
        const batchIds = withIds ? ids.splice(0, n) : Array.from({ length: n }, (_, k) => skip + index + k);
        await sink.add(batchIds, embeddings);
        shown.tick(n);
        if (signal?.aborted) break;
      }
      if (signal?.aborted) throw signal.reason;
    } catch (e) {
      await sink.close();
      if (e instanceof Interrupted) {
        process.stderr.write(`swapformer: ${e.message}: ${sink.count} records in ${out}.partial; the same command with --resume continues\n`);
        e.reported = true;
      }
      throw e;
    }
    shown.end();
    if (total !== null && sink.count !== total) throw new CliError(`${input}: read ${sink.count} records, counted ${total} before: the input changed while it was read`);
    await sink.finish();
    if (!o.quiet) process.stderr.write(`${out}: ${sink.count} records x ${cols} ${packed ? 'bytes' : 'dimensions'}, ${o.precision}\n`);
    return 0;
  } finally {
    model.dispose();
  }
}
