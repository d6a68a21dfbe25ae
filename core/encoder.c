/* The encoder forward pass, and the bookkeeping around it: the parameter
 * table, the parameter arena, the activation arena.
 *
 * The path of a token, as sf_encoder_forward runs it:
 *   ids -> embed_forward (x sqrt(C)) -> position.embed -> L x [attention_block,
 *   ffn_block] -> final norm -> out.
 * Per-token stages run over chunks of SF_CHUNK rows of all sequences packed
 * together; attention runs per sequence, so padding costs nothing and
 * padded keys are never seen. */
#include "encoder.h"

#include "pool.h"
#include "qgemm.h"

#include "sfmath.h"
#include "simd.h"

#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* Bookkeeping that runs once per load or reservation, never per token: for
 * size, as the files of build.sh's COLD list (-Oz); the forward stays -Os. */
#define COLD __attribute__((minsize))

float sf_load_f32(const void *src, size_t i) {
    float v;
    memcpy(&v, (const char *)src + i * 4, 4);
    return v;
}

/* ------------------------------------------------------------ parameters */

/* Names like "layers.3.attn.q.weight". */
static void param_name(char *out, size_t cap, int layer, const char *suffix) {
    char num[12];
    int n = 0, v = layer;
    do {
        num[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    size_t k = 0;
    const char *pre = "layers.";
    while (*pre && k + 1 < cap) out[k++] = *pre++;
    while (n && k + 1 < cap) out[k++] = num[--n];
    if (k + 1 < cap) out[k++] = '.';
    while (*suffix && k + 1 < cap) out[k++] = *suffix++;
    out[k] = 0;
}

/* The parameter table, declared once: a tensor's name, its shape in terms of
 * the config's sizes, its role (how it is stored and initialised), when it
 * exists, and the pointer it fills (an offset into sf_layer or sf_encoder).
 * Optional tensors (biases) absent from a model file count as zero. */
/* dModel, heads x headDim, ffDim, vocabSize, typeVocabSize, headDim, head labels, kvHeads x headDim, embedDim, head width, dModel x conv
 * kernel, the embedding norm's width (embedDim; dModel with embedNormAfterProj) */
enum { D_ONE, D_C, D_A, D_F, D_V, D_TV, D_HD, D_L, D_K, D_E, D_W, D_CK, D_EN };
enum { R_LINEAR, R_BIAS, R_NORM_W, R_NORM_B, R_EMBED }; /* [out, in] packed / optional zeros / ones / optional zeros / N(0, 1) */
enum {
    W_ALWAYS = 0,
    W_GATED = 1,
    W_NORM_BIAS = 2,
    W_ATTN_NORM = 4,
    W_TYPES = 8,
    W_EMBED_NORM = 16,
    W_FINAL_NORM = 32,
    W_HEAD = 64,
    W_QK_NORM = 128,
    W_QK_NORM_BIAS = 256,
    W_HEAD_DENSE = 512,
    W_HEAD_NORM = 1024,
    W_HEAD_NORM_BIAS = 2048,
    W_HEAD_OUT = 4096,
    W_HEAD_OUT_W = 8192,
    W_REL_NORM = 1 << 14, /* the disentangled scheme's: flagged as a plugin's tensors */
    W_POS_K = 1 << 15,
    W_POS_Q = 1 << 16,
    W_CONV = 1 << 17,
    W_DISENTANGLED = W_REL_NORM | W_POS_K | W_POS_Q,
    W_EMBED_PROJ = 1 << 18
};

typedef struct {
    const char *name;
    unsigned char rows, cols;  /* D_*; cols D_ONE: a vector */
    unsigned char role, group; /* R_*, SF_GROUP_* */
    unsigned when;             /* W_* */
    size_t slot;
} param_row;

#define IN_LAYER(f)   offsetof(sf_layer, f)
#define IN_ENCODER(f) offsetof(sf_encoder, f)
#define N             SF_GROUP_NONE
#define O             SF_GROUP_OUTPUT
#define V             SF_GROUP_VALUE_FFN
static const param_row layer_rows[] = {
    /* per layer, in file order */
    {"attn.q.weight", D_A, D_C, R_LINEAR, N, W_ALWAYS, IN_LAYER(wq)},
    {"attn.q.bias", D_A, D_ONE, R_BIAS, N, W_ALWAYS, IN_LAYER(bq)},
    {"attn.k.weight", D_K, D_C, R_LINEAR, N, W_ALWAYS, IN_LAYER(wk)},
    {"attn.k.bias", D_K, D_ONE, R_BIAS, N, W_ALWAYS, IN_LAYER(bk)},
    {"attn.v.weight", D_K, D_C, R_LINEAR, V, W_ALWAYS, IN_LAYER(wv)},
    {"attn.v.bias", D_K, D_ONE, R_BIAS, N, W_ALWAYS, IN_LAYER(bv)},
    {"attn.o.weight", D_C, D_A, R_LINEAR, O, W_ALWAYS, IN_LAYER(wo)},
    {"attn.o.bias", D_C, D_ONE, R_BIAS, N, W_ALWAYS, IN_LAYER(bo)},
    {"attn.q_norm.weight", D_HD, D_ONE, R_NORM_W, N, W_QK_NORM, IN_LAYER(q_norm_w)},
    {"attn.q_norm.bias", D_HD, D_ONE, R_NORM_B, N, W_QK_NORM | W_QK_NORM_BIAS, IN_LAYER(q_norm_b)},
    {"attn.k_norm.weight", D_HD, D_ONE, R_NORM_W, N, W_QK_NORM, IN_LAYER(k_norm_w)},
    {"attn.k_norm.bias", D_HD, D_ONE, R_NORM_B, N, W_QK_NORM | W_QK_NORM_BIAS, IN_LAYER(k_norm_b)},
    {"norm1.weight", D_C, D_ONE, R_NORM_W, N, W_ATTN_NORM, IN_LAYER(norm1_w)},
    {"norm1.bias", D_C, D_ONE, R_NORM_B, N, W_ATTN_NORM | W_NORM_BIAS, IN_LAYER(norm1_b)},
    {"norm2.weight", D_C, D_ONE, R_NORM_W, N, W_ALWAYS, IN_LAYER(norm2_w)},
    {"norm2.bias", D_C, D_ONE, R_NORM_B, N, W_NORM_BIAS, IN_LAYER(norm2_b)},
    {"ffn.up.weight", D_F, D_C, R_LINEAR, V, W_ALWAYS, IN_LAYER(up_w)},
    {"ffn.up.bias", D_F, D_ONE, R_BIAS, N, W_ALWAYS, IN_LAYER(up_b)},
    {"ffn.gate.weight", D_F, D_C, R_LINEAR, V, W_GATED, IN_LAYER(gate_w)},
    {"ffn.gate.bias", D_F, D_ONE, R_BIAS, N, W_GATED, IN_LAYER(gate_b)},
    {"ffn.down.weight", D_C, D_F, R_LINEAR, O, W_ALWAYS, IN_LAYER(down_w)},
    {"ffn.down.bias", D_C, D_ONE, R_BIAS, N, W_ALWAYS, IN_LAYER(down_b)},
    {"attn.pos_k.weight", D_A, D_C, R_LINEAR, N, W_POS_K, IN_LAYER(pos_k_w)},
    {"attn.pos_k.bias", D_A, D_ONE, R_BIAS, N, W_POS_K, IN_LAYER(pos_k_b)},
    {"attn.pos_q.weight", D_A, D_C, R_LINEAR, N, W_POS_Q, IN_LAYER(pos_q_w)},
    {"attn.pos_q.bias", D_A, D_ONE, R_BIAS, N, W_POS_Q, IN_LAYER(pos_q_b)},
};
static const param_row embed_rows[] = {
    /* before the position plugin's tensors */
    {"embed.tokens", D_V, D_E, R_EMBED, N, W_ALWAYS, IN_ENCODER(tokens)},
    {"embed.types", D_TV, D_E, R_EMBED, N, W_TYPES, IN_ENCODER(types)},
};
static const param_row embed_norm_rows[] = {
    /* after them */
    {"embed.norm.weight", D_EN, D_ONE, R_NORM_W, N, W_EMBED_NORM, IN_ENCODER(embed_norm_w)},
    {"embed.norm.bias", D_EN, D_ONE, R_NORM_B, N, W_EMBED_NORM | W_NORM_BIAS, IN_ENCODER(embed_norm_b)},
    {"embed.proj.weight", D_C, D_E, R_LINEAR, N, W_EMBED_PROJ, IN_ENCODER(embed_proj_w)},
    {"embed.proj.bias", D_C, D_ONE, R_BIAS, N, W_EMBED_PROJ, IN_ENCODER(embed_proj_b)},
    {"embed.rel_norm.weight", D_C, D_ONE, R_NORM_W, N, W_REL_NORM, IN_ENCODER(rel_norm_w)},
    {"embed.rel_norm.bias", D_C, D_ONE, R_NORM_B, N, W_REL_NORM | W_NORM_BIAS, IN_ENCODER(rel_norm_b)},
    {"conv.weight", D_C, D_CK, R_LINEAR, N, W_CONV, IN_ENCODER(conv_w)},
    {"conv.bias", D_C, D_ONE, R_BIAS, N, W_CONV, IN_ENCODER(conv_b)},
    {"conv.norm.weight", D_C, D_ONE, R_NORM_W, N, W_CONV, IN_ENCODER(conv_norm_w)},
    {"conv.norm.bias", D_C, D_ONE, R_NORM_B, N, W_CONV | W_NORM_BIAS, IN_ENCODER(conv_norm_b)},
};
static const param_row output_rows[] = {
    /* after the layers */
    {"final_norm.weight", D_C, D_ONE, R_NORM_W, N, W_FINAL_NORM, IN_ENCODER(final_w)},
    {"final_norm.bias", D_C, D_ONE, R_NORM_B, N, W_FINAL_NORM | W_NORM_BIAS, IN_ENCODER(final_b)},
    {"head.weight", D_V, D_C, R_LINEAR, N, W_HEAD, IN_ENCODER(head_w)},
    {"head.bias", D_V, D_ONE, R_BIAS, N, W_HEAD, IN_ENCODER(head_b)},
    /* config.head (core/heads.c) */
    {"head.dense.weight", D_W, D_C, R_LINEAR, N, W_HEAD_DENSE, IN_ENCODER(head_dense_w)},
    {"head.dense.bias", D_W, D_ONE, R_BIAS, N, W_HEAD_DENSE, IN_ENCODER(head_dense_b)},
    {"head.norm.weight", D_W, D_ONE, R_NORM_W, N, W_HEAD_NORM, IN_ENCODER(head_norm_w)},
    {"head.norm.bias", D_W, D_ONE, R_NORM_B, N, W_HEAD_NORM | W_HEAD_NORM_BIAS, IN_ENCODER(head_norm_b)},
    {"head.out.weight", D_L, D_W, R_LINEAR, N, W_HEAD_OUT_W, IN_ENCODER(head_out_w)},
    {"head.out.bias", D_L, D_ONE, R_BIAS, N, W_HEAD_OUT, IN_ENCODER(head_out_b)},
};
#undef N
#undef O
#undef V
#define COUNT(a) (int)(sizeof(a) / sizeof *(a))

static int size_of(const sf_config *c, int d) {
    switch (d) {
    case D_C: return c->d_model;
    case D_A: return sf_attn_width(c);
    case D_F: return c->ff_dim;
    case D_V: return c->vocab_size;
    case D_TV: return c->type_vocab_size;
    case D_HD: return c->head_dim;
    case D_L: return c->head.labels;
    case D_K: return sf_kv_width(c);
    case D_E: return c->embed_dim;
    case D_W: return c->head.width;
    case D_CK: return c->d_model * c->conv_kernel; /* <= 2^20 x 255 */
    case D_EN: return c->embed_norm_after_proj ? c->d_model : c->embed_dim;
    default: return 1;
    }
}

/* Whether a row exists for this config (layer -1: outside the layers). */
static int exists(const sf_config *c, unsigned when, int layer) {
    const sf_disentangled_opts *dis = sf_disentangled(c);
    if ((when & W_REL_NORM) && !(dis && dis->norm_table)) return 0;
    if ((when & (W_POS_K | W_POS_Q)) && !(dis && !dis->share_key && (when & W_POS_K ? dis->c2p : dis->p2c))) return 0;
    if ((when & W_CONV) && !c->conv_kernel) return 0;
    return (!(when & W_GATED) || sf_gated(c)) && (!(when & W_NORM_BIAS) || c->norm->has_bias) && (!(when & W_QK_NORM) || c->qk_norm) &&
           (!(when & W_QK_NORM_BIAS) || (c->qk_norm && c->qk_norm->has_bias)) && (!(when & W_ATTN_NORM) || layer > 0 || c->first_attn_norm) &&
           (!(when & W_TYPES) || c->type_vocab_size > 0) && (!(when & W_EMBED_NORM) || c->embed_norm) && (!(when & W_FINAL_NORM) || c->final_norm) &&
           (!(when & W_HEAD) || c->output_head) && (!(when & W_HEAD_DENSE) || (c->head.task && c->head.dense)) &&
           (!(when & W_HEAD_NORM) || (c->head.task && c->head.norm)) && (!(when & W_HEAD_NORM_BIAS) || (c->head.norm && c->head.norm->has_bias)) &&
           (!(when & W_HEAD_OUT) || c->head.task) && (!(when & W_HEAD_OUT_W) || (c->head.task && !c->head.tied)) &&
           (!(when & W_EMBED_PROJ) || c->embed_proj);
}

/* Appends a parameter; with e->params NULL it only counts. slot: where its pointer goes. */
COLD static void add(sf_encoder *e, float ***slots, const char *name, int layer, int rows, int cols, int ndim, int role, int group, float init_std,
                     float **slot) {
    int i = e->n_params++;
    if (!e->params) return;
    sf_param *p = &e->params[i];
    memset(p, 0, sizeof *p);
    if (layer >= 0)
        param_name(p->name, sizeof p->name, layer, name);
    else
        strncpy(p->name, name, sizeof p->name - 1);
    p->ndim = ndim;
    p->rows = rows;
    p->cols = ndim == 2 ? cols : 1;
    p->packed = role == R_LINEAR;
    /* q8: every Linear weight, and the token table (half of a small model's weights) */
    if (e->dtype == SF_DTYPE_Q8) /* the convolution's taps are read as f32 panels (conv_block) */
        p->q8 = role == R_LINEAR && strcmp(name, "conv.weight") ? SF_Q8_PANELS : layer < 0 && !strcmp(name, "embed.tokens") ? SF_Q8_ROWS : SF_Q8_NONE;
    p->optional = role == R_BIAS || role == R_NORM_B;
    p->init = role == R_LINEAR ? SF_INIT_FANIN_UNIFORM : role == R_NORM_W ? SF_INIT_ONES : role == R_EMBED ? SF_INIT_NORMAL : SF_INIT_ZEROS;
    p->init_std = init_std;
    p->init_group = group;
    slots[i] = slot;
}

COLD static void add_rows(sf_encoder *e, float ***slots, const param_row *rows, int n, int layer, void *base) {
    const sf_config *c = &e->cfg;
    for (int k = 0; k < n; k++) {
        const param_row *r = &rows[k];
        if (!exists(c, r->when, layer)) continue;
        float **slot = base ? (float **)(void *)((char *)base + r->slot) : NULL;
        add(e, slots, r->name, layer, size_of(c, r->rows), size_of(c, r->cols), r->cols == D_ONE ? 1 : 2, r->role, r->group, 1.0f, slot);
        if (e->params && (r->when & W_DISENTANGLED)) e->params[e->n_params - 1].plugin = 1; /* dropped with the scheme */
    }
}

/* The canonical list of parameters for a config, in file order. */
COLD static void list_params(sf_encoder *e, float ***slots) {
    const sf_config *c = &e->cfg;
    void *enc = e->params ? e : NULL;
    e->n_params = 0;
    add_rows(e, slots, embed_rows, COUNT(embed_rows), -1, enc);
    sf_param_spec ps[SF_MAX_PLUGIN_PARAMS];
    int np = c->position->params ? c->position->params(&e->pos_view, ps) : 0; /* sized by the embeddings' width */
    for (int k = 0; k < np; k++) {
        add(e, slots, ps[k].name, -1, ps[k].rows, ps[k].cols, 2, R_EMBED, SF_GROUP_NONE, ps[k].init_std, enc ? (float **)&e->plugin_params[k] : NULL);
        if (e->params) e->params[e->n_params - 1].plugin = 1;
    }
    np = c->bias && c->bias->params ? c->bias->params(&e->bias_view, ps) : 0; /* the relativeBias plugin's (its own names) */
    for (int k = 0; k < np; k++) {
        add(e, slots, ps[k].name, -1, ps[k].rows, ps[k].cols, 2, R_EMBED, SF_GROUP_NONE, ps[k].init_std, enc ? (float **)&e->bias_params[k] : NULL);
        if (e->params) e->params[e->n_params - 1].plugin = 1;
    }
    add_rows(e, slots, embed_norm_rows, COUNT(embed_norm_rows), -1, enc);
    for (int g = 0; g < c->layer_groups; g++) { /* one set of tensors per group: layers[g] until create shares them out */
        if (e->layer_start) e->layer_start[g] = e->n_params;
        add_rows(e, slots, layer_rows, COUNT(layer_rows), g, e->params ? &e->layers[g] : NULL);
    }
    if (e->layer_start) e->layer_start[c->layer_groups] = e->n_params;
    add_rows(e, slots, output_rows, COUNT(output_rows), -1, enc);
}

/* Floats parameter p takes in the arena (0 on overflow). */
static size_t param_floats(const sf_param *p) {
    size_t f = 0;
    if (p->q8 == SF_Q8_PANELS) {
        size_t b = sf_q8_packed_bytes(p->rows, p->cols); /* panels of a multiple of 16 bytes */
        return b / sizeof(float);
    }
    if (p->q8 == SF_Q8_ROWS) return sf_mul_size((size_t)p->rows, sf_q8_row_floats(p->cols), &f) ? f : 0;
    if (p->packed) return sf_packed_floats(p->rows, p->cols);
    return sf_mul_size((size_t)p->rows, (size_t)p->cols, &f) ? f : 0;
}

int sf_encoder_create(sf_encoder **out, const sf_config *cfg, sf_error *err) { return sf_encoder_create_dtype(out, cfg, SF_DTYPE_F32, err); }

COLD int sf_encoder_create_dtype(sf_encoder **out, const sf_config *cfg, int dtype, sf_error *err) {
    *out = NULL;
    sf_encoder *e = calloc(1, sizeof *e);
    if (!e) return sf_fail(err, SF_OUT_OF_MEMORY, "out of memory creating the encoder");
    e->cfg = *cfg;
    e->dtype = dtype;
    if (cfg->bias) sf_config_bias_view(&e->cfg, &e->bias_view);
    sf_config_position_view(&e->cfg, &e->pos_view);
    e->kv_view = e->pos_view;
    e->kv_view.heads = cfg->kv_heads;
    if (dtype == SF_DTYPE_Q8) (void)q8_kernel_name(); /* its probe runs once, before threads share the kernels */
    list_params(e, NULL);                             /* count */
    int n = e->n_params;
    e->params = calloc((size_t)n, sizeof *e->params);
    float ***slots = calloc((size_t)n, sizeof *slots);
    e->layers = calloc(cfg->layers ? (size_t)cfg->layers : 1, sizeof *e->layers);
    e->layer_start = calloc((size_t)cfg->layer_groups + 1, sizeof *e->layer_start);
    e->skip = calloc(cfg->layers ? (size_t)cfg->layers : 1, 1);
    if (!e->params || !slots || !e->layers || !e->layer_start || !e->skip) {
        free(slots);
        sf_encoder_free(e);
        return sf_fail(err, SF_OUT_OF_MEMORY, "out of memory creating the encoder");
    }
    list_params(e, slots);

    size_t total = 0;
    for (int i = 0; i < n; i++) {
        sf_param *p = &e->params[i];
        size_t f = param_floats(p);
        if (!f && p->rows && p->cols) total = (size_t)-1;
        p->floats = (f + 3) & ~(size_t)3; /* 16-byte aligned tensors */
        p->offset = total;
        if (total == (size_t)-1 || p->floats < f || !sf_add_size(total, p->floats, &total)) {
            int rc =
                sf_fail(err, SF_OUT_OF_MEMORY, "config needs more parameter memory than wasm32 can address (at '%s')", p->name); /* p->name is e's */
            free(slots);
            sf_encoder_free(e);
            return rc;
        }
    }
    size_t bytes;
    if (!sf_mul_size(total ? total : 1, sizeof(float), &bytes) || bytes > SF_MAX_ALLOC || !(e->param_arena = sf_calloc_big(bytes))) {
        free(slots);
        sf_encoder_free(e);
        return sf_fail(err, SF_OUT_OF_MEMORY, "out of memory: the parameters need %z floats", (long long)total);
    }
    e->param_floats = total;
    for (int i = 0; i < n; i++)
        if (slots[i]) *slots[i] = e->param_arena + e->params[i].offset;
    free(slots);
    const sf_disentangled_opts *dis = sf_disentangled(cfg);
    if (dis) { /* each layer's projected tables, and the GEMM's reads past the last row (SF_NR - 1 <= 63 floats) */
        size_t floats;
        if (!SF_SIZE(&e->rel_layer, dis->c2p + dis->p2c, sf_attn_width(cfg), dis->rows) ||
            !SF_SIZE(&floats, e->rel_layer, cfg->layers ? cfg->layers : 1) || !sf_add_size(floats, 64, &floats) ||
            !sf_mul_size(floats, sizeof(float), &bytes) || bytes > SF_MAX_ALLOC || !(e->rel = sf_calloc_big(bytes))) {
            sf_encoder_free(e);
            return sf_fail(err, SF_OUT_OF_MEMORY, "out of memory for the disentangled tables: %z floats a layer", (long long)e->rel_layer);
        }
    }
    /* every layer points at its group's tensors, held once (layers[g] holds set g so far; group(l) <= l) */
    for (int l = cfg->layers - 1; l >= 0; l--) e->layers[l] = e->layers[sf_layer_group(cfg, l)];
    *out = e;
    return SF_OK;
}

void sf_encoder_free(sf_encoder *e) {
    if (!e) return;
    free(e->params);
    free(e->layers);
    free(e->layer_start);
    free(e->skip);
    free(e->param_arena);
    free(e->act_arena);
    free(e->table);
    free(e->bias_table);
    free(e->rel);
    free(e);
}

/* Parameters are in canonical order, layer set i's in params[layer_start[i] ..
 * layer_start[i+1]): a name "layers.<i>.*" is looked up in its block alone,
 * so loading a file of n tensors costs O(n), whatever the number of layers.
 * With layerGroups, "layers.<g>.*" names set g (a shared layer once). */
int sf_encoder_find_param(const sf_encoder *e, const char *name) {
    int from = 0, to = e->n_params, L = e->cfg.layer_groups;
    if (!strncmp(name, "layers.", 7) && L > 0) {
        long layer = 0;
        const char *c = name + 7;
        if (*c < '0' || *c > '9' || (*c == '0' && c[1] != '.')) return -1;
        for (; *c >= '0' && *c <= '9'; c++)
            if ((layer = layer * 10 + (*c - '0')) >= L) return -1;
        from = e->layer_start[layer];
        to = e->layer_start[layer + 1];
    }
    for (int i = from; i < to; i++)
        if (!strcmp(e->params[i].name, name)) return i;
    return -1;
}

/* A q8 row of the token table: scale = max |x| / 127, x_q = round(x / scale), as the Linear weights. */
static void q8_write_row(float *dst, const void *src, sf_load_fn load, size_t base, int cols) {
    float amax = 0;
    for (int k = 0; k < cols; k++) {
        float a = fabsf(load(src, base + (size_t)k));
        if (a > amax) amax = a;
    }
    float s = amax / 127.0f;
    signed char *q = (signed char *)(dst + 1);
    dst[0] = s;
    for (int k = 0; k < cols; k++) {
        float v = s > 0 ? nearbyintf(load(src, base + (size_t)k) / s) : 0;
        q[k] = (signed char)(v > 127 ? 127 : v < -127 ? -127 : v);
    }
}

/* Parameter p's rows r0 .. r0+n-1 <- n x cols values load(src, k), in p's
 * storage: plain floats, f32 panels (a chunk aligned on panels is packed by the
 * kernels; any other is scattered, the arena's zeroes padding the last panel),
 * q8 panels (chunks aligned on panels: qgemm.h), q8 rows. */
COLD static void write_rows(sf_encoder *e, const sf_param *p, size_t r0, size_t n, const void *src, sf_load_fn load) {
    float *base = e->param_arena + p->offset;
    e->rel_ready = 0; /* the disentangled tables follow the weights */
    size_t K = (size_t)p->cols, count = n * K;
    if (p->q8 == SF_Q8_PANELS) {
        q8_pack_linear((char *)base + (r0 / SF_Q8_NR) * sf_q8_panel_bytes((int)K), src, load, (int)n, (int)K);
    } else if (p->q8 == SF_Q8_ROWS) {
        for (size_t r = 0; r < n; r++) q8_write_row(base + (r0 + r) * sf_q8_row_floats((int)K), src, load, r * K, (int)K);
    } else if (!p->packed) {
        float *dst = base + r0 * K;
        if (load == sf_load_f32)
            memcpy(dst, src, count * sizeof(float));
        else
            for (size_t k = 0; k < count; k++) dst[k] = load(src, k);
    } else if (r0 % SF_NR == 0 && (n % SF_NR == 0 || r0 + n == (size_t)p->rows)) {
        if (load == sf_load_f32)
            pack_linear_f32(base + r0 * K, src, (int)n, (int)K);
        else
            pack_linear(base + r0 * K, src, load, (int)n, (int)K);
    } else {
        for (size_t r = 0; r < n; r++) {
            float *panel = base + (r0 + r) / SF_NR * SF_NR * K + (r0 + r) % SF_NR;
            for (size_t k = 0; k < K; k++) panel[k * SF_NR] = load(src, r * K + k);
        }
    }
}

static void write_param(sf_encoder *e, int i, const void *src, sf_load_fn load) {
    sf_param *p = &e->params[i];
    write_rows(e, p, 0, (size_t)p->rows, src, load);
    p->set = 1;
}

/* Index of the first NaN or +-Inf among count values, or count. */
static size_t first_non_finite(const void *src, sf_load_fn load, size_t count) {
    if (load == sf_load_f32) { /* exponent bits all ones, scanned as integers */
        const unsigned char *b = src;
        for (size_t k = 0; k < count; k++) {
            uint32_t bits;
            memcpy(&bits, b + 4 * k, 4);
            if ((bits & 0x7F800000u) == 0x7F800000u) return k;
        }
        return count;
    }
    for (size_t k = 0; k < count; k++) {
        float v = load(src, k);
        if (v - v != 0) return k;
    }
    return count;
}

COLD int sf_encoder_set_param(sf_encoder *e, int i, const void *src, sf_load_fn load, size_t count, sf_error *err) {
    sf_param *p = &e->params[i];
    size_t want = (size_t)p->rows * (size_t)p->cols;
    if (count != want) return sf_fail(err, SF_BAD_WEIGHTS, "weight '%s' has %z values, config needs %z", p->name, (long long)count, (long long)want);
    size_t k = first_non_finite(src, load, count);
    if (k < count)
        return sf_fail(err, SF_BAD_WEIGHTS, "weight '%s' holds a non-finite value (%g) at index %z", p->name, (double)load(src, k), (long long)k);
    write_param(e, i, src, load);
    return SF_OK;
}

COLD int sf_encoder_set_rows(sf_encoder *e, int i, size_t r0, size_t n, const void *src, sf_load_fn load, sf_error *err) {
    sf_param *p = &e->params[i];
    size_t count = n * (size_t)p->cols;
    if (r0 > (size_t)p->rows || n > (size_t)p->rows - r0)
        return sf_fail(err, SF_BAD_ARGUMENT, "weight '%s': rows %z.. +%z are outside its %d", p->name, (long long)r0, (long long)n, p->rows);
    if (p->q8 == SF_Q8_PANELS && (r0 % SF_Q8_NR || (n % SF_Q8_NR && r0 + n != (size_t)p->rows)))
        return sf_fail(err, SF_BAD_ARGUMENT, "weight '%s': a q8 chunk must start and end on a panel of %d rows", p->name, SF_Q8_NR);
    size_t k = first_non_finite(src, load, count);
    if (k < count)
        return sf_fail(err, SF_BAD_WEIGHTS, "weight '%s' holds a non-finite value (%g) at index %z", p->name, (double)load(src, k),
                       (long long)(r0 * (size_t)p->cols + k));
    write_rows(e, p, r0, n, src, load);
    return SF_OK;
}

/* Parameter i's rows r0 .. r0+n-1 <- already quantized rows: n x cols int8
 * values in [-127, 127] and n little-endian float scales (>= 0, 127 x scale
 * finite; may be unaligned), row r = q[r] * scales[r]. The q8 storages take them as they are
 * (a q8 file loads bit for bit); float storages get the dequantized values. */
COLD int sf_encoder_set_rows_i8(sf_encoder *e, int i, size_t r0, size_t n, const int8_t *q, const void *scales, sf_error *err) {
    sf_param *p = &e->params[i];
    size_t K = (size_t)p->cols;
    if (r0 > (size_t)p->rows || n > (size_t)p->rows - r0)
        return sf_fail(err, SF_BAD_ARGUMENT, "weight '%s': rows %z.. +%z are outside its %d", p->name, (long long)r0, (long long)n, p->rows);
    if (p->q8 == SF_Q8_PANELS && (r0 % SF_Q8_NR || (n % SF_Q8_NR && r0 + n != (size_t)p->rows)))
        return sf_fail(err, SF_BAD_ARGUMENT, "weight '%s': a q8 chunk must start and end on a panel of %d rows", p->name, SF_Q8_NR);
    for (size_t r = 0; r < n; r++) {
        float s;
        memcpy(&s, (const unsigned char *)scales + 4 * r, 4);
        if (!(s >= 0 && s * 127.0f <= FLT_MAX)) /* so that every q * scale is a finite float32 */
            return sf_fail(err, SF_BAD_WEIGHTS, "weight '%s': the scale of row %z is %g (scales must be >= 0 and times 127 a finite float32)",
                           p->name, (long long)(r0 + r), (double)s);
    }
    for (size_t k = 0; k < n * K; k++)
        if (q[k] == -128)
            return sf_fail(err, SF_BAD_WEIGHTS, "weight '%s': int8 value -128 at index %z (symmetric int8 is in [-127, 127])", p->name,
                           (long long)(r0 * K + k));
    float *base = e->param_arena + p->offset;
    e->rel_ready = 0;
    if (p->q8 == SF_Q8_PANELS) {
        q8_pack_linear_i8((char *)base + (r0 / SF_Q8_NR) * sf_q8_panel_bytes((int)K), q, scales, (int)n, (int)K);
        return SF_OK;
    }
    if (p->q8 == SF_Q8_ROWS) {
        for (size_t r = 0; r < n; r++) {
            float *row = base + (r0 + r) * sf_q8_row_floats((int)K);
            memcpy(row, (const unsigned char *)scales + 4 * r, 4);
            memcpy(row + 1, q + r * K, K);
        }
        return SF_OK;
    }
    float *w = malloc(K * sizeof(float)); /* one row dequantized at a time (loading, not forward) */
    if (!w) return sf_fail(err, SF_OUT_OF_MEMORY, "out of memory loading weight '%s'", p->name);
    for (size_t r = 0; r < n; r++) {
        float s;
        memcpy(&s, (const unsigned char *)scales + 4 * r, 4);
        for (size_t k = 0; k < K; k++) w[k] = (float)q[r * K + k] * s;
        write_rows(e, p, r0 + r, 1, w, sf_load_f32);
    }
    free(w);
    return SF_OK;
}

/* Parameter i as int8 rows and their scales (a q8 parameter: SF_Q8_PANELS or SF_Q8_ROWS). */
COLD void sf_encoder_get_param_i8(const sf_encoder *e, int i, int8_t *q, float *scales) {
    const sf_param *p = &e->params[i];
    const float *src = e->param_arena + p->offset;
    if (p->q8 == SF_Q8_PANELS)
        q8_unpack_linear_i8(q, scales, src, p->rows, p->cols);
    else
        for (int r = 0; r < p->rows; r++) {
            const float *row = src + (size_t)r * sf_q8_row_floats(p->cols);
            scales[r] = row[0];
            memcpy(q + (size_t)r * p->cols, row + 1, (size_t)p->cols);
        }
}

COLD void sf_encoder_get_param(const sf_encoder *e, int i, float *dst) {
    const sf_param *p = &e->params[i];
    const float *src = e->param_arena + p->offset;
    if (p->q8 == SF_Q8_PANELS)
        q8_unpack_linear(dst, src, p->rows, p->cols);
    else if (p->q8 == SF_Q8_ROWS)
        for (int r = 0; r < p->rows; r++) {
            const float *row = src + (size_t)r * sf_q8_row_floats(p->cols);
            const signed char *q = (const signed char *)(row + 1);
            for (int k = 0; k < p->cols; k++) dst[(size_t)r * p->cols + k] = row[0] * (float)q[k];
        }
    else if (p->packed)
        unpack_linear(dst, src, p->rows, p->cols);
    else
        memcpy(dst, src, sizeof(float) * (size_t)p->rows * (size_t)p->cols);
}

/* Seed initialisation is counter-based (splitmix64 of key + index), so any
 * element can be generated on its own and packing needs no scratch copy. The
 * key mixes the seed with the tensor's name: two configs built from the same
 * seed share the tensors they have in common. */
typedef struct {
    uint64_t key;
    int init;
    double scale; /* std for NORMAL, bound for FANIN_UNIFORM */
} init_ctx;

static uint64_t mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static double uniform01(uint64_t key, size_t i) { /* in (0, 1) */
    return (double)((mix64(key + 0x9E3779B97F4A7C15ull * (i + 1)) >> 11) + 1) * (1.0 / 9007199254740993.0);
}

static float init_load(const void *ctx, size_t i) {
    const init_ctx *c = ctx;
    switch (c->init) {
    case SF_INIT_ONES: return 1.0f;
    case SF_INIT_NORMAL: { /* Box-Muller, two uniforms per element */
        double s, co;
        sf_sincos(6.283185307179586 * uniform01(c->key, 2 * i + 1), &s, &co);
        return (float)(c->scale * sqrt(-2.0 * sf_log(uniform01(c->key, 2 * i))) * co);
    }
    case SF_INIT_FANIN_UNIFORM: return (float)(c->scale * (2.0 * uniform01(c->key, i) - 1.0));
    default: return 0.0f;
    }
}

COLD void sf_encoder_init_missing(sf_encoder *e, uint64_t seed, double output_scale) {
    const sf_config *c = &e->cfg;
    double beta = c->deepnorm ? 1 / sqrt(sqrt(8.0 * (c->layers ? c->layers : 1))) : 1; /* DeepNet: (8N)^(-1/4) */
    for (int i = 0; i < e->n_params; i++) {
        sf_param *p = &e->params[i];
        if (p->set) continue;
        double scale = p->init == SF_INIT_NORMAL ? p->init_std : 1.0 / sqrt((double)p->cols);
        if (p->init_group == SF_GROUP_OUTPUT) scale *= output_scale * beta;
        if (p->init_group == SF_GROUP_VALUE_FFN) scale *= beta;
        init_ctx ctx = {mix64(seed) ^ 0xcbf29ce484222325ull, p->init, scale};
        for (const char *ch = p->name; *ch; ch++) ctx.key = (ctx.key ^ (unsigned char)*ch) * 0x100000001b3ull; /* FNV-1a */
        write_param(e, i, &ctx, init_load);                                                                    /* finite by construction */
    }
}

COLD int sf_encoder_require_all(sf_encoder *e, const char *what, sf_error *err) {
    for (int i = 0; i < e->n_params; i++) {
        sf_param *p = &e->params[i];
        if (p->set) continue;
        if (!p->optional) return sf_fail(err, SF_BAD_WEIGHTS, "%s has no tensor '%s' (shape [%d, %d])", what, p->name, p->rows, p->cols);
        memset(e->param_arena + p->offset, 0, p->floats * sizeof(float));
        p->set = 1;
        e->rel_ready = 0;
    }
    return SF_OK;
}

/* ------------------------------------------------------------ activations */

/* Carves n floats (16-byte aligned) from the arena at *at; with base NULL it
 * only sums sizes. Returns 0 on overflow. */
static int carve(float *base, size_t *at, size_t n, float **out) {
    size_t rounded;
    if (!sf_add_size(n, 3, &rounded)) return 0;
    rounded &= ~(size_t)3;
    if (base) *out = base + *at;
    return sf_add_size(*at, rounded, at);
}

COLD static int layout(sf_encoder *e, float *base, int B, int T, int N, int flags, int rows, size_t *total) {
    const sf_config *c = &e->cfg;
    size_t C = (size_t)c->d_model, A = (size_t)sf_attn_width(c), F = (size_t)c->ff_dim, R = N < SF_CHUNK ? (size_t)N : SF_CHUNK;
    size_t D = (size_t)sf_head_dim(c), L = (size_t)c->layers, E = (size_t)c->embed_dim, W = (size_t)c->head.width;
    /* kv rows [k | v] of the kv heads; the position probes put [k | q] of every head there */
    size_t KV = flags & SF_OUT_ATTENTIONS ? A : (size_t)sf_kv_width(c);
    int threads = e->threads > 1 ? e->threads : 1;
    size_t at = 0, nC, n2A, nE = 0, n2, btc, btv = 0, att = 0, hid = 0, x0 = 0, scratch;
    float *ids, *types, *lens, *att_lens, *perm, *keys, *xq;
    size_t widest = C > A ? C : A, xq_floats = 0;
    if (F > widest) widest = F;
    if (E > widest) widest = E;                                                                    /* embed.proj's input */
    if (c->head.task && W > widest) widest = W;                                                    /* head.out's input */
    if (e->dtype == SF_DTYPE_Q8) xq_floats = sf_q8_act_bytes((int)R, (int)widest) / sizeof(float); /* rows of 16-byte multiples */
    /* one thread's attention scratch: the kernel's, then the disentangled tiles' (queries and keys x the rows they reach) */
    const sf_disentangled_opts *dis = sf_disentangled(c);
    size_t reach = SF_CHUNK + SF_ATT_BK - 1;
    if (dis && (size_t)dis->rows < reach) reach = (size_t)dis->rows;
    e->att_stride = sf_attention_scratch(SF_CHUNK, (int)D) + (dis ? (SF_CHUNK + SF_ATT_BK) * reach : 0);
    /* every product of user sizes through SF_SIZE: size_t is 32 bits in wasm32 */
    int ok = SF_SIZE(&nC, N, C) && SF_SIZE(&n2A, N, 2, KV) && sf_add_size(n2A, SF_NR, &n2A) && SF_SIZE(&n2, N, 2) &&
             SF_SIZE(&btc, B, T, C > E ? C : E) && SF_SIZE(&scratch, e->att_stride, threads);
    if (ok && c->embed_proj) ok = SF_SIZE(&nE, N, E); /* (N, E) before embed.proj */
    if (ok && c->conv_kernel) ok = SF_SIZE(&x0, N, C);
    if (ok && (flags & SF_OUT_ATTENTIONS)) ok = SF_SIZE(&att, L ? L : 1, B, c->heads, T, T); /* (L, B, H, T, T); >= 1 layer for the probes */
    if (ok && (flags & SF_OUT_HIDDEN)) ok = SF_SIZE(&hid, L + 1, B, T, C);                   /* (L+1, B, T, C) */
    if (ok && c->output_head) ok = SF_SIZE(&btv, B, T, c->vocab_size);                       /* (B, T, V) */
    size_t hrows = 0, hin = 0, hmid = 0, hout = 0, htmp = 0;                                 /* config.head's buffers */
    if (ok && (flags & SF_OUT_HEAD)) {
        const sf_head_config *h = &c->head;
        /* head_in: the rows gathered, or with 'late' pooling a chunk's logits (labels < 2^24) */
        hin = R * (h->pooling == SF_HEAD_POOL_LATE && (size_t)h->labels > C ? (size_t)h->labels : C);
        hmid = R * W;
        if (h->task == SF_HEAD_SEQUENCE)
            ok = SF_SIZE(&hout, B, h->labels); /* (B, labels) */
        else if (sf_head_per_token(h->task))
            ok = SF_SIZE(&hout, B, T, h->labels); /* (B, T, labels) */
        else if (flags & SF_OUT_SPARSE)           /* (B, V), a chunk's logits (CHUNK, V), x^T (W, CHUNK) in head_in */
            ok = SF_SIZE(&hout, B, h->labels) && SF_SIZE(&htmp, SF_CHUNK, h->labels) && (hin = (size_t)SF_CHUNK * (C > W ? C : W));
        else
            ok = SF_SIZE(&hout, rows ? rows : 1, h->labels), hrows = (size_t)rows; /* (R, V) */
    }
    /* R <= 64 rows of at most 2^20 columns: these products fit */
    ok = ok && carve(base, &at, nC, &e->x) && carve(base, &at, n2A, &e->kv) && carve(base, &at, nE, &e->emb) && carve(base, &at, R * C, &e->xn) &&
         carve(base, &at, R * A, &e->q) && carve(base, &at, R * A, &e->ao) && carve(base, &at, R * F, &e->h) &&
         carve(base, &at, sf_gated(c) ? R * F : 0, &e->g) && carve(base, &at, R * C, &e->o) &&
         carve(base, &at, scratch, &e->att_scratch) && /* one per thread */
         carve(base, &at, x0, &e->x0) && carve(base, &at, xq_floats, &xq) && carve(base, &at, (size_t)N, &ids) &&
         carve(base, &at, (size_t)N, &types) && carve(base, &at, (size_t)B, &lens) && carve(base, &at, (size_t)B, &att_lens) &&
         carve(base, &at, (size_t)N, &perm) && carve(base, &at, n2, &keys) && carve(base, &at, btc, &e->out) && carve(base, &at, att, &e->att) &&
         carve(base, &at, hid, &e->hidden) && carve(base, &at, btv, &e->logits) && carve(base, &at, hrows, (float **)(void *)&e->head_rows) &&
         carve(base, &at, hin, &e->head_in) && carve(base, &at, hmid, &e->head_mid) && carve(base, &at, hout, &e->head_out) &&
         carve(base, &at, htmp, &e->head_tmp);
    if (base) {
        e->xq = xq_floats ? (void *)xq : NULL;
        e->ids = (int32_t *)ids;
        e->type_ids = (int32_t *)types;
        e->lens = (int32_t *)lens;
        e->att_lens = (int32_t *)att_lens;
        e->perm = (int32_t *)perm;
        e->sortkeys = (uint64_t *)(void *)keys;
        if (!att) e->att = NULL;
        if (!hid) e->hidden = NULL;
        if (!btv) e->logits = NULL;
        if (!nE) e->emb = NULL;
        if (!hout) e->head_in = e->head_mid = e->head_out = NULL;
        if (!htmp) e->head_tmp = NULL;
        if (!hrows) e->head_rows = NULL;
    }
    *total = at;
    return ok;
}

int sf_encoder_reserve(sf_encoder *e, int B, int T, int N, int flags, sf_error *err) { return sf_encoder_reserve_rows(e, B, T, N, flags, 0, err); }

/* The constants table of a position plugin (seen through cfg) for T tokens, grown only. */
static int grow_table(const sf_config *cfg, float **table, int *table_T, int T, sf_error *err) {
    const sf_position_plugin *p = cfg->position;
    if (T <= *table_T || !p->table_size) return SF_OK;
    size_t tn = p->table_size(cfg, T), tb;
    float *t = sf_mul_size(tn ? tn : 1, sizeof(float), &tb) && tb <= SF_MAX_ALLOC ? malloc(tb) : NULL;
    if (!t) return sf_fail(err, SF_OUT_OF_MEMORY, "out of memory for the '%s' table of %d tokens", p->name, T);
    p->table_init(t, cfg, T);
    free(*table);
    *table = t;
    *table_T = T;
    return SF_OK;
}

COLD int sf_encoder_reserve_rows(sf_encoder *e, int B, int T, int N, int flags, int rows, sf_error *err) {
    const sf_config *c = &e->cfg;
    if (B < 1 || T < 1 || N < 1 || N > (long long)B * T) return sf_fail(err, SF_BAD_ARGUMENT, "reserve: bad sizes B=%d T=%d N=%d", B, T, N);
    if ((flags & SF_OUT_HEAD) && !c->head.task) return sf_fail(err, SF_BAD_ARGUMENT, "forward: this model has no head (config.head)");
    int sparse = (flags & (SF_OUT_SPARSE | SF_SPARSE_SUM | SF_SPARSE_LOG2)) != 0;
    if (sparse && !((flags & SF_OUT_HEAD) && (flags & SF_OUT_SPARSE) && c->head.task == SF_HEAD_MLM))
        return sf_fail(err, SF_UNSUPPORTED_MODEL, "forward: sparse vectors need a masked-LM head");
    int mlm_rows = (flags & SF_OUT_HEAD) && c->head.task == SF_HEAD_MLM && !sparse;
    if (rows < 0 || !rows != !mlm_rows) return sf_fail(err, SF_BAD_ARGUMENT, "reserve: %d head rows for this head", rows);
    size_t need, bytes;
    if (!layout(e, NULL, B, T, N, flags, rows, &need) || !sf_mul_size(need, sizeof(float), &bytes) || bytes > SF_MAX_ALLOC)
        return sf_fail(err, SF_OUT_OF_MEMORY, "a batch of %d sequences of up to %d tokens needs more memory than wasm32 can address", B, T);
    if (need > e->act_floats) {
        float *a = sf_calloc_big(bytes);
        if (!a)
            return sf_fail(err, SF_OUT_OF_MEMORY, "out of memory: %d sequences of up to %d tokens need %z MB of activations", B, T,
                           (long long)(bytes >> 20));
        free(e->act_arena);
        e->act_arena = a;
        e->act_floats = need;
    }
    int rc;
    if ((rc = grow_table(&e->pos_view, &e->table, &e->table_T, T, err)) ||
        (c->bias && (rc = grow_table(&e->bias_view, &e->bias_table, &e->bias_table_T, T, err))))
        return rc;
    layout(e, e->act_arena, B, T, N, flags, rows, &need);
    memset(e->type_ids, 0, sizeof(int32_t) * (size_t)N); /* token types default to 0 */
    memset(e->att_lens, 0, sizeof(int32_t) * (size_t)B); /* every token attends to every key */
    e->res_B = B;
    e->res_T = T;
    e->res_N = N;
    e->res_flags = flags;
    e->res_rows = rows;
    e->res_threads = e->threads > 1 ? e->threads : 1;
    return SF_OK;
}

/* ------------------------------------------------------------ forward */

static int min_int(int a, int b) { return a < b ? a : b; }

/* With no position hook at all (and no windowed layer), the encoder is
 * permutation-equivariant in exact arithmetic; floating-point sums are not,
 * because their order follows the positions. So such sequences run in a
 * canonical order, sorted by (token id, type id) (equal pairs carry equal
 * vectors, so ties cannot matter), and the outputs go back to the input
 * order: permuting the input then permutes the output rows bit for bit. */
static int order_blind(const sf_config *c) {
    const sf_position_plugin *p = c->position;
    return !p->embed && !p->rotate && !p->score_bias && !c->bias && !sf_has_local(c) && !c->conv_kernel;
}

/* What the position plugin's hooks see in layer l (-1: embed) of a sequence of len tokens. */
static sf_pos_ctx pos_ctx(const sf_encoder *e, int layer, int len) {
    const sf_config *c = &e->cfg;
    return (sf_pos_ctx){.cfg = &e->pos_view, e->table, e->table_T, e->plugin_params, layer, layer >= 0 && c->local[layer], len};
}

/* The same for the relativeBias plugin: its view of the config, its tensors and table. */
static sf_pos_ctx bias_ctx(const sf_encoder *e, int layer, int len) {
    return (sf_pos_ctx){.cfg = &e->bias_view, e->bias_table, e->bias_table_T, e->bias_params, layer, layer >= 0 && e->cfg.local[layer], len};
}

/* ---- parallel regions (core/pool.h): only independent outputs are split -- */

/* Work below this many multiply-adds runs on the calling thread: a region's
 * wake-up would cost more (as MLAS's 64K MACs per thread). */
#define SF_PARALLEL_MIN_WORK 65536
/* Activations quantized below this many values run on the calling thread (0.3 ns
 * each: 7 us for a 64 x 384 chunk, too little to hand half of to another thread). */
#define SF_PARALLEL_MIN_QUANT 65536
#ifndef SF_TASKS_PER_THREAD
#define SF_TASKS_PER_THREAD 4
#endif

/* One product's output in a linear job: out (M, ldo) = a @ W^T + bias, W (N, K) packed. */
typedef struct {
    float *out;
    const float *w;
    const float *bias;
} linear_out;

/* One or two products on the same input a (xq: its quantized rows for q8 panels),
 * with the same N and ldo (k and v; up and gate): one parallel region for both. */
typedef struct {
    linear_out o[2];
    int outs;
    size_t ldo;
    const float *a;
    size_t lda;
    const void *xq;
    int M, K, N, panels; /* panels of one product */
} linear_job;

/* Columns c0 .. c1-1 (c0 on a panel) of product o: f32 panels, or q8 panels on the quantized rows xq. */
static void linear_columns(const linear_job *j, const linear_out *o, int c0, int c1) {
    if (j->xq)
        q8_matmul_forward(o->out + c0, j->ldo, j->xq, q8_panel(o->w, j->K, c0), o->bias ? o->bias + c0 : NULL, j->M, j->K, c1 - c0);
    else
        gemm_forward(o->out + c0, j->ldo, j->a, j->lda, o->w + (size_t)c0 * j->K, SF_NR, (size_t)SF_NR * j->K, o->bias ? o->bias + c0 : NULL, 0, j->M,
                     j->K, c1 - c0);
}

/* Task t of n: panels p0 .. p1-1 (column groups of SF_NR = SF_Q8_NR) of the
 * products' panels one after the other. */
static void linear_task(void *ctx, int t, int n) {
    const linear_job *j = ctx;
    int all = j->panels * j->outs, p0 = (int)((long long)all * t / n), p1 = (int)((long long)all * (t + 1) / n);
    for (int i = 0; i < j->outs; i++, p0 -= j->panels, p1 -= j->panels) {
        int a = p0 > 0 ? p0 : 0, b = p1 < j->panels ? p1 : j->panels;
        int c0 = a * SF_NR, c1 = b * SF_NR < j->N ? b * SF_NR : j->N;
        if (c0 < c1) linear_columns(j, &j->o[i], c0, c1);
    }
}

typedef struct {
    void *xq;
    const float *a;
    size_t lda;
    int M, K;
} quantize_job;

/* Task t of n: rows m0 .. m1-1 (each row is quantized on its own). */
static void quantize_task(void *ctx, int t, int n) {
    const quantize_job *j = ctx;
    int m0 = (int)((long long)j->M * t / n), m1 = (int)((long long)j->M * (t + 1) / n);
    if (m0 < m1) q8_quantize_rows((char *)j->xq + (size_t)m0 * sf_q8_act_row_bytes(j->K), j->a + (size_t)m0 * j->lda, j->lda, m1 - m0, j->K);
}

/* xq <- the rows a (M, lda) quantized for the q8 products that read them (a
 * q8 encoder; NULL otherwise): once per input, shared by the products on it;
 * the rows split between threads. */
static const void *quantize_input(sf_encoder *e, const float *a, size_t lda, int M, int K) {
    if (e->dtype != SF_DTYPE_Q8) return NULL;
    quantize_job j = {e->xq, a, lda, M, K};
    int n = sf_pool_threads() < M ? sf_pool_threads() : M;
    if (n <= 1 || (long long)M * K < SF_PARALLEL_MIN_QUANT)
        quantize_task(&j, 0, 1);
    else
        sf_parallel(quantize_task, &j, n);
    return e->xq;
}

/* out (M, ldo) = a (M, lda) @ W^T + bias, W (N, K) packed (f32, or q8 with xq
 * the quantized a), and out2 = a @ W2^T + bias2 the same way when w2 is given:
 * the columns of both split between threads in one region. */
static void linear2_forward(float *out, float *out2, size_t ldo, const float *a, size_t lda, const void *xq, const float *w, const float *bias,
                            const float *w2, const float *bias2, int M, int K, int N) {
    linear_job j = {{{out, w, bias}, {out2, w2, bias2}}, w2 ? 2 : 1, ldo, a, lda, xq, M, K, N, (N + SF_NR - 1) / SF_NR};
    int n = sf_pool_threads() * SF_TASKS_PER_THREAD;
    if (n > j.panels * j.outs) n = j.panels * j.outs;
    if (n <= 1 || (long long)M * K * N * j.outs < SF_PARALLEL_MIN_WORK)
        linear_task(&j, 0, 1);
    else
        sf_parallel(linear_task, &j, n);
}

static void linear_forward(float *out, size_t ldo, const float *a, size_t lda, const void *xq, const float *w, const float *bias, int M, int K,
                           int N) {
    linear2_forward(out, NULL, ldo, a, lda, xq, w, bias, NULL, NULL, M, K, N);
}

typedef struct {
    float *o;
    const float *q, *kv;
    float *scratch;
    size_t scratch_floats;
    float *att;
    size_t ldatt;
    const int32_t *perm;
    const sf_attn *spec;
    int i0, R, T;
} attention_job;

/* Task t of n: heads h0 .. h1-1, with its own scratch. */
static void attention_task(void *ctx, int t, int n) {
    const attention_job *j = ctx;
    int H = j->spec->heads, h0 = H * t / n, h1 = H * (t + 1) / n;
    if (h0 < h1)
        attention_forward(j->o, j->q, j->kv, j->scratch + (size_t)t * j->scratch_floats, j->att, j->ldatt, j->perm, j->spec, h0, h1, j->i0, j->R,
                          j->T);
}

typedef struct {
    float *h;
    const float *g;
    int activation;
    size_t n;
} activation_job;

static void activation_task(void *ctx, int t, int n) {
    const activation_job *j = ctx;
    size_t a = j->n * (size_t)t / (size_t)n & ~(size_t)3, b = t + 1 == n ? j->n : j->n * (size_t)(t + 1) / (size_t)n & ~(size_t)3;
    if (a < b) activation_forward(j->h + a, j->g ? j->g + a : NULL, j->activation, b - a);
}

/* h (n) = act(h) or act(g) * h, elementwise: ranges split between threads. */
static void activation_parallel(float *h, const float *g, int activation, size_t n) {
    int threads = sf_pool_threads();
    if (threads <= 1 || n < 4096) {
        activation_forward(h, g, activation, n);
        return;
    }
    activation_job j = {h, g, activation, n};
    sf_parallel(activation_task, &j, threads);
}

/* The plugins' score_bias as the attention kernel's bias callback: position's, then relativeBias's,
 * each with this thread's scratch. */
typedef struct {
    sf_pos_ctx pos, bias;
} score_biases;
static void plugin_bias(float *s, size_t ld, const void *ctx, float *scratch, int h, int i0, int ni, int j0, int nj) {
    const score_biases *p = ctx;
    sf_pos_ctx x = p->pos;
    x.scratch = scratch;
    if (x.cfg->position->score_bias) x.cfg->position->score_bias(s, ld, &x, h, i0, ni, j0, nj);
    if (!p->bias.cfg) return;
    x = p->bias;
    x.scratch = scratch;
    x.cfg->position->score_bias(s, ld, &x, h, i0, ni, j0, nj);
}

/* What a content-reading score_bias sees in layer l: the queries in e->q (the chunk's, row 0 the chunk's
 * first), the sequence's kv rows, the layer's disentangled tables. */
static void content_ctx(const sf_encoder *e, sf_pos_ctx *ctx, const float *kv, int l) {
    ctx->q = e->q;
    ctx->kv = kv;
    ctx->ldq = (size_t)sf_attn_width(&e->cfg);
    ctx->rel = e->rel ? e->rel + (size_t)l * e->rel_layer : NULL;
}

/* The disentangled scheme's tables of every layer (core/config.h), in e->rel:
 * the relative table (normed by embed.rel_norm with normTable) projected by
 * the layer's key and query projections (attn.k / attn.q with shareKey, else
 * attn.pos_k / attn.pos_q; biases included), as DisentangledSelfAttention
 * projects rel_embeddings, stored transposed per head for the tiles' products;
 * PQ scaled by attnScale, which the queries get in attention and the keys do
 * not. Chunks of at most `rows` table rows (the reserved e->xn, e->q). */
static void rel_project(sf_encoder *e, const sf_disentangled_opts *o, int rows) {
    const sf_config *c = &e->cfg;
    int C = c->d_model, A = sf_attn_width(c), R = o->rows;
    const float *table = c->position == &sf_position_disentangled ? e->plugin_params[0] : e->bias_params[0]; /* (R, C) */
    for (int l = 0; l < c->layers; l++) {
        const sf_layer *p = &e->layers[l];
        for (int r0 = 0; r0 < R; r0 += rows) {
            int M = min_int(rows, R - r0);
            const float *a = table + (size_t)r0 * C;
            if (o->norm_table) {
                c->norm->forward(e->xn, a, e->rel_norm_w, e->rel_norm_b, (float)c->eps, M, C);
                a = e->xn;
            }
            float *dst = e->rel + (size_t)l * e->rel_layer;
            for (int term = 0; term < 2; term++) {
                int key = term == 0;
                if (!(key ? o->c2p : o->p2c)) continue;
                const float *w = key ? (o->share_key ? p->wk : p->pos_k_w) : (o->share_key ? p->wq : p->pos_q_w);
                const float *b = key ? (o->share_key ? p->bk : p->pos_k_b) : (o->share_key ? p->bq : p->pos_q_b);
                float s = key ? 1.0f : (float)c->attn_scale;
                sf_encoder_linear(e, e->q, (size_t)A, a, (size_t)C, w, b, M, C, A); /* (M, A) */
                for (int m = 0; m < M; m++)
                    for (int k = 0; k < A; k++) dst[(size_t)k * R + r0 + m] = e->q[(size_t)m * A + k] * s; /* (A, R) */
                dst += (size_t)A * R;
            }
        }
    }
    e->rel_ready = 1;
}

/* x = N(x + act(conv(x0))) after layer 0 (DeBERTa-v2's ConvLayer, x0 the
 * embeddings): conv.weight [C, C k] is Conv1d's [C, C, k] (groups 1), packed
 * as a Linear weight (f32, also in q8 encoders): tap kk's [C, C] matrix is
 * every k-th row of each panel, so each tap is one product of x0's rows
 * shifted by kk - pad, accumulated; rows past a sequence's ends are zeros
 * (HF zeroes the padded embeddings: the same), i.e. left out. */
static void conv_block(sf_encoder *e, int B) {
    const sf_config *c = &e->cfg;
    int C = c->d_model, k = c->conv_kernel, pad = (k - 1) / 2;
    for (int b = 0, off = 0; b < B; off += e->lens[b++]) {
        int L = e->lens[b];
        for (int t0 = 0; t0 < L; t0 += SF_CHUNK) {
            int M = min_int(SF_CHUNK, L - t0);
            for (int m = 0; m < M; m++) memcpy(e->o + (size_t)m * C, e->conv_b, sizeof(float) * (size_t)C);
            for (int kk = 0; kk < k; kk++) { /* out row m += W_kk x0[t0 + m + kk - pad] where that is in the sequence */
                int lo = pad - kk - t0 > 0 ? pad - kk - t0 : 0, hi = min_int(M, L + pad - kk - t0);
                if (lo < hi)
                    gemm_forward(e->o + (size_t)lo * C, (size_t)C, e->x0 + (size_t)(off + t0 + lo + kk - pad) * C, (size_t)C,
                                 e->conv_w + (size_t)kk * SF_NR, (size_t)k * SF_NR, (size_t)SF_NR * C * k, NULL, 1, hi - lo, C, C);
            }
            if (c->conv_act == SF_HEAD_ACT_TANH)
                sf_tanh_forward(e->o, (size_t)M * C);
            else if (c->conv_act != SF_HEAD_ACT_IDENTITY)
                activation_forward(e->o, NULL, c->conv_act, (size_t)M * C);
            float *x = e->x + (size_t)(off + t0) * C;
            residual_forward(x, e->o, (size_t)M * C);
            c->norm->forward(x, x, e->conv_norm_w, e->conv_norm_b, (float)c->eps, M, C);
        }
    }
}

/* x (N, C) = tokens[ids] (x sqrt(C)) + types[type_ids] + the position plugin's
 * vectors, then the embedding norm; with embedDim E != C these are E wide (in
 * e->emb) and embed.proj maps them to C (ALBERT's embedding_hidden_mapping_in,
 * ELECTRA's and RoFormer's embeddings_project), after the norm, or before it
 * with embedNormAfterProj (DeBERTa-v2's embed_proj, the norm then C wide). */
static void embed_block(sf_encoder *e, int B, int N) {
    const sf_config *c = &e->cfg;
    int C = c->d_model, E = c->embed_dim;
    float *x = e->emb ? e->emb : e->x; /* (N, E) */
    float scale = c->scale_embedding ? sqrtf((float)C) : 1.0f;
    if (e->dtype == SF_DTYPE_Q8) /* rows: a float scale, then the int8 values */
        for (int n = 0; n < N; n++) {
            const float *row = e->tokens + (size_t)e->ids[n] * sf_q8_row_floats(E);
            const signed char *q = (const signed char *)(row + 1);
            float *xr = x + (size_t)n * E;
            for (int k = 0; k < E; k++) xr[k] = row[0] * (float)q[k] * scale;
        }
    else
        embed_forward(x, e->ids, e->tokens, scale, N, E);
    if (e->types) embed_add_forward(x, e->type_ids, e->types, N, E);
    if (c->position->embed)
        for (int b = 0, off = 0; b < B; off += e->lens[b++]) {
            sf_pos_ctx ctx = pos_ctx(e, -1, e->lens[b]);
            c->position->embed(x + (size_t)off * E, &ctx, e->lens[b]);
        }
    if (c->embed_norm && !c->embed_norm_after_proj) c->norm->forward(x, x, e->embed_norm_w, e->embed_norm_b, (float)c->eps, N, E);
    if (e->emb)
        for (int r = 0; r < N; r += SF_CHUNK)
            sf_encoder_linear(e, e->x + (size_t)r * C, (size_t)C, x + (size_t)r * E, (size_t)E, e->embed_proj_w, e->embed_proj_b,
                              min_int(SF_CHUNK, N - r), E, C);
    if (c->embed_norm_after_proj) c->norm->forward(e->x, e->x, e->embed_norm_w, e->embed_norm_b, (float)c->eps, N, C);
}

/* The attention sub-layer's input: N1(x) in xn, or x itself (post-norm, or
 * a pre-norm layer without an attention norm). */
static const float *attn_input(const sf_encoder *e, const sf_layer *p, const float *x, int M) {
    const sf_config *c = &e->cfg;
    if (!c->pre_norm || !p->norm1_w) return x;
    c->norm->forward(e->xn, x, p->norm1_w, p->norm1_b, (float)c->eps, M, c->d_model);
    return e->xn;
}

/* x = x + Attn(N1(x)) (pre) or x = N1(x + Attn(x)) (post), for all sequences
 * of layer l. k and v are made for every token first; then each sequence, a
 * chunk of query rows at a time: q, attention over its keys, o projection,
 * residual. Only k and v are kept whole, so memory is O(T) beyond x. */
static void attention_block(sf_encoder *e, int l, int B, int N, int T, float *att /* (B, H, T, T) or NULL */) {
    const sf_config *c = &e->cfg;
    const sf_layer *p = &e->layers[l];
    const sf_position_plugin *pos = c->position;
    int C = c->d_model, A = sf_attn_width(c), K = sf_kv_width(c);
    size_t K2 = 2 * (size_t)K;
    /* k, v of every token: kv (N, 2K), K = kvHeads x headDim (grouped-query attention: fewer, shared heads) */
    for (int r = 0; r < N; r += SF_CHUNK) {
        int M = min_int(SF_CHUNK, N - r);
        const float *a = attn_input(e, p, e->x + (size_t)r * C, M); /* (M, C) */
        const void *aq = quantize_input(e, a, C, M, C);
        linear2_forward(e->kv + (size_t)r * K2, e->kv + (size_t)r * K2 + K, K2, a, C, aq, p->wk, p->bk, p->wv, p->bv, M, C, K); /* k | v */
        if (c->qk_norm) /* each kv head's key, (kvHeads, D) per row */
            for (int t = 0; t < M; t++) {
                float *k = e->kv + (size_t)(r + t) * K2;
                c->qk_norm->forward(k, k, p->k_norm_w, p->k_norm_b, (float)c->eps, c->kv_heads, sf_head_dim(c));
            }
    }
    for (int b = 0, off = 0; b < B; off += e->lens[b++]) {
        int L = e->lens[b], nk = e->att_lens[b] ? e->att_lens[b] : L; /* queries: every token; keys: the first nk */
        sf_pos_ctx ctx = pos_ctx(e, l, L), kctx = ctx;
        kctx.cfg = &e->kv_view; /* the keys' rows hold kvHeads heads */
        score_biases sb = {ctx, c->bias ? bias_ctx(e, l, L) : (sf_pos_ctx){0}};
        sf_attn spec = {.heads = c->heads,
                        .head_dim = sf_head_dim(c),
                        .ld = (size_t)A,
                        .window = c->local[l] ? c->local_window : 0,
                        .bias = pos->score_bias || c->bias ? plugin_bias : NULL,
                        .bias_ctx = &sb,
                        .kv_ld = K2,
                        .group = c->heads / c->kv_heads};
        float *kv = e->kv + (size_t)off * K2; /* (L, 2K) */
        content_ctx(e, &sb.pos, kv, l);
        if (c->bias) content_ctx(e, &sb.bias, kv, l);
        if (pos->rotate) pos->rotate(kv, K2, &kctx, 0, L);
        const int32_t *perm = order_blind(c) ? e->perm + off : NULL;
        float *ab = att ? att + (size_t)b * c->heads * T * T : NULL;
        for (int i0 = 0; i0 < L; i0 += SF_CHUNK) {
            int M = min_int(SF_CHUNK, L - i0);
            float *x = e->x + (size_t)(off + i0) * C; /* (M, C) */
            const float *a = attn_input(e, p, x, M);
            linear_forward(e->q, A, a, C, quantize_input(e, a, C, M, C), p->wq, p->bq, M, C, A);                                    /* (M, A) */
            if (c->qk_norm) c->qk_norm->forward(e->q, e->q, p->q_norm_w, p->q_norm_b, (float)c->eps, M * c->heads, sf_head_dim(c)); /* (M H, D) */
            if (pos->rotate) pos->rotate(e->q, A, &ctx, i0, M);
            scale_forward(e->q, (float)c->attn_scale, (size_t)M * A);
            attention_job aj = {e->ao, e->q, kv, e->att_scratch, e->att_stride, ab, (size_t)T, perm, &spec, i0, M, nk};
            int nt = sf_pool_threads() < c->heads ? sf_pool_threads() : c->heads;
            if ((long long)M * nk * A < SF_PARALLEL_MIN_WORK) nt = 1;
            sf_parallel(attention_task, &aj, nt);                                                        /* heads split between threads */
            linear_forward(e->o, C, e->ao, A, quantize_input(e, e->ao, A, M, A), p->wo, p->bo, M, A, C); /* (M, C) */
            residual_scaled_forward(x, e->o, (float)c->residual_scale, (size_t)M * C);
            if (!c->pre_norm) c->norm->forward(x, x, p->norm1_w, p->norm1_b, (float)c->eps, M, C);
        }
    }
}

/* x = x + FFN(N2(x)) (pre) or x = N2(x + FFN(x)) (post). */
static void ffn_block(sf_encoder *e, const sf_layer *p, int N) {
    const sf_config *c = &e->cfg;
    int C = c->d_model, F = c->ff_dim;
    float eps = (float)c->eps;
    for (int r = 0; r < N; r += SF_CHUNK) {
        int M = min_int(SF_CHUNK, N - r);
        float *x = e->x + (size_t)r * C; /* (M, C) */
        const float *a = x;
        if (c->pre_norm) {
            c->norm->forward(e->xn, x, p->norm2_w, p->norm2_b, eps, M, C);
            a = e->xn;
        }
        const void *aq = quantize_input(e, a, C, M, C);
        linear2_forward(e->h, e->g, F, a, C, aq, p->up_w, p->up_b, p->gate_w, p->gate_b, M, C, F); /* up (M, F), gate (M, F) if any */
        activation_parallel(e->h, e->g, c->activation, (size_t)M * F);
        linear_forward(e->o, C, e->h, F, quantize_input(e, e->h, F, M, F), p->down_w, p->down_b, M, F, C); /* (M, C) */
        residual_scaled_forward(x, e->o, (float)c->residual_scale, (size_t)M * C);
        if (!c->pre_norm) c->norm->forward(x, x, p->norm2_w, p->norm2_b, eps, M, C);
    }
}

/* Checks the inputs in e->ids / e->type_ids / e->lens before anything runs. */
static int check_inputs(const sf_encoder *e, int B, int flags, int *N_out, int *T_out, sf_error *err) {
    const sf_config *c = &e->cfg;
    if (B < 1 || B > e->res_B || (flags & ~e->res_flags))
        return sf_fail(err, SF_BAD_ARGUMENT, "forward: batch of %d does not match the reserved %d", B, e->res_B);
    const char *who;
    int limit = sf_config_max_len(c, &who);
    long long N = 0;
    int T = 0;
    for (int b = 0; b < B; b++) {
        int L = e->lens[b];
        if (L < 1) return sf_fail(err, SF_BAD_ARGUMENT, "ids[%d] is empty: a sequence needs at least one token", b);
        if (L > limit)
            return sf_fail(err, SF_SEQUENCE_TOO_LONG, "ids[%d] has %d tokens; position '%s' encodes at most %d (maxLen)", b, L, who, limit);
        if (L > e->res_T || (N += L) > e->res_N) return sf_fail(err, SF_BAD_ARGUMENT, "forward: sequence lengths exceed the reservation");
        T = L > T ? L : T;
    }
    for (int b = 0; b < B; b++) { /* keys left out: not where a query may see none (windows) or rows are reordered */
        int K = e->att_lens[b];
        if (K < 0 || K > e->lens[b] || (K && K < e->lens[b] && (order_blind(c) || sf_has_local(c))))
            return sf_fail(err, SF_BAD_ARGUMENT, "attentionLengths[%d] = %d: not in [1, %d], or this model attends to all", b, K, e->lens[b]);
    }
    int TV = c->type_vocab_size ? c->type_vocab_size : 1; /* without token types, every type id must be 0 */
    for (int b = 0, off = 0; b < B; off += e->lens[b++])
        for (int t = 0; t < e->lens[b]; t++) {
            int id = e->ids[off + t], ty = e->type_ids[off + t];
            if (id < 0 || id >= c->vocab_size)
                return sf_fail(err, SF_BAD_TOKEN, "ids[%d][%d] = %d is out of range [0, %d) (vocabSize)", b, t, id, c->vocab_size);
            if (ty < 0 || ty >= TV) return sf_fail(err, SF_BAD_TOKEN, "typeIds[%d][%d] = %d is out of range [0, %d) (typeVocabSize)", b, t, ty, TV);
        }
    *N_out = (int)N;
    *T_out = T;
    return SF_OK;
}

static void heapsort_u64(uint64_t *a, size_t n) {
    for (size_t k = n; k-- > 0;) { /* heapify, then pop */
        for (size_t i = k, c; (c = 2 * i + 1) < n; i = c) {
            if (c + 1 < n && a[c + 1] > a[c]) c++;
            if (a[i] >= a[c]) break;
            uint64_t t = a[i];
            a[i] = a[c];
            a[c] = t;
        }
    }
    for (size_t end = n; end-- > 1;) {
        uint64_t t = a[0];
        a[0] = a[end];
        a[end] = t;
        for (size_t i = 0, c; (c = 2 * i + 1) < end; i = c) {
            if (c + 1 < end && a[c + 1] > a[c]) c++;
            if (a[i] >= a[c]) break;
            t = a[i];
            a[i] = a[c];
            a[c] = t;
        }
    }
}

/* ids, type ids of a sequence (L) -> sorted by (id, type, position); perm[t'] =
 * input position of row t'. ids < 2^24 and types < 2^8 share the high word. */
static void canonical_order(int32_t *ids, int32_t *types, int32_t *perm, uint64_t *keys, int L) {
    for (int t = 0; t < L; t++) keys[t] = (uint64_t)((uint32_t)ids[t] << 8 | (uint32_t)types[t]) << 32 | (uint32_t)t;
    heapsort_u64(keys, (size_t)L);
    for (int t = 0; t < L; t++) {
        ids[t] = (int32_t)(keys[t] >> 40);
        types[t] = (int32_t)(keys[t] >> 32 & 0xff);
        perm[t] = (int32_t)(keys[t] & 0xffffffffu);
    }
}

/* dst (B, T, C) <- the packed rows of x, in input order; padding rows zero. */
__attribute__((noinline)) static void scatter_rows(const sf_encoder *e, float *dst, int B, int T) {
    size_t C = (size_t)e->cfg.d_model;
    int blind = order_blind(&e->cfg);
    for (int b = 0, off = 0; b < B; off += e->lens[b++]) {
        float *db = dst + (size_t)b * T * C;
        size_t L = (size_t)e->lens[b];
        if (blind)
            for (size_t t = 0; t < L; t++) memcpy(db + (size_t)e->perm[off + t] * C, e->x + (off + t) * C, sizeof(float) * C);
        else
            memcpy(db, e->x + (size_t)off * C, sizeof(float) * L * C);
        memset(db + L * C, 0, sizeof(float) * (size_t)(T - L) * C);
    }
}

/* Index of the first NaN or +-Inf among x[0..n), or n: the exponent bits all
 * ones, tested four at a time as integers. */
static size_t first_non_finite_f32(const float *x, size_t n) {
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        v4i bits = (v4i)v4_load(x + i) & 0x7F800000;
        v4i inf = bits == 0x7F800000;
        if (inf[0] | inf[1] | inf[2] | inf[3]) break;
    }
    for (; i < n; i++) {
        uint32_t b;
        memcpy(&b, x + i, 4);
        if ((b & 0x7F800000u) == 0x7F800000u) return i;
    }
    return n;
}

/* After each stage, one pass over the residual stream (N, C): a NaN or an
 * Infinity is reported with the stage and the token, never returned. */
__attribute__((noinline)) static int check_finite(const sf_encoder *e, int B, int N, int layer, const char *stage, sf_error *err) {
    size_t C = (size_t)e->cfg.d_model, k = first_non_finite_f32(e->x, (size_t)N * C);
    if (k == (size_t)N * C) return SF_OK;
    int row = (int)(k / C), b = 0, off = 0;
    while (b < B - 1 && row >= off + e->lens[b]) off += e->lens[b++];
    int t = order_blind(&e->cfg) ? e->perm[row] : row - off;
    if (layer < 0)
        return sf_fail(err, SF_NON_FINITE, "forward: the %s produced a non-finite value at ids[%d][%d] (the weights or activations overflow float32)",
                       stage, b, t);
    return sf_fail(err, SF_NON_FINITE,
                   "forward: layer %d %s produced a non-finite value at ids[%d][%d] (the weights or activations overflow float32)", layer, stage, b,
                   t);
}

int sf_encoder_forward(sf_encoder *e, int B, int flags, sf_error *err) {
    const sf_config *c = &e->cfg;
    int N, T, rc = check_inputs(e, B, flags, &N, &T, err);
    if (rc) return rc;
    if (e->threads > e->res_threads) return sf_fail(err, SF_BAD_ARGUMENT, "forward: %d threads, reserved for %d", e->threads, e->res_threads);
    sf_pool_use(e->threads); /* the regions below use at most this encoder's threads */
    int C = c->d_model;
    size_t hid_layer = (size_t)B * T * C; /* (B, T, C), inside the reservation */
    float *att = flags & SF_OUT_ATTENTIONS ? e->att : NULL, *hidden = flags & SF_OUT_HIDDEN ? e->hidden : NULL;
    size_t att_layer = att ? (size_t)B * c->heads * T * T : 0; /* (B, H, T, T) */
    if (att) memset(att, 0, sizeof(float) * att_layer * (size_t)(c->layers ? c->layers : 1));

    if (order_blind(c))
        for (int b = 0, off = 0; b < B; off += e->lens[b++]) canonical_order(e->ids + off, e->type_ids + off, e->perm + off, e->sortkeys, e->lens[b]);

    const sf_disentangled_opts *dis = sf_disentangled(c);
    if (dis && !e->rel_ready) rel_project(e, dis, N < SF_CHUNK ? N : SF_CHUNK); /* once after the weights change */
    embed_block(e, B, N);
    if ((rc = check_finite(e, B, N, -1, "embeddings", err))) return rc;
    if (hidden) scatter_rows(e, hidden, B, T);
    if (c->conv_kernel) memcpy(e->x0, e->x, sizeof(float) * (size_t)N * C);
    for (int l = 0; l < c->layers; l++) {
        if (!e->skip[l]) { /* skipped: the stream passes through unchanged */
            attention_block(e, l, B, N, T, att ? att + (size_t)l * att_layer : NULL);
            if ((rc = check_finite(e, B, N, l, "attention", err))) return rc;
            ffn_block(e, &e->layers[l], N);
            if ((rc = check_finite(e, B, N, l, "feed-forward", err))) return rc;
        }
        if (l == 0 && c->conv_kernel) { /* the encoder's, after layer 0 (HF: the hidden state after layer 0 includes it) */
            conv_block(e, B);
            if ((rc = check_finite(e, B, N, l, "convolution", err))) return rc;
        }
        if (hidden) scatter_rows(e, hidden + (size_t)(l + 1) * hid_layer, B, T);
    }
    if (c->final_norm) {
        c->norm->forward(e->x, e->x, e->final_w, e->final_b, (float)c->eps, N, C);
        if ((rc = check_finite(e, B, N, -1, "final norm", err))) return rc;
    }
    scatter_rows(e, e->out, B, T);
    if (c->output_head) { /* logits (B, T, V) = out @ head^T + bias, real rows only */
        size_t V = (size_t)c->vocab_size;
        memset(e->logits, 0, sizeof(float) * (size_t)B * T * V);
        for (int b = 0; b < B; b++)
            for (int t = 0; t < e->lens[b]; t += SF_CHUNK) {
                const float *a = e->out + ((size_t)b * T + t) * C;
                int M = min_int(SF_CHUNK, e->lens[b] - t);
                linear_forward(e->logits + ((size_t)b * T + t) * V, V, a, C, quantize_input(e, a, C, M, C), e->head_w, e->head_b, M, C, (int)V);
            }
        size_t k = first_non_finite_f32(e->logits, (size_t)B * T * V);
        if (k < (size_t)B * T * V)
            return sf_fail(err, SF_NON_FINITE, "forward: the output head produced a non-finite logit at ids[%d][%d] (the weights overflow float32)",
                           (int)(k / V / (size_t)T), (int)(k / V % (size_t)T));
    }
    if (flags & SF_OUT_HEAD) return sf_head_forward(e, B, T, flags, err); /* config.head's logits (core/heads.c) */
    return SF_OK;
}

__attribute__((noinline)) void sf_encoder_linear(sf_encoder *e, float *out, size_t ldo, const float *a, size_t lda, const float *w, const float *bias,
                                                 int M, int K, int N) {
    linear_forward(out, ldo, a, lda, quantize_input(e, a, lda, M, K), w, bias, M, K, N);
}

/* ------------------------------------------------------------ probes */

/* The probes check the length before reserving anything. */
static int check_probe_length(const sf_config *c, int T, sf_error *err) {
    const char *who;
    int limit = sf_config_max_len(c, &who);
    if (T < 1) return sf_fail(err, SF_BAD_ARGUMENT, "length must be a positive integer, got %d", T);
    if (T > limit) return sf_fail(err, SF_SEQUENCE_TOO_LONG, "length %d: position '%s' encodes at most %d (maxLen)", T, who, limit);
    return SF_OK;
}

COLD int sf_encoder_position_vectors(sf_encoder *e, int T, sf_error *err) {
    const sf_config *c = &e->cfg;
    int rc;
    if ((rc = check_probe_length(c, T, err)) || (rc = sf_encoder_reserve(e, 1, T, T, 0, err))) return rc;
    memset(e->out, 0, sizeof(float) * (size_t)T * c->embed_dim); /* (T, E): out holds max(C, E) a row */
    sf_pos_ctx ctx = pos_ctx(e, -1, T);
    if (c->position->embed) c->position->embed(e->out, &ctx, T);
    return SF_OK;
}

COLD int sf_encoder_position_scores(sf_encoder *e, const float *q, const float *k, int T, sf_error *err) {
    const sf_config *c = &e->cfg;
    int rc;
    if ((rc = check_probe_length(c, T, err)) || (rc = sf_encoder_reserve(e, 1, T, T, SF_OUT_ATTENTIONS, err))) return rc;
    size_t A = (size_t)sf_attn_width(c), A2 = 2 * A;
    int H = c->heads, D = sf_head_dim(c);
    /* the same k (columns 0..A-1) and q (columns A..2A-1) at every position of kv (T, 2A) */
    for (int t = 0; t < T; t++) {
        memcpy(e->kv + (size_t)t * A2, k, sizeof(float) * A);
        memcpy(e->kv + (size_t)t * A2 + A, q, sizeof(float) * A);
    }
    const sf_disentangled_opts *dis = sf_disentangled(c);
    if (dis && !e->rel_ready) rel_project(e, dis, T < SF_CHUNK ? T : SF_CHUNK);
    score_biases sb = {pos_ctx(e, 0, T), c->bias ? bias_ctx(e, 0, T) : (sf_pos_ctx){0}};
    content_ctx(e, &sb.pos, e->kv, 0); /* the keys at columns 0..A-1 of kv; the query of row i in e->q */
    if (c->bias) content_ctx(e, &sb.bias, e->kv, 0);
    if (c->position->rotate) {
        c->position->rotate(e->kv, A2, &sb.pos, 0, T);
        c->position->rotate(e->kv + A, A2, &sb.pos, 0, T);
    }
    float scale = (float)c->attn_scale, *scratch = e->att_scratch + sf_attention_scratch(SF_CHUNK, D);
    for (int i = 0; i < T; i++) {
        for (size_t k = 0; k < A; k++) e->q[k] = e->kv[(size_t)i * A2 + A + k] * scale; /* as attention scales it */
        for (int h = 0; h < H; h++) {
            float *row = e->att + ((size_t)h * T + i) * T; /* (T) */
            const float *qi = e->kv + (size_t)i * A2 + A + (size_t)h * D;
            for (int j = 0; j < T; j++) {
                const float *kj = e->kv + (size_t)j * A2 + (size_t)h * D;
                float dot = 0;
                for (int d = 0; d < D; d++) dot += qi[d] * kj[d];
                row[j] = dot * scale;
            }
            if (c->position->score_bias || c->bias)
                for (int j0 = 0; j0 < T; j0 += SF_ATT_BK) plugin_bias(row + j0, 1, &sb, scratch, h, i, 1, j0, min_int(SF_ATT_BK, T - j0));
        }
    }
    return SF_OK;
}
