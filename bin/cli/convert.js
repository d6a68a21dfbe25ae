// swapformer convert <source> <out.safetensors> [--dtype f32|f16|q8|source]
//
// <source>: a Hugging Face model folder, its URL, a Hub id, or a swapformer
// model file written by convert (re-converted to another dtype: its metadata
// kept, its tensors written again). Writes one model file with the tokenizer
// and the recipe inside: loadPretrained(out) gives the same embeddings (f32:
// identical; f16: within half-precision rounding; q8: as loadPretrained(...,
// {dtype: 'q8'})), and loadModel(out) the bare encoder. Everything it embeds
// is parsed first as loadPretrained will (the tokenizer built), the file about
// to be written is loaded as loadModel loads it (the core's own checks of the
// config and every tensor), and it is written beside <out> and renamed over
// it: a failed write never leaves a truncated file in place of a good one.
// <out> may not be a file the conversion reads (the source file, or any file
// of the source folder), after links: it is refused before anything is read.
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { SwapformerError, Tokenizer, loadModel } from '../../bindings/index.js';
import { readCheckpoint } from '../../bindings/pretrained/checkpoint.js';
import { writeModelFile, writeQ8ModelFile, metadataStrings, pretrainedMetadata, swapformerMetadata } from '../../bindings/pretrained/model-file.js';
import { parseSafetensors } from '../../bindings/pretrained/safetensors.js';
import { readFile } from '../../bindings/pretrained/files.js';
import { CliError } from './errors.js';
import { UsageError } from './args.js';
import { count, fileId, sameFile, writeAtomically, downloadProgress, isLocalFile, HUB_OPTIONS } from './io.js';

export const spec = {
  name: 'convert',
  summary:
    'Writes a Hugging Face checkpoint, or a model file convert wrote, as one swapformer model file\n(safetensors with the tokenizer and the embedding recipe in its metadata).',
  args: [
    {
      name: 'source',
      help: 'a Hugging Face model folder, its URL, a Hub id (owner/name),\nor a .safetensors file written by swapformer convert (converted again to --dtype)',
    },
    { name: 'out.safetensors', help: 'the file to write (written beside it, then renamed over it);\nnot the source, nor a file of the source folder' },
  ],
  options: [
    {
      name: 'dtype',
      value: 'f32|f16|q8|source',
      choices: ['f32', 'f16', 'q8', 'source'],
      default: 'f32',
      help: "f32: float32, loads to bit-identical embeddings; f16: half the size, within half-precision\nrounding; q8: int8 Linear weights and token table with a scale per row (about a quarter of f32,\nruns with int8 kernels); source: keep the checkpoint's F32 / F16 / BF16 tensors",
    },
    ...HUB_OPTIONS,
  ],
  details: [
    'Downloads go to the Hugging Face cache ($HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub);',
    '$HF_TOKEN authenticates, HF_HUB_OFFLINE=1 reads the cache alone.',
    'Only safetensors weights are read: a folder with pytorch_model.bin only, or ONNX only (model.onnx,',
    'onnx/*.onnx), is refused with the way to get safetensors.',
  ].join('\n'),
  examples: [
    'swapformer convert sentence-transformers/all-MiniLM-L6-v2 minilm.safetensors',
    'swapformer convert ./my-model my-model-q8.safetensors --dtype q8',
    'swapformer convert minilm.safetensors minilm-f16.safetensors --dtype f16   # a converted file, again',
  ],
};

/** Throws unless loadPretrained can read the checkpoint's metadata (recipe, configs) and build its tokenizer. */
function checkEmbedded(ck) {
  const m = pretrainedMetadata(metadataStrings(ck.metadata), { dModel: ck.config.dModel, folder: ck.label, head: ck.config.head });
  Tokenizer.fromJSON(m.tokenizer, { tokenizerConfig: m.tokenizerConfig, specialTokensMap: m.specialTokensMap });
}

/** The files of a local folder and its sub-folders (links to files followed, to folders not), as far as `depth` levels and `most` entries. */
async function* filesOf(dir, depth = 4, most = { entries: 100_000 }) {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const e of entries) {
    if (--most.entries < 0) return;
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (depth > 1) yield* filesOf(p, depth - 1, most);
    } else yield p;
  }
}

/**
 * Refuses (a usage error naming both) an output that is a file the conversion
 * reads: the source file itself, or any file of the source folder (its
 * weights, configs, tokenizer, module folders), the same file after links
 * (the same device and inode, or the same real path). Nothing is read yet.
 */
async function refuseSourceAsOutput(source, out) {
  const target = await fileId(out);
  if (!target) return; // a new file: nothing it could overwrite
  const info = await stat(source).catch(() => null);
  if (info?.isFile()) {
    if (sameFile(target, await fileId(source)))
      throw new UsageError(`the output ${out} is the source ${source}: convert would overwrite the file it reads; write the output to another file`, spec);
    return;
  }
  if (!info?.isDirectory()) return; // a Hub id or a URL
  for await (const f of filesOf(source)) {
    if (sameFile(target, await fileId(f))) {
      const which = path.resolve(f) === path.resolve(out) ? '' : ` (the same file as ${f})`;
      throw new UsageError(
        `the output ${out} is a file of the source folder ${source}${which}: convert would overwrite what it reads; write the output outside the folder`,
        spec,
      );
    }
  }
}

/**
 * Throws unless the model file loads: loadModel's checks, the core's own
 * (the config's fields and limits, every tensor's name and shape), refused as
 * loadPretrained refuses the checkpoint (UNSUPPORTED_MODEL naming it).
 */
async function checkLoads(bytes, ck) {
  let encoder;
  try {
    encoder = await loadModel(bytes, { threads: 1 });
  } catch (e) {
    if (e?.name === 'SwapformerError' && (e.code === 'BAD_WEIGHTS' || e.code === 'BAD_CONFIG'))
      throw new SwapformerError('UNSUPPORTED_MODEL', `${ck.label}: the checkpoint does not fit the ${ck.family} layout swapformer knows: ${e.message}`);
    throw e;
  }
  encoder.dispose();
}

/** A local folder holding ONNX weights and no safetensors: refused, naming what it has (ONNX is an export, not a source). */
async function refuseOnnxOnly(dir) {
  const names = async (d) => await readdir(d).catch(() => []);
  const top = await names(dir);
  const safetensors = (list) => list.some((f) => f.endsWith('.safetensors') || f === 'model.safetensors.index.json');
  if (safetensors(top) || top.includes('pytorch_model.bin') || top.includes('pytorch_model.bin.index.json')) return;
  const onnx = [...top.filter((f) => f.endsWith('.onnx')), ...(await names(path.join(dir, 'onnx'))).filter((f) => f.endsWith('.onnx')).map((f) => `onnx/${f}`)];
  if (!onnx.length) return;
  throw new CliError(
    `${dir}: holds ONNX weights only (${onnx.slice(0, 3).join(', ')}${onnx.length > 3 ? ', ...' : ''}): ONNX is not a source format; convert reads safetensors. ` +
      'Get the model.safetensors of the checkpoint (huggingface-cli download <id> --include "*.safetensors" "*.json", ' +
      'or in Python AutoModel.from_pretrained(...).save_pretrained(folder, safe_serialization=True))',
  );
}

/**
 * A swapformer model file as a checkpoint: its config, tensors and metadata
 * (every field as the file keeps it), ready to be written in another dtype.
 * A q8 file is dequantized by loading it as f32 first (its scales applied).
 */
async function readConverted(file, bytes, dtype) {
  const meta = swapformerMetadata(bytes);
  if (!meta)
    throw new CliError(
      `${file}: a .safetensors file that swapformer convert did not write; pass the model's folder (with config.json and tokenizer.json) instead`,
    );
  if (!meta.tokenizer || !meta.recipe)
    throw new CliError(`${file}: a bare encoder file (no tokenizer and recipe in its metadata): convert its Hugging Face folder instead`);
  const { format: _f, config: _c, dtype: _d, ...metadata } = meta;
  const wasQ8 = meta.dtype === 'q8';
  let saved = parseSafetensors(bytes, file);
  if (wasQ8 && dtype !== 'q8') {
    // int8 rows and scales -> float32 (the values q8 runs with)
    const encoder = await loadModel(bytes, { dtype: 'f32', threads: 1 });
    try {
      saved = parseSafetensors(encoder.save(), file);
    } finally {
      encoder.dispose();
    }
  }
  const tensors = [...saved.tensors].map(([name, t]) => ({ name, dtype: t.dtype, shape: t.shape, bytes: t.bytes }));
  let config;
  try {
    config = JSON.parse(meta.config);
  } catch {
    throw new CliError(`${file}: __metadata__.config is not valid JSON`);
  }
  return { label: file, family: meta.family, config, tensors, metadata, wasQ8 };
}

export async function run({ args, options }, { signal }) {
  const { source, out } = args;
  const dtype = options.dtype;
  if (path.extname(out).toLowerCase() !== '.safetensors')
    throw new UsageError(`the output is a .safetensors file, got '${out}' (loadPretrained knows a model file by its name)`, spec);
  await refuseSourceAsOutput(source, out);
  let ck, bytes;
  if (await isLocalFile(source)) {
    if (path.extname(source).toLowerCase() !== '.safetensors')
      throw new CliError(`${source}: is a file; the source is a model folder, a Hub id, or a .safetensors file written by swapformer convert`);
    ck = await readConverted(source, await readFile(source), dtype);
    checkEmbedded(ck);
    bytes =
      ck.wasQ8 && dtype === 'q8' // q8 again: the int8 rows as they are
        ? writeModelFile(ck.config, ck.tensors, { ...ck.metadata, dtype: 'q8' }, 'source')
        : dtype === 'q8'
          ? await writeQ8ModelFile(ck)
          : writeModelFile(ck.config, ck.tensors, ck.metadata, dtype);
  } else {
    const info = await stat(source).catch(() => null);
    if (info?.isDirectory()) await refuseOnnxOnly(source);
    const progress = downloadProgress();
    ck = await readCheckpoint(source, { revision: options.revision, hubUrl: options.hubUrl, onProgress: progress.update, signal });
    try {
      progress.done();
      checkEmbedded(ck);
      bytes = dtype === 'q8' ? await writeQ8ModelFile(ck) : writeModelFile(ck.config, ck.tensors, ck.metadata, dtype);
    } finally {
      ck.close(); // the folder's weight files, read as they were written
    }
  }
  await checkLoads(bytes, ck);
  await writeAtomically(out, bytes);
  process.stdout.write(
    `${out}: ${ck.family} (${count(ck.config.layers, 'layer')}, dModel ${ck.config.dModel}, position ${ck.config.position}), ${(bytes.length / 2 ** 20).toFixed(1)} MB, ${dtype}\n`,
  );
  return 0;
}
