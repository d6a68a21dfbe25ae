#include "config.h"

#include <math.h>
#include <string.h>

static const char *const activation_names[] = {"gelu", "gelu_tanh", "relu", "swiglu", "geglu", "silu", "geglu_tanh", NULL};
#define ACTIVATIONS "gelu, gelu_tanh, relu, silu, swiglu, geglu, geglu_tanh"
static const char *const placement_names[] = {"post", "pre", NULL};

static const char *const config_keys[] = {
    "vocabSize", "dModel", "heads", "layers", "ffDim", "maxLen", "position", "positionOptions", "norm",
    "normPlacement", "finalNorm", "eps", "activation", "scaleEmbedding", "outputHead", "headDim", "attnScale",
    "typeVocabSize", "embedNorm", "firstAttnNorm", "localWindow", "localLayers", "qkNorm", "residualScale", NULL,
};

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
        if (n->type == SF_JNUMBER)
            return sf_fail(err, SF_BAD_CONFIG, "config.%s must be an integer in [%d, %d], got %g", key, lo, hi, n->num);
        return sf_fail(err, SF_BAD_CONFIG, "config.%s must be an integer in [%d, %d], got %s", key, lo, hi,
                       sf_json_type_name(n->type));
    }
    *out = (int)j->nodes[m].num;
    return SF_OK;
}

static int get_bool(const sf_json *j, int obj, const char *key, int def, int *out, sf_error *err) {
    int m = sf_json_member(j, obj, key);
    if (m < 0) { *out = def; return SF_OK; }
    int t = j->nodes[m].type;
    if (t != SF_JTRUE && t != SF_JFALSE)
        return sf_fail(err, SF_BAD_CONFIG, "config.%s must be true or false, got %s", key, sf_json_type_name(t));
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
        if (i) { memcpy(out + n, ", ", 2); n += 2; }
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
        return sf_fail(err, SF_BAD_CONFIG, "config.dModel (%d) must be divisible by config.heads (%d), or config.headDim given", c->d_model, c->heads);
    if ((rc = get_int(j, 0, "headDim", c->d_model / c->heads, 1, SF_MAX_DIM, &c->head_dim, err))) return rc;
    if ((long long)c->heads * c->head_dim > SF_MAX_DIM)
        return sf_fail(err, SF_BAD_CONFIG, "config.heads x config.headDim (%z) must be at most %d", (long long)c->heads * c->head_dim, SF_MAX_DIM);
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
    if ((rc = get_int(j, 0, "typeVocabSize", 0, 0, 256, &c->type_vocab_size, err)) ||
        (rc = get_bool(j, 0, "embedNorm", 0, &c->embed_norm, err)) || (rc = get_bool(j, 0, "firstAttnNorm", 1, &c->first_attn_norm, err)))
        return rc;
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
        return n->type == SF_JNUMBER ? sf_fail(err, SF_BAD_CONFIG, "config.residualScale must be in (0, 1e6] or 'deepnorm', got %g", n->num)
                                     : sf_fail(err, SF_BAD_CONFIG, "config.residualScale must be a number or 'deepnorm', got %s", sf_json_type_name(n->type));
    c->residual_scale = n->num;
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
        (rc = get_int(j, 0, "dModel", -1, 1, SF_MAX_DIM, &c->d_model, err)) ||
        (rc = get_int(j, 0, "heads", -1, 1, SF_MAX_DIM, &c->heads, err)) ||
        (rc = get_int(j, 0, "layers", -1, 0, SF_MAX_LAYERS, &c->layers, err)) ||
        (rc = get_int(j, 0, "ffDim", -1, 1, SF_MAX_DIM, &c->ff_dim, err)) ||
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
    if (!(c->norm = sf_find_norm(name)))
        return sf_fail(err, SF_BAD_CONFIG, "config.norm '%s' is not a registered norm plugin (%s)", name, choices);

    if ((rc = get_name(j, 0, "normPlacement", name, sizeof name, "pre, post", err))) return rc;
    if (!strcmp(name, "pre")) c->pre_norm = 1;
    else if (!strcmp(name, "post")) c->pre_norm = 0;
    else return sf_fail(err, SF_BAD_CONFIG, "config.normPlacement must be 'pre' or 'post', got '%s'", name);

    if ((rc = get_name(j, 0, "activation", name, sizeof name, ACTIVATIONS, err))) return rc;
    c->activation = -1;
    for (int a = 0; activation_names[a]; a++)
        if (!strcmp(name, activation_names[a])) c->activation = a;
    if (c->activation < 0)
        return sf_fail(err, SF_BAD_CONFIG, "config.activation '%s' is unknown (" ACTIVATIONS ")", name);

    if ((rc = get_bool(j, 0, "finalNorm", c->pre_norm, &c->final_norm, err)) ||
        (rc = get_bool(j, 0, "scaleEmbedding", 0, &c->scale_embedding, err)) ||
        (rc = get_bool(j, 0, "outputHead", 0, &c->output_head, err)))
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
    if (c->position->check && (rc = c->position->check(c, err))) return rc;
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
    if (c->position->write_options) c->position->write_options(&c->position_options, b);
    else sf_buf_str(b, "{}");
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
    if (c->deepnorm) sf_buf_str(b, "\"deepnorm\"");
    else sf_buf_json_number(b, c->residual_scale);
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
    if (n->type != SF_JNUMBER)
        return sf_fail(err, SF_BAD_CONFIG, "config.%s.%s must be a number, got %s", path, key, sf_json_type_name(n->type));
    if (!(n->num >= lo && n->num <= hi))
        return sf_fail(err, SF_BAD_CONFIG, "config.%s.%s must be in [%g, %g], got %g", path, key, lo, hi, n->num);
    *out = n->num;
    return SF_OK;
}

int sf_opt_enum(const sf_json *j, int obj, const char *path, const char *key, const char *const *names, int def, int *out, sf_error *err) {
    int m = sf_json_member(j, obj, key);
    *out = def;
    if (m < 0) return SF_OK;
    for (int i = 0; names[i]; i++)
        if (sf_json_string_is(j, m, names[i])) { *out = i; return SF_OK; }
    char choices[128] = "";
    size_t n = 0;
    for (int i = 0; names[i]; i++) {
        size_t l = strlen(names[i]);
        if (n + l + 3 >= sizeof choices) break;
        if (i) { memcpy(choices + n, ", ", 2); n += 2; }
        memcpy(choices + n, names[i], l + 1);
        n += l;
    }
    return sf_fail(err, SF_BAD_CONFIG, "config.%s.%s must be one of %s", path, key, choices);
}
