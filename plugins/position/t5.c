/* T5's relative position buckets (Raffel et al. 2020): no position vector;
 * each head adds a learned scalar to the score of query i and key j, chosen
 * by the bucket of the offset j - i. One table embed.relative_bias
 * [buckets, heads] serves every layer (T5 keeps it in block 0 only).
 *
 * Bidirectional buckets, as transformers' _relative_position_bucket: half of
 * them for keys after the query (j > i), half for the rest; within a half,
 * offsets n = |j - i| below max_exact = buckets/4 get a bucket each, larger
 * ones share log-spaced buckets up to maxDistance, beyond which all share
 * the last:
 *   b = (j > i) * buckets/2 + (n < max_exact ? n
 *       : min(buckets/2 - 1, max_exact + trunc(ln(n / max_exact) / ln(maxDistance / max_exact) * (buckets/2 - max_exact))))
 * computed in float32 as PyTorch does (the ln of the ratio of distances in double). For 32 buckets and maxDistance 128:
 * n = 8..11 -> 8, 12..15 -> 9, ..., 64..90 -> 14, >= 91 -> 15.
 * The bucket of every offset -(T-1) .. T-1 is built once per capacity. */
#include "../../core/config.h"
#include "../../core/sfmath.h"

typedef struct {
    int buckets, max_distance;
} t5_opts;
SF_OPTIONS_FIT(t5_opts);

static const t5_opts *opts(const sf_config *c) { return (const t5_opts *)c->position_options.bytes; }

static int t5_parse(sf_options *o, const sf_json *j, int node, sf_error *err) {
    static const char *const keys[] = {"buckets", "maxDistance", NULL};
    t5_opts *t = (t5_opts *)o->bytes;
    double b, d;
    int rc;
    if ((rc = sf_opt_only(j, node, "positionOptions", keys, err)) ||
        (rc = sf_opt_number(j, node, "positionOptions", "buckets", 32, 4, 1 << 16, &b, err)) ||
        (rc = sf_opt_number(j, node, "positionOptions", "maxDistance", 128, 1, SF_MAX_LEN, &d, err)))
        return rc;
    if (b != (double)(int)b || (int)b % 4) return sf_fail(err, SF_BAD_CONFIG, "config.positionOptions.buckets must be a multiple of 4, got %g", b);
    if (d != (double)(int)d) return sf_fail(err, SF_BAD_CONFIG, "config.positionOptions.maxDistance must be an integer, got %g", d);
    t->buckets = (int)b;
    t->max_distance = (int)d;
    if (t->max_distance <= t->buckets / 4)
        return sf_fail(err, SF_BAD_CONFIG, "config.positionOptions.maxDistance (%d) must exceed buckets / 4 (%d)", t->max_distance, t->buckets / 4);
    return SF_OK;
}

static void t5_write(const sf_options *o, sf_buf *b) {
    const t5_opts *t = (const t5_opts *)o->bytes;
    sf_buf_str(b, "{\"buckets\":");
    sf_buf_json_number(b, t->buckets);
    sf_buf_str(b, ",\"maxDistance\":");
    sf_buf_json_number(b, t->max_distance);
    sf_buf_str(b, "}");
}

static int t5_params(const sf_config *c, sf_param_spec out[SF_MAX_PLUGIN_PARAMS]) {
    out[0] = (sf_param_spec){"embed.relative_bias", opts(c)->buckets, c->heads, 1.0f};
    return 1;
}

static size_t t5_table_size(const sf_config *c, int T) {
    (void)c;
    return 2 * (size_t)T; /* T <= 2^31: fits */
}

/* table (2T - 1): the bucket of offset d = j - i at d + T - 1, as a float (exact below 2^24) */
static void t5_table_init(float *table, const sf_config *c, int T) {
    int half = opts(c)->buckets / 2, exact = half / 2;
    float span = (float)sf_log((double)opts(c)->max_distance / exact); /* math.log in double, then used in float32 */
    for (int d = -(T - 1); d <= T - 1; d++) {
        int n = d < 0 ? -d : d, b = d > 0 ? half : 0;
        if (n < exact)
            b += n;
        else {
            float ratio = (float)sf_log((double)((float)n / (float)exact)) / span * (float)(half - exact);
            int large = exact + (int)ratio;
            b += large < half - 1 ? large : half - 1;
        }
        table[d + T - 1] = (float)b;
    }
}

static void t5_score_bias(float *s, size_t ld, const sf_pos_ctx *ctx, int h, int i0, int ni, int j0, int nj) {
    const float *bias = ctx->params[0];                    /* (buckets, H) */
    const float *bucket = ctx->table + ctx->table_len - 1; /* bucket[d], d = j - i */
    int H = ctx->cfg->heads;
    for (int j = 0; j < nj; j++) {
        float *row = s + (size_t)j * ld; /* key j0 + j against queries i0 .. */
        for (int i = 0; i < ni; i++) row[i] += bias[(size_t)bucket[(j0 + j) - (i0 + i)] * H + h];
    }
}

const sf_position_plugin sf_position_t5 = {
    .api_version = SF_PLUGIN_API_VERSION,
    .name = "t5",
    .parse_options = t5_parse,
    .write_options = t5_write,
    .params = t5_params,
    .table_size = t5_table_size,
    .table_init = t5_table_init,
    .score_bias = t5_score_bias,
};
