/* LayerNorm: y = (x - mean) / sqrt(var + eps) * weight + bias, per token,
 * with the biased variance (divide by C), as torch.nn.LayerNorm.
 * Seed check: LayerNorm([2, -1, 4, 3]) = [0, -1.6036, 1.0690, 0.5345]. */
#include <math.h>

#include "../../core/plugin.h"
#include "../../core/simd.h"

static float row_sum(const float *x, int C) {
    v4 acc = v4_zero();
    int c = 0;
    for (; c + 4 <= C; c += 4) acc += v4_load(x + c);
    float s = v4_sum(acc);
    for (; c < C; c++) s += x[c];
    return s;
}

static void layernorm_forward(float *out, const float *inp, const float *weight, const float *bias, float eps, int T, int C) {
    for (int t = 0; t < T; t++) {
        const float *x = inp + (size_t)t * C; /* (C) */
        float *y = out + (size_t)t * C;       /* (C) */
        float mean = row_sum(x, C) / (float)C;
        v4 m4 = v4_splat(mean), acc = v4_zero();
        int c = 0;
        for (; c + 4 <= C; c += 4) {
            v4 d = v4_load(x + c) - m4;
            acc = v4_madd(d, d, acc);
        }
        float var = v4_sum(acc);
        for (; c < C; c++) var += (x[c] - mean) * (x[c] - mean);
        float rstd = 1.0f / sqrtf(var / (float)C + eps);
        v4 r4 = v4_splat(rstd);
        for (c = 0; c + 4 <= C; c += 4) v4_store(y + c, v4_madd((v4_load(x + c) - m4) * r4, v4_load(weight + c), v4_load(bias + c)));
        for (; c < C; c++) y[c] = (x[c] - mean) * rstd * weight[c] + bias[c];
    }
}

const sf_norm_plugin sf_norm_layernorm = {
    .api_version = SF_PLUGIN_API_VERSION,
    .name = "layernorm",
    .has_bias = 1,
    .forward = layernorm_forward,
};
