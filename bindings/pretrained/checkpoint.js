// A Hugging Face checkpoint folder read into what swapformer runs: the config
// translated by its family, the tensors renamed, and the metadata a model file
// keeps (tokenizer, recipe). Used by loadPretrained and by the converter.
//
//   source -> files.js (config.json, weights, tokenizer, sentence-transformers files)
//          -> families.js (config translated, tensors renamed and split)
//          -> recipe.js (the sentence-transformers embedding recipe)
import { fail } from '../utils/errors.js';
import { openSource, subSource } from './files.js';
import { readWeights } from './safetensors.js';
import { readRecipe, checkRecipe } from './recipe.js';
import { detectFamily, mapTensors, translateConfig } from './families.js';
import { headConfig } from './heads.js';
import { recipeToJSON } from './model-file.js';
import { loraTasks } from './lora.js';
import { readRetrieval, checkRetrieval } from './retrieval.js';

/** Offline: the message saying that `path` is not in the cache (of the model's folder, else the root), or null. */
const notCached = (model, files, path) => model.whyMissing?.(path) ?? (model === files ? null : (files.whyMissing?.(path) ?? null));

/**
 * Everything a checkpoint folder says: the swapformer config, the tensors
 * (canonical names, views of the checkpoint's bytes, or on disk read when
 * used) and the metadata a model file keeps (tokenizer, recipe, ...), and
 * close(), which closes the weights' files once they are read (a folder on
 * disk keeps them open until then). Used by loadPretrained and by the converter.
 * options.task: the task adapter of jina-embeddings-v3 merged into the weights.
 */
export async function readCheckpoint(source, options = {}) {
  const { task, ...fileOptions } = options;
  const files = await openSource(source, fileOptions);
  const hfRoot = await files.readJSON('config.json', { optional: true });
  // a sentence-transformers folder may keep the model in a sub-folder (old '0_Transformer')
  let model = files,
    hf = hfRoot;
  const customTransformer = loraTasks(hf) !== null; // jina-embeddings-v3's custom_st.Transformer: the task-adapted model itself
  const recipe = await readRecipe(files, {
    modelType: hf?.model_type,
    nameOrPath: hf?._name_or_path ?? (typeof source === 'string' ? source : undefined),
    customTransformer,
  });
  if (recipe.transformerPath) {
    model = subSource(files, recipe.transformerPath);
    hf = await model.readJSON('config.json');
  }
  if (!hf) fail('NOT_FOUND', `${files.label}: ${notCached(model, files, 'config.json') ?? 'no config.json (a Hugging Face model folder has one)'}`);
  const family = detectFamily(hf);
  const { tensors, close } = await readWeights(model);
  try {
    return { ...(await readRest(files, model, hf, family, tensors, task, customTransformer, recipe)), close };
  } catch (e) {
    close();
    throw e;
  }
}

/** readCheckpoint once the weights' headers are read. */
async function readRest(files, model, hf, family, tensors, task, customTransformer, recipe) {
  // colbert-ai's HF_ColBERT keeps its projection (linear.weight) beside the encoder: retrieval.js reads it
  const stanford = Array.isArray(hf.architectures) && hf.architectures.includes('HF_ColBERT');
  const mapped = mapTensors(family, stanford ? new Map([...tensors].filter(([n]) => n !== 'linear.weight')) : tensors, hf, { task });
  const config = translateConfig(family, hf, mapped.shape);
  if (mapped.head) config.head = headConfig(mapped.head, hf, { shapes: mapped.shape, tied: mapped.tied });
  const r = await readRetrieval(files, model, hf, tensors, config.dModel, customTransformer);
  if (r.head) {
    if (config.head) fail('UNSUPPORTED_MODEL', `${files.label}: config.json names a ${config.head.task} head, and the folder holds a ${r.head.task} one`);
    config.head = r.head;
    mapped.tensors.push(...r.tensors);
  }
  const retrieval = checkRetrieval(r.retrieval, config.head, files.label);
  const tokenizerJson = (await model.readText('tokenizer.json', { optional: true })) ?? (await files.readText('tokenizer.json', { optional: true }));
  if (tokenizerJson === null)
    fail(
      'NOT_FOUND',
      `${files.label}: ${
        notCached(model, files, 'tokenizer.json') ??
        'no tokenizer.json (swapformer reads the fast-tokenizer file; save it with AutoTokenizer.from_pretrained(...).save_pretrained(folder))'
      }`,
    );
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
      ...(task !== undefined ? { task } : {}),
      tokenizer: tokenizerJson,
      ...(tokenizerConfig ? { tokenizer_config: tokenizerConfig } : {}),
      ...(specialTokensMap ? { special_tokens_map: specialTokensMap } : {}),
      recipe: recipeToJSON(checkRecipe(recipe, { dModel: config.dModel, folder: true })), // the Dense sizes chain from the hidden size
      ...(retrieval ? { retrieval } : {}),
    },
  };
}
