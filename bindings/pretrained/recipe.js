// The sentence-transformers embedding recipe: what turns a model's last hidden
// states into a sentence embedding, read from a Hugging Face folder the way
// sentence-transformers (ST) reads it, and applied the way ST computes it.
//
//   const recipe = await readRecipe(source, { modelType, nameOrPath });
//   const pooled = pool(hidden, lengths, recipe.pooling);       // [B, T, H] -> [B, D]
//   const emb = applyRecipe(pooled, recipe);                     // Dense(s), Normalize
//
// Files (ST `sentence_transformers/models/…`, read at HEAD 85ec645, Oct 2025):
//  - modules.json: the module list, run in file order. Supported:
//    Transformer -> Pooling -> Dense* -> Normalize?, plus Dropout (the identity
//    at inference) after the Pooling. Any other module type (LayerNorm,
//    WeightedLayerPooling, CNN, LSTM, Router, custom code…) is refused, never
//    skipped, because skipping it changes the embedding.
//  - the Transformer's sentence_bert_config.json (or ST's older
//    sentence_<family>_config.json names): max_seq_length, do_lower_case.
//  - 1_Pooling/config.json (`Pooling.py`): the pooling_mode_* booleans with
//    ST's defaults (mean on, the rest off), or the pooling_mode string, and
//    include_prompt. Enabled modes are concatenated in ST's forward order.
//  - 2_Dense/config.json + model.safetensors (`Dense.py`): act(W x + b), the
//    activation a torch class path.
//  - config_sentence_transformers.json: prompts, default_prompt_name.
// Without modules.json, defaultRecipe gives the model card's recipe.
import { SwapformerError } from '../utils/errors.js';
import { checkPath } from './files.js';
import { parseSafetensors, toFloat32, binHint } from './safetensors.js';

/** ST's pooling modes in the order Pooling.forward concatenates them. */
export const POOLING_ORDER = ['cls', 'max', 'mean', 'mean_sqrt_len', 'weightedmean', 'lasttoken'];

/** Pooling config keys -> mode; ST's constructor defaults: only mean is on. */
const POOLING_KEYS = [
  ['pooling_mode_cls_token', 'cls', false],
  ['pooling_mode_max_tokens', 'max', false],
  ['pooling_mode_mean_tokens', 'mean', true],
  ['pooling_mode_mean_sqrt_len_tokens', 'mean_sqrt_len', false],
  ['pooling_mode_weightedmean_tokens', 'weightedmean', false],
  ['pooling_mode_lasttoken', 'lasttoken', false],
];

/** ST's `pooling_mode` strings (Pooling.POOLING_MODES) -> our mode names. */
const POOLING_MODE_STRINGS = {
  cls: 'cls',
  lasttoken: 'lasttoken',
  max: 'max',
  mean: 'mean',
  mean_sqrt_len_tokens: 'mean_sqrt_len',
  weightedmean: 'weightedmean',
};

/** torch activation classes (Dense's activation_function) -> our names. */
const ACTIVATIONS = { Identity: 'identity', Tanh: 'tanh', ReLU: 'relu', GELU: 'gelu', Sigmoid: 'sigmoid', SiLU: 'silu' };

/** The older Transformer config names ST still tries, in its order (Transformer.load_config). */
const TRANSFORMER_CONFIGS = [
  'sentence_bert_config.json',
  'sentence_roberta_config.json',
  'sentence_distilbert_config.json',
  'sentence_camembert_config.json',
  'sentence_albert_config.json',
  'sentence_xlm-roberta_config.json',
  'sentence_xlnet_config.json',
];

/** INSTRUCTOR models: ST forces include_prompt false for exactly these ids (SentenceTransformer.__init__). */
const INSTRUCTOR_IDS = ['hkunlp/instructor-base', 'hkunlp/instructor-large', 'hkunlp/instructor-xl'];

const badFile = (file, why) => {
  throw new SwapformerError('BAD_FILE', `${file}: ${why}`);
};
const unsupported = (msg) => {
  throw new SwapformerError('UNSUPPORTED_MODEL', msg);
};
const badArg = (msg) => {
  throw new SwapformerError('BAD_ARGUMENT', msg);
};
const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const isCount = (v) => Number.isSafeInteger(v) && v > 0;
const join = (dir, file) => (dir ? `${dir}/${file}` : file);

// ---------------------------------------------------------------------------
// Reading the recipe

/**
 * The recipe to use without modules.json (the model cards' usage): BGE
 * (nameOrPath contains 'bge') is CLS + normalize; everything else (E5, GTE,
 * MiniLM, nomic, jina, T5…) mean + normalize.
 */
export function defaultRecipe({ modelType, nameOrPath } = {}) {
  const bge = typeof nameOrPath === 'string' && nameOrPath.toLowerCase().includes('bge');
  return {
    pooling: [bge ? 'cls' : 'mean'],
    includePrompt: true,
    dense: [],
    normalize: true,
    maxSeqLength: null,
    doLowerCase: false,
    prompts: null,
    defaultPromptName: null,
    similarityFnName: null,
    transformerPath: '',
    wordEmbeddingDimension: null,
    source: 'default',
    // for messages: why this default (modelType is not used to choose it)
    note: `no modules.json: ${bge ? "CLS pooling (name contains 'bge')" : 'mean pooling'} + normalize${modelType ? ` for ${modelType}` : ''}`,
  };
}

/**
 * The module class of a modules.json type, or null when it is not one we
 * know: ST's own (sentence_transformers.models.X), a SparseEncoder's
 * MLMTransformer and SpladePooling (sentence_transformers.sparse_encoder.models.X,
 * .modules.x.X in newer saves), PyLate's Dense (pylate.models.Dense.Dense: 'PylateDense'),
 * jina-embeddings-v3's custom_st.Transformer (with customTransformer).
 */
function moduleClass(type, customTransformer) {
  if (customTransformer && type === 'custom_st.Transformer') return 'Transformer';
  // 'sentence_transformers.models.Pooling' (ST's own saves) or '...models.Pooling.Pooling'
  const m = /^sentence_transformers\.models\.(\w+)(?:\.(\w+))?$/.exec(type);
  if (m && (!m[2] || m[2] === m[1])) return m[1];
  const sparse = /^sentence_transformers\.sparse_encoder\.(?:models|modules)(?:\.\w+)?\.(MLMTransformer|SpladePooling)$/.exec(type);
  if (sparse) return sparse[1];
  if (/^pylate\.models(?:\.Dense)?\.Dense$/.test(type)) return 'PylateDense';
  return null;
}

/** Reads and checks modules.json: [{cls, path, type}] in file order. */
function readModules(modules, customTransformer) {
  const FILE = 'modules.json';
  if (!Array.isArray(modules) || !modules.length) badFile(FILE, 'must be a non-empty list of modules');
  return modules.map((m, i) => {
    if (!isObject(m) || typeof m.type !== 'string') badFile(FILE, `entry ${i} needs a "type" string`);
    const path = m.path ?? '';
    if (typeof path !== 'string') badFile(FILE, `entry ${i} ("${m.type}"): "path" must be a string`);
    if (path) checkPath(path, FILE);
    const cls = moduleClass(m.type, customTransformer);
    if (!['Transformer', 'Pooling', 'Dense', 'Normalize', 'Dropout', 'MLMTransformer', 'SpladePooling', 'PylateDense'].includes(cls))
      unsupported(
        `modules.json: module ${i} has the type '${m.type}'${path ? ` (folder ${path})` : ''}, which swapformer does not run ` +
          "(supported: sentence_transformers.models Transformer, Pooling, Dense, Normalize, Dropout; a SparseEncoder's MLMTransformer and " +
          "SpladePooling; PyLate's Dense); skipping it would change the embeddings",
      );
    return { cls, path, type: m.type };
  });
}

/**
 * modules.json's modules [{cls, path, type}] with the kind of model they make:
 * 'splade' (a SparseEncoder: MLMTransformer or Transformer, then SpladePooling),
 * 'colbert' (PyLate: Transformer, then its Dense layers), 'dense' (a
 * SentenceTransformer), or null without modules.json. customTransformer: the
 * folder is jina-embeddings-v3's, whose custom_st.Transformer is the Transformer.
 */
export async function readModuleList(source, customTransformer = false) {
  const modulesJson = await source.readJSON('modules.json', { optional: true });
  if (modulesJson === null) return { kind: null, modules: [] };
  const modules = readModules(modulesJson, customTransformer);
  const seq = modules.map((m) => m.cls).join(' ');
  if (modules.some((m) => m.cls === 'SpladePooling' || m.cls === 'MLMTransformer')) {
    if (!/^(MLM)?Transformer SpladePooling$/.test(seq))
      unsupported(`modules.json: the SparseEncoder modules ${seq} are not supported (MLMTransformer, then SpladePooling)`);
    return { kind: 'splade', modules };
  }
  if (modules.some((m) => m.cls === 'PylateDense')) {
    if (!/^Transformer( PylateDense)+$/.test(seq)) unsupported(`modules.json: the PyLate modules ${seq} are not supported (Transformer, then Dense layers)`);
    return { kind: 'colbert', modules };
  }
  return { kind: 'dense', modules };
}

/** Checks the module order: Transformer, Pooling, then Dense / Dropout, then an optional final Normalize. */
function checkOrder(mods) {
  const seq = mods.map((m) => m.cls).join(' ');
  if (!/^Transformer (Dropout )*Pooling( Dense| Dropout)*( Normalize)?( Dropout)*$/.test(seq))
    unsupported(`modules.json: the module sequence ${seq} is not supported (expected Transformer, Pooling, Dense…, Normalize)`);
}

/** 1_Pooling/config.json -> {modes, includePrompt, dimension}. */
function readPooling(config, file) {
  if (!isObject(config)) badFile(file, 'must be a JSON object');
  const known = new Set(['word_embedding_dimension', 'pooling_mode', 'include_prompt', ...POOLING_KEYS.map((k) => k[0])]);
  for (const key of Object.keys(config)) if (!known.has(key)) unsupported(`${file}: unknown pooling option '${key}' (ST's Pooling would refuse it too)`);
  const enabled = {};
  for (const [key, mode, dflt] of POOLING_KEYS) {
    const v = config[key] ?? dflt;
    if (typeof v !== 'boolean') badFile(file, `${key} must be true or false`);
    enabled[mode] = v;
  }
  if (config.pooling_mode != null) {
    // the string form overrides every boolean
    const mode = typeof config.pooling_mode === 'string' ? POOLING_MODE_STRINGS[config.pooling_mode.toLowerCase()] : undefined;
    if (!mode) badFile(file, `pooling_mode ${JSON.stringify(config.pooling_mode)} is not one of ${Object.keys(POOLING_MODE_STRINGS).join(', ')}`);
    for (const m of POOLING_ORDER) enabled[m] = m === mode;
  }
  const includePrompt = config.include_prompt ?? true;
  if (typeof includePrompt !== 'boolean') badFile(file, 'include_prompt must be true or false');
  const dimension = config.word_embedding_dimension ?? null;
  if (dimension !== null && !isCount(dimension)) badFile(file, 'word_embedding_dimension must be a positive integer');
  const modes = POOLING_ORDER.filter((m) => enabled[m]);
  if (!modes.length) badFile(file, 'no pooling mode is enabled');
  return { modes, includePrompt, dimension };
}

/** Maps a torch activation class path ('torch.nn.modules.activation.Tanh') to our name. */
function activationOf(path, file) {
  if (typeof path !== 'string') badFile(file, 'activation_function must be a torch class path such as torch.nn.modules.activation.Tanh');
  const m = /^torch\.nn\.(?:[\w.]+\.)?(\w+)$/.exec(path);
  const act = m && Object.hasOwn(ACTIVATIONS, m[1]) ? ACTIVATIONS[m[1]] : null;
  if (!act) unsupported(`${file}: activation_function '${path}' is not supported (supported: torch.nn ${Object.keys(ACTIVATIONS).join(', ')})`);
  return act;
}

/** A Dense module: its config and its linear.weight / linear.bias. */
async function readDense(source, dir, width) {
  const file = join(dir, 'config.json');
  const config = await source.readJSON(file);
  if (!isObject(config)) badFile(file, 'must be a JSON object');
  const { in_features: inFeatures, out_features: outFeatures, bias = true } = config;
  if (!isCount(inFeatures) || !isCount(outFeatures)) badFile(file, 'in_features and out_features must be positive integers');
  // the sizes must chain: pooling output (when its config says) -> each Dense
  if (width !== null && inFeatures !== width) badFile(file, `in_features is ${inFeatures}, but the module before it gives ${width} features`);
  if (typeof bias !== 'boolean') badFile(file, 'bias must be true or false');
  const activation = activationOf(config.activation_function, file);

  const weightsFile = join(dir, 'model.safetensors');
  const bytes = await source.read(weightsFile, { optional: true });
  if (!bytes) {
    if (await source.has(join(dir, 'pytorch_model.bin'))) unsupported(binHint(`the Dense module ${dir}`, source.label));
    throw new SwapformerError('NOT_FOUND', `no ${weightsFile} in ${source.label} (the Dense module's weights)`);
  }
  const { tensors } = parseSafetensors(bytes, weightsFile);
  const expected = bias ? ['linear.weight', 'linear.bias'] : ['linear.weight'];
  for (const name of tensors.keys())
    if (!expected.includes(name)) badFile(weightsFile, `unexpected tensor '${name}' (a Dense module has ${expected.join(' and ')})`);
  for (const name of expected) if (!tensors.has(name)) badFile(weightsFile, `no tensor '${name}'`);
  const w = tensors.get('linear.weight');
  if (w.shape.length !== 2 || w.shape[0] !== outFeatures || w.shape[1] !== inFeatures)
    badFile(weightsFile, `linear.weight has the shape [${w.shape}], config.json says [${outFeatures}, ${inFeatures}]`);
  const b = bias ? tensors.get('linear.bias') : null;
  if (b && (b.shape.length !== 1 || b.shape[0] !== outFeatures))
    badFile(weightsFile, `linear.bias has the shape [${b.shape}], config.json says [${outFeatures}]`);
  const values = (t, name) => checkFinite(toFloat32(t, `${weightsFile}: ${name}`), `${weightsFile}: ${name}`);
  return {
    path: dir,
    inFeatures,
    outFeatures,
    weight: values(w, 'linear.weight'),
    bias: b ? values(b, 'linear.bias') : null,
    activation,
  };
}

/** Throws BAD_WEIGHTS naming the first NaN or Infinity of values (`name[i]`); returns values. */
function checkFinite(values, name) {
  for (let i = 0; i < values.length; i++)
    if (!Number.isFinite(values[i])) throw new SwapformerError('BAD_WEIGHTS', `${name}[${i}] is ${values[i]}: weights must be finite`);
  return values;
}

/** The Transformer module's sentence_bert_config.json (or an older name): {maxSeqLength, doLowerCase}. */
async function readTransformerConfig(source, dir) {
  for (const name of TRANSFORMER_CONFIGS) {
    const file = join(dir, name);
    const config = await source.readJSON(file, { optional: true });
    if (config === null) continue;
    if (!isObject(config)) badFile(file, 'must be a JSON object');
    if (!Object.keys(config).length) continue; // ST moves on past an empty config
    const max = config.max_seq_length ?? null;
    if (max !== null && !isCount(max)) badFile(file, 'max_seq_length must be a positive integer or null');
    const lower = config.do_lower_case ?? false;
    if (typeof lower !== 'boolean') badFile(file, 'do_lower_case must be true or false');
    return { maxSeqLength: max, doLowerCase: lower };
  }
  return { maxSeqLength: null, doLowerCase: false };
}

/** ST's similarity functions (SimilarityFunction): the names config_sentence_transformers.json may give. */
export const SIMILARITY_FNS = ['cosine', 'dot', 'euclidean', 'manhattan'];

/** A copy of the prompts (name -> text) without a prototype: a prompt named __proto__ or constructor is a name like any other. */
const promptMap = (prompts) => Object.assign(Object.create(null), prompts);

/** config_sentence_transformers.json: {prompts, defaultPromptName, similarityFnName}. */
async function readPrompts(source, { maxSim = false } = {}) {
  const FILE = 'config_sentence_transformers.json';
  const config = await source.readJSON(FILE, { optional: true });
  if (config === null) return { prompts: null, defaultPromptName: null, similarityFnName: null };
  if (!isObject(config)) badFile(FILE, 'must be a JSON object');
  const prompts = config.prompts ?? null;
  if (prompts !== null) {
    if (!isObject(prompts)) badFile(FILE, 'prompts must be an object of name -> prompt text');
    for (const [k, v] of Object.entries(prompts)) if (typeof v !== 'string') badFile(FILE, `prompts.${k} must be a string`);
  }
  const name = config.default_prompt_name ?? null;
  if (name !== null && typeof name !== 'string') badFile(FILE, 'default_prompt_name must be a string or null');
  // ST refuses a default prompt name that is not among the prompts (SentenceTransformer.__init__)
  if (name && !(prompts && Object.hasOwn(prompts, name)))
    badFile(FILE, `default_prompt_name '${name}' is not among the prompts (${Object.keys(prompts ?? {}).join(', ') || 'none'})`);
  const fn = Object.hasOwn(config, 'similarity_fn_name') ? config.similarity_fn_name : null;
  // ST also accepts 'dot_product' and 'cos_sim'-style aliases of SimilarityFunction's values
  const fnName = fn === null ? null : ({ dot_product: 'dot', dot_score: 'dot', cos_sim: 'cosine' }[fn] ?? fn);
  if (maxSim && fnName === 'MaxSim') return { prompts: prompts ? { ...prompts } : null, defaultPromptName: name || null, similarityFnName: null }; // PyLate's
  if (fnName !== null && !SIMILARITY_FNS.includes(fnName)) badFile(FILE, `similarity_fn_name ${JSON.stringify(fn)} is not one of ${SIMILARITY_FNS.join(', ')}`);
  return { prompts: prompts ? promptMap(prompts) : null, defaultPromptName: name || null, similarityFnName: fnName };
}

/**
 * Reads the embedding recipe of a source (files.js openSource). With
 * modules.json, the sentence-transformers modules; without, defaultRecipe.
 * Resolves to {pooling, includePrompt, dense, normalize, maxSeqLength,
 * doLowerCase, prompts, defaultPromptName, transformerPath, source}.
 */
export async function readRecipe(source, { modelType, nameOrPath, customTransformer = false } = {}) {
  const { kind, modules: mods } = await readModuleList(source, customTransformer);
  if (kind === null) return defaultRecipe({ modelType, nameOrPath });
  if (kind !== 'dense') {
    // a SparseEncoder or a PyLate model: no sentence embedding of its own (retrieval.js reads the rest);
    // the Transformer's text rules and the prompts as ST reads them, CLS pooling only as a placeholder
    const { maxSeqLength, doLowerCase } = await readTransformerConfig(source, mods[0].path);
    const { prompts, defaultPromptName, similarityFnName } = await readPrompts(source, { maxSim: kind === 'colbert' });
    return {
      ...defaultRecipe({ modelType, nameOrPath }),
      normalize: false,
      maxSeqLength,
      doLowerCase,
      prompts,
      defaultPromptName,
      similarityFnName: kind === 'splade' ? (similarityFnName ?? 'dot') : null,
      transformerPath: mods[0].path,
      source: 'modules.json',
      note: kind === 'splade' ? 'a SparseEncoder (SPLADE): sparse vectors only' : 'a PyLate ColBERT model: token vectors only',
    };
  }
  checkOrder(mods);

  const transformer = mods.find((m) => m.cls === 'Transformer');
  const poolingModule = mods.find((m) => m.cls === 'Pooling');
  const poolingFile = join(poolingModule.path, 'config.json');
  const pooling = readPooling(await source.readJSON(poolingFile), poolingFile);
  const dense = [];
  let width = pooling.dimension === null ? null : pooling.dimension * pooling.modes.length;
  for (const m of mods) {
    if (m.cls !== 'Dense') continue;
    dense.push(await readDense(source, m.path, width));
    width = dense.at(-1).outFeatures;
  }

  const { maxSeqLength, doLowerCase } = await readTransformerConfig(source, transformer.path);
  const { prompts, defaultPromptName, similarityFnName } = await readPrompts(source);
  const instructor = typeof nameOrPath === 'string' && INSTRUCTOR_IDS.includes(nameOrPath);
  return {
    pooling: pooling.modes,
    includePrompt: instructor ? false : pooling.includePrompt,
    dense,
    normalize: mods.some((m) => m.cls === 'Normalize'),
    maxSeqLength,
    doLowerCase,
    prompts,
    defaultPromptName,
    similarityFnName,
    transformerPath: transformer.path,
    wordEmbeddingDimension: pooling.dimension,
    source: 'modules.json',
  };
}

// ---------------------------------------------------------------------------
// Checking a recipe (readRecipe's, or one read back from a model file)

const RECIPE_KEYS = [
  'pooling',
  'includePrompt',
  'dense',
  'normalize',
  'maxSeqLength',
  'doLowerCase',
  'prompts',
  'defaultPromptName',
  'similarityFnName',
  'transformerPath',
  'wordEmbeddingDimension',
  'source',
  'note',
];
const DENSE_KEYS = ['path', 'inFeatures', 'outFeatures', 'weight', 'bias', 'activation'];

/** Refuses fields other than `keys` (own properties only are read). */
function onlyKeys(o, keys, where) {
  for (const k of Object.keys(o)) if (!keys.includes(k)) badFile(where, `unknown field '${k}'`);
}

/**
 * Checks a recipe and returns a plain copy: own fields only, each of its
 * type; the pooling modes known and distinct; each Dense with a known
 * activation, finite Float32Array weights of [outFeatures, inFeatures], and,
 * given dModel, sizes that chain from the pooled width (modes x dModel).
 * `where` names the recipe in messages (a model file's metadata); a recipe
 * read from a folder (`folder: true`) names its Dense module's config.json instead.
 */
export function checkRecipe(recipe, { dModel, where = 'recipe', folder = false } = {}) {
  if (!isObject(recipe)) badFile(where, 'the recipe must be an object');
  onlyKeys(recipe, RECIPE_KEYS, where);
  const get = (k) => (Object.hasOwn(recipe, k) ? recipe[k] : undefined);
  const flag = (k) => {
    if (typeof get(k) !== 'boolean') badFile(where, `${k} must be true or false`);
    return get(k);
  };
  const pooling = get('pooling');
  if (!Array.isArray(pooling) || !pooling.length || pooling.some((m, i) => !POOLING_ORDER.includes(m) || pooling.indexOf(m) !== i))
    badFile(where, `pooling must list distinct modes of ${POOLING_ORDER.join(', ')}`);
  const maxSeqLength = get('maxSeqLength') ?? null;
  if (maxSeqLength !== null && !isCount(maxSeqLength)) badFile(where, 'maxSeqLength must be a positive integer or null');
  const dimension = get('wordEmbeddingDimension') ?? null;
  if (dimension !== null && !isCount(dimension)) badFile(where, 'wordEmbeddingDimension must be a positive integer or null');
  const prompts = get('prompts') ?? null;
  if (prompts !== null && (!isObject(prompts) || Object.values(prompts).some((v) => typeof v !== 'string')))
    badFile(where, 'prompts must be an object of name -> prompt text');
  const defaultPromptName = get('defaultPromptName') ?? null;
  if (defaultPromptName !== null && !(typeof defaultPromptName === 'string' && prompts && Object.hasOwn(prompts, defaultPromptName)))
    badFile(where, 'defaultPromptName must be null or one of the prompts');
  const similarityFnName = get('similarityFnName') ?? null;
  if (similarityFnName !== null && !SIMILARITY_FNS.includes(similarityFnName))
    badFile(where, `similarityFnName must be null or one of ${SIMILARITY_FNS.join(', ')}`);
  for (const k of ['transformerPath', 'note']) if (get(k) !== undefined && typeof get(k) !== 'string') badFile(where, `${k} must be a string`);
  if (!['modules.json', 'default'].includes(get('source'))) badFile(where, "source must be 'modules.json' or 'default'");
  const layers = get('dense');
  if (!Array.isArray(layers)) badFile(where, 'dense must be an array');
  let width = dModel === undefined ? null : pooling.length * dModel;
  const dense = [];
  for (let i = 0; i < layers.length; i++) {
    const d = Object.hasOwn(layers, i) ? layers[i] : undefined;
    const at = `${where}: dense[${i}]`;
    if (!isObject(d)) badFile(at, 'must be an object');
    onlyKeys(d, DENSE_KEYS, at);
    const path = Object.hasOwn(d, 'path') ? d.path : '';
    if (typeof path !== 'string') badFile(at, 'path must be a string');
    const file = folder ? join(path, 'config.json') : at;
    const { inFeatures, outFeatures, weight, bias = null, activation } = { ...d };
    if (!isCount(inFeatures) || !isCount(outFeatures)) badFile(file, 'inFeatures and outFeatures must be positive integers');
    if (width !== null && inFeatures !== width)
      badFile(
        file,
        `in_features is ${inFeatures}, but the ${i ? 'Dense module before it gives' : `pooling (${pooling.join(' + ')} of ${dModel} hidden features) gives`} ${width} features`,
      );
    if (typeof activation !== 'string' || !Object.hasOwn(ACT_FN, activation))
      badFile(file, `activation ${JSON.stringify(activation)} is not one of ${Object.keys(ACT_FN).join(', ')}`);
    const weights = folder ? join(path, 'model.safetensors') : at;
    if (!(weight instanceof Float32Array) || weight.length !== inFeatures * outFeatures)
      badFile(weights, `the weight must be ${outFeatures} x ${inFeatures} float32 values`);
    if (bias !== null && (!(bias instanceof Float32Array) || bias.length !== outFeatures)) badFile(weights, `the bias must be ${outFeatures} float32 values`);
    checkFinite(weight, folder ? `${weights}: linear.weight` : `${at}.weight`);
    if (bias) checkFinite(bias, folder ? `${weights}: linear.bias` : `${at}.bias`);
    dense.push({ path, inFeatures, outFeatures, weight, bias, activation });
    width = outFeatures;
  }
  return {
    pooling: pooling.slice(),
    includePrompt: flag('includePrompt'),
    dense,
    normalize: flag('normalize'),
    maxSeqLength,
    doLowerCase: flag('doLowerCase'),
    prompts: prompts && promptMap(prompts),
    defaultPromptName,
    similarityFnName,
    transformerPath: get('transformerPath') ?? '',
    wordEmbeddingDimension: dimension,
    source: get('source'),
    ...(get('note') !== undefined ? { note: get('note') } : {}),
  };
}

// ---------------------------------------------------------------------------
// Pooling

const MODE_ALIASES = { mean_sqrt_len_tokens: 'mean_sqrt_len', cls_token: 'cls', mean_tokens: 'mean', max_tokens: 'max', weightedmean_tokens: 'weightedmean' };

/** Checks [B, ...] shape and data of a tensor-like {data, shape}. */
function checkTensor(t, rank, what) {
  if (
    !t ||
    !(t.data instanceof Float32Array || t.data instanceof Float64Array || Array.isArray(t.data)) ||
    !Array.isArray(t.shape) ||
    t.shape.length !== rank ||
    !t.shape.every((d) => Number.isSafeInteger(d) && d >= 0)
  )
    badArg(`${what} must be {data: Float32Array, shape: [${rank === 3 ? 'B, T, H' : 'B, D'}]}`);
  const n = t.shape.reduce((a, b) => a * b, 1);
  if (t.data.length !== n) badArg(`${what}: data has ${t.data.length} values, shape [${t.shape}] needs ${n}`);
}

/**
 * Pools last hidden states {data, shape: [B, T, H]} (right-padded; `lengths`
 * the real tokens of each sequence) into {data: Float32Array, shape: [B, D]},
 * D = modes.length x H, the modes concatenated in the order given. As ST's
 * Pooling.forward:
 *  - cls: row 0 (never masked);
 *  - max: max over the real tokens, the others taken as -1e9;
 *  - mean: sum / max(count, 1e-9); mean_sqrt_len: sum / sqrt(max(count, 1e-9));
 *  - weightedmean: weights 1..T by position, over the real tokens;
 *  - lasttoken: the last real token (zeros when there is none).
 * promptLengths (a number, or one per sequence): the first promptLengths[b]
 * tokens are left out of every mode but cls, as ST's include_prompt: false.
 * Pass it only when the recipe's includePrompt is false. Sums in float64.
 */
export function pool(hidden, lengths, modes, { promptLengths } = {}) {
  checkTensor(hidden, 3, 'pool: hidden');
  const [B, T, H] = hidden.shape;
  if (!Array.isArray(lengths) && !ArrayBuffer.isView(lengths)) badArg('pool: lengths must be an array');
  if (lengths.length !== B || ![...lengths].every((l) => Number.isSafeInteger(l) && l >= 0 && l <= T))
    badArg(`pool: lengths must be ${B} integers in [0, ${T}]`);
  if (!Array.isArray(modes) || !modes.length) badArg('pool: modes must be a non-empty array');
  const names = modes.map((m) => {
    const name = MODE_ALIASES[m] ?? m;
    if (!POOLING_ORDER.includes(name)) badArg(`pool: unknown pooling mode '${m}' (known: ${POOLING_ORDER.join(', ')})`);
    return name;
  });
  let starts;
  if (promptLengths === undefined || promptLengths === null) starts = new Array(B).fill(0);
  else if (Number.isSafeInteger(promptLengths) && promptLengths >= 0) starts = new Array(B).fill(promptLengths);
  else if (
    (Array.isArray(promptLengths) || ArrayBuffer.isView(promptLengths)) &&
    promptLengths.length === B &&
    [...promptLengths].every((p) => Number.isSafeInteger(p) && p >= 0)
  )
    starts = [...promptLengths];
  else badArg(`option promptLengths must be a non-negative integer or ${B} of them`);

  const D = names.length * H;
  const out = new Float32Array(B * D);
  const x = hidden.data;
  const acc = new Float64Array(H);
  for (let b = 0; b < B; b++) {
    const from = Math.min(starts[b], lengths[b]);
    const to = lengths[b]; // the masked-in tokens are [from, to)
    const base = b * T * H;
    names.forEach((mode, k) => {
      const o = b * D + k * H;
      if (mode === 'cls') {
        for (let h = 0; h < H; h++) out[o + h] = x[base + h];
      } else if (mode === 'max') {
        for (let h = 0; h < H; h++) {
          // padded (and prompt) rows count as -1e9, as ST sets them
          let m = to - from < T ? -1e9 : -Infinity;
          for (let t = from; t < to; t++) m = Math.max(m, x[base + t * H + h]);
          out[o + h] = m;
        }
      } else if (mode === 'lasttoken') {
        if (to > from) for (let h = 0; h < H; h++) out[o + h] = x[base + (to - 1) * H + h];
      } else {
        acc.fill(0);
        let weight = 0;
        for (let t = from; t < to; t++) {
          const w = mode === 'weightedmean' ? t + 1 : 1;
          weight += w;
          const r = base + t * H;
          for (let h = 0; h < H; h++) acc[h] += w * x[r + h];
        }
        const div = mode === 'mean_sqrt_len' ? Math.sqrt(Math.max(weight, 1e-9)) : Math.max(weight, 1e-9);
        for (let h = 0; h < H; h++) out[o + h] = acc[h] / div;
      }
    });
  }
  return { data: out, shape: [B, D] };
}

// ---------------------------------------------------------------------------
// Dense, Matryoshka, Normalize

/** erf to double precision: the series 2/√π e^{-x²} Σ 2ⁿx^{2n+1}/(2n+1)!! (all terms positive, no cancellation). */
export function erf(x) {
  const ax = Math.abs(x);
  if (ax >= 6) return Math.sign(x); // erfc(6) = 2e-17
  let term = ax,
    sum = ax;
  for (let n = 1; n < 200 && term > sum * 1e-17; n++) {
    term *= (2 * ax * ax) / (2 * n + 1);
    sum += term;
  }
  const r = (2 / Math.sqrt(Math.PI)) * Math.exp(-ax * ax) * sum;
  return x < 0 ? -r : r;
}

const ACT_FN = {
  identity: (v) => v,
  tanh: Math.tanh,
  relu: (v) => (v > 0 ? v : 0),
  gelu: (v) => 0.5 * v * (1 + erf(v / Math.SQRT2)), // torch.nn.GELU(): the exact erf form
  sigmoid: (v) => 1 / (1 + Math.exp(-v)),
  silu: (v) => v / (1 + Math.exp(-v)),
};

/** act(W x + b) on each row; float64 sums, float32 out (as torch float32 layers). */
function dense(rows, B, layer) {
  const { inFeatures: I, outFeatures: O, weight, bias, activation } = layer;
  if (!Object.hasOwn(ACT_FN, activation)) unsupported(`Dense activation '${activation}' is not supported`);
  const act = ACT_FN[activation];
  const out = new Float32Array(B * O);
  for (let b = 0; b < B; b++) {
    for (let o = 0; o < O; o++) {
      let s = bias ? bias[o] : 0;
      for (let i = 0; i < I; i++) s += weight[o * I + i] * rows[b * I + i];
      out[b * O + o] = act(s);
    }
  }
  return out;
}

/**
 * Applies the recipe's Dense layers to pooled {data, shape: [B, D]}, then the
 * Matryoshka steps: layer_norm without affine (eps 1e-5) when matryoshkaNorm
 * (nomic v1.5's model card), truncation to `dimensions`; then L2 normalisation
 * x / max(‖x‖, 1e-12) when `normalize` (default: the recipe's Normalize).
 * Returns {data: Float32Array, shape: [B, D']}.
 *
 * Note: ST itself normalises before truncating (its Normalize module runs in
 * the forward, truncate_dim after it); normalising after truncation, as here,
 * gives unit vectors at every size, as the Matryoshka model cards do.
 */
export function applyRecipe(pooled, recipe, { normalize, dimensions, matryoshkaNorm = false } = {}) {
  checkTensor(pooled, 2, 'applyRecipe: pooled');
  let [B, D] = pooled.shape;
  let rows = Float32Array.from(pooled.data);
  for (const [i, layer] of (recipe?.dense ?? []).entries()) {
    if (layer.inFeatures !== D) badArg(`applyRecipe: Dense ${i} (${layer.path ?? ''}) takes ${layer.inFeatures} features, the input has ${D}`);
    rows = dense(rows, B, layer);
    D = layer.outFeatures;
  }
  if (matryoshkaNorm) {
    for (let b = 0; b < B; b++) {
      const r = rows.subarray(b * D, (b + 1) * D);
      let mean = 0,
        v = 0;
      for (const x of r) mean += x;
      mean /= D;
      for (const x of r) v += (x - mean) ** 2;
      const inv = 1 / Math.sqrt(v / D + 1e-5);
      for (let i = 0; i < D; i++) r[i] = (r[i] - mean) * inv;
    }
  }
  if (dimensions !== undefined && dimensions !== null) {
    if (!Number.isSafeInteger(dimensions) || dimensions < 1 || dimensions > D) badArg(`option dimensions must be an integer in [1, ${D}]`);
    if (dimensions < D) {
      const cut = new Float32Array(B * dimensions);
      for (let b = 0; b < B; b++) cut.set(rows.subarray(b * D, b * D + dimensions), b * dimensions);
      rows = cut;
      D = dimensions;
    }
  }
  if (normalize ?? recipe?.normalize ?? false) {
    for (let b = 0; b < B; b++) {
      const r = rows.subarray(b * D, (b + 1) * D);
      let ss = 0;
      for (const x of r) ss += x * x;
      const inv = 1 / Math.max(Math.sqrt(ss), 1e-12);
      for (let i = 0; i < D; i++) r[i] *= inv;
    }
  }
  return { data: rows, shape: [B, D] };
}
