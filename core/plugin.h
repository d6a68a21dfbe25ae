/* The plugin interface: what a position scheme or a norm must provide.
 *
 * A plugin is a `const` struct: an api version, a name, and function pointers
 * that may be NULL when the plugin has nothing to do at that point. The
 * registry (core/registry.c) finds plugins by name; it never owns or copies
 * them. plugins/README.md walks through writing one.
 *
 * Buffers follow llm.c's conventions: row-major float32, shapes in comments.
 * C = dModel, H = heads, D = head size (C / H), T = tokens of one sequence. */
#ifndef SF_PLUGIN_H
#define SF_PLUGIN_H

#include <stddef.h>

#include "error.h"
#include "json.h"

/* Version 2 gave the hooks a context (sf_pos_ctx) instead of (table, cfg).
 * The core reads a member added in a later version only when the plugin's
 * api_version says it has it (as SQLite reads sqlite3_vfs members by iVersion);
 * plugins of versions SF_PLUGIN_API_MIN .. SF_PLUGIN_API_VERSION register. */
#define SF_PLUGIN_API_VERSION 2
#define SF_PLUGIN_API_MIN     2

/* Plugin-defined options (positionOptions), stored inside the config. A plugin
 * casts .bytes to its own struct, which must fit (use SF_OPTIONS_FIT). */
typedef union sf_options {
    double align;
    unsigned char bytes[64];
} sf_options;
#define SF_OPTIONS_FIT(type) _Static_assert(sizeof(type) <= sizeof(sf_options), #type " does not fit in sf_options")

struct sf_config;

/* A parameter tensor a plugin owns, e.g. the learned table. */
typedef struct sf_param_spec {
    const char *name; /* e.g. "embed.positions" */
    int rows, cols;   /* shape [rows, cols] */
    float init_std;   /* seed initialisation: N(0, init_std^2) */
} sf_param_spec;
#define SF_MAX_PLUGIN_PARAMS 2

/* What a hook knows about where it runs. Members are only ever appended. */
typedef struct sf_pos_ctx {
    const struct sf_config *cfg;
    const float *table; /* the constants table_init built, for table_len positions */
    int table_len;
    const float *const *params; /* params[i]: the plugin's i-th parameter (params hook) */
    int layer;                  /* the layer (0 ..), -1 in embed */
    int local;                  /* the layer attends within cfg->local_window (ModernBERT's sliding layers) */
    int len;                    /* tokens in this sequence */
    /* What a score_bias that reads the content sees, in attention only (NULL
     * elsewhere): the queries of the tile (row r is query i0 + r, stride ldq,
     * rotated and scaled by attnScale), the sequence's keys (row j of kv, stride
     * 2 ldq, rotated), this layer's relative tables (the disentangled scheme's:
     * core/config.h) and this thread's scratch (score_scratch floats). */
    const float *q, *kv;
    size_t ldq;
    const float *rel;
    float *scratch;
} sf_pos_ctx;

typedef struct sf_position_plugin {
    int api_version; /* SF_PLUGIN_API_VERSION */
    const char *name;

    /* Reads positionOptions (node is -1 when absent) into opt, with defaults.
     * NULL: the plugin takes no options, and positionOptions must be absent or {}. */
    int (*parse_options)(sf_options *opt, const sf_json *j, int node, sf_error *err);
    /* Writes the resolved options as a JSON object. NULL: writes {}. */
    void (*write_options)(const sf_options *opt, sf_buf *out);
    /* Checks the rest of the config (e.g. an even head size). NULL: always fine. */
    int (*check)(const struct sf_config *cfg, sf_error *err);
    /* Longest sequence it can encode. NULL: unlimited. */
    int (*max_len)(const struct sf_config *cfg);
    /* Parameters it owns; returns how many it wrote to out. NULL: none. */
    int (*params)(const struct sf_config *cfg, sf_param_spec out[SF_MAX_PLUGIN_PARAMS]);

    /* Constant tables (the register_buffer of PyTorch), built once for
     * sequences of up to T tokens: table_size floats ((size_t)-1 when that
     * overflows: compute it with SF_SIZE), filled by table_init. NULL: no table. */
    size_t (*table_size)(const struct sf_config *cfg, int T);
    void (*table_init)(float *table, const struct sf_config *cfg, int T);

    /* The three hooks; each may be NULL. A = heads x headDim, the attention width.
     * embed:      x (T, C) += position vectors for positions 0..T-1.
     * rotate:     rotates n query or key rows in place, at positions p0 ..
     *             p0+n-1: x (n, ld), columns 0..A-1, head h at columns h*headDim.
     * score_bias: adds bias(head h, query i, key j) to a tile of scores for
     *             queries i0 .. i0+ni-1 and keys j0 .. j0+nj-1, stored key
     *             by key: s[(j - j0)*ld + (i - i0)] (queries contiguous). */
    void (*embed)(float *x, const sf_pos_ctx *ctx, int T);
    void (*rotate)(float *x, size_t ld, const sf_pos_ctx *ctx, int p0, int n);
    void (*score_bias)(float *s, size_t ld, const sf_pos_ctx *ctx, int h, int i0, int ni, int j0, int nj);
} sf_position_plugin;

typedef struct sf_norm_plugin {
    int api_version; /* SF_PLUGIN_API_VERSION */
    const char *name;
    int has_bias; /* 1: takes weight and bias [C]; 0: weight only */
    /* out (T, C) = norm(inp (T, C)); out may equal inp. bias is NULL when has_bias is 0. */
    void (*forward)(float *out, const float *inp, const float *weight, const float *bias, float eps, int T, int C);
} sf_norm_plugin;

/* registry.c */
int sf_register_position(const sf_position_plugin *p, sf_error *err);
int sf_register_norm(const sf_norm_plugin *p, sf_error *err);
const sf_position_plugin *sf_find_position(const char *name);
const sf_norm_plugin *sf_find_norm(const char *name);
int sf_position_count(void);
int sf_norm_count(void);
const sf_position_plugin *sf_position_at(int i);
const sf_norm_plugin *sf_norm_at(int i);

/* Helpers for parse_options: read an optional member of an options object
 * (node -1: absent), with a default and a range; messages name the field
 * "config.<path>.<key>", path e.g. "positionOptions". */
int sf_opt_number(const sf_json *j, int obj, const char *path, const char *key, double def, double lo, double hi, double *out, sf_error *err);
int sf_opt_enum(const sf_json *j, int obj, const char *path, const char *key, const char *const *names, int def, int *out, sf_error *err);
/* Refuses members not in keys (a NULL-terminated list). */
int sf_opt_only(const sf_json *j, int obj, const char *path, const char *const *keys, sf_error *err);

#endif
