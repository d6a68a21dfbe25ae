/* Learned absolute positions (BERT, GPT-2): a trainable table
 * embed.positions [maxLen, dModel], row t added to the token at position t.
 * The table has no row maxLen: a longer sequence is refused with
 * SEQUENCE_TOO_LONG, never wrapped or clamped. */
#include "../../core/config.h"

static int learned_max_len(const sf_config *c) { return c->max_len; }

static int learned_params(const sf_config *c, sf_param_spec out[SF_MAX_PLUGIN_PARAMS]) {
    out[0] = (sf_param_spec){"embed.positions", c->max_len, c->d_model, 1.0f};
    return 1;
}

static void learned_embed(float *x, const float *table, const float *const *params, const sf_config *c, int T) {
    (void)table;
    const float *pos = params[0]; /* (maxLen, C); T <= maxLen is checked before forward */
    size_t n = (size_t)T * c->d_model;
    for (size_t i = 0; i < n; i++) x[i] += pos[i];
}

const sf_position_plugin sf_position_learned = {
    .api_version = SF_PLUGIN_API_VERSION,
    .name = "learned",
    .max_len = learned_max_len,
    .params = learned_params,
    .embed = learned_embed,
};
