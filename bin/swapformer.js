#!/usr/bin/env node
// swapformer's command line.
//
//   npx swapformer convert <source> <out.safetensors> [--dtype f32|f16|q8|source] [--revision R] [--hub-url URL]
//
// <source>: a Hugging Face model folder, its URL, or a Hub id (owner/name).
// Writes one swapformer model file with the tokenizer and the embedding recipe
// inside: loadPretrained(out) gives the same embeddings (f32: identical; f16:
// within half-precision rounding), and loadModel(out) the bare encoder.
// Everything it embeds is parsed first as loadPretrained will (the tokenizer
// built), and the file is written beside <out> and renamed over it: a failed
// write never leaves a truncated file in place of a good one.
import { writeFile, rename, rm } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { readCheckpoint } from '../bindings/pretrained/checkpoint.js';
import { writeModelFile, writeQ8ModelFile, metadataStrings, pretrainedMetadata } from '../bindings/pretrained/model-file.js';
import { Tokenizer } from '../bindings/tokenizers/tokenizer.js';
import { SwapformerError } from '../bindings/utils/errors.js';

const USAGE = `usage: swapformer convert <source> <out.safetensors> [--dtype f32|f16|q8|source] [--revision R] [--hub-url URL]

  <source>   a Hugging Face model folder, its URL, or a Hub id (owner/name)
  --dtype    f32 (default), f16, q8 (int8 Linear weights and token table, a scale per row:
             about a quarter of f32; runs with int8 kernels), or source (keep the checkpoint's F32/F16/BF16)`;

function parse(argv) {
  const [command, ...rest] = argv;
  if (!command || command === '--help' || command === '-h') return { help: true };
  if (command !== 'convert') throw new Error(`unknown command '${command}'`);
  const args = { dtype: 'f32', positional: [] };
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i];
    const [flag, inline] = a.startsWith('--') && a.includes('=') ? a.split(/=(.*)/s, 2) : [a, undefined];
    const value = () => {
      const v = inline ?? rest[++i];
      if (v === undefined) throw new Error(`${flag} needs a value`);
      return v;
    };
    if (flag === '--dtype') args.dtype = value();
    else if (flag === '--revision') args.revision = value();
    else if (flag === '--hub-url') args.hubUrl = value();
    else if (flag.startsWith('--')) throw new Error(`unknown option '${flag}'`);
    else args.positional.push(a);
  }
  if (!['f32', 'f16', 'q8', 'source'].includes(args.dtype)) throw new Error(`--dtype must be f32, f16, q8 or source, got '${args.dtype}'`);
  if (args.positional.length !== 2) throw new Error('convert takes <source> and <out.safetensors>');
  return args;
}

/** Throws unless loadPretrained can read the checkpoint's metadata (recipe, configs) and build its tokenizer. */
function checkEmbedded(ck) {
  const m = pretrainedMetadata(metadataStrings(ck.metadata), { dModel: ck.config.dModel, folder: ck.label });
  Tokenizer.fromJSON(m.tokenizer, { tokenizerConfig: m.tokenizerConfig, specialTokensMap: m.specialTokensMap });
}

/** Writes bytes to a temporary file in out's folder, then renames it over out. */
async function writeAtomically(out, bytes) {
  const tmp = path.join(path.dirname(out), `.${path.basename(out)}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`);
  try {
    await writeFile(tmp, bytes, { flag: 'wx' });
    await rename(tmp, out);
  } catch (e) {
    await rm(tmp, { force: true });
    throw e;
  }
}

async function main() {
  let args;
  try {
    args = parse(process.argv.slice(2));
  } catch (e) {
    console.error(`swapformer: ${e.message}\n\n${USAGE}`);
    return 2;
  }
  if (args.help) {
    console.log(USAGE);
    return 0;
  }
  const [source, out] = args.positional;
  let last = '';
  const onProgress = ({ file, loaded, total }) => {
    if ((total ?? loaded) < 2 ** 20) return; // small files: nothing worth a line
    const line = `  ${file} ${(loaded / 2 ** 20).toFixed(1)}${total ? ` / ${(total / 2 ** 20).toFixed(1)}` : ''} MB`;
    if (process.stderr.isTTY) process.stderr.write(`\r${line}`);
    else if (loaded === total && line !== last) console.error(line);
    last = line;
  };
  try {
    const ck = await readCheckpoint(source, { revision: args.revision, hubUrl: args.hubUrl, onProgress });
    if (process.stderr.isTTY) process.stderr.write('\n');
    checkEmbedded(ck);
    const bytes = args.dtype === 'q8' ? await writeQ8ModelFile(ck) : writeModelFile(ck.config, ck.tensors, ck.metadata, args.dtype);
    await writeAtomically(out, bytes);
    console.log(`${out}: ${ck.family} (${ck.config.layers} layers, dModel ${ck.config.dModel}, position ${ck.config.position}), ${(bytes.length / 2 ** 20).toFixed(1)} MB, ${args.dtype}`);
    return 0;
  } catch (e) {
    console.error(`swapformer: ${e instanceof SwapformerError ? `${e.code}: ` : ''}${e.message}`);
    return 1;
  }
}

process.exitCode = await main();
