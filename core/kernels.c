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
            for (int c = 0; c < SF_NR; c++) panel[(size_t)k * SF_NR + c] = p + c < N ? load(src, (size_t)(p + c) * K + k) : 0.0f;
    }
}

void pack_linear_f32(float *dst, const void *src, int N, int K) {
    const unsigned char *s = src; /* (N, K) little-endian floats, maybe unaligned */
    for (int p = 0; p < N; p += SF_NR) {
        float *panel = dst + (size_t)p * K; /* (K, NR) */
        int rows = N - p < SF_NR ? N - p : SF_NR;
        if (rows < SF_NR) memset(panel, 0, sizeof(float) * (size_t)K * SF_NR);
        for (int c = 0; c < rows; c++) {
            const unsigned char *row = s + ((size_t)(p + c) * K) * 4;
            for (int k = 0; k < K; k++) memcpy(panel + (size_t)k * SF_NR + c, row + (size_t)k * 4, 4);
        }
    }
}

void unpack_linear(float *w, const float *packed, int N, int K) {
    for (int n = 0; n < N; n++) {
        const float *panel = packed + (size_t)(n / SF_NR * SF_NR) * K;
        for (int k = 0; k < K; k++) w[(size_t)n * K + k] = panel[(size_t)k * SF_NR + n % SF_NR];
    }
}

/* ------------------------------------------------------------ matmul */

/* Four rows x 8 columns of out (=, or += when acc) a (4, K) @ one panel of
 * B (K, 8), rows of a of stride lda. Eight named accumulators,
 * two panel vectors and one broadcast: every live value stays in a register
 * under V8 (15 usable xmm). Named, not an array: clang 16 leaves an array of
 * accumulators in memory. */
static inline void load_acc(v4 *c0, v4 *c1, const float *out, const float *init8, int acc, int ncols) {
    if (!acc) {
        *c0 = v4_load(init8);
        *c1 = v4_load(init8 + 4);
        return;
    }
    if (ncols == 8) {
        *c0 = v4_load(out);
        *c1 = v4_load(out + 4);
        return;
    }
    float t[8] = {0};
    memcpy(t, out, sizeof(float) * (size_t)ncols);
    *c0 = v4_load(t);
    *c1 = v4_load(t + 4);
}

static inline void store_acc(float *out, v4 c0, v4 c1, int ncols) {
    if (ncols == 8) {
        v4_store(out, c0);
        v4_store(out + 4, c1);
        return;
    }
    float t[8];
    v4_store(t, c0);
    v4_store(t + 4, c1);
    memcpy(out, t, sizeof(float) * (size_t)ncols);
}

static void kernel_4x8(float *out, size_t ldo, const float *a, size_t lda, const float *b, size_t ldb, int K, const float *init8, int acc,
                       int ncols) {
    v4 c00, c01, c10, c11, c20, c21, c30, c31;
    load_acc(&c00, &c01, out, init8, acc, ncols);
    load_acc(&c10, &c11, out + ldo, init8, acc, ncols);
    load_acc(&c20, &c21, out + 2 * ldo, init8, acc, ncols);
    load_acc(&c30, &c31, out + 3 * ldo, init8, acc, ncols);
    const float *a0 = a, *a1 = a + lda, *a2 = a + 2 * lda, *a3 = a + 3 * lda;
    for (int k = 0; k < K; k++, a0++, a1++, a2++, a3++, b += ldb) {
        v4 b0 = v4_load(b), b1 = v4_load(b + 4), x;
        x = v4_splat(*a0), c00 = v4_madd(x, b0, c00), c01 = v4_madd(x, b1, c01);
        x = v4_splat(*a1), c10 = v4_madd(x, b0, c10), c11 = v4_madd(x, b1, c11);
        x = v4_splat(*a2), c20 = v4_madd(x, b0, c20), c21 = v4_madd(x, b1, c21);
        x = v4_splat(*a3), c30 = v4_madd(x, b0, c30), c31 = v4_madd(x, b1, c31);
    }
    store_acc(out, c00, c01, ncols);
    store_acc(out + ldo, c10, c11, ncols);
    store_acc(out + 2 * ldo, c20, c21, ncols);
    store_acc(out + 3 * ldo, c30, c31, ncols);
}

static void kernel_1x8(float *out, const float *a, const float *b, size_t ldb, int K, const float *init8, int acc, int ncols) {
    v4 c0, c1;
    load_acc(&c0, &c1, out, init8, acc, ncols);
    for (int k = 0; k < K; k++, a++, b += ldb) {
        v4 x = v4_splat(*a);
        c0 = v4_madd(x, v4_load(b), c0);
        c1 = v4_madd(x, v4_load(b + 4), c1);
    }
    store_acc(out, c0, c1, ncols);
}

/* Panels of B outer, rows inner: a panel (K, 8) stays in L1 while every
 * group of four rows passes over it. (Measured here and not kept: blocking K
 * and packing the rows, no faster; six rows with relaxed FMA, 2x slower as V8
 * spills the twelve accumulators.)
 * noinline: one copy of the microkernels, not one per caller (size). */
__attribute__((noinline)) void gemm_forward(float *out, size_t ldo, const float *a, size_t lda, const float *b, size_t ldb, size_t bstep,
                                            const float *bias, int acc, int M, int K, int N) {
    for (int p = 0; p < N; p += SF_NR) {
        int ncols = N - p < SF_NR ? N - p : SF_NR;
        float init8[8] = {0};
        if (bias) memcpy(init8, bias + p, sizeof(float) * (size_t)ncols);
        const float *panel = b + (size_t)(p / SF_NR) * bstep;
        int m = 0;
        for (; m + 4 <= M; m += 4) kernel_4x8(out + m * ldo + p, ldo, a + m * lda, lda, panel, ldb, K, init8, acc, ncols);
        for (; m < M; m++) kernel_1x8(out + m * ldo + p, a + m * lda, panel, ldb, K, init8, acc, ncols);
    }
}

void matmul_forward(float *out, size_t ldo, const float *inp, size_t ldi, const float *wpacked, const float *bias, int M, int K, int N) {
    gemm_forward(out, ldo, inp, ldi, wpacked, SF_NR, (size_t)SF_NR * K, bias, 0, M, K, N);
}

/* ------------------------------------------------------------ elementwise */

void embed_forward(float *x, const int32_t *ids, const float *tokens, float scale, int N, int C) {
    for (int n = 0; n < N; n++) {
        const float *row = tokens + (size_t)ids[n] * C;
        float *xr = x + (size_t)n * C;
        for (int c = 0; c < C; c++) xr[c] = row[c] * scale;
    }
}

void embed_add_forward(float *x, const int32_t *ids, const float *table, int N, int C) {
    for (int n = 0; n < N; n++) residual_forward(x + (size_t)n * C, table + (size_t)ids[n] * C, (size_t)C);
}

void residual_forward(float *x, const float *y, size_t n) {
    size_t i = 0;
    for (; i + 4 <= n; i += 4) v4_store(x + i, v4_load(x + i) + v4_load(y + i));
    for (; i < n; i++) x[i] += y[i];
}

void residual_scaled_forward(float *x, const float *y, float a, size_t n) {
    if (a == 1.0f) {
        residual_forward(x, y, n);
        return;
    }
    v4 a4 = v4_splat(a);
    size_t i = 0;
    for (; i + 4 <= n; i += 4) v4_store(x + i, v4_madd(a4, v4_load(x + i), v4_load(y + i)));
    for (; i < n; i++) x[i] = a * x[i] + y[i];
}

void scale_forward(float *x, float s, size_t n) {
    v4 s4 = v4_splat(s);
    size_t i = 0;
    for (; i + 4 <= n; i += 4) v4_store(x + i, v4_load(x + i) * s4);
    for (; i < n; i++) x[i] *= s;
}

/* gelu(x) = x/2 (1 + erf(x/sqrt2)), erf by Abramowitz & Stegun 7.1.26
 * (|error| <= 1.5e-7): erf(z) = 1 - (a1 t + ... + a5 t^5) exp(-z^2), t = 1/(1 + p z), z >= 0. */
static v4 v4_gelu(v4 x) {
    v4 z = v4_max(x, -x) * v4_splat(0.70710678118654752f);
    v4 t = v4_splat(1.0f) / v4_madd(z, v4_splat(0.3275911f), v4_splat(1.0f));
    v4 poly = v4_splat(1.061405429f);
    poly = v4_madd(poly, t, v4_splat(-1.453152027f));
    poly = v4_madd(poly, t, v4_splat(1.421413741f));
    poly = v4_madd(poly, t, v4_splat(-0.284496736f));
    poly = v4_madd(poly, t, v4_splat(0.254829592f));
    v4 erfc_abs = poly * t * v4_exp(-z * z); /* 1 - erf(|z|) */
    v4 half_x = v4_splat(0.5f) * x;
    /* x >= 0: x/2 (2 - erfc); x < 0: x/2 erfc */
    v4 pos = half_x * (v4_splat(2.0f) - erfc_abs), neg = half_x * erfc_abs;
    v4i is_neg = x < v4_zero();
    return (v4)((is_neg & (v4i)neg) | (~is_neg & (v4i)pos));
}

/* x/2 (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3), tanh(u) = 1 - 2/(exp(2u) + 1) */
static v4 v4_gelu_tanh(v4 x) {
    v4 u = v4_splat(0.79788456080286536f) * v4_madd(v4_splat(0.044715f) * x, x * x, x);
    v4 th = v4_splat(1.0f) - v4_splat(2.0f) / (v4_exp(u + u) + v4_splat(1.0f));
    return v4_splat(0.5f) * x * (v4_splat(1.0f) + th);
}

/* The activation of a kind, four lanes. One body per function, whatever
 * the number of activations built from it (gated or not): size matters. */
static v4 act4(int kind, v4 x) {
    switch (kind) {
    case SF_ACT_GELU: return v4_gelu(x);
    case SF_ACT_GELU_TANH: return v4_gelu_tanh(x);
    case SF_ACT_RELU: return v4_max(x, v4_zero());
    default: return x / (v4_splat(1.0f) + v4_exp(-x)); /* silu */
    }
}

/* h (n) = f(h), or h * f(g) when gated; four at a time, the tail through a padded vector. */
__attribute__((noinline)) void activation_forward(float *h, const float *g, int activation, size_t n) {
    int kind = activation == SF_ACT_SWIGLU       ? SF_ACT_SILU
               : activation == SF_ACT_GEGLU      ? SF_ACT_GELU
               : activation == SF_ACT_GEGLU_TANH ? SF_ACT_GELU_TANH
                                                 : activation;
    if (kind == activation) g = NULL; /* not gated */
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        v4 y = act4(kind, v4_load((g ? g : h) + i));
        v4_store(h + i, g ? v4_load(h + i) * y : y);
    }
    if (i < n) {
        float th[4] = {0}, tg[4] = {0};
        memcpy(th, h + i, sizeof(float) * (n - i));
        if (g) memcpy(tg, g + i, sizeof(float) * (n - i));
        v4 y = act4(kind, v4_load(g ? tg : th));
        v4_store(th, g ? v4_load(th) * y : y);
        memcpy(h + i, th, sizeof(float) * (n - i));
    }
}
/* ------------------------------------------------------------ attention */

/* dst (R/8 panels of (D, 8)) = the D columns of rows src (R, ld), as the
 * GEMM's B: dst[(p*D + d)*8 + c] = src[(8p + c)*ld + d], zero-padded. */
static void pack_queries(float *dst, const float *src, size_t ld, int R, int D) {
    for (int p = 0; p < R; p += 8)
        for (int d = 0; d < D; d++)
            for (int c = 0; c < 8; c++) dst[((size_t)p * D + (size_t)d * 8) + c] = p + c < R ? src[(size_t)(p + c) * ld + d] : 0.0f;
}

/* sT (n, R), row stride R: sT[j][r] = k_h[j0+j] . q_h[r] + bias, the scores of
 * keys j0 .. j0+n-1 against the R queries, transposed so that a softmax over
 * keys is a vector operation across queries. Keys outside the window: -inf. */
static void score_tile(float *sT, const float *kv, const float *qpack, const sf_attn *a, int h, int i0, int R, int j0, int n) {
    int D = a->head_dim;
    gemm_forward(sT, (size_t)R, kv + (size_t)j0 * 2 * a->ld + (size_t)h * D, 2 * a->ld, qpack, 8, (size_t)8 * D, NULL, 0, n, D, R);
    if (a->bias) a->bias(sT, (size_t)R, a->bias_ctx, h, i0, R, j0, n);
    if (a->window)
        for (int j = 0; j < n; j++) {
            /* queries i with |i - (j0 + j)| > window, i.e. r < lo or r > hi */
            int lo = j0 + j - a->window - i0, hi = j0 + j + a->window - i0;
            float *row = sT + (size_t)j * R;
            for (int r = 0; r < R && r < lo; r++) row[r] = -INFINITY;
            for (int r = hi + 1 > 0 ? hi + 1 : 0; r < R; r++) row[r] = -INFINITY;
        }
}

/* dst (cols, rows), row stride ldd = src (rows, cols), row stride lds, transposed
 * four by four in registers. */
static void transpose(float *dst, size_t ldd, const float *src, size_t lds, int rows, int cols) {
    int i = 0;
    for (; i + 4 <= rows; i += 4) {
        int j = 0;
        for (; j + 4 <= cols; j += 4) {
            const float *s0 = src + (size_t)i * lds + j;
            v4 r0 = v4_load(s0), r1 = v4_load(s0 + lds), r2 = v4_load(s0 + 2 * lds), r3 = v4_load(s0 + 3 * lds);
            v4 t0 = __builtin_shufflevector(r0, r1, 0, 4, 1, 5), t1 = __builtin_shufflevector(r0, r1, 2, 6, 3, 7);
            v4 t2 = __builtin_shufflevector(r2, r3, 0, 4, 1, 5), t3 = __builtin_shufflevector(r2, r3, 2, 6, 3, 7);
            float *d0 = dst + (size_t)j * ldd + i;
            v4_store(d0, __builtin_shufflevector(t0, t2, 0, 1, 4, 5));
            v4_store(d0 + ldd, __builtin_shufflevector(t0, t2, 2, 3, 6, 7));
            v4_store(d0 + 2 * ldd, __builtin_shufflevector(t1, t3, 0, 1, 4, 5));
            v4_store(d0 + 3 * ldd, __builtin_shufflevector(t1, t3, 2, 3, 6, 7));
        }
        for (; j < cols; j++)
            for (int k = i; k < i + 4; k++) dst[(size_t)j * ldd + k] = src[(size_t)k * lds + j];
    }
    for (; i < rows; i++)
        for (int j = 0; j < cols; j++) dst[(size_t)j * ldd + i] = src[(size_t)i * lds + j];
}

/* The keys query rows i0 .. i0+R-1 may see: [*lo, *hi). */
static void key_range(const sf_attn *a, int i0, int R, int T, int *lo, int *hi) {
    *lo = 0, *hi = T;
    if (!a->window) return;
    *lo = i0 - a->window > 0 ? i0 - a->window : 0;
    *hi = i0 + R + a->window < T ? i0 + R + a->window : T;
}

__attribute__((noinline)) void attention_forward(float *o, const float *q, const float *kv, float *scratch, float *att, size_t ldatt,
                                                 const int32_t *perm, const sf_attn *a, int h0, int h1, int i0, int R, int T) {
    int D = a->head_dim, klo, khi;
    size_t ld = a->ld, ld2 = 2 * ld, R4 = ((size_t)R + 3) & ~(size_t)3;
    float *qpack = scratch;                                 /* (R rounded up to 8, D) */
    float *sT = qpack + (((size_t)R + 7) & ~(size_t)7) * D; /* (BK, R) scores, then probabilities, key-major */
    float *p = sT + (size_t)SF_ATT_BK * R;                  /* (R, BK) probabilities, query-major */
    float *m = p + (size_t)SF_ATT_BK * R;                   /* (R4) running max */
    float *l = m + R4;                                      /* (R4) running sum */
    float *alpha = l + R4;                                  /* (R4) rescale of what came before */
    /* with a window, the first tile starts at i0 - window: every query sees one
     * of its keys there (R <= BK), so no running max stays -inf */
    key_range(a, i0, R, T, &klo, &khi);
    for (int h = h0; h < h1; h++) {
        const float *v = kv + ld + (size_t)h * D; /* v_h: rows of stride 2 ld */
        float *oh = o + (size_t)h * D;            /* (R, D), rows of stride ld */
        pack_queries(qpack, q + (size_t)h * D, ld, R, D);
        for (size_t r = 0; r < R4; r++) m[r] = -INFINITY, l[r] = 0;
        for (int r = 0; r < R; r++) memset(oh + (size_t)r * ld, 0, sizeof(float) * (size_t)D);
        for (int j0 = klo; j0 < khi; j0 += SF_ATT_BK) {
            int n = khi - j0 < SF_ATT_BK ? khi - j0 : SF_ATT_BK;
            score_tile(sT, kv, qpack, a, h, i0, R, j0, n);
            /* online softmax, four queries at a time: new max, rescale factor, p = exp(s - max), sums */
            int r = 0;
            for (; r + 4 <= R; r += 4) {
                v4 mx = v4_load(m + r);
                for (int j = 0; j < n; j++) mx = v4_max(mx, v4_load(sT + (size_t)j * R + r));
                v4 sum = v4_zero();
                for (int j = 0; j < n; j++) {
                    v4 e = v4_exp(v4_load(sT + (size_t)j * R + r) - mx);
                    v4_store(sT + (size_t)j * R + r, e);
                    sum += e;
                }
                v4 al = v4_exp(v4_load(m + r) - mx);
                v4_store(alpha + r, al);
                v4_store(l + r, v4_madd(v4_load(l + r), al, sum));
                v4_store(m + r, mx);
            }
            for (; r < R; r++) {
                float mx = m[r], sum = 0;
                for (int j = 0; j < n; j++) mx = sT[(size_t)j * R + r] > mx ? sT[(size_t)j * R + r] : mx;
                for (int j = 0; j < n; j++) sum += (sT[(size_t)j * R + r] = v4_exp(v4_splat(sT[(size_t)j * R + r] - mx))[0]);
                alpha[r] = v4_exp(v4_splat(m[r] - mx))[0];
                l[r] = l[r] * alpha[r] + sum;
                m[r] = mx;
            }
            transpose(p, SF_ATT_BK, sT, (size_t)R, n, R);
            for (r = 0; r < R; r++) scale_forward(oh + (size_t)r * ld, alpha[r], (size_t)D);
            /* o_h (R, D) += p (R, n) @ v_h[j0 .. j0+n) */
            gemm_forward(oh, ld, p, SF_ATT_BK, v + (size_t)j0 * ld2, ld2, 8, NULL, 1, R, n, D);
        }
        for (int r = 0; r < R; r++) scale_forward(oh + (size_t)r * ld, 1.0f / l[r], (size_t)D);
        if (!att) continue;
        /* the probabilities, from the final max and sum: a second pass (keys outside the range stay 0) */
        for (int j0 = klo; j0 < khi; j0 += SF_ATT_BK) {
            int n = khi - j0 < SF_ATT_BK ? khi - j0 : SF_ATT_BK;
            score_tile(sT, kv, qpack, a, h, i0, R, j0, n);
            for (int r = 0; r < R; r++) {
                int i = i0 + r;
                float *ar = att + ((size_t)h * ldatt + (size_t)(perm ? perm[i] : i)) * ldatt;
                float inv = 1.0f / l[r];
                for (int j = 0; j < n; j++) {
                    float sc = sT[(size_t)j * R + r]; /* -inf outside the window: exactly 0 */
                    ar[perm ? perm[j0 + j] : j0 + j] = sc == -INFINITY ? 0.0f : v4_exp(v4_splat(sc - m[r]))[0] * inv;
                }
            }
        }
    }
}
