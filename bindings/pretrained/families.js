// Hugging Face encoder families as data: how each one's config.json and weight
// names map onto swapformer's config and canonical tensors (README "Weights").
// One forward serves them all; a family is a name table, split rules for fused
// tensors and a config translator, in the manner of llama.cpp's tensor-name map.
//
// Sources (re-read them when a detail matters): huggingface/transformers
// models/{bert,roberta,xlm_roberta,distilbert,modernbert,t5,electra,roformer,
// albert,eurobert,deberta_v2}/modeling_*.py, nomic-ai/contrastors
// modeling_hf_nomic_bert.py, jina-bert-implementation (through
// text-embeddings-inference jina.rs), Alibaba-NLP/new-impl modeling.py (GTE
// "new"), chandar-lab/NeoBERT model.py, jinaai/xlm-roberta-flash-implementation
// (jina-embeddings-v3); the traps are collected in shared/reference/hf-encoders.md
// and families-and-deberta.md.
import { SwapformerError } from '../utils/errors.js';
import { detectHead, TIED } from './heads.js';
import { mergeAdapters, loraTasks } from './lora.js';

const unsupported = (message) => new SwapformerError('UNSUPPORTED_MODEL', message);

/** Reads config[key] with a default; `where` names the file in messages. */
function field(hf, key, fallback) {
  const v = hf[key];
  if (v === undefined || v === null) {
    if (fallback === undefined) throw unsupported(`config.json: ${key} is missing`);
    return fallback;
  }
  return v;
}

function requireInt(hf, key, fallback) {
  const v = field(hf, key, fallback);
  if (!Number.isInteger(v) || v < 0) throw unsupported(`config.json: ${key} = ${JSON.stringify(v)} is not a non-negative integer`);
  return v;
}

/** Hugging Face activation names (transformers activations.py) -> swapformer's. */
const ACTIVATIONS = {
  gelu: 'gelu', // the exact erf form
  gelu_new: 'gelu_tanh',
  gelu_pytorch_tanh: 'gelu_tanh',
  gelu_fast: 'gelu_tanh',
  relu: 'relu',
  silu: 'silu',
  swish: 'silu',
};
const GATED = { gelu: 'geglu', gelu_tanh: 'geglu_tanh', silu: 'swiglu' };

/** table[key] when key is the table's own (never an inherited 'constructor' or 'toString'). */
const lookup = (table, key) => (typeof key === 'string' && Object.hasOwn(table, key) ? table[key] : undefined);

function activation(hf, key, fallback, gated = false) {
  const name = field(hf, key, fallback);
  const a = lookup(ACTIVATIONS, name);
  if (!a || (gated && !GATED[a]))
    throw unsupported(
      `config.json: ${key} = ${JSON.stringify(name)} is not supported (${gated ? 'gelu, gelu_new, silu as a gate' : Object.keys(ACTIVATIONS).join(', ')})`,
    );
  return gated ? GATED[a] : a;
}

const BERT_LAYER = [
  ['encoder.layer.{i}.attention.self.query.{p}', 'layers.{i}.attn.q.{p}'],
  ['encoder.layer.{i}.attention.self.key.{p}', 'layers.{i}.attn.k.{p}'],
  ['encoder.layer.{i}.attention.self.value.{p}', 'layers.{i}.attn.v.{p}'],
  ['encoder.layer.{i}.attention.output.dense.{p}', 'layers.{i}.attn.o.{p}'],
  ['encoder.layer.{i}.attention.output.LayerNorm.{p}', 'layers.{i}.norm1.{p}'],
];
const BERT_EMBEDDINGS = [
  ['embeddings.word_embeddings.weight', 'embed.tokens'],
  ['embeddings.token_type_embeddings.weight', 'embed.types'],
  ['embeddings.LayerNorm.{p}', 'embed.norm.{p}'],
];
const BERT_IGNORE = [/^pooler\./, /^cls\./, /^lm_head\./, /^embeddings\.position_ids$/];
/** BERT's whole layer and learned positions (BERT, RoBERTa). */
const BERT_TENSORS = [
  ...BERT_EMBEDDINGS,
  ['embeddings.position_embeddings.weight', 'embed.positions'],
  ...BERT_LAYER,
  ['encoder.layer.{i}.intermediate.dense.{p}', 'layers.{i}.ffn.up.{p}'],
  ['encoder.layer.{i}.output.dense.{p}', 'layers.{i}.ffn.down.{p}'],
  ['encoder.layer.{i}.output.LayerNorm.{p}', 'layers.{i}.norm2.{p}'],
];

/** BERT's post-norm layer and embeddings, common to BERT, RoBERTa and JinaBERT. */
function bertConfig(hf) {
  const pet = field(hf, 'position_embedding_type', 'absolute');
  if (pet !== 'absolute')
    throw unsupported(`config.json: position_embedding_type = ${JSON.stringify(pet)} is not supported (absolute; alibi for jina-embeddings-v2)`);
  return {
    vocabSize: requireInt(hf, 'vocab_size'),
    dModel: requireInt(hf, 'hidden_size'),
    heads: requireInt(hf, 'num_attention_heads'),
    layers: requireInt(hf, 'num_hidden_layers'),
    ffDim: requireInt(hf, 'intermediate_size'),
    typeVocabSize: requireInt(hf, 'type_vocab_size', 2),
    position: 'learned',
    maxLen: requireInt(hf, 'max_position_embeddings', 512),
    norm: 'layernorm',
    normPlacement: 'post',
    finalNorm: false,
    embedNorm: true,
    eps: field(hf, 'layer_norm_eps', 1e-12),
    activation: activation(hf, 'hidden_act', 'gelu'),
  };
}

/** DeBERTa's pos_att_type: a list, or a string "p2c|c2p" (DebertaV2Config splits it), as the terms of the disentangled scheme. */
function debertaTerms(hf) {
  let t = field(hf, 'pos_att_type', []);
  if (typeof t === 'string') t = t.toLowerCase().split('|');
  if (!Array.isArray(t)) throw unsupported(`config.json: pos_att_type = ${JSON.stringify(t)} is not a list or a "c2p|p2c" string`);
  const names = t.map((x) => (typeof x === 'string' ? x.trim() : x)).filter((x) => x !== '');
  const bad = names.find((x) => x !== 'c2p' && x !== 'p2c');
  if (bad !== undefined) throw unsupported(`config.json: pos_att_type has ${JSON.stringify(bad)}, which swapformer does not compute (c2p, p2c)`);
  return ['c2p', 'p2c'].filter((x) => names.includes(x));
}

/** The DeBERTa config's rules for its relative table (modeling_deberta_v2.py DebertaV2Encoder, DisentangledSelfAttention). */
function debertaRelative(hf) {
  const relative = field(hf, 'relative_attention', false) === true;
  const norms = String(field(hf, 'norm_rel_ebd', 'none'))
    .toLowerCase()
    .split('|')
    .map((x) => x.trim());
  const badNorm = norms.find((x) => x !== 'none' && x !== 'layer_norm');
  if (badNorm !== undefined) throw unsupported(`config.json: norm_rel_ebd has ${JSON.stringify(badNorm)} (none, layer_norm)`);
  const maxPos = requireInt(hf, 'max_position_embeddings', 512);
  const maxRel = Number.isInteger(hf.max_relative_positions) && hf.max_relative_positions >= 1 ? hf.max_relative_positions : maxPos; // < 1: max_position_embeddings
  const buckets = Number.isInteger(hf.position_buckets) && hf.position_buckets > 0 ? hf.position_buckets : 0;
  return { relative, normTable: norms.includes('layer_norm'), maxPos, maxRel, buckets, absolute: field(hf, 'position_biased_input', true) === true };
}

const CONV_ACTIVATIONS = { ...ACTIVATIONS, tanh: 'tanh' };

function debertaConfig(hf) {
  const dModel = requireInt(hf, 'hidden_size'),
    heads = requireInt(hf, 'num_attention_heads');
  if (!heads || dModel % heads) throw unsupported(`config.json: hidden_size = ${dModel} is not a multiple of num_attention_heads = ${heads}`);
  const headDim = requireInt(hf, 'attention_head_size', dModel / heads);
  const terms = debertaTerms(hf);
  const r = debertaRelative(hf);
  if (r.relative && !terms.length) throw unsupported('config.json: relative_attention = true with no pos_att_type: a relative table that no score reads');
  const kernel = requireInt(hf, 'conv_kernel_size', 0);
  if (kernel) {
    const groups = requireInt(hf, 'conv_groups', 1); // grouped convolutions: no checkpoint is known to use them
    if (groups !== 1) throw unsupported(`config.json: conv_groups = ${groups} is not supported (1)`);
  }
  // embedding_size != hidden_size: embed_proj (Linear E -> H, no bias) BEFORE the embeddings' LayerNorm (H wide)
  const E = requireInt(hf, 'embedding_size', dModel);
  const convAct = field(hf, 'conv_act', 'tanh');
  if (kernel && (kernel % 2 === 0 || !lookup(CONV_ACTIVATIONS, convAct)))
    throw unsupported(
      `config.json: conv_kernel_size = ${kernel}, conv_act = ${JSON.stringify(convAct)} is not supported (an odd kernel; ${Object.keys(CONV_ACTIVATIONS).join(', ')})`,
    );
  return {
    vocabSize: requireInt(hf, 'vocab_size'),
    dModel,
    heads,
    ...(headDim !== dModel / heads ? { headDim } : {}),
    layers: requireInt(hf, 'num_hidden_layers'),
    ffDim: requireInt(hf, 'intermediate_size'),
    typeVocabSize: requireInt(hf, 'type_vocab_size', 0),
    position: r.absolute ? 'learned' : 'none', // position_biased_input: DeBERTa-v3 has none
    maxLen: r.maxPos,
    ...(r.relative
      ? {
          relativeBias: 'disentangled',
          relativeBiasOptions: {
            buckets: r.buckets,
            maxDistance: r.maxRel,
            terms,
            shareKey: field(hf, 'share_att_key', false) === true,
            normTable: r.normTable,
          },
        }
      : {}),
    // every score over sqrt(d x (1 + terms)), whether or not relative_attention computes the terms (scale_factor)
    ...(terms.length ? { attnScale: 1 / Math.sqrt(headDim * (1 + terms.length)) } : {}),
    norm: 'layernorm',
    normPlacement: 'post',
    finalNorm: false,
    embedNorm: true,
    ...(E !== dModel ? { embedDim: E, embedNormAfterProj: true } : {}),
    eps: field(hf, 'layer_norm_eps', 1e-7),
    activation: activation(hf, 'hidden_act', 'gelu'),
    ...(kernel ? { conv: { kernel, activation: lookup(CONV_ACTIVATIONS, convAct) } } : {}),
  };
}

/** RoPE's base: rope_parameters.rope_theta (transformers v5), else rope_theta; only the default rope_type. */
function ropeTheta(hf, fallback) {
  const p = hf.rope_parameters;
  if (p !== undefined && p !== null) {
    if (typeof p !== 'object' || Array.isArray(p)) throw unsupported('config.json: rope_parameters must be an object');
    const type = p.rope_type ?? p.type ?? 'default';
    if (type !== 'default') throw unsupported(`config.json: rope_parameters.rope_type = ${JSON.stringify(type)} is not supported (default)`);
    if (p.rope_theta !== undefined) return p.rope_theta;
  }
  const scaling = hf.rope_scaling;
  if (scaling !== undefined && scaling !== null && (scaling.rope_type ?? scaling.type ?? 'default') !== 'default')
    throw unsupported(`config.json: rope_scaling = ${JSON.stringify(scaling)} is not supported (none)`);
  return field(hf, 'rope_theta', fallback);
}

/** embedding_size when it is not hidden_size: the embeddings' width, projected to the residual stream (embed.proj). */
function embedDim(hf) {
  const e = requireInt(hf, 'embedding_size', requireInt(hf, 'hidden_size'));
  return e === hf.hidden_size ? {} : { embedDim: e };
}

const isJina = (hf) =>
  hf.model_type === 'bert' &&
  (hf.position_embedding_type === 'alibi' ||
    /jina-bert/.test(String(hf._name_or_path ?? '')) ||
    Object.values(hf.auto_map ?? {}).some((v) => /jina-bert/.test(String(v))));

export const FAMILIES = [
  {
    name: 'bert',
    description: 'BERT (MiniLM, BGE, E5, GTE)',
    matches: (hf) => hf.model_type === 'bert' && !isJina(hf),
    prefixes: ['bert.'],
    ignore: BERT_IGNORE,
    tensors: BERT_TENSORS,
    config: bertConfig,
  },
  {
    // positions count from padding_idx + 1: real tokens at rows 2, 3, ...
    name: 'roberta',
    description: 'RoBERTa, XLM-RoBERTa (multilingual-e5)',
    matches: (hf) => ['roberta', 'xlm-roberta', 'camembert'].includes(hf.model_type) && hf.position_embedding_type !== 'rotary', // rotary: jina-v3
    prefixes: ['roberta.', 'xlm_roberta.'],
    ignore: BERT_IGNORE,
    tensors: BERT_TENSORS,
    config: (hf) => ({
      ...bertConfig(hf),
      typeVocabSize: requireInt(hf, 'type_vocab_size', 1),
      positionOptions: { offset: requireInt(hf, 'pad_token_id', 1) + 1 },
    }),
  },
  {
    // learned positions from padding_idx + 1 (padding_idx is 1 whatever the config says) and T5's
    // bidirectional buckets (32, whatever relative_attention_num_buckets says, max distance 128)
    // added to q.k/sqrt(d) in every layer: the two position slots at once
    name: 'mpnet',
    description: 'MPNet (all-mpnet-base-v2, multi-qa-mpnet)',
    matches: (hf) => hf.model_type === 'mpnet',
    prefixes: ['mpnet.'],
    ignore: [/^pooler\./, /^lm_head\./, /^classifier\./, /^embeddings\.position_ids$/],
    tensors: [
      ['embeddings.word_embeddings.weight', 'embed.tokens'],
      ['embeddings.position_embeddings.weight', 'embed.positions'],
      ['embeddings.LayerNorm.{p}', 'embed.norm.{p}'],
      ['encoder.relative_attention_bias.weight', 'embed.relative_bias'],
      ['encoder.layer.{i}.attention.attn.q.{p}', 'layers.{i}.attn.q.{p}'],
      ['encoder.layer.{i}.attention.attn.k.{p}', 'layers.{i}.attn.k.{p}'],
      ['encoder.layer.{i}.attention.attn.v.{p}', 'layers.{i}.attn.v.{p}'],
      ['encoder.layer.{i}.attention.attn.o.{p}', 'layers.{i}.attn.o.{p}'],
      ['encoder.layer.{i}.attention.LayerNorm.{p}', 'layers.{i}.norm1.{p}'],
      ['encoder.layer.{i}.intermediate.dense.{p}', 'layers.{i}.ffn.up.{p}'],
      ['encoder.layer.{i}.output.dense.{p}', 'layers.{i}.ffn.down.{p}'],
      ['encoder.layer.{i}.output.LayerNorm.{p}', 'layers.{i}.norm2.{p}'],
    ],
    config: (hf) => {
      const buckets = requireInt(hf, 'relative_attention_num_buckets', 32);
      if (buckets !== 32)
        throw unsupported(
          `config.json: relative_attention_num_buckets = ${buckets}: MPNet computes 32 buckets whatever the config says, so a table of ${buckets} rows would be read wrongly`,
        );
      return {
        vocabSize: requireInt(hf, 'vocab_size'),
        dModel: requireInt(hf, 'hidden_size'),
        heads: requireInt(hf, 'num_attention_heads'),
        layers: requireInt(hf, 'num_hidden_layers'),
        ffDim: requireInt(hf, 'intermediate_size'),
        position: 'learned',
        maxLen: requireInt(hf, 'max_position_embeddings', 512),
        positionOptions: { offset: 2 },
        relativeBias: 't5',
        relativeBiasOptions: { buckets: 32, maxDistance: 128 },
        norm: 'layernorm',
        normPlacement: 'post',
        finalNorm: false,
        embedNorm: true,
        eps: field(hf, 'layer_norm_eps', 1e-12),
        activation: activation(hf, 'hidden_act', 'gelu'),
      };
    },
  },
  {
    name: 'distilbert',
    description: 'DistilBERT',
    matches: (hf) => hf.model_type === 'distilbert',
    prefixes: ['distilbert.'],
    ignore: [/^vocab_(transform|layer_norm|projector)\./, /^embeddings\.position_ids$/, /^(pre_)?classifier\./, /^qa_outputs\./],
    tensors: [
      ['embeddings.word_embeddings.weight', 'embed.tokens'],
      ['embeddings.position_embeddings.weight', 'embed.positions'], // sinusoidal_pos_embds: the saved table holds the sinusoids
      ['embeddings.LayerNorm.{p}', 'embed.norm.{p}'],
      ['transformer.layer.{i}.attention.q_lin.{p}', 'layers.{i}.attn.q.{p}'],
      ['transformer.layer.{i}.attention.k_lin.{p}', 'layers.{i}.attn.k.{p}'],
      ['transformer.layer.{i}.attention.v_lin.{p}', 'layers.{i}.attn.v.{p}'],
      ['transformer.layer.{i}.attention.out_lin.{p}', 'layers.{i}.attn.o.{p}'],
      ['transformer.layer.{i}.sa_layer_norm.{p}', 'layers.{i}.norm1.{p}'],
      ['transformer.layer.{i}.ffn.lin1.{p}', 'layers.{i}.ffn.up.{p}'],
      ['transformer.layer.{i}.ffn.lin2.{p}', 'layers.{i}.ffn.down.{p}'],
      ['transformer.layer.{i}.output_layer_norm.{p}', 'layers.{i}.norm2.{p}'],
    ],
    config: (hf) => ({
      vocabSize: requireInt(hf, 'vocab_size'),
      dModel: requireInt(hf, 'dim'),
      heads: requireInt(hf, 'n_heads'),
      layers: requireInt(hf, 'n_layers'),
      ffDim: requireInt(hf, 'hidden_dim'),
      position: 'learned',
      maxLen: requireInt(hf, 'max_position_embeddings', 512),
      norm: 'layernorm',
      normPlacement: 'post',
      finalNorm: false,
      embedNorm: true,
      eps: 1e-12, // hard-coded in DistilBERT, not read from the config
      activation: activation(hf, 'activation', 'gelu'),
    }),
  },
  {
    // jina-embeddings-v2: model_type bert, never to be run as plain BERT
    name: 'jina-bert',
    description: 'JinaBERT v2 (jina-embeddings-v2)',
    matches: isJina,
    prefixes: ['bert.'],
    ignore: BERT_IGNORE,
    tensors: [
      ...BERT_EMBEDDINGS,
      ...BERT_LAYER,
      // gated_layers [2I, H]: the first half is activated (the gate), the second multiplied (up)
      ['encoder.layer.{i}.mlp.gated_layers.{p}', ['layers.{i}.ffn.gate.{p}', 'layers.{i}.ffn.up.{p}']],
      ['encoder.layer.{i}.mlp.wo.{p}', 'layers.{i}.ffn.down.{p}'],
      ['encoder.layer.{i}.mlp.layernorm.{p}', 'layers.{i}.norm2.{p}'],
    ],
    config: (hf) => {
      const ff = field(hf, 'feed_forward_type', 'original');
      if (ff !== 'geglu') throw unsupported(`config.json: feed_forward_type = ${JSON.stringify(ff)} is not supported (geglu)`);
      const { maxLen: _maxLen, positionOptions: _p, ...rest } = bertConfig({ ...hf, position_embedding_type: 'absolute' });
      return { ...rest, position: 'alibi', activation: activation(hf, 'hidden_act', 'gelu', true) };
    },
  },
  {
    name: 'nomic-bert',
    description: 'NomicBERT (nomic-embed-text)',
    matches: (hf) => hf.model_type === 'nomic_bert',
    prefixes: ['bert.'],
    ignore: [/^cls\./],
    tensors: [
      ['embeddings.word_embeddings.weight', 'embed.tokens'],
      ['embeddings.token_type_embeddings.weight', 'embed.types'],
      ['emb_ln.{p}', 'embed.norm.{p}'],
      ['encoder.layers.{i}.attn.Wqkv.{p}', ['layers.{i}.attn.q.{p}', 'layers.{i}.attn.k.{p}', 'layers.{i}.attn.v.{p}']],
      ['encoder.layers.{i}.attn.out_proj.{p}', 'layers.{i}.attn.o.{p}'],
      ['encoder.layers.{i}.mlp.fc11.{p}', 'layers.{i}.ffn.up.{p}'], // fc12 is the activated gate
      ['encoder.layers.{i}.mlp.fc12.{p}', 'layers.{i}.ffn.gate.{p}'],
      ['encoder.layers.{i}.mlp.fc1.{p}', 'layers.{i}.ffn.up.{p}'], // the non-gated variant
      ['encoder.layers.{i}.mlp.fc2.{p}', 'layers.{i}.ffn.down.{p}'],
      ['encoder.layers.{i}.norm1.{p}', 'layers.{i}.norm1.{p}'],
      ['encoder.layers.{i}.norm2.{p}', 'layers.{i}.norm2.{p}'],
    ],
    config: (hf, shape) => {
      if (field(hf, 'prenorm', false)) throw unsupported('config.json: prenorm = true is not supported (nomic-embed is post-norm)');
      if (field(hf, 'rotary_emb_fraction', 1) !== 1) throw unsupported(`config.json: rotary_emb_fraction = ${hf.rotary_emb_fraction} is not supported (1.0)`);
      if (field(hf, 'parallel_block', false)) throw unsupported('config.json: parallel_block = true is not supported');
      const act = field(hf, 'activation_function', 'swiglu');
      const gated = lookup({ swiglu: 'swiglu', geglu: 'geglu' }, act);
      const plain = lookup({ gelu: 'gelu', gelu_new: 'gelu_tanh', relu: 'relu' }, act);
      if (!gated && !plain)
        throw unsupported(`config.json: activation_function = ${JSON.stringify(act)} is not supported (swiglu, geglu, gelu, gelu_new, relu)`);
      const layer0 = shape(gated ? 'encoder.layers.0.mlp.fc11.weight' : 'encoder.layers.0.mlp.fc1.weight');
      const factor = hf.rotary_scaling_factor;
      return {
        vocabSize: requireInt(hf, 'vocab_size'),
        dModel: requireInt(hf, 'n_embd'),
        heads: requireInt(hf, 'n_head'),
        layers: requireInt(hf, 'n_layer'),
        ffDim: layer0 ? layer0[0] : requireInt(hf, 'n_inner'), // contrastors rounds the width up: the tensors know it
        typeVocabSize: requireInt(hf, 'type_vocab_size', 2),
        position: 'rope',
        positionOptions: {
          base: field(hf, 'rotary_emb_base', 10000),
          style: field(hf, 'rotary_emb_interleaved', false) ? 'interleaved' : 'half',
          ...(factor ? { scaling: { type: 'dynamic', factor, originalMaxLen: requireInt(hf, 'max_trained_positions', 2048) } } : {}),
        },
        norm: 'layernorm',
        normPlacement: 'post',
        finalNorm: false,
        embedNorm: true,
        eps: field(hf, 'layer_norm_epsilon', 1e-12),
        activation: gated ?? plain,
      };
    },
  },
  {
    name: 'modernbert',
    description: 'ModernBERT',
    matches: (hf) => hf.model_type === 'modernbert',
    prefixes: ['model.'],
    ignore: [/^head\./, /^decoder\./, /^classifier\./, /^drop\./],
    tensors: [
      ['embeddings.tok_embeddings.weight', 'embed.tokens'],
      ['embeddings.norm.{p}', 'embed.norm.{p}'],
      ['layers.{i}.attn_norm.{p}', 'layers.{i}.norm1.{p}'], // absent in layer 0
      ['layers.{i}.attn.Wqkv.{p}', ['layers.{i}.attn.q.{p}', 'layers.{i}.attn.k.{p}', 'layers.{i}.attn.v.{p}']],
      ['layers.{i}.attn.Wo.{p}', 'layers.{i}.attn.o.{p}'],
      ['layers.{i}.mlp_norm.{p}', 'layers.{i}.norm2.{p}'],
      // Wi -> (input, gate): the first half is activated
      ['layers.{i}.mlp.Wi.{p}', ['layers.{i}.ffn.gate.{p}', 'layers.{i}.ffn.up.{p}']],
      ['layers.{i}.mlp.Wo.{p}', 'layers.{i}.ffn.down.{p}'],
      ['final_norm.{p}', 'final_norm.{p}'],
    ],
    config: (hf) => {
      const L = requireInt(hf, 'num_hidden_layers');
      // layer types: the v5 list, else global every n-th layer from 0
      let types = hf.layer_types;
      if (types !== undefined && (!Array.isArray(types) || types.length !== L)) throw unsupported('config.json: layer_types must list one type per layer');
      if (!types) {
        const every = requireInt(hf, 'global_attn_every_n_layers', 3);
        if (every === 0)
          throw unsupported('config.json: global_attn_every_n_layers = 0 is not supported (a positive integer: every n-th layer attends globally)');
        types = Array.from({ length: L }, (_, i) => (i % every === 0 ? 'full_attention' : 'sliding_attention'));
      }
      for (const t of types)
        if (t !== 'full_attention' && t !== 'sliding_attention')
          throw unsupported(`config.json: layer_types has ${JSON.stringify(t)} (full_attention, sliding_attention)`);
      const theta = (kind, oldKey, fallback) => {
        const p = hf.rope_parameters?.[kind];
        if (p && (p.rope_type ?? 'default') !== 'default')
          throw unsupported(`config.json: rope_parameters.${kind}.rope_type = ${JSON.stringify(p.rope_type)} is not supported (default)`);
        return p?.rope_theta ?? field(hf, oldKey, fallback);
      };
      const local = types.flatMap((t, i) => (t === 'sliding_attention' ? [i] : []));
      const window = Math.floor(requireInt(hf, 'local_attention', 128) / 2);
      return {
        vocabSize: requireInt(hf, 'vocab_size'),
        dModel: requireInt(hf, 'hidden_size'),
        heads: requireInt(hf, 'num_attention_heads'),
        layers: L,
        ffDim: requireInt(hf, 'intermediate_size'),
        position: 'rope',
        positionOptions: {
          base: theta('full_attention', 'global_rope_theta', 160000),
          localBase: theta('sliding_attention', 'local_rope_theta', 10000),
          style: 'half',
        },
        localWindow: local.length ? window : 0,
        localLayers: local,
        norm: 'layernorm',
        normPlacement: 'pre',
        finalNorm: true,
        embedNorm: true,
        firstAttnNorm: false,
        eps: field(hf, 'norm_eps', 1e-5),
        activation: activation(hf, 'hidden_activation', 'gelu', true),
      };
    },
  },
  {
    // BERT's post-norm layer; positions by the disentangled scheme (relativeBias), absolute ones only with
    // position_biased_input; v2's convolution after layer 0 (config.conv)
    name: 'deberta-v2',
    description: 'DeBERTa-v2/v3, mDeBERTa-v3 (nli-deberta-v3, mxbai-rerank-v1)',
    matches: (hf) => hf.model_type === 'deberta-v2',
    prefixes: ['deberta.'],
    // lm_predictions / cls: the masked-LM head (heads.js when asked for), mask_predictions: v3's replaced-token
    // detection; a saved position table without position_biased_input, a LayerNorm without the relative table:
    // HF ignores them (_keys_to_ignore_on_load_unexpected, DebertaV2Encoder)
    ignore: (hf) => {
      const r = debertaRelative(hf);
      return [
        /^embeddings\.position_ids$/,
        /^pooler\./,
        /^cls\./,
        /^lm_predictions\./,
        /^mask_predictions\./,
        ...(r.absolute ? [] : [/^embeddings\.position_embeddings\.weight$/]),
        ...(r.relative ? [] : [/^encoder\.(rel_embeddings\.weight|LayerNorm\.(weight|bias))$/]),
      ];
    },
    tensors: [
      ['embeddings.word_embeddings.weight', 'embed.tokens'],
      ['embeddings.token_type_embeddings.weight', 'embed.types'],
      ['embeddings.position_embeddings.weight', 'embed.positions'],
      ['embeddings.LayerNorm.{p}', 'embed.norm.{p}'],
      ['embeddings.embed_proj.weight', 'embed.proj.weight'],
      ['encoder.rel_embeddings.weight', 'embed.rel_table'],
      ['encoder.LayerNorm.{p}', 'embed.rel_norm.{p}'],
      ['encoder.conv.conv.{p}', 'conv.{p}'], // [C, C, k]: the core's [C, C k], the same bytes
      ['encoder.conv.LayerNorm.{p}', 'conv.norm.{p}'],
      ['encoder.layer.{i}.attention.self.query_proj.{p}', 'layers.{i}.attn.q.{p}'],
      ['encoder.layer.{i}.attention.self.key_proj.{p}', 'layers.{i}.attn.k.{p}'],
      ['encoder.layer.{i}.attention.self.value_proj.{p}', 'layers.{i}.attn.v.{p}'],
      ['encoder.layer.{i}.attention.self.pos_key_proj.{p}', 'layers.{i}.attn.pos_k.{p}'],
      ['encoder.layer.{i}.attention.self.pos_query_proj.{p}', 'layers.{i}.attn.pos_q.{p}'],
      ['encoder.layer.{i}.attention.output.dense.{p}', 'layers.{i}.attn.o.{p}'],
      ['encoder.layer.{i}.attention.output.LayerNorm.{p}', 'layers.{i}.norm1.{p}'],
      ['encoder.layer.{i}.intermediate.dense.{p}', 'layers.{i}.ffn.up.{p}'],
      ['encoder.layer.{i}.output.dense.{p}', 'layers.{i}.ffn.down.{p}'],
      ['encoder.layer.{i}.output.LayerNorm.{p}', 'layers.{i}.norm2.{p}'],
    ],
    config: debertaConfig,
  },
  {
    name: 't5',
    description: 'T5 / mT5 encoder (sentence-t5)',
    matches: (hf) => ['t5', 'mt5'].includes(hf.model_type),
    prefixes: [],
    ignore: [/^decoder\./, /^lm_head\./],
    tensors: [
      ['encoder.embed_tokens.weight', 'embed.tokens'], // tied to shared.weight: either may be saved
      ['shared.weight', 'embed.tokens'],
      ['encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight', 'embed.relative_bias'], // block 0 only, shared
      ['encoder.block.{i}.layer.0.SelfAttention.q.weight', 'layers.{i}.attn.q.weight'],
      ['encoder.block.{i}.layer.0.SelfAttention.k.weight', 'layers.{i}.attn.k.weight'],
      ['encoder.block.{i}.layer.0.SelfAttention.v.weight', 'layers.{i}.attn.v.weight'],
      ['encoder.block.{i}.layer.0.SelfAttention.o.weight', 'layers.{i}.attn.o.weight'],
      ['encoder.block.{i}.layer.0.layer_norm.weight', 'layers.{i}.norm1.weight'],
      ['encoder.block.{i}.layer.1.DenseReluDense.wi.weight', 'layers.{i}.ffn.up.weight'],
      ['encoder.block.{i}.layer.1.DenseReluDense.wi_0.weight', 'layers.{i}.ffn.gate.weight'], // activated
      ['encoder.block.{i}.layer.1.DenseReluDense.wi_1.weight', 'layers.{i}.ffn.up.weight'],
      ['encoder.block.{i}.layer.1.DenseReluDense.wo.weight', 'layers.{i}.ffn.down.weight'],
      ['encoder.block.{i}.layer.1.layer_norm.weight', 'layers.{i}.norm2.weight'],
      ['encoder.final_layer_norm.weight', 'final_norm.weight'],
    ],
    config: (hf) => {
      // feed_forward_proj 'gated-gelu' is forced to the tanh GELU (gelu_new) by transformers
      // as transformers' T5Config: 'act' or 'gated-act', nothing else
      const proj = field(hf, 'feed_forward_proj', 'relu');
      if (typeof proj !== 'string' || !/^(gated-)?[^-]+$/.test(proj))
        throw unsupported(
          `config.json: feed_forward_proj = ${JSON.stringify(proj)} is not supported ('relu', 'gelu', 'gated-gelu' or another activation, optionally 'gated-')`,
        );
      const gated = proj.startsWith('gated-');
      const act = hf.dense_act_fn ?? (proj === 'gated-gelu' ? 'gelu_new' : proj.replace(/^gated-/, ''));
      return {
        vocabSize: requireInt(hf, 'vocab_size'),
        dModel: requireInt(hf, 'd_model'),
        heads: requireInt(hf, 'num_heads'),
        headDim: requireInt(hf, 'd_kv'),
        attnScale: 1, // T5 folds 1/sqrt(d) into its initialisation
        layers: requireInt(hf, 'num_layers'),
        ffDim: requireInt(hf, 'd_ff'),
        position: 'none', // T5 has no absolute positions, only the relative bias of block 0, shared by every block
        relativeBias: 't5',
        relativeBiasOptions: {
          buckets: requireInt(hf, 'relative_attention_num_buckets', 32),
          maxDistance: requireInt(hf, 'relative_attention_max_distance', 128),
        },
        norm: 'rmsnorm',
        normPlacement: 'pre',
        finalNorm: true,
        eps: field(hf, 'layer_norm_epsilon', 1e-6),
        activation: activation({ act }, 'act', undefined, gated),
      };
    },
  },
  {
    // BERT's layer; embeddings of embedding_size projected to hidden_size by
    // embeddings_project after their LayerNorm (ElectraModel). The
    // discriminator's replaced-token head (ElectraForPreTraining) is not an encoder's.
    name: 'electra',
    description: 'ELECTRA',
    matches: (hf) => hf.model_type === 'electra',
    prefixes: ['electra.'],
    ignore: [...BERT_IGNORE, /^discriminator_predictions\./, /^generator_predictions\./, /^generator_lm_head\./],
    tensors: [...BERT_TENSORS, ['embeddings_project.{p}', 'embed.proj.{p}']],
    config: (hf) => ({ ...bertConfig(hf), ...embedDim(hf) }),
  },
  {
    // BERT's layout without a position table: RoPE on q and k in RoFormer's
    // interleaved pairs, base 10000 (RoFormerSinusoidalPositionalEmbedding); the
    // saved encoder.embed_positions is that fixed sinusoid table, not a weight.
    name: 'roformer',
    description: 'RoFormer',
    matches: (hf) => hf.model_type === 'roformer',
    prefixes: ['roformer.'],
    ignore: [...BERT_IGNORE, /^encoder\.embed_positions\.weight$/],
    tensors: [...BERT_EMBEDDINGS, ...BERT_TENSORS.slice(4), ['embeddings_project.{p}', 'embed.proj.{p}']],
    config: (hf) => {
      if (field(hf, 'rotary_value', false)) throw unsupported('config.json: rotary_value = true is not supported (RoPE on q and k only)');
      const { maxLen: _maxLen, ...rest } = bertConfig({ ...hf, position_embedding_type: 'absolute' });
      return { ...rest, position: 'rope', positionOptions: { base: 10000, style: 'interleaved' }, ...embedDim(hf) };
    },
  },
  {
    // jina-embeddings-v3: XLM-RoBERTa with rotary positions, a fused Wqkv, the
    // flash-attention Block names and task LoRA adapters (lora.js), merged at load
    name: 'jina-v3',
    description: 'jina-embeddings-v3 (XLM-RoBERTa with RoPE and task adapters)',
    matches: (hf) => hf.model_type === 'xlm-roberta' && hf.position_embedding_type === 'rotary',
    prefixes: ['roberta.'],
    ignore: [/^pooler\./, /^lm_head\./, /^embeddings\.position_ids$/],
    prepare: mergeAdapters,
    tensors: [
      ['embeddings.word_embeddings.weight', 'embed.tokens'],
      ['embeddings.token_type_embeddings.weight', 'embed.types'],
      ['emb_ln.{p}', 'embed.norm.{p}'],
      ['encoder.layers.{i}.mixer.Wqkv.{p}', ['layers.{i}.attn.q.{p}', 'layers.{i}.attn.k.{p}', 'layers.{i}.attn.v.{p}']],
      ['encoder.layers.{i}.mixer.out_proj.{p}', 'layers.{i}.attn.o.{p}'],
      ['encoder.layers.{i}.norm1.{p}', 'layers.{i}.norm1.{p}'],
      ['encoder.layers.{i}.mlp.fc1.{p}', 'layers.{i}.ffn.up.{p}'],
      ['encoder.layers.{i}.mlp.fc2.{p}', 'layers.{i}.ffn.down.{p}'],
      ['encoder.layers.{i}.norm2.{p}', 'layers.{i}.norm2.{p}'],
    ],
    config: (hf, shape) => {
      const H = requireInt(hf, 'hidden_size'),
        heads = requireInt(hf, 'num_attention_heads');
      const rot = field(hf, 'rotary_emb_dim', H / heads);
      if (rot !== H / heads) throw unsupported(`config.json: rotary_emb_dim = ${rot} is not supported (the head size, ${H / heads})`);
      if (field(hf, 'rotary_emb_scale_base', null) !== null) throw unsupported('config.json: rotary_emb_scale_base (xPos) is not supported');
      const tokens = shape('embed.tokens');
      const { maxLen: _maxLen, ...rest } = bertConfig({ ...hf, position_embedding_type: 'absolute' });
      return {
        ...rest,
        vocabSize: tokens ? tokens[0] : rest.vocabSize, // pad_vocab_size_multiple may have grown the table
        typeVocabSize: requireInt(hf, 'type_vocab_size', 1),
        position: 'rope',
        positionOptions: { base: field(hf, 'rotary_emb_base', 10000), style: field(hf, 'rotary_emb_interleaved', false) ? 'interleaved' : 'half' },
        eps: field(hf, 'layer_norm_eps', 1e-5),
      };
    },
  },
  {
    // Alibaba's "new" architecture (gte-*-v1.5, gte-multilingual): BERT's
    // post-norm layer with a fused qkv_proj, RoPE (rope_scaling ntk: fixed NTK,
    // at every length), and a GLU whose first half is the up projection and
    // the second the activated gate (the opposite of JinaBERT's)
    name: 'gte',
    description: 'GTE "new" (gte-*-v1.5, gte-multilingual, snowflake-arctic-embed-m-v2.0)',
    matches: (hf) => hf.model_type === 'new' || hf.model_type === 'gte',
    prefixes: ['new.'],
    ignore: [/^pooler\./, /^lm_head\./, /^classifier\./, /^embeddings\.position_ids$/],
    tensors: [
      ...BERT_EMBEDDINGS,
      ['encoder.layer.{i}.attention.qkv_proj.{p}', ['layers.{i}.attn.q.{p}', 'layers.{i}.attn.k.{p}', 'layers.{i}.attn.v.{p}']],
      ['encoder.layer.{i}.attention.o_proj.{p}', 'layers.{i}.attn.o.{p}'],
      ['encoder.layer.{i}.attn_ln.{p}', 'layers.{i}.norm1.{p}'],
      ['encoder.layer.{i}.mlp.up_gate_proj.{p}', ['layers.{i}.ffn.up.{p}', 'layers.{i}.ffn.gate.{p}']],
      ['encoder.layer.{i}.mlp.down_proj.{p}', 'layers.{i}.ffn.down.{p}'],
      ['encoder.layer.{i}.mlp_ln.{p}', 'layers.{i}.norm2.{p}'],
    ],
    config: (hf) => {
      const pet = field(hf, 'position_embedding_type', 'rope');
      if (pet !== 'rope') throw unsupported(`config.json: position_embedding_type = ${JSON.stringify(pet)} is not supported (rope)`);
      if (field(hf, 'logn_attention_scale', false)) throw unsupported('config.json: logn_attention_scale = true is not supported');
      // rms_norm would norm the layers only: the embeddings' LayerNorm stays (one norm plugin runs both here)
      const lnType = field(hf, 'layer_norm_type', 'layer_norm');
      if (lnType !== 'layer_norm') throw unsupported(`config.json: layer_norm_type = ${JSON.stringify(lnType)} is not supported (layer_norm)`);
      const scaling = field(hf, 'rope_scaling', null);
      let ntk = {};
      if (scaling !== null) {
        if (typeof scaling !== 'object' || scaling.type !== 'ntk' || (scaling.mixed_b ?? null) !== null)
          throw unsupported(`config.json: rope_scaling = ${JSON.stringify(scaling)} is not supported ({type: 'ntk', factor}, without mixed_b)`);
        ntk = { scaling: { type: 'fixed-ntk', factor: field(scaling, 'factor') } };
      }
      return {
        vocabSize: requireInt(hf, 'vocab_size'),
        dModel: requireInt(hf, 'hidden_size'),
        heads: requireInt(hf, 'num_attention_heads'),
        layers: requireInt(hf, 'num_hidden_layers'),
        ffDim: requireInt(hf, 'intermediate_size'),
        typeVocabSize: requireInt(hf, 'type_vocab_size', 1),
        position: 'rope',
        positionOptions: { base: field(hf, 'rope_theta', 10000), style: 'half', ...ntk },
        norm: 'layernorm',
        normPlacement: 'post',
        finalNorm: false,
        embedNorm: true,
        eps: field(hf, 'layer_norm_eps', 1e-12),
        activation: activation(hf, 'hidden_act', 'gelu', true),
      };
    },
  },
  {
    // Llama's layer, bidirectional (transformers models/eurobert): pre-RMSNorm,
    // RoPE (rotate_half), SwiGLU, grouped-query attention, a final norm; no
    // biases unless attention_bias / mlp_bias (the tensors say which)
    name: 'eurobert',
    description: 'EuroBERT',
    matches: (hf) => hf.model_type === 'eurobert',
    prefixes: ['model.'],
    ignore: [/^lm_head\./, /^dense\./, /^classifier\./],
    tensors: [
      ['embed_tokens.weight', 'embed.tokens'],
      ['layers.{i}.input_layernorm.weight', 'layers.{i}.norm1.weight'],
      ['layers.{i}.self_attn.q_proj.{p}', 'layers.{i}.attn.q.{p}'],
      ['layers.{i}.self_attn.k_proj.{p}', 'layers.{i}.attn.k.{p}'],
      ['layers.{i}.self_attn.v_proj.{p}', 'layers.{i}.attn.v.{p}'],
      ['layers.{i}.self_attn.o_proj.{p}', 'layers.{i}.attn.o.{p}'],
      ['layers.{i}.post_attention_layernorm.weight', 'layers.{i}.norm2.weight'],
      ['layers.{i}.mlp.gate_proj.{p}', 'layers.{i}.ffn.gate.{p}'],
      ['layers.{i}.mlp.up_proj.{p}', 'layers.{i}.ffn.up.{p}'],
      ['layers.{i}.mlp.down_proj.{p}', 'layers.{i}.ffn.down.{p}'],
      ['norm.weight', 'final_norm.weight'],
    ],
    config: (hf) => {
      const heads = requireInt(hf, 'num_attention_heads');
      return {
        vocabSize: requireInt(hf, 'vocab_size'),
        dModel: requireInt(hf, 'hidden_size'),
        heads,
        kvHeads: requireInt(hf, 'num_key_value_heads', heads),
        ...(hf.head_dim !== undefined && hf.head_dim !== null ? { headDim: requireInt(hf, 'head_dim') } : {}),
        layers: requireInt(hf, 'num_hidden_layers'),
        ffDim: requireInt(hf, 'intermediate_size'),
        position: 'rope',
        positionOptions: { base: ropeTheta(hf, 10000), style: 'half' },
        norm: 'rmsnorm',
        normPlacement: 'pre',
        finalNorm: true,
        eps: field(hf, 'rms_norm_eps', 1e-5),
        activation: activation(hf, 'hidden_act', 'silu', true),
      };
    },
  },
  {
    // chandar-lab/NeoBERT model.py: pre-RMSNorm, RoPE on complex (interleaved)
    // pairs with base 10000, SwiGLU (xformers' fused w12 = [w1 | w2], silu on
    // w1) of width 2/3 intermediate_size rounded up to a multiple of 8, no
    // biases, a final norm; qkv is viewed (heads, 3 x head) and chunked, so its
    // rows interleave q, k and v per head
    name: 'neobert',
    description: 'NeoBERT',
    matches: (hf) => hf.model_type === 'neobert',
    prefixes: ['model.'],
    ignore: [/^decoder\./, /^dense\./, /^classifier\./],
    tensors: [
      ['encoder.weight', 'embed.tokens'],
      [
        'transformer_encoder.{i}.qkv.weight',
        ['layers.{i}.attn.q.weight', 'layers.{i}.attn.k.weight', 'layers.{i}.attn.v.weight'],
        { perHead: 'num_attention_heads' },
      ],
      ['transformer_encoder.{i}.wo.weight', 'layers.{i}.attn.o.weight'],
      ['transformer_encoder.{i}.attention_norm.weight', 'layers.{i}.norm1.weight'],
      ['transformer_encoder.{i}.ffn_norm.weight', 'layers.{i}.norm2.weight'],
      ['transformer_encoder.{i}.ffn.w12.weight', ['layers.{i}.ffn.gate.weight', 'layers.{i}.ffn.up.weight']],
      ['transformer_encoder.{i}.ffn.w1.weight', 'layers.{i}.ffn.gate.weight'], // the unfused SwiGLU
      ['transformer_encoder.{i}.ffn.w2.weight', 'layers.{i}.ffn.up.weight'],
      ['transformer_encoder.{i}.ffn.w3.weight', 'layers.{i}.ffn.down.weight'],
      ['layer_norm.weight', 'final_norm.weight'],
    ],
    config: (hf, shape) => {
      if (!field(hf, 'rope', true)) throw unsupported('config.json: rope = false is not supported (RoPE)');
      if (!field(hf, 'rms_norm', true)) throw unsupported('config.json: rms_norm = false is not supported (RMSNorm)');
      if (String(field(hf, 'hidden_act', 'swiglu')).toLowerCase() !== 'swiglu')
        throw unsupported(`config.json: hidden_act = ${JSON.stringify(hf.hidden_act)} is not supported (SwiGLU)`);
      const up = shape('layers.0.ffn.up.weight');
      const I = requireInt(hf, 'intermediate_size', 3072);
      return {
        vocabSize: requireInt(hf, 'vocab_size'),
        dModel: requireInt(hf, 'hidden_size'),
        heads: requireInt(hf, 'num_attention_heads'),
        layers: requireInt(hf, 'num_hidden_layers'),
        ffDim: up ? up[0] : 8 * Math.ceil(Math.floor((2 * I) / 3) / 8),
        position: 'rope',
        positionOptions: { base: 10000, style: 'interleaved' },
        norm: 'rmsnorm',
        normPlacement: 'pre',
        finalNorm: true,
        eps: field(hf, 'norm_eps', 1e-6),
        activation: 'swiglu',
      };
    },
  },
  {
    // factorized embeddings (embedding_size, projected by the encoder's
    // embedding_hidden_mapping_in) and one layer group shared by all layers
    // (AlbertTransformer): the group's tensors are held once, layers.{group}.*
    name: 'albert',
    description: 'ALBERT',
    matches: (hf) => hf.model_type === 'albert',
    prefixes: ['albert.'],
    ignore: [/^pooler\./, /^predictions\./, /^sop_classifier\./, /^embeddings\.position_ids$/],
    tensors: [
      ...BERT_EMBEDDINGS,
      ['embeddings.position_embeddings.weight', 'embed.positions'],
      ['encoder.embedding_hidden_mapping_in.{p}', 'embed.proj.{p}'],
      ['encoder.albert_layer_groups.{i}.albert_layers.0.attention.query.{p}', 'layers.{i}.attn.q.{p}'],
      ['encoder.albert_layer_groups.{i}.albert_layers.0.attention.key.{p}', 'layers.{i}.attn.k.{p}'],
      ['encoder.albert_layer_groups.{i}.albert_layers.0.attention.value.{p}', 'layers.{i}.attn.v.{p}'],
      ['encoder.albert_layer_groups.{i}.albert_layers.0.attention.dense.{p}', 'layers.{i}.attn.o.{p}'],
      ['encoder.albert_layer_groups.{i}.albert_layers.0.attention.LayerNorm.{p}', 'layers.{i}.norm1.{p}'],
      ['encoder.albert_layer_groups.{i}.albert_layers.0.ffn.{p}', 'layers.{i}.ffn.up.{p}'],
      ['encoder.albert_layer_groups.{i}.albert_layers.0.ffn_output.{p}', 'layers.{i}.ffn.down.{p}'],
      ['encoder.albert_layer_groups.{i}.albert_layers.0.full_layer_layer_norm.{p}', 'layers.{i}.norm2.{p}'],
    ],
    config: (hf) => {
      const L = requireInt(hf, 'num_hidden_layers'),
        G = requireInt(hf, 'num_hidden_groups', 1);
      if (requireInt(hf, 'inner_group_num', 1) !== 1) throw unsupported(`config.json: inner_group_num = ${hf.inner_group_num} is not supported (1)`);
      if (G < 1 || G > L || L % G) throw unsupported(`config.json: num_hidden_groups = ${G} is not supported (a divisor of num_hidden_layers = ${L})`);
      return {
        ...bertConfig(hf),
        embedDim: requireInt(hf, 'embedding_size', 128), // the projection runs even when it equals hidden_size
        layerGroups: G,
        activation: activation(hf, 'hidden_act', 'gelu_new'),
      };
    },
  },
];

/** The family of a config.json, or UNSUPPORTED_MODEL naming model_type. */
export function detectFamily(hf) {
  if (hf === null || typeof hf !== 'object' || Array.isArray(hf)) throw new SwapformerError('BAD_FILE', 'config.json must be a JSON object');
  const family = FAMILIES.find((f) => f.matches(hf));
  if (hf.model_type === 'deberta') {
    // modeling_deberta.py: DeBERTa v1's attention (in_proj, q_bias / v_bias, p2p) is not v2's
    throw unsupported(
      'config.json: model_type = "deberta" (DeBERTa v1) is not supported: its attention (a fused in_proj with separate q and v biases, relative positions through pos_proj / pos_q_proj) is not DeBERTa-v2\'s; model_type "deberta-v2" (v2, v3, mDeBERTa) is',
    );
  }
  if (!family) {
    throw unsupported(`config.json: model_type = ${JSON.stringify(hf.model_type)} is not supported (${FAMILIES.map((f) => f.description).join('; ')})`);
  }
  return family;
}

// ------------------------------------------------------------------ names

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A name table entry as a regex: {i} a layer index, {p} weight or bias; split: how a fused tensor's rows divide. */
function compile([pattern, target, split]) {
  const re = new RegExp(`^${escape(pattern).replace('\\{i\\}', '(?<i>0|[1-9]\\d*)').replace('\\{p\\}', '(?<p>weight|bias)')}$`);
  return { re, targets: Array.isArray(target) ? target : [target], split };
}
const compiled = new WeakMap();
const table = (family) => {
  if (!compiled.has(family)) compiled.set(family, family.tensors.map(compile));
  return compiled.get(family);
};

const FLOAT = new Set(['F32', 'F16', 'BF16', 'F64']);

/**
 * Maps a checkpoint's tensors (Map name -> {dtype, shape, bytes}) onto
 * canonical names: old LayerNorm gamma/beta renamed, the base-model prefix
 * stripped, the task head's tensors (heads.js, when config.json's
 * architectures names one and its tensors are there) renamed, heads and
 * buffers the encoder does not use dropped (the family's ignore list), fused
 * tensors split along their first dimension. Any other tensor is refused: an
 * unknown weight means an architecture we would run wrongly. A saved copy of a
 * tied decoder equal to the token table is dropped; one that differs becomes
 * an untied head.out.weight. options.task: jina-embeddings-v3's adapter to
 * merge (lora.js).
 * @returns {{tensors: {name: string, dtype: string, shape: number[], bytes: Uint8Array, source: string}[],
 *   shape: (name: string) => number[] | undefined, head: {task, table} | null, tied: boolean}}
 */
export function mapTensors(family, tensors, hf = {}, options = {}) {
  const renamed = new Map();
  for (const [name, t] of tensors) {
    let n = name.replace(/\.gamma$/, '.weight').replace(/\.beta$/, '.bias'); // TF-era LayerNorm names
    const prefix = family.prefixes.find((p) => n.startsWith(p));
    if (prefix) n = n.slice(prefix.length);
    // its own properties as they are: bytes may be a getter (a file read when used), not read here
    renamed.set(n, Object.defineProperties({}, { ...Object.getOwnPropertyDescriptors(t), source: { value: name, enumerable: true, writable: true } }));
  }
  const task = options.task;
  if (task !== undefined && !family.prepare)
    throw new SwapformerError(
      'BAD_ARGUMENT',
      `options.task chooses a task adapter of jina-embeddings-v3; a ${family.description} checkpoint has none (config.json lora_adaptations: ${JSON.stringify(loraTasks(hf))})`,
    );
  if (family.prepare) family.prepare(renamed, hf, task);
  const head = detectHead(family, hf, [...renamed.keys()]);
  const headEntries = head ? compiledHead(head.table) : [];
  const ignore = [...(head?.table.ignore ?? []), ...(typeof family.ignore === 'function' ? family.ignore(hf) : family.ignore)];
  const entries = table(family);
  const out = [],
    seen = new Map(),
    decoders = [];
  for (const [n, t] of renamed) {
    let hit;
    for (const e of headEntries)
      if ((hit = e.re.exec(n))) {
        hit = { e, m: hit };
        break;
      }
    if (hit && hit.e.targets[0] === TIED) {
      decoders.push(t);
      continue;
    }
    if (!hit && ignore.some((re) => re.test(n))) continue;
    if (!hit)
      for (const e of entries)
        if ((hit = e.re.exec(n))) {
          hit = { e, m: hit };
          break;
        }
    if (!hit)
      throw unsupported(
        `weight '${t.source}' is not part of a ${family.description} ${head ? `${head.task} model` : 'encoder'} as swapformer knows it (an architecture variant it would run wrongly)`,
      );
    if (!FLOAT.has(t.dtype)) throw unsupported(`weight '${t.source}' has dtype ${t.dtype}; weights must be F32, F16, BF16 or F64`);
    const { i, p } = hit.m.groups ?? {};
    const names = hit.e.targets.map((x) => x.replace('{i}', i).replace('{p}', p));
    const parts = hit.e.split ? splitHeads(t, names.length, requireInt(hf, hit.e.split.perHead), t.source) : splitRows(t, names.length, t.source);
    names.forEach((canonical, k) => {
      if (seen.has(canonical)) {
        // tied copies (T5's shared.weight and encoder.embed_tokens.weight) must agree
        if (!sameTensorBytes(seen.get(canonical), parts[k])) {
          throw unsupported(`weights '${seen.get(canonical).source}' and '${t.source}' both give ${canonical} but differ`);
        }
        return;
      }
      const entry = Object.defineProperties({ name: canonical, dtype: t.dtype, source: t.source }, Object.getOwnPropertyDescriptors(parts[k])); // bytes may be a getter
      // a tensor of more dimensions (a convolution's [out, in, k]) is the core's [out, in x k]: the same bytes
      if (entry.shape.length > 2)
        Object.defineProperty(entry, 'shape', {
          value: [entry.shape[0], entry.shape.slice(1).reduce((a, b) => a * b, 1)],
          enumerable: true,
          writable: true,
          configurable: true,
        });
      seen.set(canonical, entry);
      out.push(entry);
    });
  }
  let tied = true;
  for (const d of decoders) {
    // the decoder's saved copy: the token table again, or an untied projection
    const tokens = seen.get(TIED);
    if (tokens && tokens.dtype === d.dtype && sameTensorBytes(tokens, d)) continue;
    if (!FLOAT.has(d.dtype)) throw unsupported(`weight '${d.source}' has dtype ${d.dtype}; weights must be F32, F16, BF16 or F64`);
    if (seen.has('head.out.weight')) throw unsupported(`weight '${d.source}' gives the decoder twice`);
    tied = false;
    const entry = Object.defineProperties({}, { ...Object.getOwnPropertyDescriptors(d), name: { value: 'head.out.weight', enumerable: true, writable: true } });
    seen.set(entry.name, entry);
    out.push(entry);
  }
  const shape = (n) => seen.get(n)?.shape ?? renamed.get(n)?.shape;
  return { tensors: out, shape, head, tied };
}

const compiledHeads = new WeakMap();
const compiledHead = (t) => {
  if (!compiledHeads.has(t)) compiledHeads.set(t, t.tensors.map(compile));
  return compiledHeads.get(t);
};

/**
 * k equal slices of a tensor along its first dimension (row-major: contiguous
 * views; of a tensor read or computed when used, when used, and read by
 * ranges where it can be: safetensors.js parseSafetensorsFile).
 */
function splitRows(t, k, name) {
  const rows = t.shape[0];
  if (!(rows % k === 0)) throw unsupported(`weight '${name}' of shape [${t.shape}] cannot be split into ${k} equal parts`);
  const step = (t.byteLength ?? t.bytes.length) / k;
  const shape = k === 1 ? t.shape : [rows / k, ...t.shape.slice(1)];
  return Array.from({ length: k }, (_, j) =>
    t.byteLength === undefined
      ? { shape, bytes: t.bytes.subarray(j * step, (j + 1) * step) }
      : {
          shape,
          byteLength: step,
          get bytes() {
            return t.bytes.subarray(j * step, (j + 1) * step);
          },
          ...(t.readRange ? { readRange: (begin, end) => t.readRange(j * step + begin, j * step + end) } : {}),
        },
  );
}

/** k parts of a tensor whose rows run head by head, each head's block holding its k parts in turn ([q_h; k_h; v_h] for h = 0..). */
function splitHeads(t, k, heads, name) {
  const rows = t.shape[0];
  if (!(heads > 0 && rows % (k * heads) === 0))
    throw unsupported(`weight '${name}' of shape [${t.shape}] cannot be split into ${k} parts per head of ${heads}`);
  const src = t.bytes; // once: it may be read from the file
  const block = src.length / (k * heads); // one part of one head
  return Array.from({ length: k }, (_, j) => {
    const bytes = new Uint8Array(block * heads);
    for (let h = 0; h < heads; h++) bytes.set(src.subarray((h * k + j) * block, (h * k + j + 1) * block), h * block);
    return { shape: [rows / k, ...t.shape.slice(1)], bytes };
  });
}

function sameBytes(a, b) {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Whether two tensors hold the same bytes; tensors of files on disk compared a range at a time, never read whole. */
function sameTensorBytes(a, b) {
  const n = a.byteLength ?? a.bytes.length;
  if (n !== (b.byteLength ?? b.bytes.length)) return false;
  if (!a.readRange || !b.readRange) return sameBytes(a.bytes, b.bytes);
  const RANGE = 1 << 20;
  for (let at = 0; at < n; at += RANGE) {
    const end = Math.min(n, at + RANGE);
    if (!sameBytes(a.readRange(at, end).slice(), b.readRange(at, end))) return false; // slice: both ranges share one buffer
  }
  return true;
}

/** Sizes the translator needs, read from the checkpoint config with the family's rules. */
export function translateConfig(family, hf, shape) {
  return family.config(hf, shape);
}
