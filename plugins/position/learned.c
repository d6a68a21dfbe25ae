/* Learned absolute positions (BERT, GPT-2): a trainable table
 * embed.positions [maxLen, dModel], row offset + t added to the token at
 * position t. The table has no row maxLen: a longer sequence is refused with
 * SEQUENCE_TOO_LONG, never wrapped or clamped.
 *
 * positionOptions.offset (default 0): the first row used. RoBERTa and XLM-R
 * number real tokens from padding_idx + 1 = 2, so their 514-row table encodes
 * 512 tokens. */
#include "../../core/config.h"

typedef struct {
    int offset;
} learned_opts;
SF_OPTIONS_FIT(learned_opts);

static int offset_of(const sf_config *c) { return ((const learned_opts *)c->position_options.bytes)->offset; }

static int learned_parse(sf_options *o, const sf_json *j, int node, sf_error *err) {
    static const char *const keys[] = {"offset", NULL};
    double v;
    int rc = sf_opt_only(j, node, "positionOptions", keys, err);
    if (rc || (rc = sf_opt_number(j, node, "positionOptions", "offset", 0, 0, SF_MAX_LEN, &v, err))) return rc;
    if (v != (double)(int)v) return sf_fail(err, SF_BAD_CONFIG, "config.positionOptions.offset must be an integer, got %g", v);
    ((learned_opts *)o->bytes)->offset = (int)v;
    return SF_OK;
}

static void learned_write(const sf_options *o, sf_buf *b) {
    sf_buf_str(b, "{\"offset\":");
    sf_buf_json_number(b, ((const learned_opts *)o->bytes)->offset);
    sf_buf_str(b, "}");
}

static int learned_check(const sf_config *c, sf_error *err) {
    if (offset_of(c) >= c->max_len)
        return sf_fail(err, SF_BAD_CONFIG, "config.positionOptions.offset (%d) leaves no row of the table (maxLen %d)", offset_of(c), c->max_len);
    return SF_OK;
}

static int learned_max_len(const sf_config *c) { return c->max_len - offset_of(c); }

static int learned_params(const sf_config *c, sf_param_spec out[SF_MAX_PLUGIN_PARAMS]) {
    out[0] = (sf_param_spec){"embed.positions", c->max_len, c->d_model, 1.0f};
    return 1;
}

static void learned_embed(float *x, const sf_pos_ctx *ctx, int T) {
    const sf_config *c = ctx->cfg;
    const float *pos = ctx->params[0] + (size_t)offset_of(c) * c->d_model; /* (maxLen, C) from row offset; T rows checked before forward */
    size_t n = (size_t)T * c->d_model;
    for (size_t i = 0; i < n; i++) x[i] += pos[i];
}

const sf_position_plugin sf_position_learned = {
    .api_version = SF_PLUGIN_API_VERSION,
    .name = "learned",
    .parse_options = learned_parse,
    .write_options = learned_write,
    .check = learned_check,
    .max_len = learned_max_len,
    .params = learned_params,
    .embed = learned_embed,
};
