/* The f32 kernels, written once over simd.h's vf (SF_VW lanes): built at 4
 * lanes in the wasm builds, and natively once per instruction set at 4, 8 and
 * 16 lanes (core/isa.c picks one at load; core/variant.h renames this file's
 * functions per build). A panel of packed weights is two vectors wide, SF_NR =
 * 2 SF_VW columns, and the micro-kernel runs SF_MR rows of it at a time. */
#include "variant.h"

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

/* SF_MR rows x SF_NR columns of out (=, or += when acc) a (MR, K) @ one panel
 * of B (K, NR), rows of a of stride lda: two accumulators per row, two panel
 * vectors and one broadcast live; every value stays in a register (V8: 15
 * usable xmm at MR 4; AVX2: 16 ymm at MR 6; AVX-512: 32 zmm at MR 8). Named
 * accumulators, not an array: clang 16 leaves an array of them in memory. */
#ifndef SF_MR
#if SF_VW == 16
#define SF_MR 8
#elif SF_VW == 8
#define SF_MR 6
#else
#define SF_MR 4
#endif
#endif

static inline void load_acc(vf *c0, vf *c1, const float *out, const float *init, int acc, int ncols) {
    if (!acc) {
        *c0 = vf_load(init);
        *c1 = vf_load(init + SF_VW);
        return;
    }
    if (ncols == SF_NR) {
        *c0 = vf_load(out);
        *c1 = vf_load(out + SF_VW);
        return;
    }
    float t[SF_NR] = {0};
    memcpy(t, out, sizeof(float) * (size_t)ncols);
    *c0 = vf_load(t);
    *c1 = vf_load(t + SF_VW);
}

static inline void store_acc(float *out, vf c0, vf c1, int ncols) {
    if (ncols == SF_NR) {
        vf_store(out, c0);
        vf_store(out + SF_VW, c1);
        return;
    }
    float t[SF_NR];
    vf_store(t, c0);
    vf_store(t + SF_VW, c1);
    memcpy(out, t, sizeof(float) * (size_t)ncols);
}

#define K_DECL(r)                                                                                                                                    \
    vf c##r##0, c##r##1;                                                                                                                             \
    load_acc(&c##r##0, &c##r##1, out + (size_t)(r)*ldo, init, acc, ncols);                                                                           \
    const float *a##r = a + (size_t)(r)*lda;
#define K_STEP(r)  x = vf_splat(a##r[k]), c##r##0 = vf_madd(x, b0, c##r##0), c##r##1 = vf_madd(x, b1, c##r##1);
#define K_STORE(r) store_acc(out + (size_t)(r)*ldo, c##r##0, c##r##1, ncols);
#define K_ROWS1(X) X(0)
#define K_ROWS2(X) K_ROWS1(X) X(1)
#define K_ROWS3(X) K_ROWS2(X) X(2)
#define K_ROWS4(X) K_ROWS3(X) X(3)
#define K_ROWS5(X) K_ROWS4(X) X(4)
#define K_ROWS6(X) K_ROWS5(X) X(5)
#define K_ROWS7(X) K_ROWS6(X) X(6)
#define K_ROWS8(X) K_ROWS7(X) X(7)
#define K_ROWS(n)  K_ROWS_(n)
#define K_ROWS_(n) K_ROWS##n
#define GEMM_KERNEL(name, ROWS)                                                                                                                      \
    static void name(float *out, size_t ldo, const float *a, size_t lda, const float *b, size_t ldb, int K, const float *init, int acc, int ncols) { \
        ROWS(K_DECL)                                                                                                                                 \
        for (int k = 0; k < K; k++, b += ldb) {                                                                                                      \
            vf b0 = vf_load(b), b1 = vf_load(b + SF_VW), x;                                                                                          \
            ROWS(K_STEP)                                                                                                                             \
        }                                                                                                                                            \
        ROWS(K_STORE)                                                                                                                                \
    }
typedef void (*gemm_kernel)(float *out, size_t ldo, const float *a, size_t lda, const float *b, size_t ldb, int K, const float *init, int acc,
                            int ncols);
GEMM_KERNEL(kernel_mr, K_ROWS(SF_MR))
GEMM_KERNEL(kernel_1, K_ROWS1)
#ifdef SF_VARIANT /* natively: a kernel for each row count below MR (the wasm builds run the last rows one by one: size) */
GEMM_KERNEL(kernel_2, K_ROWS2)
GEMM_KERNEL(kernel_3, K_ROWS3)
#if SF_MR > 4
GEMM_KERNEL(kernel_4, K_ROWS4)
GEMM_KERNEL(kernel_5, K_ROWS5)
#endif
#if SF_MR > 6
GEMM_KERNEL(kernel_6, K_ROWS6)
GEMM_KERNEL(kernel_7, K_ROWS7)
#endif
static const gemm_kernel tail_kernels[SF_MR] = {
    NULL,     kernel_1, kernel_2, kernel_3,
#if SF_MR > 4
    kernel_4, kernel_5,
#endif
#if SF_MR > 6
    kernel_6, kernel_7,
#endif
};
#endif

/* Panels of B outer, rows inner: a panel (K, NR) stays in L1 (or L2) while
 * every group of MR rows passes over it. (Measured here and not kept, in wasm:
 * blocking K and packing the rows, no faster; six rows with relaxed FMA, 2x
 * slower as V8 spills the twelve accumulators.)
 * noinline: one copy of the microkernels, not one per caller (size). */
__attribute__((noinline)) void gemm_forward(float *out, size_t ldo, const float *a, size_t lda, const float *b, size_t ldb, size_t bstep,
                                            const float *bias, int acc, int M, int K, int N) {
    for (int p = 0; p < N; p += SF_NR) {
        int ncols = N - p < SF_NR ? N - p : SF_NR;
        float init[SF_NR] = {0};
        if (bias) memcpy(init, bias + p, sizeof(float) * (size_t)ncols);
        const float *panel = b + (size_t)(p / SF_NR) * bstep;
        int m = 0;
        for (; m + SF_MR <= M; m += SF_MR) kernel_mr(out + m * ldo + p, ldo, a + m * lda, lda, panel, ldb, K, init, acc, ncols);
#ifdef SF_VARIANT
        if (m < M) tail_kernels[M - m](out + m * ldo + p, ldo, a + m * lda, lda, panel, ldb, K, init, acc, ncols);
#else
        for (; m < M; m++) kernel_1(out + m * ldo + p, ldo, a + m * lda, lda, panel, ldb, K, init, acc, ncols);
#endif
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
    for (; i + SF_VW <= n; i += SF_VW) vf_store(x + i, vf_load(x + i) + vf_load(y + i));
    for (; i < n; i++) x[i] += y[i];
}

void residual_scaled_forward(float *x, const float *y, float a, size_t n) {
    if (a == 1.0f) {
        residual_forward(x, y, n);
        return;
    }
    vf av = vf_splat(a);
    size_t i = 0;
    for (; i + SF_VW <= n; i += SF_VW) vf_store(x + i, vf_madd(av, vf_load(x + i), vf_load(y + i)));
    for (; i < n; i++) x[i] = a * x[i] + y[i];
}

void scale_forward(float *x, float s, size_t n) {
    vf sv = vf_splat(s);
    size_t i = 0;
    for (; i + SF_VW <= n; i += SF_VW) vf_store(x + i, vf_load(x + i) * sv);
    for (; i < n; i++) x[i] *= s;
}

/* gelu(x) = x/2 (1 + erf(x/sqrt2)), erf by Abramowitz & Stegun 7.1.26
 * (|error| <= 1.5e-7): erf(z) = 1 - (a1 t + ... + a5 t^5) exp(-z^2), t = 1/(1 + p z), z >= 0. */
static vf vf_gelu(vf x) {
    vf z = vf_max(x, -x) * vf_splat(0.70710678118654752f);
    vf t = vf_splat(1.0f) / vf_madd(z, vf_splat(0.3275911f), vf_splat(1.0f));
    vf poly = vf_splat(1.061405429f);
    poly = vf_madd(poly, t, vf_splat(-1.453152027f));
    poly = vf_madd(poly, t, vf_splat(1.421413741f));
    poly = vf_madd(poly, t, vf_splat(-0.284496736f));
    poly = vf_madd(poly, t, vf_splat(0.254829592f));
    vf erfc_abs = poly * t * vf_exp(-z * z); /* 1 - erf(|z|) */
    vf half_x = vf_splat(0.5f) * x;
    /* x >= 0: x/2 (2 - erfc); x < 0: x/2 erfc */
    vf pos = half_x * (vf_splat(2.0f) - erfc_abs), neg = half_x * erfc_abs;
    vfi is_neg = x < vf_zero();
    return (vf)((is_neg & (vfi)neg) | (~is_neg & (vfi)pos));
}

/* x/2 (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3), tanh(u) = 1 - 2/(exp(2u) + 1) */
static vf vf_gelu_tanh(vf x) {
    vf u = vf_splat(0.79788456080286536f) * vf_madd(vf_splat(0.044715f) * x, x * x, x);
    vf th = vf_splat(1.0f) - vf_splat(2.0f) / (vf_exp(u + u) + vf_splat(1.0f));
    return vf_splat(0.5f) * x * (vf_splat(1.0f) + th);
}

/* The activation of a kind, SF_VW lanes. One body per function, whatever
 * the number of activations built from it (gated or not): size matters. */
static vf act_v(int kind, vf x) {
    switch (kind) {
    case SF_ACT_GELU: return vf_gelu(x);
    case SF_ACT_GELU_TANH: return vf_gelu_tanh(x);
    case SF_ACT_RELU: return vf_max(x, vf_zero());
    default: return x / (vf_splat(1.0f) + vf_exp(-x)); /* silu */
    }
}

/* h (n) = f(h), or h * f(g) when gated; SF_VW at a time, the tail through a padded vector. */
__attribute__((noinline)) void activation_forward(float *h, const float *g, int activation, size_t n) {
    int kind = activation == SF_ACT_SWIGLU       ? SF_ACT_SILU
               : activation == SF_ACT_GEGLU      ? SF_ACT_GELU
               : activation == SF_ACT_GEGLU_TANH ? SF_ACT_GELU_TANH
                                                 : activation;
    if (kind == activation) g = NULL; /* not gated */
    size_t i = 0;
    for (; i + SF_VW <= n; i += SF_VW) {
        vf y = act_v(kind, vf_load((g ? g : h) + i));
        vf_store(h + i, g ? vf_load(h + i) * y : y);
    }
    if (i < n) {
        float th[SF_VW] = {0}, tg[SF_VW] = {0};
        memcpy(th, h + i, sizeof(float) * (n - i));
        if (g) memcpy(tg, g + i, sizeof(float) * (n - i));
        vf y = act_v(kind, vf_load(g ? tg : th));
        vf_store(th, g ? vf_load(th) * y : y);
        memcpy(h + i, th, sizeof(float) * (n - i));
    }
}
/* ------------------------------------------------------------ attention */

/* dst (R/NR panels of (D, NR)) = the D columns of rows src (R, ld), as the
 * GEMM's B: dst[(p*D + d)*NR + c] = src[(NR p + c)*ld + d], zero-padded. */
static void pack_queries(float *dst, const float *src, size_t ld, int R, int D) {
    for (int p = 0; p < R; p += SF_NR)
        for (int d = 0; d < D; d++)
            for (int c = 0; c < SF_NR; c++) dst[((size_t)p * D + (size_t)d * SF_NR) + c] = p + c < R ? src[(size_t)(p + c) * ld + d] : 0.0f;
}

/* sT (n, R), row stride R: sT[j][r] = k_h[j0+j] . q_h[r] + bias, the scores of
 * keys j0 .. j0+n-1 against the R queries, transposed so that a softmax over
 * keys is a vector operation across queries. Keys outside the window: -inf. */
static void score_tile(float *sT, const float *kv, const float *qpack, const sf_attn *a, float *bscratch, int h, int i0, int R, int j0, int n) {
    int D = a->head_dim;
    gemm_forward(sT, (size_t)R, kv + (size_t)j0 * a->kv_ld + (size_t)(h / a->group) * D, a->kv_ld, qpack, SF_NR, (size_t)SF_NR * D, NULL, 0, n, D, R);
    if (a->bias) a->bias(sT, (size_t)R, a->bias_ctx, bscratch, h, i0, R, j0, n);
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
    size_t ld = a->ld, ldkv = a->kv_ld, RW = ((size_t)R + SF_VW - 1) & ~(size_t)(SF_VW - 1);
    float *qpack = scratch;                                                    /* (R rounded up to NR, D) */
    float *sT = qpack + (((size_t)R + SF_NR - 1) / SF_NR * SF_NR) * (size_t)D; /* (BK, R) scores, then probabilities, key-major */
    float *p = sT + (size_t)SF_ATT_BK * R;                                     /* (R, BK) probabilities, query-major */
    float *m = p + (size_t)SF_ATT_BK * R;                                      /* (RW) running max */
    float *l = m + RW;                                                         /* (RW) running sum */
    float *alpha = l + RW;                                                     /* (RW) rescale of what came before */

    float *bscratch = scratch + sf_attention_scratch(R, D); /* the bias's own, past ours */
    /* with a window, the first tile starts at i0 - window: every query sees one
     * of its keys there (R <= BK), so no running max stays -inf */
    key_range(a, i0, R, T, &klo, &khi);
    for (int h = h0; h < h1; h++) {
        /* v of h's kv head: rows of stride kv_ld */
        const float *v = kv + ldkv / 2 + (size_t)(h / a->group) * D;
        float *oh = o + (size_t)h * D; /* (R, D), rows of stride ld */
        pack_queries(qpack, q + (size_t)h * D, ld, R, D);
        for (size_t r = 0; r < RW; r++) m[r] = -INFINITY, l[r] = 0;
        for (int r = 0; r < R; r++) memset(oh + (size_t)r * ld, 0, sizeof(float) * (size_t)D);
        for (int j0 = klo; j0 < khi; j0 += SF_ATT_BK) {
            int n = khi - j0 < SF_ATT_BK ? khi - j0 : SF_ATT_BK;
            score_tile(sT, kv, qpack, a, bscratch, h, i0, R, j0, n);
            /* online softmax, SF_VW queries at a time: new max, rescale factor, p = exp(s - max), sums */
            int r = 0;
            for (; r + SF_VW <= R; r += SF_VW) {
                vf mx = vf_load(m + r);
                for (int j = 0; j < n; j++) mx = vf_max(mx, vf_load(sT + (size_t)j * R + r));
                vf sum = vf_zero();
                for (int j = 0; j < n; j++) {
                    vf e = vf_exp(vf_load(sT + (size_t)j * R + r) - mx);
                    vf_store(sT + (size_t)j * R + r, e);
                    sum += e;
                }
                vf al = vf_exp(vf_load(m + r) - mx);
                vf_store(alpha + r, al);
                vf_store(l + r, vf_madd(vf_load(l + r), al, sum));
                vf_store(m + r, mx);
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
            gemm_forward(oh, ld, p, SF_ATT_BK, v + (size_t)j0 * ldkv, ldkv, SF_NR, NULL, 1, R, n, D);
        }
        for (int r = 0; r < R; r++) scale_forward(oh + (size_t)r * ld, 1.0f / l[r], (size_t)D);
        if (!att) continue;
        /* the probabilities, from the final max and sum: a second pass (keys outside the range stay 0) */
        for (int j0 = klo; j0 < khi; j0 += SF_ATT_BK) {
            int n = khi - j0 < SF_ATT_BK ? khi - j0 : SF_ATT_BK;
            score_tile(sT, kv, qpack, a, bscratch, h, i0, R, j0, n);
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
