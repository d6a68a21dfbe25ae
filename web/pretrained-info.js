// Section 6, "The checkpoint, mapped to swapformer": the checkpoint's family,
// its config.json mapped field by field to swapformer's config (the position
// plugin first), and its embedding recipe.
import { h, fill, scrollTable, plural } from './dom.js';
import { FAMILIES } from '../bindings/pretrained/families.js';
import { POSITION_NOTES, show } from './pretrained-shared.js';

// ------------------------------------------------------------------ config.json -> swapformer
// Display rows [config.json key(s), swapformer field, note?] per family: which
// Hugging Face key feeds which field (bindings/pretrained/families.js decides;
// the values shown are read from config.json and from the encoder's config).
// Alternatives are tried in order; null is a choice the family makes itself.
const BERT_SIZE = [
  ['vocab_size', 'vocabSize'],
  ['hidden_size', 'dModel'],
  ['num_hidden_layers', 'layers'],
  ['num_attention_heads', 'heads'],
  ['intermediate_size', 'ffDim'],
  ['hidden_act', 'activation'],
  ['type_vocab_size', 'typeVocabSize'],
  ['layer_norm_eps', 'eps'],
];
const POST_NORM = [
  [null, 'norm'],
  [null, 'normPlacement', 'LayerNorm after each residual'],
  [null, 'finalNorm'],
  [null, 'embedNorm', 'LayerNorm on the embeddings'],
];
const CONFIG_MAP = {
  bert: [['position_embedding_type', 'position', 'absolute: a learned table'], ['max_position_embeddings', 'maxLen', 'table rows'], ...BERT_SIZE, ...POST_NORM],
  roberta: [
    ['position_embedding_type', 'position', 'absolute: a learned table'],
    ['max_position_embeddings', 'maxLen', 'table rows'],
    ['pad_token_id', 'positionOptions.offset', 'positions count from pad_token_id + 1'],
    ...BERT_SIZE,
    ...POST_NORM,
  ],
  distilbert: [
    ['sinusoidal_pos_embds', 'position', 'the saved table holds the positions either way'],
    ['max_position_embeddings', 'maxLen', 'table rows'],
    ['vocab_size', 'vocabSize'],
    ['dim', 'dModel'],
    ['n_layers', 'layers'],
    ['n_heads', 'heads'],
    ['hidden_dim', 'ffDim'],
    ['activation', 'activation'],
    [null, 'eps', 'hard-coded in DistilBERT'],
    ...POST_NORM,
  ],
  'jina-bert': [
    ['position_embedding_type', 'position'],
    ['vocab_size', 'vocabSize'],
    ['hidden_size', 'dModel'],
    ['num_hidden_layers', 'layers'],
    ['num_attention_heads', 'heads'],
    ['intermediate_size', 'ffDim'],
    ['feed_forward_type', 'activation', 'gated: the first half of gated_layers is activated'],
    ['hidden_act', 'activation'],
    ['type_vocab_size', 'typeVocabSize'],
    ['layer_norm_eps', 'eps'],
    ...POST_NORM,
  ],
  'nomic-bert': [
    [null, 'position', 'rotary'],
    ['rotary_emb_base', 'positionOptions.base'],
    ['rotary_emb_interleaved', 'positionOptions.style'],
    ['rotary_scaling_factor', 'positionOptions.scaling', 'dynamic NTK past max_trained_positions'],
    ['max_trained_positions', 'positionOptions.scaling'],
    ['vocab_size', 'vocabSize'],
    ['n_embd', 'dModel'],
    ['n_layer', 'layers'],
    ['n_head', 'heads'],
    ['n_inner', 'ffDim', 'read from the fc11 tensor'],
    ['activation_function', 'activation', 'fc12 is the gate'],
    ['type_vocab_size', 'typeVocabSize'],
    ['layer_norm_epsilon', 'eps'],
    ['prenorm', 'normPlacement'],
    [null, 'norm'],
    [null, 'finalNorm'],
    [null, 'embedNorm', 'emb_ln'],
  ],
  modernbert: [
    [null, 'position', 'rotary'],
    [['rope_parameters.full_attention.rope_theta', 'global_rope_theta'], 'positionOptions.base', 'global layers'],
    [['rope_parameters.sliding_attention.rope_theta', 'local_rope_theta'], 'positionOptions.localBase', 'local layers'],
    [['layer_types', 'global_attn_every_n_layers'], 'localLayers', 'sliding-window layers'],
    ['local_attention', 'localWindow', 'half of it: |i − j| ≤ window'],
    ['vocab_size', 'vocabSize'],
    ['hidden_size', 'dModel'],
    ['num_hidden_layers', 'layers'],
    ['num_attention_heads', 'heads'],
    ['intermediate_size', 'ffDim'],
    ['hidden_activation', 'activation', 'gated: the first half of Wi is activated'],
    ['norm_eps', 'eps'],
    [null, 'norm', 'no biases'],
    [null, 'normPlacement'],
    [null, 'finalNorm'],
    [null, 'embedNorm'],
    [null, 'firstAttnNorm', 'layer 0 has no attention norm'],
  ],
  'deberta-v2': [
    ['position_biased_input', 'position', 'true: a learned table (v2); false: none (v3)'],
    ['relative_attention', 'relativeBias', 'disentangled: c2p and p2c terms from a relative table'],
    ['position_buckets', 'relativeBiasOptions.buckets', 'log buckets past buckets / 2'],
    ['max_relative_positions', 'relativeBiasOptions.maxDistance', '< 1: max_position_embeddings'],
    ['pos_att_type', 'relativeBiasOptions.terms'],
    ['share_att_key', 'relativeBiasOptions.shareKey', "the layer's own key and query weights project the table"],
    ['norm_rel_ebd', 'relativeBiasOptions.normTable'],
    [null, 'attnScale', '1 / sqrt(d x (1 + terms))'],
    ['conv_kernel_size', 'conv', 'v2 xlarge: a convolution after layer 0'],
    ['embedding_size', 'embedDim', 'embed_proj maps them to hidden_size before their LayerNorm (embedNormAfterProj)'],
    ['max_position_embeddings', 'maxLen'],
    ...BERT_SIZE,
    ...POST_NORM,
  ],
  electra: [
    ['position_embedding_type', 'position', 'absolute: a learned table'],
    ['max_position_embeddings', 'maxLen', 'table rows'],
    ['embedding_size', 'embedDim', 'embeddings_project maps them to hidden_size'],
    ...BERT_SIZE,
    ...POST_NORM,
  ],
  roformer: [
    [null, 'position', 'rotary, interleaved pairs, base 10000'],
    ['embedding_size', 'embedDim', 'embeddings_project maps them to hidden_size'],
    ...BERT_SIZE,
    ...POST_NORM,
  ],
  'jina-v3': [['position_embedding_type', 'position', 'rotary'], ['rotary_emb_base', 'positionOptions.base'], ...BERT_SIZE, ...POST_NORM],
  gte: [
    ['position_embedding_type', 'position', 'rotary'],
    ['rope_theta', 'positionOptions.base'],
    ['rope_scaling', 'positionOptions.scaling', 'ntk: fixed NTK, at every length'],
    ...BERT_SIZE,
    ['hidden_act', 'activation', 'gated: the second half of up_gate_proj is activated'],
    ...POST_NORM,
  ],
  eurobert: [
    [null, 'position', 'rotary'],
    [['rope_parameters.rope_theta', 'rope_theta'], 'positionOptions.base'],
    ['vocab_size', 'vocabSize'],
    ['hidden_size', 'dModel'],
    ['num_hidden_layers', 'layers'],
    ['num_attention_heads', 'heads'],
    ['num_key_value_heads', 'kvHeads', 'grouped-query attention'],
    ['head_dim', 'headDim'],
    ['intermediate_size', 'ffDim'],
    ['hidden_act', 'activation', 'gated: gate_proj is activated'],
    ['rms_norm_eps', 'eps'],
    [null, 'norm'],
    [null, 'normPlacement'],
    [null, 'finalNorm'],
  ],
  neobert: [
    [null, 'position', 'rotary, interleaved pairs, base 10000'],
    ['vocab_size', 'vocabSize'],
    ['hidden_size', 'dModel'],
    ['num_hidden_layers', 'layers'],
    ['num_attention_heads', 'heads'],
    ['intermediate_size', 'ffDim', '2/3 of it, read from the w12 tensor'],
    ['norm_eps', 'eps'],
    [null, 'activation', 'SwiGLU'],
    [null, 'norm'],
    [null, 'normPlacement'],
    [null, 'finalNorm'],
  ],
  albert: [
    ['position_embedding_type', 'position', 'absolute: a learned table'],
    ['max_position_embeddings', 'maxLen', 'table rows'],
    ['embedding_size', 'embedDim', 'embedding_hidden_mapping_in maps them to hidden_size'],
    ['num_hidden_groups', 'layerGroups', 'one set of layer weights per group, held once'],
    ...BERT_SIZE,
    ...POST_NORM,
  ],
  t5: [
    [null, 'position', 'relative buckets, shared by every layer'],
    ['relative_attention_num_buckets', 'positionOptions.buckets'],
    ['relative_attention_max_distance', 'positionOptions.maxDistance'],
    ['vocab_size', 'vocabSize'],
    ['d_model', 'dModel'],
    ['num_layers', 'layers'],
    ['num_heads', 'heads'],
    ['d_kv', 'headDim', 'attention width heads × d_kv'],
    ['d_ff', 'ffDim'],
    [['dense_act_fn', 'feed_forward_proj'], 'activation'],
    ['layer_norm_epsilon', 'eps'],
    [null, 'attnScale', 'no 1/√d score scale'],
    [null, 'norm'],
    [null, 'normPlacement'],
    [null, 'finalNorm'],
  ],
};

const pathGet = (o, path) => path.split('.').reduce((v, k) => (v !== null && typeof v === 'object' ? v[k] : undefined), o);

/** A dotted or snake_case name that may wrap after its dots and underscores (phone width). */
const ident = (name) => name.split(/(?<=[._])/).flatMap((part, i) => (i ? [h('wbr'), part] : [part]));

/** JSON-style, for config.json values. */
const showJson = (v) => (v === undefined ? '—' : JSON.stringify(v).replace(/,(?=["\d[{tfn-])/g, ', '));

const TITLE = 'The checkpoint, mapped to swapformer';

/** Returns {el, show(model), clear()}: model is the panel's {p, label}. */
export function infoCard() {
  const waiting = () => [
    h(
      'p',
      { class: 'note' },
      "Its family, its config.json mapped field by field to swapformer's config (the position plugin first) and its embedding recipe appear here.",
    ),
    h('p', { class: 'caption' }, 'Families read: ', FAMILIES.map((f) => f.description).join('; '), '.'),
  ];
  const title = h('h3', { id: 'pretrained-info-title' }, TITLE);
  const body = h('div', { id: 'pretrained-info-body' }, waiting());
  const el = h('article', { class: 'card', id: 'pretrained-info' }, title, body);

  function showModel(model) {
    const { p } = model;
    const c = p.encoder.config,
      hf = p.hfConfig ?? {};
    const family = FAMILIES.find((f) => f.name === p.family);
    const params = Object.values(p.encoder.weightShapes()).reduce((s, shape) => s + shape.reduce((a, b) => a * b, 1), 0);
    title.textContent = `${family?.description ?? p.family}: mapped to swapformer`;

    const rows = CONFIG_MAP[p.family] ?? [];
    const used = new Set();
    const tableRows = rows.map(([keys, field, note]) => {
      const list = keys === null ? [] : Array.isArray(keys) ? keys : [keys];
      const key = list.find((k) => pathGet(hf, k) !== undefined) ?? list[0];
      const hfValue = key ? pathGet(hf, key) : undefined;
      const sfValue = pathGet(c, field);
      used.add(field.split('.')[0]);
      const position = /^(position|local)/.test(field);
      return h(
        'tr',
        { class: position ? 'pos' : '', dataset: { hf: key ?? '', field } },
        h(
          'td',
          {},
          key
            ? [
                h('code', {}, ident(key), ': '),
                hfValue === undefined ? h('span', { class: 'muted' }, 'absent (default)') : h('code', { class: 'v' }, showJson(hfValue)),
              ]
            : h('span', { class: 'muted' }, '(the family)'),
        ),
        h('td', { class: 'arrow', 'aria-hidden': 'true' }, '→'),
        h(
          'td',
          {},
          h('code', {}, ident(field), ': '),
          h('code', { class: 'v' }, sfValue === undefined ? '— (not set)' : show(sfValue)),
          note ? h('span', { class: 'row-note' }, note) : null,
        ),
      );
    });
    const rest = Object.entries(c).filter(([k]) => !used.has(k) && k !== 'positionOptions');
    const limits = [];
    if (p.recipe.maxSeqLength) limits.push(`max_seq_length ${p.recipe.maxSeqLength}`);
    if (Number.isFinite(p.tokenizer.modelMaxLength) && p.tokenizer.modelMaxLength < 1e9) limits.push(`model_max_length ${p.tokenizer.modelMaxLength}`);
    if (Number.isFinite(p.encoder.maxSequenceLength)) limits.push(`position limit ${p.encoder.maxSequenceLength}`);
    const dense = p.recipe.dense.map((d) => `${d.inFeatures} → ${d.outFeatures}${d.bias ? ' + bias' : ''}, ${d.activation}`).join('; ');
    const prompts =
      p.recipe.prompts && Object.keys(p.recipe.prompts).length
        ? Object.entries(p.recipe.prompts)
            .map(([k, v]) => `${k}: “${v}”`)
            .join(', ')
        : null;

    fill(
      body,
      h(
        'dl',
        { class: 'kv', id: 'pretrained-summary' },
        h('dt', {}, 'Source'),
        h('dd', { id: 'pretrained-source' }, model.label),
        h('dt', {}, 'Family'),
        h(
          'dd',
          { id: 'pretrained-family', dataset: { family: p.family } },
          h('code', {}, p.family),
          hf.model_type
            ? h('span', { class: 'muted' }, ` (model_type ${JSON.stringify(hf.model_type)}${hf.architectures?.[0] ? `, ${hf.architectures[0]}` : ''})`)
            : null,
        ),
        h('dt', {}, 'Size'),
        h(
          'dd',
          {},
          `${plural(c.layers, 'layer')} · dModel ${c.dModel} · ${plural(c.heads, 'head')}${c.headDim ? ` of ${c.headDim}` : ''} · ffDim ${c.ffDim} · vocabulary ${c.vocabSize.toLocaleString('en-US')} · ${params.toLocaleString('en-US')} parameters`,
        ),
        h('dt', {}, 'Positions'),
        h(
          'dd',
          {},
          // the relativeBias slot (MPNet's t5, DeBERTa's disentangled) with what position does, if anything
          c.relativeBias !== 'none' && c.position === 'none'
            ? [h('code', {}, c.relativeBias), ` ${POSITION_NOTES[c.relativeBias] ?? ''} (relativeBias)`]
            : [h('code', {}, c.position), ` ${POSITION_NOTES[c.position] ?? ''}`],
          c.relativeBias !== 'none' && c.position !== 'none' ? [', and ', h('code', {}, c.relativeBias), ` ${POSITION_NOTES[c.relativeBias] ?? ''}`] : null,
        ),
      ),
      h('h4', {}, 'config.json → swapformer config'),
      scrollTable(
        h(
          'table',
          { class: 'numbers config', id: 'pretrained-config' },
          h('thead', {}, h('tr', {}, h('th', {}, 'config.json'), h('th', {}), h('th', {}, 'swapformer config'))),
          h('tbody', {}, tableRows),
        ),
      ),
      rest.length ? h('p', { class: 'caption' }, 'Other fields: ', rest.map(([k, v]) => `${k} ${show(v)}`).join(' · ')) : null,
      h('h4', {}, 'Embedding recipe'),
      h(
        'dl',
        { class: 'kv', id: 'pretrained-recipe' },
        h('dt', {}, 'From'),
        h('dd', {}, p.recipe.source === 'modules.json' ? 'the sentence-transformers files (modules.json)' : (p.recipe.note ?? 'the model card defaults')),
        h('dt', {}, 'Pooling'),
        h('dd', { id: 'pretrained-pooling' }, p.recipe.pooling.join(' + '), p.recipe.pooling.length > 1 ? ' (concatenated)' : ''),
        h('dt', {}, 'Dense'),
        h('dd', {}, dense || 'none'),
        h('dt', {}, 'Normalize'),
        h('dd', {}, p.recipe.normalize ? 'yes (unit length)' : 'no'),
        h('dt', {}, 'Max length'),
        h(
          'dd',
          { id: 'pretrained-max-length' },
          Number.isFinite(p.maxLength) ? `${p.maxLength.toLocaleString('en-US')} tokens` : 'no limit',
          limits.length ? h('span', { class: 'muted' }, ` (the smallest of ${limits.join(', ')})`) : null,
        ),
        p.recipe.doLowerCase ? [h('dt', {}, 'Lowercase'), h('dd', {}, 'yes (do_lower_case)')] : null,
        prompts ? [h('dt', {}, 'Prompts'), h('dd', {}, prompts, h('span', { class: 'muted' }, ' (type them in front of a sentence)'))] : null,
      ),
    );
  }

  function clear() {
    fill(body, waiting());
    title.textContent = TITLE;
  }

  return { el, show: showModel, clear };
}
