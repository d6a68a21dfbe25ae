/* ALiBi (Press et al. 2022): no position vector; each head h adds
 * -slope_h * |i - j| to the score of query i and key j (symmetric: this is an
 * encoder). Slopes are the paper's geometric sequence: for n heads, a power of
 * two, slope_k = 2^(-8(k+1)/n) (8 heads: 1/2 ... 1/256); otherwise the slopes
 * of the closest lower power of two p, then every other slope of 2p. */
#include <math.h>

#include "../../core/config.h"

static size_t alibi_table_size(const sf_config *c, int T) {
    (void)T;
    return (size_t)c->heads;
}

static void alibi_table_init(float *slopes, const sf_config *c, int T) { /* slopes (H) */
    (void)T;
    int n = c->heads, p = 1;
    while (p * 2 <= n) p *= 2;
    for (int k = 0; k < n; k++) {
        /* first p heads: 2^(-8(k+1)/p); the rest: odd powers of 2^(-8/2p) */
        double e = k < p ? -8.0 * (k + 1) / p : -8.0 * (2 * (k - p) + 1) / (2.0 * p);
        slopes[k] = (float)pow(2.0, e);
    }
}

static void alibi_score_bias(float *scores, const float *slopes, const sf_config *c, int h, int i, int j0, int n) {
    (void)c;
    float m = slopes[h];
    for (int j = 0; j < n; j++) {
        int d = i - (j0 + j);
        scores[j] -= m * (float)(d < 0 ? -d : d);
    }
}

const sf_position_plugin sf_position_alibi = {
    .api_version = SF_PLUGIN_API_VERSION,
    .name = "alibi",
    .table_size = alibi_table_size,
    .table_init = alibi_table_init,
    .score_bias = alibi_score_bias,
};
