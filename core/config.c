#include "config.h"

#include <math.h>
#include <string.h>

static const char *const activation_names[] = {"gelu", "gelu_tanh", "relu", "swiglu", "geglu", "silu", "geglu_tanh", NULL};
#define ACTIVATIONS "gelu, gelu_tanh, relu, silu, swiglu, geglu, geglu_tanh"
static const char *const placement_names[] = {"post", "pre", NULL};

static const char *const config_keys[] = {
    "vocabSize",    "dModel",
    "heads",        "layers",
    "ffDim",        "maxLen",
    "position",     "positionOptions",
    "norm",         "normPlacement",
    "finalNorm",    "eps",
    "activation",   "scaleEmbedding",
    "outputHead",   "headDim",
    "attnScale",    "typeVocabSize",
    "embedNorm",    "firstAttnNorm",
    "localWindow",  "localLayers",
    "qkNorm",       "residualScale",
    "relativeBias", "relativeBiasOptions",
    "head",         "conv",
    "kvHeads",      "embedDim",
    "layerGroups",  "embedNormAfterProj",
    NULL,
};
_Static_assert(sizeof config_keys / sizeof *config_keys <= 33, "parse_root's bitmask of seen keys has 32 bits");

static const char *const head_tasks[] = {"none", "sequence", "token", "mlm", "qa", "colbert", NULL}; /* SF_HEAD_* */
static const char *const head_poolings[] = {"cls", "mean", "late", NULL};                            /* SF_HEAD_POOL_* */
static const char *const head_activation_names[] = {"identity", "tanh", "relu", "gelu", "gelu_tanh", "silu", NULL};
static const int head_activations[] = {SF_HEAD_ACT_IDENTITY, SF_HEAD_ACT_TANH, SF_ACT_RELU, SF_ACT_GELU, SF_ACT_GELU_TANH, SF_ACT_SILU};

void sf_config_bias_view(const sf_config *c, sf_config *view) {
    *view = *c;
    view->position = c->bias;
    view->position_options = c->bias_options;
    view->bias = NULL;
}

void sf_config_position_view(const sf_config *c, sf_config *view) {
    *view = *c;
    view->d_model = c->embed_dim;
}

int sf_config_max_len(const sf_config *c, const char **who) {
    int limit = c->position->max_len ? c->position->max_len(c) : 0x7fffffff;
    *who = c->position->name;
    if (c->bias && c->bias->max_len) {
        sf_config view;
        sf_config_bias_view(c, &view);
        int b = c->bias->max_len(&view);
        if (b < limit) limit = b, *who = c->bias->name;
    }
    return limit;
}

/* An integer member; required when def < 0. */
static int get_int(const sf_json *j, int obj, const char *key, int def, int lo, int hi, int *out, sf_error *err) {
    int m = sf_json_member(j, obj, key);
    if (m < 0) {
        if (def < 0) return sf_fail(err, SF_BAD_CONFIG, "config.%s is required (an integer in [%d, %d])", key, lo, hi);
        *out = def;
        return SF_OK;
    }
    if (!sf_json_is_int(j, m, lo, hi)) {
        const sf_jnode *n = &j->nodes[m];
        if (n->type == SF_JNUMBER) return sf_fail(err, SF_BAD_CONFIG, "config.%s must be an integer in [%d, %d], got %g", key, lo, hi, n->num);
        return sf_fail(err, SF_BAD_CONFIG, "config.%s must be an integer in [%d, %d], got %s", key, lo, hi, sf_json_type_name(n->type));
    }
    *out = (int)j->nodes[m].num;
    return SF_OK;
}

static int get_bool(const sf_json *j, int obj, const char *key, int def, int *out, sf_error *err) {
    int m = sf_json_member(j, obj, key);
    if (m < 0) {
        *out = def;
        return SF_OK;
    }
    int t = j->nodes[m].type;
    if (t != SF_JTRUE && t != SF_JFALSE) return sf_fail(err, SF_BAD_CONFIG, "config.%s must be true or false, got %s", key, sf_json_type_name(t));
    *out = t == SF_JTRUE;
    return SF_OK;
}

/* A required string member, copied into out. */
static int get_name(const sf_json *j, int obj, const char *key, char *out, size_t cap, const char *choices, sf_error *err) {
    int m = sf_json_member(j, obj, key);
    if (m < 0) return sf_fail(err, SF_BAD_CONFIG, "config.%s is required (%s)", key, choices);
    if (j->nodes[m].type != SF_JSTRING)
        return sf_fail(err, SF_BAD_CONFIG, "config.%s must be a string (%s), got %s", key, choices, sf_json_type_name(j->nodes[m].type));
    if (sf_json_string(j, m, out, cap) < 0) return sf_fail(err, SF_BAD_CONFIG, "config.%s: unknown name (%s)", key, choices);
    return SF_OK;
}

/* "a, b, c" from a registry, for messages. */
static void list_names(char *out, size_t cap, int is_norm) {
    size_t n = 0;
    int count = is_norm ? sf_norm_count() : sf_position_count();
    out[0] = 0;
    for (int i = 0; i < count; i++) {
        const char *s = is_norm ? sf_norm_at(i)->name : sf_position_at(i)->name;
        size_t l = strlen(s);
        if (n + l + 3 >= cap) break;
        if (i) {
            memcpy(out + n, ", ", 2);
            n += 2;
        }
        memcpy(out + n, s, l);
        n += l;
        out[n] = 0;
    }
}

/* A positive number member (absent: *given = 0). */
static int get_positive(const sf_json *j, const char *key, double hi, double *out, int *given, sf_error *err) {
    int m = sf_json_member(j, 0, key);
    *given = m >= 0;
    if (m < 0) return SF_OK;
    const sf_jnode *n = &j->nodes[m];
    if (n->type != SF_JNUMBER) return sf_fail(err, SF_BAD_CONFIG, "config.%s must be a number, got %s", key, sf_json_type_name(n->type));
    if (!(n->num > 0 && n->num <= hi)) return sf_fail(err, SF_BAD_CONFIG, "config.%s must be in (0, %g], got %g", key, hi, n->num);
    *out = n->num;
    return SF_OK;
}

/* heads x headDim (the attention width), the score scale, and which layers
 * attend within a window (localLayers, localWindow). */
static int parse_attention(sf_config *c, const sf_json *j, sf_error *err) {
    int rc;
    c->head_dim_given = sf_json_member(j, 0, "headDim") >= 0;
    if (!c->head_dim_given && c->d_model % c->heads)
        return sf_fail(err, SF_BAD_CONFIG, "config.dModel (%d) must be divisible by config.heads (%d), or config.headDim given", c->d_model,
                       c->heads);
    if ((rc = get_int(j, 0, "headDim", c->d_model / c->heads, 1, SF_MAX_DIM, &c->head_dim, err))) return rc;
    if ((long long)c->heads * c->head_dim > SF_MAX_DIM)
        return sf_fail(err, SF_BAD_CONFIG, "config.heads x config.headDim (%z) must be at most %d", (long long)c->heads * c->head_dim, SF_MAX_DIM);
    if ((rc = get_int(j, 0, "kvHeads", c->heads, 1, c->heads, &c->kv_heads, err))) return rc;
    if (c->heads % c->kv_heads) return sf_fail(err, SF_BAD_CONFIG, "config.kvHeads (%d) must divide config.heads (%d)", c->kv_heads, c->heads);
    c->attn_scale = 1.0 / sqrt((double)c->head_dim);
    if ((rc = get_positive(j, "attnScale", 1e6, &c->attn_scale, &c->attn_scale_given, err))) return rc;
    if ((float)c->attn_scale == 0) return sf_fail(err, SF_BAD_CONFIG, "config.attnScale (%g) is zero in float32", c->attn_scale);

    if ((rc = get_int(j, 0, "localWindow", 0, 0, SF_MAX_LEN, &c->local_window, err))) return rc;
    memset(c->local, 0, sizeof c->local);
    int m = sf_json_member(j, 0, "localLayers"), n = 0;
    if (m >= 0) {
        if (j->nodes[m].type != SF_JARRAY)
            return sf_fail(err, SF_BAD_CONFIG, "config.localLayers must be an array of layer indices, got %s", sf_json_type_name(j->nodes[m].type));
        int last = -1;
        for (int k = j->nodes[m].first; k >= 0; k = j->nodes[k].next, n++) {
            if (!sf_json_is_int(j, k, 0, c->layers - 1.0))
                return sf_fail(err, SF_BAD_CONFIG, "config.localLayers[%d] must be a layer index in [0, %d)", n, c->layers);
            int l = (int)j->nodes[k].num;
            if (l <= last) return sf_fail(err, SF_BAD_CONFIG, "config.localLayers must be increasing, without repeats (at [%d])", n);
            c->local[l] = 1;
            last = l;
        }
    }
    if (n && !c->local_window) return sf_fail(err, SF_BAD_CONFIG, "config.localLayers needs config.localWindow (the number of keys each side)");
    if (!n && c->local_window) return sf_fail(err, SF_BAD_CONFIG, "config.localWindow applies to config.localLayers, which is empty");
    return SF_OK;
}

static int parse_embeddings(sf_config *c, const sf_json *j, sf_error *err) {
    int rc;
    if ((rc = get_int(j, 0, "typeVocabSize", 0, 0, 256, &c->type_vocab_size, err)) || (rc = get_bool(j, 0, "embedNorm", 0, &c->embed_norm, err)) ||
        (rc = get_bool(j, 0, "firstAttnNorm", 1, &c->first_attn_norm, err)) ||
        (rc = get_int(j, 0, "embedDim", c->d_model, 1, SF_MAX_DIM, &c->embed_dim, err)) ||
        (rc = get_int(j, 0, "layerGroups", c->layers, c->layers ? 1 : 0, c->layers, &c->layer_groups, err)))
        return rc;
    c->embed_proj = sf_json_member(j, 0, "embedDim") >= 0;
    if ((rc = get_bool(j, 0, "embedNormAfterProj", 0, &c->embed_norm_after_proj, err))) return rc;
    if (c->embed_norm_after_proj && !(c->embed_proj && c->embed_norm))
        return sf_fail(err, SF_BAD_CONFIG,
                       "config.embedNormAfterProj: true needs config.embedDim and config.embedNorm: true (the norm it moves after embed.proj)");
    if (!c->first_attn_norm && !c->pre_norm)
        return sf_fail(err, SF_BAD_CONFIG, "config.firstAttnNorm: false applies to normPlacement 'pre' (a post-norm layer's norm is on its output)");
    return SF_OK;
}

/* qkNorm (a norm plugin or 'none') and residualScale (a number or 'deepnorm'). */
static int parse_normalisation(sf_config *c, const sf_json *j, sf_error *err) {
    char name[64], choices[256];
    int rc, m = sf_json_member(j, 0, "qkNorm");
    c->qk_norm = NULL;
    if (m >= 0) {
        list_names(choices, sizeof choices, 1);
        if ((rc = get_name(j, 0, "qkNorm", name, sizeof name, choices, err))) return rc;
        if (strcmp(name, "none") && !(c->qk_norm = sf_find_norm(name)))
            return sf_fail(err, SF_BAD_CONFIG, "config.qkNorm '%s' is neither 'none' nor a registered norm plugin (%s)", name, choices);
    }
    c->residual_scale = 1;
    c->deepnorm = 0;
    m = sf_json_member(j, 0, "residualScale");
    if (m < 0) return SF_OK;
    const sf_jnode *n = &j->nodes[m];
    if (n->type == SF_JSTRING && sf_json_string_is(j, m, "deepnorm")) {
        c->deepnorm = 1;
        c->residual_scale = sqrt(sqrt(2.0 * (c->layers ? c->layers : 1))); /* DeepNet: alpha = (2N)^(1/4) */
        return SF_OK;
    }
    if (n->type != SF_JNUMBER || !(n->num > 0 && n->num <= 1e6))
        return n->type == SF_JNUMBER
                   ? sf_fail(err, SF_BAD_CONFIG, "config.residualScale must be in (0, 1e6] or 'deepnorm', got %g", n->num)
                   : sf_fail(err, SF_BAD_CONFIG, "config.residualScale must be a number or 'deepnorm', got %s", sf_json_type_name(n->type));
    c->residual_scale = n->num;
    return SF_OK;
}

/* A message a plugin wrote about positionOptions, about the slot it really
 * reads: "config.positionOptions" -> "config.relativeBiasOptions". */
static void rename_field(sf_error *err, const char *from, const char *to) {
    char out[SF_ERROR_MSG_CAP];
    size_t n = 0, lf = strlen(from), lt = strlen(to);
    for (const char *s = err->msg; *s && n + 1 < sizeof out;) {
        if (!strncmp(s, from, lf) && n + lt + 1 < sizeof out) {
            memcpy(out + n, to, lt);
            n += lt, s += lf;
        } else
            out[n++] = *s++;
    }
    out[n] = 0;
    memcpy(err->msg, out, n + 1);
}

/* relativeBias: 'none', or a plugin that only biases the scores (t5, alibi)
 * on top of position, with relativeBiasOptions. */
static int parse_bias(sf_config *c, const sf_json *j, sf_error *err) {
    char name[64], choices[256];
    int rc, m = sf_json_member(j, 0, "relativeBias"), opts = sf_json_member(j, 0, "relativeBiasOptions");
    c->bias = NULL;
    memset(&c->bias_options, 0, sizeof c->bias_options);
    if (opts >= 0 && j->nodes[opts].type != SF_JOBJECT)
        return sf_fail(err, SF_BAD_CONFIG, "config.relativeBiasOptions must be an object, got %s", sf_json_type_name(j->nodes[opts].type));
    if (m >= 0) {
        list_names(choices, sizeof choices, 0);
        if ((rc = get_name(j, 0, "relativeBias", name, sizeof name, choices, err))) return rc;
        if (strcmp(name, "none") && !(c->bias = sf_find_position(name)))
            return sf_fail(err, SF_BAD_CONFIG, "config.relativeBias '%s' is neither 'none' nor a registered position plugin (%s)", name, choices);
    }
    if (!c->bias) {
        if (opts >= 0 && j->nodes[opts].count) return sf_fail(err, SF_BAD_CONFIG, "config.relativeBiasOptions: config.relativeBias is 'none'");
        return SF_OK;
    }
    if (c->bias->embed || c->bias->rotate || !c->bias->score_bias)
        return sf_fail(err, SF_BAD_CONFIG,
                       "config.relativeBias '%s' must be a scheme that only biases the attention scores (t5, alibi); "
                       "one that changes the embeddings or rotates q and k goes in config.position",
                       name);
    if (c->bias == c->position) return sf_fail(err, SF_BAD_CONFIG, "config.relativeBias '%s' is config.position already: use one slot", name);
    sf_config view;
    sf_config_bias_view(c, &view);
    if (c->bias->parse_options) {
        rc = c->bias->parse_options(&c->bias_options, j, opts, err);
    } else if (opts >= 0 && j->nodes[opts].count) {
        rc = sf_fail(err, SF_BAD_CONFIG, "config.relativeBiasOptions: relativeBias '%s' takes no options", name);
    } else
        rc = SF_OK;
    sf_config_bias_view(c, &view);
    if (!rc && c->bias->check) rc = c->bias->check(&view, err);
    if (rc) rename_field(err, "config.positionOptions", "config.relativeBiasOptions");
    return rc;
}

/* get_bool / get_int name "config.<key>" in messages; a member of config.<path> is "config.<path>.<key>". */
static int member_error(int rc, sf_error *err, const char *path, const char *key) {
    char from[80] = "config.", to[96] = "config.";
    size_t lp = strlen(path), lk = strlen(key);
    if (rc && lk < 64 && lp < 16) {
        memcpy(from + 7, key, lk + 1);
        memcpy(to + 7, path, lp);
        to[7 + lp] = '.';
        memcpy(to + 8 + lp, key, lk + 1);
        rename_field(err, from, to);
    }
    return rc;
}

/* conv: null, or {kernel (odd), activation} (DeBERTa-v2's ConvLayer after layer 0; activation: tanh by default, as HF's conv_act). */
static int parse_conv(sf_config *c, const sf_json *j, sf_error *err) {
    static const char *const keys[] = {"kernel", "activation", NULL};
    int rc, act, m = sf_json_member(j, 0, "conv");
    c->conv_kernel = 0;
    if (m < 0 || j->nodes[m].type == SF_JNULL) return SF_OK;
    if (j->nodes[m].type != SF_JOBJECT)
        return sf_fail(err, SF_BAD_CONFIG, "config.conv must be an object or null, got %s", sf_json_type_name(j->nodes[m].type));
    if ((rc = sf_opt_only(j, m, "conv", keys, err)) ||
        (rc = member_error(get_int(j, m, "kernel", -1, 1, 255, &c->conv_kernel, err), err, "conv", "kernel")) ||
        (rc = sf_opt_enum(j, m, "conv", "activation", head_activation_names, 1, &act, err)))
        return rc;
    if (!(c->conv_kernel & 1))
        return sf_fail(err, SF_BAD_CONFIG, "config.conv.kernel must be odd (the same padding each side), got %d", c->conv_kernel);
    c->conv_act = head_activations[act];
    return SF_OK;
}

/* head: null, or {task, labels, pooling, dense, activation, norm, normEps, tied, width, tokenWeights}. */
static int parse_head(sf_config *c, const sf_json *j, sf_error *err) {
    static const char *const keys[] = {"task", "labels", "pooling", "dense", "activation", "norm", "normEps", "tied", "width", "tokenWeights", NULL};
    sf_head_config *h = &c->head;
    memset(h, 0, sizeof *h);
    h->activation = SF_HEAD_ACT_IDENTITY;
    int rc, m = sf_json_member(j, 0, "head"), act = 0, labels = 0;
    if (m < 0 || j->nodes[m].type == SF_JNULL) return SF_OK;
    if (j->nodes[m].type != SF_JOBJECT)
        return sf_fail(err, SF_BAD_CONFIG, "config.head must be an object or null, got %s", sf_json_type_name(j->nodes[m].type));
    if ((rc = sf_opt_only(j, m, "head", keys, err))) return rc;
    if (sf_json_member(j, m, "task") < 0) return sf_fail(err, SF_BAD_CONFIG, "config.head.task is required (sequence, token, mlm, qa, colbert)");
    if ((rc = sf_opt_enum(j, m, "head", "task", head_tasks, 0, &h->task, err)) ||
        (rc = sf_opt_enum(j, m, "head", "pooling", head_poolings, SF_HEAD_POOL_CLS, &h->pooling, err)) ||
        (rc = sf_opt_enum(j, m, "head", "activation", head_activation_names, 0, &act, err)) ||
        (rc = member_error(get_bool(j, m, "dense", 0, &h->dense, err), err, "head", "dense")) ||
        (rc = member_error(get_bool(j, m, "tied", h->task == SF_HEAD_MLM, &h->tied, err), err, "head", "tied")) ||
        (rc = member_error(get_int(j, m, "width", c->d_model, 1, SF_MAX_DIM, &h->width, err), err, "head", "width")) ||
        (rc = member_error(get_bool(j, m, "tokenWeights", 0, &h->token_weights, err), err, "head", "tokenWeights")))
        return rc;
    if (h->task == SF_HEAD_NONE) {
        if (j->nodes[m].count > 1) return sf_fail(err, SF_BAD_CONFIG, "config.head: task 'none' takes no other field (or use head: null)");
        return SF_OK;
    }
    h->activation = head_activations[act];
    if (h->task == SF_HEAD_MLM) {
        if (sf_json_member(j, m, "labels") >= 0 && (rc = get_int(j, m, "labels", -1, c->vocab_size, c->vocab_size, &labels, err)))
            return sf_fail(err, SF_BAD_CONFIG, "config.head.labels of an mlm head is the vocabulary (config.vocabSize = %d)", c->vocab_size);
        h->labels = c->vocab_size;
    } else {
        if ((rc = member_error(get_int(j, m, "labels", -1, 1, SF_MAX_VOCAB, &h->labels, err), err, "head", "labels"))) return rc;
        if (h->tied) return sf_fail(err, SF_BAD_CONFIG, "config.head.tied applies to an mlm head (its projection on the vocabulary)");
    }
    if ((h->task == SF_HEAD_QA && h->labels != 2) || (h->token_weights && (h->task != SF_HEAD_COLBERT || h->labels < 2)))
        return sf_fail(err, SF_BAD_CONFIG, "config.head.labels (%d): a qa head has 2, a colbert head with tokenWeights at least 2", h->labels);
    if (h->task != SF_HEAD_SEQUENCE && sf_json_member(j, m, "pooling") >= 0)
        return sf_fail(err, SF_BAD_CONFIG, "config.head.pooling applies to a sequence head");
    if (!h->dense && act) return sf_fail(err, SF_BAD_CONFIG, "config.head.activation follows head.dense, which is false");
    /* head.dense makes rows of the width; a tied decoder reads them against the token table */
    if (h->width != (h->tied ? c->embed_dim : h->dense ? h->width : c->d_model))
        return sf_fail(err, SF_BAD_CONFIG, "config.head.width (%d) must be %s (%d)", h->width,
                       h->tied ? "embedDim, the tied table's" : "dModel without head.dense", h->tied ? c->embed_dim : c->d_model);
    int nm = sf_json_member(j, m, "norm");
    if (nm >= 0) {
        char name[64], choices[256];
        list_names(choices, sizeof choices, 1);
        if (j->nodes[nm].type != SF_JSTRING || sf_json_string(j, nm, name, sizeof name) < 0)
            return sf_fail(err, SF_BAD_CONFIG, "config.head.norm must be 'none' or a norm plugin (%s)", choices);
        if (strcmp(name, "none") && !(h->norm = sf_find_norm(name)))
            return sf_fail(err, SF_BAD_CONFIG, "config.head.norm '%s' is neither 'none' nor a registered norm plugin (%s)", name, choices);
    }
    if ((rc = sf_opt_number(j, m, "head", "normEps", 1e-12, 0, 1, &h->norm_eps, err))) return rc;
    if (h->norm && !((float)h->norm_eps > 0)) return sf_fail(err, SF_BAD_CONFIG, "config.head.normEps (%g) must be above 0 in float32", h->norm_eps);
    if (!h->norm && sf_json_member(j, m, "normEps") >= 0)
        return sf_fail(err, SF_BAD_CONFIG, "config.head.normEps applies to head.norm, which is 'none'");
    return SF_OK;
}

static int parse_root(sf_config *c, const sf_json *j, sf_error *err) {
    int rc;
    if (j->nodes[0].type != SF_JOBJECT)
        return sf_fail(err, SF_BAD_CONFIG, "config must be a JSON object, got %s", sf_json_type_name(j->nodes[0].type));

    /* unknown or repeated keys: a typo must not silently fall back to a default */
    unsigned seen = 0;
    for (int m = j->nodes[0].first; m >= 0; m = j->nodes[m].next) {
        int k = 0;
        while (config_keys[k] && !sf_json_key_is(j, m, config_keys[k])) k++;
        char key[64];
        sf_json_key(j, m, key, sizeof key);
        if (!config_keys[k]) return sf_fail(err, SF_BAD_CONFIG, "config has an unknown field '%s'", key);
        if (seen & (1u << k)) return sf_fail(err, SF_BAD_CONFIG, "config.%s is given twice", key);
        seen |= 1u << k;
    }

    if ((rc = get_int(j, 0, "vocabSize", -1, 1, SF_MAX_VOCAB, &c->vocab_size, err)) ||
        (rc = get_int(j, 0, "dModel", -1, 1, SF_MAX_DIM, &c->d_model, err)) || (rc = get_int(j, 0, "heads", -1, 1, SF_MAX_DIM, &c->heads, err)) ||
        (rc = get_int(j, 0, "layers", -1, 0, SF_MAX_LAYERS, &c->layers, err)) || (rc = get_int(j, 0, "ffDim", -1, 1, SF_MAX_DIM, &c->ff_dim, err)) ||
        (rc = get_int(j, 0, "maxLen", 512, 1, SF_MAX_LEN, &c->max_len, err)))
        return rc;
    if ((rc = parse_attention(c, j, err))) return rc;

    char name[64], choices[256];
    list_names(choices, sizeof choices, 0);
    if ((rc = get_name(j, 0, "position", name, sizeof name, choices, err))) return rc;
    if (!(c->position = sf_find_position(name)))
        return sf_fail(err, SF_BAD_CONFIG, "config.position '%s' is not a registered position plugin (%s)", name, choices);
    list_names(choices, sizeof choices, 1);
    if ((rc = get_name(j, 0, "norm", name, sizeof name, choices, err))) return rc;
    if (!(c->norm = sf_find_norm(name))) return sf_fail(err, SF_BAD_CONFIG, "config.norm '%s' is not a registered norm plugin (%s)", name, choices);

    if ((rc = get_name(j, 0, "normPlacement", name, sizeof name, "pre, post", err))) return rc;
    if (!strcmp(name, "pre"))
        c->pre_norm = 1;
    else if (!strcmp(name, "post"))
        c->pre_norm = 0;
    else
        return sf_fail(err, SF_BAD_CONFIG, "config.normPlacement must be 'pre' or 'post', got '%s'", name);

    if ((rc = get_name(j, 0, "activation", name, sizeof name, ACTIVATIONS, err))) return rc;
    c->activation = -1;
    for (int a = 0; activation_names[a]; a++)
        if (!strcmp(name, activation_names[a])) c->activation = a;
    if (c->activation < 0) return sf_fail(err, SF_BAD_CONFIG, "config.activation '%s' is unknown (" ACTIVATIONS ")", name);

    if ((rc = get_bool(j, 0, "finalNorm", c->pre_norm, &c->final_norm, err)) ||
        (rc = get_bool(j, 0, "scaleEmbedding", 0, &c->scale_embedding, err)) || (rc = get_bool(j, 0, "outputHead", 0, &c->output_head, err)))
        return rc;

    if ((rc = parse_embeddings(c, j, err)) || (rc = parse_normalisation(c, j, err))) return rc;

    int m = sf_json_member(j, 0, "eps");
    c->eps = 1e-5;
    if (m >= 0) {
        const sf_jnode *n = &j->nodes[m];
        if (n->type != SF_JNUMBER || !(n->num > 0) || n->num > 1)
            return n->type == SF_JNUMBER ? sf_fail(err, SF_BAD_CONFIG, "config.eps must be a number in (0, 1], got %g", n->num)
                                         : sf_fail(err, SF_BAD_CONFIG, "config.eps must be a number in (0, 1], got %s", sf_json_type_name(n->type));
        c->eps = n->num;
        if ((float)c->eps == 0) return sf_fail(err, SF_BAD_CONFIG, "config.eps (%g) is zero in float32", c->eps);
    }

    int opts = sf_json_member(j, 0, "positionOptions");
    if (opts >= 0 && j->nodes[opts].type != SF_JOBJECT)
        return sf_fail(err, SF_BAD_CONFIG, "config.positionOptions must be an object, got %s", sf_json_type_name(j->nodes[opts].type));
    memset(&c->position_options, 0, sizeof c->position_options);
    if (c->position->parse_options) {
        if ((rc = c->position->parse_options(&c->position_options, j, opts, err))) return rc;
    } else if (opts >= 0 && j->nodes[opts].count) {
        return sf_fail(err, SF_BAD_CONFIG, "config.positionOptions: position '%s' takes no options", c->position->name);
    }
    int C = c->d_model; /* the plugin checks the config as it sees it: dModel the embeddings' width */
    c->d_model = c->embed_dim;
    rc = c->position->check ? c->position->check(c, err) : SF_OK;
    c->d_model = C;
    if (rc) return rc;
    if ((rc = parse_bias(c, j, err)) || (rc = parse_head(c, j, err)) || (rc = parse_conv(c, j, err))) return rc;
    const sf_disentangled_opts *dis = sf_disentangled(c);
    if (dis && c->kv_heads != c->heads) /* its tiles read the keys of every head */
        return sf_fail(err, SF_BAD_CONFIG, "config.kvHeads must equal config.heads with disentangled attention, got %d and %d", c->kv_heads,
                       c->heads);
    if (dis && !c->attn_scale_given) c->attn_scale = 1.0 / sqrt((double)c->head_dim * (1 + dis->c2p + dis->p2c)); /* DeBERTa's scale_factor */
    if (c->head.task && c->output_head)
        return sf_fail(err, SF_BAD_CONFIG,
                       "config.outputHead and config.head are two heads: keep one (head: {task: 'token', labels: vocabSize} is outputHead)");
    return SF_OK;
}

int sf_config_parse(sf_config *cfg, const char *json, size_t len, sf_error *err) {
    sf_json j;
    memset(cfg, 0, sizeof *cfg);
    int rc = sf_json_parse(&j, json, len, "config", SF_BAD_CONFIG, err);
    if (rc) return rc;
    rc = parse_root(cfg, &j, err);
    sf_json_free(&j);
    return rc;
}

static void put_key(sf_buf *b, const char *key, int first) {
    if (!first) sf_buf_str(b, ",");
    sf_buf_json_string(b, key, strlen(key));
    sf_buf_str(b, ":");
}

static void put_int(sf_buf *b, const char *key, int v) {
    put_key(b, key, 0);
    sf_buf_json_number(b, v);
}

static void put_name(sf_buf *b, const char *key, const char *v) {
    put_key(b, key, 0);
    sf_buf_json_string(b, v, strlen(v));
}

void sf_config_write(const sf_config *c, sf_buf *b) {
    sf_buf_str(b, "{");
    put_key(b, "vocabSize", 1);
    sf_buf_json_number(b, c->vocab_size);
    put_int(b, "dModel", c->d_model);
    put_int(b, "heads", c->heads);
    put_int(b, "layers", c->layers);
    put_int(b, "ffDim", c->ff_dim);
    put_int(b, "maxLen", c->max_len);
    put_name(b, "position", c->position->name);
    put_key(b, "positionOptions", 0);
    if (c->position->write_options)
        c->position->write_options(&c->position_options, b);
    else
        sf_buf_str(b, "{}");
    put_name(b, "norm", c->norm->name);
    put_name(b, "normPlacement", placement_names[c->pre_norm]);
    put_key(b, "finalNorm", 0);
    sf_buf_str(b, c->final_norm ? "true" : "false");
    put_key(b, "eps", 0);
    sf_buf_json_number(b, c->eps);
    put_name(b, "activation", activation_names[c->activation]);
    put_key(b, "scaleEmbedding", 0);
    sf_buf_str(b, c->scale_embedding ? "true" : "false");
    put_key(b, "outputHead", 0);
    sf_buf_str(b, c->output_head ? "true" : "false");
    if (c->head_dim_given) put_int(b, "headDim", c->head_dim);
    if (c->kv_heads != c->heads) put_int(b, "kvHeads", c->kv_heads);
    if (c->embed_proj) put_int(b, "embedDim", c->embed_dim);
    if (c->embed_norm_after_proj) {
        put_key(b, "embedNormAfterProj", 0);
        sf_buf_str(b, "true");
    }
    if (c->layer_groups != c->layers) put_int(b, "layerGroups", c->layer_groups);
    if (c->attn_scale_given) {
        put_key(b, "attnScale", 0);
        sf_buf_json_number(b, c->attn_scale);
    }
    put_int(b, "typeVocabSize", c->type_vocab_size);
    put_key(b, "embedNorm", 0);
    sf_buf_str(b, c->embed_norm ? "true" : "false");
    put_key(b, "firstAttnNorm", 0);
    sf_buf_str(b, c->first_attn_norm ? "true" : "false");
    put_name(b, "qkNorm", c->qk_norm ? c->qk_norm->name : "none");
    put_key(b, "residualScale", 0);
    if (c->deepnorm)
        sf_buf_str(b, "\"deepnorm\"");
    else
        sf_buf_json_number(b, c->residual_scale);
    put_int(b, "localWindow", c->local_window);
    put_key(b, "localLayers", 0);
    sf_buf_str(b, "[");
    for (int l = 0, first = 1; l < c->layers; l++)
        if (c->local[l]) {
            if (!first) sf_buf_str(b, ",");
            sf_buf_json_number(b, l);
            first = 0;
        }
    sf_buf_str(b, "]");
    put_name(b, "relativeBias", c->bias ? c->bias->name : "none");
    put_key(b, "relativeBiasOptions", 0);
    if (c->bias && c->bias->write_options)
        c->bias->write_options(&c->bias_options, b);
    else
        sf_buf_str(b, "{}");
    if (c->conv_kernel) {
        put_key(b, "conv", 0);
        sf_buf_str(b, "{");
        put_key(b, "kernel", 1);
        sf_buf_json_number(b, c->conv_kernel);
        for (int a = 0; head_activation_names[a]; a++)
            if (head_activations[a] == c->conv_act) put_name(b, "activation", head_activation_names[a]);
        sf_buf_str(b, "}");
    }
    put_key(b, "head", 0);
    const sf_head_config *h = &c->head;
    if (!h->task)
        sf_buf_str(b, "null");
    else {
        sf_buf_str(b, "{");
        put_key(b, "task", 1);
        sf_buf_json_string(b, head_tasks[h->task], strlen(head_tasks[h->task]));
        put_int(b, "labels", h->labels);
        if (h->task == SF_HEAD_SEQUENCE) put_name(b, "pooling", head_poolings[h->pooling]);
        put_key(b, "dense", 0);
        sf_buf_str(b, h->dense ? "true" : "false");
        if (h->width != c->d_model) put_int(b, "width", h->width);
        for (int a = 0; head_activation_names[a]; a++)
            if (head_activations[a] == h->activation) put_name(b, "activation", head_activation_names[a]);
        put_name(b, "norm", h->norm ? h->norm->name : "none");
        if (h->norm) {
            put_key(b, "normEps", 0);
            sf_buf_json_number(b, h->norm_eps);
        }
        if (h->task == SF_HEAD_MLM) {
            put_key(b, "tied", 0);
            sf_buf_str(b, h->tied ? "true" : "false");
        }
        if (h->task == SF_HEAD_COLBERT) {
            put_key(b, "tokenWeights", 0);
            sf_buf_str(b, h->token_weights ? "true" : "false");
        }
        sf_buf_str(b, "}");
    }
    sf_buf_str(b, "}");
}

/* ------------------------------------------------ option helpers (plugin.h) */

int sf_opt_only(const sf_json *j, int obj, const char *path, const char *const *keys, sf_error *err) {
    if (obj < 0) return SF_OK;
    int dup = sf_json_duplicate(j, obj);
    if (dup == -2) return sf_fail(err, SF_OUT_OF_MEMORY, "out of memory reading config.%s", path);
    if (dup >= 0) {
        char key[64];
        sf_json_key(j, dup, key, sizeof key);
        return sf_fail(err, SF_BAD_CONFIG, "config.%s.%s is given twice", path, key);
    }
    for (int m = j->nodes[obj].first; m >= 0; m = j->nodes[m].next) {
        int k = 0;
        while (keys[k] && !sf_json_key_is(j, m, keys[k])) k++;
        if (!keys[k]) {
            char key[64];
            sf_json_key(j, m, key, sizeof key);
            return sf_fail(err, SF_BAD_CONFIG, "config.%s has an unknown field '%s'", path, key);
        }
    }
    return SF_OK;
}

int sf_opt_number(const sf_json *j, int obj, const char *path, const char *key, double def, double lo, double hi, double *out, sf_error *err) {
    int m = sf_json_member(j, obj, key);
    *out = def;
    if (m < 0) return SF_OK;
    const sf_jnode *n = &j->nodes[m];
    if (n->type != SF_JNUMBER) return sf_fail(err, SF_BAD_CONFIG, "config.%s.%s must be a number, got %s", path, key, sf_json_type_name(n->type));
    if (!(n->num >= lo && n->num <= hi)) return sf_fail(err, SF_BAD_CONFIG, "config.%s.%s must be in [%g, %g], got %g", path, key, lo, hi, n->num);
    *out = n->num;
    return SF_OK;
}

int sf_opt_enum(const sf_json *j, int obj, const char *path, const char *key, const char *const *names, int def, int *out, sf_error *err) {
    int m = sf_json_member(j, obj, key);
    *out = def;
    if (m < 0) return SF_OK;
    for (int i = 0; names[i]; i++)
        if (sf_json_string_is(j, m, names[i])) {
            *out = i;
            return SF_OK;
        }
    char choices[128] = "";
    size_t n = 0;
    for (int i = 0; names[i]; i++) {
        size_t l = strlen(names[i]);
        if (n + l + 3 >= sizeof choices) break;
        if (i) {
            memcpy(choices + n, ", ", 2);
            n += 2;
        }
        memcpy(choices + n, names[i], l + 1);
        n += l;
    }
    return sf_fail(err, SF_BAD_CONFIG, "config.%s.%s must be one of %s", path, key, choices);
}
