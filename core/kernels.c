#include "kernels.h"

#include <math.h>
#include <string.h>

#include "config.h"
#include "simd.h"

/* ------------------------------------------------------------ packing */

size_t sf_packed_floats(int N, int K) {
    size_t panels = ((size_t)N + SF_NR - 1) / SF_NR, n;
    if (!sf_mul_size(panels * SF_NR, (size_t)K, &n)) return 0;
    return n;
}

void pack_linear(float *dst, const void *src, sf_load_fn load, int N, int K) {
    for (int p = 0; p < N; p += SF_NR) {
        float *panel = dst + (size_t)p * K; /* (K, NR) */
        for (int k = 0; k < K; k++)
            for (int c = 0; c < SF_NR; c++)
                panel[(size_t)k * SF_NR + c] = p + c < N ? load(src, (size_t)(p + c) * K + k) : 0.0f;
    }
}

void unpack_linear(float *w, const float *packed, int N, int K) {
    for (int n = 0; n < N; n++) {
        const float *panel = packed + (size_t)(n / SF_NR * SF_NR) * K;
        for (int k = 0; k < K; k++) w[(size_t)n * K + k] = panel[(size_t)k * SF_NR + n % SF_NR];
    }
}

/* ------------------------------------------------------------ matmul */

/* MR rows x 8 columns of out, from one packed panel b (K, 8). */
#define MICROKERNEL(MR)                                                                                            \
    static void kernel_##MR##x8(float *out, size_t ldo, const float *a, size_t lda, const float *b, int K,         \
                                const float *bias8, int ncols) {                                                   \
        v4 c0[MR], c1[MR];                                                                                         \
        v4 bias0 = v4_load(bias8), bias1 = v4_load(bias8 + 4);                                                     \
        for (int r = 0; r < MR; r++) c0[r] = bias0, c1[r] = bias1;                                                 \
        for (int k = 0; k < K; k++) {                                                                              \
            v4 b0 = v4_load(b + (size_t)k * 8), b1 = v4_load(b + (size_t)k * 8 + 4);                               \
            for (int r = 0; r < MR; r++) {                                                                         \
                v4 ar = v4_splat(a[r * lda + k]);                                                                  \
                c0[r] = v4_madd(ar, b0, c0[r]);                                                                    \
                c1[r] = v4_madd(ar, b1, c1[r]);                                                                    \
            }                                                                                                      \
        }                                                                                                          \
        for (int r = 0; r < MR; r++) {                                                                             \
            if (ncols == 8) {                                                                                      \
                v4_store(out + r * ldo, c0[r]);                                                                    \
                v4_store(out + r * ldo + 4, c1[r]);                                                                \
            } else {                                                                                               \
                float tmp[8];                                                                                      \
                v4_store(tmp, c0[r]);                                                                              \
                v4_store(tmp + 4, c1[r]);                                                                          \
                memcpy(out + r * ldo, tmp, sizeof(float) * (size_t)ncols);                                         \
            }                                                                                                      \
        }                                                                                                          \
    }
MICROKERNEL(4)
MICROKERNEL(1)

void matmul_forward(float *out, size_t ldo, const float *inp, size_t ldi, const float *wpacked, const float *bias, int M,
                    int K, int N) {
    for (int p = 0; p < N; p += SF_NR) {
        int ncols = N - p < SF_NR ? N - p : SF_NR;
        float bias8[8] = {0};
        if (bias) memcpy(bias8, bias + p, sizeof(float) * (size_t)ncols);
        const float *panel = wpacked + (size_t)p * K;
        int m = 0;
        for (; m + 4 <= M; m += 4) kernel_4x8(out + m * ldo + p, ldo, inp + m * ldi, ldi, panel, K, bias8, ncols);
        for (; m < M; m++) kernel_1x8(out + m * ldo + p, ldo, inp + m * ldi, ldi, panel, K, bias8, ncols);
    }
}

/* ------------------------------------------------------------ elementwise */

void embed_forward(float *x, const int32_t *ids, const float *tokens, float scale, int N, int C) {
    for (int n = 0; n < N; n++) {
        const float *row = tokens + (size_t)ids[n] * C;
        float *xr = x + (size_t)n * C;
        for (int c = 0; c < C; c++) xr[c] = row[c] * scale;
    }
}

void residual_forward(float *x, const float *y, size_t n) {
    size_t i = 0;
    for (; i + 4 <= n; i += 4) v4_store(x + i, v4_load(x + i) + v4_load(y + i));
    for (; i < n; i++) x[i] += y[i];
}

static float gelu(float x) { return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f)); }
static float gelu_tanh(float x) {
    return 0.5f * x * (1.0f + tanhf(0.79788456080286536f * (x + 0.044715f * x * x * x)));
}
/* h (n) *= silu(g (n)) = g / (1 + exp(-g)) */
static void swiglu_forward(float *h, const float *g, size_t n) {
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        v4 gv = v4_load(g + i);
        v4_store(h + i, v4_load(h + i) * gv / (v4_splat(1.0f) + v4_exp(-gv)));
    }
    for (; i < n; i++) h[i] *= g[i] / (1.0f + v4_exp(v4_splat(-g[i]))[0]);
}

void activation_forward(float *h, const float *g, int activation, size_t n) {
    switch (activation) {
    case SF_ACT_GELU: for (size_t i = 0; i < n; i++) h[i] = gelu(h[i]); break;
    case SF_ACT_GELU_TANH: for (size_t i = 0; i < n; i++) h[i] = gelu_tanh(h[i]); break;
    case SF_ACT_RELU: for (size_t i = 0; i < n; i++) h[i] = h[i] > 0 ? h[i] : 0.0f; break;
    case SF_ACT_SWIGLU: swiglu_forward(h, g, n); break;
    case SF_ACT_GEGLU: for (size_t i = 0; i < n; i++) h[i] *= gelu(g[i]); break;
    }
}

void softmax_forward(float *x, int n) {
    v4 m4 = v4_splat(-INFINITY);
    int i = 0;
    for (; i + 4 <= n; i += 4) m4 = v4_max(m4, v4_load(x + i));
    float max = m4[0] > m4[1] ? m4[0] : m4[1];
    max = max > m4[2] ? max : m4[2];
    max = max > m4[3] ? max : m4[3];
    for (; i < n; i++) max = x[i] > max ? x[i] : max;
    v4 mx = v4_splat(max), s4 = v4_zero();
    for (i = 0; i + 4 <= n; i += 4) {
        v4 e = v4_exp(v4_load(x + i) - mx);
        v4_store(x + i, e);
        s4 += e;
    }
    float sum = v4_sum(s4);
    for (; i < n; i++) sum += (x[i] = v4_exp(v4_splat(x[i] - max))[0]);
    v4 inv = v4_splat(1.0f / sum);
    for (i = 0; i + 4 <= n; i += 4) v4_store(x + i, v4_load(x + i) * inv);
    for (; i < n; i++) x[i] *= inv[0];
}

/* ------------------------------------------------------------ attention */

static float dot(const float *a, const float *b, int n) {
    v4 acc = v4_zero();
    int i = 0;
    for (; i + 4 <= n; i += 4) acc = v4_madd(v4_load(a + i), v4_load(b + i), acc);
    float s = v4_sum(acc);
    for (; i < n; i++) s += a[i] * b[i];
    return s;
}

/* out (n) += p * v (n) */
static void axpy(float *out, float p, const float *v, int n) {
    v4 pv = v4_splat(p);
    int i = 0;
    for (; i + 4 <= n; i += 4) v4_store(out + i, v4_madd(pv, v4_load(v + i), v4_load(out + i)));
    for (; i < n; i++) out[i] += p * v[i];
}

void attention_scores(float *scores, const float *qkv, const sf_position_plugin *pos, const float *table, const sf_config *cfg,
                      int h, int i, int T) {
    int C = cfg->d_model, D = C / cfg->heads;
    size_t C3 = 3 * (size_t)C;
    float scale = 1.0f / sqrtf((float)D);
    const float *q = qkv + (size_t)i * C3 + (size_t)h * D; /* (D) */
    for (int j = 0; j < T; j++) scores[j] = dot(q, qkv + (size_t)j * C3 + C + (size_t)h * D, D) * scale;
    if (pos->score_bias) pos->score_bias(scores, table, cfg, h, i, 0, T);
}

void attention_forward(float *qkv, float *scores, float *att, size_t ldatt, const int32_t *perm, const sf_position_plugin *pos,
                       const float *table, const sf_config *cfg, int T) {
    int C = cfg->d_model, H = cfg->heads, D = C / H;
    size_t C3 = 3 * (size_t)C;
    for (int h = 0; h < H; h++) {
        for (int i = 0; i < T; i++) {
            attention_scores(scores, qkv, pos, table, cfg, h, i, T);
            softmax_forward(scores, T);
            if (att && perm) {
                float *ar = att + ((size_t)h * ldatt + (size_t)perm[i]) * ldatt;
                for (int j = 0; j < T; j++) ar[perm[j]] = scores[j];
            } else if (att) {
                memcpy(att + ((size_t)h * ldatt + i) * ldatt, scores, sizeof(float) * (size_t)T);
            }
            /* the query is consumed: accumulate the output in its place */
            float *q = qkv + (size_t)i * C3 + (size_t)h * D; /* (D) */
            memset(q, 0, sizeof(float) * (size_t)D);
            for (int j = 0; j < T; j++) axpy(q, scores[j], qkv + (size_t)j * C3 + 2 * (size_t)C + (size_t)h * D, D);
        }
    }
}
