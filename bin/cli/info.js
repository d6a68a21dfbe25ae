// swapformer info <model> [--json]
//
// What a model is, as loadPretrained reads it: family and task (labels), the
// config as swapformer's plugins (position, relative bias, norm and its
// placement, activation, head), the tokenizer, the embedding recipe, the
// length limit and what sets it, the weights' size in f32 and q8, and what runs the core
// here (backend, kernels, threads).
import { loadPretrained, runtimeInfo } from '../../bindings/index.js';
import { backendLine, count, downloadProgress, formatBytes, HUB_OPTIONS } from './io.js';

export const spec = {
  name: 'info',
  summary:
    'Prints what a model is: family, task and labels, the config mapped onto plugins, the tokenizer,\nthe embedding recipe, the length limit (and what sets it), and the size of its weights in f32 and q8.',
  args: [{ name: 'model', help: 'a Hugging Face model folder, Hub id (owner/name) or URL, or a file written by swapformer convert' }],
  options: [
    { name: 'json', help: 'one JSON object instead of aligned text' },
    { name: 'max-length', value: 'N', int: { min: 2 }, help: 'as embed --max-length: the limit asked for (checked against the position plugin)' },
    ...HUB_OPTIONS,
  ],
  examples: ['swapformer info BAAI/bge-small-en-v1.5', 'swapformer info minilm.safetensors --json | jq .limits'],
};

/** The data bytes of a saved model file (its tensors, without the header). */
function weightBytes(file) {
  const v = new DataView(file.buffer, file.byteOffset, 8);
  return file.length - 8 - (v.getUint32(0, true) + v.getUint32(4, true) * 2 ** 32);
}

/** The weights' bytes in f32 and in q8: the model saved in its dtype, and a twin on the same weights in the other. */
async function sizes(model) {
  const own = model.encoder.dtype;
  const other = await model.withConfig({}, { dtype: own === 'q8' ? 'f32' : 'q8', threads: 1 });
  try {
    const a = weightBytes(model.encoder.save()),
      b = weightBytes(other.encoder.save());
    return own === 'q8' ? { f32: b, q8: a, loaded: own } : { f32: a, q8: b, loaded: own };
  } finally {
    other.dispose();
  }
}

const SPECIALS = ['cls', 'sep', 'pad', 'unk', 'mask', 'bos', 'eos'];

function tokenizerInfo(t) {
  const special = {};
  for (const k of SPECIALS) {
    const id = t[`${k}TokenId`];
    if (id !== null && id !== undefined) special[k] = { token: t.idToToken(id), id };
  }
  return { kind: t.modelType, vocabSize: t.vocabSize, modelMaxLength: t.modelMaxLength, special };
}

/** maxLength and the limits it is the smallest of, each with where it comes from. */
function limitsInfo(model, asked) {
  const limits = [];
  if (asked !== undefined) limits.push({ limit: asked, from: '--max-length' });
  else {
    if (model.recipe.maxSeqLength) limits.push({ limit: model.recipe.maxSeqLength, from: 'max_seq_length (sentence_bert_config.json)' });
    if (model.tokenizer.modelMaxLength) limits.push({ limit: model.tokenizer.modelMaxLength, from: 'model_max_length (tokenizer_config.json)' });
  }
  const plugin = model.encoder.maxSequenceLength;
  const position = model.encoder.config.position;
  limits.push(
    Number.isFinite(plugin)
      ? { limit: plugin, from: `what position '${position}' encodes (config maxLen)` }
      : { limit: null, from: `position '${position}': no limit of its own` },
  );
  const by = limits.filter((l) => l.limit === model.maxLength).map((l) => l.from);
  return { maxLength: Number.isFinite(model.maxLength) ? model.maxLength : null, setBy: by, limits };
}

function recipeInfo(model) {
  const r = model.recipe;
  return {
    source: r.source,
    pooling: r.pooling,
    includePrompt: r.includePrompt,
    dense: r.dense.map((d) => ({ in: d.inFeatures, out: d.outFeatures, bias: Boolean(d.bias), activation: d.activation })),
    normalize: r.normalize,
    lowercase: r.doLowerCase,
    prompts: model.prompts,
    defaultPrompt: r.defaultPromptName,
    similarity: model.similarityFnName,
  };
}

function configInfo(encoder) {
  const c = encoder.config,
    limit = encoder.maxSequenceLength;
  return {
    layers: c.layers,
    dModel: c.dModel,
    heads: c.heads,
    ffDim: c.ffDim,
    vocabSize: c.vocabSize,
    typeVocabSize: c.typeVocabSize,
    maxLen: c.maxLen,
    position: { plugin: c.position, options: c.positionOptions ?? {}, limit: Number.isFinite(limit) ? limit : null },
    relativeBias: { plugin: c.relativeBias ?? 'none', options: c.relativeBiasOptions ?? {} },
    norm: { plugin: c.norm, placement: c.normPlacement, eps: c.eps, embedNorm: c.embedNorm, finalNorm: c.finalNorm, qkNorm: c.qkNorm },
    activation: c.activation,
    attention: c.localWindow ? { localWindow: c.localWindow, localLayers: c.localLayers } : { localWindow: 0 },
    head: c.head ?? null,
  };
}

const json = (v) => JSON.stringify(v);
const opts = (o) => (o && Object.keys(o).length ? ` ${json(o)}` : '');

/** The info as aligned lines: sections, then `key   value` rows. */
function text(info) {
  const rows = [];
  const section = (name) => rows.push([name]);
  const row = (k, v) => rows.push([k, v]);
  const c = info.config;
  row('model', info.source);
  row('family', info.family);
  row('task', `${info.task}${info.labels ? ` (${count(info.labels.length, 'label')}: ${info.labels.join(', ')})` : ''}`);
  section('config');
  row(
    'size',
    `${count(c.layers, 'layer')}, dModel ${c.dModel}, ${count(c.heads, 'head')}, ffDim ${c.ffDim}, vocab ${c.vocabSize}${c.typeVocabSize ? `, ${count(c.typeVocabSize, 'token type')}` : ''}`,
  );
  row('position', `${c.position.plugin}${opts(c.position.options)}${c.position.limit ? ` (up to ${count(c.position.limit, 'token')})` : ''}`);
  row('relativeBias', `${c.relativeBias.plugin}${opts(c.relativeBias.options)}`);
  row(
    'norm',
    `${c.norm.plugin}, ${c.norm.placement}-norm, eps ${c.norm.eps}${c.norm.embedNorm ? ', embedding norm' : ''}${c.norm.finalNorm ? ', final norm' : ''}${c.norm.qkNorm && c.norm.qkNorm !== 'none' ? `, qk ${c.norm.qkNorm}` : ''}`,
  );
  row('activation', c.activation);
  if (c.attention.localWindow)
    row(
      'attention',
      `local window ${c.attention.localWindow} in ${c.attention.localLayers.length === 1 ? 'layer' : 'layers'} ${c.attention.localLayers.join(', ')}, global elsewhere`,
    );
  row(
    'head',
    c.head
      ? Object.entries(c.head)
          .map(([k, v]) => `${k} ${v}`)
          .join(', ')
      : 'none (the encoder alone)',
  );
  section('tokenizer');
  const t = info.tokenizer;
  row('kind', `${t.kind}, ${count(t.vocabSize, 'token')}`);
  row(
    'special',
    Object.entries(t.special)
      .map(([k, s]) => `${k} ${s.token} (${s.id})`)
      .join(', ') || 'none',
  );
  section('recipe');
  const r = info.recipe;
  row('from', r.source);
  row('pooling', r.pooling.join(' + ') + (r.includePrompt ? '' : ' (prompt tokens left out)'));
  row('dense', r.dense.length ? r.dense.map((d) => `${d.in} -> ${d.out}${d.bias ? '' : ' (no bias)'}, ${d.activation}`).join('; ') : 'none');
  row('normalize', r.normalize ? 'yes (L2)' : 'no');
  if (r.lowercase) row('lowercase', 'yes');
  row(
    'prompts',
    r.prompts && Object.keys(r.prompts).length
      ? Object.entries(r.prompts)
          .map(([k, v]) => `${k}: ${json(v)}${k === r.defaultPrompt ? ' (default)' : ''}`)
          .join(', ')
      : 'none',
  );
  row('similarity', r.similarity);
  section('limits');
  const l = info.limits;
  row('maxLength', l.maxLength === null ? 'none' : `${count(l.maxLength, 'token')}, set by ${l.setBy.join(' and ')}`);
  for (const x of l.limits) row('', x.limit === null ? x.from : `${x.limit}: ${x.from}`);
  section('weights');
  row('f32', `${formatBytes(info.weights.f32)} (${count(info.weights.f32, 'byte')})`);
  row('q8', `${formatBytes(info.weights.q8)} (${count(info.weights.q8, 'byte')}, ${(info.weights.q8 / info.weights.f32).toFixed(2)}x)`);
  row('loaded as', info.weights.loaded);
  section('runtime');
  row('backend', backendLine(info.runtime));
  const width = Math.max(...rows.filter((x) => x.length === 2).map(([k]) => k.length));
  let indent = ''; // rows before the first section are not indented
  return rows
    .map((x) => {
      if (x.length === 1) indent = '  ';
      return x.length === 1 ? x[0] : `${indent}${x[0].padEnd(width + (indent ? 0 : 2))}  ${x[1]}`;
    })
    .join('\n');
}

export async function run({ args, options: o }, { signal }) {
  const downloads = downloadProgress();
  const model = await loadPretrained(args.model, {
    threads: 1,
    maxLength: o.maxLength,
    revision: o.revision,
    hubUrl: o.hubUrl,
    signal,
    onProgress: downloads.update,
  });
  downloads.done();
  try {
    const info = {
      source: args.model,
      family: model.family,
      task: model.task,
      labels: model.labels,
      config: configInfo(model.encoder),
      tokenizer: tokenizerInfo(model.tokenizer),
      recipe: recipeInfo(model),
      limits: limitsInfo(model, o.maxLength),
      weights: await sizes(model),
      runtime: await runtimeInfo(), // what the commands run on by default (embed --threads and serve may ask for others)
    };
    process.stdout.write(`${o.json ? JSON.stringify(info, null, 2) : text(info)}\n`);
    return 0;
  } finally {
    model.dispose();
  }
}
