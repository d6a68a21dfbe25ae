// Task heads as data, one table per family and task, in the manner of
// families.js for the encoder: which Hugging Face tensors make config.head's
// canonical ones (head.dense, head.norm, head.out; core/heads.c runs them) and
// how config.json sets the head up. A folder's head comes from its
// `architectures` (…ForSequenceClassification, …ForTokenClassification,
// …ForMaskedLM / …ForPreTraining) and is used only when its tensors are there
// (all-mpnet-base-v2 says MPNetForMaskedLM and ships the bare encoder).
//
// Sources (re-read them when a detail matters): huggingface/transformers
// models/{bert,roberta,xlm_roberta,distilbert,modernbert,mpnet,electra,roformer,
// albert,eurobert,deberta_v2}/modeling_*.py, Alibaba-NLP/new-impl modeling.py,
// chandar-lab/NeoBERT model.py; summarised in shared/reference/tasks-and-serving.md
// section 1.
//
//   family      sequence                                   token                mlm (decoder tied to the token table)
//   bert        pooler.dense + tanh, classifier            classifier           cls.predictions.transform.{dense, LayerNorm} + .bias
//   roberta     classifier.dense + tanh, .out_proj         classifier           lm_head.{dense, gelu, layer_norm} + lm_head.bias
//   distilbert  pre_classifier + relu, classifier          classifier           vocab_transform + act, vocab_layer_norm, vocab_projector
//   modernbert  head.{dense, act, norm}, classifier        head, classifier     head + decoder.bias
//   mpnet       classifier.dense + tanh, .out_proj         classifier           lm_head.{dense, gelu, layer_norm} + lm_head.bias
//   electra     classifier.dense + gelu, .out_proj         classifier           generator_predictions.{dense, gelu, LayerNorm} (to
//                                                                               embedding_size) + generator_lm_head
//   roformer    classifier.dense + hidden_act, .out_proj   classifier           cls.predictions.transform (to embedding_size) + .bias
//   gte         pooler.dense + tanh, classifier            classifier           lm_head.{dense, act, norm} + lm_head.decoder.bias
//   eurobert    dense + gelu, classifier (pooling bos,     classifier           lm_head (untied unless equal), its bias with mlp_bias
//               mean, or late: the mean of every token's logits)
//   neobert     dense + tanh, classifier                   -                    decoder (untied unless equal) + its bias
//   albert      pooler + tanh, classifier                  classifier           predictions.{dense, act, LayerNorm} (to embedding_size)
//                                                                               + predictions.bias
//   deberta-v2  pooler.dense + gelu, classifier            classifier           cls.predictions.transform.{dense, LayerNorm} + .bias (legacy),
//                                                                               lm_predictions.lm_head.{dense, LayerNorm} + .bias (legacy: false)
//
// Question answering (…ForQuestionAnswering): qa_outputs [2, H] on every token
// (start and end logits) in BERT, RoBERTa, XLM-R, DistilBERT, MPNet, ELECTRA, RoFormer, ALBERT, DeBERTa (QA below, a
// family adds `qa: QA` when its model has that Linear); ModernBERT's runs its
// prediction head first: head.{dense, act, norm}, classifier [2, H].
import { SwapformerError } from '../utils/errors.js';

const unsupported = (message) => new SwapformerError('UNSUPPORTED_MODEL', message);

/** The canonical name the tied decoder's saved copy maps to: it must equal embed.tokens. */
export const TIED = 'embed.tokens';

/** Hugging Face activation names (activations.py ACT2FN) -> config.head's. */
const ACT = {
  gelu: 'gelu',
  gelu_new: 'gelu_tanh',
  gelu_pytorch_tanh: 'gelu_tanh',
  gelu_fast: 'gelu_tanh',
  relu: 'relu',
  silu: 'silu',
  swish: 'silu',
  tanh: 'tanh',
};

function act(hf, key, fallback) {
  const name = Object.hasOwn(hf, key) && hf[key] != null ? hf[key] : fallback;
  if (typeof name !== 'string' || !Object.hasOwn(ACT, name))
    throw unsupported(`config.json: ${key} = ${JSON.stringify(name)} is not a supported head activation (${Object.keys(ACT).join(', ')})`);
  return ACT[name];
}
const num = (hf, key, fallback) => (Object.hasOwn(hf, key) && typeof hf[key] === 'number' ? hf[key] : fallback);
const lookup = (table, key) => (typeof key === 'string' && Object.hasOwn(table, key) ? table[key] : undefined);

/** …ForQuestionAnswering's qa_outputs, the same tensor in every family that has it (its task models run no pooler). */
const QA = { tensors: [['qa_outputs.{p}', 'head.out.{p}']], ignore: [/^pooler\./] };

// BERT's (and JinaBERT's: its task models reuse BERT's heads)
const BERT = {
  sequence: {
    tensors: [
      ['pooler.dense.{p}', 'head.dense.{p}'],
      ['classifier.{p}', 'head.out.{p}'],
    ],
    config: () => ({ dense: true, activation: 'tanh' }),
  },
  token: { tensors: [['classifier.{p}', 'head.out.{p}']], ignore: [/^pooler\./] },
  qa: QA,
  mlm: {
    tensors: [
      ['cls.predictions.transform.dense.{p}', 'head.dense.{p}'],
      ['cls.predictions.transform.LayerNorm.{p}', 'head.norm.{p}'],
      ['cls.predictions.bias', 'head.out.bias'],
      ['cls.predictions.decoder.bias', 'head.out.bias'], // the same Parameter, saved twice by some versions
      ['cls.predictions.decoder.weight', TIED],
    ],
    ignore: [/^pooler\./, /^cls\.seq_relationship\./], // BertForPreTraining's next-sentence head
    config: (hf) => ({ dense: true, activation: act(hf, 'hidden_act', 'gelu'), norm: 'layernorm', normEps: num(hf, 'layer_norm_eps', 1e-12) }),
  },
};

// RoBERTa's classification and LM heads (XLM-R's and MPNet's are the same classes under other names)
const ROBERTA = {
  sequence: {
    tensors: [
      ['classifier.dense.{p}', 'head.dense.{p}'],
      ['classifier.out_proj.{p}', 'head.out.{p}'],
    ],
    config: () => ({ dense: true, activation: 'tanh' }),
  },
  token: { tensors: [['classifier.{p}', 'head.out.{p}']], ignore: [/^pooler\./] },
  qa: QA,
  mlm: {
    tensors: [
      ['lm_head.dense.{p}', 'head.dense.{p}'],
      ['lm_head.layer_norm.{p}', 'head.norm.{p}'],
      ['lm_head.bias', 'head.out.bias'],
      ['lm_head.decoder.bias', 'head.out.bias'],
      ['lm_head.decoder.weight', TIED],
    ],
    ignore: [/^pooler\./],
    config: (hf) => ({ dense: true, activation: 'gelu', norm: 'layernorm', normEps: num(hf, 'layer_norm_eps', 1e-12) }), // erf GELU, fixed
  },
};

// ModernBERT's prediction head: dense (bias iff classifier_bias) + activation + norm (bias iff norm_bias)
const MODERNBERT_HEAD = [
  ['head.dense.{p}', 'head.dense.{p}'],
  ['head.norm.{p}', 'head.norm.{p}'],
];
const modernbertHead = (hf) => ({ dense: true, activation: act(hf, 'classifier_activation', 'gelu'), norm: 'layernorm', normEps: num(hf, 'norm_eps', 1e-5) });

// RoFormer's and ELECTRA's generator's prediction heads end at the embeddings' width (embedding_size), the tied table's
const embeddingWidth = (hf) => ((hf.embedding_size ?? hf.hidden_size) !== hf.hidden_size ? { width: hf.embedding_size } : {});

const CLASSIFIER_DENSE = [
  ['classifier.dense.{p}', 'head.dense.{p}'],
  ['classifier.out_proj.{p}', 'head.out.{p}'],
];
const TOKEN = { tensors: [['classifier.{p}', 'head.out.{p}']], ignore: [/^pooler\./] };
// DeBERTa-v2's: ContextPooler (CLS row, dense, pooler_hidden_act: gelu by default) + classifier; the token
// classifier; the masked-LM head in the layout config.json's legacy (default true) names, as
// DebertaV2ForMaskedLM builds it (the other layout's tensors would not be loaded there). A checkpoint with
// mask_predictions.* is a replaced-token detector (DeBERTa-v3): it has no masked-LM head (rtd).
// With embed_proj (embedding_size != hidden_size) the legacy head's dense and LayerNorm end at embedding_size, the
// token table's width; the lm_predictions head's are hidden_size wide, against that table (transformers fails too).
const debertaMlm = (hf) => {
  const legacy = hf.legacy !== false;
  if (!legacy && (hf.embedding_size ?? hf.hidden_size) !== hf.hidden_size)
    throw unsupported(
      `config.json: legacy = false with embedding_size = ${hf.embedding_size} != hidden_size = ${hf.hidden_size}: lm_predictions.lm_head is hidden_size wide and cannot read the ${hf.embedding_size}-wide token table`,
    );
  return { dense: true, activation: act(hf, 'hidden_act', 'gelu'), norm: 'layernorm', normEps: num(hf, 'layer_norm_eps', 1e-7), ...embeddingWidth(hf) };
};
const DEBERTA = {
  sequence: {
    tensors: [
      ['pooler.dense.{p}', 'head.dense.{p}'],
      ['classifier.{p}', 'head.out.{p}'],
    ],
    config: (hf) => {
      // ContextPooler's dense is [pooler_hidden_size, pooler_hidden_size] on the hidden state's first row
      const size = num(hf, 'pooler_hidden_size', hf.hidden_size);
      if (size !== hf.hidden_size) throw unsupported(`config.json: pooler_hidden_size = ${size} is not supported (hidden_size, ${hf.hidden_size})`);
      return { dense: true, activation: act(hf, 'pooler_hidden_act', 'gelu') };
    },
  },
  token: { tensors: [['classifier.{p}', 'head.out.{p}']] },
  qa: QA,
  mlm: (hf) =>
    hf.legacy === false
      ? {
          tensors: [
            ['lm_predictions.lm_head.dense.{p}', 'head.dense.{p}'],
            ['lm_predictions.lm_head.LayerNorm.{p}', 'head.norm.{p}'],
            ['lm_predictions.lm_head.bias', 'head.out.bias'],
          ],
          rtd: /^mask_predictions\./,
          config: debertaMlm,
        }
      : { ...BERT.mlm, rtd: /^mask_predictions\./, config: debertaMlm },
};

export const HEADS = {
  bert: BERT,
  'jina-bert': BERT,
  roberta: ROBERTA,
  mpnet: ROBERTA,
  distilbert: {
    sequence: {
      tensors: [
        ['pre_classifier.{p}', 'head.dense.{p}'],
        ['classifier.{p}', 'head.out.{p}'],
      ],
      config: () => ({ dense: true, activation: 'relu' }),
    },
    token: { tensors: [['classifier.{p}', 'head.out.{p}']] },
    qa: QA,
    mlm: {
      tensors: [
        ['vocab_transform.{p}', 'head.dense.{p}'],
        ['vocab_layer_norm.{p}', 'head.norm.{p}'],
        ['vocab_projector.bias', 'head.out.bias'],
        ['vocab_projector.weight', TIED],
      ],
      config: (hf) => ({ dense: true, activation: act(hf, 'activation', 'gelu'), norm: 'layernorm', normEps: 1e-12 }), // eps fixed in DistilBertForMaskedLM
    },
  },
  'deberta-v2': DEBERTA,
  modernbert: {
    sequence: {
      tensors: [...MODERNBERT_HEAD, ['classifier.{p}', 'head.out.{p}']],
      config: (hf) => {
        const pooling = Object.hasOwn(hf, 'classifier_pooling') ? hf.classifier_pooling : 'cls';
        if (pooling !== 'cls' && pooling !== 'mean')
          throw unsupported(`config.json: classifier_pooling = ${JSON.stringify(pooling)} is not 'cls' or 'mean' (Hugging Face refuses it too)`);
        return { ...modernbertHead(hf), pooling };
      },
    },
    token: { tensors: [...MODERNBERT_HEAD, ['classifier.{p}', 'head.out.{p}']], config: modernbertHead },
    qa: { tensors: [...MODERNBERT_HEAD, ['classifier.{p}', 'head.out.{p}']], config: modernbertHead },
    mlm: { tensors: [...MODERNBERT_HEAD, ['decoder.bias', 'head.out.bias'], ['decoder.weight', TIED]], config: modernbertHead },
  },
  electra: {
    // ElectraClassificationHead: "although BERT uses tanh here, it seems Electra authors used gelu"
    sequence: { tensors: CLASSIFIER_DENSE, config: () => ({ dense: true, activation: 'gelu' }) },
    token: TOKEN,
    qa: QA,
    mlm: {
      tensors: [
        ['generator_predictions.dense.{p}', 'head.dense.{p}'],
        ['generator_predictions.LayerNorm.{p}', 'head.norm.{p}'],
        ['generator_lm_head.bias', 'head.out.bias'],
        ['generator_lm_head.weight', TIED],
      ],
      config: (hf) => ({ dense: true, activation: 'gelu', norm: 'layernorm', normEps: num(hf, 'layer_norm_eps', 1e-12), ...embeddingWidth(hf) }),
    },
  },
  roformer: {
    sequence: { tensors: CLASSIFIER_DENSE, config: (hf) => ({ dense: true, activation: act(hf, 'hidden_act', 'gelu') }) },
    token: TOKEN,
    qa: QA,
    mlm: {
      ...BERT.mlm,
      config: (hf) => ({ ...BERT.mlm.config(hf), ...embeddingWidth(hf) }),
    },
  },
  gte: {
    sequence: BERT.sequence,
    token: TOKEN,
    mlm: {
      tensors: [
        ['lm_head.dense.{p}', 'head.dense.{p}'],
        ['lm_head.norm.{p}', 'head.norm.{p}'],
        ['lm_head.decoder.bias', 'head.out.bias'],
        ['lm_head.decoder.weight', TIED],
      ],
      ignore: [/^pooler\./],
      config: (hf) => ({ dense: true, activation: act(hf, 'hidden_act', 'gelu'), norm: 'layernorm', normEps: num(hf, 'layer_norm_eps', 1e-12) }),
    },
  },
  eurobert: {
    sequence: {
      tensors: [
        ['dense.{p}', 'head.dense.{p}'],
        ['classifier.{p}', 'head.out.{p}'],
      ],
      config: (hf) => {
        // classifier_pooling, or the remote code's clf_pooling; 'late' by default
        const key = Object.hasOwn(hf, 'classifier_pooling') ? 'classifier_pooling' : 'clf_pooling';
        const p = Object.hasOwn(hf, key) ? hf[key] : 'late';
        const pooling = lookup({ bos: 'cls', mean: 'mean', late: 'late' }, p);
        if (!pooling) throw unsupported(`config.json: ${key} = ${JSON.stringify(p)} is not 'bos', 'mean' or 'late'`);
        return { dense: true, activation: 'gelu', pooling }; // nn.GELU(): the erf form
      },
    },
    token: { tensors: [['classifier.{p}', 'head.out.{p}']] },
    mlm: {
      tensors: [
        ['lm_head.bias', 'head.out.bias'],
        ['lm_head.weight', TIED],
      ],
    },
  },
  neobert: {
    sequence: {
      tensors: [
        ['dense.{p}', 'head.dense.{p}'],
        ['classifier.{p}', 'head.out.{p}'],
      ],
      config: () => ({ dense: true, activation: 'tanh' }),
    },
    mlm: {
      tensors: [
        ['decoder.bias', 'head.out.bias'],
        ['decoder.weight', TIED],
      ],
    },
  },
  albert: {
    sequence: {
      tensors: [
        ['pooler.{p}', 'head.dense.{p}'],
        ['classifier.{p}', 'head.out.{p}'],
      ],
      config: () => ({ dense: true, activation: 'tanh' }), // pooler_activation
    },
    token: TOKEN,
    qa: QA,
    mlm: {
      tensors: [
        ['predictions.dense.{p}', 'head.dense.{p}'],
        ['predictions.LayerNorm.{p}', 'head.norm.{p}'],
        ['predictions.bias', 'head.out.bias'],
        ['predictions.decoder.bias', 'head.out.bias'], // the same Parameter, saved twice by some versions
        ['predictions.decoder.weight', TIED],
      ],
      ignore: [/^pooler\./, /^sop_classifier\./],
      config: (hf) => ({
        dense: true,
        activation: act(hf, 'hidden_act', 'gelu_new'),
        norm: 'layernorm',
        normEps: num(hf, 'layer_norm_eps', 1e-12),
        width: hf.embedding_size ?? 128,
      }),
    },
  },
};

/** The task an `architectures` entry names, or null. */
function taskOf(arch) {
  if (typeof arch !== 'string') return null;
  if (/ForSequenceClassification$/.test(arch)) return 'sequence';
  if (/ForTokenClassification$/.test(arch)) return 'token';
  if (/ForQuestionAnswering$/.test(arch)) return 'qa';
  if (/For(MaskedLM|PreTraining)$|LMHead$/.test(arch)) return 'mlm'; // NeoBERT's MLM model: NeoBERTLMHead
  return null;
}

/**
 * The head a checkpoint asks for: {task, table} from config.json's
 * architectures and the family's head tables, or null (an encoder: feature
 * extraction). `names` are the tensor names with the base-model prefix
 * stripped: a head whose tensors are absent is no head (all-mpnet-base-v2),
 * unless it is a classifier, whose weights cannot be made up.
 */
export function detectHead(family, hf, names) {
  const archs = Object.hasOwn(hf, 'architectures') && Array.isArray(hf.architectures) ? hf.architectures : [];
  const task = archs.map(taskOf).find((t) => t) ?? null;
  if (!task) return null;
  let table = HEADS[family.name]?.[task];
  if (typeof table === 'function') table = table(hf);
  if (table?.rtd && names.some((n) => table.rtd.test(n))) return null; // a replaced-token detector: no masked-LM head
  if (!table) {
    if (task === 'mlm') return null; // e.g. NomicBertForPreTraining: the encoder alone
    throw unsupported(
      `config.json: architectures = ${JSON.stringify(archs)}: swapformer runs no ${task} head for ${family.description} (heads: ${Object.keys(HEADS).join(', ')})`,
    );
  }
  const present = table.tensors.some(([pattern]) => names.some((n) => matchName(pattern, n)));
  if (!present) {
    if (task === 'mlm') return null;
    throw unsupported(
      `config.json says ${archs[0]}, but the weights hold none of its head's tensors (${table.tensors.map(([p]) => p.replace('{p}', 'weight')).join(', ')})`,
    );
  }
  return { task, table };
}

const matchName = (pattern, name) => pattern.replace('{p}', 'weight') === name || pattern.replace('{p}', 'bias') === name;

/**
 * config.head for a detected head: the task, the family's setup, and the
 * label count from the classifier's rows (labels are the vocabulary for mlm).
 * `shapes(canonicalName)` gives a mapped tensor's shape; `tied` whether the
 * decoder is the token table.
 */
export function headConfig(head, hf, { shapes, tied }) {
  const setup = head.table.config ? head.table.config(hf) : {};
  if (head.task === 'mlm') return { task: 'mlm', ...setup, tied };
  const out = shapes('head.out.weight');
  if (!out || out.length !== 2) throw unsupported(`the ${head.task} head has no classifier weight`);
  if (head.task === 'qa' && out[0] !== 2)
    throw unsupported(`the question-answering head has ${out[0]} outputs; swapformer reads two, the start and end logits (…ForQuestionAnswering)`);
  return { task: head.task, labels: out[0], ...setup };
}
