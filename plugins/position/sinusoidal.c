/* Sinusoidal positions (Vaswani et al. 2017), added to the embeddings:
 *   PE[t, 2i]   = sin(t / base^(2i/C))
 *   PE[t, 2i+1] = cos(t / base^(2i/C))
 * The exponent is 2i/C (writing i/C squashes every frequency). The table is a
 * constant, built once per capacity in double precision, like PyTorch's
 * register_buffer. Defined for any t: no length limit. */
#include <math.h>

#include "../../core/config.h"
#include "../../core/sfmath.h"

typedef struct {
    double base;
} sinusoidal_opts;
SF_OPTIONS_FIT(sinusoidal_opts);

static int sinusoidal_parse(sf_options *o, const sf_json *j, int node, sf_error *err) {
    static const char *const keys[] = {"base", NULL};
    sinusoidal_opts *s = (sinusoidal_opts *)o->bytes;
    int rc = sf_opt_only(j, node, "positionOptions", keys, err);
    return rc ? rc : sf_opt_number(j, node, "positionOptions", "base", 10000.0, 1.0000001, 1e12, &s->base, err);
}

static void sinusoidal_write(const sf_options *o, sf_buf *b) {
    sf_buf_str(b, "{\"base\":");
    sf_buf_json_number(b, ((const sinusoidal_opts *)o->bytes)->base);
    sf_buf_str(b, "}");
}

static int sinusoidal_check(const sf_config *c, sf_error *err) {
    if (c->d_model % 2) return sf_fail(err, SF_BAD_CONFIG, "config.dModel (%d) must be even for sinusoidal positions (sin/cos pairs)", c->d_model);
    return SF_OK;
}

static size_t sinusoidal_table_size(const sf_config *c, int T) {
    size_t n;
    return SF_SIZE(&n, T, c->d_model) ? n : (size_t)-1;
}

static void sinusoidal_table_init(float *pe, const sf_config *c, int T) { /* pe (T, C) */
    int C = c->d_model;
    double base = ((const sinusoidal_opts *)c->position_options.bytes)->base;
    for (int i = 0; i < C / 2; i++) {
        double inv_freq = sf_pow(base, -2.0 * i / C);
        for (int t = 0; t < T; t++) {
            double s, co;
            sf_sincos(t * inv_freq, &s, &co);
            pe[(size_t)t * C + 2 * i] = (float)s;
            pe[(size_t)t * C + 2 * i + 1] = (float)co;
        }
    }
}

static void sinusoidal_embed(float *x, const sf_pos_ctx *ctx, int T) {
    const float *pe = ctx->table; /* (table_len, C) */
    size_t n = (size_t)T * ctx->cfg->d_model;
    for (size_t i = 0; i < n; i++) x[i] += pe[i];
}

const sf_position_plugin sf_position_sinusoidal = {
    .api_version = SF_PLUGIN_API_VERSION,
    .name = "sinusoidal",
    .parse_options = sinusoidal_parse,
    .write_options = sinusoidal_write,
    .check = sinusoidal_check,
    .table_size = sinusoidal_table_size,
    .table_init = sinusoidal_table_init,
    .embed = sinusoidal_embed,
};
