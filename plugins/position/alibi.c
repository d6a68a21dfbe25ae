/* ALiBi (Press et al. 2022): no position vector; each head h adds
 * -slope_h * |i - j| to the score of query i and key j (symmetric: this is an
 * encoder). Slopes are the paper's geometric sequence: for n heads, a power of
 * two, slope_k = 2^(-8(k+1)/n) (8 heads: 1/2 ... 1/256); otherwise the slopes
 * of the closest lower power of two p, then every other slope of 2p. */
#include <math.h>

#include "../../core/config.h"
#include "../../core/sfmath.h"
#include "../../core/simd.h"

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
        slopes[k] = (float)sf_exp(e * 0.69314718055994531);
    }
}

static void alibi_score_bias(float *s, size_t ld, const sf_pos_ctx *ctx, int h, int i0, int ni, int j0, int nj) {
    const float *slopes = ctx->table; /* (H) */
    v4 m = v4_splat(-slopes[h]), step = v4_splat(4.0f);
    for (int j = 0; j < nj; j++) {
        float *row = s + (size_t)j * ld;                            /* key j0 + j against queries i0 .. */
        v4 d = (v4){0, 1, 2, 3} + v4_splat((float)(i0 - (j0 + j))); /* i - j, exact in float below 2^24 */
        int i = 0;
        for (; i + 4 <= ni; i += 4, d += step) v4_store(row + i, v4_madd(m, v4_max(d, -d), v4_load(row + i)));
        for (; i < ni; i++) {
            int dd = i0 + i - (j0 + j);
            row[i] -= slopes[h] * (float)(dd < 0 ? -dd : dd);
        }
    }
}

const sf_position_plugin sf_position_alibi = {
    .api_version = SF_PLUGIN_API_VERSION,
    .name = "alibi",
    .table_size = alibi_table_size,
    .table_init = alibi_table_init,
    .score_bias = alibi_score_bias,
};
