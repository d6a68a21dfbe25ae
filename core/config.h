/* The encoder config: parsed from JSON (camelCase keys), validated, defaults
 * filled in, and written back as JSON. See README.md "Config". */
#ifndef SF_CONFIG_H
#define SF_CONFIG_H

#include "plugin.h"

/* Gated ones: down(act(gate(x)) * up(x)); the gate is the activated half. */
enum { SF_ACT_GELU, SF_ACT_GELU_TANH, SF_ACT_RELU, SF_ACT_SWIGLU, SF_ACT_GEGLU, SF_ACT_SILU, SF_ACT_GEGLU_TANH };

/* Upper bounds that keep every size product inside 64 bits and every index
 * inside int; anything that passes still has to find memory (OUT_OF_MEMORY). */
#define SF_MAX_DIM    (1 << 20) /* dModel, heads, ffDim */
#define SF_MAX_VOCAB  (1 << 24)
#define SF_MAX_LEN    (1 << 24)
#define SF_MAX_LAYERS 1024

/* An encoder's task head (config.head): what turns the last hidden states
 * into logits, run after the encoder by the same forward call (core/heads.c).
 *   rows -> [head.dense (C, C) -> activation] -> [head.norm] -> head.out
 * rows: sequence, one per sequence (row 0, or the mean of its rows); token,
 * qa and colbert, every token; mlm, the tokens asked for (or every token,
 * max-pooled into a sparse vector: SF_OUT_SPARSE), projected on the
 * vocabulary (head.out [V, C], or the token table itself when tied). qa: two
 * labels, the start and end logits (…ForQuestionAnswering's qa_outputs).
 * colbert: per-token vectors of `labels` values, L2-normalised; with
 * token_weights, column 0 is a token weight instead (relu, not normalised:
 * bge-m3's sparse_linear beside its colbert_linear). Biases are optional
 * tensors (absent: zero). */
enum { SF_HEAD_NONE, SF_HEAD_SEQUENCE, SF_HEAD_TOKEN, SF_HEAD_MLM, SF_HEAD_QA, SF_HEAD_COLBERT };
/* late: every real row through the head, then the mean of their logits (EuroBERT's classifier_pooling 'late') */
enum { SF_HEAD_POOL_CLS, SF_HEAD_POOL_MEAN, SF_HEAD_POOL_LATE };
enum { SF_HEAD_ACT_IDENTITY = 100, SF_HEAD_ACT_TANH }; /* besides SF_ACT_GELU, _GELU_TANH, _RELU, _SILU */
typedef struct sf_head_config {
    int task;                   /* SF_HEAD_* */
    int labels;                 /* rows of head.out: classes (sequence, token) or vocabSize (mlm) */
    int pooling;                /* sequence: SF_HEAD_POOL_* */
    int dense;                  /* head.dense first */
    int width;                  /* rows of head.dense, the width of what follows (default dModel; embedDim for a tied decoder) */
    int activation;             /* after dense: SF_ACT_GELU, _GELU_TANH, _RELU, _SILU, SF_HEAD_ACT_* */
    const sf_norm_plugin *norm; /* after the activation, or NULL */
    double norm_eps;
    int tied;          /* mlm: the vocabulary projection is embed.tokens */
    int token_weights; /* colbert: column 0 is a relu'd token weight, the rest the vector */
} sf_head_config;

/* Heads that give a row per token: token, qa, colbert. */
static inline int sf_head_per_token(int task) { return task == SF_HEAD_TOKEN || task == SF_HEAD_QA || task == SF_HEAD_COLBERT; }

typedef struct sf_config {
    int vocab_size, d_model, heads, layers, ff_dim, max_len;
    int head_dim;                         /* headDim: size of a head (default dModel / heads); attention width A = heads x headDim */
    double attn_scale;                    /* attnScale: scores are q.k x attnScale (default 1/sqrt(headDim); T5: 1) */
    int head_dim_given, attn_scale_given; /* written back only when given: otherwise derived */
    int kv_heads;                         /* kvHeads: key and value heads (default heads); query head h reads kv head h / (heads / kvHeads) */
    int embed_dim;                        /* embedDim: width of the embeddings (default dModel) */
    int embed_proj;                       /* embedDim given: embed.proj maps the embeddings to dModel after embedNorm */
    int embed_norm_after_proj;            /* embedNormAfterProj: embed.proj first, then embedNorm at dModel (DeBERTa's embed_proj) */
    int layer_groups;                     /* layerGroups: distinct layer parameter sets (default layers); layer l runs set l x groups / layers */
    int type_vocab_size;                  /* typeVocabSize: rows of the token-type (segment) table, 0 for none */
    int embed_norm;                       /* embedNorm: a norm over the embeddings (BERT's embeddings.LayerNorm) */
    int first_attn_norm;                  /* firstAttnNorm: 0 = layer 0 has no attention norm (ModernBERT) */
    int local_window;                     /* localWindow: local layers attend to keys with |i - j| <= window */
    unsigned char local[SF_MAX_LAYERS];   /* localLayers: 1 for a local (sliding-window) layer */
    const sf_norm_plugin *qk_norm;        /* qkNorm: a norm of each head's q and k before RoPE, or NULL ('none') */
    double residual_scale;                /* residualScale: the residual stream's weight, x = N(a x + f(x)) / x = a x + f(N(x)) */
    int deepnorm;                         /* residualScale: 'deepnorm', a = (2L)^(1/4), and DeepNet's initialisation */
    const sf_position_plugin *position;
    sf_options position_options;
    /* relativeBias: a second position plugin that only biases the scores (t5,
     * alibi), on top of position (MPNet: learned positions and T5 buckets), or
     * NULL. Its hooks see the config through sf_config_bias_view. */
    const sf_position_plugin *bias;
    sf_options bias_options;
    sf_head_config head;
    const sf_norm_plugin *norm;
    int pre_norm; /* normPlacement: 1 'pre', 0 'post' */
    int final_norm;
    int scale_embedding;
    int activation;  /* SF_ACT_* */
    int output_head; /* head.weight (V, C) [+ head.bias]: per-position logits */
    double eps;
    /* conv: DeBERTa-v2's convolution after layer 0, x1 = N(x1 + act(conv(x0))),
     * x0 the embeddings, each sequence zero-padded on its own; 0: none */
    int conv_kernel; /* odd: (kernel - 1) / 2 positions each side */
    int conv_act;    /* SF_ACT_GELU, _GELU_TANH, _RELU, _SILU or SF_HEAD_ACT_TANH */
} sf_config;

static inline int sf_head_dim(const sf_config *c) { return c->head_dim; }
static inline int sf_attn_width(const sf_config *c) { return c->heads * c->head_dim; }
static inline int sf_kv_width(const sf_config *c) { return c->kv_heads * c->head_dim; }
/* The parameter set layer l runs (ALBERT's group: int(l / (layers / groups))). */
static inline int sf_layer_group(const sf_config *c, int l) { return (int)((long long)l * c->layer_groups / c->layers); }
static inline int sf_gated(const sf_config *c) {
    return c->activation == SF_ACT_SWIGLU || c->activation == SF_ACT_GEGLU || c->activation == SF_ACT_GEGLU_TANH;
}
static inline int sf_has_local(const sf_config *c) { return c->local_window > 0; }

/* The disentangled scheme (DeBERTa-v2/v3, plugins/position/disentangled.c),
 * in either slot: the options the core reads too (it projects the relative
 * table by each layer's key and query projections). The table has `rows`
 * = 2 x span rows, span = buckets, or maxDistance without buckets. */
typedef struct sf_disentangled_opts {
    int buckets, max_distance; /* buckets 0: offsets clamped to +-maxDistance */
    int c2p, p2c;              /* the terms: content to position, position to content */
    int share_key;             /* the layer's own attn.k / attn.q project the table (else attn.pos_k / attn.pos_q) */
    int norm_table;            /* the table goes through embed.rel_norm first */
    int rows;
} sf_disentangled_opts;
extern const sf_position_plugin sf_position_disentangled;
/* Its options when either slot holds it, else NULL. */
static inline const sf_disentangled_opts *sf_disentangled(const struct sf_config *c) {
    if (c->position == &sf_position_disentangled) return (const sf_disentangled_opts *)(const void *)c->position_options.bytes;
    if (c->bias == &sf_position_disentangled) return (const sf_disentangled_opts *)(const void *)c->bias_options.bytes;
    return NULL;
}

/* The config as the relativeBias plugin sees it: that plugin and its options in
 * position / positionOptions (so that every plugin reads its options the same
 * way in either slot). */
void sf_config_bias_view(const sf_config *c, sf_config *view);
/* The config as the position plugin sees it: dModel the width of the
 * embeddings it adds to (embedDim). */
void sf_config_position_view(const sf_config *c, sf_config *view);
/* Longest sequence both position slots encode (0x7fffffff: unlimited); *who names the one that limits it. */
int sf_config_max_len(const sf_config *c, const char **who);

/* Parses and validates a config from JSON text. */
int sf_config_parse(sf_config *cfg, const char *json, size_t len, sf_error *err);
/* Writes the resolved config (every field explicit) as a JSON object. */
void sf_config_write(const sf_config *cfg, sf_buf *out);

#endif
