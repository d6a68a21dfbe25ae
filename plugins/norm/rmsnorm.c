/* RMSNorm: y = x / sqrt(mean(x^2) + eps) * weight, per token. No mean
 * subtraction and no bias (Zhang & Sennrich 2019; LLaMA). */
#include <math.h>

#include "../../core/plugin.h"
#include "../../core/simd.h"

static void rmsnorm_forward(float *out, const float *inp, const float *weight, const float *bias, float eps, int T, int C) {
    (void)bias;
    for (int t = 0; t < T; t++) {
        const float *x = inp + (size_t)t * C; /* (C) */
        float *y = out + (size_t)t * C;       /* (C) */
        v4 acc = v4_zero();
        int c = 0;
        for (; c + 4 <= C; c += 4) acc = v4_madd(v4_load(x + c), v4_load(x + c), acc);
        float ss = v4_sum(acc);
        for (; c < C; c++) ss += x[c] * x[c];
        float rrms = 1.0f / sqrtf(ss / (float)C + eps);
        v4 r4 = v4_splat(rrms);
        for (c = 0; c + 4 <= C; c += 4) v4_store(y + c, v4_load(x + c) * r4 * v4_load(weight + c));
        for (; c < C; c++) y[c] = x[c] * rrms * weight[c];
    }
}

const sf_norm_plugin sf_norm_rmsnorm = {
    .api_version = SF_PLUGIN_API_VERSION,
    .name = "rmsnorm",
    .has_bias = 0,
    .forward = rmsnorm_forward,
};
