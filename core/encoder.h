/* The encoder: parameters (one arena), activations (one arena), forward. */
#ifndef SF_ENCODER_H
#define SF_ENCODER_H

#include <stdint.h>

#include "config.h"
#include "kernels.h"

/* Rows processed together by the per-token stages (norm, projections, FFN):
 * bounds the scratch buffers whatever the sequence length. */
#ifndef SF_CHUNK
#define SF_CHUNK 64
#endif

enum { SF_INIT_ZEROS, SF_INIT_ONES, SF_INIT_NORMAL, SF_INIT_FANIN_UNIFORM };
/* Linear weights that depth-scaled initialisations shrink: the sub-layers'
 * output projections (attn.o, ffn.down), and the value and FFN inputs (DeepNet's beta). */
enum { SF_GROUP_NONE, SF_GROUP_OUTPUT, SF_GROUP_VALUE_FFN };
/* Storage of the weights: 'f32', or 'q8' (int8: the Linear weights per output
 * channel in qgemm.h's panels, the token embeddings per row: a float scale,
 * then the row's int8 values; everything else stays float). */
enum { SF_DTYPE_F32, SF_DTYPE_Q8 };
enum { SF_Q8_NONE, SF_Q8_PANELS, SF_Q8_ROWS };

/* Floats a q8 row of the token table takes: its scale, then its int8 values in whole floats. */
static inline size_t sf_q8_row_floats(int cols) { return 1 + ((size_t)cols + 3) / 4; }

typedef struct sf_param {
    char name[48];
    int ndim, rows, cols; /* shape [rows] or [rows, cols] */
    int packed;           /* a Linear weight [out=rows, in=cols], stored in panels */
    int q8;               /* stored as int8 (dtype 'q8'): SF_Q8_PANELS (a Linear weight, core/qgemm.h) or SF_Q8_ROWS */
    int optional;         /* a bias: absent from a model file counts as zero */
    int init;             /* SF_INIT_* for seed initialisation */
    int init_group;       /* SF_GROUP_*: which depth-scaled initialisation applies */
    float init_std;       /* SF_INIT_NORMAL */
    size_t offset;        /* floats into the parameter arena */
    size_t floats;        /* floats it occupies there (panels are padded) */
    int set;              /* has a value (loaded, given, or initialised) */
    int plugin;           /* a position plugin's tensor (either slot): what a swap of plugins drops */
} sf_param;

typedef struct sf_layer {
    float *wq, *bq;                                   /* packed (A, C); (A). A = heads x headDim */
    float *wk, *bk, *wv, *bv;                         /* packed (K, C); (K). K = kvHeads x headDim */
    float *wo, *bo;                                   /* packed (C, A); (C) */
    float *norm1_w, *norm1_b, *norm2_w, *norm2_b;     /* (C); biases NULL for rmsnorm; norm1 NULL without an attention norm */
    float *up_w, *up_b, *gate_w, *gate_b;             /* packed (F, C); (F); gate only when gated */
    float *down_w, *down_b;                           /* packed (C, F); (C) */
    float *q_norm_w, *q_norm_b, *k_norm_w, *k_norm_b; /* (D) shared by the heads, with qkNorm; else NULL */
    float *pos_k_w, *pos_k_b, *pos_q_w, *pos_q_b;     /* packed (A, C); (A): disentangled without shareKey, else NULL */
} sf_layer;

typedef struct sf_encoder {
    sf_config cfg;
    int dtype; /* SF_DTYPE_*: how the weights are stored */
    void *xq;  /* (CHUNK, max(C, A, F)) quantized activation rows, q8 only */

    /* parameters */
    sf_param *params;
    int n_params;
    int *layer_start; /* (G + 1): layer set g's tensors are params[layer_start[g] .. layer_start[g+1]), G = layerGroups */
    float *param_arena;
    size_t param_floats;
    float *tokens;                                    /* (V, E), E = embedDim */
    float *types;                                     /* (TV, E) token-type (segment) embeddings, or NULL */
    const float *plugin_params[SF_MAX_PLUGIN_PARAMS]; /* e.g. embed.positions (maxLen, E) */
    float *embed_norm_w, *embed_norm_b;               /* (E), (C) with embedNormAfterProj, or NULL */
    float *embed_proj_w, *embed_proj_b;               /* packed (C, E), (C): with embedDim only */
    sf_layer *layers;                                 /* (L): layer l's tensors, those of its set (layerGroups: shared) */
    unsigned char *skip;                              /* (L) 1: forward passes the stream through layer l (ablation) */
    float *final_w, *final_b;                         /* (C) or NULL */
    float *head_w, *head_b;                           /* packed (V, C), (V); or NULL (outputHead) */
    /* config.head (core/heads.c); NULL where the head has no such tensor */
    float *head_dense_w, *head_dense_b; /* packed (C, C), (C) */
    float *head_norm_w, *head_norm_b;   /* (C) */
    float *head_out_w, *head_out_b;     /* packed (labels, C), (labels); mlm: (V, C) unless tied, (V) */
    /* the disentangled scheme (config.h): embed.rel_norm, and each layer's
     * projections of the relative table, computed before the first forward
     * after the weights change (rel_ready 0): layer l's block of rel_floats
     * holds PK^T (H, D, rows) with c2p, then PQ^T (H, D, rows) x attnScale with p2c */
    float *rel_norm_w, *rel_norm_b; /* (C) */
    float *rel;
    size_t rel_layer;
    int rel_ready;
    float *conv_w, *conv_b;           /* config.conv: packed (C, C kernel), f32 in q8 encoders too; (C) */
    float *conv_norm_w, *conv_norm_b; /* (C) */

    /* the config as the position plugin sees it (dModel = embedDim), and as it
     * rotates the keys (heads = kvHeads) */
    sf_config pos_view, kv_view;
    /* position table (the plugin's constants) for sequences up to table_T */
    float *table;
    int table_T;
    /* the relativeBias plugin: its view of the config, tensors and table */
    sf_config bias_view;
    const float *bias_params[SF_MAX_PLUGIN_PARAMS]; /* e.g. embed.relative_bias (buckets, H) */
    float *bias_table;
    int bias_table_T;

    /* activations, carved from one arena by sf_encoder_reserve */
    float *act_arena;
    size_t act_floats;
    int res_B, res_T, res_N, res_flags, res_threads, res_rows;
    int threads;        /* threads a forward may use (sf_pool.h); the scratch holds one attention scratch each */
    float *x;           /* (N, C) residual stream, all sequences packed */
    float *kv;          /* (N, 2K) rows [k | v] (+ NR floats of padding), K = kvHeads x headDim */
    float *emb;         /* (N, E) the embeddings before embed.proj, or NULL (no embedDim) */
    float *xn;          /* (CHUNK, C) normed rows */
    float *q;           /* (CHUNK, A) queries */
    float *ao;          /* (CHUNK, A) attention output, before the o projection */
    float *h, *g;       /* (CHUNK, F) FFN hidden, gate */
    float *o;           /* (CHUNK, C) sub-layer output */
    float *att_scratch; /* sf_attention_scratch(CHUNK, D) + the bias's: packed queries, a score tile, ... */
    size_t att_stride;  /* floats of one thread's att_scratch */
    float *x0;          /* (N, C) the embeddings, kept for config.conv */
    int32_t *ids;       /* (N) input, packed */
    int32_t *type_ids;  /* (N) input: token types, read when the config has them */
    int32_t *perm;      /* (N) canonical order -> input position, for order-blind configs */
    uint64_t *sortkeys; /* (N) scratch for that order */
    int32_t *lens;      /* (B) input */
    int32_t *att_lens;  /* (B) input: the keys each sequence's tokens attend to, its first att_lens[b] (0: all); zeroed by reserve */
    float *out;         /* (B, T, C) output, padded rows zero */
    float *att;         /* (L, B, H, T, T) or NULL */
    float *hidden;      /* (L+1, B, T, C) or NULL: the residual stream after embeddings and each layer */
    float *logits;      /* (B, T, V) when the config has an output head, padded rows zero */
    int32_t *head_rows; /* (R) input, mlm head: the rows of out it runs at, b * T + t */
    float *head_in;     /* (CHUNK, C) rows gathered for the head (pooled, or chosen); pooling 'late': (CHUNK, labels) a chunk's logits */
    float *head_mid;    /* (CHUNK, W) after head.dense / head.norm, W = head.width */
    float *head_out;    /* sequence (B, labels); token, qa, colbert (B, T, labels), padded rows zero; mlm (R, V), sparse (B, V) */
    float *head_tmp;    /* (CHUNK, V): an mlm head's logits of a chunk of rows, for the sparse pooling */
} sf_encoder;

int sf_encoder_create(sf_encoder **out, const sf_config *cfg, sf_error *err); /* dtype f32 */
int sf_encoder_create_dtype(sf_encoder **out, const sf_config *cfg, int dtype, sf_error *err);
/* Parameter i's rows r0 .. r0+n-1 <- n x cols values load(src, k) (row-major),
 * checked finite; a q8 Linear weight takes chunks that start on a panel
 * (a multiple of 8 rows) and end on one or at its last row. */
int sf_encoder_set_rows(sf_encoder *e, int i, size_t r0, size_t n, const void *src, sf_load_fn load, sf_error *err);
/* The same from int8 rows and a float scale per row (a q8 model file): int8 in
 * [-127, 127], scales finite and >= 0, checked; q8 storages keep them bit for
 * bit, float ones get q * scale. */
int sf_encoder_set_rows_i8(sf_encoder *e, int i, size_t r0, size_t n, const int8_t *q, const void *scales, sf_error *err);
/* A q8 parameter (p->q8 != SF_Q8_NONE) as (rows, cols) int8 and (rows) scales. */
void sf_encoder_get_param_i8(const sf_encoder *e, int i, int8_t *q, float *scales);
void sf_encoder_free(sf_encoder *e);

/* Index of the parameter called name, or -1. */
int sf_encoder_find_param(const sf_encoder *e, const char *name);
/* Sets parameter i from count elements read with load (row-major, PyTorch
 * layout); refuses a wrong count or a non-finite value. */
int sf_encoder_set_param(sf_encoder *e, int i, const void *src, sf_load_fn load, size_t count, sf_error *err);
/* Copies parameter i (unpacked, row-major) to dst. */
void sf_encoder_get_param(const sf_encoder *e, int i, float *dst);
/* Initialises every parameter not set yet, deterministically from seed and
 * the parameter's name (so two configs share the weights they have in common).
 * output_scale multiplies the output projections (attn.o, ffn.down), e.g.
 * 1/sqrt(2L); with residualScale 'deepnorm', DeepNet's beta = (8L)^(-1/4)
 * multiplies attn.v, attn.o and the FFN's Linears too. */
void sf_encoder_init_missing(sf_encoder *e, uint64_t seed, double output_scale);
/* Zeroes the optional parameters not set (absent biases); fails naming the
 * first required one that is missing. */
int sf_encoder_require_all(sf_encoder *e, const char *what, sf_error *err);

/* What forward writes besides e->out: attentions, hidden states, and config.head's logits.
 * SF_OUT_SPARSE (with SF_OUT_HEAD, an mlm head): every token's logits pooled
 * into one vector a sequence, head_out (B, V) = max over the tokens of
 * log(1 + relu(logit)) (sentence-transformers' SpladePooling), or their sum
 * (SF_SPARSE_SUM), log1p applied twice with SF_SPARSE_LOG2 (log1p_relu);
 * computed a chunk of rows at a time, never a (T, V) buffer. */
enum { SF_OUT_ATTENTIONS = 1, SF_OUT_HIDDEN = 2, SF_OUT_HEAD = 4, SF_OUT_SPARSE = 8, SF_SPARSE_SUM = 16, SF_SPARSE_LOG2 = 32 };

/* Makes room for B sequences, the longest T tokens, N tokens in all, the
 * outputs in flags and, for an mlm head, R chosen rows. The only place
 * forward's memory grows. */
int sf_encoder_reserve_rows(sf_encoder *e, int B, int T, int N, int flags, int R, sf_error *err);
int sf_encoder_reserve(sf_encoder *e, int B, int T, int N, int flags, sf_error *err); /* R = 0 */
/* Runs the encoder on e->ids / e->lens (B sequences) into e->out (and e->att,
 * e->hidden as flags ask). Allocates nothing. */
int sf_encoder_forward(sf_encoder *e, int B, int flags, sf_error *err);

/* Probes of the position plugin alone, for inspection and teaching.
 * position_vectors: e->out (T, C) = what embed adds at positions 0..T-1 (zeros
 * for plugins that add nothing).
 * position_scores: e->att (H, T, T) = raw attention scores, q.k x attnScale
 * plus the plugin's bias (of layer 0), when every position holds the same q (A)
 * and k (A) before rotation: for RoPE a function of j - i alone; for q = k = 0,
 * ALiBi's bias. */
int sf_encoder_position_vectors(sf_encoder *e, int T, sf_error *err);
int sf_encoder_position_scores(sf_encoder *e, const float *q, const float *k, int T, sf_error *err);

float sf_load_f32(const void *src, size_t i);

/* For core/heads.c: out (M, ldo) = a (M, lda) @ W^T + bias, W (N, K) packed in
 * the encoder's storage (f32 or q8 panels), the columns split between threads. */
void sf_encoder_linear(sf_encoder *e, float *out, size_t ldo, const float *a, size_t lda, const float *w, const float *bias, int M, int K, int N);
/* heads.c: x (n) = tanh(x). */
void sf_tanh_forward(float *x, size_t n);
/* heads.c: config.head on e->out (B, T, C) into e->head_out; reads e->head_rows for an mlm head
 * (flags: SF_OUT_SPARSE and its modes pool an mlm head's logits of every token instead). */
int sf_head_forward(sf_encoder *e, int B, int T, int flags, sf_error *err);

#endif
